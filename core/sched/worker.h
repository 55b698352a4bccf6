/* SPDX-License-Identifier: MIT */
/*
 * core/sched/worker.h - one worker thread and what it owns (docs/scheduler.md).
 *
 * Owned by the worker's thread alone: the LIFO slot, the batch buffer, the
 * tick/budget/EWMA state, the PRNG.  Shared: the ring (thieves), the park
 * state (wakers), transitioning_to_park (read by wakers), the statistics
 * (readers; one writer each).
 */
#ifndef BLITZ_CORE_WORKER_H
#define BLITZ_CORE_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <blitz/stats.h>
#include "constants.h"
#include "../trace/event_log.h"
#include "../trace/histogram.h"
#include "owned.h"
#include "park.h"
#include "queue.h"
#include "task_cache.h"

struct blitz_runtime;
struct blitz_task;
struct help_frame;

/* Statistics: one writer (the worker), any reader; see stat_inc(). */
struct worker_stats {
	/*
	 * Polls, by where the task was found (SRC_*, blitz_probe_codes.h):
	 * their sum is the polls statistic, and the summary histograms'
	 * polls by source are read from here (histogram.c), so that no hook
	 * counts them again.
	 */
	_Atomic uint64_t polls_by_source[PROBE_NR_SOURCES];
	_Atomic uint64_t steals, stolen, steal_fails, parks, lifo_hits,
		global_batches, global_tasks, overflows, overflowed, spawned,
		budget_exhausted, ewma_poll_ns, global_interval,
		task_cache_hits, task_cache_misses;
};

struct blitz_worker {
	struct blitz_queue queue;		/* cache-line aligned inside */

	alignas(CACHE_LINE) _Atomic(struct blitz_task *) lifo;
	_Atomic bool transitioning_to_park;
	bool searching;
	bool draining;				/* wakes on this thread go to the global queue (wake.h) */
	bool defer_global;			/* wake.h: this tick leaves the global queue to lower workers */
	bool reaping_asleep;			/* owner-only: dispatching the I/O its sleep_in_io woke to */
	bool reaped_asleep;			/* owner-only: the last sleep reaped the I/O (tick skips its own) */
	uint8_t traced;				/* TRACED_*: latched at each tick (worker_trace_latch) */
	bool logging;				/* event_log.h: TRACED_EVENTS at the last tick (owner-only) */
	uint8_t trace_always;			/* TRACED_EVENTS with the flight recorder (BLITZ_FLIGHT) */
	bool exit_flushed;			/* exit_flush.h: handed over at the process's exit (owner-only) */
	unsigned index;
	struct blitz_runtime *rt;
	uint64_t tick;
	uint32_t budget;
	uint32_t lifo_polls;
	uint32_t polls_since_global;
	int run_source;				/* SRC_*: where find_work found the task it runs */
	uint32_t global_interval;
	uint64_t ewma_poll_ns;
	uint64_t tick_start;			/* wake.h: ns, this tick's start */
	_Atomic uint64_t awake_since;		/* wake.h: ns, first tick after the last park; 0: parking */
	uint64_t rng[2];			/* xorshift64+ */
	uint32_t batch_head, batch_len;
	struct blitz_task *batch[BLITZ_BATCH_BUFFER];
	struct owned_local owned_local;		/* owned.h: outside tasks we completed, not yet unlinked */
	pthread_t thread;
	struct task_cache task_cache;		/* task_cache.h: free task blocks, owner-only */
	struct task_outbox task_outbox;		/* task_cache.h: blocks bound for the depot, owner-only */
	struct help_frame *help;		/* help.c: the innermost join helping on this stack */
	_Atomic(struct blitz_task *) join_sleeper; /* help.c: the joiner whose join parks us; NULL: none */
	uintptr_t stack_limit;			/* help.c: a join below this address does not help */
	uint64_t helped_ns;			/* help.c: ns inside joins (tick() subtracts them) */
	uint64_t inline_polls;			/* help.c: polls a join's fast path ran (tick() counts them) */

	alignas(CACHE_LINE) struct blitz_park park;
	_Atomic int woken_by;			/* who unparked us (worker index, -1 outside) */

	alignas(CACHE_LINE) struct worker_stats stats;

	alignas(CACHE_LINE) struct worker_hist hist;	/* histogram.h: written by the owner alone */

	alignas(CACHE_LINE) struct worker_events events;	/* event_log.h: owner-only */
};

