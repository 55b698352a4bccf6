/* SPDX-License-Identifier: MIT */
/*
 * core/trace/histogram.h - each worker's summary histograms
 * (docs/probes.md, "Summary histograms"): collected only while a tracer holds hist_snapshot's semaphore, in the
 * worker's own memory, and handed out at hist_snapshot (the layout is
 * include/blitz/trace/histograms.h).
 *
 * Cost while collecting: a traced run should describe the untraced one,
 * so the sample is taken by whole ticks.  At each tick's start (which reads
 * the semaphore anyway) the worker decides whether this tick is timed: one
 * tick with polls in the worker's period N, the gaps jittered.  A timed
 * tick sets TRACED_HIST in the tick's latch: every poll in it is timed
 * (the out-of-line copy of the poll path) and every schedule stamped; an
 * untimed tick runs the plain paths, with no per-event work at all.  A
 * stamp is read by the task's next poll, whichever tick and worker run it:
 * TASK_STAMPED in the task's state says there is one, and the transition
 * to running clears it, so that a stamp is read once or never (a stale one
 * is never taken for a wait), at no cost to the polls of unstamped tasks
 * (the bit is tested with TASK_CANCELLED).  The exact event counts are the
 * worker's statistics (stats.polls_by_source, steals, global_batches,
 * parks), read at each snapshot against their value when the window
 * began; only what the statistics do not split (ready polls, sleeps by
 * reason) is counted here.
 *
 * Bursts: tick sampling misses schedules that cluster in one tick.  A
 * poll that spawns 10,000 tasks queues them all in its tick; when that
 * tick is not the timed one, later ticks' few short waits stood for them
 * and the wait histogram read far too low (docs/probes.md, "Summary
 * histograms", which has the measurement).  So while collecting, a ring that overflows in a tick that is not timed
 * (a slow path: half the ring moves to the global queue) has the task in
 * the LIFO slot that pushed it out stamped (hist_burst), standing
 * for the QUEUE_HALF schedules since the last overflow: one stamp per
 * QUEUE_HALF schedules of a burst, at no cost to the others.  The tasks
 * before the first overflow (a ring's worth, the longest waits of the
 * burst) and bursts smaller than a ring are still the ticks' to sample;
 * with other workers stealing, overflows are rarer than one in QUEUE_HALF,
 * so a burst stamp then stands for more schedules than its weight says.
 *
 * The timed values go first into sets (struct hist_set) that stand for a
 * stratum of polls: the values of the last timed tick, scaled at each
 * flush (a timed tick's start, a snapshot, the window's end) to the polls
 * since the last flush (a ratio estimator), so that each histogram's
 * count is the worker's polls exactly after a flush.
 *
 * Only the owning worker writes its histograms and sets; the probe fires
 * on that worker's thread, so the tracer's copy is consistent.
 * worker_read_hists() (tests) reads the snapshot from another thread: the
 * stores and its loads are relaxed atomics (no read-modify-write: one
 * writer) so that such a read is no data race.
 */
#ifndef BLITZ_CORE_HISTOGRAM_H
#define BLITZ_CORE_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <blitz/config.h>
#include <blitz/trace/histograms.h>
#include "../probes.h"

struct blitz_worker;
struct blitz_task;

/*
 * Snapshots while running: a worker about to park fires one if its last is
 * HIST_SNAPSHOT_PARK_NS old, a worker at a tick only if its last is
 * HIST_SNAPSHOT_NS old (one that never parks).  A snapshot is a trap
 * plus each attached summary tool's BPF copy and merge of the histograms,
 * which delays whatever the worker would run next: taken at a woken
 * worker's first tick it would delay the burst the worker woke for, so it
 * is taken before a park; and a park can fall inside a burst too (a worker
 * sharing its CPU with the spawner parks between its spawns), so they are
 * also rare.  The price: a running tool's view lags by up to 200 ms (what
 * it reads at the worker's exit is exact).  What a snapshot costs, and the
 * intervals tried: docs/probes.md, "Summary histograms";
 * experiments/observer-effect/NOTEBOOK.md, "History: tools/measure-modes".
 */
#define HIST_SNAPSHOT_PARK_NS	100000000ull
#define HIST_SNAPSHOT_NS	200000000ull

