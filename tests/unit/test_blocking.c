// SPDX-License-Identifier: MIT
/*
 * test_blocking.c - the blocking pool: jobs from tasks and from outside,
 * 10,000 jobs each run exactly once, the cap, the pool growing and then
 * shrinking after the idle timeout, cancel, shutdown with jobs queued and
 * running, statistics.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

static struct blitz_runtime *rt_pool(unsigned max_threads, unsigned idle_ms)
{
	struct blitz_config c;
	struct blitz_runtime *rt;

	blitz_config_default(&c);
	c.workers = 2;
	c.max_blocking_threads = max_threads;
	c.blocking_idle_ms = idle_ms;
	rt = blitz_runtime_new(&c);
	ck_assert_ptr_nonnull(rt);
	return rt;
}

/*
 * An idle timeout no test outlasts (one day): tests that count the threads
 * started assume none exited, which a 10 s default makes a bet on how fast
 * the machine is.
 */
#define NO_IDLE_EXIT BLITZ_BLOCKING_IDLE_MS_LIMIT

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------------- */
/* 10,000 jobs                                                             */

#define NJOBS 10000
static _Atomic int ran[NJOBS];
static _Atomic int running, most_running;

static int64_t square(void *arg)
{
	intptr_t v = (intptr_t)arg;
	int now = atomic_fetch_add(&running, 1) + 1, most = atomic_load(&most_running);

	while (now > most && !atomic_compare_exchange_weak(&most_running, &most, now))
		;
	atomic_fetch_add(&ran[v], 1);
	atomic_fetch_sub(&running, 1);
	return (int64_t)v * v;
}

static void reset_counts(void)
{
	for (int i = 0; i < NJOBS; i++)
		atomic_store(&ran[i], 0);
	atomic_store(&running, 0);
	atomic_store(&most_running, 0);
}

static void assert_each_ran_once(int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_msg(atomic_load(&ran[i]) == 1, "job %d ran %d times", i, atomic_load(&ran[i]));
}

/* One task awaits `n` jobs in turn, from job `base` on. */
struct jobber {
	struct blitz_co co;
	struct blitz_blocking job;
	int base, n, i;
	int64_t bad;
};

static enum blitz_poll jobber_poll(void *arg, struct blitz_cx *cx)
{
	struct jobber *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		blitz_blocking_init(&s->job, square, (void *)(intptr_t)(s->base + s->i));
		BLITZ_AWAIT(&s->co, blitz_blocking_poll(&s->job, cx));
		if (s->job.result != (int64_t)(s->base + s->i) * (s->base + s->i))
			s->bad++;
	}
	BLITZ_CO_END(&s->co);
}

static void jobber_drop(void *arg)
{
	blitz_blocking_cancel(&((struct jobber *)arg)->job);
}

static const struct blitz_task_vtable jobber_vt = BLITZ_TASK_VTABLE(jobber_poll, jobber_drop);

