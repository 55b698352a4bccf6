// SPDX-License-Identifier: MIT
/*
 * echo-bench - a TCP echo server on blitz and a closed-loop load generator.
 *
 * Three ways to run it:
 *   echo-bench [opts]                      server and client in one process
 *   echo-bench --server-only [opts]        prints its address, serves until
 *                                          SIGINT/SIGTERM or EOF on stdin,
 *                                          then stops gracefully (below)
 *   echo-bench --client-only ADDR [opts]   measures any echo server
 *
 * The client: --connections N, each a closed loop (send one message of
 * --size bytes, read the whole echo back, record the round trip), for
 * --warmup seconds unmeasured and then --duration seconds measured.  It runs
 * on plain threads with epoll (--client-threads, default 1), not on blitz,
 * so the very same client code measures every server (blitz on each
 * backend, Tokio, libuv) and does not change with the backend under test.
 * One JSON line per run:
 *
 * {"runtime":"blitz","bench":"echo","workers":2,"backend":"io_uring",
 *  "connections":100,"size":64,"duration_s":5,"msgs":...,"msgs_per_sec":...,
 *  "bytes_per_sec":...,"min_ns":...,"p50_ns":...,"p99_ns":...,"p999_ns":...,
 *  "max_ns":...}
 *
 * The Tokio and libuv servers are in experiments/peers/; run-echo there
 * puts them side by side.
 *
 * Graceful stop (--server-only): SIGINT or SIGTERM arrive on a signal
 * stream (blitz/signal.h) read by a task.  The server then stops accepting,
 * and every connection stops reading: a read in flight is cancelled (if it
 * had already returned data, that data counts), everything read is written
 * back, then a FIN, then what still arrives is discarded until the client
 * closes (so that close() never resets a connection whose echoes are still
 * queued).  The runtime is drained (blitz_runtime_shutdown) for at most
 * STOP_TIMEOUT_S seconds; the last line on stderr says how many bytes were
 * read and echoed: the two are equal unless a connection broke.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <blitz.h>
#include "bench_util.h"
#include "echo_client.h"
#include "hist.h"

#define PROG		"echo-bench"
#define ECHO_BUF	16384		/* the server's read buffer (as the peers') */
#define MAX_CONNS	100000
#define MAX_SIZE	(16l << 20)
#define STOP_TIMEOUT_S	10		/* --server-only: the graceful stop's deadline */

static void die(const char *what)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---------------------------------------------------------------------- */
/* Options                                                                */

enum mode { MODE_BOTH, MODE_SERVER, MODE_CLIENT };

struct opts {
	enum mode mode;
	const char *addr;		/* --client-only: the server; else --listen */
	const char *label;		/* "runtime" in the JSON */
	struct blitz_config cfg;	/* the server's runtime */
	bool workers_set, backend_set;
	long connections;
	long size;
	double duration, warmup;
	long client_threads;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--backend NAME] [--workers N] [--connections N]\n"
		"                  [--size BYTES] [--duration SECONDS] [--warmup SECONDS]\n"
		"                  [--client-threads N] [--listen ADDRESS] [--label NAME]\n"
		"                  [--server-only | --client-only ADDRESS]\n"
		"An echo server on blitz and a closed-loop load generator; one JSON line per run.\n"
		"  --server-only          serve on --listen (default 127.0.0.1:0), print the\n"
		"                         address, run until SIGINT/SIGTERM or EOF on stdin\n"
		"  --client-only ADDRESS  measure the echo server at ADDRESS; --label names it\n"
		"                         in the JSON, --backend/--workers describe it\n"
		"  --backend NAME         an I/O backend, as sched-bench --list-backends names them\n"
		"Defaults: --workers 2 --connections 100 --size 64 --duration 5 --warmup 1\n"
		"          --client-threads 1, the backend from BLITZ_BACKEND (else the first\n"
		"          that works).\n");
}

static void bad_option(const char *opt, const char *v, const char *expected)
{
	fprintf(stderr, PROG ": %s %s: expected %s\n", opt, v, expected);
	exit(2);
}

