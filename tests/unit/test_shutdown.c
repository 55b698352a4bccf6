// SPDX-License-Identifier: MIT
/*
 * test_shutdown.c - graceful shutdown on each backend: tasks awaiting the
 * shutdown token finish, a drain that runs out of time says so, and an echo
 * server stopped by SIGTERM (through a signal stream) under load loses no
 * message it had received.
 *
 * "Received", precisely: bytes that a read of the server's connection task
 * returned.  Once the token fires, a connection stops reading (a read in
 * flight is cancelled; if it had already returned data, that data counts),
 * writes back everything it has read, sends its FIN (shutdown(SHUT_WR)),
 * and then discards what still arrives until the client closes, so that
 * close() never resets the connection and drops echoes still queued in the
 * kernel.  The client checks that what came back, up to the FIN, is the
 * exact prefix of what it sent, and the totals: echoed == read by the
 * server == received by the clients.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <blitz.h>
#include "../../core/sched/runtime.h"
#include "suites.h"

#define SKIP_UNLESS_BACKEND(rt, i) do {					\
		if (strcmp(blitz_io_backend_name(rt), test_backend_name(i))) {	\
			blitz_runtime_free(rt);				\
			SKIP("%s unavailable here", test_backend_name(i));		\
		}							\
	} while (0)

/* ---------------------------------------------------------------------- */
/* Tasks awaiting the token                                                */

static _Atomic int stopped_cleanly;

struct stopper {
	struct blitz_co co;
	struct blitz_waiter w;
};

static enum blitz_poll stopper_poll(void *arg, struct blitz_cx *cx)
{
	struct stopper *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, blitz_cancel_token_cancelled_poll(blitz_runtime_shutdown_token(NULL),
							      &s->w, cx));
	atomic_fetch_add(&stopped_cleanly, 1);
	BLITZ_CO_END(&s->co);
}

static void stopper_drop(void *arg)
{
	struct stopper *s = arg;

	blitz_cancel_token_waiter_cancel(blitz_runtime_shutdown_token(NULL), &s->w);
}
static const struct blitz_task_vtable stopper_vt = BLITZ_TASK_VTABLE(stopper_poll, stopper_drop);

START_TEST(token_awaiters_finish_and_drain_returns)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct stopper s = { 0 };

	SKIP_UNLESS_BACKEND(rt, _i);
	atomic_store(&stopped_cleanly, 0);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(blitz_spawn_detached(rt, &stopper_vt, &s, sizeof(s)), 0);
	usleep(10000);
	ck_assert_uint_eq(blitz_runtime_live_tasks(rt), 100);
	ck_assert(!blitz_cancel_token_is_cancelled(blitz_runtime_shutdown_token(rt)));
	ck_assert_int_eq(blitz_runtime_drain(rt, 10 * BLITZ_NSEC_PER_SEC), 0);
	ck_assert_uint_eq(blitz_runtime_live_tasks(rt), 0);
	ck_assert_int_eq(atomic_load(&stopped_cleanly), 100);
	blitz_runtime_free(rt);
}
END_TEST

/* A task that ignores the token: the drain times out, the free cancels it. */
struct deaf {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	char c;
};

static _Atomic int deaf_drops;

static enum blitz_poll deaf_poll(void *arg, struct blitz_cx *cx)
{
	struct deaf *d = arg;

	BLITZ_CO_BEGIN(&d->co);
	BLITZ_AWAIT(&d->co, blitz_pipe_read_poll(&d->x, d->fd, &d->c, 1, cx));
	BLITZ_CO_END(&d->co);
}

static void deaf_drop(void *arg)
{
	struct deaf *d = arg;

	blitz_net_cancel(&d->x);
	atomic_fetch_add(&deaf_drops, 1);
}
static const struct blitz_task_vtable deaf_vt = BLITZ_TASK_VTABLE(deaf_poll, deaf_drop);