START_TEST(ten_thousand_jobs_from_tasks)
{
	struct blitz_runtime *rt = rt_pool(16, NO_IDLE_EXIT);
	struct blitz_task *t[100];
	struct blitz_blocking_stats st;

	reset_counts();
	for (int i = 0; i < 100; i++) {
		struct jobber j = { .base = i * 100, .n = 100 };

		t[i] = blitz_spawn(rt, &jobber_vt, &j, sizeof(j));
		ck_assert_ptr_nonnull(t[i]);
	}
	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(blitz_join(t[i]), 0);
		ck_assert_int_eq(((struct jobber *)blitz_task_state(t[i]))->bad, 0);
		blitz_task_release(t[i]);
	}
	assert_each_ran_once(NJOBS);
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_ge(st.threads, 1);
	ck_assert_uint_le(st.threads, 16);
	ck_assert_uint_le(st.threads_started, 16);	/* none exited */
	ck_assert_uint_eq(st.jobs_done, NJOBS);
	ck_assert_uint_eq(st.queued, 0);
	ck_assert_int_le(atomic_load(&most_running), 16);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(ten_thousand_jobs_from_outside)
{
	struct blitz_runtime *rt = rt_pool(8, NO_IDLE_EXIT);
	struct blitz_blocking *jobs = calloc(NJOBS, sizeof(*jobs));
	struct blitz_blocking_stats st;

	ck_assert_ptr_nonnull(jobs);
	reset_counts();
	for (int i = 0; i < NJOBS; i++) {
		blitz_blocking_init(&jobs[i], square, (void *)(intptr_t)i);
		ck_assert_int_eq(blitz_spawn_blocking(rt, &jobs[i]), 0);
	}
	for (int i = 0; i < NJOBS; i++)
		ck_assert_int_eq(blitz_blocking_wait(&jobs[i]), (int64_t)i * i);
	assert_each_ran_once(NJOBS);
	ck_assert_int_le(atomic_load(&most_running), 8);
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_le(st.threads_started, 8);
	ck_assert_uint_eq(st.max_threads, 8);
	blitz_runtime_free(rt);
	free(jobs);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Growing to the cap, shrinking after the idle timeout                    */

/* A gate jobs wait at until the test opens it. */
static _Atomic int gate_open, at_gate;

static int64_t wait_at_gate(void *arg)
{
	atomic_fetch_add(&at_gate, 1);
	while (!atomic_load(&gate_open))
		sleep_ms(1);
	return (int64_t)(intptr_t)arg;
}

static void gate_reset(void)
{
	atomic_store(&gate_open, 0);
	atomic_store(&at_gate, 0);
}

/* wait_until - poll @cond every ms for at most @ms (scaled); false on timeout. */
#define wait_until(cond, ms) ({						\
		bool ok_ = false;					\
		for (double t_ = 0; t_ < (ms) * test_timeout_scale(); t_++) { \
			if ((cond)) { ok_ = true; break; }		\
			sleep_ms(1);					\
		}							\
		ok_; })

static unsigned pool_threads(struct blitz_runtime *rt)
{
	struct blitz_blocking_stats st;

	blitz_blocking_stats(rt, &st);
	return st.threads;
}

