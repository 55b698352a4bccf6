// SPDX-License-Identifier: MIT
/*
 * test_histogram.c - the workers' summary histograms (core/sched/
 * histogram.c), read through worker_read_hists(): collected only while
 * hist_snapshot's semaphore is held (the test raises it as the kernel does
 * when a tracer attaches), their event counts equal the runtime's counters,
 * the timed ticks' values stand for every poll (the counts of the timed
 * histograms are the polls once the worker parked), a new window starts
 * at zero, the clock's ns are CLOCK_MONOTONIC's, and the sample is not
 * biased by a change of pace, a periodic workload or a burst of spawns.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "../../core/clock.h"
#include "../../core/probes.h"
#include "../../core/sched/runtime.h"
#include "suites.h"

#ifdef BLITZ_HIST_SNAPSHOT_UNGUARDED	/* CONFIG_PROBES=y: the semaphore exists */
#define HAVE_SEMAPHORE 1
/*
 * Not instrumented under TSan: the kernel's write of a semaphore is
 * invisible to it, and the runtime reads the semaphore with plain loads
 * (a tick latches it; a stale value delays the switch by a tick).
 */
__attribute__((no_sanitize("thread"))) static void tracer_attach(void)
{
	blitz_hist_snapshot_semaphore++;
}

__attribute__((no_sanitize("thread"))) static void tracer_detach(void)
{
	blitz_hist_snapshot_semaphore--;
}
#else
#define HAVE_SEMAPHORE 0
static void tracer_attach(void) { }
static void tracer_detach(void) { }
#endif

static _Atomic long done;

/* A task that yields @yields times, spawning a child at each poll. */
struct yielder { int yields, spawn; };

static enum blitz_poll yielder_poll(void *arg, struct blitz_cx *cx);
static const struct blitz_task_vtable yielder_vt = BLITZ_TASK_VTABLE(yielder_poll, NULL);

static enum blitz_poll yielder_poll(void *arg, struct blitz_cx *cx)
{
	struct yielder *y = arg;

	if (y->spawn) {
		struct yielder c = { 2, 0 };

		ck_assert_int_eq(blitz_spawn_detached(NULL, &yielder_vt, &c, sizeof(c)), 0);
	}
	if (y->yields-- > 0) {
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return BLITZ_READY;
}

static struct blitz_runtime *new_rt(unsigned workers, unsigned sample)
{
	struct blitz_config c;

	blitz_config_default(&c);
	c.workers = workers;
	c.hist_sample = sample;
	return blitz_runtime_new(&c);
}

/* @n tasks from outside, each spawning one child per poll; waits for all. */
static void run_yielders(struct blitz_runtime *rt, long n)
{
	long want;

	atomic_store(&done, 0);
	for (long i = 0; i < n; i++) {
		struct yielder y = { 3, 1 };

		ck_assert_int_eq(blitz_spawn_detached(rt, &yielder_vt, &y, sizeof(y)), 0);
	}
	/* Each task polls 4 times and spawns a child (which does not spawn) each time. */
	want = n * 5;
	while (atomic_load_explicit(&done, memory_order_acquire) < want)
		usleep(1000);
}

/*
 * read_quiet - worker @i's counters and histograms at one moment when
 * neither changed while both were read (a parked worker wakes at its
 * timeout and parks again: the park counters move, in two steps).
 */
static void read_quiet(struct blitz_runtime *rt, unsigned i, struct blitz_worker_stats *st,
		       struct blitz_hist_snapshot *h)
{
	struct blitz_worker_stats again;

	for (int tries = 0; tries < 1000; tries++) {
		blitz_worker_stats(rt, i, st);
		worker_read_hists(&rt->workers[i], h);
		blitz_worker_stats(rt, i, &again);
		if (!memcmp(st, &again, sizeof(again)))
			return;
	}
	ck_abort_msg("worker %u never still for one read", i);
}

static uint64_t poll_count(const struct blitz_hist_snapshot *h)
{
	return h->hist[BLITZ_HIST_POLL_READY].count + h->hist[BLITZ_HIST_POLL_PENDING].count;
}

/*
 * read_whole - read_quiet, once the timed values of worker @i stand for
 * all its polls in the window: a worker's sets are scaled into the histograms at its
 * snapshots, which a parked worker fires within HIST_SNAPSHOT_NS (it
 * wakes at its park timeout); fails if that never happens.
 */
static void read_whole(struct blitz_runtime *rt, unsigned i, struct blitz_worker_stats *st,
		       struct blitz_hist_snapshot *h)
{
	uint64_t polls = 0;

