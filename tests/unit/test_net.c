// SPDX-License-Identifier: MIT
/*
 * test_net.c - sockets on every backend: echo round trips (1,000 concurrent
 * connections, payloads up to 4 MB, byte-exact), connection refused, a peer
 * reset mid-stream, descriptor exhaustion (accept keeps serving once
 * descriptors are free again; or, asked to, resets at once what it cannot
 * take), accept loops (blitz_serve: served, stopped by a token, a close, a
 * cancel or the runtime's shutdown, past resets and EMFILE), the cancel of
 * a transfer left in flight by a time limit, UDP and Unix sockets, address
 * parsing, and
 * one workload giving identical results on all three backends.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

/* The payload of connection c: a pattern no two connections share. */
static unsigned char pattern_at(unsigned c, size_t i)
{
	return (unsigned char)((i * 131 + c * 7 + (i >> 9)) & 0xff);
}

/* ---------------------------------------------------------------------- */
/* The echo server                                                        */

struct server {
	int fd;
	unsigned accept_flags;	/* BLITZ_ACCEPT_SHED, _OWNED or 0 */
	_Atomic long accepted, emfile, served_bytes;
	_Atomic long closed;	/* connections ended: their last touch of this */
	_Atomic int stop;
};

struct echo_conn {
	struct blitz_co co;
	struct server *srv;
	struct blitz_xfer x;
	int fd;
	bool owned;	/* accepted with BLITZ_ACCEPT_OWNED */
	long n;
	char buf[16384];
};

/* echo_close - the connection's socket, through blitz if it owns it. */
static void echo_close(struct echo_conn *e)
{
	if (e->owned)
		blitz_net_close(NULL, e->fd);
	else
		close(e->fd);
	e->fd = -1;
}

static void echo_drop(void *arg)
{
	struct echo_conn *e = arg;

	blitz_net_cancel(&e->x);
	if (e->fd >= 0)
		echo_close(e);
}

static enum blitz_poll echo_poll(void *arg, struct blitz_cx *cx)
{
	struct echo_conn *e = arg;

	BLITZ_CO_BEGIN(&e->co);
	for (;;) {
		BLITZ_AWAIT(&e->co, blitz_read_poll(&e->x, e->fd, e->buf, sizeof(e->buf), cx));
		if (e->x.result <= 0)
			break;
		e->n = e->x.result;
		BLITZ_AWAIT(&e->co, blitz_write_all_poll(&e->x, e->fd, e->buf, (size_t)e->n, cx));
		if (e->x.result < 0)
			break;
		atomic_fetch_add(&e->srv->served_bytes, e->n);
	}
	echo_close(e);
	/*
	 * Last: a caller that saw every connection closed may end and reuse
	 * the server's memory.  The client's EOF orders this close before
	 * the client's count only through the kernel, which ThreadSanitizer
	 * does not see.
	 */
	atomic_fetch_add(&e->srv->closed, 1);
	BLITZ_CO_END(&e->co);
}
static const struct blitz_task_vtable echo_vt = BLITZ_TASK_VTABLE(echo_poll, echo_drop);

struct acceptor {
	struct blitz_co co;
	struct server *srv;
	struct blitz_accept a;
	struct blitz_sleep nap;
};

static void acceptor_drop(void *arg)
{
	blitz_net_cancel(&((struct acceptor *)arg)->a);
	blitz_sleep_cancel(&((struct acceptor *)arg)->nap);
}

