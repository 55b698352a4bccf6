// SPDX-License-Identifier: MIT
/*
 * test_stream.c - buffered streams on every backend: the line reader over
 * a TCP pair and over a pipe (lines crossing buffer boundaries, CRLF, a
 * last line without a newline), a line longer than the maximum, the
 * buffered writer (many small writes, then flush, byte-exact), copy of
 * several MB pipe -> TCP -> pipe (byte-exact, every transfer at most a
 * buffer's size), a regular file copied into a socket, and a peer reset
 * in the middle of a copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

static void nonblock(int fd)
{
	ck_assert_int_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

/* tcp_pair - two connected, non-blocking TCP sockets over loopback. */
static void tcp_pair(int sv[2])
{
	struct blitz_addr a, bound;
	int lfd;

	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	lfd = blitz_listen(&a, 4);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(blitz_addr_local(lfd, &bound), 0);
	sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(sv[0], 0);
	ck_assert_int_eq(connect(sv[0], (struct sockaddr *)&bound.ss, bound.len), 0);
	do {
		sv[1] = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	} while (sv[1] < 0 && (errno == EAGAIN || errno == EINTR) && usleep(1000) == 0);
	ck_assert_int_ge(sv[1], 0);
	nonblock(sv[0]);
	close(lfd);
}

static void pipe_pair(int p[2])
{
	ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
}

/* The stream over @fd: TCP sockets and pipes by what fstat says. */
static struct blitz_stream stream_of(int fd)
{
	struct blitz_stream s;

	ck_assert_int_eq(blitz_stream_from_fd(&s, fd), 0);
	return s;
}

/* ---------------------------------------------------------------------- */
/* The line reader                                                         */

#define LINES 3000
#define LINE_CAP 32		/* the reader's buffer: lines cross it all the time */
static const char last_line[] = "the end, no newline";

/* Line k: (k * 7) % 31 letters, ended by "\r\n" when k % 3 == 0, else "\n". */
static size_t line_text(unsigned k, char *out)
{
	size_t n = (k * 7) % 31;

	for (size_t i = 0; i < n; i++)
		out[i] = (char)('a' + (k + i) % 26);
	return n;
}

static const char *line_end(unsigned k)
{
	return k % 3 == 0 ? "\r\n" : "\n";
}

/* The producer writes every line through a small buffered writer, then closes. */
struct line_writer {
	struct blitz_co co;
	struct blitz_bufwriter w;
	struct blitz_stream s;
	unsigned k;
	size_t n;
	char text[40];
	unsigned char buf[64];
	long result;
};

static void line_writer_drop(void *arg)
{
	blitz_bufwriter_cancel(&((struct line_writer *)arg)->w);
}

static enum blitz_poll line_writer_poll(void *arg, struct blitz_cx *cx)
{
	struct line_writer *lw = arg;

	BLITZ_CO_BEGIN(&lw->co);
	ck_assert_int_eq(blitz_bufwriter_init(&lw->w, &lw->s, lw->buf, sizeof(lw->buf)), 0);
	for (lw->k = 0; lw->k < LINES; lw->k++) {
		lw->n = line_text(lw->k, lw->text);
		BLITZ_AWAIT(&lw->co, blitz_bufwriter_write_poll(&lw->w, lw->text, lw->n, cx));
		ck_assert_int_eq(lw->w.result, (long)lw->n);
		BLITZ_AWAIT(&lw->co, blitz_bufwriter_write_poll(&lw->w, line_end(lw->k),
								strlen(line_end(lw->k)), cx));
		ck_assert_uint_le(blitz_bufwriter_buffered(&lw->w), sizeof(lw->buf));
	}
	BLITZ_AWAIT(&lw->co, blitz_bufwriter_write_poll(&lw->w, last_line, strlen(last_line), cx));
	BLITZ_AWAIT(&lw->co, blitz_bufwriter_flush_poll(&lw->w, cx));
	lw->result = lw->w.result;
	ck_assert_uint_eq(blitz_bufwriter_buffered(&lw->w), 0);
	blitz_bufwriter_destroy(&lw->w);
	close(lw->s.fd);	/* the reader sees the end of the stream */
	BLITZ_CO_END(&lw->co);
}
static const struct blitz_task_vtable line_writer_vt =
	BLITZ_TASK_VTABLE(line_writer_poll, line_writer_drop);

struct line_reader {
	struct blitz_co co;
	struct blitz_bufreader r;
	struct blitz_stream s;
	unsigned k;
	size_t n;
	char want[40];
	unsigned char buf[LINE_CAP];
	long lines;
};