	for (int tries = 0; tries < 1000; tries++) {
		read_quiet(rt, i, st, h);
		polls = h->events[BLITZ_HIST_POLL_READY] + h->events[BLITZ_HIST_POLL_PENDING];
		if (poll_count(h) == polls)
			return;
		usleep(1000);
	}
	ck_abort_msg("worker %u: the timed polls stand for %llu polls, not the window's %llu", i,
		     (unsigned long long)poll_count(h), (unsigned long long)polls);
}

static uint64_t slot_total(const struct blitz_hist_log2 *l)
{
	uint64_t n = 0;

	for (int s = 0; s < BLITZ_HIST_SLOTS; s++)
		n += l->slots[s];
	return n;
}

static uint64_t source_total(const struct blitz_hist_snapshot *h)
{
	uint64_t n = 0;

	for (int s = 0; s < BLITZ_HIST_SOURCES; s++)
		n += h->polls_by_source[s];
	return n;
}

/* A task that waits for ever after its first poll (no waker is kept). */
static _Atomic long waiting;

static enum blitz_poll wait_forever_poll(void *arg, struct blitz_cx *cx)
{
	bool *polled = arg;

	if (!*polled) {
		*polled = true;
		atomic_fetch_add(&waiting, 1);
	}
	return BLITZ_PENDING;
}
static const struct blitz_task_vtable wait_forever_vt = BLITZ_TASK_VTABLE(wait_forever_poll, NULL);

START_TEST(counts_equal_the_counters)
{
	struct blitz_runtime *rt;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	tracer_attach();
	uint64_t all_stood_for = 0;

	rt = new_rt(2, 8);
	run_yielders(rt, 20000);
	for (unsigned i = 0; i < 2; i++) {
		struct blitz_worker_stats st;
		struct blitz_hist_snapshot h;
		const unsigned long long *e = h.events;
		uint64_t polls, sched;

		/*
		 * One tick with polls in 8 (on average) is timed, the first
		 * of the window among them; its values stand for the polls
		 * until the next: once the worker parked, the poll times'
		 * count is its polls exactly.
		 */
		read_whole(rt, i, &st, &h);
		polls = e[BLITZ_HIST_POLL_READY] + e[BLITZ_HIST_POLL_PENDING];
		ck_assert_uint_eq(h.size, sizeof(h));
		ck_assert_uint_eq(h.kinds, BLITZ_HIST_KINDS);
		ck_assert_int_eq(h.worker, (int)i);
		ck_assert_uint_eq(h.sample, 8);
		ck_assert_uint_eq(polls, st.polls);
		ck_assert_uint_eq(poll_count(&h), st.polls);
		ck_assert_uint_eq(e[BLITZ_HIST_SCHED], st.polls);
		ck_assert_uint_eq(e[BLITZ_HIST_STEAL], st.steals);
		ck_assert_uint_eq(h.hist[BLITZ_HIST_STEAL].sum, st.stolen);
		ck_assert_uint_eq(e[BLITZ_HIST_GLOBAL_BATCH], st.global_batches);
		ck_assert_uint_eq(h.hist[BLITZ_HIST_GLOBAL_BATCH].sum, st.global_tasks);
		ck_assert_uint_eq(e[BLITZ_HIST_PARK], st.parks);
		/*
		 * The waits read by this worker's polls stand for all its
		 * polls too, once it has read one (a stamp is read by
		 * whichever worker polls the task).
		 */
		sched = h.hist[BLITZ_HIST_SCHED].count;
		ck_assert_msg(sched == st.polls || sched == 0, "worker %u: waits stand for %llu of %llu polls",
			      i, (unsigned long long)sched, (unsigned long long)st.polls);
		all_stood_for += sched;
		ck_assert_uint_eq(source_total(&h), st.polls);
		for (int k = 0; k < BLITZ_HIST_KINDS; k++)
			ck_assert_uint_eq(slot_total(&h.hist[k]), h.hist[k].count);
	}
	ck_assert_uint_gt(all_stood_for, 0);
	blitz_runtime_free(rt);
	tracer_detach();
}
END_TEST

/*
 * Cancelled tasks are dropped by a worker without a poll: the polls by
 * source stay the polls (the statistic, and what task_poll_start sees).
 */
START_TEST(polls_by_source_leave_out_dropped_tasks)
{
	enum { N = 200 };
	struct blitz_task *t[N];
	struct blitz_runtime *rt;
	uint64_t polls = 0, counted = 0;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	tracer_attach();
	rt = new_rt(2, 8);
	atomic_store(&waiting, 0);
	for (int i = 0; i < N; i++) {
		bool polled = false;

		t[i] = blitz_spawn(rt, &wait_forever_vt, &polled, sizeof(polled));
		ck_assert_ptr_nonnull(t[i]);
	}
	while (atomic_load(&waiting) < N)
		usleep(1000);
	/*
	 * Cancelled, then left to the workers: a join would let this thread
	 * drop the tasks it finds in the global queue itself, and the
	 * workers' drop path (which takes its count back) would not run.
	 */
	for (int i = 0; i < N; i++)
		blitz_task_cancel(t[i]);
	for (int i = 0; i < N; i++)
		while (!blitz_task_done(t[i]))
			usleep(1000);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(blitz_join(t[i]), -ECANCELED);
		blitz_task_release(t[i]);
	}
	for (unsigned i = 0; i < 2; i++) {
		struct blitz_worker_stats st;
		struct blitz_hist_snapshot h;

		read_quiet(rt, i, &st, &h);
		polls += st.polls;
		counted += source_total(&h);
	}
	ck_assert_uint_eq(polls, N);	/* one poll each; the drops are not polls */
	ck_assert_uint_eq(counted, polls);
	blitz_runtime_free(rt);
	tracer_detach();
}
END_TEST

