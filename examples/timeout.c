// SPDX-License-Identifier: MIT
/*
 * timeout.c - a time limit around a sequence of steps, and what to do with
 * the step still running when the limit passes.
 *
 * The server answers "HELLO" with "WORLD" and never answers anything else.
 * The client's steps, under one 50 ms limit: send HELLO, read WORLD, send
 * QUIET, read the answer, which never comes.  When the limit passes that
 * read is still in flight, in the kernel or the I/O driver, writing into
 * the client's buffer whenever data arrives: the client cancels it and
 * awaits its end before it touches the buffer or the socket again.  Then
 * it sends one more HELLO with the same, unzeroed, transfer struct.
 *
 * blitz_timeout_poll() wraps one poll function; a sequence of steps is one
 * poll function with a coroutine of its own (`steps` below, beside the
 * task's `co`), so that the limit covers all of it.
 *
 * Run: build/examples/timeout   (BLITZ_BACKEND applies)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <blitz.h>

#define LIMIT	(50 * BLITZ_NSEC_PER_MSEC)

/* The server's connections: 5-byte requests; only HELLO gets an answer. */
struct conn {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	char req[5];
};

static enum blitz_poll conn_poll(void *arg, struct blitz_cx *cx)
{
	struct conn *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_read_exact_poll(&s->x, s->fd, s->req, 5, cx));
		if (s->x.result < 0)		/* -EPIPE: the client closed */
			break;
		if (!memcmp(s->req, "HELLO", 5))
			BLITZ_AWAIT(&s->co, blitz_write_all_poll(&s->x, s->fd, "WORLD", 5, cx));
	}
	BLITZ_CO_END(&s->co);
}

static void conn_drop(void *arg)
{
	blitz_net_close(NULL, ((struct conn *)arg)->fd);
}

static const struct blitz_task_vtable conn_vt = BLITZ_TASK_VTABLE(conn_poll, conn_drop);

/* The client, run by main with blitz_block_on(). */
struct client {
	struct blitz_co co, steps;
	struct blitz_connect c;
	struct blitz_timeout limit;
	struct blitz_xfer x;
	struct blitz_addr addr;
	int fd, step;
	long cancelled;			/* how the cancelled read ended */
	uint64_t took;
	char in[5];
};

/* The steps under the limit; s->step says how far they got. */
static enum blitz_poll steps(void *arg, struct blitz_cx *cx)
{
	struct client *s = arg;

	BLITZ_CO_BEGIN(&s->steps);
	s->step = 1;
	BLITZ_AWAIT(&s->steps, blitz_write_all_poll(&s->x, s->fd, "HELLO", 5, cx));
	s->step = 2;
	BLITZ_AWAIT(&s->steps, blitz_read_exact_poll(&s->x, s->fd, s->in, 5, cx));
	s->step = 3;
	BLITZ_AWAIT(&s->steps, blitz_write_all_poll(&s->x, s->fd, "QUIET", 5, cx));
	s->step = 4;
	BLITZ_AWAIT(&s->steps, blitz_read_exact_poll(&s->x, s->fd, s->in, 5, cx));
	s->step = 5;			/* never reached: the server keeps quiet */
	BLITZ_CO_END(&s->steps);
}

static enum blitz_poll client_poll(void *arg, struct blitz_cx *cx)
{
	struct client *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, blitz_connect_poll(&s->c, &s->addr, cx));
	s->fd = s->c.result;
	if (s->fd < 0)
		return BLITZ_READY;
	/* The deadline is fixed here; the steps run until they end or it passes. */
	s->took = blitz_now_ns();
	blitz_timeout_init(&s->limit, LIMIT);
	BLITZ_AWAIT(&s->co, blitz_timeout_poll(&s->limit, steps, s, cx));
	s->took = blitz_now_ns() - s->took;
	if (s->limit.timed_out) {
		/*
		 * The step that was running is left as it was: cancel its
		 * read and await its completion.  -ECANCELED, or the read's
		 * own result if it finished first.
		 */
		BLITZ_AWAIT(&s->co, blitz_xfer_cancel_poll(&s->x, cx));
		s->cancelled = s->x.result;
	}
	/* The transfer is idle again: use it as it is, no need to zero it. */
	BLITZ_AWAIT(&s->co, blitz_write_all_poll(&s->x, s->fd, "HELLO", 5, cx));
	BLITZ_AWAIT(&s->co, blitz_read_exact_poll(&s->x, s->fd, s->in, 5, cx));
	close(s->fd);
	BLITZ_CO_END(&s->co);
}

/* No drop function: main waits for this task, which ends with nothing in flight. */
static const struct blitz_task_vtable client_vt = BLITZ_TASK_VTABLE(client_poll, NULL);

int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct conn proto = { .fd = -1 };
	struct blitz_cancel_token stop;
	struct blitz_serve_conf conf = {
		.conn_vt = &conn_vt, .conn_state = &proto, .conn_size = sizeof(proto),
		.fd_offset = offsetof(struct conn, fd), .stop = &stop,
	};
	struct client c = { .fd = -1 };
	struct blitz_task *server;
	int lfd, ok;

	if (!rt || blitz_addr_parse("127.0.0.1:0", &c.addr, NULL, 0) < 0)
		return 1;
	lfd = blitz_listen(&c.addr, 16);
	if (lfd < 0 || blitz_addr_local(lfd, &c.addr) < 0)
		return 1;
	blitz_cancel_token_init(&stop);
	server = blitz_serve(rt, lfd, &conf);
	if (!server || blitz_block_on(rt, &client_vt, &c, sizeof(c)) != 0)
		return 1;
	printf("timeout: after %.1f ms, at step %d of 4; its read ended with \"%s\"; "
	       "then HELLO got \"%.5s\" (%s)\n", (double)c.took / 1e6, c.step,
	       strerror((int)-c.cancelled), c.in, blitz_io_backend_name(rt));
	ok = c.limit.timed_out && c.step == 4 && c.cancelled == -ECANCELED &&
	     c.took >= LIMIT && !memcmp(c.in, "WORLD", 5);
	/* Stop the server with its token; its accept is cancelled and collected. */
	blitz_cancel_token_cancel(&stop);
	if (blitz_join(server) != 0)
		ok = 0;
	blitz_task_release(server);
	close(lfd);			/* nothing waits on it any more */
	blitz_runtime_free(rt);
	blitz_cancel_token_destroy(&stop);
	return ok ? 0 : 1;
}
