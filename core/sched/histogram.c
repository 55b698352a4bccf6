// SPDX-License-Identifier: MIT
/*
 * core/sched/histogram.c - the workers' summary histograms (histogram.h):
 * what a hook records while hist_snapshot's semaphore is held, the clock
 * that times it, and the snapshot probe.
 *
 * Cost model (issue 16): a probe hit costs 550-1,700 ns, a scheduling event
 * 10-100 ns.  So every event is counted here, in the worker's memory, and
 * the tracer is called only at hist_snapshot (at most every
 * HIST_SNAPSHOT_NS, checked at ticks and parks, and at exit).  The clock is rdtsc where the CPU
 * says its TSC is invariant (about half of clock_gettime here), converted
 * to ns with a factor measured once against CLOCK_MONOTONIC; else
 * clock_gettime.  Even rdtsc is about a yield's cost, so poll time and
 * schedule latency are timed for one event in N (BLITZ_HIST_SAMPLE; by
 * default each worker's N follows its poll time, histogram.h), each value
 * weighted by the N events it stands for.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif
#include "../clock.h"
#include "../probes.h"
#include "histogram.h"
#include "runtime.h"
#include "task.h"

_Static_assert(PROBE_NR_SOURCES <= BLITZ_HIST_SOURCES,
	       "struct blitz_hist_snapshot has no room for every task source");
#include "worker.h"

/* ---------------------------------------------------------------------- */
/* The clock                                                               */

/*
 * Decided once (clock_once) before the first runtime's workers start, so
 * every stamp in the process is in the same unit.  ticks_mult: ns per tick
 * << 32, measured at the first attach (calibrate_once); 0 until then (a
 * value recorded before is zeroed by that worker's hist_switch).  Relaxed:
 * each is written once and read as a plain value; nothing else is
 * published through them.
 */
static bool clock_tsc;
static _Atomic uint64_t ticks_mult;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;
static pthread_once_t calibrate_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t runtimes;

static void clock_detect(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every state. */
	clock_tsc = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#endif
}

static inline uint64_t hist_ticks(void)
{
#if defined(__x86_64__)
	if (clock_tsc)
		return __rdtsc();
#endif
	return clock_now_ns();
}

/* Ticks per ns against CLOCK_MONOTONIC over 2 ms (once, at the first attach). */
static void clock_calibrate(void)
{
	struct timespec pause = { 0, 2000000 };
	uint64_t t0, n0, t1, n1;

	if (!clock_tsc) {
		atomic_store_explicit(&ticks_mult, 1ull << 32, memory_order_relaxed);
		return;
	}
	t0 = hist_ticks();
	n0 = clock_now_ns();
	nanosleep(&pause, NULL);
	t1 = hist_ticks();
	n1 = clock_now_ns();
	atomic_store_explicit(&ticks_mult,
			      t1 > t0 ? (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0)) : 0,
			      memory_order_relaxed);
}

static inline uint64_t ticks_to_ns(uint64_t d)
{
	/* Relaxed: see ticks_mult. */
	return (uint64_t)(((unsigned __int128)d *
			   atomic_load_explicit(&ticks_mult, memory_order_relaxed)) >> 32);
}