static void line_reader_drop(void *arg)
{
	blitz_bufreader_cancel(&((struct line_reader *)arg)->r);
}

static enum blitz_poll line_reader_poll(void *arg, struct blitz_cx *cx)
{
	struct line_reader *lr = arg;

	BLITZ_CO_BEGIN(&lr->co);
	ck_assert_int_eq(blitz_bufreader_init(&lr->r, &lr->s, lr->buf, sizeof(lr->buf)), 0);
	for (lr->k = 0; lr->k < LINES; lr->k++) {
		lr->n = line_text(lr->k, lr->want);	/* locals do not survive an AWAIT */
		BLITZ_AWAIT(&lr->co, blitz_bufreader_read_line_poll(&lr->r, cx));
		ck_assert_int_eq(lr->r.result, (long)(lr->n + strlen(line_end(lr->k))));
		ck_assert_uint_eq(lr->r.line_len, lr->n);
		ck_assert_msg(!memcmp(lr->r.line, lr->want, lr->n), "line %u differs", lr->k);
		lr->lines++;
	}
	/* The last line has no newline: it comes whole, then the end. */
	BLITZ_AWAIT(&lr->co, blitz_bufreader_read_line_poll(&lr->r, cx));
	ck_assert_int_eq(lr->r.result, (long)strlen(last_line));
	ck_assert_uint_eq(lr->r.line_len, strlen(last_line));
	ck_assert(!memcmp(lr->r.line, last_line, strlen(last_line)));
	BLITZ_AWAIT(&lr->co, blitz_bufreader_read_line_poll(&lr->r, cx));
	ck_assert_int_eq(lr->r.result, 0);
	BLITZ_AWAIT(&lr->co, blitz_bufreader_read_line_poll(&lr->r, cx));
	ck_assert_int_eq(lr->r.result, 0);	/* and stays there */
	blitz_bufreader_destroy(&lr->r);
	BLITZ_CO_END(&lr->co);
}
static const struct blitz_task_vtable line_reader_vt =
	BLITZ_TASK_VTABLE(line_reader_poll, line_reader_drop);

/* lines_over - the producer writes into @wfd, the reader reads @rfd. */
static void lines_over(struct blitz_runtime *rt, int rfd, int wfd)
{
	struct line_writer lw = { .s = stream_of(wfd) };
	struct line_reader lr = { .s = stream_of(rfd) };
	struct blitz_task *tw, *tr;

	tw = blitz_spawn(rt, &line_writer_vt, &lw, sizeof(lw));
	tr = blitz_spawn(rt, &line_reader_vt, &lr, sizeof(lr));
	ck_assert_ptr_nonnull(tw);
	ck_assert_ptr_nonnull(tr);
	ck_assert_int_eq(blitz_join(tw), 0);
	ck_assert_int_eq(blitz_join(tr), 0);
	ck_assert_int_eq(((struct line_writer *)blitz_task_state(tw))->result, 0);
	ck_assert_int_eq(((struct line_reader *)blitz_task_state(tr))->lines, LINES);
	blitz_task_release(tw);
	blitz_task_release(tr);
	close(rfd);
}

START_TEST(lines_over_tcp)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	int sv[2];

	NEED_BACKEND(rt, _i);
	tcp_pair(sv);
	lines_over(rt, sv[1], sv[0]);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(lines_over_pipe)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	int p[2];

	NEED_BACKEND(rt, _i);
	pipe_pair(p);
	lines_over(rt, p[0], p[1]);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(lines_over_unix)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	int sv[2];

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	lines_over(rt, sv[1], sv[0]);
	blitz_runtime_free(rt);
}
END_TEST

/* A line longer than the maximum is -EMSGSIZE, a bounded piece at a time. */
struct long_line {
	struct blitz_co co;
	struct blitz_bufreader r;
	struct blitz_stream s;
	unsigned char buf[32];
	int too_long;
	char got[3][16];
	long results[4];
};

static enum blitz_poll long_line_poll(void *arg, struct blitz_cx *cx)
{
	struct long_line *ll = arg;

