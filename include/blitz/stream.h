/* SPDX-License-Identifier: MIT */
/*
 * blitz/stream.h - streams: one readable/writable interface over TCP and
 * Unix sockets, pipes and regular files, a buffered reader (fill/consume,
 * read, read_exact, read_until, a line reader with a maximum line length),
 * a buffered writer (write, flush, write-through for large writes) and
 * copy, all with memory bounded by buffers fixed at init.
 *
 * Everything that waits is an awaitable, in the style of blitz/net.h: the
 * state of one operation lives inside the reader, writer or copy struct,
 * which lives in the task's state; poll it until BLITZ_READY, then read its
 * `result` (bytes, 0 at end of stream, or -errno).  No allocation per
 * operation.  One operation at a time per reader, writer or copy.
 *
 *	struct conn { struct blitz_co co; struct blitz_stream s; struct blitz_bufreader r; };
 *	blitz_stream_socket(&s->s, fd);
 *	blitz_bufreader_init(&s->r, &s->s, NULL, 4096);	// inside the task: see below
 *	for (;;) {
 *		BLITZ_AWAIT(&s->co, blitz_bufreader_read_line_poll(&s->r, cx));
 *		if (s->r.result <= 0)
 *			break;		// 0: end of stream; -EMSGSIZE: line too long
 *		use(s->r.line, s->r.line_len);
 *	}
 *
 * blitz_spawn() copies the task's state: initialise readers and writers
 * whose buffer lives in that state from inside the task, not before the
 * spawn (they point into it).
 */
#ifndef BLITZ_STREAM_H
#define BLITZ_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <blitz/fs.h>
#include <blitz/io.h>
#include <blitz/net.h>
#include <blitz/task.h>

struct blitz_stream;
struct blitz_stream_op;

/*
 * The readable/writable interface.  read and write are awaitables on @op:
 * they start on the first poll and return BLITZ_READY with op->result set
 * to the bytes moved (at most @len, possibly fewer), 0 for a read at the
 * end of the stream, or -errno.  They never report -EINTR or -EAGAIN (they
 * retry, or wait for readiness and retry).  cancel is for a drop function:
 * a pending operation completes later, with -ECANCELED or its real result.
 * A vtable may leave write (a read-only stream) or read NULL: -EBADF.
 */
struct blitz_stream_vtable {
	const char *name;
	enum blitz_poll (*read)(struct blitz_stream_op *op, void *buf, size_t len,
				struct blitz_cx *cx);
	enum blitz_poll (*write)(struct blitz_stream_op *op, const void *buf, size_t len,
				 struct blitz_cx *cx);
	void (*cancel)(struct blitz_stream_op *op);
};

/* A readable and/or writable: a descriptor (or @priv) and its vtable.  Copyable. */
struct blitz_stream {
	const struct blitz_stream_vtable *vt;
	int fd;
	void *priv;		/* for vtables of one's own */
};

/* One read or write in flight on a stream. */
struct blitz_stream_op {
	const struct blitz_stream *stream;	/* set when the operation starts */
	uint8_t started;	/* an operation is in flight */
	uint8_t is_write;
	long result;		/* bytes, 0 at end of stream, or -errno */
	union {
		struct blitz_xfer x;		/* sockets, pipes (core/io/pipe.c) */
		struct blitz_fs_op fs;		/* regular files */
	};
};

/* The vtables of the descriptor kinds. */
extern const struct blitz_stream_vtable blitz_stream_socket_vt;	/* recv / send */
extern const struct blitz_stream_vtable blitz_stream_pipe_vt;	/* read / write */
extern const struct blitz_stream_vtable blitz_stream_file_vt;	/* blitz_fs read / write */

/**
 * blitz_stream_socket - wrap a connected, non-blocking stream socket (TCP or
 * Unix; e.g. from blitz_accept_poll() or blitz_connect_poll()).  Writes use
 * MSG_NOSIGNAL: a vanished peer is -EPIPE or -ECONNRESET, never SIGPIPE.
 */
void blitz_stream_socket(struct blitz_stream *s, int fd);

/**
 * blitz_stream_pipe - wrap a non-blocking pipe, FIFO or character device.
 * A write to a pipe whose reader has gone raises SIGPIPE: ignore it
 * (signal(SIGPIPE, SIG_IGN)) to get -EPIPE instead.
 */
void blitz_stream_pipe(struct blitz_stream *s, int fd);

/**
 * blitz_stream_file - wrap a regular file, read and written at its file
 * position through the fs module (io_uring's read and write, the blocking
 * pool on epoll and poll: no worker waits on the disk).
 */
void blitz_stream_file(struct blitz_stream *s, int fd);