START_TEST(a_window_starts_at_zero_and_ends_at_detach)
{
	struct blitz_runtime *rt = new_rt(1, 1);
	struct blitz_worker_stats st0, st1, st2;
	struct blitz_hist_snapshot h;

	if (!HAVE_SEMAPHORE) {
		blitz_runtime_free(rt);
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	}
	/* Unattached: nothing recorded. */
	run_yielders(rt, 100);
	read_quiet(rt, 0, &st0, &h);
	ck_assert_uint_gt(st0.polls, 0);
	for (int k = 0; k < BLITZ_HIST_KINDS; k++)
		ck_assert_uint_eq(h.events[k], 0);
	/* Attached: the window holds exactly the polls since the attach. */
	tracer_attach();
	/* A tick sees the semaphore (the worker wakes at its park timeout). */
	while (!__atomic_load_n(&rt->workers[0].hist.on, __ATOMIC_RELAXED))
		usleep(1000);
	read_quiet(rt, 0, &st1, &h);
	run_yielders(rt, 100);
	read_whole(rt, 0, &st2, &h);
	ck_assert_uint_eq(h.events[BLITZ_HIST_POLL_READY] + h.events[BLITZ_HIST_POLL_PENDING],
			  st2.polls - st1.polls);
	/* BLITZ_HIST_SAMPLE=1: every tick timed, so every poll. */
	ck_assert_uint_eq(h.hist[BLITZ_HIST_POLL_READY].count +
			  h.hist[BLITZ_HIST_POLL_PENDING].count, st2.polls - st1.polls);
	/* Detached: the histograms stay as they were. */
	tracer_detach();
	run_yielders(rt, 100);
	read_quiet(rt, 0, &st0, &h);
	ck_assert_uint_gt(st0.polls, st2.polls);
	ck_assert_uint_eq(h.events[BLITZ_HIST_POLL_READY] + h.events[BLITZ_HIST_POLL_PENDING],
			  st2.polls - st1.polls);
	blitz_runtime_free(rt);
}
END_TEST

/* A poll that spins for a while and measures itself with CLOCK_MONOTONIC. */
static _Atomic uint64_t spun_ns;

static enum blitz_poll spin_poll(void *arg, struct blitz_cx *cx)
{
	uint64_t start = clock_now_ns(), now;

