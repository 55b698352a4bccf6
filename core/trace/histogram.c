// SPDX-License-Identifier: MIT
/*
 * core/trace/histogram.c - the workers' summary histograms (histogram.h):
 * what a hook records while hist_snapshot's semaphore is held, and the
 * snapshot probe.
 *
 * Cost model (docs/probes.md, "Cost"): a probe hit costs ten times a
 * scheduling event or more.  So every event is counted here, in the worker's memory, and
 * the tracer is called only at hist_snapshot (at a park at most every
 * HIST_SNAPSHOT_PARK_NS, at a tick after HIST_SNAPSHOT_NS without one, and
 * at exit).  The clock is tick_clock.h's (rdtsc where the TSC is
 * invariant, cheaper than clock_gettime).  Even rdtsc
 * is about a yield's cost, so poll time and schedule latency are timed in
 * one tick in N (BLITZ_HIST_SAMPLE; by default each worker's N follows
 * its poll time), and the values of a timed tick stand for the polls until
 * the next (histogram.h).
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "../clock.h"
#include "../probes.h"
#include "histogram.h"
#include "tick_clock.h"
#include "../sched/runtime.h"
#include "../sched/task.h"

_Static_assert(PROBE_NR_SOURCES <= BLITZ_HIST_SOURCES,
	       "struct blitz_hist_snapshot has no room for every task source");
#include "../sched/worker.h"

static _Atomic uint64_t runtimes;

/* hist_runtime_id - a new runtime's number (1, 2, ...); settles the clock first. */
uint64_t hist_runtime_id(void)
{
	tick_clock_init();
	/* Relaxed: a unique number is all that is asked. */
	return atomic_fetch_add_explicit(&runtimes, 1, memory_order_relaxed) + 1;
}

/* ---------------------------------------------------------------------- */
/* Recording                                                               */

static inline unsigned slot_of(uint64_t v)
{
	unsigned s = v < 2 ? 0 : 63 - (unsigned)__builtin_clzll(v);

	return s < BLITZ_HIST_SLOTS ? s : BLITZ_HIST_SLOTS - 1;
}

/* hist_record_value - @v into histogram @k (its event count comes from elsewhere). */
void hist_record_value(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	struct blitz_hist_log2 *l = &h->snap.hist[k];

	hist_add(&l->slots[slot_of(v)], 1);
	hist_add(&l->count, 1);
	hist_add(&l->sum, v);
}

/* ---------------------------------------------------------------------- */
/* The sets: a timed tick's values, standing for the polls until the next  */

static void set_add(struct hist_set *s, uint64_t v, uint64_t w)
{
	unsigned i = slot_of(v);

	s->slots[i] += w;
	s->used |= 1ull << i;
	s->sum += (unsigned __int128)v * w;
}

static void set_clear(struct hist_set *s)
{
	for (uint64_t u = s->used; u; u &= u - 1)
		s->slots[__builtin_ctzll(u)] = 0;
	s->used = 0;
	s->sum = 0;
}

/*
 * scale - floor(@x * @p / @n), where @x / @n is at most a value (a
 * set's sum over its weight: ns, below 2^64) or a few times 1 (a slot's
 * share): no 128-bit product overflows.  Cheap in the common cases: a
 * set that stands for itself (every poll timed), and 32-bit operands.
 */
static uint64_t scale(unsigned __int128 x, uint64_t p, uint64_t n)
{
	if (p == n)
		return (uint64_t)x;
	if (!(x >> 32) && !(p >> 32))
		return (uint64_t)x * p / n;
	return (uint64_t)((x / n) * p + (x % n) * p / n);
}

/*
 * set_flush - set @s, of total weight @n, stands for @p events: each slot
 * scaled by @p / @n into histogram @k, with count and sum.  Rounded on the
 * running total: *@acc (the weight seen) and *@given (the events given)
 * carry over to the next set that shares @n (ready, then pending), so
 * that their counts add up to @p exactly.
 */