	BLITZ_CO_BEGIN(&ll->co);
	ck_assert_int_eq(blitz_bufreader_init(&ll->r, &ll->s, ll->buf, sizeof(ll->buf)), 0);
	blitz_bufreader_set_max_line(&ll->r, 16);
	BLITZ_AWAIT(&ll->co, blitz_bufreader_read_line_poll(&ll->r, cx));
	ll->results[0] = ll->r.result;
	memcpy(ll->got[0], ll->r.line, ll->r.line_len);
	for (;;) {
		BLITZ_AWAIT(&ll->co, blitz_bufreader_read_line_poll(&ll->r, cx));
		if (ll->r.result != -EMSGSIZE)
			break;
		/* The piece is left in the buffer: max_line bytes of it. */
		ck_assert_uint_eq(ll->r.line_len, 16);
		ck_assert_uint_ge(blitz_bufreader_buffered(&ll->r), 16);
		ck_assert(ll->r.line[0] == 'x' && ll->r.line[15] == 'x');
		ll->too_long++;
		blitz_bufreader_consume(&ll->r, ll->r.line_len);	/* skip it, go on */
	}
	ll->results[1] = ll->r.result;	/* the tail of the long line */
	memcpy(ll->got[1], ll->r.line, ll->r.line_len);
	BLITZ_AWAIT(&ll->co, blitz_bufreader_read_line_poll(&ll->r, cx));
	ll->results[2] = ll->r.result;
	memcpy(ll->got[2], ll->r.line, ll->r.line_len);
	BLITZ_AWAIT(&ll->co, blitz_bufreader_read_line_poll(&ll->r, cx));
	ll->results[3] = ll->r.result;
	blitz_bufreader_destroy(&ll->r);
	BLITZ_CO_END(&ll->co);
}
static const struct blitz_task_vtable long_line_vt = BLITZ_TASK_VTABLE(long_line_poll, NULL);

START_TEST(line_longer_than_max)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct long_line ll = { 0 };
	char text[160];
	int p[2], n;

	NEED_BACKEND(rt, _i);
	pipe_pair(p);
	/* "short\n", 100 x's and "\n", then "after\n": x's = 6 * 16 + 4. */
	n = snprintf(text, sizeof(text), "short\n%0100d\nafter\n", 0);
	memset(text + 6, 'x', 100);
	ck_assert_int_eq(write(p[1], text, (size_t)n), n);
	close(p[1]);
	ll.s = stream_of(p[0]);
	ck_assert_int_eq(blitz_block_on(rt, &long_line_vt, &ll, sizeof(ll)), 0);
	ck_assert_int_eq(ll.results[0], 6);
	ck_assert(!memcmp(ll.got[0], "short", 5));
	ck_assert_int_eq(ll.too_long, 6);
	ck_assert_int_eq(ll.results[1], 5);
	ck_assert(!memcmp(ll.got[1], "xxxx", 4));
	ck_assert_int_eq(ll.results[2], 6);
	ck_assert(!memcmp(ll.got[2], "after", 5));
	ck_assert_int_eq(ll.results[3], 0);
	close(p[0]);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Byte streams: a pattern, a checker, small writes, copy                  */

static unsigned char pattern_at(uint64_t i)
{
	return (unsigned char)((i * 131 + (i >> 11) * 7) & 0xff);
}

/* Reads everything from a stream and checks it against the pattern. */
struct checker {
	struct blitz_co co;
	struct blitz_bufreader r;
	struct blitz_stream s;
	uint64_t got;
	int64_t bad;		/* the first byte that differs, or -1 */
	long result;
	unsigned char buf[4096];
	unsigned char chunk[3000];
};

static void checker_drop(void *arg)
{
	blitz_bufreader_cancel(&((struct checker *)arg)->r);
}

static enum blitz_poll checker_poll(void *arg, struct blitz_cx *cx)
{
	struct checker *c = arg;

	BLITZ_CO_BEGIN(&c->co);
	ck_assert_int_eq(blitz_bufreader_init(&c->r, &c->s, c->buf, sizeof(c->buf)), 0);
	c->bad = -1;
	for (;;) {
		BLITZ_AWAIT(&c->co, blitz_bufreader_read_poll(&c->r, c->chunk, sizeof(c->chunk), cx));
		if (c->r.result <= 0)
			break;
		for (long i = 0; i < c->r.result && c->bad < 0; i++)
			if (c->chunk[i] != pattern_at(c->got + (uint64_t)i))
				c->bad = (int64_t)(c->got + (uint64_t)i);
		c->got += (uint64_t)c->r.result;
	}
	c->result = c->r.result;
	blitz_bufreader_destroy(&c->r);
	close(c->s.fd);
	BLITZ_CO_END(&c->co);
}
static const struct blitz_task_vtable checker_vt = BLITZ_TASK_VTABLE(checker_poll, checker_drop);

