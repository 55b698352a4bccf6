// SPDX-License-Identifier: MIT
/*
 * test_event_log.c - the event log of a thread that is not a worker
 * (core/trace/event_log.c), white-box: the process's exit hands over the
 * records another thread's log holds (events_outside_exit), and that
 * thread, running on, flushes only what it wrote after, so that a tracer
 * gets each record once.  event_flush's semaphore is raised as the
 * kernel raises it when a tracer attaches; no tracer reads the probe, so
 * the test reads the log itself: its flush number and the records left
 * in it after a flush (a flush does not clear them).  The whole
 * hand-over, with blitz-events reading it, is tests/scripts/tools-exit.sh.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "../../core/clock.h"
#include "../../core/probes.h"
#include "../../core/trace/event_log.h"
#include "suites.h"

#ifdef BLITZ_EVENT_FLUSH_UNGUARDED	/* CONFIG_PROBES=y: the semaphore exists */
#define HAVE_SEMAPHORE 1
/* Not instrumented under TSan: the kernel's write is invisible to it (test_histogram.c). */
__attribute__((no_sanitize("thread"))) static void tracer_attach(void)
{
	blitz_event_flush_semaphore++;
}

__attribute__((no_sanitize("thread"))) static void tracer_detach(void)
{
	blitz_event_flush_semaphore--;
}
#else
#define HAVE_SEMAPHORE 0
static void tracer_attach(void) { }
static void tracer_detach(void) { }
#endif

enum { HANDED = 10, AFTER = 5, FAKE_RUNTIME = 7 };

/* What the logging thread saw, checked by the test's thread after the join. */
struct seen {
	atomic_int phase;		/* 1: HANDED records written; 2: handed over; 3: done */
	bool logged;
	unsigned long long seq_after_hand_over, seq_after_flush;
	uint32_t len_before_flush, len_after_flush;
	unsigned long long first_tasks[AFTER];	/* the log's first records after its flush */
};

static void wait_phase(atomic_int *phase, int want)
{
	struct timespec ms = { 0, 1000000 };

	while (atomic_load(phase) < want)
		nanosleep(&ms, NULL);
}

/* log_tasks - records of tasks @first..@first+@n-1 in the thread's outside log. */
static bool log_tasks(unsigned long long first, int n)
{
	for (int i = 0; i < n; i++) {
		struct worker_events *e = events_outside_log(FAKE_RUNTIME, 1);

		if (!e)
			return false;
		events_log(e, BLITZ_EVENT_SPAWN, first + i, 0, 0, 0);
		events_outside_publish(e);
	}
	return true;
}

static void *logging_thread(void *arg)
{
	struct seen *s = arg;
	struct worker_events *e;

	s->logged = log_tasks(1, HANDED);
	atomic_store(&s->phase, 1);
	if (!s->logged)
		return NULL;
	wait_phase(&s->phase, 2);
	s->logged = log_tasks(HANDED + 1, AFTER);
	e = events_outside_cur;
	s->seq_after_hand_over = e->log.head.seq;
	s->len_before_flush = e->len;
	events_outside_flush();
	s->seq_after_flush = e->log.head.seq;
	s->len_after_flush = e->len;
	for (int i = 0; i < AFTER; i++)
		s->first_tasks[i] = e->log.rec[i].task;
	atomic_store(&s->phase, 3);
	return NULL;
}

START_TEST(exit_hands_over_once_and_the_thread_flushes_the_rest)
{
	static struct seen s;
	pthread_t thread;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no event_flush semaphore");
	tracer_attach();
	ck_assert_int_eq(pthread_create(&thread, NULL, logging_thread, &s), 0);
	wait_phase(&s.phase, 1);
	ck_assert(s.logged);
	/* The exit's hand-over, twice: the second finds nothing new. */
	events_outside_exit(clock_now_ns() + 1000000000ull);
	events_outside_exit(clock_now_ns() + 1000000000ull);
	atomic_store(&s.phase, 2);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	tracer_detach();

	ck_assert(s.logged);
	/* One flush number for the hand-over (its copy), one for the thread's flush. */
	ck_assert_uint_eq(s.seq_after_hand_over, 1);
	ck_assert_uint_eq(s.seq_after_flush, 2);
	/* The log still held the handed records; its flush left them out. */
	ck_assert_uint_eq(s.len_before_flush, HANDED + AFTER);
	ck_assert_uint_eq(s.len_after_flush, 0);
	for (int i = 0; i < AFTER; i++)
		ck_assert_uint_eq(s.first_tasks[i], HANDED + 1 + i);
}
END_TEST

static Suite *event_log_suite(void)
{
	Suite *s = suite_create("event_log");
	TCase *tc = TCASE("outside", 30);

	tcase_add_test(tc, exit_hands_over_once_and_the_thread_flushes_the_rest);
	suite_add_tcase(s, tc);
	return s;
}
BLITZ_SUITE("event_log", event_log_suite)
