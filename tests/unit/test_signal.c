// SPDX-License-Identifier: MIT
/*
 * test_signal.c - signal streams on each backend: a signal sent to the
 * process is read by the stream, no handler runs on any thread, and every
 * runtime thread blocks the asynchronous signals from birth.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

static bool backend_is(struct blitz_runtime *rt, int i)
{
	return !strcmp(blitz_io_backend_name(rt), test_backend_name(i));
}

static _Atomic int handled;	/* signals a handler ran for: must stay 0 */

static void count_handler(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void install_counting_handlers(void)
{
	struct sigaction sa = { .sa_handler = count_handler };
	int sigs[] = { SIGUSR1, SIGTERM, SIGHUP, SIGINT, SIGCHLD };

	sigemptyset(&sa.sa_mask);
	atomic_store(&handled, 0);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		ck_assert_int_eq(sigaction(sigs[i], &sa, NULL), 0);
}

/*
 * SigBlk of thread @tid from /proc (a 64-bit mask, bit n-1 = signal n).
 * Returns false if the thread has gone.
 */
static bool thread_sigblk(const char *tid, unsigned long long *mask)
{
	char path[300], line[256];
	FILE *f;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", mask) == 1)
			found = true;
	fclose(f);
	return found;
}

/* Is @tid one of the runtime's threads (named blitz-worker<N>, blitz-blocking)? */
static bool runtime_thread(const char *tid)
{
	char path[300], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strncmp(comm, "blitz-worker", 12) || !strncmp(comm, "blitz-blocking", 14);
}

/*
 * The runtime's threads, once @expected of them have named themselves
 * (after glibc gave them their real mask), block every signal of @sigs
 * and not SIGSEGV.  Other threads (main, a sanitizer's, io_uring's) are
 * not looked at.  Returns how many runtime threads there are.
 */
static int check_runtime_threads_block(const int *sigs, unsigned n, int expected)
{
	int threads = 0;

	for (int tries = 0; tries < 5000 && threads < expected; tries++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		ck_assert_ptr_nonnull(d);
		threads = 0;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.' && runtime_thread(e->d_name))
				threads++;
		closedir(d);
		if (threads < expected)
			usleep(1000);
	}
	{
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		ck_assert_ptr_nonnull(d);
		threads = 0;
		while ((e = readdir(d))) {
			unsigned long long m;

			if (e->d_name[0] == '.' || !runtime_thread(e->d_name) ||
			    !thread_sigblk(e->d_name, &m))
				continue;
			threads++;
			for (unsigned i = 0; i < n; i++)
				ck_assert_msg(m & (1ULL << (sigs[i] - 1)),
					      "thread %s does not block signal %d (SigBlk %llx)",
					      e->d_name, sigs[i], m);
			ck_assert_msg(!(m & (1ULL << (SIGSEGV - 1))), "thread %s blocks SIGSEGV",
				      e->d_name);
		}
		closedir(d);
	}
	return threads;
}

/* Receives `want` signals, recording them in order. */
struct sigrecv {
	struct blitz_co co;
	struct blitz_signals *sig;
	struct blitz_signal_recv r;
	int want;
	_Atomic int got;		/* read by the test thread */
	int signo[8];
	int pid[8];
};

static enum blitz_poll sigrecv_poll(void *arg, struct blitz_cx *cx)
{
	struct sigrecv *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	while (atomic_load(&s->got) < s->want) {
		BLITZ_AWAIT(&s->co, blitz_signals_recv_poll(s->sig, &s->r, cx));
		ck_assert_int_gt(s->r.result, 0);
		s->signo[atomic_load(&s->got)] = s->r.result;
		s->pid[atomic_load(&s->got)] = (int)s->r.info.ssi_pid;
		/* Release: the test thread reads signo[] after seeing got. */
		atomic_fetch_add_explicit(&s->got, 1, memory_order_release);
	}
	BLITZ_CO_END(&s->co);
}

static void sigrecv_drop(void *arg)
{
	struct sigrecv *s = arg;

	blitz_signals_recv_cancel(&s->r);
}
static const struct blitz_task_vtable sigrecv_vt = BLITZ_TASK_VTABLE(sigrecv_poll, sigrecv_drop);

static void wait_got(struct blitz_task *t, int n)
{
	struct sigrecv *s = blitz_task_state(t);

	for (int i = 0; i < 10000 && atomic_load_explicit(&s->got, memory_order_acquire) < n; i++)
		usleep(1000);
	ck_assert_int_ge(atomic_load_explicit(&s->got, memory_order_acquire), n);
}

START_TEST(signals_reach_the_stream_not_the_threads)
{
	static const int sent[] = { SIGUSR1, SIGTERM, SIGHUP, SIGINT, SIGCHLD };
	const unsigned n = sizeof(sent) / sizeof(sent[0]);
	struct sigrecv s = { .want = (int)n };
	struct blitz_runtime *rt;
	struct blitz_task *t;
	sigset_t set;

	install_counting_handlers();
	sigemptyset(&set);
	for (unsigned i = 0; i < n; i++)
		sigaddset(&set, sent[i]);
	/* The rule: the main thread blocks them before any thread exists. */
	ck_assert_int_eq(blitz_signals_block(&set), 0);
	s.sig = blitz_signals_open(&set);
	ck_assert_ptr_nonnull(s.sig);
	rt = test_runtime_on(_i);
	if (!backend_is(rt, _i)) {
		blitz_runtime_free(rt);
		blitz_signals_close(s.sig);
		SKIP("%s unavailable here", test_backend_name(_i));
	}
	t = blitz_spawn(rt, &sigrecv_vt, &s, sizeof(s));
	ck_assert_ptr_nonnull(t);
	usleep(20000);		/* the receiver waits, the workers sleep */
	ck_assert_int_eq(check_runtime_threads_block(sent, n, 2), 2);
	/* One at a time: standard signals pending together would merge. */
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(kill(getpid(), sent[i]), 0);
		wait_got(t, (int)i + 1);
	}
	ck_assert_int_eq(blitz_join(t), 0);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(((struct sigrecv *)blitz_task_state(t))->signo[i], sent[i]);
		ck_assert_int_eq(((struct sigrecv *)blitz_task_state(t))->pid[i], getpid());
	}
	ck_assert_int_eq(atomic_load(&handled), 0);
	blitz_task_release(t);
	blitz_runtime_free(rt);
	blitz_signals_close(s.sig);
}
END_TEST