START_TEST(drain_deadline_then_free_cancels)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct stopper s = { 0 };
	struct deaf d = { 0 };
	int fds[2];
	struct timespec t0, t1;
	double ms;

	SKIP_UNLESS_BACKEND(rt, _i);
	atomic_store(&stopped_cleanly, 0);
	atomic_store(&deaf_drops, 0);
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	d.fd = fds[0];
	ck_assert_int_eq(blitz_spawn_detached(rt, &deaf_vt, &d, sizeof(d)), 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &stopper_vt, &s, sizeof(s)), 0);
	usleep(10000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(blitz_runtime_shutdown(rt, 100 * BLITZ_NSEC_PER_MSEC), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_msg(ms >= 99, "drained for %.1f ms", ms);
	ck_assert_int_eq(atomic_load(&stopped_cleanly), 1);
	ck_assert_int_eq(atomic_load(&deaf_drops), 1);	/* cancelled by the free */
	close(fds[0]);
	close(fds[1]);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* A runtime freed while a thread that is not a worker joins on it          */

/*
 * The joining thread helps: it runs tasks of the global queue (spinners
 * that yield forever, so it always has one; the only worker is held in a
 * poll until the free) while its target never completes.  The main
 * thread frees the runtime once that thread has run enough polls.  The free must not drop a task while the helper polls it
 * (a drop twice, or into a freed task, before 2026-11-29), must wake the
 * join (-ECANCELED), and must end a join nested in a helped poll, on a
 * task of the same runtime or (rounds 3, 7, ...) of another one
 * (-ESHUTDOWN) instead of waiting for it forever.
 */
#define FREE_SPINNERS	32

static _Atomic int spinner_drops[FREE_SPINNERS];
static _Atomic long helped_polls;
static _Atomic int nested_result, nested_polls;
static __thread bool joining_thread;
static struct blitz_task *never_done_b;	/* what the nested join waits for */

struct spinner {
	int id;
};

static enum blitz_poll spinner_poll(void *arg, struct blitz_cx *cx)
{
	(void)arg;
	if (joining_thread)
		atomic_fetch_add(&helped_polls, 1);
	blitz_yield_now(cx);
	return BLITZ_PENDING;
}

static void spinner_drop(void *arg)
{
	struct spinner *s = arg;

	atomic_fetch_add(&spinner_drops[s->id], 1);
}
static const struct blitz_task_vtable spinner_vt = BLITZ_TASK_VTABLE(spinner_poll, spinner_drop);

static enum blitz_poll never_poll(void *arg, struct blitz_cx *cx)
{
	(void)arg;
	(void)cx;
	return BLITZ_PENDING;	/* nothing will wake it */
}
static const struct blitz_task_vtable never_done_vt = BLITZ_TASK_VTABLE(never_poll, NULL);

/*
 * hog - holds the only worker in its poll until released, so that the
 * helper runs every task of the global queue (the nester among them).
 */
static _Atomic bool hog_running, hog_release;

static enum blitz_poll hog_poll(void *arg, struct blitz_cx *cx)
{
	(void)arg;
	(void)cx;
	atomic_store(&hog_running, true);
	while (!atomic_load(&hog_release))
		sched_yield();
	return BLITZ_READY;
}
static const struct blitz_task_vtable hog_vt = BLITZ_TASK_VTABLE(hog_poll, NULL);

/* start_hog - a hog on @rt's only worker, running when this returns. */
static void start_hog(struct blitz_runtime *rt)
{
	atomic_store(&hog_running, false);
	atomic_store(&hog_release, false);
	ck_assert_int_eq(blitz_spawn_detached(rt, &hog_vt, NULL, 0), 0);
	while (!atomic_load(&hog_running))
		sched_yield();
}

/* nester - joins a task that never completes, from inside its poll. */
static enum blitz_poll nester_poll(void *arg, struct blitz_cx *cx)
{
	(void)arg;
	(void)cx;
	ck_assert(joining_thread);	/* the worker is held by the hog */
	atomic_fetch_add(&nested_polls, 1);
	atomic_store(&nested_result, blitz_join(never_done_b));
	return BLITZ_READY;
}
static const struct blitz_task_vtable nester_vt = BLITZ_TASK_VTABLE(nester_poll, NULL);

struct joiner_arg {
	struct blitz_task *t;
	int ret;
};

static void *join_from_outside(void *arg)
{
	struct joiner_arg *j = arg;

	joining_thread = true;
	j->ret = blitz_join(j->t);
	return NULL;
}

START_TEST(free_ends_joins_from_outside)
{
	struct blitz_runtime *rt = test_runtime(1);
	struct blitz_runtime *other = _i % 4 == 3 ? test_runtime(1) : rt;
	struct joiner_arg j = { 0 };
	pthread_t th;
	long target;

	atomic_store(&helped_polls, 0);
	atomic_store(&nested_result, 1);
	atomic_store(&nested_polls, 0);
	start_hog(rt);
	for (int i = 0; i < FREE_SPINNERS; i++) {
		struct spinner s = { .id = i };

		atomic_store(&spinner_drops[i], 0);
		ck_assert_int_eq(blitz_spawn_detached(rt, &spinner_vt, &s, sizeof(s)), 0);
	}
	j.t = blitz_spawn(rt, &never_done_vt, NULL, 0);
	never_done_b = blitz_spawn(other, &never_done_vt, NULL, 0);
	ck_assert(j.t && never_done_b);
	if (_i & 1)	/* one round in two: a join nested in a helped poll */
		ck_assert_int_eq(blitz_spawn_detached(rt, &nester_vt, NULL, 0), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, join_from_outside, &j), 0);
	/* Counts, not time: free once the helper is well inside its loop. */
	target = 2000 + (long)(_i % 7) * 500;
	/*
	 * A join on the other runtime's task helps that runtime, whose queue
	 * has no spinner: there, free once the nester is inside its join.
	 */
	while (other != rt ? !atomic_load(&nested_polls) : atomic_load(&helped_polls) < target)
		sched_yield();
	atomic_store(&hog_release, true);	/* the worker runs again, beside the free */
	blitz_runtime_free(rt);
	pthread_join(th, NULL);
	ck_assert_int_eq(j.ret, -ECANCELED);
	for (int i = 0; i < FREE_SPINNERS; i++)
		ck_assert_msg(atomic_load(&spinner_drops[i]) == 1, "spinner %d dropped %d times",
			      i, atomic_load(&spinner_drops[i]));
	ck_assert_int_eq(atomic_load(&nested_polls), _i & 1);
	if (_i & 1)
		ck_assert_int_eq(atomic_load(&nested_result), -ESHUTDOWN);
	if (other != rt)	/* its task waited on, not dropped, by rt's free */
		blitz_runtime_free(other);
	ck_assert(blitz_task_cancelled(j.t) && blitz_task_cancelled(never_done_b));
	blitz_task_release(j.t);
	blitz_task_release(never_done_b);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* A free from inside the runtime                                          */

/*
 * A task spawned from outside that completes on a worker after the free
 * began is on that worker's own list as the worker exits (core/sched/
 * owned.h): the worker's exit unlinks it, so the free's loop does not
 * find it on the live list and finish it a second time (a second drop,
 * and a reference given back twice).  The task spins until it sees the
 * free's flag (white-box), so it completes after the worker's last tick
 * began and before its exit: no timing is assumed.
 */
static _Atomic int late_drops;
static _Atomic bool late_polling;

static enum blitz_poll late_poll(void *arg, struct blitz_cx *cx)
{
	struct blitz_runtime *r = *(struct blitz_runtime **)arg;

	atomic_store(&late_polling, true);
	while (!atomic_load(&r->shutdown))
		sched_yield();
	return BLITZ_READY;
}
static void late_drop(void *arg) { atomic_fetch_add(&late_drops, 1); }
static const struct blitz_task_vtable late_vt = BLITZ_TASK_VTABLE(late_poll, late_drop);

START_TEST(outside_task_completed_during_free_is_dropped_once)
{
	struct blitz_runtime *r = test_runtime(1);
	int drops;

	atomic_store(&late_drops, 0);
	atomic_store(&late_polling, false);
	ck_assert_int_eq(blitz_spawn_detached(r, &late_vt, &r, sizeof(r)), 0);
	while (!atomic_load(&late_polling))
		sched_yield();
	blitz_runtime_free(r);
	drops = atomic_load(&late_drops);
	ck_assert_int_eq(drops, 1);
}
END_TEST

static struct blitz_runtime *freed_rt;

static int64_t free_in_a_job(void *arg)
{
	(void)arg;
	blitz_runtime_free(freed_rt);
	return 7;
}

/* self_freer - frees its own runtime from its poll (in a blocking job with @in_job). */
static enum blitz_poll self_freer_poll(void *arg, struct blitz_cx *cx)
{
	bool in_job = *(bool *)arg;
	struct blitz_blocking job;

	(void)cx;
	if (!in_job) {
		blitz_runtime_free(freed_rt);
		return BLITZ_READY;
	}
	blitz_blocking_init(&job, free_in_a_job, NULL);
	ck_assert_int_eq(blitz_spawn_blocking(freed_rt, &job), 0);
	ck_assert_int_eq(blitz_blocking_wait(&job), 7);
	return BLITZ_READY;
}
static const struct blitz_task_vtable self_freer_vt = BLITZ_TASK_VTABLE(self_freer_poll, NULL);

static void *joins_helping(void *arg)
{
	ck_assert_int_eq(blitz_join(arg), 0);
	return NULL;
}

/*
 * blitz_runtime_free called from inside the runtime it frees: from a task
 * on its worker (_i 0), from a task that a thread which is not a worker
 * polls while it helps (1), from a blocking job of it (2).  Each would
 * wait for itself (its worker's exit, that poll, that job); each is
 * refused with a message, and the runtime runs on and is freed later
 * from outside.
 */
START_TEST(free_from_inside_is_refused)
{
	struct blitz_task *t, *after;
	bool in_job = _i == 2;
	char said[512] = { 0 };
	int err[2], saved;
	pthread_t th;

	freed_rt = test_runtime(1);
	ck_assert_int_eq(pipe2(err, O_NONBLOCK | O_CLOEXEC), 0);
	saved = dup(2);
	ck_assert_int_eq(dup2(err[1], 2), 2);
	if (_i == 1)
		start_hog(freed_rt);
	t = blitz_spawn(freed_rt, &self_freer_vt, &in_job, sizeof(in_job));
	ck_assert_ptr_nonnull(t);
	if (_i == 1) {	/* the worker is held: the thread's help polls the task */
		ck_assert_int_eq(pthread_create(&th, NULL, joins_helping, t), 0);
		ck_assert_int_eq(pthread_join(th, NULL), 0);
		atomic_store(&hog_release, true);
	}
	ck_assert_int_eq(blitz_join(t), 0);
	dup2(saved, 2);
	close(saved);
	ck_assert_int_gt(read(err[0], said, sizeof(said) - 1), 0);
	ck_assert_msg(strstr(said, "blitz_runtime_free: called from inside that runtime"), "said: %s", said);
	/* It runs on. */
	atomic_store(&hog_running, false);
	atomic_store(&hog_release, true);
	after = blitz_spawn(freed_rt, &hog_vt, NULL, 0);
	ck_assert_ptr_nonnull(after);
	ck_assert_int_eq(blitz_join(after), 0);
	ck_assert(atomic_load(&hog_running));
	blitz_task_release(after);
	blitz_task_release(t);
	blitz_runtime_free(freed_rt);
	close(err[0]);
	close(err[1]);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Echo server stopped by SIGTERM under load                              */

struct totals {
	_Atomic long read, echoed, lost, conns;
};

struct gconn {
	struct blitz_co co;
	struct blitz_xfer x;
	struct blitz_waiter w;
	struct totals *tot;
	int fd;
	bool stopping;
	long n, read, echoed;
	char buf[16384];
};

/* A read that the shutdown token interrupts (data it already got is kept). */
static enum blitz_poll read_or_stop(struct gconn *c, struct blitz_cx *cx)
{
	struct blitz_cancel_token *tok = blitz_runtime_shutdown_token(NULL);

	if (blitz_read_poll(&c->x, c->fd, c->buf, sizeof(c->buf), cx) == BLITZ_READY) {
		blitz_cancel_token_waiter_cancel(tok, &c->w);
		return BLITZ_READY;
	}
	if (!c->stopping && blitz_cancel_token_cancelled_poll(tok, &c->w, cx) == BLITZ_READY) {
		c->stopping = true;
		blitz_net_cancel(&c->x);	/* its completion wakes us */
	}
	return BLITZ_PENDING;
}

static enum blitz_poll gconn_poll(void *arg, struct blitz_cx *cx)
{
	struct gconn *c = arg;

	BLITZ_CO_BEGIN(&c->co);
	while (!blitz_cancel_token_is_cancelled(blitz_runtime_shutdown_token(NULL))) {
		BLITZ_AWAIT(&c->co, read_or_stop(c, cx));
		if (c->x.result <= 0)
			break;		/* end of stream, error, or stopped */
		c->n = c->x.result;
		c->read += c->n;
		BLITZ_AWAIT(&c->co, blitz_write_all_poll(&c->x, c->fd, c->buf, (size_t)c->n, cx));
		if (c->x.result < 0)
			break;
		c->echoed += c->x.result;
	}
	/* FIN after the echoes; then discard until the client closes. */
	shutdown(c->fd, SHUT_WR);
	for (;;) {
		BLITZ_AWAIT(&c->co, blitz_read_poll(&c->x, c->fd, c->buf, sizeof(c->buf), cx));
		if (c->x.result <= 0)
			break;
	}
	close(c->fd);
	c->fd = -1;
	atomic_fetch_add(&c->tot->read, c->read);
	atomic_fetch_add(&c->tot->echoed, c->echoed);
	atomic_fetch_add(&c->tot->lost, c->read - c->echoed);
	BLITZ_CO_END(&c->co);
}

static void gconn_drop(void *arg)
{
	struct gconn *c = arg;

	blitz_net_cancel(&c->x);
	blitz_cancel_token_waiter_cancel(blitz_runtime_shutdown_token(NULL), &c->w);
	if (c->fd >= 0)
		close(c->fd);
}
static const struct blitz_task_vtable gconn_vt = BLITZ_TASK_VTABLE(gconn_poll, gconn_drop);

struct gaccept {
	struct blitz_co co;
	struct blitz_accept a;
	struct blitz_waiter w;
	struct totals *tot;
	int lfd;
	bool stopping;
};

static enum blitz_poll accept_or_stop(struct gaccept *s, struct blitz_cx *cx)
{
	struct blitz_cancel_token *tok = blitz_runtime_shutdown_token(NULL);

	if (blitz_accept_poll(&s->a, s->lfd, cx) == BLITZ_READY) {
		blitz_cancel_token_waiter_cancel(tok, &s->w);
		return BLITZ_READY;
	}
	if (!s->stopping && blitz_cancel_token_cancelled_poll(tok, &s->w, cx) == BLITZ_READY) {
		s->stopping = true;
		blitz_net_cancel(&s->a);
	}
	return BLITZ_PENDING;
}

static enum blitz_poll gaccept_poll(void *arg, struct blitz_cx *cx)
{
	struct gaccept *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	while (!s->stopping) {
		BLITZ_AWAIT(&s->co, accept_or_stop(s, cx));
		if (s->a.result >= 0) {		/* even one that won the race with the stop */
			struct gconn c = { .fd = s->a.result, .tot = s->tot };

			atomic_fetch_add(&s->tot->conns, 1);
			ck_assert_int_eq(blitz_spawn_detached(NULL, &gconn_vt, &c, sizeof(c)), 0);
		}
	}
	BLITZ_CO_END(&s->co);
}

static void gaccept_drop(void *arg)
{
	struct gaccept *s = arg;

	blitz_net_cancel(&s->a);
	blitz_cancel_token_waiter_cancel(blitz_runtime_shutdown_token(NULL), &s->w);
}
static const struct blitz_task_vtable gaccept_vt = BLITZ_TASK_VTABLE(gaccept_poll, gaccept_drop);

/* Waits for SIGTERM on the stream, then starts the graceful shutdown. */
struct sigwatch {
	struct blitz_co co;
	struct blitz_signals *sig;
	struct blitz_signal_recv r;
};

static enum blitz_poll sigwatch_poll(void *arg, struct blitz_cx *cx)
{
	struct sigwatch *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	do {
		BLITZ_AWAIT(&s->co, blitz_signals_recv_poll(s->sig, &s->r, cx));
	} while (s->r.result != SIGTERM);
	blitz_cancel_token_cancel(blitz_runtime_shutdown_token(NULL));
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable sigwatch_vt = BLITZ_TASK_VTABLE(sigwatch_poll, NULL);

/* A client connection on a plain thread: sends a patterned stream, checks the echo. */
struct client {
	pthread_t tid;
	int k;
	struct sockaddr_storage to;
	socklen_t tolen;
	long sent, rcvd;
	bool eof, mismatch;
	int err;
	_Atomic long progress;		/* rcvd, for the test thread */
};

static unsigned char pattern(int k, long i)
{
	return (unsigned char)(i * 131 + k * 7 + (i >> 9));
}

#define WINDOW (256 * 1024)

static void *client_main(void *arg)
{
	struct client *c = arg;
	unsigned char out[1000], in[8192];
	int fd = socket(c->to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&c->to, c->tolen)) {
		c->err = errno;
		goto out;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (!c->eof && !c->err) {
		bool sending = c->sent - c->rcvd < WINDOW;
		struct pollfd p = { .fd = fd, .events = POLLIN | (sending ? POLLOUT : 0) };

		if (poll(&p, 1, 60000) <= 0) {
			c->err = ETIMEDOUT;
			break;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(fd, in, sizeof(in));

			if (r == 0) {
				c->eof = true;
			} else if (r < 0 && errno != EAGAIN) {
				c->err = errno;
			} else if (r > 0) {
				for (ssize_t i = 0; i < r; i++)
					if (in[i] != pattern(c->k, c->rcvd + i))
						c->mismatch = true;
				c->rcvd += r;
				atomic_store(&c->progress, c->rcvd);
			}
		}
		if (sending && (p.revents & POLLOUT) && !c->eof) {
			ssize_t w;

			for (size_t i = 0; i < sizeof(out); i++)
				out[i] = pattern(c->k, c->sent + (long)i);
			w = send(fd, out, sizeof(out), MSG_NOSIGNAL);
			if (w > 0)
				c->sent += w;
			/* EPIPE/ECONNRESET: the server is gone; the read side says how. */
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

START_TEST(echo_server_sigterm_under_load_loses_nothing)
{
	enum { CLIENTS = 16 };
	static struct client cl[CLIENTS];
	struct totals tot = { 0 };
	struct gaccept ga = { .tot = &tot };
	struct sigwatch sw = { 0 };
	struct blitz_runtime *rt;
	struct blitz_task *watcher;
	struct blitz_addr a, bound;
	sigset_t set;
	long sent = 0, rcvd = 0;

	/* The rule (blitz/signal.h): blocked before any thread exists. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	ck_assert_int_eq(blitz_signals_block(&set), 0);
	sw.sig = blitz_signals_open(&set);
	ck_assert_ptr_nonnull(sw.sig);
	rt = test_runtime_on(_i);
	SKIP_UNLESS_BACKEND(rt, _i);
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	ga.lfd = blitz_listen(&a, 128);
	ck_assert_int_ge(ga.lfd, 0);
	ck_assert_int_eq(blitz_addr_local(ga.lfd, &bound), 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &gaccept_vt, &ga, sizeof(ga)), 0);
	watcher = blitz_spawn(rt, &sigwatch_vt, &sw, sizeof(sw));
	for (int k = 0; k < CLIENTS; k++) {
		cl[k] = (struct client){ .k = k };
		memcpy(&cl[k].to, &bound.ss, sizeof(bound.ss));
		cl[k].tolen = bound.len;
		ck_assert_int_eq(pthread_create(&cl[k].tid, NULL, client_main, &cl[k]), 0);
	}
	/* Load: every connection has had echoes back, and keeps sending. */
	for (int k = 0; k < CLIENTS; k++)
		for (int i = 0; i < 20000 && atomic_load(&cl[k].progress) < 100000; i++)
			usleep(1000);
	ck_assert_int_eq(kill(getpid(), SIGTERM), 0);
	ck_assert_int_eq(blitz_join(watcher), 0);
	blitz_task_release(watcher);
	ck_assert_int_eq(blitz_runtime_shutdown(rt, 60 * BLITZ_NSEC_PER_SEC), 0);
	for (int k = 0; k < CLIENTS; k++) {
		pthread_join(cl[k].tid, NULL);
		ck_assert_msg(cl[k].err == 0, "client %d: %s", k, strerror(cl[k].err));
		ck_assert_msg(cl[k].eof, "client %d saw no end of stream", k);
		ck_assert_msg(!cl[k].mismatch, "client %d got bytes it did not send", k);
		sent += cl[k].sent;
		rcvd += cl[k].rcvd;
	}
	ck_assert_int_eq(atomic_load(&tot.conns), CLIENTS);
	ck_assert_int_eq(atomic_load(&tot.lost), 0);
	ck_assert_int_eq(atomic_load(&tot.read), atomic_load(&tot.echoed));
	ck_assert_int_eq(rcvd, atomic_load(&tot.echoed));
	ck_assert_int_ge(rcvd, CLIENTS * 100000L);
	printf("shutdown: %s: %d connections, sent %ld, server read %ld, echoed %ld, client got %ld\n",
	       test_backend_name(_i), CLIENTS, sent, atomic_load(&tot.read), atomic_load(&tot.echoed), rcvd);
	ck_assert_msg(sent > rcvd, "SIGTERM came mid-stream: sent %ld, echoed %ld", sent, rcvd);
	close(ga.lfd);
	blitz_signals_close(sw.sig);
}
END_TEST

static Suite *shutdown_suite(void)
{
	Suite *s = suite_create("shutdown");
	TCase *tc = TCASE("graceful", 120);

	tcase_add_loop_test(tc, token_awaiters_finish_and_drain_returns, 0, 3);
	tcase_add_loop_test(tc, drain_deadline_then_free_cancels, 0, 3);
	tcase_add_loop_test(tc, free_ends_joins_from_outside, 0, 20);
	tcase_add_loop_test(tc, outside_task_completed_during_free_is_dropped_once, 0, 10);
	tcase_add_loop_test(tc, free_from_inside_is_refused, 0, 3);
	tcase_add_loop_test(tc, echo_server_sigterm_under_load_loses_nothing, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("shutdown", shutdown_suite)