static long parse_num(const char *opt, const char *v, long lo, long hi)
{
	char *end, what[64];
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || !*v || n < lo || n > hi) {
		snprintf(what, sizeof(what), "a number from %ld to %ld", lo, hi);
		bad_option(opt, v, what);
	}
	return n;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'w' },
		{ "connections", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "client-threads", required_argument, NULL, 't' },
		{ "listen", required_argument, NULL, 'L' },
		{ "label", required_argument, NULL, 'l' },
		{ "server-only", no_argument, NULL, 'S' },
		{ "client-only", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *listen_addr = NULL;
	int c;

	*o = (struct opts){ .connections = 100, .size = 64,
			    .duration = 5, .warmup = 1, .client_threads = 1 };
	bench_config(&o->cfg, 2);
	while ((c = bench_getopt(argc, argv, lopts)) != -1) {
		switch (c) {
		case 'b':
			o->cfg.backend = bench_parse_backend("--backend", optarg);
			o->backend_set = true;
			break;
		case 'w':
			o->cfg.workers = (unsigned)parse_num("--workers", optarg, 1, blitz_max_workers());
			o->workers_set = true;
			break;
		case 'c': o->connections = parse_num("--connections", optarg, 1, MAX_CONNS); break;
		case 's': o->size = parse_num("--size", optarg, 1, MAX_SIZE); break;
		case 'd': o->duration = echo_parse_seconds(PROG, "--duration", optarg, 1e-3); break;
		case 'W': o->warmup = echo_parse_seconds(PROG, "--warmup", optarg, 0); break;
		case 't': o->client_threads = parse_num("--client-threads", optarg, 1, 256); break;
		case 'L': listen_addr = optarg; break;
		case 'l': o->label = optarg; break;
		case 'S':
			if (o->mode == MODE_CLIENT)
				goto both;
			o->mode = MODE_SERVER;
			break;
		case 'C':
			if (o->mode == MODE_SERVER)
				goto both;
			o->mode = MODE_CLIENT;
			o->addr = optarg;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (listen_addr && o->mode == MODE_CLIENT) {
		fprintf(stderr, PROG ": --listen makes no sense with --client-only\n");
		exit(2);
	}
	if (!o->label)
		o->label = o->mode == MODE_CLIENT ? "unknown" : "blitz";
	if (o->mode != MODE_CLIENT)
		o->addr = listen_addr ? listen_addr : "127.0.0.1:0";
	if (o->client_threads > o->connections)
		o->client_threads = o->connections;
	return;
both:
	fprintf(stderr, PROG ": --server-only and --client-only exclude each other\n");
	exit(2);
}

/* Round trips of one message: Nagle would only add delay. */
static void set_nodelay(int fd)
{
	int one = 1;

	/* Fails harmlessly (EOPNOTSUPP) on a Unix socket. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---------------------------------------------------------------------- */
/* The server: an acceptor task and one echo task per connection        */

struct echo_conn;

struct server {
	int fd;
	_Atomic long accepted;
	/* Graceful stop (--server-only): the live connections, under conns_lock. */
	bool graceful;
	_Atomic bool stopping;		/* set under conns_lock */
	pthread_mutex_t conns_lock;
	struct echo_conn *conns;
	_Atomic long bytes_read, bytes_echoed;	/* added once per connection, at its end */
	_Atomic bool said_out_of_fds;		/* the one message about it is out */
};

struct echo_conn {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	long n;
	/* Graceful stop only: */
	struct server *srv;
	bool graceful, registered, stop_asked;
	long rd, wr;
	struct echo_conn *prev, *next;	/* srv->conns, under conns_lock */
	struct blitz_waker waker;	/* held while registered: the stop wakes it */
	char buf[ECHO_BUF];
};

/*
 * conn_register - join the server's list, with a waker that the stop uses
 * to make us look at srv->stopping.  False if the stop has already begun.
 */
static bool conn_register(struct echo_conn *e, struct blitz_cx *cx)
{
	struct server *srv = e->srv;
	bool ok;

	pthread_mutex_lock(&srv->conns_lock);
	/* Relaxed: written under the lock we hold. */
	ok = !atomic_load_explicit(&srv->stopping, memory_order_relaxed);
	if (ok) {
		e->waker = blitz_cx_waker(cx);
		e->prev = NULL;
		e->next = srv->conns;
		if (srv->conns)
			srv->conns->prev = e;
		srv->conns = e;
		e->registered = true;
	}
	pthread_mutex_unlock(&srv->conns_lock);
	return ok;
}

static void conn_unregister(struct echo_conn *e)
{
	struct server *srv = e->srv;
	struct blitz_waker w = { 0 };

	if (!e->registered)
		return;
	pthread_mutex_lock(&srv->conns_lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		srv->conns = e->next;
	if (e->next)
		e->next->prev = e->prev;
	w = e->waker;
	e->waker.vtable = NULL;
	e->registered = false;
	pthread_mutex_unlock(&srv->conns_lock);
	blitz_waker_drop(&w);		/* outside the lock */
}

/*
 * stop_requested - has the stop begun?  Relaxed is enough: the stop sets
 * the flag and then wakes every registered connection; the poll that the
 * wake causes happens after it (the task's state word, release/acquire),
 * so it sees the flag.  A connection that registers later checks the flag
 * under the lock.  An earlier poll may miss it: the wake comes after.
 */
static bool stop_requested(struct echo_conn *e)
{
	return atomic_load_explicit(&e->srv->stopping, memory_order_relaxed);
}

static void echo_drop(void *arg)
{
	struct echo_conn *e = arg;

	blitz_net_cancel(&e->x);
	if (e->graceful)
		conn_unregister(e);
	if (e->fd >= 0)
		blitz_net_close(NULL, e->fd);
	e->fd = -1;
}

/*
 * A read that the graceful stop interrupts: the stop wakes the task, which
 * finds its read still pending and cancels it; the read then completes
 * (-ECANCELED, or with the data it had already got) and wakes it again.
 */
static enum blitz_poll echo_read(struct echo_conn *e, struct blitz_cx *cx)
{
	if (blitz_read_poll(&e->x, e->fd, e->buf, sizeof(e->buf), cx) == BLITZ_READY)
		return BLITZ_READY;
	if (e->graceful && !e->stop_asked && stop_requested(e)) {
		e->stop_asked = true;
		blitz_net_cancel(&e->x);
	}
	return BLITZ_PENDING;
}

/* Read what came, write all of it back, until end of stream or an error. */
static enum blitz_poll echo_poll(void *arg, struct blitz_cx *cx)
{
	struct echo_conn *e = arg;

	BLITZ_CO_BEGIN(&e->co);
	if (e->graceful && !conn_register(e, cx))
		e->stop_asked = true;
	while (!e->stop_asked) {
		BLITZ_AWAIT(&e->co, echo_read(e, cx));
		if (e->x.result <= 0)
			break;
		e->n = e->x.result;
		e->rd += e->n;
		BLITZ_AWAIT(&e->co, blitz_write_all_poll(&e->x, e->fd, e->buf, (size_t)e->n, cx));
		if (e->x.result < 0)
			break;
		e->wr += e->n;
	}
	if (e->graceful) {
		conn_unregister(e);
		atomic_fetch_add_explicit(&e->srv->bytes_read, e->rd, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->srv->bytes_echoed, e->wr, memory_order_relaxed);
		/* FIN after the echoes; discard the rest until the client closes. */
		shutdown(e->fd, SHUT_WR);
		for (;;) {
			BLITZ_AWAIT(&e->co, blitz_read_poll(&e->x, e->fd, e->buf, sizeof(e->buf), cx));
			if (e->x.result <= 0)
				break;
		}
	}
	blitz_net_close(NULL, e->fd);
	e->fd = -1;
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
	struct acceptor *s = arg;

	blitz_net_cancel(&s->a);
	blitz_sleep_cancel(&s->nap);
}

/* The first time the server runs out, it says so once (stderr). */
static void say_out_of_fds(struct server *srv, int err)
{
	/* Relaxed: it only picks the one caller that prints. */
	if (atomic_exchange_explicit(&srv->said_out_of_fds, true, memory_order_relaxed))
		return;
	fprintf(stderr, PROG ": server: accept: %s; %s\n", strerror(err),
		err == ENOMEM ? "retrying every 1 ms" :
		"resetting the connections it cannot take (raise ulimit -n)");
}

/*
 * Runs until cancelled.  Out of descriptors it resets the queued
 * connections at once (BLITZ_ACCEPT_SHED: clients see ECONNRESET rather
 * than their own time-out), says so once, backs off 1 ms and retries.
 */
static enum blitz_poll acceptor_poll(void *arg, struct blitz_cx *cx)
{
	struct acceptor *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	/* Owned: closed with blitz_net_close (io_uring: a multishot receive). */
	s->a.flags = BLITZ_ACCEPT_SHED | BLITZ_ACCEPT_OWNED;
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_accept_poll(&s->a, s->srv->fd, cx));
		if (s->a.result == -EMFILE || s->a.result == -ENFILE || s->a.result == -ENOMEM) {
			say_out_of_fds(s->srv, -s->a.result);
			blitz_sleep_init(&s->nap, BLITZ_NSEC_PER_MSEC);
			BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
			continue;
		}
		if (s->a.result < 0)	/* ECONNABORTED and the like: next */
			continue;
		atomic_fetch_add_explicit(&s->srv->accepted, 1, memory_order_relaxed);
		set_nodelay(s->a.result);
		{
			struct echo_conn e = { .fd = s->a.result, .srv = s->srv,
					       .graceful = s->srv->graceful };

			if (blitz_spawn_detached(NULL, &echo_vt, &e, sizeof(e)))
				blitz_net_close(NULL, e.fd);
		}
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable acceptor_vt = BLITZ_TASK_VTABLE(acceptor_poll, acceptor_drop);

struct bench_server {
	struct blitz_runtime *rt;
	struct server srv;
	struct blitz_task *acceptor;
	struct blitz_addr bound;
};

static void server_start(struct bench_server *bs, const struct opts *o)
{
	struct blitz_addr a;
	struct acceptor ac = { .srv = &bs->srv };
	char err[256];

	if (blitz_addr_parse(o->addr, &a, err, sizeof(err))) {
		fprintf(stderr, PROG ": --listen %s: %s\n", o->addr, err);
		exit(2);
	}
	bs->rt = blitz_runtime_new(&o->cfg);
	if (!bs->rt)
		die("blitz_runtime_new");
	if (o->backend_set && o->cfg.backend != BLITZ_BACKEND_AUTO &&
	    strcmp(blitz_io_backend_name(bs->rt), blitz_backend_name(o->cfg.backend)))
		fprintf(stderr, PROG ": asked for %s, running on %s\n",
			blitz_backend_name(o->cfg.backend), blitz_io_backend_name(bs->rt));
	bs->srv.fd = blitz_listen(&a, 4096);
	if (bs->srv.fd < 0) {
		errno = -bs->srv.fd;
		die(o->addr);
	}
	if (blitz_addr_local(bs->srv.fd, &bs->bound))
		die("getsockname");
	if (bs->bound.ss.ss_family == AF_UNIX)
		bs->bound = a;		/* the path, as given */
	bs->acceptor = blitz_spawn(bs->rt, &acceptor_vt, &ac, sizeof(ac));
	if (!bs->acceptor)
		die("spawn");
}

/* Cancel the acceptor (its drop cancels the accept), free the runtime (which
 * cancels the echo tasks; their drop closes the connections). */
static void server_stop(struct bench_server *bs)
{
	blitz_task_cancel(bs->acceptor);
	blitz_join(bs->acceptor);
	blitz_task_release(bs->acceptor);
	close(bs->srv.fd);
	blitz_runtime_free(bs->rt);
}

/* Waits for SIGINT or SIGTERM on the stream. */
struct sigwatch {
	struct blitz_co co;
	struct blitz_signals *sig;
	struct blitz_signal_recv r;
};

static enum blitz_poll sigwatch_poll(void *arg, struct blitz_cx *cx)
{
	struct sigwatch *w = arg;

	BLITZ_CO_BEGIN(&w->co);
	do {
		BLITZ_AWAIT(&w->co, blitz_signals_recv_poll(w->sig, &w->r, cx));
	} while (w->r.result != SIGINT && w->r.result != SIGTERM && w->r.result != -ECANCELED);
	BLITZ_CO_END(&w->co);
}

static void sigwatch_drop(void *arg)
{
	struct sigwatch *w = arg;

	blitz_signals_recv_cancel(&w->r);
}
static const struct blitz_task_vtable sigwatch_vt = BLITZ_TASK_VTABLE(sigwatch_poll, sigwatch_drop);

/*
 * Until the signal task has seen SIGINT or SIGTERM, or EOF on stdin.  stdin
 * is watched only when it is a pipe, socket or terminal: a server started
 * with `&` from a script has /dev/null there, which would end it at once.
 * Returns the signal, or 0 for EOF.
 */
static int wait_for_the_end(struct blitz_task *watcher)
{
	struct stat st;
	struct pollfd p = { .fd = -1, .events = POLLIN };
	char buf[256];

	if (fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || isatty(0)))
		p.fd = 0;
	while (!blitz_task_done(watcher)) {
		if (poll(&p, 1, 20) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p.revents) {
			ssize_t r = read(0, buf, sizeof(buf));

			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
				return 0;
		}
	}
	return ((struct sigwatch *)blitz_task_state(watcher))->r.result;
}

/*
 * The graceful stop: no more accepts; every connection is woken to see the
 * flag (and finishes as the header comment says); then the drain.
 */
static void server_stop_graceful(struct bench_server *bs)
{
	int rc;

	blitz_task_cancel(bs->acceptor);
	blitz_join(bs->acceptor);
	blitz_task_release(bs->acceptor);
	close(bs->srv.fd);
	pthread_mutex_lock(&bs->srv.conns_lock);
	/* Relaxed: see stop_requested(); the wakes below order it. */
	atomic_store_explicit(&bs->srv.stopping, true, memory_order_relaxed);
	for (struct echo_conn *e = bs->srv.conns; e; e = e->next)
		blitz_waker_wake_by_ref(&e->waker);
	pthread_mutex_unlock(&bs->srv.conns_lock);
	rc = blitz_runtime_shutdown(bs->rt, STOP_TIMEOUT_S * 1000000000ull);
	if (rc)
		fprintf(stderr, PROG ": connections still open after %d s were closed\n",
			STOP_TIMEOUT_S);
	fprintf(stderr, PROG ": %s; %ld bytes read, %ld echoed\n",
		rc ? "stopped" : "stopped gracefully",
		atomic_load(&bs->srv.bytes_read), atomic_load(&bs->srv.bytes_echoed));
	pthread_mutex_destroy(&bs->srv.conns_lock);
}

static int run_server_only(const struct opts *o)
{
	struct bench_server bs = { .srv.fd = -1, .srv.graceful = true };
	struct blitz_net_stats ns;
	struct sigwatch sw = { 0 };
	struct blitz_task *watcher;
	sigset_t set;
	char buf[160];
	int sig;

	/* Blocked before any thread exists, so that every thread inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	blitz_signals_block(&set);
	sw.sig = blitz_signals_open(&set);
	if (!sw.sig)
		die("blitz_signals_open");
	pthread_mutex_init(&bs.srv.conns_lock, NULL);
	server_start(&bs, o);
	watcher = blitz_spawn(bs.rt, &sigwatch_vt, &sw, sizeof(sw));
	if (!watcher)
		die("spawn");
	printf("%s\n", blitz_addr_format(&bs.bound, buf, sizeof(buf)));
	fflush(stdout);
	fprintf(stderr, PROG ": serving on %s (%s, %u workers)\n", buf,
		blitz_io_backend_name(bs.rt), blitz_runtime_workers(bs.rt));
	sig = wait_for_the_end(watcher);
	blitz_net_stats(&ns);
	fprintf(stderr, PROG ": %s: %ld connections served, stopping\n",
		sig > 0 ? strsignal(sig) : "end of stdin", atomic_load(&bs.srv.accepted));
	if (ns.accept_emfile)
		fprintf(stderr, PROG ": out of descriptors: %llu accepts failed, %llu connections reset\n",
			(unsigned long long)ns.accept_emfile, (unsigned long long)ns.accept_shed);
	blitz_task_cancel(watcher);
	blitz_join(watcher);
	blitz_task_release(watcher);
	server_stop_graceful(&bs);
	blitz_signals_close(sw.sig);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The client: threads with epoll, each owning its share of connections   */

struct cconn {
	int fd;
	bool want_out;			/* EPOLLOUT armed: part of the message unsent */
	size_t sent, rcvd;		/* of the message in flight (sent >= rcvd) */
	uint64_t t0;			/* when its first byte was sent */
};

struct client {
	const struct opts *o;
	const struct blitz_addr *to;
	const unsigned char *payload;	/* o->size bytes, the message */
	pthread_barrier_t ready, go;
	uint64_t measure_start, measure_end;	/* set between the two barriers */
	_Atomic int failed;
};

struct cthread {
	struct client *cl;
	pthread_t tid;
	long n;				/* its connections */
	struct cconn *c;
	int ep;
	unsigned char *rbuf;
	size_t rlen;
	uint64_t msgs;
	struct hist h;
};

static void cfail(struct cthread *t, const char *what, int err)
{
	fprintf(stderr, PROG ": client: %s: %s\n", what, err ? strerror(err) : "connection closed");
	atomic_store(&t->cl->failed, 1);
}

static int connect_one(const struct blitz_addr *to)
{
	int fd = socket(to->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (to->ss.ss_family != AF_UNIX)
		set_nodelay(fd);
	if (connect(fd, (const struct sockaddr *)&to->ss, to->len) < 0 || echo_prime(fd) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static int arm(struct cthread *t, struct cconn *c, int op, bool out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c };

	c->want_out = out;
	return epoll_ctl(t->ep, op, c->fd, &ev);
}

/* Send what is left of the message; arm EPOLLOUT while some is left. */
static int push(struct cthread *t, struct cconn *c)
{
	size_t size = (size_t)t->cl->o->size;

	while (c->sent < size) {
		ssize_t r = send(c->fd, t->cl->payload + c->sent, size - c->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return c->want_out ? 0 : arm(t, c, EPOLL_CTL_MOD, true);
		if (r < 0)
			return -1;
		c->sent += (size_t)r;
	}
	return c->want_out ? arm(t, c, EPOLL_CTL_MOD, false) : 0;
}

static int start_msg(struct cthread *t, struct cconn *c)
{
	c->sent = c->rcvd = 0;
	c->t0 = bench_now_ns();
	return push(t, c);
}

/* A whole echo came back: count it if it ended inside the window. */
static void complete(struct cthread *t, struct cconn *c, uint64_t now)
{
	if (now >= t->cl->measure_start && now < t->cl->measure_end) {
		hist_add(&t->h, now - c->t0);
		t->msgs++;
	}
}

/*
 * Read the echo; compare it with what was sent.  The server cannot send more
 * than the message (one in flight per connection), so a read never crosses
 * into the next one.  Return: 1 message complete, 0 not yet, -1 error.
 */
static int pull(struct cthread *t, struct cconn *c)
{
	size_t size = (size_t)t->cl->o->size;

	while (c->rcvd < size) {
		size_t want = size - c->rcvd < t->rlen ? size - c->rcvd : t->rlen;
		ssize_t r = recv(c->fd, t->rbuf, want, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 0;
		if (r <= 0) {
			cfail(t, "recv", r < 0 ? errno : 0);
			return -1;
		}
		if (c->rcvd + (size_t)r > c->sent ||
		    memcmp(t->rbuf, t->cl->payload + c->rcvd, (size_t)r)) {
			cfail(t, "the echo differs from the message", EBADMSG);
			return -1;
		}
		c->rcvd += (size_t)r;
	}
	return 1;
}

static int on_event(struct cthread *t, struct cconn *c, uint32_t ev)
{
	uint64_t now;
	int r;

	if ((ev & EPOLLOUT) && c->sent < (size_t)t->cl->o->size && push(t, c) < 0) {
		cfail(t, "send", errno);
		return -1;
	}
	if (!(ev & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return 0;
	r = pull(t, c);
	if (r <= 0)
		return r;
	now = bench_now_ns();
	complete(t, c, now);
	if (now >= t->cl->measure_end)
		return 0;		/* the connection rests until the end */
	if (start_msg(t, c) < 0) {
		cfail(t, "send", errno);
		return -1;
	}
	return 0;
}

static int connect_all(struct cthread *t)
{
	for (long i = 0; i < t->n; i++) {
		struct cconn *c = &t->c[i];

		c->fd = connect_one(t->cl->to);
		if (c->fd < 0) {
			cfail(t, "connect", -c->fd);
			return -1;
		}
		if (arm(t, c, EPOLL_CTL_ADD, false) < 0) {
			cfail(t, "epoll_ctl", errno);
			return -1;
		}
	}
	return 0;
}

static void run_loop(struct cthread *t)
{
	struct epoll_event evs[256];

	for (long i = 0; i < t->n; i++)
		if (start_msg(t, &t->c[i]) < 0) {
			cfail(t, "send", errno);
			return;
		}
	while (bench_now_ns() < t->cl->measure_end && !atomic_load_explicit(&t->cl->failed,
								       memory_order_relaxed)) {
		int n = epoll_wait(t->ep, evs, 256, 100);

		if (n < 0 && errno != EINTR) {
			cfail(t, "epoll_wait", errno);
			return;
		}
		for (int i = 0; i < n; i++)
			if (on_event(t, evs[i].data.ptr, evs[i].events) < 0)
				return;
	}
}

static void *client_thread(void *arg)
{
	struct cthread *t = arg;

	if (connect_all(t) < 0)
		atomic_store(&t->cl->failed, 1);
	pthread_barrier_wait(&t->cl->ready);
	pthread_barrier_wait(&t->cl->go);
	if (!atomic_load(&t->cl->failed))
		run_loop(t);
	for (long i = 0; i < t->n; i++)
		if (t->c[i].fd >= 0)
			close(t->c[i].fd);
	return NULL;
}

static void cthread_init(struct cthread *t, struct client *cl, long n)
{
	t->cl = cl;
	t->n = n;
	t->c = calloc((size_t)n, sizeof(*t->c));
	t->rlen = (size_t)cl->o->size < 65536 ? (size_t)cl->o->size : 65536;
	t->rbuf = malloc(t->rlen);
	t->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!t->c || !t->rbuf || t->ep < 0)
		die("client setup");
	for (long i = 0; i < n; i++)
		t->c[i].fd = -1;
	hist_init(&t->h);
}

static void print_result(const struct opts *o, const char *backend, long workers,
			 const struct hist *h, uint64_t msgs)
{
	double rate = (double)msgs / o->duration;
	char wbuf[24];

	if (workers > 0)
		snprintf(wbuf, sizeof(wbuf), "%ld", workers);
	else
		snprintf(wbuf, sizeof(wbuf), "null");
	printf("{\"runtime\":\"%s\",\"bench\":\"echo\",\"workers\":%s,\"backend\":%s%s%s,"
	       "\"connections\":%ld,\"size\":%ld,\"duration_s\":%g,\"warmup_s\":%g,"
	       "\"client_threads\":%ld,\"msgs\":%llu,\"msgs_per_sec\":%.1f,\"bytes_per_sec\":%.1f,"
	       "\"min_ns\":%llu,\"p50_ns\":%llu,\"p99_ns\":%llu,\"p999_ns\":%llu,\"max_ns\":%llu,"
	       "\"mean_ns\":%llu}\n",
	       o->label, wbuf, backend ? "\"" : "", backend ? backend : "null", backend ? "\"" : "",
	       o->connections, o->size, o->duration, o->warmup, o->client_threads,
	       (unsigned long long)msgs, rate, rate * (double)o->size,
	       (unsigned long long)(h->count ? h->min : 0),
	       (unsigned long long)hist_quantile(h, 0.50),
	       (unsigned long long)hist_quantile(h, 0.99),
	       (unsigned long long)hist_quantile(h, 0.999),
	       (unsigned long long)h->max,
	       (unsigned long long)(h->count ? h->sum / h->count : 0));
	fflush(stdout);
}

/*
 * run_client - connect, warm up, measure, merge the per-thread histograms.
 * Return: 0 with the merged histogram in @all and the count in @msgs, or -1.
 */
static int run_client(const struct opts *o, const struct blitz_addr *to,
		      struct hist *all, uint64_t *msgs)
{
	long nt = o->client_threads, per = o->connections / nt, extra = o->connections % nt;
	struct client cl = { .o = o, .to = to };
	struct cthread *ts = calloc((size_t)nt, sizeof(*ts));
	unsigned char *payload = malloc((size_t)o->size);

	if (!ts || !payload)
		die("malloc");
	echo_fill(payload, (size_t)o->size);
	cl.payload = payload;
	pthread_barrier_init(&cl.ready, NULL, (unsigned)nt + 1);
	pthread_barrier_init(&cl.go, NULL, (unsigned)nt + 1);
	for (long i = 0; i < nt; i++) {
		long n = per + (i < extra);

		cthread_init(&ts[i], &cl, n);
		errno = pthread_create(&ts[i].tid, NULL, client_thread, &ts[i]);
		if (errno)
			die("pthread_create");
	}
	pthread_barrier_wait(&cl.ready);	/* every connection is up */
	cl.measure_start = bench_now_ns() + (uint64_t)(o->warmup * 1e9);
	cl.measure_end = cl.measure_start + (uint64_t)(o->duration * 1e9);
	pthread_barrier_wait(&cl.go);
	hist_init(all);
	*msgs = 0;
	for (long i = 0; i < nt; i++) {
		pthread_join(ts[i].tid, NULL);
		hist_merge(all, &ts[i].h);
		*msgs += ts[i].msgs;
		free(ts[i].c);
		free(ts[i].rbuf);
		close(ts[i].ep);
	}
	pthread_barrier_destroy(&cl.ready);
	pthread_barrier_destroy(&cl.go);
	free(ts);
	free(payload);
	return atomic_load(&cl.failed) ? -1 : 0;
}

/* ---------------------------------------------------------------------- */

static int run_client_only(const struct opts *o)
{
	struct blitz_addr to;
	struct hist *h = malloc(sizeof(*h));
	uint64_t msgs;
	char err[256];
	int rc;

	if (!h)
		die("malloc");
	if (blitz_addr_parse(o->addr, &to, err, sizeof(err))) {
		fprintf(stderr, PROG ": --client-only %s: %s\n", o->addr, err);
		exit(2);
	}
	rc = run_client(o, &to, h, &msgs);
	if (!rc)
		print_result(o, o->backend_set ? blitz_backend_name(o->cfg.backend) : NULL,
			     o->workers_set ? (long)o->cfg.workers : 0, h, msgs);
	free(h);
	return rc ? 1 : 0;
}

static int run_both(const struct opts *o)
{
	struct bench_server bs = { .srv.fd = -1 };
	struct hist *h = malloc(sizeof(*h));
	uint64_t msgs;
	int rc;

	if (!h)
		die("malloc");
	server_start(&bs, o);
	rc = run_client(o, &bs.bound, h, &msgs);
	if (!rc)
		print_result(o, blitz_io_backend_name(bs.rt), blitz_runtime_workers(bs.rt), h, msgs);
	server_stop(&bs);
	free(h);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	parse_opts(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	echo_raise_nofile();
	switch (o.mode) {
	case MODE_SERVER: return run_server_only(&o);
	case MODE_CLIENT: return run_client_only(&o);
	default: return run_both(&o);
	}
}
