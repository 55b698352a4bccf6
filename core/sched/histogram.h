/* SPDX-License-Identifier: MIT */
/*
 * core/sched/histogram.h - each worker's summary histograms (issue 16):
 * collected only while a tracer holds hist_snapshot's semaphore, in the
 * worker's own memory, and handed out at hist_snapshot (the layout is
 * include/blitz/histograms.h).
 *
 * Cost while collecting: a traced run should describe the untraced one,
 * so the per-event work is a countdown per poll and per schedule, inline in
 * the plain (untraced) paths behind the tick's latch byte, and a clock read
 * only for one event in the worker's period N (hist_poll_sample and
 * hist_stamp_sample, out of line; the timed poll runs in the traced copy).  The exact event counts are the worker's statistics
 * (stats.polls_by_source, steals, global_batches, parks), read at each snapshot
 * against their value when the window began; only what the statistics do
 * not split (ready polls, sleeps by reason) is counted here.
 *
 * The hooks are inline and run only when the worker's tick latch says so
 * (worker->traced & TRACED_HIST, worker.h): unattached they cost nothing
 * beyond the latch test the hot paths already make.  Only the owning
 * worker writes its histograms; the probe fires on that worker's thread,
 * so the tracer's copy is consistent.  worker_read_hists() (tests) reads
 * them from another thread: the stores and its loads are relaxed atomics
 * (no read-modify-write: one writer) so that such a read is no data race.
 */
#ifndef BLITZ_CORE_HISTOGRAM_H
#define BLITZ_CORE_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <blitz/config.h>
#include <blitz/histograms.h>
#include "../probes.h"

struct blitz_worker;
struct blitz_task;

/*
 * Snapshots while running: at most one per this many ns of ticks.  A
 * snapshot costs each attached summary tool ~9 us of BPF run time (its
 * program copies and merges the histograms; kernel.bpf_stats_enabled,
 * blitz-polltime on yield_many: 2.1 ms over 244 runs) plus the trap:
 * with five tools, 20 ms keeps that near 0.25% of a busy worker.
 */
#define HIST_SNAPSHOT_NS	20000000ull

/*
 * What a sampled event costs beyond a plain one, in ns: the out-of-line
 * timed poll and the stamped schedule with their three clock reads
 * (callgrind: 225-295 instructions more per event at BLITZ_HIST_SAMPLE=1
 * than at 1024 on sched-bench, plus 3 rdtsc of ~10 ns; docs/tools.md).
 * The automatic period keeps it near 1% of the time between samples.
 */
#define HIST_SAMPLE_COST_NS	100u
/* Schedules from threads that are not workers, automatic period: a wake across threads costs microseconds. */
#define HIST_SAMPLE_OUTSIDE	8u