static void set_flush(struct worker_hist *h, const struct hist_set *s, enum blitz_hist_kind k,
		      uint64_t p, uint64_t n, uint64_t *acc, uint64_t *given)
{
	struct blitz_hist_log2 *l = &h->snap.hist[k];
	uint64_t before = *given;

	for (uint64_t u = s->used; u; u &= u - 1) {
		unsigned i = (unsigned)__builtin_ctzll(u);
		uint64_t upto;

		*acc += s->slots[i];
		upto = scale(*acc, p, n);
		hist_add(&l->slots[i], upto - *given);
		*given = upto;
	}
	hist_add(&l->count, *given - before);
	hist_add(&l->sum, scale(s->sum, p, n));
}

/*
 * hist_stand_for - the sets stand for the worker's polls since each last
 * did (at a timed tick's start, a snapshot, the window's end):
 * afterwards the poll-time histograms' counts add up to the window's
 * polls, and so does the schedule latency's (SCHED: each poll ends one
 * wait), once each set has had a value.  The poll set's values are one
 * per timed poll, the pushes' stand for the pushes of as many polls; the
 * stamps' weights are their schedules' periods (a schedule stamped one
 * in N stands for N against one stamped one in 8), so that the share of
 * each slot is the estimate of every wait's.
 */
static void hist_stand_for(struct blitz_worker *w)
{
	struct worker_hist *h = &w->hist;
	uint64_t polls = worker_polls(w), acc = 0, given = 0;

	if (h->polls_timed && polls > h->poll_mark) {
		uint64_t p = polls - h->poll_mark;

		set_flush(h, &h->set[HSET_READY], BLITZ_HIST_POLL_READY, p, h->polls_timed, &acc, &given);
		set_flush(h, &h->set[HSET_PENDING], BLITZ_HIST_POLL_PENDING, p, h->polls_timed,
			  &acc, &given);
		acc = given = 0;
		set_flush(h, &h->set[HSET_PUSH], BLITZ_HIST_PUSH_LEN, p, h->polls_timed, &acc, &given);
		h->poll_mark = polls;
	}
	if (h->sched_weight && polls > h->sched_mark) {
		acc = given = 0;
		set_flush(h, &h->set[HSET_SCHED], BLITZ_HIST_SCHED, polls - h->sched_mark,
			  h->sched_weight, &acc, &given);
		h->sched_mark = polls;
	}
}

/* take_polls / take_sched - a set's first value since a timed tick began clears it. */
static void take_polls(struct worker_hist *h)
{
	if (!(h->fresh & FRESH_POLL))
		return;
	h->fresh &= (uint8_t)~FRESH_POLL;
	set_clear(&h->set[HSET_READY]);
	set_clear(&h->set[HSET_PENDING]);
	set_clear(&h->set[HSET_PUSH]);
	h->polls_timed = 0;
}

static void take_sched(struct worker_hist *h)
{
	if (!(h->fresh & FRESH_SCHED))
		return;
	h->fresh &= (uint8_t)~FRESH_SCHED;
	set_clear(&h->set[HSET_SCHED]);
	h->sched_weight = 0;
}

/* hist_record - one event of kind @k, value @v. */
void hist_record(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	hist_add(&h->snap.events[k], 1);
	hist_record_value(h, k, v);
}

/* gap - ticks with polls from a timed tick to the next: N on average, jittered. */
static uint32_t gap(struct worker_hist *h)
{
	uint32_t x = h->rng;

	if (h->sample <= 1)
		return 1;
	/* xorshift32 (Marsaglia): the gaps in [N/2, 3N/2), so that no periodic workload aliases. */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	h->rng = x;
	return h->sample / 2 + x % h->sample;
}

void worker_hist_init(struct worker_hist *h, unsigned worker, unsigned sample, uint64_t runtime)
{
	memset(h, 0, sizeof(*h));
	h->automatic = sample == BLITZ_HIST_SAMPLE_AUTO;
	h->sample = h->automatic ? BLITZ_HIST_SAMPLE_AUTO_MAX : sample;
	h->countdown = 1;
	h->rng = 2463534242u + worker * 0x9e3779b9u;	/* any non-zero seed */
	h->snap.size = sizeof(h->snap);
	h->snap.version = BLITZ_HIST_VERSION;
	h->snap.kinds = BLITZ_HIST_KINDS;
	h->snap.worker = (int)worker;
	h->snap.sample = h->sample;
	h->snap.runtime = runtime;
}

