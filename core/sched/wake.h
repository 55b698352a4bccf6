/* SPDX-License-Identifier: MIT */
/*
 * core/sched/wake.h - the wake policy (BLITZ_WAKE): when work on one
 * worker makes the scheduler wake, or take from, another.  worker.c asks
 * these hooks; each holds the policies' answers, backlog's and eager's
 * inline here (on the hot paths: a test of cfg.wake before them) and
 * bounded's in wake.c.
 *
 *   eager (Tokio's rule): a push that leaves more than one task on this
 *     worker wakes a sleeper; any queued task counts as work for others;
 *     any victim may be stolen from.  None of the bookkeeping below runs.
 *   backlog (the default): eager, except that such a push wakes a sleeper
 *     only when the tasks it leaves, times this worker's EWMA poll time,
 *     reach wake_min_backlog_ns (or the ring overflowed): a backlog that
 *     this worker runs before a woken one could start (a futex wake, a
 *     context switch, cold caches: docs/scheduler.md, "Why `backlog`")
 *     is left to it, and its tasks stay on one CPU.  The EWMA is a prediction: a
 *     task queued behind a poll that runs far longer than the average
 *     waits for that poll, or for a sleeper's park timeout (10 ms by
 *     default).  Nothing else differs from eager.
 *   bounded (opt-in; docs/scheduler.md, "Waking another worker"): a
 *     worker that keeps up with its own queue runs it alone.  Work counts
 *     for others only in the global queue or in the ring of a worker that
 *     is behind (wake_worker_behind); a lower-numbered victim is stolen
 *     from only when behind; and a worker above 0 whose lower workers keep
 *     up hands its reaped wakes and the global queue to them for a tick
 *     (defer_global), so that a lightly loaded runtime gathers on worker 0.
 *
 * The state bounded keeps is in struct blitz_worker (draining,
 * defer_global, tick_start, awake_since); only these hooks and wake.c
 * write it.  What a skipped wake can cost under bounded is parallelism
 * until a park timeout (10 ms) plus the busy bound, never a task: see
 * docs/scheduler.md, "Waking another worker", for the argument, which
 * tests/model/idle.pml checks with -DBOUNDED (tests/model/README.md).
 */
#ifndef BLITZ_CORE_SCHED_WAKE_H
#define BLITZ_CORE_SCHED_WAKE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../clock.h"
#include "runtime.h"
#include "worker.h"

/* bounded's halves of the hooks (wake.c). */
bool wake_worker_behind(struct blitz_worker *v, uint64_t now);
bool wake_bounded_has_work(struct blitz_runtime *rt);
bool wake_bounded_final_check(struct blitz_worker *w);
void wake_bounded_tick_start(struct blitz_worker *w, uint64_t start);

static inline bool wake_is_bounded(const struct blitz_runtime *rt)
{
	return rt->cfg.wake == BLITZ_WAKE_BOUNDED;
}

/*
 * awake_too_long - bounded: has @v been awake without parking for
 * wake_busy_ns at @now?  Relaxed: awake_since is written by @v alone
 * (wake_tick_start, wake_park_begin/_end) and read as a hint; no other
 * data is read through it.
 */
static inline bool awake_too_long(struct blitz_worker *v, uint64_t now)
{
	uint64_t since = atomic_load_explicit(&v->awake_since, memory_order_relaxed);

	return since && now > since && now - since >= v->rt->cfg.wake_busy_ns;
}

/*
 * wake_bounded_local_push - bounded, the owner's own view after a push
 * that left @n tasks: is it behind, by its private EWMA and this tick's
 * start time?  Otherwise it keeps up: with a ring per worker, a woken
 * worker would take half the connections into its own ring, and on a
 * machine with fewer cores than runnable threads they then wait whenever
 * it is preempted (docs/scheduler.md, "Why `bounded` exists").
 * Inline, unlike the rest of bounded: it runs on every such push.
 */
static inline bool wake_bounded_local_push(struct blitz_worker *w, size_t n)
{
	return n * w->ewma_poll_ns >= w->rt->cfg.wake_backlog_ns ||
	       awake_too_long(w, w->tick_start);
}

/* wake_init - bounded's state of a new worker: not deferring, parked. */
static inline void wake_init(struct blitz_worker *w)
{
	w->defer_global = false;
	w->tick_start = 0;
	atomic_init(&w->awake_since, 0);
}