/*
 * What a sampled event costs beyond a plain one, in ns: the out-of-line
 * timed poll and the stamped schedule with their clock reads (measured
 * with every tick timed: docs/probes.md, "Summary histograms").  The
 * automatic period keeps the timed ticks' extra cost near 1% of the time
 * between them.
 */
#define HIST_SAMPLE_COST_NS	100u
/*
 * Schedules from threads that are not workers: the first stamped period
 * of a thread; then its period follows the time between its schedules
 * (hist_stamp_outside).
 */
#define HIST_SAMPLE_OUTSIDE	8u

/*
 * struct hist_set - timed values not yet in the histograms: a slot's
 * weight, the slots used, the sum of value x weight.  Owner-only.
 */
struct hist_set {
	uint64_t used;				/* bit s: slots[s] != 0 */
	uint64_t slots[BLITZ_HIST_SLOTS];
	unsigned __int128 sum;
};

/* The sets: poll time by result, ring length at push, schedule latency. */
enum { HSET_READY, HSET_PENDING, HSET_PUSH, HSET_SCHED, HSET_KINDS };

/* worker_hist.fresh: a set is an earlier timed tick's (cleared at its next value). */
enum { FRESH_POLL = 1, FRESH_SCHED = 2 };

/* struct worker_hist - a worker's histograms and its collection state. */
struct worker_hist {
	bool on;			/* collecting (the semaphore seen at a tick) */
	bool automatic;			/* BLITZ_HIST_SAMPLE=auto: sample follows pace_ns */
	bool due;			/* the next tick is timed */
	uint8_t fresh;			/* FRESH_*: cleared at the set's next value */
	uint32_t sample;		/* one tick with polls in this many is timed (on average) */
	uint32_t countdown;		/* ticks with polls until the next timed one */
	uint32_t rng;			/* xorshift32: jitters the gaps between timed ticks */
	uint64_t pace_ns;		/* the window's average poll time (hist_adapt); 0: no tick yet */
	uint64_t window_start;		/* ticks: a stamp older is an earlier window's (set at its end) */
	uint64_t next_snapshot;		/* ns (tick clock), when a tick fires the next one */
	/*
	 * The sets' size: the polls timed (the poll and push sets), the
	 * weight of the stamps read (the schedule set); and the worker's
	 * polls when each last stood for the polls (hist_stand_for).
	 */
	uint64_t polls_timed, sched_weight, poll_mark, sched_mark;
	/*
	 * The worker thread's hist_ready_polls (NULL until it runs, and after
	 * it ended), for readers on other threads.
	 */
	const unsigned long long *ready_polls;
	/* The statistics when the window began (events = now - base). */
	uint64_t base_polls[PROBE_NR_SOURCES], base_steals, base_batches, base_parks, base_ready;
	struct hist_set set[HSET_KINDS];
	struct blitz_hist_snapshot snap;
};

/* hist_enabled - does a tracer ask for the histograms? */
static inline bool hist_enabled(void)
{
	return BLITZ_HIST_SNAPSHOT_ENABLED();
}

void worker_hist_init(struct worker_hist *h, unsigned worker, unsigned sample, uint64_t runtime);
uint64_t hist_runtime_id(void);
void worker_read_hists(const struct blitz_worker *w, struct blitz_hist_snapshot *out);

/* The slow paths: window changes, snapshots, timed ticks and their events. */
void hist_switch(struct blitz_worker *w, bool on, uint64_t now_ns);
void hist_fire(struct blitz_worker *w, uint64_t now_ns);
void hist_timed_tick(struct blitz_worker *w);
void hist_record(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v);
void hist_record_value(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v);
void hist_record_pushed(struct worker_hist *h, uint64_t len);
void hist_stamp(struct worker_hist *h, struct blitz_task *t);
void hist_burst(struct blitz_worker *w);
void hist_stamp_outside_due(struct blitz_task *t);
void hist_stamp_read(struct blitz_worker *w, struct blitz_task *t);
uint64_t hist_poll_start(struct worker_hist *h);
void hist_poll_timed(struct worker_hist *h, uint64_t start, bool ready);
void hist_park(struct blitz_worker *w, uint64_t timeout_ns);
void hist_exit(struct blitz_worker *w);