/**
 * blitz_stream_from_fd - wrap @fd by what fstat says it is: a socket, a
 * regular file (or block device), or else a pipe.  Sockets and pipes are
 * made non-blocking (O_NONBLOCK is shared by every copy of the descriptor).
 * Return: 0, or -errno (from fstat or fcntl).
 */
int blitz_stream_from_fd(struct blitz_stream *s, int fd);

/** blitz_stream_read_poll - read at most @len bytes from @s into @buf. */
enum blitz_poll blitz_stream_read_poll(struct blitz_stream_op *op, const struct blitz_stream *s,
				       void *buf, size_t len, struct blitz_cx *cx);

/** blitz_stream_write_poll - write at most @len bytes of @buf to @s. */
enum blitz_poll blitz_stream_write_poll(struct blitz_stream_op *op, const struct blitz_stream *s,
					const void *buf, size_t len, struct blitz_cx *cx);

/** blitz_stream_cancel - cancel @op's pending read or write (for a drop function). */
void blitz_stream_cancel(struct blitz_stream_op *op);

/* ---------------------------------------------------------------------- */
/* Buffered reader                                                         */

struct blitz_bufreader {
	struct blitz_stream src;	/* a copy of the stream */
	unsigned char *buf;
	size_t cap;			/* fixed at init */
	size_t pos, end;		/* buffered bytes: buf[pos .. end) */
	size_t max_line;		/* read_until / read_line: at most this (<= cap) */
	size_t scanned;			/* read_until: buf[pos .. pos+scanned) has no delim */
	size_t done;			/* read_exact: bytes copied so far */
	size_t consume_next;		/* read_until: the last line, consumed on the next call */
	bool owned;			/* buf was allocated by init */
	bool eof;			/* the stream has ended */
	int phase;			/* of the operation in progress */
	long result;			/* of the last operation */
	const unsigned char *line;	/* read_until / read_line: the line, in buf */
	size_t line_len;		/* read_until: with the delimiter; read_line: without */
	struct blitz_stream_op op;
};

/**
 * blitz_bufreader_init - a reader over @src with a buffer of @cap bytes:
 * @buf (the caller's, valid while the reader is used) or, if NULL, one
 * allocated here.  The maximum line length starts at @cap.
 * Return: 0, -EINVAL (@cap is 0, or @src NULL), or -ENOMEM.
 */
int blitz_bufreader_init(struct blitz_bufreader *r, const struct blitz_stream *src,
			 void *buf, size_t cap);

/**
 * blitz_bufreader_destroy - free the buffer if init allocated it.  Not from
 * a drop function while a read may be pending: a cancelled read can still
 * write into the buffer until it completes (io_uring, the blocking pool).
 * Tasks that can be cancelled keep their buffers in their state, which the
 * pending operation keeps alive.
 */
void blitz_bufreader_destroy(struct blitz_bufreader *r);

/** blitz_bufreader_set_max_line - lines longer than @max (capped at the buffer size) fail. */
void blitz_bufreader_set_max_line(struct blitz_bufreader *r, size_t max);

/** blitz_bufreader_cancel - cancel a pending read (for a drop function). */
void blitz_bufreader_cancel(struct blitz_bufreader *r);

/** blitz_bufreader_buffered - bytes in the buffer, not yet consumed. */
static inline size_t blitz_bufreader_buffered(const struct blitz_bufreader *r)
{
	return r->end - r->pos - r->consume_next;
}

/** blitz_bufreader_data - the buffered bytes (blitz_bufreader_buffered() of them). */
static inline const void *blitz_bufreader_data(const struct blitz_bufreader *r)
{
	return r->buf + r->pos + r->consume_next;
}

/** blitz_bufreader_consume - mark @n buffered bytes as used (at most the buffered ones). */
void blitz_bufreader_consume(struct blitz_bufreader *r, size_t n);

/**
 * blitz_bufreader_fill_poll - make sure something is buffered, reading once
 * if the buffer is empty.  result: the bytes buffered, 0 at the end of the
 * stream, or -errno.  Then use blitz_bufreader_data() and _consume().
 */
enum blitz_poll blitz_bufreader_fill_poll(struct blitz_bufreader *r, struct blitz_cx *cx);

/**
 * blitz_bufreader_read_poll - read at most @len bytes into @buf: buffered
 * bytes first; with nothing buffered, a read of at least the buffer's size
 * goes straight into @buf.  result: bytes, 0 at end of stream, or -errno.
 */
enum blitz_poll blitz_bufreader_read_poll(struct blitz_bufreader *r, void *buf, size_t len,
					  struct blitz_cx *cx);

/**
 * blitz_bufreader_read_exact_poll - read exactly @len bytes into @buf.
 * result: @len, -EPIPE if the stream ends first (r->done bytes arrived, as
 * blitz_read_exact_poll()), or -errno.
 */
enum blitz_poll blitz_bufreader_read_exact_poll(struct blitz_bufreader *r, void *buf, size_t len,
						struct blitz_cx *cx);