/*
 * wake_should_notify_local_push - a push to @w's own queue left @n > 1
 * tasks there (@overflowed: part of the ring went to the global queue):
 * wake a sleeper?  eager: yes.  backlog: on overflow, or when @n times
 * @w's EWMA poll time (its own, private) reaches wake_min_backlog_ns.
 * bounded: on overflow, or when @w is behind its own backlog
 * (wake_bounded_local_push).
 */
static inline bool wake_should_notify_local_push(struct blitz_worker *w, size_t n,
						 bool overflowed)
{
	const struct blitz_config *cfg = &w->rt->cfg;

	if (overflowed || cfg->wake == BLITZ_WAKE_EAGER)
		return true;
	if (cfg->wake == BLITZ_WAKE_BACKLOG)
		return n * w->ewma_poll_ns >= cfg->wake_min_backlog_ns;
	return wake_bounded_local_push(w, n);
}

/*
 * wake_work_for_others - the last searcher found a task; after its fence
 * (found_more): is there work another worker should be woken for?
 * eager, backlog: our LIFO slot, any ring, the global queue.  bounded: our slot is
 * ours to run; only the global queue and a ring whose owner is behind.
 */
static inline bool wake_work_for_others(struct blitz_worker *w)
{
	if (wake_is_bounded(w->rt))
		return wake_bounded_has_work(w->rt);
	/* Relaxed: our own slot. */
	return atomic_load_explicit(&w->lifo, memory_order_relaxed) || runtime_has_work(w->rt);
}

/* wake_steal_clock - the time wake_may_steal_from() judges by (eager, backlog: none). */
static inline uint64_t wake_steal_clock(struct blitz_worker *w)
{
	return wake_is_bounded(w->rt) ? clock_now_ns() : 0;
}

/*
 * wake_may_steal_from - may @w steal from worker @v (at @now, from
 * wake_steal_clock)?  eager, backlog: always.  bounded: from a higher-numbered
 * worker always, from a lower-numbered one only when it is behind:
 * connections drift down, a lightly loaded runtime's I/O gathers in
 * worker 0's ring, and the others can stay asleep.
 */
static inline bool wake_may_steal_from(struct blitz_worker *w, unsigned v, uint64_t now)
{
	if (!wake_is_bounded(w->rt) || v > w->index)
		return true;
	return wake_worker_behind(&w->rt->workers[v], now);
}

/*
 * wake_park_begin - @w found nothing and is about to announce its park.
 * bounded: no longer awake for wake_worker_behind and the lower_awake of
 * a higher worker's final check.  seq_cst: against that lower_awake load,
 * which follows its seq_cst load of the global queue's length: either it
 * sees us awake and we (later in the total order) see its global task in
 * our own final check, or it sees us parking and notifies.
 */
static inline void wake_park_begin(struct blitz_worker *w)
{
	if (wake_is_bounded(w->rt))
		atomic_store(&w->awake_since, 0);
}

/*
 * wake_park_final_check - @w's bit is visible in the idle set: has work
 * appeared that a worker should be woken for?  eager, backlog: anything queued
 * (runtime_has_work).  bounded: wake_bounded_final_check.
 */
static inline bool wake_park_final_check(struct blitz_worker *w)
{
	if (wake_is_bounded(w->rt))
		return wake_bounded_final_check(w);
	return runtime_has_work(w->rt);
}

/*
 * wake_park_end - @w leaves worker_park (slept, or found work first): it
 * ran out of work, so it was keeping up; bounded's busy clock restarts.
 * Relaxed: a hint for wake_worker_behind().
 */
static inline void wake_park_end(struct blitz_worker *w)
{
	if (wake_is_bounded(w->rt))
		atomic_store_explicit(&w->awake_since, 0, memory_order_relaxed);
}

/*
 * wake_tick_start - a tick of @w begins at @start.  bounded: its
 * bookkeeping (wake_bounded_tick_start); eager and backlog read none of it.
 */
static inline void wake_tick_start(struct blitz_worker *w, uint64_t start)
{
	if (wake_is_bounded(w->rt))
		wake_bounded_tick_start(w, start);
}

/*
 * wake_defer_global - does this tick of @w leave the global queue, and the
 * tasks its I/O completions wake, to the workers numbered below it?
 * Only ever true under bounded (set by wake_tick_start).
 */
static inline bool wake_defer_global(const struct blitz_worker *w)
{
	return w->defer_global;
}

#endif /* BLITZ_CORE_SCHED_WAKE_H */