	while ((now = clock_now_ns()) - start < 200000)
		;
	atomic_fetch_add(&spun_ns, now - start);
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return BLITZ_READY;
}
static const struct blitz_task_vtable spin_vt = BLITZ_TASK_VTABLE(spin_poll, NULL);

START_TEST(poll_time_is_in_monotonic_ns)
{
	struct blitz_runtime *rt;
	struct blitz_worker_stats st;
	struct blitz_hist_snapshot h;
	const struct blitz_hist_log2 *l;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	tracer_attach();
	rt = new_rt(1, 1);
	atomic_store(&done, 0);
	atomic_store(&spun_ns, 0);
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(blitz_spawn_detached(rt, &spin_vt, NULL, 0), 0);
	while (atomic_load_explicit(&done, memory_order_acquire) < 50)
		usleep(1000);
	read_whole(rt, 0, &st, &h);
	l = &h.hist[BLITZ_HIST_POLL_READY];
	ck_assert_uint_eq(l->count, 50);
	/*
	 * Each recorded poll contains the interval the poll measured itself:
	 * the sum is at least theirs (2% for the clock's calibration), and
	 * no poll lands below the 200 us spin's bucket (2^17 ns).
	 */
	ck_assert_uint_ge(l->sum, atomic_load(&spun_ns) / 100 * 98);
	for (int s = 0; s < 17; s++)
		ck_assert_uint_eq(l->slots[s], 0);
	blitz_runtime_free(rt);
	tracer_detach();
}
END_TEST

/*
 * The automatic period (BLITZ_HIST_SAMPLE=auto): a power of two, the
 * smallest that keeps a sampled event's cost (HIST_SAMPLE_COST_NS) within
 * 1% of the polls between samples, capped at BLITZ_HIST_SAMPLE_AUTO_MAX;
 * and a worker's period is the one its window's pace gives.
 */
START_TEST(automatic_period_follows_the_poll_time)
{
	uint32_t prev = BLITZ_HIST_SAMPLE_AUTO_MAX;
	struct blitz_runtime *rt;
	struct blitz_worker_stats st;
	struct blitz_hist_snapshot h;
	int tries;

	ck_assert_uint_eq(hist_period_for(0), BLITZ_HIST_SAMPLE_AUTO_MAX);
	ck_assert_uint_eq(hist_period_for(1), BLITZ_HIST_SAMPLE_AUTO_MAX);
	ck_assert_uint_eq(hist_period_for(100ull * HIST_SAMPLE_COST_NS), 1);
	ck_assert_uint_eq(hist_period_for(1000000000ull), 1);
	for (uint64_t ewma = 1; ewma <= 200ull * HIST_SAMPLE_COST_NS; ewma += 7) {
		uint32_t n = hist_period_for(ewma);

		ck_assert_uint_eq(n & (n - 1), 0);
		ck_assert_uint_le(n, prev);	/* longer polls, denser samples */
		prev = n;
		/* Within budget, and the next smaller power of two would not be. */
		if (n < BLITZ_HIST_SAMPLE_AUTO_MAX)
			ck_assert_uint_ge(n * ewma, 100ull * HIST_SAMPLE_COST_NS);
		if (n > 1)
			ck_assert_uint_lt(n / 2 * ewma, 100ull * HIST_SAMPLE_COST_NS);
	}
	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	tracer_attach();
	rt = new_rt(1, BLITZ_HIST_SAMPLE_AUTO);
	run_yielders(rt, 2000);
	/*
	 * The worker sets its period at each tick with polls, just after its
	 * pace: read until the two are seen together (the worker parks once
	 * the work is done, and its pace then stays).
	 */
	for (tries = 0; tries < 1000; tries++) {
		uint64_t pace;

		read_quiet(rt, 0, &st, &h);
		pace = __atomic_load_n(&rt->workers[0].hist.pace_ns, __ATOMIC_RELAXED);
		if (pace && h.sample == hist_period_for(pace))
			break;
		usleep(1000);
	}
	ck_assert_msg(tries < 1000, "period %u, pace %llu ns", h.sample,
		      (unsigned long long)rt->workers[0].hist.pace_ns);
	/* Whatever the periods were, the timed ticks stand for every poll. */
	read_whole(rt, 0, &st, &h);
	ck_assert_uint_eq(poll_count(&h), h.events[BLITZ_HIST_POLL_READY] +
			  h.events[BLITZ_HIST_POLL_PENDING]);
	ck_assert_uint_gt(poll_count(&h), 0);
	blitz_runtime_free(rt);
	tracer_detach();
}
END_TEST

