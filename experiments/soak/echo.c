// SPDX-License-Identifier: MIT
/*
 * echo.c - the soak's echo part: a server on blitz (an acceptor task and
 * one task per connection, as echo-bench's) and a client on plain threads
 * with epoll that keeps --connections open and churns them.
 *
 * Each client connection makes a random number of round trips (mean
 * --msgs-per-conn), each message of a random size whose bytes are a
 * function of (connection, message, offset), and checks every byte that
 * comes back against what it sent.  Then it closes, one of four ways by
 * its serial number: close() twice in four, an abortive close (SO_LINGER
 * 0: the server reads ECONNRESET), or shutdown(SHUT_WR) and a wait for the
 * server's own close (the server must echo everything, then close on EOF,
 * and send nothing more).  A closed slot reconnects at once until the run
 * ends; then every slot finishes its message and closes for good.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "soak.h"

#define ECHO_BUF	8192		/* the server's read buffer */
#define STALL_NS	(60 * BLITZ_NSEC_PER_SEC)	/* hang guard: no progress at all */

/* ---------------------------------------------------------------------- */
/* The server                                                             */

struct echo_conn {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	long n, bytes;
	char buf[ECHO_BUF];
};

static void server_close(int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	soak_sub(&soak.server_fds, 1);
}

static void echo_drop(void *arg)
{
	struct echo_conn *e = arg;

	blitz_net_cancel(&e->x);
	server_close(&e->fd);
	soak_task_dropped(K_ECHO, &e->co);
}

/* Read what came, write all of it back, until end of stream or an error. */
static enum blitz_poll echo_poll(void *arg, struct blitz_cx *cx)
{
	struct echo_conn *e = arg;

	BLITZ_CO_BEGIN(&e->co);
	for (;;) {
		BLITZ_AWAIT(&e->co, blitz_read_poll(&e->x, e->fd, e->buf, sizeof(e->buf), cx));
		if (e->x.result <= 0)
			break;		/* EOF, or ECONNRESET from an abortive close */
		e->n = e->x.result;
		BLITZ_AWAIT(&e->co, blitz_write_all_poll(&e->x, e->fd, e->buf, (size_t)e->n, cx));
		if (e->x.result < 0)
			break;
	}
	server_close(&e->fd);
	BLITZ_CO_END(&e->co);
}
static const struct blitz_task_vtable echo_vt = BLITZ_TASK_VTABLE(echo_poll, echo_drop);

struct acceptor {
	struct blitz_co co;
	int fd;
	struct blitz_accept a;
	struct blitz_sleep nap;
};

static void acceptor_drop(void *arg)
{
	struct acceptor *s = arg;

	blitz_net_cancel(&s->a);
	blitz_sleep_cancel(&s->nap);
	soak_task_dropped(K_ACCEPT, &s->co);
}

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Runs until cancelled; out of descriptors it says so once and retries. */
static enum blitz_poll acceptor_poll(void *arg, struct blitz_cx *cx)
{
	struct acceptor *s = arg;
	static atomic_bool said;

	BLITZ_CO_BEGIN(&s->co);
	s->a.flags = BLITZ_ACCEPT_SHED;
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_accept_poll(&s->a, s->fd, cx));
		if (s->a.result == -EMFILE || s->a.result == -ENFILE || s->a.result == -ENOMEM) {
			/* Relaxed: it only picks the one caller that prints. */
			if (!atomic_exchange_explicit(&said, true, memory_order_relaxed))
				fprintf(stderr, PROG ": accept: %s; retrying every 1 ms\n",
					strerror(-s->a.result));
			blitz_sleep_init(&s->nap, BLITZ_NSEC_PER_MSEC);
			BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
			continue;
		}
		if (s->a.result < 0)	/* ECONNABORTED and the like: next */
			continue;
		soak_add(&soak.accepted, 1);
		soak_add(&soak.server_fds, 1);
		set_nodelay(s->a.result);
		{
			struct echo_conn e = { .fd = s->a.result };

			if (soak_spawn_detached(K_ECHO, &echo_vt, &e, sizeof(e))) {
				server_close(&e.fd);
				soak_wrong("spawn of an echo task failed");
			}
		}
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable acceptor_vt = BLITZ_TASK_VTABLE(acceptor_poll, acceptor_drop);