/* hist_runtime_id - a new runtime's number (1, 2, ...); settles the clock first. */
uint64_t hist_runtime_id(void)
{
	pthread_once(&clock_once, clock_detect);
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

/*
 * hist_record_weighted - a timed value @v that stands for @w events (the
 * polls or schedules of the countdown that picked it): slots, count and
 * sum grow by @w, so that a histogram whose period changed along the way
 * (BLITZ_HIST_SAMPLE=auto) still estimates every event's distribution,
 * not one leaning to the periods with short countdowns, and count stays
 * the sum of the slots.
 */
void hist_record_weighted(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v, uint32_t w)
{
	struct blitz_hist_log2 *l = &h->snap.hist[k];

	hist_add(&l->slots[slot_of(v)], w);
	hist_add(&l->count, w);
	hist_add(&l->sum, v * w);
}

/* hist_record - one event of kind @k, value @v. */
void hist_record(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	hist_add(&h->snap.events[k], 1);
	hist_record_value(h, k, v);
}

void worker_hist_init(struct worker_hist *h, unsigned worker, unsigned sample, uint64_t runtime)
{
	memset(h, 0, sizeof(*h));
	h->automatic = sample == BLITZ_HIST_SAMPLE_AUTO;
	h->sample = h->automatic ? BLITZ_HIST_SAMPLE_AUTO_MAX : sample;
	h->poll_countdown = h->sched_countdown = 1;
	h->poll_weight = h->sched_weight = h->timed_weight = 1;
	h->snap.size = sizeof(h->snap);
	h->snap.kinds = BLITZ_HIST_KINDS;
	h->snap.worker = (int)worker;
	h->snap.sample = h->sample;
	h->snap.runtime = runtime;
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
	uint64_t polls = 0;

	for (int s = 0; s < PROBE_NR_SOURCES; s++) {
		uint64_t n = STAT(w, polls_by_source[s]) - BASE(h, polls[s]);

		__atomic_store_n(&out->polls_by_source[s], n, __ATOMIC_RELAXED);
		polls += n;
	}
	/* Relaxed stores: see hist_add(). */
	__atomic_store_n(&e[BLITZ_HIST_POLL_PENDING], polls - e[BLITZ_HIST_POLL_READY], __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_SCHED], polls, __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_STEAL], STAT(w, steals) - BASE(h, steals), __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_GLOBAL_BATCH], STAT(w, global_batches) - BASE(h, batches),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&e[BLITZ_HIST_PARK], STAT(w, parks) - BASE(h, parks), __ATOMIC_RELAXED);
}

/*
 * hist_switch - the semaphore changed since the last tick.  On: start a
 * fresh window (the counts of a previous tracer, and whatever was recorded
 * since the semaphore rose mid-tick, are dropped).  Off: stop; the
 * histograms stay as they were until the next attach.
 */
void hist_switch(struct blitz_worker *w, bool on, uint64_t now_ns)
{
	struct worker_hist *h = &w->hist;

	/* Relaxed: worker_read_hists() reads it from another thread; one writer. */
	__atomic_store_n(&h->on, on, __ATOMIC_RELAXED);
	if (!on) {
		fill_events(w, &h->snap);	/* the window's counts stop here */
		/*
		 * Stamps are written only while collecting; those made up to
		 * now (until this tick, the latch kept stamping) belong to the
		 * window that ends here.
		 */
		h->window_start = hist_ticks();
		return;
	}
	pthread_once(&calibrate_once, clock_calibrate);
	/* Not atomic: a worker_read_hists() racing a re-attach may see a mix. */
	memset(h->snap.events, 0, sizeof(h->snap.events));
	memset(h->snap.hist, 0, sizeof(h->snap.hist));
	for (int s = 0; s < PROBE_NR_SOURCES; s++)
		SET_BASE(h, polls[s], STAT(w, polls_by_source[s]));
	SET_BASE(h, steals, STAT(w, steals));
	SET_BASE(h, batches, STAT(w, global_batches));
	SET_BASE(h, parks, STAT(w, parks));
	h->poll_countdown = h->sched_countdown = 1;
	h->poll_weight = h->sched_weight = 1;
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

	fill_events(w, &h->snap);
	hist_add(&h->snap.seq, 1);
	h->next_snapshot = now_ns + HIST_SNAPSHOT_NS;
	BLITZ_HIST_SNAPSHOT((int)w->index, (uint64_t)(uintptr_t)&h->snap,
			    (uint32_t)sizeof(h->snap), h->snap.seq);
}

/*
 * hist_park - a park (@timeout_ns its limit); a snapshot before the sleep
 * if the last one is HIST_SNAPSHOT_NS old.  Not at every park: a snapshot
 * is a probe hit and a 4 KiB copy (microseconds), and a worker that parks
 * between short bursts of work would pay it per burst; what it counted
 * since reaches the tracer at its next tick that is due (a sleep ends
 * within its 10 ms timeout) or at its exit.
 */