static struct blitz_task *spawn_checker(struct blitz_runtime *rt, int fd)
{
	struct checker c = { .s = stream_of(fd) };
	struct blitz_task *t = blitz_spawn(rt, &checker_vt, &c, sizeof(c));

	ck_assert_ptr_nonnull(t);
	return t;
}

static void join_checker(struct blitz_task *t, uint64_t want)
{
	struct checker *c;

	ck_assert_int_eq(blitz_join(t), 0);
	c = blitz_task_state(t);
	ck_assert_int_eq(c->result, 0);
	ck_assert_msg(c->bad < 0, "byte %lld differs", (long long)c->bad);
	ck_assert_uint_eq(c->got, want);
	blitz_task_release(t);
}

/*
 * Writes the pattern through a buffered writer in pieces of 1 to 7 bytes,
 * with a piece of 3 buffers' size (write-through) every 1,000 pieces.
 */
struct small_writer {
	struct blitz_co co;
	struct blitz_bufwriter w;
	struct blitz_stream s;
	uint64_t total, at;
	size_t n, max_buffered;
	unsigned k;
	long result;
	unsigned char piece[3 * 1024];
	unsigned char buf[1024];
};

static void small_writer_drop(void *arg)
{
	blitz_bufwriter_cancel(&((struct small_writer *)arg)->w);
}

static enum blitz_poll small_writer_poll(void *arg, struct blitz_cx *cx)
{
	struct small_writer *sw = arg;

	BLITZ_CO_BEGIN(&sw->co);
	ck_assert_int_eq(blitz_bufwriter_init(&sw->w, &sw->s, sw->buf, sizeof(sw->buf)), 0);
	for (sw->at = 0, sw->k = 0; sw->at < sw->total; sw->k++) {
		sw->n = sw->k % 1000 == 999 ? sizeof(sw->piece) : 1 + sw->k % 7;
		if (sw->n > sw->total - sw->at)
			sw->n = (size_t)(sw->total - sw->at);
		for (size_t i = 0; i < sw->n; i++)
			sw->piece[i] = pattern_at(sw->at + i);
		BLITZ_AWAIT(&sw->co, blitz_bufwriter_write_poll(&sw->w, sw->piece, sw->n, cx));
		if (sw->w.result < 0)
			break;		/* e.g. -EPIPE: nobody reads any more */
		ck_assert_int_eq(sw->w.result, (long)sw->n);
		sw->at += sw->n;
		if (blitz_bufwriter_buffered(&sw->w) > sw->max_buffered)
			sw->max_buffered = blitz_bufwriter_buffered(&sw->w);
	}
	if (sw->w.result >= 0)
		BLITZ_AWAIT(&sw->co, blitz_bufwriter_flush_poll(&sw->w, cx));
	sw->result = sw->w.result < 0 ? sw->w.result : 0;
	blitz_bufwriter_destroy(&sw->w);
	close(sw->s.fd);
	BLITZ_CO_END(&sw->co);
}
static const struct blitz_task_vtable small_writer_vt =
	BLITZ_TASK_VTABLE(small_writer_poll, small_writer_drop);

START_TEST(bufwriter_small_writes)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct small_writer sw = { .total = 1000003 };
	struct blitz_task *tw, *tc;
	int sv[2];

	NEED_BACKEND(rt, _i);
	tcp_pair(sv);
	sw.s = stream_of(sv[0]);
	tc = spawn_checker(rt, sv[1]);
	tw = blitz_spawn(rt, &small_writer_vt, &sw, sizeof(sw));
	ck_assert_ptr_nonnull(tw);
	ck_assert_int_eq(blitz_join(tw), 0);
	sw = *(struct small_writer *)blitz_task_state(tw);
	ck_assert_int_eq(sw.result, 0);
	ck_assert_uint_le(sw.max_buffered, sizeof(sw.buf));	/* never more than the buffer */
	blitz_task_release(tw);
	join_checker(tc, sw.total);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * A stream that wraps another and records the largest transfer asked of
 * it: the copy's memory bound, seen from the outside.
 */
struct watch {
	const struct blitz_stream_vtable *inner;
	_Atomic size_t max_len;
};

static void watch_len(const struct blitz_stream_op *op, size_t len)
{
	struct watch *w = op->stream->priv;
	size_t m = atomic_load(&w->max_len);

	while (len > m && !atomic_compare_exchange_weak(&w->max_len, &m, len))
		;
}

static enum blitz_poll watch_read(struct blitz_stream_op *op, void *buf, size_t len,
				  struct blitz_cx *cx)
{
	struct watch *w = op->stream->priv;