static struct blitz_task *acceptor;
static int listen_fd = -1;

int echo_server_start(struct blitz_runtime *rt, struct blitz_addr *bound)
{
	struct blitz_addr a;
	struct acceptor ac = { 0 };
	char err[128];

	if (blitz_addr_parse("127.0.0.1:0", &a, err, sizeof(err))) {
		fprintf(stderr, PROG ": address: %s\n", err);
		return -EINVAL;
	}
	listen_fd = blitz_listen(&a, 4096);
	if (listen_fd < 0)
		return listen_fd;
	if (blitz_addr_local(listen_fd, bound))
		return -errno;
	ac.fd = listen_fd;
	acceptor = soak_spawn(K_ACCEPT, &acceptor_vt, &ac, sizeof(ac));
	return acceptor ? 0 : -errno;
}

/*
 * echo_server_stop - cancel the acceptor (its drop cancels the accept) and
 * wait for it; the echo tasks have ended by then (soak.c waits for
 * server_fds to reach 0 first).  The listener stays open: the count of
 * descriptors at rest is compared with the count before the load.
 */
void echo_server_stop(void)
{
	blitz_task_cancel(acceptor);
	blitz_join(acceptor);
	blitz_task_release(acceptor);
}

void echo_server_close(void)
{
	close(listen_fd);
}

/* ---------------------------------------------------------------------- */
/* The client                                                             */

enum phase { P_CLOSED, P_CONNECT, P_ECHO, P_DRAIN };

struct slot {
	int fd;
	enum phase phase;
	bool want_out;			/* EPOLLOUT armed */
	uint64_t serial;		/* of the connection */
	uint32_t msg, msgs_left;	/* the message in flight; those after it */
	uint64_t seed;			/* of the message in flight */
	size_t size, sent, rcvd;
	uint64_t progress_ns;		/* when it last moved */
};

struct cthread {
	pthread_t tid;
	const struct soak_opts *o;
	const struct blitz_addr *to;
	struct slot *s;
	long n;
	int ep;
	unsigned char *buf, *want;	/* max_msg bytes each */
};

static struct cthread *cthreads;
static long ncthreads;
static _Atomic uint64_t next_serial;

/* The bytes [off, off + len) of the message with @seed. */
static void payload(uint64_t seed, size_t off, unsigned char *out, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t at = off + i;
		uint64_t w = soak_hash(seed + at / 8);

		for (unsigned b = at % 8; b < 8 && i < len; b++)
			out[i++] = (unsigned char)(w >> (8 * b));
	}
}

static void cfail(struct slot *s, const char *what, int err)
{
	soak_add(&soak.client_errors, 1);
	soak_wrong("client: connection %llu, message %u (%zu of %zu bytes sent, %zu back): %s: %s",
		   (unsigned long long)s->serial, s->msg, s->sent, s->size, s->rcvd, what,
		   err ? strerror(err) : "closed by the server");
}

static int arm(struct cthread *t, struct slot *s, int op, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = s };

	s->want_out = out;
	return epoll_ctl(t->ep, op, s->fd, &ev);
}