START_TEST(pool_grows_then_shrinks_after_idle_timeout)
{
	struct blitz_runtime *rt = rt_pool(6, 100);
	struct blitz_blocking jobs[10];
	struct blitz_blocking_stats st;

	gate_reset();
	ck_assert_uint_eq(pool_threads(rt), 0);		/* no thread before a job */
	for (int i = 0; i < 10; i++) {
		blitz_blocking_init(&jobs[i], wait_at_gate, (void *)(intptr_t)i);
		ck_assert_int_eq(blitz_spawn_blocking(rt, &jobs[i]), 0);
	}
	/* Six run at once (the cap), four wait in the queue. */
	ck_assert(wait_until(atomic_load(&at_gate) == 6, 5000));
	sleep_ms(20);
	ck_assert_int_eq(atomic_load(&at_gate), 6);
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_eq(st.threads, 6);
	ck_assert_uint_eq(st.idle, 0);
	ck_assert_uint_eq(st.queued, 4);
	atomic_store(&gate_open, 1);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(blitz_blocking_wait(&jobs[i]), i);
	/* Idle now; gone after 100 ms (generous bound: 5 s). */
	ck_assert(wait_until(pool_threads(rt) == 0, 5000));
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_eq(st.idle, 0);
	ck_assert_uint_eq(st.threads_started, 6);
	ck_assert_uint_eq(st.jobs_done, 10);
	/* And it grows again on demand. */
	blitz_blocking_init(&jobs[0], wait_at_gate, (void *)7);
	ck_assert_int_eq(blitz_spawn_blocking(rt, &jobs[0]), 0);
	ck_assert_int_eq(blitz_blocking_wait(&jobs[0]), 7);
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_eq(st.threads_started, 7);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(idle_threads_are_reused)
{
	struct blitz_runtime *rt = rt_pool(4, NO_IDLE_EXIT);
	struct blitz_blocking job;
	struct blitz_blocking_stats st;

	gate_reset();
	atomic_store(&gate_open, 1);
	for (int i = 0; i < 200; i++) {
		blitz_blocking_init(&job, wait_at_gate, (void *)(intptr_t)i);
		ck_assert_int_eq(blitz_spawn_blocking(rt, &job), 0);
		ck_assert_int_eq(blitz_blocking_wait(&job), i);
		/* The thread goes idle just after completing: let it get there. */
		ck_assert(wait_until(({ blitz_blocking_stats(rt, &st); st.idle == st.threads; }), 5000));
	}
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_eq(st.threads_started, 1);	/* one job at a time: one thread */
	ck_assert_uint_eq(st.threads, 1);
	ck_assert_uint_eq(st.idle, 1);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Cancel and shutdown                                                     */

static _Atomic int must_not_run_calls;

static int64_t must_not_run(void *arg)
{
	atomic_fetch_add(&must_not_run_calls, 1);
	return 0;
}

START_TEST(cancel_takes_a_queued_job_back)
{
	struct blitz_runtime *rt = rt_pool(1, 0);
	struct blitz_blocking a, b;

	gate_reset();
	atomic_store(&must_not_run_calls, 0);
	blitz_blocking_init(&a, wait_at_gate, (void *)1);
	blitz_blocking_init(&b, must_not_run, NULL);
	ck_assert_int_eq(blitz_spawn_blocking(rt, &a), 0);
	ck_assert_int_eq(blitz_spawn_blocking(rt, &b), 0);
	ck_assert(wait_until(atomic_load(&at_gate) == 1, 5000));
	blitz_blocking_cancel(&a);		/* running: not interrupted */
	blitz_blocking_cancel(&b);		/* queued behind a: taken back */
	ck_assert(blitz_blocking_done(&b));
	ck_assert_int_eq(blitz_blocking_wait(&b), -ECANCELED);
	ck_assert(!blitz_blocking_done(&a));
	atomic_store(&gate_open, 1);
	ck_assert_int_eq(blitz_blocking_wait(&a), 1);
	blitz_blocking_cancel(&a);		/* done: a no-op */
	ck_assert_int_eq(a.result, 1);
	blitz_runtime_free(rt);
	ck_assert_int_eq(atomic_load(&must_not_run_calls), 0);
}
END_TEST

/* A task awaiting a job is cancelled: its drop takes the job back. */
START_TEST(cancelled_task_takes_its_job_back)
{
	struct blitz_runtime *rt = rt_pool(1, 0);
	struct blitz_blocking a;
	struct jobber j = { .base = 0, .n = 1 };
	struct blitz_task *t;

	gate_reset();
	reset_counts();
	blitz_blocking_init(&a, wait_at_gate, (void *)1);
	ck_assert_int_eq(blitz_spawn_blocking(rt, &a), 0);	/* holds the only thread */
	ck_assert(wait_until(atomic_load(&at_gate) == 1, 5000));
	t = blitz_spawn(rt, &jobber_vt, &j, sizeof(j));
	ck_assert(wait_until(({ struct blitz_blocking_stats st_; blitz_blocking_stats(rt, &st_);
				st_.queued == 1; }), 5000));
	blitz_task_cancel(t);
	ck_assert_int_eq(blitz_join(t), -ECANCELED);
	blitz_task_release(t);
	atomic_store(&gate_open, 1);
	ck_assert_int_eq(blitz_blocking_wait(&a), 1);
	ck_assert_int_eq(atomic_load(&ran[0]), 0);
	blitz_runtime_free(rt);
}
END_TEST

/* Opens the gate once the shutdown has cancelled job b. */
static void *open_gate_when_done(void *arg)
{
	while (!blitz_blocking_done(arg))
		sleep_ms(1);
	atomic_store(&gate_open, 1);
	return NULL;
}

START_TEST(shutdown_cancels_queued_and_waits_for_running)
{
	struct blitz_runtime *rt = rt_pool(1, 0);
	struct blitz_blocking a, b;
	struct jobber j = { .base = 0, .n = 1 };
	pthread_t opener;

	gate_reset();
	atomic_store(&must_not_run_calls, 0);
	reset_counts();
	blitz_blocking_init(&a, wait_at_gate, (void *)5);
	blitz_blocking_init(&b, must_not_run, NULL);
	ck_assert_int_eq(blitz_spawn_blocking(rt, &a), 0);
	ck_assert_int_eq(blitz_spawn_blocking(rt, &b), 0);
	ck_assert(wait_until(atomic_load(&at_gate) == 1, 5000));
	/* Two tasks wait on queued jobs: shutdown must free them. */
	ck_assert_int_eq(blitz_spawn_detached(rt, &jobber_vt, &j, sizeof(j)), 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &jobber_vt, &j, sizeof(j)), 0);
	ck_assert(wait_until(({ struct blitz_blocking_stats st_; blitz_blocking_stats(rt, &st_);
				st_.queued == 3; }), 5000));
	/* a runs until the shutdown has cancelled b: shutdown waits for it. */
	ck_assert_int_eq(pthread_create(&opener, NULL, open_gate_when_done, &b), 0);
	blitz_runtime_free(rt);
	pthread_join(opener, NULL);
	ck_assert(blitz_blocking_done(&a));
	ck_assert_int_eq(a.result, 5);
	ck_assert_int_eq(blitz_blocking_wait(&b), -ECANCELED);
	ck_assert_int_eq(atomic_load(&must_not_run_calls), 0);
	ck_assert_int_eq(atomic_load(&ran[0]), 0);
}
END_TEST

START_TEST(shutdown_with_idle_and_exiting_threads)
{
	/* Threads exit (1 ms idle) while others are started: nothing leaks. */
	struct blitz_runtime *rt = rt_pool(4, 1);
	struct blitz_blocking jobs[4];

	gate_reset();
	atomic_store(&gate_open, 1);
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 4; i++) {
			blitz_blocking_init(&jobs[i], wait_at_gate, (void *)(intptr_t)i);
			ck_assert_int_eq(blitz_spawn_blocking(rt, &jobs[i]), 0);
		}
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(blitz_blocking_wait(&jobs[i]), i);
		if (round % 10 == 0)
			sleep_ms(3);
	}
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(blocking_env_knobs_reach_the_pool)
{
	struct blitz_runtime *rt;
	struct blitz_blocking_stats st;

	setenv("BLITZ_BLOCKING_THREADS", "3", 1);
	setenv("BLITZ_BLOCKING_IDLE_MS", "20", 1);
	rt = blitz_runtime_new(NULL);
	unsetenv("BLITZ_BLOCKING_THREADS");
	unsetenv("BLITZ_BLOCKING_IDLE_MS");
	ck_assert_ptr_nonnull(rt);
	ck_assert_uint_eq(blitz_runtime_config(rt)->blocking_idle_ms, 20);
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_eq(st.max_threads, 3);
	blitz_runtime_free(rt);
}
END_TEST

static Suite *blocking_suite(void)
{
	Suite *s = suite_create("blocking");
	TCase *tc = TCASE("pool", 60);

	tcase_add_test(tc, ten_thousand_jobs_from_tasks);
	tcase_add_test(tc, ten_thousand_jobs_from_outside);
	tcase_add_test(tc, pool_grows_then_shrinks_after_idle_timeout);
	tcase_add_test(tc, idle_threads_are_reused);
	tcase_add_test(tc, cancel_takes_a_queued_job_back);
	tcase_add_test(tc, cancelled_task_takes_its_job_back);
	tcase_add_test(tc, shutdown_cancels_queued_and_waits_for_running);
	tcase_add_test(tc, shutdown_with_idle_and_exiting_threads);
	tcase_add_test(tc, blocking_env_knobs_reach_the_pool);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("blocking", blocking_suite)