/*
 * A window's period follows its own ticks, not the scheduler's EWMA with
 * its 50 us start (worker.c), which a program traced from its start
 * would drag through its first ~50 ticks with polls, timing most of them.
 * hist_adapt driven tick by tick with made-up times (no clock, no
 * runtime): the first tick's 100 ns sets the period that 100 ns gives at
 * once, though the EWMA still reads 45 us; a timed tick's slower polls do
 * not move it; a change of pace to 20 us polls is followed within 8
 * ticks; and in 60 ticks of 100 ns polls only the first and those a
 * period of 128 picks (gaps of 64 to 191 ticks) are timed.
 */
START_TEST(automatic_period_follows_the_window_not_the_ewma)
{
	struct blitz_worker *w = calloc(1, sizeof(*w));
	struct worker_hist *h = &w->hist;
	uint64_t ewma = 50000;
	int timed = 0;

	ck_assert_ptr_nonnull(w);
	worker_hist_init(h, 0, BLITZ_HIST_SAMPLE_AUTO, 1);
	w->ewma_poll_ns = ewma;
	hist_switch(w, true, 0);
	ck_assert(h->due);			/* a window's first tick is timed */
	for (int tick = 0; tick < 60; tick++) {
		w->traced = h->due ? TRACED_HIST : 0;
		timed += h->due;
		ewma = (100 + 9 * ewma) / 10;		/* update_interval's rule */
		hist_adapt(w, ewma, 100);
		if (tick == 0) {
			ck_assert_uint_gt(ewma, 40000);
			ck_assert_uint_eq(h->sample, hist_period_for(100));
			ck_assert_uint_eq(h->sample, 128);
		}
	}
	ck_assert_int_eq(timed, 1);
	ck_assert_uint_eq(h->pace_ns, 100);
	w->traced = TRACED_HIST;		/* timed: its 300 ns are not the pace */
	hist_adapt(w, ewma, 300);
	ck_assert_uint_eq(h->pace_ns, 100);
	w->traced = 0;
	for (int tick = 0; tick < 8; tick++)
		hist_adapt(w, ewma, 20000);
	ck_assert_uint_eq(h->sample, 1);
	/* At a period of 1 every tick is timed, and still the pace follows. */
	w->traced = TRACED_HIST;
	for (int tick = 0; tick < 16; tick++)
		hist_adapt(w, ewma, 100);
	ck_assert_uint_gt(h->sample, 1);
	free(w);
}
END_TEST

/*
 * A snapshot is a probe hit and, with six summary tools, ~60 us of BPF:
 * taken at a tick it delays the tick's polls (burst_wake's wake latency
 * p99 read 4x untraced when a woken worker fired one at its first tick),
 * so a worker takes it before it sleeps once HIST_SNAPSHOT_PARK_NS have
 * passed, and at a tick only once HIST_SNAPSHOT_NS have.  Driven tick by
 * tick on a worker that never runs: the ticks' times are made up, and the
 * parks' clock is only compared with a last snapshot an hour ahead (no
 * machine is that slow) or already HIST_SNAPSHOT_PARK_NS old (the clock
 * does not go back).
 */