/* Send what is left of the message; EPOLLOUT armed while some is left. */
static int push(struct cthread *t, struct slot *s)
{
	while (s->sent < s->size) {
		size_t len = s->size - s->sent;
		ssize_t r;

		payload(s->seed, s->sent, t->buf, len);
		r = send(s->fd, t->buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return s->want_out ? 0 : arm(t, s, EPOLL_CTL_MOD, true);
		if (r < 0) {
			cfail(s, "send", errno);
			return -1;
		}
		s->sent += (size_t)r;
	}
	return s->want_out ? arm(t, s, EPOLL_CTL_MOD, false) : 0;
}

/*
 * Message sizes: three in four are small (1-64 bytes, one read on the
 * server), one in four up to --max-msg (several reads and partial writes).
 */
static int start_msg(struct cthread *t, struct slot *s)
{
	uint64_t h;

	s->msg++;
	s->msgs_left--;
	s->seed = soak_hash(s->serial << 24 ^ s->msg);
	h = soak_hash(s->seed);
	s->size = (h & 3) ? 1 + (h >> 8) % 64 : 1 + (h >> 8) % (uint64_t)t->o->max_msg;
	s->sent = s->rcvd = 0;
	return push(t, s);
}

static void slot_open(struct cthread *t, struct slot *s);

/* Close the connection (how, by its serial) and open the next one. */
static void slot_close(struct cthread *t, struct slot *s, bool drain)
{
	if (drain) {
		shutdown(s->fd, SHUT_WR);
		s->phase = P_DRAIN;
		if (s->want_out)
			arm(t, s, EPOLL_CTL_MOD, false);
		return;
	}
	if (s->phase == P_ECHO && s->serial % 4 == 2) {
		struct linger l = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	if (s->phase != P_CONNECT)
		soak_add(&soak.conns_closed, 1);
	close(s->fd);
	s->fd = -1;
	s->phase = P_CLOSED;
	soak_sub(&soak.client_fds, 1);
	if (!stopping())
		slot_open(t, s);
}

/* The connection is up: the first message. */
static void slot_connected(struct cthread *t, struct slot *s)
{
	uint64_t h = soak_hash(s->serial);

	soak_add(&soak.conns_opened, 1);
	s->phase = P_ECHO;
	s->msg = 0;
	s->msgs_left = (uint32_t)(1 + h % (2 * (uint64_t)t->o->msgs_per_conn));
	if (stopping())
		slot_close(t, s, false);
	else if (start_msg(t, s) < 0)
		slot_close(t, s, false);
}

/*
 * slot_open - a new connection.  Out of local ports (EADDRNOTAVAIL, when
 * TIME_WAIT holds them all) the slot stays closed and is retried on the
 * next pass of the loop: counted, not an error.
 */
static void slot_open(struct cthread *t, struct slot *s)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	s->progress_ns = blitz_now_ns();
	if (fd < 0) {
		cfail(s, "socket", errno);
		return;
	}
	soak_add(&soak.client_fds, 1);
	s->fd = fd;
	s->serial = atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed);
	set_nodelay(fd);
	if (connect(fd, (const struct sockaddr *)&t->to->ss, t->to->len) == 0) {
		s->phase = P_CONNECT;
		if (arm(t, s, EPOLL_CTL_ADD, false) < 0)
			cfail(s, "epoll_ctl", errno);
		slot_connected(t, s);
		return;
	}
	if (errno == EINPROGRESS) {
		s->phase = P_CONNECT;
		if (arm(t, s, EPOLL_CTL_ADD, true) < 0)
			cfail(s, "epoll_ctl", errno);
		return;
	}
	if (errno == EADDRNOTAVAIL || errno == EAGAIN)
		soak_add(&soak.connect_retries, 1);
	else
		cfail(s, "connect", errno);
	close(fd);
	s->fd = -1;
	s->phase = P_CLOSED;
	soak_sub(&soak.client_fds, 1);
}

/*
 * Read the echo and check it.  One message is in flight per connection, so
 * the server can send no more than was sent.  Return: 1 message complete,
 * 0 not yet, -1 error (reported).
 */
static int pull(struct cthread *t, struct slot *s)
{
	while (s->rcvd < s->size) {
		ssize_t r = recv(s->fd, t->buf, s->size - s->rcvd, MSG_DONTWAIT);
		size_t bad = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r <= 0) {
			cfail(s, "recv", r < 0 ? errno : 0);
			return -1;
		}
		if (s->rcvd + (size_t)r > s->sent) {
			soak_add(&soak.bytes_wrong, (uint64_t)r);
			cfail(s, "more bytes back than were sent", EBADMSG);
			return -1;
		}
		payload(s->seed, s->rcvd, t->want, (size_t)r);
		for (ssize_t i = 0; i < r; i++)
			bad += t->buf[i] != t->want[i];
		soak_add(&soak.bytes_checked, (uint64_t)r);
		if (bad) {
			soak_add(&soak.bytes_wrong, bad);
			cfail(s, "the echo differs from the message", EBADMSG);
			return -1;
		}
		s->rcvd += (size_t)r;
	}
	return 1;
}