/* A burst of real-time signals queues: every one is received, in order. */
START_TEST(realtime_signals_queue)
{
	struct sigrecv s = { .want = 8 };
	struct blitz_runtime *rt;
	struct blitz_task *t;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 1);
	ck_assert_int_eq(blitz_signals_block(&set), 0);
	s.sig = blitz_signals_open(&set);
	ck_assert_ptr_nonnull(s.sig);
	rt = test_runtime_on(_i);
	if (!backend_is(rt, _i)) {
		blitz_runtime_free(rt);
		blitz_signals_close(s.sig);
		SKIP("%s unavailable here", test_backend_name(_i));
	}
	for (int i = 0; i < 8; i++) {
		union sigval v = { .sival_int = i };

		ck_assert_int_eq(sigqueue(getpid(), SIGRTMIN + 1, v), 0);
	}
	t = blitz_spawn(rt, &sigrecv_vt, &s, sizeof(s));
	ck_assert_int_eq(blitz_join(t), 0);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(((struct sigrecv *)blitz_task_state(t))->signo[i], SIGRTMIN + 1);
	blitz_task_release(t);
	blitz_runtime_free(rt);
	blitz_signals_close(s.sig);
}
END_TEST

static int64_t nothing(void *arg)
{
	(void)arg;
	return 7;
}

/*
 * Without any help from main(), the runtime's threads (two workers and a
 * blocking-pool thread) block the asynchronous signals.
 */
START_TEST(runtime_threads_block_async_signals)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE,
				    SIGALRM, SIGQUIT, SIGWINCH };
	struct blitz_runtime *rt = test_runtime_on(1);
	struct sigrecv s = { .want = 0 };
	struct blitz_blocking job;

	ck_assert_int_eq(blitz_block_on(rt, &sigrecv_vt, &s, sizeof(s)), 0);
	blitz_blocking_init(&job, nothing, NULL);
	ck_assert_int_eq(blitz_spawn_blocking(rt, &job), 0);
	ck_assert_int_eq(blitz_blocking_wait(&job), 7);
	ck_assert_int_eq(check_runtime_threads_block(sigs, sizeof(sigs) / sizeof(sigs[0]), 3), 3);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(synchronous_signals_are_refused)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGSEGV);
	errno = 0;
	ck_assert_ptr_null(blitz_signals_open(&set));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* A receive pending at cancellation or at shutdown is cancelled and freed. */
START_TEST(pending_receive_cancel_and_shutdown)
{
	struct sigrecv s = { .want = 1 };
	struct blitz_runtime *rt;
	struct blitz_task *t;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	ck_assert_int_eq(blitz_signals_block(&set), 0);
	s.sig = blitz_signals_open(&set);
	ck_assert_ptr_nonnull(s.sig);
	rt = test_runtime_on(_i);
	if (!backend_is(rt, _i)) {
		blitz_runtime_free(rt);
		blitz_signals_close(s.sig);
		SKIP("%s unavailable here", test_backend_name(_i));
	}
	t = blitz_spawn(rt, &sigrecv_vt, &s, sizeof(s));
	ck_assert_int_eq(blitz_spawn_detached(rt, &sigrecv_vt, &s, sizeof(s)), 0);
	usleep(20000);
	blitz_task_cancel(t);
	ck_assert_int_eq(blitz_join(t), -ECANCELED);
	blitz_task_release(t);
	blitz_runtime_free(rt);		/* the detached one is still waiting */
	blitz_signals_close(s.sig);
}
END_TEST

static Suite *signal_suite(void)
{
	Suite *s = suite_create("signal");
	TCase *tc = TCASE("stream", 60);

	tcase_add_loop_test(tc, signals_reach_the_stream_not_the_threads, 0, 3);
	tcase_add_loop_test(tc, realtime_signals_queue, 0, 3);
	tcase_add_test(tc, runtime_threads_block_async_signals);
	tcase_add_test(tc, synchronous_signals_are_refused);
	tcase_add_loop_test(tc, pending_receive_cancel_and_shutdown, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("signal", signal_suite)