/* struct worker_hist - a worker's histograms and its collection state. */
struct worker_hist {
	bool on;			/* collecting (the semaphore seen at a tick) */
	bool automatic;			/* BLITZ_HIST_SAMPLE=auto: sample follows the EWMA */
	uint32_t sample;		/* one poll (schedule) in this many timed (stamped) */
	uint32_t poll_countdown;	/* polls until the next timed one (1: this one) */
	uint32_t sched_countdown;	/* schedules until the next stamped one */
	/*
	 * The weights (hist_record_weighted): how many polls (schedules) the
	 * countdown in progress spans, so how many its timed one stands for;
	 * timed_weight, the current timed poll's, for its pushes too.
	 */
	uint32_t poll_weight, sched_weight, timed_weight;
	uint64_t window_start;		/* ticks: a stamp older is an earlier window's (set at its end) */
	uint64_t next_snapshot;		/* ns (tick clock), when the next one is due */
	/* The statistics when the window began (events = now - base). */
	uint64_t base_polls[PROBE_NR_SOURCES], base_steals, base_batches, base_parks;
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

/* The slow paths: window changes, snapshots, sampled events. */
void hist_switch(struct blitz_worker *w, bool on, uint64_t now_ns);
void hist_fire(struct blitz_worker *w, uint64_t now_ns);
void hist_record(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v);
void hist_record_value(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v);
void hist_record_weighted(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v, uint32_t w);
void hist_stamp_sample(struct worker_hist *h, struct blitz_task *t);
void hist_stamp_outside(struct blitz_task *t);
uint64_t hist_poll_sample(struct worker_hist *h, struct blitz_task *t, bool timed);
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
 * hist_tick - at the start of each tick (@now_ns: the tick's clock): zero
 * the histograms when the semaphore has just turned on (a tool attached
 * mid-run sees only its own window), stop when it turned off, and fire a
 * snapshot every HIST_SNAPSHOT_NS.
 */
static inline void hist_tick(struct blitz_worker *w, struct worker_hist *h, uint64_t now_ns)
{
	bool on = hist_enabled();

	if (__builtin_expect(on != h->on, 0))
		hist_switch(w, on, now_ns);
	else if (on && now_ns >= h->next_snapshot)
		hist_fire(w, now_ns);
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

void hist_adapt(struct worker_hist *h, uint64_t ewma_ns);

/*
 * hist_ewma - the worker's average poll time changed (each tick's
 * update_interval): recorded, and the automatic period follows it.
 */
static inline void hist_ewma(struct worker_hist *h, uint64_t ewma_ns)
{
	if (hist_enabled())
		hist_adapt(h, ewma_ns);
}

/* hist_count - a rare event's value (a steal's size, a batch's) while collecting. */
static inline void hist_count(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	if (hist_enabled())
		hist_record_value(h, k, v);
}

/*
 * hist_stamp - @t is about to be queued from worker @h (NULL: another
 * thread): stamp one schedule in the period N with the clock.
 * Unstamped tasks keep queued_at 0: the poll that reads a stamp clears it.
 */
static inline void hist_stamp(struct worker_hist *h, struct blitz_task *t)
{
	if (!h)
		hist_stamp_outside(t);
	else if (__builtin_expect(--h->sched_countdown == 0, 0))
		hist_stamp_sample(h, t);
}

/*
 * hist_poll_due - count down to the next timed poll (on @h's worker, while
 * collecting); true if this poll is the timed one or its task carries a
 * schedule stamp (@queued, its queued_at): only then does the poll need the sampled copy
 * (hist_poll_begin around it).  Inline in the plain poll path: a decrement
 * and a test of the stamp, no clock.
 */
static inline bool hist_poll_due(struct worker_hist *h, uint64_t queued)
{
	return (--h->poll_countdown == 0) | (queued != 0);
}

/*
 * hist_poll_begin - the poll that hist_poll_due() picked (@t: the task;
 * the countdown already ran): the queued-to-polled time of a stamped task.
 * Returns the poll's start (ticks) if it is the timed one, else 0.
 */
static inline uint64_t hist_poll_begin(struct worker_hist *h, struct blitz_task *t)
{
	return hist_poll_sample(h, t, h->poll_countdown == 0);
}

/*
 * hist_poll_dropped - worker_run_task counted down for a task that was
 * cancelled and is dropped, not polled: the step given back, so that the
 * countdown's weight stays a count of polls (and one that reached 0 does
 * not wrap: the next poll is the timed one).
 */
static inline void hist_poll_dropped(struct worker_hist *h)
{
	h->poll_countdown++;
}

/* hist_record_pushed - the ring's length after a push made in a timed poll. */
static inline void hist_record_pushed(struct worker_hist *h, uint64_t len)
{
	hist_add(&h->snap.events[BLITZ_HIST_PUSH_LEN], 1);
	hist_record_weighted(h, BLITZ_HIST_PUSH_LEN, len, h->timed_weight);
}

/* hist_poll_ready - a poll returned READY (task_finish, while collecting). */
static inline void hist_poll_ready(struct worker_hist *h)
{
	hist_add(&h->snap.events[BLITZ_HIST_POLL_READY], 1);
}

/*
 * hist_poll_end - the poll begun at @start (0: not timed) returned @ready
 * (counted by task_finish, not here: hist_poll_ready).
 */
static inline void hist_poll_end(struct worker_hist *h, uint64_t start, bool ready)
{
	if (__builtin_expect(start != 0, 0))
		hist_poll_timed(h, start, ready);
}

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