/* After shutdown(SHUT_WR): the server must send nothing more, then close. */
static void drain(struct cthread *t, struct slot *s)
{
	char c;
	ssize_t r = recv(s->fd, &c, 1, MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r > 0) {
		soak_add(&soak.bytes_wrong, 1);
		cfail(s, "bytes after the last echo", EBADMSG);
	} else if (r < 0) {
		cfail(s, "recv at the end", errno);
	}
	s->phase = P_ECHO;	/* a plain close now */
	slot_close(t, s, false);
}

static void on_event(struct cthread *t, struct slot *s, uint32_t ev)
{
	int r, err = 0;
	socklen_t len = sizeof(err);

	s->progress_ns = blitz_now_ns();
	switch (s->phase) {
	case P_CONNECT:
		getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			cfail(s, "connect", err);
			slot_close(t, s, false);
			return;
		}
		slot_connected(t, s);
		return;
	case P_DRAIN:
		drain(t, s);
		return;
	case P_ECHO:
		break;
	default:
		return;
	}
	if ((ev & EPOLLOUT) && s->sent < s->size && push(t, s) < 0) {
		slot_close(t, s, false);
		return;
	}
	if (!(ev & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	r = pull(t, s);
	if (r < 0) {
		slot_close(t, s, false);
		return;
	}
	if (r == 0)
		return;
	soak_add(&soak.msgs, 1);
	if (s->msgs_left && !stopping()) {
		if (start_msg(t, s) < 0)
			slot_close(t, s, false);
		return;
	}
	slot_close(t, s, s->serial % 4 == 3);
}

/* Every second: reopen slots that could not connect; report stalled ones. */
static long housekeeping(struct cthread *t)
{
	uint64_t now = blitz_now_ns();
	long open = 0;

	for (long i = 0; i < t->n; i++) {
		struct slot *s = &t->s[i];

		if (s->phase == P_CLOSED) {
			if (!stopping())
				slot_open(t, s);
		} else if (now - s->progress_ns > STALL_NS) {
			cfail(s, "no progress for 60 s", ETIMEDOUT);
			s->phase = P_ECHO;
			slot_close(t, s, false);
		}
		open += s->phase != P_CLOSED;
	}
	return open;
}

static void *client_thread(void *arg)
{
	struct cthread *t = arg;
	struct epoll_event evs[256];
	uint64_t next_look = 0;

	for (long i = 0; i < t->n; i++)
		slot_open(t, &t->s[i]);
	for (;;) {
		int n = epoll_wait(t->ep, evs, 256, 100);
		uint64_t now = blitz_now_ns();

		if (n < 0 && errno != EINTR) {
			perror(PROG ": epoll_wait");
			exit(1);
		}
		for (int i = 0; i < n; i++)
			on_event(t, evs[i].data.ptr, evs[i].events);
		if (now >= next_look) {
			next_look = now + BLITZ_NSEC_PER_SEC;
			if (!housekeeping(t) && stopping())
				break;
		}
	}
	return NULL;
}

void echo_client_start(const struct soak_opts *o, const struct blitz_addr *to)
{
	long per = o->connections / o->client_threads, extra = o->connections % o->client_threads;

	ncthreads = o->client_threads;
	cthreads = calloc((size_t)ncthreads, sizeof(*cthreads));
	if (!cthreads)
		exit(1);
	for (long i = 0; i < ncthreads; i++) {
		struct cthread *t = &cthreads[i];

		t->o = o;
		t->to = to;
		t->n = per + (i < extra);
		t->s = calloc((size_t)t->n, sizeof(*t->s));
		t->buf = malloc((size_t)o->max_msg);
		t->want = malloc((size_t)o->max_msg);
		t->ep = epoll_create1(EPOLL_CLOEXEC);
		if (!t->s || !t->buf || !t->want || t->ep < 0) {
			perror(PROG ": client setup");
			exit(1);
		}
		for (long j = 0; j < t->n; j++)
			t->s[j].fd = -1;
		errno = pthread_create(&t->tid, NULL, client_thread, t);
		if (errno) {
			perror(PROG ": pthread_create");
			exit(1);
		}
	}
}

/* echo_client_join - after soak_stopping: every slot closes, the threads end. */
void echo_client_join(void)
{
	for (long i = 0; i < ncthreads; i++) {
		struct cthread *t = &cthreads[i];

		pthread_join(t->tid, NULL);
		close(t->ep);
		free(t->s);
		free(t->buf);
		free(t->want);
	}
	free(cthreads);
}