	if (!op->started)
		watch_len(op, len);
	return w->inner->read(op, buf, len, cx);
}

static enum blitz_poll watch_write(struct blitz_stream_op *op, const void *buf, size_t len,
				   struct blitz_cx *cx)
{
	struct watch *w = op->stream->priv;

	if (!op->started)
		watch_len(op, len);
	return w->inner->write(op, buf, len, cx);
}

static void watch_cancel(struct blitz_stream_op *op)
{
	((struct watch *)op->stream->priv)->inner->cancel(op);
}

static const struct blitz_stream_vtable watch_vt = {
	.name = "watch", .read = watch_read, .write = watch_write, .cancel = watch_cancel,
};

static struct blitz_stream watched(int fd, struct watch *w)
{
	struct blitz_stream s = stream_of(fd);

	w->inner = s.vt;
	s.vt = &watch_vt;
	s.priv = w;
	return s;
}

#define COPY_BUF 4096

/* Copies one stream into another; closes (or shuts down) the writing end after. */
struct copier {
	struct blitz_co co;
	struct blitz_bufreader r;
	struct blitz_bufwriter w;
	struct blitz_copy c;
	struct blitz_stream from, to;
	long result;
	uint64_t copied;
	enum blitz_copy_side failed;
	unsigned char rbuf[COPY_BUF], wbuf[COPY_BUF];
};

static void copier_drop(void *arg)
{
	struct copier *c = arg;

	blitz_copy_cancel(&c->c, &c->r, &c->w);
}

static enum blitz_poll copier_poll(void *arg, struct blitz_cx *cx)
{
	struct copier *c = arg;

	BLITZ_CO_BEGIN(&c->co);
	ck_assert_int_eq(blitz_bufreader_init(&c->r, &c->from, c->rbuf, sizeof(c->rbuf)), 0);
	ck_assert_int_eq(blitz_bufwriter_init(&c->w, &c->to, c->wbuf, sizeof(c->wbuf)), 0);
	BLITZ_AWAIT(&c->co, blitz_copy_poll(&c->c, &c->r, &c->w, cx));
	c->result = c->c.result;
	c->copied = c->c.copied;
	c->failed = c->c.failed;
	if (shutdown(c->to.fd, SHUT_WR) < 0)	/* a socket: the peer sees the end */
		close(c->to.fd);		/* a pipe */
	BLITZ_CO_END(&c->co);
}
static const struct blitz_task_vtable copier_vt = BLITZ_TASK_VTABLE(copier_poll, copier_drop);

static struct blitz_task *spawn_copier(struct blitz_runtime *rt, struct blitz_stream from,
				       struct blitz_stream to)
{
	struct copier c = { .from = from, .to = to };
	struct blitz_task *t = blitz_spawn(rt, &copier_vt, &c, sizeof(c));

	ck_assert_ptr_nonnull(t);
	return t;
}

static struct copier join_copier(struct blitz_task *t)
{
	struct copier c;

	ck_assert_int_eq(blitz_join(t), 0);
	c = *(struct copier *)blitz_task_state(t);
	blitz_task_release(t);
	return c;
}

/*
 * pipe A -> copy -> TCP x ... TCP y -> copy -> pipe B -> checker; a small
 * writer feeds pipe A.  Byte-exact, and no transfer larger than a buffer.
 */
START_TEST(copy_pipe_tcp_pipe)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct small_writer sw = { .total = (6u << 20) + 13 };
	struct watch wa = { 0 }, wx = { 0 }, wy = { 0 }, wb = { 0 };
	struct blitz_task *tw, *t1, *t2, *tc;
	struct copier c1, c2;
	int a[2], b[2], sv[2];

	NEED_BACKEND(rt, _i);
	pipe_pair(a);
	pipe_pair(b);
	tcp_pair(sv);
	t1 = spawn_copier(rt, watched(a[0], &wa), watched(sv[0], &wx));
	t2 = spawn_copier(rt, watched(sv[1], &wy), watched(b[1], &wb));
	tc = spawn_checker(rt, b[0]);
	sw.s = stream_of(a[1]);
	tw = blitz_spawn(rt, &small_writer_vt, &sw, sizeof(sw));
	ck_assert_ptr_nonnull(tw);
	ck_assert_int_eq(blitz_join(tw), 0);
	ck_assert_int_eq(((struct small_writer *)blitz_task_state(tw))->result, 0);
	blitz_task_release(tw);
	c1 = join_copier(t1);
	c2 = join_copier(t2);
	join_checker(tc, sw.total);
	ck_assert_int_eq(c1.result, (long)sw.total);
	ck_assert_int_eq(c2.result, (long)sw.total);
	ck_assert_uint_eq(c1.copied, sw.total);
	ck_assert_int_eq(c1.failed, BLITZ_COPY_OK);
	/* Memory bounded by the buffers: no transfer was ever larger. */
	ck_assert_uint_le(atomic_load(&wa.max_len), COPY_BUF);
	ck_assert_uint_le(atomic_load(&wx.max_len), COPY_BUF);
	ck_assert_uint_le(atomic_load(&wy.max_len), COPY_BUF);
	ck_assert_uint_le(atomic_load(&wb.max_len), COPY_BUF);
	ck_assert_uint_gt(atomic_load(&wa.max_len), 0);
	close(a[0]);
	close(sv[0]);
	close(sv[1]);
	blitz_runtime_free(rt);
}
END_TEST