/*
 * add - one writer (the owning worker): a relaxed load and store, no
 * read-modify-write, so that worker_read_hists() on another thread reads
 * each counter whole.
 */
static inline void hist_add(unsigned long long *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/*
 * hist_tick - at the start of each tick (@now_ns: the tick's clock), after
 * the tick latched its tracers (w->traced): zero the histograms when the
 * semaphore has just turned on (a tool attached mid-run sees only its own
 * window), stop when it turned off, fire a snapshot if none came for
 * HIST_SNAPSHOT_NS (a parking worker fires them earlier: hist_park), and
 * make this tick a timed one if it is due.
 */
static inline void hist_tick(struct blitz_worker *w, struct worker_hist *h, uint64_t now_ns)
{
	bool on = hist_enabled();

	if (__builtin_expect(on != h->on, 0))
		hist_switch(w, on, now_ns);
	if (!on)
		return;
	if (now_ns >= h->next_snapshot)
		hist_fire(w, now_ns);
	if (h->due)
		hist_timed_tick(w);
}

/*
 * hist_period_for - the automatic period for an average poll of @ewma_ns:
 * the smallest power of two N with HIST_SAMPLE_COST_NS / (N * @ewma_ns) at
 * most 1%, within [1, BLITZ_HIST_SAMPLE_AUTO_MAX].
 */
static inline uint32_t hist_period_for(uint64_t ewma_ns)
{
	uint64_t want = (100ull * HIST_SAMPLE_COST_NS + ewma_ns - 1) / (ewma_ns ? ewma_ns : 1);
	uint32_t n = 1;

	while (n < want && n < BLITZ_HIST_SAMPLE_AUTO_MAX)
		n <<= 1;
	return n;
}

void hist_adapt(struct blitz_worker *w, uint64_t ewma_ns, uint64_t tick_ns);

/*
 * hist_ewma - a tick that ran polls ended, its mean poll time @tick_ns,
 * and the worker's average poll time is now @ewma_ns (update_interval):
 * recorded, the automatic period follows the tick's pace, and the count
 * of ticks to the next timed one moves.
 */
static inline void hist_ewma(struct blitz_worker *w, uint64_t ewma_ns, uint64_t tick_ns)
{
	if (hist_enabled())
		hist_adapt(w, ewma_ns, tick_ns);
}

/* hist_count - a rare event's value (a steal's size, a batch's) while collecting. */
static inline void hist_count(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	if (hist_enabled())
		hist_record_value(h, k, v);
}

/*
 * Per thread: the polls run on it that completed their task, counted
 * while task_finish's semaphore test is taken (a tracer holds
 * hist_snapshot's or task_complete's semaphore): a worker's ready polls
 * are its thread's count minus base_ready.  Per thread, not per worker,
 * so that task_finish needs no worker: one add.
 */
extern __thread unsigned long long hist_ready_polls __attribute__((tls_model("initial-exec")));

/*
 * Per thread: schedules from a thread that is not a worker until its next
 * stamp (hist_stamp_outside_due; 0 before its first schedule).
 */
extern __thread uint32_t hist_outside_countdown __attribute__((tls_model("initial-exec")));

/*
 * hist_stamp_outside - @t is about to be queued by a thread that is not a
 * worker, while collecting: a countdown, inline; one schedule in the
 * thread's period is stamped.
 */
static inline void hist_stamp_outside(struct blitz_task *t)
{
	if (__builtin_expect(hist_outside_countdown > 1, 1)) {
		hist_outside_countdown--;
		return;
	}
	hist_stamp_outside_due(t);
}

/* hist_poll_ready - @n (0 or 1) polls returned READY on this thread (task_finish). */
static inline void hist_poll_ready(unsigned n)
{
	hist_add(&hist_ready_polls, n);
}

void hist_thread_start(struct blitz_worker *w);

/* hist_parked / hist_woke - around a sleep in worker_park. */
static inline void hist_parked(struct blitz_worker *w, uint64_t timeout_ns)
{
	if (hist_enabled())
		hist_park(w, timeout_ns);
}

static inline void hist_woke(struct worker_hist *h, int reason, uint64_t slept_ns)
{
	if (hist_enabled() && slept_ns)
		hist_record(h, BLITZ_HIST_SLEEP_NOTIFIED + reason, slept_ns);
}

#endif