__thread unsigned long long hist_ready_polls __attribute__((tls_model("initial-exec")));

/*
 * hist_thread_start - @w's thread begins: where its ready polls are
 * counted.  Relaxed: a reader that sees NULL counts none (the worker has
 * polled nothing yet); the counter is read with relaxed loads (hist_add).
 */
void hist_thread_start(struct blitz_worker *w)
{
	__atomic_store_n(&w->hist.ready_polls, &hist_ready_polls, __ATOMIC_RELAXED);
}

/* The worker's thread's ready polls (0 before it ran). */
static uint64_t ready_polls(const struct worker_hist *h)
{
	const unsigned long long *p = __atomic_load_n(&h->ready_polls, __ATOMIC_RELAXED);

	return p ? __atomic_load_n(p, __ATOMIC_RELAXED) : 0;
}

/* A worker statistic (relaxed: one writer, see stat_inc). */
#define STAT(w, f) atomic_load_explicit(&(w)->stats.f, memory_order_relaxed)
/*
 * The statistic's value when the window began: written by the owner at a
 * switch (SET_BASE), read by worker_read_hists() from another thread;
 * relaxed, like the counters (hist_add).
 */
#define BASE(h, f) __atomic_load_n(&(h)->base_##f, __ATOMIC_RELAXED)
#define SET_BASE(h, f, v) __atomic_store_n(&(h)->base_##f, (v), __ATOMIC_RELAXED)

/*
 * fill_events - the exact counts that the statistics keep, since the
 * window began, into @out (the worker's own snapshot, or a reader's copy).
 */
static void fill_events(const struct blitz_worker *w, struct blitz_hist_snapshot *out)
{
	const struct worker_hist *h = &w->hist;
	unsigned long long *e = out->events;
	uint64_t polls = 0, ready = ready_polls(h) - BASE(h, ready);

	for (int s = 0; s < PROBE_NR_SOURCES; s++) {
		uint64_t n = STAT(w, polls_by_source[s]) - BASE(h, polls[s]);

		__atomic_store_n(&out->polls_by_source[s], n, __ATOMIC_RELAXED);
		polls += n;
	}
	/* Relaxed stores: see hist_add(). */
	__atomic_store_n(&e[BLITZ_HIST_POLL_READY], ready, __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_POLL_PENDING], polls - ready, __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_SCHED], polls, __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_STEAL], STAT(w, steals) - BASE(h, steals), __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_GLOBAL_BATCH], STAT(w, global_batches) - BASE(h, batches),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_PARK], STAT(w, parks) - BASE(h, parks), __ATOMIC_RELAXED);
}

/*
 * hist_switch - the semaphore changed since the last tick.  On: start a
 * fresh window (the counts of a previous tracer, and whatever was recorded
 * since the semaphore rose mid-tick, are dropped); its first tick with
 * polls is timed.  Off: stop; the histograms stay as they were until the
 * next attach.
 */
void hist_switch(struct blitz_worker *w, bool on, uint64_t now_ns)
{
	struct worker_hist *h = &w->hist;

	if (!on) {
		hist_stand_for(w);
		fill_events(w, &h->snap);	/* the window's counts stop here */
		/* Relaxed: worker_read_hists() reads it from another thread; one writer. */
		__atomic_store_n(&h->on, false, __ATOMIC_RELAXED);
		/*
		 * Stamps are written only while collecting; those made up to
		 * now belong to the window that ends here.
		 */
		h->window_start = tick_clock_now();
		return;
	}
	__atomic_store_n(&h->on, true, __ATOMIC_RELAXED);	/* relaxed: as above */
	tick_clock_calibrate();
	/* Not atomic: a worker_read_hists() racing a re-attach may see a mix. */
	memset(h->snap.events, 0, sizeof(h->snap.events));
	memset(h->snap.hist, 0, sizeof(h->snap.hist));
	for (int s = 0; s < PROBE_NR_SOURCES; s++)
		SET_BASE(h, polls[s], STAT(w, polls_by_source[s]));
	SET_BASE(h, steals, STAT(w, steals));
	SET_BASE(h, batches, STAT(w, global_batches));
	SET_BASE(h, parks, STAT(w, parks));
	SET_BASE(h, ready, hist_ready_polls);	/* this thread's: the worker's */
	for (int k = 0; k < HSET_KINDS; k++)
		set_clear(&h->set[k]);
	h->polls_timed = h->sched_weight = 0;
	h->poll_mark = h->sched_mark = worker_polls(w);
	h->fresh = 0;
	h->due = true;
	h->countdown = 1;
	__atomic_store_n(&h->pace_ns, 0, __ATOMIC_RELAXED);	/* set by the first tick with polls */
	if (h->automatic) {
		h->sample = hist_period_for(w->ewma_poll_ns);
		__atomic_store_n(&h->snap.sample, h->sample, __ATOMIC_RELAXED);
	}
	h->next_snapshot = now_ns + HIST_SNAPSHOT_NS;
}