/*
 * What the worker's hot paths trace: read once per tick from the
 * semaphores (worker_trace_latch), so that a poll, a push and a schedule
 * test one owner-only byte, zero when nothing is attached, instead of two
 * or three semaphores.  A _POLL, _PUSH or _SCHEDULE bit sends them to
 * their traced copy (the per-event probes), TRACED_EVENTS to the copies
 * that write the event log (event_log.h).  TRACED_HIST is not read from
 * a semaphore: hist_tick sets it for a timed tick of the summary
 * histograms (histogram.h), whose polls and schedules then take their
 * timed copies; in the other ticks the byte stays zero, and the paths
 * cost what they cost untraced.  A tracer that attaches mid-tick sees
 * that worker's events from its next tick (at most a budget of polls
 * later); one that detaches mid-tick costs a few traced copies whose
 * probes then test their own semaphores.
 */
enum {
	TRACED_POLL = 1 << 0,		/* task_poll_start, task_poll_end */
	TRACED_PUSH = 1 << 1,		/* local_push */
	TRACED_SCHEDULE = 1 << 2,	/* task_schedule */
	TRACED_HIST = 1 << 3,		/* a timed tick of the summary histograms (hist_tick) */
	TRACED_EVENTS = 1 << 4,		/* event_flush, event_ring, BLITZ_FLIGHT: the event log */
};

static inline uint8_t worker_trace_latch(void)
{
	return ((BLITZ_TASK_POLL_START_ENABLED() | BLITZ_TASK_POLL_END_ENABLED()) ?
		TRACED_POLL : 0) |
	       (BLITZ_LOCAL_PUSH_ENABLED() ? TRACED_PUSH : 0) |
	       (BLITZ_TASK_SCHEDULE_ENABLED() ? TRACED_SCHEDULE : 0) |
	       (BLITZ_EVENT_FLUSH_ENABLED() | BLITZ_EVENT_RING_ENABLED() ? TRACED_EVENTS : 0);
}

/*
 * latch_after_nested - @traced, our tick's latch, to restore after the
 * ticks a join nested on this worker: whatever they latched, the poll that
 * joined goes on as its tick began, except that the event log's bit goes
 * if a nested tick saw its tracer leave and stopped the log (its records
 * would go to a window nobody reads, ahead of the next one's).
 */
static inline uint8_t latch_after_nested(const struct blitz_worker *w, uint8_t traced)
{
	return w->logging ? traced : (uint8_t)(traced & ~TRACED_EVENTS);
}

/*
 * stat_inc - add to a counter that only this worker writes: a relaxed load
 * and store, no read-modify-write; readers see some recent value.
 */
#define stat_add(w, field, n)						\
	atomic_store_explicit(&(w)->stats.field,			\
		atomic_load_explicit(&(w)->stats.field, memory_order_relaxed) + (n), \
		memory_order_relaxed)
#define stat_inc(w, field) stat_add(w, field, 1)

/*
 * worker_polls - the tasks @w polled (relaxed: a statistic, see stat_inc).
 * A poll is counted when its task is found and taken back if the task
 * turns out cancelled and is dropped: a reader between the two sees one
 * more, which then goes (the count is not monotonic to within the drops
 * in flight, one per worker).
 */
static inline uint64_t worker_polls(const struct blitz_worker *w)
{
	uint64_t n = 0;

	for (int s = 0; s < PROBE_NR_SOURCES; s++)
		n += atomic_load_explicit(&w->stats.polls_by_source[s], memory_order_relaxed);
	return n;
}

void worker_init(struct blitz_worker *w, struct blitz_runtime *rt, unsigned index);
void *worker_main(void *arg);
void worker_schedule_local(struct blitz_worker *w, struct blitz_task *t, bool yield);
void worker_unpark(struct blitz_worker *w);
void worker_read_stats(const struct blitz_worker *w, struct blitz_worker_stats *out);
void worker_run_task(struct blitz_worker *w, struct blitz_task *t);
void worker_park(struct blitz_worker *w);
uint32_t worker_help_tick(struct blitz_worker *w, const struct blitz_task *target);
bool worker_poll_lifo(struct blitz_worker *w, struct blitz_task *t);
void worker_help_leave(struct blitz_worker *w);
void worker_hand_over(struct blitz_worker *w, uint64_t now_ns);
int worker_join(struct blitz_worker *w, struct blitz_task *t);

/* The calling thread's worker (NULL off the workers) and polled task. */
extern __thread struct blitz_worker *current_worker __attribute__((tls_model("initial-exec")));
extern __thread struct blitz_task *current_task __attribute__((tls_model("initial-exec")));

#endif