START_TEST(snapshots_wait_for_a_park)
{
	const uint64_t hour = 3600ull * 1000000000ull;
	struct blitz_worker *w;
	struct worker_hist *h;
	uint64_t t0, seq;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	w = calloc(1, sizeof(*w));
	ck_assert_ptr_nonnull(w);
	h = &w->hist;
	worker_hist_init(h, 0, 1024, 1);
	tracer_attach();
	t0 = clock_now_ns() + hour;
	hist_switch(w, true, t0);
	seq = h->snap.seq;
	/* A busy worker: ticks fire only once HIST_SNAPSHOT_NS passed. */
	hist_tick(w, h, t0 + HIST_SNAPSHOT_PARK_NS);
	hist_tick(w, h, t0 + HIST_SNAPSHOT_NS / 2);
	hist_tick(w, h, t0 + HIST_SNAPSHOT_NS - 1);
	ck_assert_uint_eq(h->snap.seq, seq);
	hist_tick(w, h, t0 + HIST_SNAPSHOT_NS);
	ck_assert_uint_eq(h->snap.seq, seq + 1);
	/* A park an hour before the last snapshot: none. */
	hist_park(w, 1000);
	ck_assert_uint_eq(h->snap.seq, seq + 1);
	/* The last one HIST_SNAPSHOT_PARK_NS ago by the parks' clock: a park fires. */
	h->next_snapshot = clock_now_ns() - HIST_SNAPSHOT_PARK_NS + HIST_SNAPSHOT_NS;
	hist_park(w, 1000);
	ck_assert_uint_eq(h->snap.seq, seq + 2);
	tracer_detach();
	free(w);
}
END_TEST

/* A poll that spins for 20 us by the clock: a long poll on any machine. */
static enum blitz_poll spin20_poll(void *arg, struct blitz_cx *cx)
{
	uint64_t start = clock_now_ns();

	while (clock_now_ns() - start < 20000)
		;
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return BLITZ_READY;
}
static const struct blitz_task_vtable spin20_vt = BLITZ_TASK_VTABLE(spin20_poll, NULL);

/* A task that yields @arg times. */
static enum blitz_poll yield_n_poll(void *arg, struct blitz_cx *cx)
{
	long *n = arg;

	if ((*n)-- > 0) {
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return BLITZ_READY;
}
static const struct blitz_task_vtable yield_n_vt = BLITZ_TASK_VTABLE(yield_n_poll, NULL);

/*
 * Under the automatic period, the ticks of short polls are timed one in
 * hundreds and those of long ones each: a timed tick's values stand for
 * the polls until the next, and a change of pace starts a new gap at once
 * (hist_adapt), so the histogram keeps the distribution of every poll.
 * 4,000,000 short polls, then 4,000 of 20 us (0.1%): the
 * histogram's share of polls of 2^14 ns and more is within a factor of
 * 2 of 0.1% (unweighted, it was 14-22 times too high).  The share, not a
 * time, is asserted: a preempted short poll lands high too, but a few
 * dozen of them move it little.
 */
START_TEST(automatic_period_keeps_the_distribution)
{
	enum { SHORT_TASKS = 40, YIELDS = 100000, LONG_POLLS = 4000 };
	struct blitz_runtime *rt;
	struct blitz_worker_stats st;
	struct blitz_hist_snapshot h;
	uint64_t long_seen = 0, all_seen = 0, in_slots = 0, polls;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	tracer_attach();
	rt = new_rt(1, BLITZ_HIST_SAMPLE_AUTO);
	atomic_store(&done, 0);
	for (int i = 0; i < SHORT_TASKS; i++) {
		long n = YIELDS;

		ck_assert_int_eq(blitz_spawn_detached(rt, &yield_n_vt, &n, sizeof(n)), 0);
	}
	while (atomic_load_explicit(&done, memory_order_acquire) < SHORT_TASKS)
		usleep(1000);
	for (int i = 0; i < LONG_POLLS; i++)
		ck_assert_int_eq(blitz_spawn_detached(rt, &spin20_vt, NULL, 0), 0);
	while (atomic_load_explicit(&done, memory_order_acquire) < SHORT_TASKS + LONG_POLLS)
		usleep(1000);
	read_whole(rt, 0, &st, &h);
	polls = h.events[BLITZ_HIST_POLL_READY] + h.events[BLITZ_HIST_POLL_PENDING];
	for (int k = BLITZ_HIST_POLL_READY; k <= BLITZ_HIST_POLL_PENDING; k++) {
		all_seen += h.hist[k].count;
		in_slots += slot_total(&h.hist[k]);
		for (int s = 14; s < BLITZ_HIST_SLOTS; s++)
			long_seen += h.hist[k].slots[s];
	}
	printf("histogram: auto period: %llu of %llu polls stood for, %llu of them long (true: %d)\n",
	       (unsigned long long)all_seen, (unsigned long long)polls,
	       (unsigned long long)long_seen, LONG_POLLS);
	ck_assert_uint_eq(all_seen, polls);
	/* The long polls' share of the histogram, against theirs of the polls. */
	ck_assert_uint_ge(long_seen * polls * 2, (uint64_t)LONG_POLLS * in_slots);
	ck_assert_uint_le(long_seen * polls, 2 * (uint64_t)LONG_POLLS * in_slots);
	blitz_runtime_free(rt);
	tracer_detach();
}
END_TEST

/* A task that yields @arg times, spinning 20 us at every LONG_EVERY-th poll. */
enum { LONG_EVERY = 256 };

static enum blitz_poll every_nth_long_poll(void *arg, struct blitz_cx *cx)
{
	long *n = arg;