/* hist_fire - hand the tracer this worker's histograms. */
void hist_fire(struct blitz_worker *w, uint64_t now_ns)
{
	struct worker_hist *h = &w->hist;

	hist_stand_for(w);
	fill_events(w, &h->snap);
	hist_add(&h->snap.seq, 1);
	h->next_snapshot = now_ns + HIST_SNAPSHOT_NS;
	BLITZ_HIST_SNAPSHOT((int)w->index, (uint64_t)(uintptr_t)&h->snap,
			    (uint32_t)sizeof(h->snap), h->snap.seq);
}

/*
 * hist_timed_tick - this tick is timed (hist_tick): the sets stand for
 * the polls so far, and this tick's values replace them; every poll and
 * schedule of the tick goes through the timed copies (TRACED_HIST).
 */
void hist_timed_tick(struct blitz_worker *w)
{
	hist_stand_for(w);
	w->hist.fresh = FRESH_POLL | FRESH_SCHED;
	w->traced |= TRACED_HIST;
}

/*
 * hist_park - a park (@timeout_ns its limit); a snapshot before the sleep
 * if the last one is HIST_SNAPSHOT_PARK_NS old, sooner than a tick would
 * (histogram.h says why both are rare): here the worker has just run out
 * of work, where at a tick the snapshot delays the tick's polls.  Not at
 * every park: a snapshot is a probe hit and a 4 KiB copy (microseconds of
 * CPU), and a worker that parks between short bursts of work would pay
 * it per burst (and the sets' scaling, some hundreds of ns); what it
 * counted since reaches the tracer at a later park, at a tick once
 * HIST_SNAPSHOT_NS have passed, or at its exit.
 */
void hist_park(struct blitz_worker *w, uint64_t timeout_ns)
{
	uint64_t now;

	hist_record_value(&w->hist, BLITZ_HIST_PARK, timeout_ns);
	if (!w->hist.on)
		return;
	now = clock_now_ns();
	/* next_snapshot - HIST_SNAPSHOT_NS is when the last one fired. */
	if (now + (HIST_SNAPSHOT_NS - HIST_SNAPSHOT_PARK_NS) >= w->hist.next_snapshot)
		hist_fire(w, now);
}

/*
 * hist_exit - the worker's thread ends, after its last snapshot
 * (worker_hand_over); readers then read it as a closed window (its
 * thread's count goes with it).
 */
void hist_exit(struct blitz_worker *w)
{
	/* Relaxed: worker_read_hists() reads it from another thread; one writer. */
	__atomic_store_n(&w->hist.on, false, __ATOMIC_RELAXED);
	__atomic_store_n(&w->hist.ready_polls, NULL, __ATOMIC_RELAXED);	/* relaxed: as above */
}

