// SPDX-License-Identifier: MIT
/*
 * echo.c - a TCP echo server on 127.0.0.1 and 200 clients in one program.
 *
 * Each client connects, sends 10 messages of 100 bytes, reads each echo
 * back and checks it, all under one time limit, then reports on a channel.
 * The main task spawns the server and the clients, counts the reports,
 * then stops the server.  It prints one line and exits 0 if every client
 * got every byte back.
 *
 * The rules this example relies on:
 *  - Locals do not survive a BLITZ_AWAIT: every value used after one is a
 *    field of the state struct, and so is every argument of an awaitable
 *    (it is evaluated again at every poll).
 *  - A spawn copies the state: fill a struct, spawn it, reuse the struct.
 *  - An awaitable (blitz_xfer, blitz_connect, ...) is idle again once it
 *    returned READY: the same one serves every read and write, unzeroed.
 *  - A drop function runs once, when the task completes or is cancelled
 *    (or dropped at shutdown): it releases what the state holds.
 *
 * Run: build/examples/echo   (BLITZ_BACKEND=io_uring|epoll|poll to choose)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <blitz.h>

#define CLIENTS		200
#define ROUNDS		10
#define MSG		100
#define CLIENT_LIMIT	(5 * BLITZ_NSEC_PER_SEC)	/* per client, connect included */

/* What a client sends on the channel when it is done. */
struct report {
	int client;
	int err;		/* 0, -ETIMEDOUT, or the failed call's -errno */
};

/* ---------------------------------------------------------------------- */
/* The server: one task per connection, spawned by blitz_serve()          */

struct conn {
	struct blitz_co co;
	struct blitz_xfer x;	/* every read and write of the connection */
	int fd;			/* blitz_serve() stores the descriptor here */
	long n;			/* bytes read: the write's length, kept apart
				 * from x.result, which the write overwrites */
	char buf[4096];
};

static enum blitz_poll conn_poll(void *arg, struct blitz_cx *cx)
{
	struct conn *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_read_poll(&s->x, s->fd, s->buf, sizeof(s->buf), cx));
		if (s->x.result <= 0)		/* 0: the client closed; < 0: an error */
			break;
		s->n = s->x.result;
		BLITZ_AWAIT(&s->co, blitz_write_all_poll(&s->x, s->fd, s->buf, (size_t)s->n, cx));
		if (s->x.result < 0)
			break;
	}
	BLITZ_CO_END(&s->co);
}

/* The socket is closed here, on every path: at the end, and at a cancel. */
static void conn_drop(void *arg)
{
	blitz_net_close(NULL, ((struct conn *)arg)->fd);
}

static const struct blitz_task_vtable conn_vt = BLITZ_TASK_VTABLE(conn_poll, conn_drop);

/* ---------------------------------------------------------------------- */
/* A client: connect, 10 round trips, under one time limit                */

struct client {
	struct blitz_co co;		/* the task's resume point */
	struct blitz_co steps;		/* the round trips' own resume point */
	struct blitz_connect_timeout c;
	struct blitz_timeout limit;
	struct blitz_xfer x;
	struct blitz_chan_waiter w;	/* the channel send's wait */
	struct blitz_channel *reports;	/* main()'s: it outlives every task */
	struct blitz_addr addr;
	struct report r;
	uint64_t deadline;
	int fd, i, send_err;
	char out[MSG], in[MSG];
};

/* The round trips, as a poll function that blitz_timeout_poll() wraps. */
static enum blitz_poll round_trips(void *arg, struct blitz_cx *cx)
{
	struct client *s = arg;

	BLITZ_CO_BEGIN(&s->steps);
	for (s->i = 0; s->i < ROUNDS; s->i++) {
		memset(s->out, 'a' + (s->r.client + s->i) % 26, MSG);
		BLITZ_AWAIT(&s->steps, blitz_write_all_poll(&s->x, s->fd, s->out, MSG, cx));
		if (s->x.result < 0)
			break;
		BLITZ_AWAIT(&s->steps, blitz_read_exact_poll(&s->x, s->fd, s->in, MSG, cx));
		if (s->x.result < 0)
			break;
		if (memcmp(s->in, s->out, MSG)) {
			s->r.err = -EBADMSG;
			break;
		}
	}
	BLITZ_CO_END(&s->steps);
}

static enum blitz_poll client_poll(void *arg, struct blitz_cx *cx)
{
	struct client *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	/* The connect has a limit of its own; it cancels itself at the limit. */
	s->deadline = blitz_now_ns() + CLIENT_LIMIT;
	BLITZ_AWAIT(&s->co, blitz_connect_timeout_poll(&s->c, &s->addr, CLIENT_LIMIT, cx));
	s->fd = s->c.result;
	if (s->fd < 0) {
		s->r.err = s->fd;
		goto report;
	}
	/* The round trips get what is left of the same limit. */
	blitz_timeout_until_init(&s->limit, s->deadline);
	BLITZ_AWAIT(&s->co, blitz_timeout_poll(&s->limit, round_trips, s, cx));
	if (s->limit.timed_out) {
		/* A read or write is still in flight: cancel it, await its end. */
		s->r.err = -ETIMEDOUT;
		BLITZ_AWAIT(&s->co, blitz_xfer_cancel_poll(&s->x, cx));
	} else if (s->x.result < 0) {
		s->r.err = (int)s->x.result;	/* the failed write or read */
	}
	close(s->fd);			/* nothing is in flight on it any more */
	s->fd = -1;
report:
	BLITZ_AWAIT(&s->co, blitz_channel_send_poll(s->reports, &s->w, cx, &s->r, &s->send_err));
	BLITZ_CO_END(&s->co);
}