static enum blitz_poll acceptor_poll(void *arg, struct blitz_cx *cx)
{
	struct acceptor *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	s->a.flags = s->srv->accept_flags;
	while (!atomic_load(&s->srv->stop)) {
		BLITZ_AWAIT(&s->co, blitz_accept_poll(&s->a, s->srv->fd, cx));
		if (s->a.result == -EMFILE || s->a.result == -ENFILE) {
			/* Out of descriptors: back off 1 ms, then try again. */
			atomic_fetch_add(&s->srv->emfile, 1);
			blitz_sleep_init(&s->nap, 1000000);
			BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
			continue;
		}
		ck_assert_msg(s->a.result >= 0, "accept: %s", strerror((int)-s->a.result));
		atomic_fetch_add(&s->srv->accepted, 1);
		{
			struct echo_conn e = {
				.srv = s->srv,
				.fd = s->a.result,
				.owned = s->srv->accept_flags & BLITZ_ACCEPT_OWNED,
			};

			ck_assert_int_eq(blitz_spawn_detached(NULL, &echo_vt, &e, sizeof(e)), 0);
		}
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable acceptor_vt = BLITZ_TASK_VTABLE(acceptor_poll, acceptor_drop);

static struct blitz_task *start_server(struct blitz_runtime *rt, struct server *srv,
				       struct blitz_addr *bound)
{
	struct blitz_addr a;
	struct acceptor ac = { .srv = srv };
	struct blitz_task *t;

	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	srv->fd = blitz_listen(&a, 4096);
	ck_assert_int_ge(srv->fd, 0);
	ck_assert_int_eq(blitz_addr_local(srv->fd, bound), 0);
	t = blitz_spawn(rt, &acceptor_vt, &ac, sizeof(ac));
	ck_assert_ptr_nonnull(t);
	return t;
}

/*
 * stop_server - cancel the acceptor (its drop cancels the accept), then
 * close.  An acceptor backing off from EMFILE (which accept returns even
 * with nothing queued: the kernel takes the descriptor first) may see the
 * stop flag before the cancel lands and end by itself: either is a stop.
 */
static void stop_server(struct server *srv, struct blitz_task *acceptor)
{
	int ret;

	atomic_store(&srv->stop, 1);
	blitz_task_cancel(acceptor);
	ret = blitz_join(acceptor);
	ck_assert_msg(ret == -ECANCELED || ret == 0, "acceptor ended with %d", ret);
	blitz_task_release(acceptor);
	close(srv->fd);
}

/* ---------------------------------------------------------------------- */
/* Echo clients: a writer task and a reader (the client itself).          */

static unsigned char *payload_base;	/* pattern bytes for every connection */
#define PAYLOAD_MAX (4u << 20)

struct writer {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	unsigned id;
	size_t len;
	long result;
};

static void writer_drop(void *arg)
{
	blitz_net_cancel(&((struct writer *)arg)->x);
}

static enum blitz_poll writer_poll(void *arg, struct blitz_cx *cx)
{
	struct writer *w = arg;

	BLITZ_CO_BEGIN(&w->co);
	/* Connection `id` sends bytes pattern_at(id, 0 .. len-1). */
	BLITZ_AWAIT(&w->co, blitz_write_all_poll(&w->x, w->fd, payload_base + w->id % 256,
						 w->len, cx));
	w->result = w->x.result;
	shutdown(w->fd, SHUT_WR);
	BLITZ_CO_END(&w->co);
}
static const struct blitz_task_vtable writer_vt = BLITZ_TASK_VTABLE(writer_poll, writer_drop);

struct client {
	struct blitz_co co;
	struct blitz_connect c;
	struct blitz_xfer x;
	struct blitz_addr to;
	struct blitz_task *writer;
	_Atomic long *ok;
	_Atomic uint64_t *digest;
	unsigned id;
	size_t len, got;
	int fd;
	unsigned char buf[16384];
};

static void client_drop(void *arg)
{
	struct client *c = arg;

	blitz_net_cancel(&c->c);
	blitz_net_cancel(&c->x);
}

static enum blitz_poll client_poll(void *arg, struct blitz_cx *cx)
{
	struct client *c = arg;

	BLITZ_CO_BEGIN(&c->co);
	BLITZ_AWAIT(&c->co, blitz_connect_poll(&c->c, &c->to, cx));
	ck_assert_msg(c->c.result >= 0, "connect: %s", strerror((int)-c->c.result));
	c->fd = c->c.result;
	{
		struct writer w = { .fd = c->fd, .id = c->id, .len = c->len };

		c->writer = blitz_spawn(NULL, &writer_vt, &w, sizeof(w));
		ck_assert_ptr_nonnull(c->writer);
	}
	for (c->got = 0;;) {
		BLITZ_AWAIT(&c->co, blitz_read_poll(&c->x, c->fd, c->buf, sizeof(c->buf), cx));
		ck_assert_msg(c->x.result >= 0, "read: %s", strerror((int)-c->x.result));
		if (c->x.result == 0)
			break;
		/*
		 * Compare first, assert once: every ck_assert records its
		 * location in Check's message file, far too slow per byte.
		 */
		long bad = -1;

		for (long i = 0; i < c->x.result && bad < 0; i++)
			if (c->buf[i] != pattern_at(c->id, c->got + (size_t)i))
				bad = i;
		if (bad >= 0)
			ck_abort_msg("connection %u: byte %zu differs", c->id, c->got + (size_t)bad);
		c->got += (size_t)c->x.result;
	}
	ck_assert_uint_eq(c->got, c->len);
	BLITZ_AWAIT(&c->co, blitz_join_poll(c->writer, cx));
	ck_assert_int_eq(((struct writer *)blitz_task_state(c->writer))->result, (long)c->len);
	blitz_task_release(c->writer);
	close(c->fd);
	/*
	 * The digest before the count: once ok reaches n the test reads the
	 * digest and returns, and its next workload reuses this stack slot;
	 * nothing of the caller's may be touched after the count.
	 */
	atomic_fetch_xor(c->digest, (uint64_t)c->got * 2654435761u + c->id);
	atomic_fetch_add(c->ok, 1);
	BLITZ_CO_END(&c->co);
}
static const struct blitz_task_vtable client_vt = BLITZ_TASK_VTABLE(client_poll, client_drop);

static void make_payload(void)
{
	if (payload_base)
		return;
	/* payload_base + (id % 256) + i must equal pattern_at(id, i). */
	payload_base = malloc(PAYLOAD_MAX + 256);
	ck_assert_ptr_nonnull(payload_base);
}

static void fill_for(unsigned id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		payload_base[id % 256 + i] = pattern_at(id, i);
}

/*
 * echo_workload - @n clients of @len bytes (all sharing one pattern id
 * class) against a fresh server; returns the digest of what came back.
 */
static uint64_t echo_workload_flags(struct blitz_runtime *rt, unsigned n, size_t len, unsigned id,
				    unsigned accept_flags)
{
	struct server srv = { .fd = -1, .accept_flags = accept_flags };
	struct blitz_addr to;
	_Atomic long ok = 0;
	_Atomic uint64_t digest = 0;
	struct blitz_task *acceptor;

	make_payload();
	fill_for(id, len);
	acceptor = start_server(rt, &srv, &to);
	for (unsigned k = 0; k < n; k++) {
		struct client c = { .to = to, .ok = &ok, .digest = &digest, .id = id, .len = len };

		ck_assert_int_eq(blitz_spawn_detached(rt, &client_vt, &c, sizeof(c)), 0);
	}
	for (int t = 0; t < 120000 && atomic_load(&ok) < (long)n; t++)
		usleep(1000);
	ck_assert_int_eq(atomic_load(&ok), n);
	/* The server's side ends just after the client's: wait for it too. */
	for (int t = 0; t < 120000 && atomic_load(&srv.closed) < (long)n; t++)
		usleep(1000);
	ck_assert_int_eq(atomic_load(&srv.closed), n);
	ck_assert_int_eq(atomic_load(&srv.accepted), n);
	ck_assert_int_eq(atomic_load(&srv.served_bytes), (long)n * (long)len);
	stop_server(&srv, acceptor);
	return atomic_load(&digest);
}

static uint64_t echo_workload(struct blitz_runtime *rt, unsigned n, size_t len, unsigned id)
{
	return echo_workload_flags(rt, n, len, id, 0);
}

static unsigned scaled(unsigned n)
{
	return test_timeout_scale() > 1 ? n / 10 : n;
}

START_TEST(echo_1000_connections)
{
	struct blitz_runtime *rt = test_runtime_on(_i);

	NEED_BACKEND(rt, _i);
	echo_workload(rt, scaled(1000), 16384, 11);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * BLITZ_WAKE=bounded: the second worker hands the tasks its completions
 * wake to the global queue while worker 0 keeps up, and steals from it
 * only when it is behind; every byte still comes back, on every backend.
 */
START_TEST(echo_1000_connections_wake_bounded)
{
	struct blitz_config c;
	struct blitz_runtime *rt;

	blitz_config_default(&c);
	c.workers = 2;
	c.backend = test_backend_kind(_i);
	c.wake = BLITZ_WAKE_BOUNDED;
	rt = blitz_runtime_new(&c);
	ck_assert_ptr_nonnull(rt);
	NEED_BACKEND(rt, _i);
	echo_workload(rt, scaled(1000), 16384, 11);
	blitz_runtime_free(rt);
}
END_TEST

/* io_uring with one ring for all threads (the fallback of the ring per worker). */
START_TEST(echo_1000_connections_one_shared_ring)
{
	struct blitz_runtime *rt = test_runtime_one_ring(0);

	NEED_BACKEND(rt, 0);
	echo_workload(rt, scaled(1000), 16384, 11);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(echo_large_payloads)
{
	struct blitz_runtime *rt = test_runtime_on(_i);

	NEED_BACKEND(rt, _i);
	echo_workload(rt, 4, PAYLOAD_MAX, 77);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * Owned sockets (BLITZ_ACCEPT_OWNED, closed with blitz_net_close): on
 * io_uring their reads take what a multishot receive put in the worker
 * ring's provided buffers.  1,000 connections of 16 KB each hold more
 * buffers than a ring has (ENOBUFS: the waiting read gets a plain
 * receive, the next read arms again); every byte still comes back.
 */
START_TEST(owned_echo_1000_connections)
{
	struct blitz_runtime *rt = test_runtime_on(_i);

	NEED_BACKEND(rt, _i);
	echo_workload_flags(rt, scaled(1000), 16384, 13, BLITZ_ACCEPT_OWNED);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(owned_echo_large_payloads)
{
	struct blitz_runtime *rt = test_runtime_on(_i);

	NEED_BACKEND(rt, _i);
	echo_workload_flags(rt, 4, PAYLOAD_MAX, 79, BLITZ_ACCEPT_OWNED);
	blitz_runtime_free(rt);
}
END_TEST

/* The same digest with and without owned sockets, on each backend. */
START_TEST(owned_same_digest_as_plain)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	uint64_t plain, owned;

	NEED_BACKEND(rt, _i);
	plain = echo_workload(rt, 20, 100000, 5);
	owned = echo_workload_flags(rt, 20, 100000, 5, BLITZ_ACCEPT_OWNED);
	ck_assert_uint_eq(plain, owned);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(same_results_on_every_backend)
{
	uint64_t digest[3];
	int have = 0;

	for (int i = 0; i < 3; i++) {
		struct blitz_runtime *rt = test_runtime_on(i);

		if (strcmp(blitz_io_backend_name(rt), test_backend_name(i))) {
			blitz_runtime_free(rt);
			digest[i] = 0;
			continue;
		}
		digest[i] = echo_workload(rt, scaled(200), 65536 + 17, 5);
		blitz_runtime_free(rt);
		have++;
	}
	if (have < 2)
		SKIP("fewer than two backends available");
	for (int i = 1; i < 3; i++)
		if (digest[i] && digest[0])
			ck_assert_uint_eq(digest[i], digest[0]);
	ck_assert_uint_eq(digest[1], digest[2]);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */

struct dialer {
	struct blitz_co co;
	struct blitz_connect c;
	struct blitz_addr to;
	int result;
};

static enum blitz_poll dialer_poll(void *arg, struct blitz_cx *cx)
{
	struct dialer *d = arg;

	BLITZ_CO_BEGIN(&d->co);
	BLITZ_AWAIT(&d->co, blitz_connect_poll(&d->c, &d->to, cx));
	d->result = d->c.result;
	BLITZ_CO_END(&d->co);
}
static const struct blitz_task_vtable dialer_vt = BLITZ_TASK_VTABLE(dialer_poll, NULL);

START_TEST(connection_refused)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct blitz_addr a;
	struct dialer d = { 0 };
	int fd;

	NEED_BACKEND(rt, _i);
	/* A port that is bound but not listening refuses connections. */
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	fd = blitz_udp_bind(&a);	/* reserve a port number... */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(blitz_addr_local(fd, &d.to), 0);
	close(fd);			/* ...and give it back: nobody listens there */
	ck_assert_int_eq(blitz_block_on(rt, &dialer_vt, &d, sizeof(d)), 0);
	ck_assert_int_eq(d.result, -ECONNREFUSED);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * A client that writes a lot into a peer that resets the connection.
 * Both ends' buffers are held small (the kernel doubles the value and
 * stops autotuning it): loopback's autotuned buffers grow past the 4 MiB
 * written, and a run slow to reach the reset (under ThreadSanitizer) had
 * the whole payload taken before it, the write a success.
 */
static const int small_buffer = 16384;

struct blaster {
	struct blitz_co co;
	struct blitz_connect c;
	struct blitz_xfer x;
	struct blitz_addr to;
	long write_result, read_result;
};

static enum blitz_poll blaster_poll(void *arg, struct blitz_cx *cx)
{
	struct blaster *b = arg;

	BLITZ_CO_BEGIN(&b->co);
	BLITZ_AWAIT(&b->co, blitz_connect_poll(&b->c, &b->to, cx));
	ck_assert_int_ge(b->c.result, 0);
	ck_assert_int_eq(setsockopt(b->c.result, SOL_SOCKET, SO_SNDBUF, &small_buffer,
				    sizeof(small_buffer)), 0);
	BLITZ_AWAIT(&b->co, blitz_write_all_poll(&b->x, b->c.result, payload_base, PAYLOAD_MAX, cx));
	b->write_result = b->x.result;
	BLITZ_AWAIT(&b->co, blitz_read_poll(&b->x, b->c.result, payload_base, 16, cx));
	b->read_result = b->x.result;
	close(b->c.result);
	BLITZ_CO_END(&b->co);
}
static const struct blitz_task_vtable blaster_vt = BLITZ_TASK_VTABLE(blaster_poll, NULL);

START_TEST(peer_reset_mid_stream)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct blitz_addr a;
	struct blaster b = { 0 };
	struct blitz_task *t;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	char buf[4096];
	int lfd, cfd;

	NEED_BACKEND(rt, _i);
	make_payload();
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	lfd = blitz_listen(&a, 8);
	ck_assert_int_ge(lfd, 0);
	/* Before the connection: an accepted socket takes the listener's. */
	ck_assert_int_eq(setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small_buffer, sizeof(small_buffer)), 0);
	ck_assert_int_eq(blitz_addr_local(lfd, &b.to), 0);
	t = blitz_spawn(rt, &blaster_vt, &b, sizeof(b));
	/* The peer: accept, read a little, then reset (linger 0 + close). */
	do {
		cfd = accept(lfd, NULL, NULL);
	} while (cfd < 0 && (errno == EAGAIN || errno == EINTR) && usleep(1000) == 0);
	ck_assert_int_ge(cfd, 0);
	for (int got = 0; got < 1; ) {
		ssize_t r = recv(cfd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r > 0)
			got = 1;
		else
			usleep(1000);
	}
	setsockopt(cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(cfd);
	ck_assert_int_eq(blitz_join(t), 0);
	b = *(struct blaster *)blitz_task_state(t);
	/* The write fails with a reset (or EPIPE), the read too, nothing crashes. */
	ck_assert_msg(b.write_result == -ECONNRESET || b.write_result == -EPIPE,
		      "write after reset: %ld", b.write_result);
	ck_assert_msg(b.read_result == -ECONNRESET || b.read_result == 0 || b.read_result == -EPIPE,
		      "read after reset: %ld", b.read_result);
	blitz_task_release(t);
	close(lfd);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * leave_room_for - lower this process's descriptor limit to about @room
 * more than it uses now (@rl: the limit set, whose rlim_max a child may
 * restore).
 */
static void leave_room_for(int room, struct rlimit *rl)
{
	int probe = dup(0);

	ck_assert_int_ge(probe, 0);
	getrlimit(RLIMIT_NOFILE, rl);
	rl->rlim_cur = (rlim_t)probe + (rlim_t)room;
	close(probe);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, rl), 0);
}

START_TEST(accept_survives_descriptor_exhaustion)
{
	enum { CONNS = 60 };
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct server srv = { .fd = -1 };
	struct blitz_addr to;
	struct rlimit rl;
	struct blitz_net_stats before, after;
	pid_t child;
	int status, go[2];
	struct blitz_task *acceptor;

	NEED_BACKEND(rt, _i);
	acceptor = start_server(rt, &srv, &to);
	ck_assert_int_eq(pipe(go), 0);
	blitz_net_stats(&before);
	leave_room_for(20, &rl);
	/*
	 * A child (its own descriptor table) opens 60 connections at once,
	 * sends a byte on each, and closes them one by one once told that
	 * the server ran out of descriptors (a handshake on a pipe, not a
	 * pause: a slow server may take any time to get there).
	 */
	child = fork();
	if (child == 0) {
		int fds[CONNS];
		char c;

		rl.rlim_cur = rl.rlim_max;	/* the child is not the one starved */
		setrlimit(RLIMIT_NOFILE, &rl);
		close(go[1]);
		for (int k = 0; k < CONNS; k++) {
			fds[k] = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(fds[k], (struct sockaddr *)&to.ss, to.len) < 0 ||
			    write(fds[k], "x", 1) != 1)
				_exit(1);
		}
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		for (int k = 0; k < CONNS; k++)
			close(fds[k]);
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	close(go[0]);
	/* Hang guards only (scaled): each wait ends on what it waits for. */
	for (int t = 0; t < 30000 * test_timeout_scale() && atomic_load(&srv.emfile) == 0; t++)
		usleep(1000);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	for (int t = 0; t < 30000 * test_timeout_scale() && atomic_load(&srv.accepted) < CONNS; t++)
		usleep(1000);
	waitpid(child, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* It ran out of descriptors, and still accepted every connection. */
	ck_assert_int_gt(atomic_load(&srv.emfile), 0);
	ck_assert_int_eq(atomic_load(&srv.accepted), CONNS);
	stop_server(&srv, acceptor);
	/* The socket layer counted every failure, and shed nothing unasked. */
	blitz_net_stats(&after);
	ck_assert_uint_eq(after.accept_emfile - before.accept_emfile, (uint64_t)atomic_load(&srv.emfile));
	ck_assert_uint_eq(after.accept_shed - before.accept_shed, 0);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * With BLITZ_ACCEPT_SHED, the connections a server out of descriptors
 * cannot take are reset at once.  A child opens 60 connections, sends a
 * byte on each, then reads each reply: the echo (served) or a reset (shed).
 * A connection left waiting in the queue would block the child's read for
 * ever, failing the test at Check's timeout: no duration is judged.  The
 * socket layer's counters count the failures and the resets.
 */
START_TEST(accept_sheds_what_it_cannot_take)
{
	enum { CONNS = 60 };
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct server srv = { .fd = -1, .accept_flags = BLITZ_ACCEPT_SHED };
	struct blitz_net_stats before, after;
	struct blitz_addr to;
	struct rlimit rl;
	pid_t child;
	int status, res[2], got[2];	/* got: served, reset */
	struct blitz_task *acceptor;

	NEED_BACKEND(rt, _i);
	acceptor = start_server(rt, &srv, &to);
	ck_assert_int_eq(pipe(res), 0);
	blitz_net_stats(&before);
	leave_room_for(20, &rl);
	child = fork();
	if (child == 0) {
		int fds[CONNS], n[2] = { 0, 0 };

		rl.rlim_cur = rl.rlim_max;	/* the child is not the one starved */
		setrlimit(RLIMIT_NOFILE, &rl);
		for (int k = 0; k < CONNS; k++) {
			fds[k] = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(fds[k], (struct sockaddr *)&to.ss, to.len) < 0)
				_exit(1);
			send(fds[k], "x", 1, MSG_NOSIGNAL);	/* fails if reset already */
		}
		for (int k = 0; k < CONNS; k++) {
			char c;
			ssize_t r = recv(fds[k], &c, 1, 0);

			if (r == 1 && c == 'x')
				n[0]++;
			else if (r == 0 || (r < 0 && errno == ECONNRESET))
				n[1]++;
			else
				_exit(2);
		}
		_exit(write(res[1], n, sizeof(n)) == sizeof(n) ? 0 : 3);
	}
	ck_assert_int_gt(child, 0);
	close(res[1]);
	ck_assert_int_eq(read(res[0], got, sizeof(got)), sizeof(got));
	close(res[0]);
	waitpid(child, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(got[0] + got[1], CONNS);
	ck_assert_int_gt(got[1], 0);				/* it ran out, and shed */
	ck_assert_int_eq(got[0], atomic_load(&srv.accepted));	/* every accepted one was served */
	stop_server(&srv, acceptor);
	blitz_net_stats(&after);
	ck_assert_uint_eq(after.accept_shed - before.accept_shed, (uint64_t)got[1]);
	ck_assert_uint_eq(after.accept_emfile - before.accept_emfile, (uint64_t)atomic_load(&srv.emfile));
	ck_assert_int_gt(atomic_load(&srv.emfile), 0);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Time limits                                                            */

/*
 * accept_queue_full - SYNs to listener @lfd are dropped.  On a listening
 * socket TCP_INFO reports the accept queue's length in tcpi_unacked and
 * its limit in tcpi_sacked; Linux drops SYNs once the length exceeds it.
 */
static bool accept_queue_full(int lfd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(lfd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
	       ti.tcpi_unacked > ti.tcpi_sacked;
}

struct slow_dial {
	struct blitz_co co;
	struct blitz_connect_timeout ct;
	struct blitz_addr to;
	uint64_t started, took;
	int result;
};

static enum blitz_poll slow_dial_poll(void *arg, struct blitz_cx *cx)
{
	struct slow_dial *d = arg;

	BLITZ_CO_BEGIN(&d->co);
	d->started = blitz_now_ns();
	BLITZ_AWAIT(&d->co, blitz_connect_timeout_poll(&d->ct, &d->to, 100 * 1000000ull, cx));
	d->took = blitz_now_ns() - d->started;
	d->result = d->ct.result;
	BLITZ_CO_END(&d->co);
}
static const struct blitz_task_vtable slow_dial_vt = BLITZ_TASK_VTABLE(slow_dial_poll, NULL);

START_TEST(connect_timeout)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct blitz_addr a;
	struct slow_dial d = { 0 };
	int lfd, fill[8];

	NEED_BACKEND(rt, _i);
	/* A listener that never accepts, its accept queue full: SYNs are dropped. */
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	lfd = blitz_listen(&a, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(blitz_addr_local(lfd, &d.to), 0);
	for (int k = 0; k < 8; k++) {
		fill[k] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[k], (struct sockaddr *)&d.to.ss, d.to.len);
	}
	/* Wait for the queue to be full (hang guard only), not a fixed 50 ms. */
	for (int t = 0; t < 10000 * test_timeout_scale() && !accept_queue_full(lfd); t++)
		usleep(1000);
	ck_assert(accept_queue_full(lfd));
	ck_assert_int_eq(blitz_block_on(rt, &slow_dial_vt, &d, sizeof(d)), 0);
	ck_assert_int_eq(d.result, -ETIMEDOUT);
	ck_assert_uint_ge(d.took, 100 * 1000000ull);	/* never early */
	for (int k = 0; k < 8; k++)
		close(fill[k]);
	close(lfd);
	blitz_runtime_free(rt);		/* nothing left in flight */
}
END_TEST

struct quiet_read {
	struct blitz_co co;
	struct blitz_timeout limit;
	struct blitz_xfer x;
	int fd;
	char buf[8];
	int timed_out;
	long cancelled_result;
};

static enum blitz_poll read_inner(void *arg, struct blitz_cx *cx)
{
	struct quiet_read *q = arg;

	return blitz_read_poll(&q->x, q->fd, q->buf, sizeof(q->buf), cx);
}

static enum blitz_poll quiet_read_poll(void *arg, struct blitz_cx *cx)
{
	struct quiet_read *q = arg;

	BLITZ_CO_BEGIN(&q->co);
	blitz_timeout_init(&q->limit, 50 * 1000000ull);
	BLITZ_AWAIT(&q->co, blitz_timeout_poll(&q->limit, read_inner, q, cx));
	q->timed_out = q->limit.timed_out;
	/* The read is still pending: cancel it and collect its completion. */
	blitz_net_cancel(&q->x);
	BLITZ_AWAIT(&q->co, read_inner(q, cx));
	q->cancelled_result = q->x.result;
	BLITZ_CO_END(&q->co);
}
static const struct blitz_task_vtable quiet_read_vt = BLITZ_TASK_VTABLE(quiet_read_poll, NULL);

START_TEST(read_timeout)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct quiet_read q = { 0 };
	int sv[2];

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	q.fd = sv[0];		/* the peer never writes */
	ck_assert_int_eq(blitz_block_on(rt, &quiet_read_vt, &q, sizeof(q)), 0);
	ck_assert_int_eq(q.timed_out, 1);
	ck_assert_int_eq(q.cancelled_result, -ECANCELED);
	close(sv[0]);
	close(sv[1]);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * A reader that reads a TCP socket until end of file: each piece the peer
 * sends is read short, so on epoll the next read waits for the edge without
 * trying (backends/readiness.c, perform); the last piece comes with the
 * peer's shutdown, after which a short read is followed by end of file and
 * no new edge: the read must still see it (readiness_ended).
 */
struct drain_reader {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	_Atomic long got;		/* bytes read so far */
	long last;			/* the final read's result: 0 at end of file */
	char buf[4096];
};

static enum blitz_poll drain_reader_poll(void *arg, struct blitz_cx *cx)
{
	struct drain_reader *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	for (;;) {
		BLITZ_AWAIT(&r->co, blitz_read_poll(&r->x, r->fd, r->buf, sizeof(r->buf), cx));
		if (r->x.result <= 0)
			break;
		atomic_fetch_add(&r->got, (long)r->x.result);
	}
	r->last = r->x.result;
	BLITZ_CO_END(&r->co);
}
static const struct blitz_task_vtable drain_reader_vt = BLITZ_TASK_VTABLE(drain_reader_poll, NULL);

START_TEST(short_reads_then_eof)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct drain_reader r0 = { 0 }, *r;
	struct blitz_addr a;
	struct blitz_task *t;
	int lfd, cfd, sfd;

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	lfd = blitz_listen(&a, 8);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(blitz_addr_local(lfd, &a), 0);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&a.ss, a.len), 0);
	do {
		sfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	} while (sfd < 0 && (errno == EAGAIN || errno == EINTR) && usleep(1000) == 0);
	ck_assert_int_ge(sfd, 0);
	r0.fd = sfd;
	t = blitz_spawn(rt, &drain_reader_vt, &r0, sizeof(r0));
	r = blitz_task_state(t);
	/* Five pieces, each sent once the one before has been read. */
	for (long i = 1; i <= 5; i++) {
		ck_assert_int_eq(send(cfd, "abcdefgh", 8, MSG_NOSIGNAL), 8);
		while (atomic_load(&r->got) < 8 * i)
			usleep(100);
	}
	ck_assert_int_eq(send(cfd, "tail", 4, MSG_NOSIGNAL), 4);
	ck_assert_int_eq(shutdown(cfd, SHUT_WR), 0);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_int_eq(atomic_load(&r->got), 44);
	ck_assert_int_eq(r->last, 0);
	blitz_task_release(t);
	close(sfd);
	close(cfd);
	close(lfd);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* blitz_net_close with a read waiting                                     */

/*
 * A task that accepts one connection (owned or not), reads the peer's
 * first message, then waits in a second read; @armed says that read was
 * submitted and is waiting (set after the poll that submitted it).
 */
struct armed_reader {
	struct blitz_co co;
	struct blitz_accept a;
	struct blitz_xfer x;
	int lfd;
	unsigned flags;
	_Atomic int fd, armed;
	long first, last;
	char buf[64];
};

static enum blitz_poll armed_read(struct armed_reader *r, struct blitz_cx *cx)
{
	if (blitz_read_poll(&r->x, atomic_load(&r->fd), r->buf, sizeof(r->buf), cx) == BLITZ_READY)
		return BLITZ_READY;
	atomic_store(&r->armed, 1);
	return BLITZ_PENDING;
}

static enum blitz_poll armed_reader_poll(void *arg, struct blitz_cx *cx)
{
	struct armed_reader *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	r->a.flags = r->flags;
	BLITZ_AWAIT(&r->co, blitz_accept_poll(&r->a, r->lfd, cx));
	ck_assert_int_ge(r->a.result, 0);
	BLITZ_AWAIT(&r->co, blitz_read_poll(&r->x, r->a.result, r->buf, sizeof(r->buf), cx));
	r->first = r->x.result;
	atomic_store(&r->fd, r->a.result);
	BLITZ_AWAIT(&r->co, armed_read(r, cx));
	r->last = r->x.result;
	BLITZ_CO_END(&r->co);
}
static const struct blitz_task_vtable armed_reader_vt = BLITZ_TASK_VTABLE(armed_reader_poll, NULL);

/* Loop index @i: the backend (i % 3) and whether the socket is owned (i / 3). */
struct close_case {
	struct blitz_runtime *rt;
	struct blitz_task *t;
	struct armed_reader *r;
	int lfd, cfd;
};

/* close_case_start - on @k->rt, a connection whose server side waits in its second read. */
static void close_case_start(struct close_case *k, int i)
{
	struct timeval guard = { .tv_sec = (time_t)(20 * test_timeout_scale()) };
	struct armed_reader r0 = { .flags = i / 3 ? BLITZ_ACCEPT_OWNED : 0, .fd = -1 };
	struct blitz_addr a;

	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	k->lfd = blitz_listen(&a, 8);
	ck_assert_int_ge(k->lfd, 0);
	ck_assert_int_eq(blitz_addr_local(k->lfd, &a), 0);
	r0.lfd = k->lfd;
	k->t = blitz_spawn(k->rt, &armed_reader_vt, &r0, sizeof(r0));
	ck_assert_ptr_nonnull(k->t);
	k->r = blitz_task_state(k->t);
	k->cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(connect(k->cfd, (struct sockaddr *)&a.ss, a.len), 0);
	setsockopt(k->cfd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
	ck_assert_int_eq(send(k->cfd, "hello", 5, MSG_NOSIGNAL), 5);
	while (!atomic_load(&k->r->armed))
		usleep(100);
	ck_assert_int_eq(k->r->first, 5);
}

/* close_case_peer_read - the client's read: 0 once the connection is closed. */
static ssize_t close_case_peer_read(struct close_case *k)
{
	char c;
	ssize_t n;

	do
		n = recv(k->cfd, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	return n;
}

static void close_case_end(struct close_case *k)
{
	blitz_task_release(k->t);
	close(k->cfd);
	close(k->lfd);
	blitz_runtime_free(k->rt);
}

/* The waiting read ends with -ECANCELED, and its task ends (nothing lost). */
START_TEST(net_close_ends_the_waiting_read)
{
	struct close_case k;

	k.rt = test_runtime_on(_i % 3);
	NEED_BACKEND(k.rt, _i % 3);
	close_case_start(&k, _i);
	ck_assert_int_eq(blitz_net_close(k.rt, atomic_load(&k.r->fd)), 0);
	ck_assert_int_eq(blitz_join(k.t), 0);
	ck_assert_int_eq(k.r->last, -ECANCELED);
	close_case_end(&k);
}
END_TEST

/* The peer sees the end of the stream, though a read was armed on the socket. */
START_TEST(net_close_peer_sees_eof)
{
	struct close_case k;

	k.rt = test_runtime_on(_i % 3);
	NEED_BACKEND(k.rt, _i % 3);
	close_case_start(&k, _i);
	ck_assert_int_eq(blitz_net_close(k.rt, atomic_load(&k.r->fd)), 0);
	ck_assert_int_eq(close_case_peer_read(&k), 0);
	ck_assert_int_eq(blitz_join(k.t), 0);
	close_case_end(&k);
}
END_TEST

/*
 * No descriptor is left open: once the peer saw the end (the last
 * reference to the socket is gone, wherever the close ran), the process
 * has one descriptor fewer than while the read waited.
 */
START_TEST(net_close_leaks_no_descriptor)
{
	struct close_case k;
	int before;

	k.rt = test_runtime_on(_i % 3);
	NEED_BACKEND(k.rt, _i % 3);
	close_case_start(&k, _i);
	before = test_open_fds();
	ck_assert_int_eq(blitz_net_close(k.rt, atomic_load(&k.r->fd)), 0);
	ck_assert_int_eq(close_case_peer_read(&k), 0);
	ck_assert_int_eq(blitz_join(k.t), 0);
	ck_assert_int_eq(test_open_fds(), before - 1);
	close_case_end(&k);
}
END_TEST

/*
 * An owned socket's number, closed with blitz_net_close, taken by a plain
 * socket: the new socket's reads are still woken (epoll watches an owned
 * descriptor from its first wait to its close and skips the ADD between:
 * the close must forget it).
 */
START_TEST(owned_number_reused_by_a_plain_socket)
{
	struct close_case k;
	struct armed_reader r1 = { .fd = -1 }, *r;
	struct blitz_addr a;
	struct blitz_task *t;
	int owned_fd, cfd;

	k.rt = test_runtime_on(_i);
	NEED_BACKEND(k.rt, _i);
	close_case_start(&k, _i + TEST_BACKENDS);	/* owned, read once, waiting */
	owned_fd = atomic_load(&k.r->fd);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);	/* before the number is free */
	ck_assert_int_ge(cfd, 0);
	ck_assert_int_eq(blitz_net_close(k.rt, owned_fd), 0);
	ck_assert_int_eq(blitz_join(k.t), 0);
	r1.lfd = k.lfd;
	t = blitz_spawn(k.rt, &armed_reader_vt, &r1, sizeof(r1));
	ck_assert_ptr_nonnull(t);
	r = blitz_task_state(t);
	ck_assert_int_eq(blitz_addr_local(k.lfd, &a), 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&a.ss, a.len), 0);
	ck_assert_int_eq(send(cfd, "hello", 5, MSG_NOSIGNAL), 5);
	while (!atomic_load(&r->armed))
		usleep(100);
	ck_assert_int_eq(r->first, 5);
	ck_assert_int_eq(atomic_load(&r->fd), owned_fd);	/* the same number */
	/* The second read waits (epoll: after a short read, for the edge): wake it. */
	ck_assert_int_eq(send(cfd, "world", 5, MSG_NOSIGNAL), 5);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_int_eq(r->last, 5);
	close(owned_fd);
	blitz_task_release(t);
	close(cfd);
	close_case_end(&k);
}
END_TEST

/*
 * An owned socket read with a buffer smaller than what arrived: each read
 * takes part of a received buffer, in order, byte-exact, then the end of
 * the stream after the peer's shutdown.
 */
struct small_reader {
	struct blitz_co co;
	struct blitz_accept a;
	struct blitz_xfer x;
	int lfd, fd;
	size_t got;
	long last;
	int bad;
	unsigned char buf[100];
};

static enum blitz_poll small_reader_poll(void *arg, struct blitz_cx *cx)
{
	struct small_reader *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	r->a.flags = BLITZ_ACCEPT_OWNED;
	BLITZ_AWAIT(&r->co, blitz_accept_poll(&r->a, r->lfd, cx));
	r->fd = r->a.result;
	ck_assert_int_ge(r->fd, 0);
	for (;;) {
		BLITZ_AWAIT(&r->co, blitz_read_poll(&r->x, r->fd, r->buf, sizeof(r->buf), cx));
		if (r->x.result <= 0)
			break;
		for (long i = 0; i < r->x.result; i++)
			r->bad |= r->buf[i] != pattern_at(9, r->got + (size_t)i);
		r->got += (size_t)r->x.result;
	}
	r->last = r->x.result;
	blitz_net_close(NULL, r->fd);
	BLITZ_CO_END(&r->co);
}
static const struct blitz_task_vtable small_reader_vt = BLITZ_TASK_VTABLE(small_reader_poll, NULL);

START_TEST(owned_reads_smaller_than_received)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct small_reader r0 = { 0 }, *r;
	struct blitz_addr a;
	struct blitz_task *t;
	unsigned char msg[50000];
	int cfd;

	NEED_BACKEND(rt, _i);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = pattern_at(9, i);
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	r0.lfd = blitz_listen(&a, 8);
	ck_assert_int_ge(r0.lfd, 0);
	ck_assert_int_eq(blitz_addr_local(r0.lfd, &a), 0);
	t = blitz_spawn(rt, &small_reader_vt, &r0, sizeof(r0));
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&a.ss, a.len), 0);
	ck_assert_int_eq(send(cfd, msg, sizeof(msg), MSG_NOSIGNAL), (ssize_t)sizeof(msg));
	ck_assert_int_eq(shutdown(cfd, SHUT_WR), 0);
	ck_assert_int_eq(blitz_join(t), 0);
	r = blitz_task_state(t);
	ck_assert_int_eq(r->bad, 0);
	ck_assert_uint_eq(r->got, sizeof(msg));
	ck_assert_int_eq(r->last, 0);
	blitz_task_release(t);
	close(cfd);
	close(r0.lfd);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* UDP and Unix sockets                                                   */

struct udp_ping {
	struct blitz_co co;
	struct blitz_dgram d;
	struct blitz_addr to;
	int fd_a, fd_b;
	char out[32], in[32];
	long sent, got;
};

static enum blitz_poll udp_ping_poll(void *arg, struct blitz_cx *cx)
{
	struct udp_ping *u = arg;

	BLITZ_CO_BEGIN(&u->co);
	BLITZ_AWAIT(&u->co, blitz_send_to_poll(&u->d, u->fd_a, "datagram", 8, &u->to, cx));
	u->sent = u->d.result;
	BLITZ_AWAIT(&u->co, blitz_recv_from_poll(&u->d, u->fd_b, u->in, sizeof(u->in), cx));
	u->got = u->d.result;
	BLITZ_CO_END(&u->co);
}
static const struct blitz_task_vtable udp_ping_vt = BLITZ_TASK_VTABLE(udp_ping_poll, NULL);

START_TEST(udp_send_to_recv_from)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct blitz_addr a, from;
	struct udp_ping u = { 0 };

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	u.fd_a = blitz_udp_bind(&a);
	u.fd_b = blitz_udp_bind(&a);
	ck_assert_int_ge(u.fd_a, 0);
	ck_assert_int_eq(blitz_addr_local(u.fd_b, &u.to), 0);
	ck_assert_int_eq(blitz_block_on(rt, &udp_ping_vt, &u, sizeof(u)), 0);
	ck_assert_int_eq(u.sent, 8);
	ck_assert_int_eq(u.got, 8);
	ck_assert(memcmp(u.in, "datagram", 8) == 0);
	/* recv_from reports the sender. */
	ck_assert_int_eq(blitz_addr_local(u.fd_a, &from), 0);
	ck_assert_int_eq(((struct sockaddr_in *)&u.d.peer.ss)->sin_port,
			 ((struct sockaddr_in *)&from.ss)->sin_port);
	close(u.fd_a);
	close(u.fd_b);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(unix_stream_echo)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct server srv = { .fd = -1 };
	struct blitz_addr a;
	struct acceptor ac = { .srv = &srv };
	struct blitz_task *acceptor;
	_Atomic long ok = 0;
	_Atomic uint64_t digest = 0;
	char path[64], spec[80];

	NEED_BACKEND(rt, _i);
	make_payload();
	fill_for(3, 100000);
	snprintf(path, sizeof(path), "/tmp/blitz-test-%d.sock", getpid());
	snprintf(spec, sizeof(spec), "unix:%s", path);
	unlink(path);
	ck_assert_int_eq(blitz_addr_parse(spec, &a, NULL, 0), 0);
	srv.fd = blitz_listen(&a, 16);
	ck_assert_int_ge(srv.fd, 0);
	acceptor = blitz_spawn(rt, &acceptor_vt, &ac, sizeof(ac));
	for (int k = 0; k < 4; k++) {
		struct client c = { .to = a, .ok = &ok, .digest = &digest, .id = 3, .len = 100000 };

		ck_assert_int_eq(blitz_spawn_detached(rt, &client_vt, &c, sizeof(c)), 0);
	}
	for (int t = 0; t < 20000 && atomic_load(&ok) < 4; t++)
		usleep(1000);
	ck_assert_int_eq(atomic_load(&ok), 4);
	stop_server(&srv, acceptor);
	unlink(path);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(address_parsing)
{
	struct blitz_addr a;
	char err[128], buf[80];

	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:8080", &a, err, sizeof(err)), 0);
	ck_assert_str_eq(blitz_addr_format(&a, buf, sizeof(buf)), "127.0.0.1:8080");
	ck_assert_int_eq(blitz_addr_parse("[::1]:443", &a, err, sizeof(err)), 0);
	ck_assert_str_eq(blitz_addr_format(&a, buf, sizeof(buf)), "[::1]:443");
	ck_assert_int_eq(blitz_addr_parse("localhost:1", &a, err, sizeof(err)), 0);
	ck_assert_str_eq(blitz_addr_format(&a, buf, sizeof(buf)), "127.0.0.1:1");
	ck_assert_int_eq(blitz_addr_parse(":9", &a, err, sizeof(err)), 0);
	ck_assert_str_eq(blitz_addr_format(&a, buf, sizeof(buf)), "0.0.0.0:9");
	ck_assert_int_eq(blitz_addr_parse("unix:/tmp/x.sock", &a, err, sizeof(err)), 0);
	ck_assert_str_eq(blitz_addr_format(&a, buf, sizeof(buf)), "unix:/tmp/x.sock");

	static const struct { const char *in, *says; } bad[] = {
		{ "", "empty" }, { "1.2.3.4", "host:port" }, { "1.2.3.4:99999", "0 to 65535" },
		{ "1.2.3.4:x", "0 to 65535" }, { "::1:80", "brackets" }, { "[::1]80", "':port'" },
		{ "[::1", "']'" }, { "[zz]:1", "IPv6" }, { "example.org:80", "not resolved" },
		{ "unix:", "no path" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(blitz_addr_parse(bad[i].in, &a, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].says), "'%s': message '%s' lacks '%s'",
			      bad[i].in, err, bad[i].says);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* An accept that completes while its task goes away                       */

struct lone_accept {
	struct blitz_co co;
	struct blitz_accept a;
	int lfd;
	int fd;			/* the connection, once handed over */
};

static void lone_accept_drop(void *arg)
{
	struct lone_accept *s = arg;

	blitz_io_cancel(&s->a.op);
	if (s->fd >= 0)
		close(s->fd);
}

/* Accept one connection, then hold it until dropped (never polled again). */
static enum blitz_poll lone_accept_poll(void *arg, struct blitz_cx *cx)
{
	struct lone_accept *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, blitz_accept_poll(&s->a, s->lfd, cx));
	s->fd = s->a.result;
	BLITZ_AWAIT(&s->co, BLITZ_PENDING);
	BLITZ_CO_END(&s->co);
}

static const struct blitz_task_vtable lone_accept_vt =
	BLITZ_TASK_VTABLE(lone_accept_poll, lone_accept_drop);

/*
 * The runtime freed right after a client connects: the accept completes
 * before the free (the task holds the connection, its drop closes it),
 * during it (the shutdown collects the completion, and the drop's cancel
 * must close the descriptor nobody was handed), or never (the listener's
 * close resets the queued connection).  In each case the client's
 * connection ends: a descriptor left open keeps its read waiting until the
 * guard (found by the fault suite's shutdown workload, docs/faults.md).
 */
START_TEST(accept_completed_at_shutdown_is_closed)
{
	struct timeval guard = { .tv_sec = (time_t)(20 * test_timeout_scale()) };

	for (int round = 0; round < 40; round++) {
		struct blitz_runtime *rt = test_runtime_on(_i);
		struct lone_accept la = { .fd = -1 };
		struct blitz_addr a, bound;
		char c;
		int cfd;
		ssize_t r;

		NEED_BACKEND(rt, _i);
		ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
		la.lfd = blitz_listen(&a, 16);
		ck_assert_int_ge(la.lfd, 0);
		ck_assert_int_eq(blitz_addr_local(la.lfd, &bound), 0);
		ck_assert_int_eq(blitz_spawn_detached(rt, &lone_accept_vt, &la, sizeof(la)), 0);
		usleep((useconds_t)(round % 4) * 200);	/* vary where the free lands */
		cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(cfd, 0);
		ck_assert_int_eq(connect(cfd, (struct sockaddr *)&bound.ss, bound.len), 0);
		setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
		blitz_runtime_free(rt);
		close(la.lfd);
		do
			r = recv(cfd, &c, 1, 0);
		while (r < 0 && errno == EINTR);
		ck_assert_msg(r == 0 || (r < 0 && errno == ECONNRESET),
			      "round %d: the connection stayed open (recv %zd: %s)", round, r,
			      r < 0 ? strerror(errno) : "data");
		close(cfd);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Accept loops (blitz_serve) and cancel-and-collect (blitz_xfer_cancel_poll) */

/* What the connections of a blitz_serve() loop share with the test. */
struct serve_counts {
	_Atomic long conns, bytes, ended;
};

/* A connection of the loop: echo until the end of the stream. */
struct serve_conn {
	struct blitz_co co;
	struct blitz_xfer x;
	struct serve_counts *counts;
	int fd;
	long n;
	char buf[512];
};

static enum blitz_poll serve_conn_poll(void *arg, struct blitz_cx *cx)
{
	struct serve_conn *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	atomic_fetch_add(&s->counts->conns, 1);
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_read_poll(&s->x, s->fd, s->buf, sizeof(s->buf), cx));
		if (s->x.result <= 0)
			break;
		s->n = s->x.result;
		BLITZ_AWAIT(&s->co, blitz_write_all_poll(&s->x, s->fd, s->buf, (size_t)s->n, cx));
		if (s->x.result < 0)
			break;
		atomic_fetch_add(&s->counts->bytes, s->n);
	}
	atomic_fetch_add(&s->counts->ended, 1);
	BLITZ_CO_END(&s->co);
}

static void serve_conn_drop(void *arg)
{
	blitz_net_close(NULL, ((struct serve_conn *)arg)->fd);
}
static const struct blitz_task_vtable serve_conn_vt = BLITZ_TASK_VTABLE(serve_conn_poll, serve_conn_drop);

/* serve_start - a listener on 127.0.0.1 (its address in @to) and a loop on it. */
static struct blitz_task *serve_start(struct blitz_runtime *rt, struct serve_counts *counts,
				      unsigned flags, struct blitz_cancel_token *stop,
				      int *lfd, struct blitz_addr *to)
{
	struct serve_conn proto = { .counts = counts, .fd = -1 };
	struct blitz_serve_conf conf = {
		.conn_vt = &serve_conn_vt, .conn_state = &proto, .conn_size = sizeof(proto),
		.fd_offset = offsetof(struct serve_conn, fd), .accept_flags = flags, .stop = stop,
	};
	struct blitz_addr a;
	struct blitz_task *t;

	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	*lfd = blitz_listen(&a, 4096);
	ck_assert_int_ge(*lfd, 0);
	ck_assert_int_eq(blitz_addr_local(*lfd, to), 0);
	t = blitz_serve(rt, *lfd, &conf);
	ck_assert_ptr_nonnull(t);
	return t;
}

/* dial - a blocking client socket connected to @to. */
static int dial(const struct blitz_addr *to)
{
	int fd = socket(to->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (const struct sockaddr *)&to->ss, to->len), 0);
	return fd;
}

/* round_trip - @len bytes to the server on @fd, the same bytes back. */
static void round_trip(int fd, size_t len, unsigned seed)
{
	char out[512], in[512];
	size_t got = 0;

	ck_assert_uint_le(len, sizeof(out));
	for (size_t i = 0; i < len; i++)
		out[i] = (char)(i * 7 + seed);
	ck_assert_int_eq(send(fd, out, len, MSG_NOSIGNAL), (ssize_t)len);
	while (got < len) {
		ssize_t r = recv(fd, in + got, len - got, 0);

		ck_assert_int_gt(r, 0);
		got += (size_t)r;
	}
	ck_assert_int_eq(memcmp(in, out, len), 0);
}

/* wait_for - until *@v reaches @n (a hang guard, scaled; not a timing check). */
static void wait_for(_Atomic long *v, long n)
{
	for (int t = 0; t < 30000 * test_timeout_scale() && atomic_load(v) < n; t++)
		usleep(1000);
	ck_assert_int_eq(atomic_load(v), n);
}

/*
 * wait_fds - until this process has @n descriptors open: a socket closed
 * through blitz on io_uring may be held a moment longer by another
 * worker's ring (a hang guard, scaled).
 */
static void wait_fds(int n)
{
	for (int t = 0; t < 10000 * test_timeout_scale() && test_open_fds() != n; t++)
		usleep(1000);
	ck_assert_int_eq(test_open_fds(), n);
}

/*
 * A loop serves every connection, each in a task of its own, until its
 * token is cancelled; then it ends with result 0, nothing of it in flight
 * (the listener is closed with close(2) after the join) and no descriptor
 * left.  Loop index: the backend (i % 3), owned sockets (i / 3).
 */
START_TEST(serve_until_the_token_is_cancelled)
{
	enum { CONNS = 50 };
	struct blitz_runtime *rt = test_runtime_on(_i % TEST_BACKENDS);
	unsigned flags = _i >= TEST_BACKENDS ? BLITZ_ACCEPT_OWNED : 0;
	struct serve_counts counts = { 0 };
	struct blitz_cancel_token stop;
	struct blitz_serve_stats st;
	struct blitz_addr to;
	struct blitz_task *srv;
	int lfd, fds[CONNS], before;

	NEED_BACKEND(rt, _i % TEST_BACKENDS);
	blitz_cancel_token_init(&stop);
	srv = serve_start(rt, &counts, flags, &stop, &lfd, &to);
	before = test_open_fds();
	for (int k = 0; k < CONNS; k++)
		fds[k] = dial(&to);
	for (int k = 0; k < CONNS; k++)
		round_trip(fds[k], 100, (unsigned)k);
	for (int k = 0; k < CONNS; k++)
		close(fds[k]);
	wait_for(&counts.ended, CONNS);
	ck_assert_int_eq(atomic_load(&counts.bytes), CONNS * 100);
	blitz_serve_stats(srv, &st);
	ck_assert(!st.done);
	ck_assert_uint_eq(st.accepted, CONNS);
	blitz_cancel_token_cancel(&stop);
	ck_assert_int_eq(blitz_join(srv), 0);
	blitz_serve_stats(srv, &st);
	ck_assert(st.done);
	ck_assert_int_eq(st.result, 0);
	ck_assert_uint_eq(st.accepted, CONNS);
	ck_assert_uint_eq(st.dropped + st.emfile, 0);
	blitz_task_release(srv);
	wait_fds(before);
	close(lfd);			/* nothing of the loop is in flight on it */
	blitz_runtime_free(rt);
	blitz_cancel_token_destroy(&stop);
}
END_TEST

/* blitz_net_close() of the listener ends the loop: result -ECANCELED. */
START_TEST(serve_ends_when_the_listener_is_closed)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct serve_counts counts = { 0 };
	struct blitz_serve_stats st;
	struct blitz_addr to;
	struct blitz_task *srv;
	int lfd, fd;

	NEED_BACKEND(rt, _i);
	srv = serve_start(rt, &counts, 0, NULL, &lfd, &to);
	fd = dial(&to);
	round_trip(fd, 10, 1);		/* the accept after this one is in flight */
	close(fd);
	ck_assert_int_eq(blitz_net_close(rt, lfd), 0);
	ck_assert_int_eq(blitz_join(srv), 0);
	blitz_serve_stats(srv, &st);
	ck_assert(st.done);
	ck_assert_msg(st.result == -ECANCELED || st.result == -EBADF || st.result == -EINVAL,
		      "result %d", st.result);
	ck_assert_uint_eq(st.accepted, 1);
	blitz_task_release(srv);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * A cancel of the loop's task ends it too: the join says -ECANCELED, no
 * descriptor is left, and the listener, still the caller's, works.
 */
START_TEST(serve_cancelled)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct serve_counts counts = { 0 };
	struct blitz_serve_stats st;
	struct blitz_addr to;
	struct blitz_task *srv;
	int lfd, fd, afd, before;

	NEED_BACKEND(rt, _i);
	srv = serve_start(rt, &counts, 0, NULL, &lfd, &to);
	before = test_open_fds();
	fd = dial(&to);
	round_trip(fd, 10, 2);
	close(fd);
	wait_for(&counts.ended, 1);
	blitz_task_cancel(srv);
	ck_assert_int_eq(blitz_join(srv), -ECANCELED);
	blitz_serve_stats(srv, &st);
	ck_assert(!st.done);
	ck_assert_uint_eq(st.accepted, 1);
	blitz_task_release(srv);
	wait_fds(before);
	/*
	 * The cancelled accept has surely ended once the runtime is freed;
	 * the next connection then waits in the queue for a plain accept.
	 */
	blitz_runtime_free(rt);
	fd = dial(&to);
	do
		afd = accept(lfd, NULL, NULL);
	while (afd < 0 && (errno == EAGAIN || errno == EINTR) && usleep(1000) == 0);
	ck_assert_int_ge(afd, 0);
	close(afd);
	close(fd);
	close(lfd);
	ck_assert_int_eq(atomic_load(&counts.conns), 1);
}
END_TEST

/* The runtime's graceful shutdown stops a loop with no token of its own. */
START_TEST(serve_stops_at_runtime_shutdown)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct serve_counts counts = { 0 };
	struct blitz_addr to;
	struct blitz_task *srv;
	int lfd;

	NEED_BACKEND(rt, _i);
	srv = serve_start(rt, &counts, 0, NULL, &lfd, &to);
	ck_assert_int_eq(blitz_runtime_drain(rt, 10 * BLITZ_NSEC_PER_SEC * (uint64_t)test_timeout_scale()), 0);
	ck_assert(blitz_task_done(srv));
	ck_assert(!blitz_task_cancelled(srv));
	blitz_task_release(srv);
	blitz_runtime_free(rt);
	close(lfd);
}
END_TEST

/*
 * A connection reset before it is accepted does not stop the loop: the
 * next one is served.
 */
START_TEST(serve_survives_a_reset_before_accept)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct serve_counts counts = { 0 };
	struct serve_conn proto = { .counts = &counts, .fd = -1 };
	struct blitz_serve_conf conf = {
		.conn_vt = &serve_conn_vt, .conn_state = &proto, .conn_size = sizeof(proto),
		.fd_offset = offsetof(struct serve_conn, fd),
	};
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct blitz_serve_stats st;
	struct blitz_addr a;
	struct blitz_task *srv;
	int lfd, reset, fd;

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	lfd = blitz_listen(&a, 16);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(blitz_addr_local(lfd, &a), 0);
	/* Queued, then reset, all before the loop exists. */
	reset = dial(&a);
	setsockopt(reset, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(reset);
	fd = dial(&a);
	srv = blitz_serve(rt, lfd, &conf);
	ck_assert_ptr_nonnull(srv);
	round_trip(fd, 50, 3);
	close(fd);
	blitz_serve_stats(srv, &st);
	ck_assert(!st.done);
	ck_assert_uint_ge(st.accepted, 1);
	ck_assert_int_eq(blitz_net_close(rt, lfd), 0);
	ck_assert_int_eq(blitz_join(srv), 0);
	blitz_task_release(srv);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * Out of descriptors, the loop backs off and keeps accepting: a child
 * opens 60 connections; once the loop has counted EMFILE, the child
 * closes them, each connection's task ends and frees its descriptor, and
 * every connection is served in the end (as accept_survives_descriptor_exhaustion).
 */
START_TEST(serve_survives_descriptor_exhaustion)
{
	enum { CONNS = 60 };
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct serve_counts counts = { 0 };
	struct blitz_serve_stats st;
	struct blitz_addr to;
	struct blitz_task *srv;
	struct rlimit rl;
	int lfd, status, go[2];
	pid_t child;

	NEED_BACKEND(rt, _i);
	srv = serve_start(rt, &counts, 0, NULL, &lfd, &to);
	ck_assert_int_eq(pipe(go), 0);
	leave_room_for(20, &rl);
	child = fork();
	if (child == 0) {
		int fds[CONNS];
		char c;

		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		close(go[1]);
		for (int k = 0; k < CONNS; k++) {
			fds[k] = socket(AF_INET, SOCK_STREAM, 0);
			if (connect(fds[k], (struct sockaddr *)&to.ss, to.len) < 0)
				_exit(1);
		}
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		for (int k = 0; k < CONNS; k++)
			close(fds[k]);
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	close(go[0]);
	for (int t = 0; t < 30000 * test_timeout_scale(); t++) {
		blitz_serve_stats(srv, &st);
		if (st.emfile)
			break;
		usleep(1000);
	}
	ck_assert_uint_gt(st.emfile, 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	wait_for(&counts.ended, CONNS);
	waitpid(child, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	blitz_serve_stats(srv, &st);
	ck_assert(!st.done);
	ck_assert_uint_eq(st.accepted, CONNS);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_int_eq(blitz_runtime_drain(rt, 10 * BLITZ_NSEC_PER_SEC * (uint64_t)test_timeout_scale()), 0);
	blitz_task_release(srv);
	blitz_runtime_free(rt);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	close(lfd);
}
END_TEST

/* What blitz_serve() refuses, and why. */
START_TEST(serve_bad_input)
{
	struct blitz_runtime *rt = test_runtime(1);
	struct serve_conn proto = { .fd = -1 };
	struct blitz_serve_conf good = {
		.conn_vt = &serve_conn_vt, .conn_state = &proto, .conn_size = sizeof(proto),
		.fd_offset = offsetof(struct serve_conn, fd),
	};
	struct blitz_serve_conf c;
	static const struct blitz_task_vtable no_poll = BLITZ_TASK_VTABLE(NULL, NULL);

	errno = 0;
	ck_assert_ptr_null(blitz_serve(rt, 3, NULL));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.conn_vt = NULL;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.conn_vt = &no_poll;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.conn_state = NULL;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.fd_offset = sizeof(proto) - 2;	/* no room for an int */
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.fd_offset = SIZE_MAX;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(blitz_serve(rt, -1, &good));
	ck_assert_int_eq(errno, EBADF);
	/* No runtime: NULL from a thread that is not one of its workers. */
	ck_assert_ptr_null(blitz_serve(NULL, 3, &good));
	ck_assert_int_eq(errno, EINVAL);
	blitz_runtime_free(rt);
}
END_TEST

/* A read under a limit, its cancel-and-collect, then the same xfer again. */
struct quiet_reuse {
	struct blitz_co co;
	struct blitz_timeout limit;
	struct blitz_xfer x;
	int fd, peer;
	size_t want;			/* 0: blitz_read_poll, else read_exact of it */
	long cancelled, again;
	char buf[16];
};

static enum blitz_poll quiet_reuse_inner(void *arg, struct blitz_cx *cx)
{
	struct quiet_reuse *q = arg;

	if (q->want)
		return blitz_read_exact_poll(&q->x, q->fd, q->buf, q->want, cx);
	return blitz_read_poll(&q->x, q->fd, q->buf, sizeof(q->buf), cx);
}

static enum blitz_poll quiet_reuse_poll(void *arg, struct blitz_cx *cx)
{
	struct quiet_reuse *q = arg;

	BLITZ_CO_BEGIN(&q->co);
	blitz_timeout_init(&q->limit, 20 * BLITZ_NSEC_PER_MSEC);
	BLITZ_AWAIT(&q->co, blitz_timeout_poll(&q->limit, quiet_reuse_inner, q, cx));
	ck_assert_int_eq(q->limit.timed_out, 1);
	BLITZ_AWAIT(&q->co, blitz_xfer_cancel_poll(&q->x, cx));
	q->cancelled = q->x.result;
	/* Idle again: a second cancel has nothing to wait for. */
	BLITZ_AWAIT(&q->co, blitz_xfer_cancel_poll(&q->x, cx));
	ck_assert_int_eq(q->x.result, -ECANCELED);
	/* And the next read is a new one, not the cancelled one's result. */
	ck_assert_int_eq(write(q->peer, "0123456789", 10), 10);
	BLITZ_AWAIT(&q->co, blitz_read_exact_poll(&q->x, q->fd, q->buf, 10, cx));
	q->again = q->x.result;
	BLITZ_CO_END(&q->co);
}

/*
 * blitz_xfer_cancel_poll after a time limit: the read ends with
 * -ECANCELED, the xfer reads again as if new.  Loop index: the backend
 * (i % 3), a plain read (i / 3 == 0) or a read_exact that had received
 * part of what it waits for (1).
 */
START_TEST(xfer_cancel_after_a_timeout)
{
	struct blitz_runtime *rt = test_runtime_on(_i % TEST_BACKENDS);
	struct quiet_reuse q = { 0 };
	int sv[2];

	NEED_BACKEND(rt, _i % TEST_BACKENDS);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	q.fd = sv[0];
	q.peer = sv[1];
	if (_i >= TEST_BACKENDS) {
		q.want = 8;
		ck_assert_int_eq(write(sv[1], "abc", 3), 3);	/* 3 of the 8 */
	}
	test_run_poll(rt, quiet_reuse_poll, &q);
	ck_assert_int_eq(q.cancelled, -ECANCELED);
	ck_assert_int_eq(q.again, 10);
	ck_assert_int_eq(memcmp(q.buf, "0123456789", 10), 0);
	close(sv[0]);
	close(sv[1]);
	blitz_runtime_free(rt);
}
END_TEST

/* Data that arrives before the cancel is collected is never lost. */
struct racing_read {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd, peer;
	long cancelled, later;
	char buf[8], rest[8];
};

static enum blitz_poll racing_read_poll(void *arg, struct blitz_cx *cx)
{
	struct racing_read *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	if (blitz_read_poll(&r->x, r->fd, r->buf, 4, cx) == BLITZ_READY)
		ck_abort_msg("read completed with nothing sent");
	/* The read is in flight (or about to be submitted); data arrives now. */
	ck_assert_int_eq(write(r->peer, "wxyz", 4), 4);
	BLITZ_AWAIT(&r->co, blitz_xfer_cancel_poll(&r->x, cx));
	r->cancelled = r->x.result;
	if (r->cancelled == 4)
		memcpy(r->rest, r->buf, 4);	/* the read won: the bytes are here */
	else
		BLITZ_AWAIT(&r->co, blitz_read_exact_poll(&r->x, r->fd, r->rest, 4, cx));
	r->later = r->x.result;
	BLITZ_CO_END(&r->co);
}

START_TEST(xfer_cancel_loses_no_data)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct racing_read r = { 0 };
	int sv[2];

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	r.fd = sv[0];
	r.peer = sv[1];
	test_run_poll(rt, racing_read_poll, &r);
	ck_assert_msg(r.cancelled == -ECANCELED || r.cancelled == 4, "cancelled: %ld", r.cancelled);
	ck_assert_int_eq(r.later, 4);
	ck_assert_int_eq(memcmp(r.rest, "wxyz", 4), 0);
	close(sv[0]);
	close(sv[1]);
	blitz_runtime_free(rt);
}
END_TEST

/* A write the peer never reads, cancelled; an idle xfer's cancel is at once. */
struct stuck_write {
	struct blitz_co co;
	struct blitz_timeout limit;
	struct blitz_xfer x;
	int fd;
	long idle, cancelled;
	size_t len;
	char *buf;
};

static enum blitz_poll stuck_write_inner(void *arg, struct blitz_cx *cx)
{
	struct stuck_write *w = arg;

	return blitz_write_all_poll(&w->x, w->fd, w->buf, w->len, cx);
}

static enum blitz_poll stuck_write_poll(void *arg, struct blitz_cx *cx)
{
	struct stuck_write *w = arg;

	BLITZ_CO_BEGIN(&w->co);
	ck_assert_int_eq(blitz_xfer_cancel_poll(&w->x, cx), BLITZ_READY);	/* never started */
	w->idle = w->x.result;
	blitz_timeout_init(&w->limit, 20 * BLITZ_NSEC_PER_MSEC);
	BLITZ_AWAIT(&w->co, blitz_timeout_poll(&w->limit, stuck_write_inner, w, cx));
	ck_assert_int_eq(w->limit.timed_out, 1);
	BLITZ_AWAIT(&w->co, blitz_xfer_cancel_poll(&w->x, cx));
	w->cancelled = w->x.result;
	BLITZ_CO_END(&w->co);
}

START_TEST(xfer_cancel_of_a_stuck_write)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct stuck_write w = { .len = 8u << 20 };
	int sv[2];

	NEED_BACKEND(rt, _i);
	w.buf = calloc(1, w.len);
	ck_assert_ptr_nonnull(w.buf);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	w.fd = sv[0];			/* sv[1] never reads: the buffers fill up */
	test_run_poll(rt, stuck_write_poll, &w);
	ck_assert_int_eq(w.idle, -ECANCELED);
	ck_assert_msg(w.cancelled == -ECANCELED || w.cancelled > 0, "cancelled: %ld", w.cancelled);
	close(sv[0]);
	close(sv[1]);
	free(w.buf);
	blitz_runtime_free(rt);
}
END_TEST

static Suite *net_suite(void)
{
	Suite *s = suite_create("net");
	TCase *tc = TCASE("echo", 300);

	signal(SIGPIPE, SIG_IGN);
	tcase_add_loop_test(tc, echo_1000_connections, 0, 3);
	tcase_add_test(tc, echo_1000_connections_one_shared_ring);
	tcase_add_loop_test(tc, echo_1000_connections_wake_bounded, 0, 3);
	tcase_add_loop_test(tc, echo_large_payloads, 0, 3);
	tcase_add_test(tc, same_results_on_every_backend);
	tcase_add_loop_test(tc, owned_echo_1000_connections, 0, 3);
	tcase_add_loop_test(tc, owned_echo_large_payloads, 0, 3);
	tcase_add_loop_test(tc, owned_same_digest_as_plain, 0, 3);
	suite_add_tcase(s, tc);

	tc = TCASE("errors", 60);
	tcase_add_loop_test(tc, connection_refused, 0, 3);
	tcase_add_loop_test(tc, peer_reset_mid_stream, 0, 3);
	tcase_add_loop_test(tc, accept_survives_descriptor_exhaustion, 0, 3);
	tcase_add_loop_test(tc, accept_sheds_what_it_cannot_take, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, connect_timeout, 0, 3);
	tcase_add_loop_test(tc, read_timeout, 0, 3);
	tcase_add_loop_test(tc, short_reads_then_eof, 0, 3);
	tcase_add_loop_test(tc, accept_completed_at_shutdown_is_closed, 0, TEST_BACKENDS);
	suite_add_tcase(s, tc);

	tc = TCASE("close", 60);
	/* Loop index: the backend (i % 3), owned (i / 3). */
	tcase_add_loop_test(tc, net_close_ends_the_waiting_read, 0, 2 * TEST_BACKENDS);
	tcase_add_loop_test(tc, net_close_peer_sees_eof, 0, 2 * TEST_BACKENDS);
	tcase_add_loop_test(tc, net_close_leaks_no_descriptor, 0, 2 * TEST_BACKENDS);
	tcase_add_loop_test(tc, owned_reads_smaller_than_received, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, owned_number_reused_by_a_plain_socket, 0, TEST_BACKENDS);
	suite_add_tcase(s, tc);

	tc = TCASE("serve", 60);
	tcase_add_loop_test(tc, serve_until_the_token_is_cancelled, 0, 2 * TEST_BACKENDS);
	tcase_add_loop_test(tc, serve_ends_when_the_listener_is_closed, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, serve_cancelled, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, serve_stops_at_runtime_shutdown, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, serve_survives_a_reset_before_accept, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, serve_survives_descriptor_exhaustion, 0, TEST_BACKENDS);
	tcase_add_test(tc, serve_bad_input);
	tcase_add_loop_test(tc, xfer_cancel_after_a_timeout, 0, 2 * TEST_BACKENDS);
	tcase_add_loop_test(tc, xfer_cancel_loses_no_data, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, xfer_cancel_of_a_stuck_write, 0, TEST_BACKENDS);
	suite_add_tcase(s, tc);

	tc = TCASE("sockets", 60);
	tcase_add_loop_test(tc, udp_send_to_recv_from, 0, 3);
	tcase_add_loop_test(tc, unix_stream_echo, 0, 3);
	tcase_add_test(tc, address_parsing);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("net", net_suite)