/*
 * hist_adapt - hist_ewma's slow path, at the end of each tick that ran
 * polls: the EWMA's value; if automatic, the pace and the period from it;
 * and the ticks to the next timed one (a gap from a timed tick; a new gap
 * at once if the period shrank below what is left, so that a change of
 * pace is timed soon).  Only ticks with polls count: a timed tick that ran
 * none leaves the next one timed.
 *
 * The pace is the window's own average poll time: its first tick's
 * (@tick_ns), then an average of weight 1/4 over its untimed ticks (a
 * timed tick's polls are slower by the timing), and over every tick while
 * the period is 1 (else a long first tick, a burst's spawner, held the
 * period at 1 for good, and the traced run twice as slow).  Not the
 * scheduler's EWMA: that starts at 50 us (worker.c) and moves a tenth of
 * the way per tick, so a program traced from its start timed every tick
 * for its first 15 ticks with polls and most of the next 40, which in a
 * short run was most of its ticks.
 */
void hist_adapt(struct blitz_worker *w, uint64_t ewma_ns, uint64_t tick_ns)
{
	struct worker_hist *h = &w->hist;

	hist_record_value(h, BLITZ_HIST_EWMA, ewma_ns);
	if (h->automatic) {
		uint64_t pace = h->pace_ns;

		if (!pace)
			pace = tick_ns ? tick_ns : 1;
		else if (!(w->traced & TRACED_HIST) || h->sample == 1)
			pace = (tick_ns + 3 * pace) / 4;	/* at 1 every tick is timed */
		/* Relaxed: read by tests from another thread; one writer. */
		__atomic_store_n(&h->pace_ns, pace, __ATOMIC_RELAXED);
		h->sample = hist_period_for(pace);
		/* Relaxed: worker_read_hists() reads it from another thread; one writer. */
		__atomic_store_n(&h->snap.sample, h->sample, __ATOMIC_RELAXED);
	}
	if (!h->on)	/* the semaphore rose during this tick: from the next */
		return;
	if ((w->traced & TRACED_HIST) || h->countdown > h->sample + h->sample / 2)
		h->countdown = gap(h);
	else if (h->countdown > 1)
		h->countdown--;
	h->due = h->countdown == 1;
}

/*
 * A stamp: the ticks when queued, shifted up by STAMP_SHIFT, and below
 * them 1 + log2 of its weight (the schedules it stands for, a power of
 * two).
 */
#define STAMP_SHIFT	5

/*
 * stamp - @t is about to be queued, at @now: TASK_STAMPED tells its next
 * poll to read queued_at.  Relaxed: the queue that hands @t to its poller
 * (a push's release, the pop's or steal's acquire; the global queue's
 * lock) orders this and the store to queued_at before that poll's
 * transition to running, which clears the bit.
 */
static void stamp(struct blitz_task *t, uint64_t now, uint32_t weight)
{
	task_cold(t)->queued_at = now << STAMP_SHIFT | (uint64_t)(__builtin_ctz(weight) + 1);
	atomic_fetch_or_explicit(&t->state, TASK_STAMPED, memory_order_relaxed);
}

/*
 * Per thread: schedules from a thread that is not a worker: the countdown
 * to its next stamp (histogram.h), the schedules the countdown in progress
 * spans (the next stamp's weight), and the ticks at its last stamp.
 */
__thread uint32_t hist_outside_countdown __attribute__((tls_model("initial-exec")));
static __thread uint32_t outside_weight __attribute__((tls_model("initial-exec")));
static __thread uint64_t outside_last __attribute__((tls_model("initial-exec")));

/*
 * outside_period - the automatic period of a thread that is not a worker:
 * from the ns per schedule since its last stamp (two clock reads it makes
 * anyway), as hist_period_for gives for a poll; HIST_SAMPLE_OUTSIDE
 * until it has a stamp, or before the clock is calibrated.
 */
static uint32_t outside_period(uint64_t now, uint32_t span)
{
	uint64_t ns = outside_last && now > outside_last ? tick_clock_to_ns(now - outside_last) : 0;

	return ns ? hist_period_for(ns / span) : HIST_SAMPLE_OUTSIDE;
}

/* hist_stamp_outside_due - the schedule hist_stamp_outside's countdown picked. */
void hist_stamp_outside_due(struct blitz_task *t)
{
	uint32_t span = outside_weight ? outside_weight : 1, fixed = t->rt->cfg.hist_sample;
	uint64_t now = tick_clock_now();

	stamp(t, now, span);
	outside_weight = hist_outside_countdown = fixed ? fixed : outside_period(now, span);
	outside_last = now;
}