/* Only a cancelled client holds anything here (shutdown cancels them all). */
static void client_drop(void *arg)
{
	struct client *s = arg;

	blitz_connect_timeout_cancel(&s->c);
	blitz_timeout_cancel(&s->limit);
	blitz_chan_waiter_cancel(&s->w);
	if (s->fd >= 0)
		blitz_net_close(NULL, s->fd);	/* also ends a read in flight */
}

static const struct blitz_task_vtable client_vt = BLITZ_TASK_VTABLE(client_poll, client_drop);

/* ---------------------------------------------------------------------- */
/* The main task: start everything, count the reports, stop the server   */

struct main_task {
	struct blitz_co co;
	struct blitz_channel *reports;
	struct blitz_addr addr;
	struct blitz_task *server;
	struct blitz_cancel_token *stop;	/* ends the accept loop */
	struct blitz_chan_waiter w;
	struct report r;
	int lfd, i, ok, err, recv_err;
};

static int start(struct main_task *s)
{
	struct conn proto = { .fd = -1 };
	struct blitz_serve_conf conf = {
		.conn_vt = &conn_vt, .conn_state = &proto, .conn_size = sizeof(proto),
		.fd_offset = offsetof(struct conn, fd), .stop = s->stop,
	};
	struct client c = { .reports = s->reports, .addr = s->addr, .fd = -1 };

	s->server = blitz_serve(NULL, s->lfd, &conf);
	if (!s->server)
		return -errno;
	/* The same struct, spawned 200 times: each client gets its own copy. */
	for (c.r.client = 0; c.r.client < CLIENTS; c.r.client++) {
		int err = blitz_spawn_detached(NULL, &client_vt, &c, sizeof(c));

		if (err)
			return err;
	}
	return 0;
}

static enum blitz_poll main_poll(void *arg, struct blitz_cx *cx)
{
	struct main_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	s->err = start(s);
	if (s->err)
		return BLITZ_READY;	/* a task's early end: never polled again */
	for (s->i = 0; s->i < CLIENTS; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(s->reports, &s->w, cx, &s->r, &s->recv_err));
		if (s->r.err == 0)
			s->ok++;
		else
			fprintf(stderr, "echo: client %d: %s\n", s->r.client, strerror(-s->r.err));
	}
	/*
	 * The token ends the accept loop: its accept in flight is cancelled
	 * and collected, so the listener is then the caller's to close.
	 */
	blitz_cancel_token_cancel(s->stop);
	BLITZ_AWAIT(&s->co, blitz_join_poll(s->server, cx));
	blitz_task_release(s->server);
	blitz_net_close(NULL, s->lfd);
	BLITZ_CO_END(&s->co);
}

static void main_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct main_task *)arg)->w);
}

static const struct blitz_task_vtable main_vt = BLITZ_TASK_VTABLE(main_poll, main_drop);

int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct blitz_channel reports;
	struct blitz_cancel_token stop;
	struct main_task m = { .reports = &reports, .stop = &stop };

	/* Port 0: the kernel picks a free port; blitz_addr_local says which. */
	if (!rt || blitz_addr_parse("127.0.0.1:0", &m.addr, NULL, 0) < 0)
		return 1;
	m.lfd = blitz_listen(&m.addr, 256);
	if (m.lfd < 0 || blitz_addr_local(m.lfd, &m.addr) < 0)
		return 1;
	/* 256 slots: every report fits, so no client waits to send. */
	if (blitz_channel_init(&reports, 256, sizeof(struct report)) < 0)
		return 1;
	blitz_cancel_token_init(&stop);
	/*
	 * blitz_block_on runs a copy of `m` as a task and copies it back
	 * when the task is done: read the results from `m` only afterwards,
	 * and never hand a task a pointer into `m` (it is not the task's).
	 */
	if (blitz_block_on(rt, &main_vt, &m, sizeof(m)) != 0 || m.err)
		fprintf(stderr, "echo: %s\n", strerror(m.err ? -m.err : ECANCELED));
	printf("echo: %d of %d clients echoed %d x %d bytes (%s)\n",
	       m.ok, CLIENTS, ROUNDS, MSG, blitz_io_backend_name(rt));
	/* The runtime first (no task waits any more), then what tasks used. */
	blitz_runtime_free(rt);
	blitz_channel_destroy(&reports);
	blitz_cancel_token_destroy(&stop);
	return m.ok == CLIENTS ? 0 : 1;
}