	if (*n % LONG_EVERY == 0) {
		uint64_t start = clock_now_ns();

		while (clock_now_ns() - start < 20000)
			;
	}
	if ((*n)-- > 0) {
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return BLITZ_READY;
}
static const struct blitz_task_vtable every_nth_long_vt = BLITZ_TASK_VTABLE(every_nth_long_poll, NULL);

/*
 * A periodic workload does not alias with the timed ticks: one task
 * yielding, 128 polls per tick (the budget), a 20 us poll every 256th, so
 * every other tick holds one; at BLITZ_HIST_SAMPLE=8 a fixed gap of 8
 * ticks would time only the ticks with a long poll, or only those
 * without (twice the long polls, or none).  The gaps are jittered: the
 * histogram's polls of 2^14 ns and more are within half of the true 1,000
 * either way (a few preempted short polls land there too).
 */
START_TEST(timed_ticks_do_not_alias_a_periodic_workload)
{
	enum { LONG_POLLS = 1000 };
	long n = (long)LONG_POLLS * LONG_EVERY - 1;
	struct blitz_runtime *rt;
	struct blitz_worker_stats st;
	struct blitz_hist_snapshot h;
	struct blitz_config c;
	uint64_t long_seen = 0;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	tracer_attach();
	blitz_config_default(&c);
	c.workers = 1;
	c.hist_sample = 8;
	c.budget = 128;
	rt = blitz_runtime_new(&c);
	atomic_store(&done, 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &every_nth_long_vt, &n, sizeof(n)), 0);
	while (atomic_load_explicit(&done, memory_order_acquire) < 1)
		usleep(1000);
	read_whole(rt, 0, &st, &h);
	for (int k = BLITZ_HIST_POLL_READY; k <= BLITZ_HIST_POLL_PENDING; k++)
		for (int s = 14; s < BLITZ_HIST_SLOTS; s++)
			long_seen += h.hist[k].slots[s];
	printf("histogram: 1 tick in 8, a long poll every other tick: %llu long of %llu polls (true: %d)\n",
	       (unsigned long long)long_seen, (unsigned long long)st.polls, LONG_POLLS);
	ck_assert_uint_ge(long_seen, LONG_POLLS / 2);
	ck_assert_uint_le(long_seen, LONG_POLLS * 3 / 2);
	blitz_runtime_free(rt);
	tracer_detach();
}
END_TEST

/*
 * A burst: one poll spawns BURST_TASKS tasks in a tick that is not timed.
 * The spawner starts in the window's first tick, which is timed, so a
 * short wait is stamped (its own, behind its starter) with the period's
 * weight; then it sleeps 1 ms and spawns the burst from the timer's wake,
 * whose tick is one of the next 512 at BLITZ_HIST_SAMPLE=1024, none timed.
 */
enum { BURST_TASKS = 10000 };
static uint64_t burst_at_90, burst_end;	/* the clock at the 9,000th spawn, after the last */

static enum blitz_poll burst_child_poll(void *arg, struct blitz_cx *cx)
{
	atomic_fetch_add_explicit(&done, 1, memory_order_release);
	return BLITZ_READY;
}
static const struct blitz_task_vtable burst_child_vt = BLITZ_TASK_VTABLE(burst_child_poll, NULL);

struct burst_spawner { bool slept; struct blitz_sleep nap; };

static enum blitz_poll burst_spawner_poll(void *arg, struct blitz_cx *cx)
{
	struct burst_spawner *b = arg;