/*
 * hist_stamp - @t is about to be queued in a timed tick of worker @h:
 * every such schedule is stamped, standing for the period's N.
 */
void hist_stamp(struct worker_hist *h, struct blitz_task *t)
{
	stamp(t, tick_clock_now(), h->sample);
}

/*
 * hist_burst - @w's ring overflowed as a wake or spawn took the LIFO slot
 * and pushed its occupant out: a burst (histogram.h, "Bursts").  Unless
 * this tick is timed (it stamps every schedule), the task now in the slot
 * is stamped, standing for the QUEUE_HALF schedules since the ring last
 * overflowed.  Stamped after it was queued, which no other place allows:
 * the LIFO slot is its owner's alone, so no poll of it comes before this
 * thread's next one.  One that is stamped already keeps its stamp.
 */
void hist_burst(struct blitz_worker *w)
{
	_Static_assert(!(QUEUE_HALF & (QUEUE_HALF - 1)), "a stamp's weight is a power of two");
	/* Relaxed: the owner's own slot (worker_schedule_local). */
	struct blitz_task *t = atomic_load_explicit(&w->lifo, memory_order_relaxed);

	if ((w->traced & TRACED_HIST) || !t || (task_state_load(t) & TASK_STAMPED))
		return;
	stamp(t, tick_clock_now(), QUEUE_HALF);
}

/*
 * hist_stamp_read - @t's poll on @w (NULL: a helping thread) found
 * TASK_STAMPED in its state before running it: its queued-to-polled time,
 * if @w collects and the stamp is this window's.
 */
void hist_stamp_read(struct blitz_worker *w, struct blitz_task *t)
{
	uint64_t queued = task_cold(t)->queued_at, at = queued >> STAMP_SHIFT, now;
	struct worker_hist *h;
	uint32_t weight;

	if (!w || !w->hist.on)
		return;
	h = &w->hist;
	now = tick_clock_now();
	if (at < h->window_start || now < at)
		return;
	weight = 1u << ((queued & ((1u << STAMP_SHIFT) - 1)) - 1);
	take_sched(h);
	set_add(&h->set[HSET_SCHED], tick_clock_to_ns(now - at), weight);
	h->sched_weight += weight;
}

/* hist_poll_start - a timed poll begins: its start (ticks, never 0). */
uint64_t hist_poll_start(struct worker_hist *h)
{
	take_polls(h);
	return tick_clock_now() | 1;
}

/* hist_poll_timed - the timed poll begun at @start returned @ready. */
void hist_poll_timed(struct worker_hist *h, uint64_t start, bool ready)
{
	uint64_t now = tick_clock_now();

	set_add(&h->set[ready ? HSET_READY : HSET_PENDING], now > start ? tick_clock_to_ns(now - start) : 0, 1);
	h->polls_timed++;
}

/*
 * hist_record_pushed - the ring's length after a push in a timed tick;
 * one before the tick's first timed poll is left out (the set it would
 * join is the last tick's).
 */
void hist_record_pushed(struct worker_hist *h, uint64_t len)
{
	if (h->fresh & FRESH_POLL)
		return;
	hist_add(&h->snap.events[BLITZ_HIST_PUSH_LEN], 1);
	set_add(&h->set[HSET_PUSH], len, 1);
}

/* worker_read_hists - a copy of @w's histograms, each counter whole (tests). */
void worker_read_hists(const struct blitz_worker *w, struct blitz_hist_snapshot *out)
{
	const unsigned long long *src = (const unsigned long long *)&w->hist.snap;
	unsigned long long *dst = (unsigned long long *)out;

	_Static_assert(sizeof(*out) % sizeof(*src) == 0, "a snapshot is whole u64s");
	/* Relaxed: see hist_add(). */
	for (size_t i = 0; i < sizeof(*out) / sizeof(*src); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	/* While collecting, the counts the statistics keep are live. */
	if (__atomic_load_n(&w->hist.on, __ATOMIC_RELAXED))
		fill_events(w, out);
}