/* A regular file (the fs module underneath) copied into a socket. */
START_TEST(copy_file_to_socket)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct blitz_task *t, *tc;
	struct blitz_stream from;
	struct copier c;
	char path[] = "/tmp/blitz-stream-XXXXXX";
	unsigned char block[4096];
	uint64_t total = 1000000;
	int fd, sv[2];

	NEED_BACKEND(rt, _i);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	for (uint64_t at = 0; at < total; at += sizeof(block)) {
		size_t n = total - at < sizeof(block) ? (size_t)(total - at) : sizeof(block);

		for (size_t i = 0; i < n; i++)
			block[i] = pattern_at(at + i);
		ck_assert_int_eq(write(fd, block, n), (ssize_t)n);
	}
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	from = stream_of(fd);
	ck_assert_ptr_eq(from.vt, &blitz_stream_file_vt);
	tcp_pair(sv);
	ck_assert_ptr_eq(stream_of(sv[0]).vt, &blitz_stream_socket_vt);
	tc = spawn_checker(rt, sv[1]);
	t = spawn_copier(rt, from, stream_of(sv[0]));
	c = join_copier(t);
	ck_assert_int_eq(c.result, (long)total);
	join_checker(tc, total);
	close(fd);
	close(sv[0]);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * A copy into a socket whose peer resets the connection: the copy ends
 * with -ECONNRESET or -EPIPE on the write side; the pipe's feeder then
 * gets -EPIPE once the pipe is closed.  Nothing crashes.
 */
START_TEST(copy_peer_reset)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct small_writer sw = { .total = 64u << 20 };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct blitz_task *tw, *t;
	struct copier c;
	char buf[4096];
	int a[2], sv[2];
	long got = 0;

	NEED_BACKEND(rt, _i);
	pipe_pair(a);
	tcp_pair(sv);
	t = spawn_copier(rt, stream_of(a[0]), stream_of(sv[0]));
	sw.s = stream_of(a[1]);
	tw = blitz_spawn(rt, &small_writer_vt, &sw, sizeof(sw));
	ck_assert_ptr_nonnull(tw);
	/* The peer reads some, then resets (linger 0 + close). */
	while (got < 100000) {
		ssize_t r = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT);

		if (r > 0)
			got += r;
		else
			usleep(1000);
	}
	setsockopt(sv[1], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(sv[1]);
	c = join_copier(t);
	ck_assert_msg(c.result == -ECONNRESET || c.result == -EPIPE, "copy after reset: %ld",
		      c.result);
	ck_assert_int_eq(c.failed, BLITZ_COPY_WRITE);
	ck_assert_uint_ge(c.copied, (uint64_t)got);
	ck_assert_uint_lt(c.copied, sw.total);
	/* Nobody reads the pipe any more: its feeder fails with -EPIPE. */
	close(a[0]);
	ck_assert_int_eq(blitz_join(tw), 0);
	ck_assert_int_eq(((struct small_writer *)blitz_task_state(tw))->result, -EPIPE);
	blitz_task_release(tw);
	close(sv[0]);
	blitz_runtime_free(rt);
}
END_TEST

/* fill/consume, read_exact through the buffer and around it, an early end. */
struct exact {
	struct blitz_co co;
	struct blitz_bufreader r;
	struct blitz_stream s;
	unsigned char buf[64];
	unsigned char out[10000];
	long fill, first[3], done_at_end, last;
	int first_bytes_ok, bad_at;
};

static enum blitz_poll exact_poll(void *arg, struct blitz_cx *cx)
{
	struct exact *e = arg;