	if (!b->slept) {
		b->slept = true;
		blitz_sleep_init(&b->nap, 1000000);
	}
	if (blitz_sleep_poll(&b->nap, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	for (int i = 0; i < BURST_TASKS; i++) {
		if (i == BURST_TASKS * 9 / 10)
			burst_at_90 = clock_now_ns();
		ck_assert_int_eq(blitz_spawn_detached(NULL, &burst_child_vt, NULL, 0), 0);
	}
	burst_end = clock_now_ns();
	atomic_fetch_add_explicit(&done, 1, memory_order_release);	/* publishes burst_* */
	return BLITZ_READY;
}
static const struct blitz_task_vtable burst_spawner_vt = BLITZ_TASK_VTABLE(burst_spawner_poll, NULL);

static enum blitz_poll burst_starter_poll(void *arg, struct blitz_cx *cx)
{
	struct burst_spawner b = { false };

	ck_assert_int_eq(blitz_spawn_detached(NULL, &burst_spawner_vt, &b, sizeof(b)), 0);
	return BLITZ_READY;
}
static const struct blitz_task_vtable burst_starter_vt = BLITZ_TASK_VTABLE(burst_starter_poll, NULL);

/*
 * The burst's schedules are in the schedule latency although no tick
 * that queued them was timed (histogram.h, "Bursts").  No time is
 * assumed: the 9,000 tasks spawned before burst_at_90 wait at least W =
 * burst_end - burst_at_90 (one worker, busy spawning until burst_end),
 * so at least 90% of the burst's waits, and about 75% of the stamps'
 * weight with the two short waits of the first tick, are W or more; at
 * least 60% of the histogram must be in W's log2 bucket or above.  Tick
 * sampling alone stamped none of the burst, and the histogram read
 * the first tick's waits only, all short (or half long at most, if the
 * starter's wait from outside was long).
 */
START_TEST(a_burst_is_stamped_in_an_untimed_tick)
{
	struct blitz_runtime *rt;
	struct blitz_worker_stats st;
	struct blitz_hist_snapshot h;
	const struct blitz_hist_log2 *sched;
	uint64_t wait, above = 0, total;

	if (!HAVE_SEMAPHORE)
		SKIP("CONFIG_PROBES is off: no hist_snapshot semaphore");
	tracer_attach();
	rt = new_rt(1, 1024);
	ck_assert_ptr_nonnull(rt);
	atomic_store(&done, 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &burst_starter_vt, NULL, 0), 0);
	while (atomic_load_explicit(&done, memory_order_acquire) < BURST_TASKS + 1)
		usleep(1000);
	read_whole(rt, 0, &st, &h);
	sched = &h.hist[BLITZ_HIST_SCHED];
	wait = burst_end - burst_at_90;
	total = slot_total(sched);
	for (int s = 63 - __builtin_clzll(wait); s < BLITZ_HIST_SLOTS; s++)
		above += sched->slots[s];
	printf("histogram: a burst of %d spawns in an untimed tick: %llu of %llu schedules "
	       "wait %llu ns or more (at least 90%% of the burst do)\n", BURST_TASKS,
	       (unsigned long long)above, (unsigned long long)total, (unsigned long long)wait);
	ck_assert_uint_eq(sched->count, st.polls);
	ck_assert_uint_ge(above * 10, total * 6);
	blitz_runtime_free(rt);
	tracer_detach();
}
END_TEST

static Suite *histogram_suite(void)
{
	Suite *s = suite_create("histogram");
	TCase *tc = TCASE("summary", 30);

	tcase_add_test(tc, counts_equal_the_counters);
	tcase_add_test(tc, polls_by_source_leave_out_dropped_tasks);
	tcase_add_test(tc, a_window_starts_at_zero_and_ends_at_detach);
	tcase_add_test(tc, poll_time_is_in_monotonic_ns);
	tcase_add_test(tc, automatic_period_follows_the_poll_time);
	tcase_add_test(tc, automatic_period_follows_the_window_not_the_ewma);
	tcase_add_test(tc, automatic_period_keeps_the_distribution);
	tcase_add_test(tc, timed_ticks_do_not_alias_a_periodic_workload);
	tcase_add_test(tc, snapshots_wait_for_a_park);
	tcase_add_test(tc, a_burst_is_stamped_in_an_untimed_tick);
	suite_add_tcase(s, tc);
	return s;
}
BLITZ_SUITE("histogram", histogram_suite)