void hist_park(struct blitz_worker *w, uint64_t timeout_ns)
{
	uint64_t now;

	hist_record_value(&w->hist, BLITZ_HIST_PARK, timeout_ns);
	if (!w->hist.on)
		return;
	now = clock_now_ns();
	if (now >= w->hist.next_snapshot)
		hist_fire(w, now);
}

/* hist_exit - the last snapshot, as the worker's thread ends. */
void hist_exit(struct blitz_worker *w)
{
	if (w->hist.on)
		hist_fire(w, 0);
}

/* hist_adapt - hist_ewma's slow path: the value, and the period if automatic. */
void hist_adapt(struct worker_hist *h, uint64_t ewma_ns)
{
	hist_record_value(h, BLITZ_HIST_EWMA, ewma_ns);
	if (!h->automatic)
		return;
	h->sample = hist_period_for(ewma_ns);
	/* Relaxed: worker_read_hists() reads it from another thread; one writer. */
	__atomic_store_n(&h->snap.sample, h->sample, __ATOMIC_RELAXED);
}

/*
 * A stamp: the ticks when queued, shifted up by STAMP_SHIFT, and below
 * them 1 + log2 of its weight (the schedules it stands for, a power of
 * two): never 0, which means unstamped.
 */
#define STAMP_SHIFT	5

static inline uint64_t stamp_make(uint32_t weight)
{
	return hist_ticks() << STAMP_SHIFT | (uint64_t)(__builtin_ctz(weight) + 1);
}

/* hist_stamp_sample - the schedule that hist_stamp's countdown picked. */
void hist_stamp_sample(struct worker_hist *h, struct blitz_task *t)
{
	t->queued_at = stamp_make(h->sched_weight);
	h->sched_weight = h->sched_countdown = h->sample;
}

/* Per thread: schedules from a thread that is not a worker, for sampling. */
static __thread uint32_t outside_countdown __attribute__((tls_model("initial-exec")));
static __thread uint32_t outside_weight __attribute__((tls_model("initial-exec")));

void hist_stamp_outside(struct blitz_task *t)
{
	if (outside_countdown > 1) {
		outside_countdown--;
		return;
	}
	t->queued_at = stamp_make(outside_weight ? outside_weight : 1);
	outside_weight = outside_countdown =
		t->rt->cfg.hist_sample ? t->rt->cfg.hist_sample : HIST_SAMPLE_OUTSIDE;
}

/*
 * hist_poll_sample - hist_poll_begin's slow path: @t carries a stamp (its
 * queued-to-polled time is recorded, if the stamp is this window's) and/or
 * this poll is the timed one (@timed).
 */
uint64_t hist_poll_sample(struct worker_hist *h, struct blitz_task *t, bool timed)
{
	uint64_t queued = t->queued_at, now = hist_ticks();

	if (queued) {
		uint64_t at = queued >> STAMP_SHIFT;

		t->queued_at = 0;
		if (at >= h->window_start && now >= at)
			hist_record_weighted(h, BLITZ_HIST_SCHED, ticks_to_ns(now - at),
					     1u << ((queued & ((1u << STAMP_SHIFT) - 1)) - 1));
	}
	if (!timed)
		return 0;
	h->timed_weight = h->poll_weight;
	h->poll_weight = h->poll_countdown = h->sample;
	return now | 1;
}

/* hist_poll_timed - the timed poll begun at @start returned @ready. */
void hist_poll_timed(struct worker_hist *h, uint64_t start, bool ready)
{
	uint64_t now = hist_ticks();

	hist_record_weighted(h, ready ? BLITZ_HIST_POLL_READY : BLITZ_HIST_POLL_PENDING,
			     now > start ? ticks_to_ns(now - start) : 0, h->timed_weight);
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