	BLITZ_CO_BEGIN(&e->co);
	ck_assert_int_eq(blitz_bufreader_init(&e->r, &e->s, e->buf, sizeof(e->buf)), 0);
	BLITZ_AWAIT(&e->co, blitz_bufreader_fill_poll(&e->r, cx));
	e->fill = e->r.result;
	e->first_bytes_ok = ((const unsigned char *)blitz_bufreader_data(&e->r))[0] == pattern_at(0);
	blitz_bufreader_consume(&e->r, 10);
	/* 5,000 bytes: the buffered ones, then straight into out. */
	BLITZ_AWAIT(&e->co, blitz_bufreader_read_exact_poll(&e->r, e->out + 10, 5000, cx));
	e->first[0] = e->r.result;
	/* 100 bytes: through the buffer. */
	BLITZ_AWAIT(&e->co, blitz_bufreader_read_exact_poll(&e->r, e->out + 5010, 100, cx));
	e->first[1] = e->r.result;
	/* More than is left: -EPIPE, with what did arrive. */
	BLITZ_AWAIT(&e->co, blitz_bufreader_read_exact_poll(&e->r, e->out + 5110, 10000, cx));
	e->first[2] = e->r.result;
	e->done_at_end = (long)e->r.done;
	BLITZ_AWAIT(&e->co, blitz_bufreader_read_poll(&e->r, e->out, 1, cx));
	e->last = e->r.result;
	e->bad_at = -1;
	for (int i = 10; i < 10000 && e->bad_at < 0; i++)
		if (e->out[i] != pattern_at((uint64_t)i))
			e->bad_at = i;
	BLITZ_CO_END(&e->co);
}
static const struct blitz_task_vtable exact_vt = BLITZ_TASK_VTABLE(exact_poll, NULL);

START_TEST(fill_consume_read_exact)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct exact *e = calloc(1, sizeof(*e));
	unsigned char data[10000];
	int p[2];

	NEED_BACKEND(rt, _i);
	ck_assert_ptr_nonnull(e);
	for (int i = 0; i < 10000; i++)
		data[i] = pattern_at((uint64_t)i);
	pipe_pair(p);
	ck_assert_int_eq(write(p[1], data, sizeof(data)), (ssize_t)sizeof(data));
	close(p[1]);
	e->s = stream_of(p[0]);
	ck_assert_int_eq(blitz_block_on(rt, &exact_vt, e, sizeof(*e)), 0);
	ck_assert_int_gt(e->fill, 0);
	ck_assert_int_le(e->fill, 64);
	ck_assert(e->first_bytes_ok);
	ck_assert_int_eq(e->first[0], 5000);
	ck_assert_int_eq(e->first[1], 100);
	ck_assert_int_eq(e->first[2], -EPIPE);
	ck_assert_int_eq(e->done_at_end, 10000 - 5110);
	ck_assert_int_eq(e->last, 0);
	ck_assert_int_eq(e->bad_at, -1);
	close(p[0]);
	free(e);
	blitz_runtime_free(rt);
}
END_TEST

/* A read-only stream refuses writes with -EBADF; a zero-sized buffer is refused. */
static const struct blitz_stream_vtable read_only_vt = {
	.name = "read-only", .read = NULL, .write = NULL, .cancel = NULL,
};

struct refused {
	struct blitz_co co;
	struct blitz_bufwriter w;
	struct blitz_stream s;
	unsigned char buf[8];
	long write_result, flush_result;
};

static enum blitz_poll refused_poll(void *arg, struct blitz_cx *cx)
{
	struct refused *f = arg;

	BLITZ_CO_BEGIN(&f->co);
	ck_assert_int_eq(blitz_bufwriter_init(&f->w, &f->s, f->buf, 0), -EINVAL);
	ck_assert_int_eq(blitz_bufwriter_init(&f->w, &f->s, f->buf, sizeof(f->buf)), 0);
	BLITZ_AWAIT(&f->co, blitz_bufwriter_write_poll(&f->w, "0123456789", 10, cx));
	f->write_result = f->w.result;
	BLITZ_AWAIT(&f->co, blitz_bufwriter_flush_poll(&f->w, cx));
	f->flush_result = f->w.result;
	BLITZ_CO_END(&f->co);
}
static const struct blitz_task_vtable refused_vt = BLITZ_TASK_VTABLE(refused_poll, NULL);

