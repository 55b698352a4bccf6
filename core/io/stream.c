// SPDX-License-Identifier: MIT
/*
 * core/io/stream.c - the readable/writable interface over descriptors, the
 * buffered reader, the buffered writer and copy (include/blitz/stream.h).
 *
 * Every awaitable here keeps its progress in the struct it works on
 * (`phase`, `done`) and returns to phase 0 when it is READY, so the same
 * reader or writer can be awaited again.  Arguments are evaluated on every
 * poll but used only when a transfer starts: they must not change while an
 * operation is pending (they cannot: the caller is suspended at its AWAIT).
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <blitz/stream.h>
#include "../fault.h"
#include "pipe.h"

/* ---------------------------------------------------------------------- */
/* Descriptors                                                             */

/*
 * fd_xfer - one transfer through the I/O driver: fd_xfer_poll() (core/io/pipe.c)
 * retries -EINTR and waits for readiness after -EAGAIN (io_uring on an
 * O_NONBLOCK descriptor).  op->x is reset when the operation starts: the
 * union may hold a file operation's state from an earlier use.
 */
static enum blitz_poll fd_xfer(struct blitz_stream_op *op, unsigned opcode, void *buf,
			       size_t len, struct blitz_cx *cx)
{
	if (!op->started) {
		op->x.started = 0;
		op->started = 1;
	}
	if (fd_xfer_poll(&op->x, opcode, op->stream->fd, buf, len, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	op->started = 0;
	op->result = op->x.result;
	return BLITZ_READY;
}

static enum blitz_poll socket_read(struct blitz_stream_op *op, void *buf, size_t len,
				   struct blitz_cx *cx)
{
	return fd_xfer(op, BLITZ_IO_RECV, buf, len, cx);
}

static enum blitz_poll socket_write(struct blitz_stream_op *op, const void *buf, size_t len,
				    struct blitz_cx *cx)
{
	return fd_xfer(op, BLITZ_IO_SEND, (void *)buf, len, cx);
}

static enum blitz_poll pipe_read(struct blitz_stream_op *op, void *buf, size_t len,
				 struct blitz_cx *cx)
{
	return fd_xfer(op, BLITZ_IO_READ, buf, len, cx);
}

static enum blitz_poll pipe_write(struct blitz_stream_op *op, const void *buf, size_t len,
				  struct blitz_cx *cx)
{
	return fd_xfer(op, BLITZ_IO_WRITE, (void *)buf, len, cx);
}

static void fd_cancel(struct blitz_stream_op *op)
{
	blitz_io_cancel(&op->x.op);
}

/* file_xfer - a read or write at the file position through the fs module. */
static enum blitz_poll file_xfer(struct blitz_stream_op *op, void *buf, size_t len,
				 struct blitz_cx *cx)
{
	for (;;) {
		if (!op->started) {
			if (op->is_write)
				blitz_fs_prep_write(&op->fs, op->stream->fd, buf, len);
			else
				blitz_fs_prep_read(&op->fs, op->stream->fd, buf, len);
			op->started = 1;
		}
		if (blitz_fs_poll(&op->fs, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		op->started = 0;
		if (op->fs.result != -EINTR && op->fs.result != -EAGAIN)
			break;
	}
	op->result = (long)op->fs.result;
	return BLITZ_READY;
}

static enum blitz_poll file_read(struct blitz_stream_op *op, void *buf, size_t len,
				 struct blitz_cx *cx)
{
	return file_xfer(op, buf, len, cx);
}

static enum blitz_poll file_write(struct blitz_stream_op *op, const void *buf, size_t len,
				  struct blitz_cx *cx)
{
	return file_xfer(op, (void *)buf, len, cx);
}

static void file_cancel(struct blitz_stream_op *op)
{
	blitz_fs_cancel(&op->fs);
}

const struct blitz_stream_vtable blitz_stream_socket_vt = {
	.name = "socket", .read = socket_read, .write = socket_write, .cancel = fd_cancel,
};

const struct blitz_stream_vtable blitz_stream_pipe_vt = {
	.name = "pipe", .read = pipe_read, .write = pipe_write, .cancel = fd_cancel,
};

const struct blitz_stream_vtable blitz_stream_file_vt = {
	.name = "file", .read = file_read, .write = file_write, .cancel = file_cancel,
};

static void stream_set(struct blitz_stream *s, const struct blitz_stream_vtable *vt, int fd)
{
	s->vt = vt;
	s->fd = fd;
	s->priv = NULL;
}

void blitz_stream_socket(struct blitz_stream *s, int fd)
{
	stream_set(s, &blitz_stream_socket_vt, fd);
}

void blitz_stream_pipe(struct blitz_stream *s, int fd)
{
	stream_set(s, &blitz_stream_pipe_vt, fd);
}

void blitz_stream_file(struct blitz_stream *s, int fd)
{
	stream_set(s, &blitz_stream_file_vt, fd);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int blitz_stream_from_fd(struct blitz_stream *s, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		blitz_stream_file(s, fd);
		return 0;
	}
	if (S_ISSOCK(st.st_mode))
		blitz_stream_socket(s, fd);
	else
		blitz_stream_pipe(s, fd);
	return set_nonblock(fd);
}

enum blitz_poll blitz_stream_read_poll(struct blitz_stream_op *op, const struct blitz_stream *s,
				       void *buf, size_t len, struct blitz_cx *cx)
{
	if (!op->started) {
		op->stream = s;
		op->is_write = 0;
		if (!s->vt->read) {
			op->result = -EBADF;
			return BLITZ_READY;
		}
	}
	return s->vt->read(op, buf, len, cx);
}

enum blitz_poll blitz_stream_write_poll(struct blitz_stream_op *op, const struct blitz_stream *s,
					const void *buf, size_t len, struct blitz_cx *cx)
{
	if (!op->started) {
		op->stream = s;
		op->is_write = 1;
		if (!s->vt->write) {
			op->result = -EBADF;
			return BLITZ_READY;
		}
	}
	return s->vt->write(op, buf, len, cx);
}

void blitz_stream_cancel(struct blitz_stream_op *op)
{
	if (op->started && op->stream->vt->cancel)
		op->stream->vt->cancel(op);
}

/* ---------------------------------------------------------------------- */
/* Buffered reader                                                         */

/*
 * buffer_get - @buf, or one of @cap bytes allocated here (*@owned); NULL
 * if that cannot be.  No object is larger than PTRDIFF_MAX: such a @cap
 * is refused before the allocator (which a sanitizer's would abort on).
 */
static void *buffer_get(void *buf, size_t cap, bool *owned)
{
	*owned = !buf;
	if (buf)
		return buf;
	if (cap > PTRDIFF_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	return fault_malloc(FAULT_BUF_ALLOC, cap);
}

int blitz_bufreader_init(struct blitz_bufreader *r, const struct blitz_stream *src,
			 void *buf, size_t cap)
{
	memset(r, 0, sizeof(*r));
	if (!src || !cap)
		return -EINVAL;
	r->buf = buffer_get(buf, cap, &r->owned);
	if (!r->buf)
		return -ENOMEM;
	r->src = *src;
	r->cap = cap;
	r->max_line = cap;
	return 0;
}

void blitz_bufreader_destroy(struct blitz_bufreader *r)
{
	if (r->owned)
		free(r->buf);
	r->buf = NULL;
	r->owned = false;
}

void blitz_bufreader_set_max_line(struct blitz_bufreader *r, size_t max)
{
	r->max_line = max && max < r->cap ? max : r->cap;
}

void blitz_bufreader_cancel(struct blitz_bufreader *r)
{
	blitz_stream_cancel(&r->op);
}

/* take - drop @n bytes from the front of the buffer; an empty buffer starts over at 0. */
static void take(struct blitz_bufreader *r, size_t n)
{
	r->pos += n;
	r->scanned = 0;
	if (r->pos == r->end)
		r->pos = r->end = 0;
}

/* settle - consume the line the last read_until handed out. */
static void settle(struct blitz_bufreader *r)
{
	size_t n = r->consume_next;

	r->consume_next = 0;
	if (n)
		take(r, n);
}

void blitz_bufreader_consume(struct blitz_bufreader *r, size_t n)
{
	settle(r);
	take(r, n < r->end - r->pos ? n : r->end - r->pos);
}

static size_t avail(const struct blitz_bufreader *r)
{
	return r->end - r->pos;
}

static enum blitz_poll finish_r(struct blitz_bufreader *r, long result)
{
	r->phase = 0;
	r->result = result;
	return BLITZ_READY;
}

/*
 * read_more - one read into the free tail of the buffer, moving the
 * buffered bytes to the front first if the tail is full.  Precondition:
 * avail(r) < r->cap.  READY with r->op.result > 0 (r->end grew), 0 at the
 * end of the stream, or -errno.
 */
static enum blitz_poll read_more(struct blitz_bufreader *r, struct blitz_cx *cx)
{
	if (!r->op.started && r->end == r->cap && r->pos) {
		memmove(r->buf, r->buf + r->pos, avail(r));
		r->end -= r->pos;
		r->pos = 0;
	}
	if (blitz_stream_read_poll(&r->op, &r->src, r->buf + r->end, r->cap - r->end, cx) ==
	    BLITZ_PENDING)
		return BLITZ_PENDING;
	if (r->op.result > 0)
		r->end += (size_t)r->op.result;
	return BLITZ_READY;
}

enum blitz_poll blitz_bufreader_fill_poll(struct blitz_bufreader *r, struct blitz_cx *cx)
{
	if (r->phase == 0) {
		settle(r);
		if (avail(r))
			return finish_r(r, (long)avail(r));
		r->phase = 1;
	}
	if (read_more(r, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	return finish_r(r, r->op.result > 0 ? (long)avail(r) : r->op.result);
}

/* copy_out - up to @len buffered bytes into @buf; returns how many. */
static size_t copy_out(struct blitz_bufreader *r, void *buf, size_t len)
{
	size_t n = avail(r) < len ? avail(r) : len;

	memcpy(buf, r->buf + r->pos, n);
	take(r, n);
	return n;
}

/* Phases of read: 1 filling the buffer, 2 reading straight into the caller's buffer. */
enum blitz_poll blitz_bufreader_read_poll(struct blitz_bufreader *r, void *buf, size_t len,
					  struct blitz_cx *cx)
{
	if (r->phase == 0) {
		settle(r);
		if (avail(r) || !len)
			return finish_r(r, (long)copy_out(r, buf, len));
		r->phase = len >= r->cap ? 2 : 1;
	}
	if (r->phase == 2) {
		if (blitz_stream_read_poll(&r->op, &r->src, buf, len, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		return finish_r(r, r->op.result);
	}
	if (read_more(r, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	if (r->op.result <= 0)
		return finish_r(r, r->op.result);
	return finish_r(r, (long)copy_out(r, buf, len));
}

/*
 * Phases of read_exact: 1 between pieces (copy what is buffered), 2
 * filling the buffer, 3 reading the rest (at least a buffer's worth)
 * straight into the caller's buffer.
 */
enum blitz_poll blitz_bufreader_read_exact_poll(struct blitz_bufreader *r, void *buf, size_t len,
						struct blitz_cx *cx)
{
	long res;

	if (r->phase == 0) {
		settle(r);
		r->done = 0;
		r->phase = 1;
	}
	for (;;) {
		if (r->phase == 1) {
			r->done += copy_out(r, (char *)buf + r->done, len - r->done);
			if (r->done == len)
				return finish_r(r, (long)len);
			r->phase = len - r->done >= r->cap ? 3 : 2;
		}
		if (r->phase == 2) {
			if (read_more(r, cx) == BLITZ_PENDING)
				return BLITZ_PENDING;
			res = r->op.result;
		} else {
			if (blitz_stream_read_poll(&r->op, &r->src, (char *)buf + r->done,
						   len - r->done, cx) == BLITZ_PENDING)
				return BLITZ_PENDING;
			res = r->op.result;
			if (res > 0)
				r->done += (size_t)res;
		}
		if (res <= 0)
			return finish_r(r, res < 0 ? res : -EPIPE);
		r->phase = 1;
	}
}

/* hand_out - the first @n buffered bytes are the line; the next call consumes them. */
static enum blitz_poll hand_out(struct blitz_bufreader *r, size_t n, long result)
{
	r->line = r->buf + r->pos;
	r->line_len = n;
	if (result > 0) {
		r->consume_next = n;
		r->scanned = 0;
	}
	return finish_r(r, result);
}

/*
 * scan - look for @delim among the first max_line buffered bytes, from
 * where the last scan stopped.  Return: the line's length with the
 * delimiter, or 0.
 */
static size_t scan(struct blitz_bufreader *r, int delim)
{
	size_t limit = avail(r) < r->max_line ? avail(r) : r->max_line;
	const unsigned char *from = r->buf + r->pos, *p = NULL;

	if (limit > r->scanned)
		p = memchr(from + r->scanned, delim, limit - r->scanned);
	r->scanned = limit;
	return p ? (size_t)(p - from) + 1 : 0;
}

/* Phases of read_until: 1 scanning, 2 reading more. */
enum blitz_poll blitz_bufreader_read_until_poll(struct blitz_bufreader *r, int delim,
						struct blitz_cx *cx)
{
	size_t n;

	if (r->phase == 0) {
		settle(r);
		r->line = NULL;
		r->line_len = 0;
		r->phase = 1;
	}
	for (;;) {
		if (r->phase == 1) {
			n = scan(r, delim);
			if (n)
				return hand_out(r, n, (long)n);
			if (avail(r) >= r->max_line)
				return hand_out(r, r->max_line, -EMSGSIZE);
			r->phase = 2;
		}
		if (read_more(r, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (r->op.result < 0)
			return finish_r(r, r->op.result);
		if (r->op.result == 0)		/* the end: the last line has no delimiter */
			return hand_out(r, avail(r), (long)avail(r));
		r->phase = 1;
	}
}

enum blitz_poll blitz_bufreader_read_line_poll(struct blitz_bufreader *r, struct blitz_cx *cx)
{
	if (blitz_bufreader_read_until_poll(r, '\n', cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	if (r->result > 0 && r->line[r->line_len - 1] == '\n') {
		r->line_len--;
		if (r->line_len && r->line[r->line_len - 1] == '\r')
			r->line_len--;
	}
	return BLITZ_READY;
}

/* ---------------------------------------------------------------------- */
/* Buffered writer                                                         */

int blitz_bufwriter_init(struct blitz_bufwriter *w, const struct blitz_stream *dst,
			 void *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	if (!dst || !cap)
		return -EINVAL;
	w->buf = buffer_get(buf, cap, &w->owned);
	if (!w->buf)
		return -ENOMEM;
	w->dst = *dst;
	w->cap = cap;
	return 0;
}

void blitz_bufwriter_destroy(struct blitz_bufwriter *w)
{
	if (w->owned)
		free(w->buf);
	w->buf = NULL;
	w->owned = false;
}

void blitz_bufwriter_cancel(struct blitz_bufwriter *w)
{
	blitz_stream_cancel(&w->op);
}

static enum blitz_poll finish_w(struct blitz_bufwriter *w, long result)
{
	w->phase = 0;
	w->result = result;
	return BLITZ_READY;
}

/*
 * drain - write @data[w->done .. @n) until the stream has taken all of it.
 * READY with *err 0, or -errno (a write that takes nothing is -EIO).
 */
static enum blitz_poll drain(struct blitz_bufwriter *w, const unsigned char *data, size_t n,
			     long *err, struct blitz_cx *cx)
{
	*err = 0;
	while (w->done < n) {
		if (blitz_stream_write_poll(&w->op, &w->dst, data + w->done, n - w->done, cx) ==
		    BLITZ_PENDING)
			return BLITZ_PENDING;
		if (w->op.result <= 0) {
			*err = w->op.result < 0 ? w->op.result : -EIO;
			break;
		}
		w->done += (size_t)w->op.result;
	}
	return BLITZ_READY;
}

/*
 * flush_step - drain the buffer.  On an error the bytes the stream did not
 * take move to the front and stay buffered.
 */
static enum blitz_poll flush_step(struct blitz_bufwriter *w, long *err, struct blitz_cx *cx)
{
	if (drain(w, w->buf, w->len, err, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	memmove(w->buf, w->buf + w->done, w->len - w->done);
	w->len -= w->done;
	w->done = 0;
	return BLITZ_READY;
}

enum blitz_poll blitz_bufwriter_flush_poll(struct blitz_bufwriter *w, struct blitz_cx *cx)
{
	long err;

	if (w->phase == 0) {
		w->done = 0;
		w->phase = 1;
	}
	if (flush_step(w, &err, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	return finish_w(w, err);
}

/* Phases of write: 1 flushing the buffer, 2 writing @buf straight through. */
enum blitz_poll blitz_bufwriter_write_poll(struct blitz_bufwriter *w, const void *buf, size_t len,
					   struct blitz_cx *cx)
{
	long err;

	if (w->phase == 0) {
		if (len <= w->cap - w->len) {
			memcpy(w->buf + w->len, buf, len);
			w->len += len;
			return finish_w(w, (long)len);
		}
		w->done = 0;
		w->phase = w->len ? 1 : 2;
	}
	if (w->phase == 1) {
		if (flush_step(w, &err, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (err)
			return finish_w(w, err);
		if (len < w->cap) {
			memcpy(w->buf, buf, len);
			w->len = len;
			return finish_w(w, (long)len);
		}
		w->phase = 2;
	}
	if (drain(w, buf, len, &err, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	return finish_w(w, err ? err : (long)len);
}

/* ---------------------------------------------------------------------- */
/* Copy                                                                    */

static enum blitz_poll finish_c(struct blitz_copy *c, enum blitz_copy_side side, long err)
{
	c->phase = 0;
	c->failed = side;
	c->result = err ? err : (long)c->copied;
	return BLITZ_READY;
}

/* Phases: 1 filling the reader, 2 writing what it holds, 3 the final flush. */
enum blitz_poll blitz_copy_poll(struct blitz_copy *c, struct blitz_bufreader *from,
				struct blitz_bufwriter *to, struct blitz_cx *cx)
{
	size_t n;

	if (c->phase == 0) {
		c->copied = 0;
		c->failed = BLITZ_COPY_OK;
		c->phase = 1;
	}
	for (;;) {
		switch (c->phase) {
		case 1:
			if (blitz_bufreader_fill_poll(from, cx) == BLITZ_PENDING)
				return BLITZ_PENDING;
			if (from->result < 0)
				return finish_c(c, BLITZ_COPY_READ, from->result);
			c->phase = from->result ? 2 : 3;
			break;
		case 2:
			n = blitz_bufreader_buffered(from);
			if (blitz_bufwriter_write_poll(to, blitz_bufreader_data(from), n, cx) ==
			    BLITZ_PENDING)
				return BLITZ_PENDING;
			if (to->result < 0)
				return finish_c(c, BLITZ_COPY_WRITE, to->result);
			blitz_bufreader_consume(from, n);
			c->copied += n;
			c->phase = 1;
			break;
		default:
			if (blitz_bufwriter_flush_poll(to, cx) == BLITZ_PENDING)
				return BLITZ_PENDING;
			return finish_c(c, to->result < 0 ? BLITZ_COPY_WRITE : BLITZ_COPY_OK,
					to->result);
		}
	}
}

void blitz_copy_cancel(struct blitz_copy *c, struct blitz_bufreader *from,
		       struct blitz_bufwriter *to)
{
	(void)c;
	blitz_bufreader_cancel(from);
	blitz_bufwriter_cancel(to);
}
