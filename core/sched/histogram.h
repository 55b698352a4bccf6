/* SPDX-License-Identifier: MIT */
/*
 * core/sched/histogram.h - each worker's summary histograms (issue 16):
 * collected only while a tracer holds hist_snapshot's semaphore, in the
 * worker's own memory, and handed out at hist_snapshot (the layout is
 * include/blitz/histograms.h).
 *
 * Every hook here is inline and starts with the semaphore test: with no
 * tracer attached a hook is a load and a not-taken branch.  The work is in
 * histogram.c.  Only the owning worker writes its histograms; the probe
 * fires on that worker's thread, so the tracer's copy is consistent.
 * worker_read_hists() (tests) reads them from another thread: the stores
 * and its loads are relaxed atomics (no read-modify-write: one writer) so
 * that such a read is no data race and sees each counter whole.
 */
#ifndef BLITZ_CORE_HISTOGRAM_H
#define BLITZ_CORE_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <blitz/histograms.h>
#include "../probes.h"

struct blitz_worker;
struct blitz_task;

/* Snapshots while running: at most one per this many ns of ticks. */
#define HIST_SNAPSHOT_NS	5000000ull

/* struct worker_hist - a worker's histograms and its collection state. */
struct worker_hist {
	bool on;			/* collecting (the semaphore seen at a tick) */
	uint32_t sample_mask;		/* sample - 1: a poll is timed when (polls & mask) == 0 */
	uint32_t polls;			/* polls while on, for the sampling */
	uint64_t next_snapshot;		/* ns (tick clock), when the next one is due */
	struct blitz_hist_snapshot snap;
};

/* hist_enabled - does a tracer ask for the histograms? */
static inline bool hist_enabled(void)
{
	return BLITZ_HIST_SNAPSHOT_ENABLED();
}

void hist_init(struct worker_hist *h, unsigned worker, unsigned sample, uint64_t runtime);
uint64_t hist_runtime_id(void);

/* The slow paths, taken only while enabled. */
void hist_switch(struct blitz_worker *w, bool on, uint64_t now_ns);
void hist_fire(struct blitz_worker *w, uint64_t now_ns);
void hist_record(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v);
void hist_queued(struct blitz_task *t);
uint64_t hist_poll_start(struct blitz_worker *w, struct blitz_task *t);
void hist_poll_end(struct blitz_worker *w, uint64_t start, bool ready);
void hist_park(struct blitz_worker *w, uint64_t timeout_ns);
void hist_slept(struct blitz_worker *w, int reason, uint64_t ns);
void hist_exit(struct blitz_worker *w);
void worker_read_hists(const struct blitz_worker *w, struct blitz_hist_snapshot *out);

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

/* hist_count - one event of kind @k with value @v (a size, a length). */
static inline void hist_count(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	if (hist_enabled())
		hist_record(h, k, v);
}

/* hist_stamp - a task is about to be queued (spawn, schedule): stamp it (sampled). */
static inline void hist_stamp(struct blitz_task *t)
{
	if (hist_enabled())
		hist_queued(t);
}

/* hist_parked / hist_woke - around a sleep in worker_park. */
static inline void hist_parked(struct blitz_worker *w, uint64_t timeout_ns)
{
	if (hist_enabled())
		hist_park(w, timeout_ns);
}

static inline void hist_woke(struct blitz_worker *w, int reason, uint64_t slept_ns)
{
	if (hist_enabled() && slept_ns)
		hist_slept(w, reason, slept_ns);
}

/*
 * hist_poll_begin / hist_poll_done - around a poll (the traced copy of
 * run_task): the schedule latency, the event counts, the sampled poll time.
 */
static inline uint64_t hist_poll_begin(struct blitz_worker *w, struct blitz_task *t)
{
	return hist_enabled() ? hist_poll_start(w, t) : 0;
}

static inline void hist_poll_done(struct blitz_worker *w, uint64_t start, bool ready)
{
	if (hist_enabled())
		hist_poll_end(w, start, ready);
}
#endif