START_TEST(read_only_stream)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct refused f = { .s = { .vt = &read_only_vt, .fd = -1 } };

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(blitz_block_on(rt, &refused_vt, &f, sizeof(f)), 0);
	ck_assert_int_eq(f.write_result, -EBADF);
	ck_assert_int_eq(f.flush_result, 0);	/* nothing was buffered */
	blitz_runtime_free(rt);
}
END_TEST

/* A socket copied into a regular file (fs writes: the pool on epoll/poll). */
START_TEST(copy_socket_to_file)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct small_writer sw = { .total = 2000000 };
	struct blitz_task *tw, *t;
	struct copier c;
	char path[] = "/tmp/blitz-stream-XXXXXX";
	unsigned char block[4096];
	int fd, sv[2];
	long bad = -1;

	NEED_BACKEND(rt, _i);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	tcp_pair(sv);
	t = spawn_copier(rt, stream_of(sv[1]), stream_of(dup(fd)));	/* the copier closes it */
	sw.s = stream_of(sv[0]);
	tw = blitz_spawn(rt, &small_writer_vt, &sw, sizeof(sw));
	ck_assert_ptr_nonnull(tw);
	ck_assert_int_eq(blitz_join(tw), 0);
	blitz_task_release(tw);
	c = join_copier(t);
	ck_assert_int_eq(c.result, (long)sw.total);
	ck_assert_int_eq(lseek(fd, 0, SEEK_END), (off_t)sw.total);
	for (uint64_t at = 0; at < sw.total && bad < 0; at += sizeof(block)) {
		ssize_t n = pread(fd, block, sizeof(block), (off_t)at);

		ck_assert_int_gt(n, 0);
		for (ssize_t i = 0; i < n && bad < 0; i++)
			if (block[i] != pattern_at(at + (uint64_t)i))
				bad = (long)(at + (uint64_t)i);
	}
	ck_assert_msg(bad < 0, "byte %ld of the file differs", bad);
	close(fd);
	close(sv[1]);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * Tasks cancelled while a read is pending (a line reader on a quiet
 * socket, a copy from a quiet pipe): their drop functions cancel the
 * operations, the runtime stops with nothing left in flight.
 */
START_TEST(cancel_pending)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct blitz_task *tr, *tc;
	int sv[2], p[2], sv2[2];

	NEED_BACKEND(rt, _i);
	tcp_pair(sv);
	tcp_pair(sv2);
	pipe_pair(p);
	{
		struct line_reader lr = { .s = stream_of(sv[1]) };

		tr = blitz_spawn(rt, &line_reader_vt, &lr, sizeof(lr));
		ck_assert_ptr_nonnull(tr);
	}
	tc = spawn_copier(rt, stream_of(p[0]), stream_of(sv2[0]));
	usleep(50000);
	ck_assert(!blitz_task_done(tr));
	ck_assert(!blitz_task_done(tc));
	blitz_task_cancel(tr);
	blitz_task_cancel(tc);
	ck_assert_int_eq(blitz_join(tr), -ECANCELED);
	ck_assert_int_eq(blitz_join(tc), -ECANCELED);
	blitz_task_release(tr);
	blitz_task_release(tc);
	blitz_runtime_free(rt);
	for (int i = 0; i < 2; i++) {
		close(sv[i]);
		close(sv2[i]);
		close(p[i]);
	}
}
END_TEST

static Suite *stream_suite(void)
{
	Suite *s = suite_create("stream");
	TCase *tc = TCASE("lines", 120);

	signal(SIGPIPE, SIG_IGN);	/* a pipe without reader: -EPIPE, not a signal */
	tcase_add_loop_test(tc, lines_over_tcp, 0, 3);
	tcase_add_loop_test(tc, lines_over_pipe, 0, 3);
	tcase_add_loop_test(tc, lines_over_unix, 0, 3);
	tcase_add_loop_test(tc, line_longer_than_max, 0, 3);
	tcase_add_loop_test(tc, fill_consume_read_exact, 0, 3);
	tcase_add_loop_test(tc, read_only_stream, 0, 3);
	suite_add_tcase(s, tc);

	tc = TCASE("bytes", 300);
	tcase_add_loop_test(tc, bufwriter_small_writes, 0, 3);
	tcase_add_loop_test(tc, copy_pipe_tcp_pipe, 0, 3);
	tcase_add_loop_test(tc, copy_file_to_socket, 0, 3);
	tcase_add_loop_test(tc, copy_socket_to_file, 0, 3);
	tcase_add_loop_test(tc, copy_peer_reset, 0, 3);
	tcase_add_loop_test(tc, cancel_pending, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("stream", stream_suite)