/**
 * blitz_bufreader_read_until_poll - the bytes up to and including the next
 * @delim, in r->line / r->line_len (pointing into the buffer: valid until
 * the next call on the reader, which consumes them).  @delim is a byte:
 * only its low 8 bits count (as memchr's).
 *
 * result: the line's length; at the end of the stream, the last bytes
 * without a delimiter, then 0; -EMSGSIZE if no @delim comes within the
 * maximum line length (the buffer is left as it is, r->line / line_len
 * show those bytes; blitz_bufreader_consume() them to go on); or -errno.
 * Memory never grows: the line must fit in the buffer.
 */
enum blitz_poll blitz_bufreader_read_until_poll(struct blitz_bufreader *r, int delim,
						struct blitz_cx *cx);

/**
 * blitz_bufreader_read_line_poll - read_until('\n'), with r->line_len not
 * counting the "\n" or "\r\n" that ended the line.  result: the bytes the
 * line took in the stream (> 0 for an empty line too), 0 at the end, or
 * -errno (-EMSGSIZE: longer than the maximum line length).
 */
enum blitz_poll blitz_bufreader_read_line_poll(struct blitz_bufreader *r, struct blitz_cx *cx);

/* ---------------------------------------------------------------------- */
/* Buffered writer                                                         */

struct blitz_bufwriter {
	struct blitz_stream dst;	/* a copy of the stream */
	unsigned char *buf;
	size_t cap;			/* fixed at init */
	size_t len;			/* buffered bytes: buf[0 .. len) */
	size_t done;			/* progress of the flush or write-through */
	bool owned;
	int phase;
	long result;			/* of the last operation */
	struct blitz_stream_op op;
};

/**
 * blitz_bufwriter_init - a writer to @dst with a buffer of @cap bytes (@buf,
 * or allocated here if NULL).  Return: 0, -EINVAL (@cap is 0, or @dst
 * NULL), or -ENOMEM.
 */
int blitz_bufwriter_init(struct blitz_bufwriter *w, const struct blitz_stream *dst,
			 void *buf, size_t cap);

/**
 * blitz_bufwriter_destroy - free the buffer if init allocated it (unflushed
 * bytes are lost).  Not while a write may be pending (see _bufreader_destroy).
 */
void blitz_bufwriter_destroy(struct blitz_bufwriter *w);

/** blitz_bufwriter_cancel - cancel a pending write (for a drop function). */
void blitz_bufwriter_cancel(struct blitz_bufwriter *w);

/** blitz_bufwriter_buffered - bytes written to the buffer and not yet to the stream. */
static inline size_t blitz_bufwriter_buffered(const struct blitz_bufwriter *w)
{
	return w->len;
}

/**
 * blitz_bufwriter_write_poll - write all @len bytes of @buf: into the
 * buffer if they fit (READY at once), else the buffer is flushed first and
 * then @buf is buffered, or written straight through if it is at least the
 * buffer's size.  result: @len or -errno (-EPIPE, -ECONNRESET: the peer is
 * gone); after an error, what the stream has not accepted stays buffered.
 */
enum blitz_poll blitz_bufwriter_write_poll(struct blitz_bufwriter *w, const void *buf, size_t len,
					   struct blitz_cx *cx);

/** blitz_bufwriter_flush_poll - write out everything buffered.  result: 0 or -errno. */
enum blitz_poll blitz_bufwriter_flush_poll(struct blitz_bufwriter *w, struct blitz_cx *cx);

/* ---------------------------------------------------------------------- */
/* Copy                                                                    */

enum blitz_copy_side {
	BLITZ_COPY_OK = 0,
	BLITZ_COPY_READ,		/* the read side failed */
	BLITZ_COPY_WRITE,		/* the write side failed */
};

struct blitz_copy {
	int phase;
	enum blitz_copy_side failed;	/* which side the error came from */
	uint64_t copied;		/* bytes accepted by the writer so far */
	long result;			/* bytes copied, or -errno */
};

/**
 * blitz_copy_poll - copy everything @from has until the end of its stream
 * to @to, then flush @to.  Memory is the two buffers: nothing else is
 * allocated, at most @from's buffer size is read at a time.
 * result: the bytes copied, or -errno (c->failed says which side,
 * c->copied how many bytes the writer took before).
 */
enum blitz_poll blitz_copy_poll(struct blitz_copy *c, struct blitz_bufreader *from,
				struct blitz_bufwriter *to, struct blitz_cx *cx);

/** blitz_copy_cancel - cancel the pending read or write of a copy (for a drop function). */
void blitz_copy_cancel(struct blitz_copy *c, struct blitz_bufreader *from,
		       struct blitz_bufwriter *to);

#endif /* BLITZ_STREAM_H */
