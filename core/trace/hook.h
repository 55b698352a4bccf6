/* SPDX-License-Identifier: MIT */
/*
 * core/trace/hook.h - where the scheduler reports its events to the
 * instrument: one call per event at its site (a poll's start and end, a
 * spawn, a schedule, a steal, a park and its unpark), which fans out to
 * the three channels behind the worker's tick latch (worker.h,
 * TRACED_*): the USDT probe (docs/probes.md), the summary histograms
 * (histogram.h) and the event log (event_log.h).  Untraced, each call is
 * the test of the latch its site made before, or nothing: the poll's
 * hooks take their channels as constants from the copy of run_task that
 * calls them (worker.c), and compile away in the untraced copy.
 *
 * Every hook runs on the thread that makes the event: a worker, or a
 * thread that is not one (w NULL), which reads the semaphores instead of
 * a latch and logs into its own log (event_log.h, "Threads that are not
 * workers").
 */
#ifndef BLITZ_CORE_TRACE_HOOK_H
#define BLITZ_CORE_TRACE_HOOK_H

#include <stdbool.h>
#include <stdint.h>
#include "../clock.h"
#include "../probes.h"
#include "../sched/runtime.h"
#include "../sched/task.h"
#include "../sched/worker.h"
#include "event_log.h"
#include "histogram.h"
#include "tick_clock.h"

/*
 * TRACE_COPY - the attribute of a hot path's copy that runs while the
 * event log or the summary histograms are on (run_task_logged, the
 * latched schedule, a traced spawn): out of line, so that the plain path
 * keeps no frame or register for it, but not cold.  GCC compiles a cold
 * function for size and inlines nothing into it, which left the clock
 * read, the task's traced bit and the log's room check as calls inside
 * every logged poll.  The per-event probes' copies stay cold: their trap
 * costs microseconds.  The callers mark the branch to a copy unlikely.
 */
#define TRACE_COPY	__attribute__((noinline))

/* ---------------------------------------------------------------------- */
/* A task's name in the log                                                */

/*
 * trace_task_id - @t's id in the event log (event_log.h, "Task ids"),
 * given at its first record and kept in its cold part (task.h): a task
 * made before the window has none until then.  Only the thread that logs
 * the task writes it: its spawn, schedule and polls are ordered by the
 * task's state and its queue.  TASK_TRACE_ID tells that the cold part
 * holds it, since the cold part is not cleared at spawn.
 * @fresh: @t is being spawned and no other thread has it yet, so the bit
 * is set without a read-modify-write; else a relaxed or (the state's other
 * bits change under other threads; the bit is read only by the thread
 * that logs the task next, which the task's queue orders after this one).
 */
static inline uint64_t trace_task_id(struct blitz_task *t, bool fresh)
{
	struct task_cold *c = task_cold(t);
	uint64_t s = atomic_load_explicit(&t->state, memory_order_relaxed);

	if (__builtin_expect(s & TASK_TRACE_ID, 1))
		return c->trace_id;
	c->trace_id = events_new_id();
	c->trace_seq = 0;	/* so the caller takes the id before the count */
	if (fresh)
		atomic_store_explicit(&t->state, s | TASK_TRACE_ID, memory_order_relaxed);
	else
		atomic_fetch_or_explicit(&t->state, TASK_TRACE_ID, memory_order_relaxed);
	return c->trace_id;
}

/* ---------------------------------------------------------------------- */
/* A poll                                                                  */

/* What a poll's hooks carry from its start to its end. */
struct trace_poll {
	uint64_t probe_ns;		/* task_poll_end's clock (ns), 0: untimed */
	uint64_t hist_start;		/* the summary histograms' clock, 0: untimed */
	struct worker_events *log;	/* the log the poll's records go to, NULL: none */
};

/*
 * poll_log - the event log a poll of @t on @w writes into: the worker's
 * while its tick latched it (TRACED_EVENTS); a helping thread's own while
 * event_flush listens (event_log.h); else none.
 */
static inline struct worker_events *poll_log(struct blitz_worker *w, struct blitz_task *t)
{
	if (w)
		return w->traced & TRACED_EVENTS ? &w->events : NULL;
	return BLITZ_EVENT_FLUSH_ENABLED() ? events_outside_log(t->rt->hist_id, t->rt->num_workers)
					   : NULL;
}

/*
 * trace_poll_start - @t's poll on @w (NULL: a helping thread that is not
 * a worker) is about to run.  @traced: the per-event probes' copy (also a
 * helping thread's); @hist: a copy that times the poll for the summary
 * histograms when the tick is a timed one (TRACED_HIST); @logged: a copy
 * that logs it while the tick latched the event log (TRACED_EVENTS), or
 * a helping thread's own.
 *
 * The clocks start after task_poll_start's trap and stop before
 * task_poll_end's, so that a tracer on those probes (blitz-tasksrc,
 * schedlat per event) is not inside the poll times the others read: with
 * the trap inside, yield_many's polls read 1-2 us instead of 16-31 ns
 * (experiments/observer-effect).  The poll's own clock runs only in the
 * traced copy, for a traced task, while task_poll_end listens (the summary
 * histograms have their own clock, in a timed tick).  The log's start
 * reserves room for its end: no flush inside the poll.
 */
static inline __attribute__((always_inline)) void
trace_poll_start(struct trace_poll *p, struct blitz_worker *w, struct blitz_task *t,
		 bool traced, bool hist, bool logged)
{
	if (traced)
		TASK_PROBE(t, TASK_POLL_START, w ? (int)w->index : -1, (uint64_t)(uintptr_t)t,
			   w ? w->run_source : SRC_HELPER);
	p->probe_ns = traced && BLITZ_TASK_POLL_END_ENABLED() && task_traced(t) ?
		      clock_now_ns() : 0;
	p->hist_start = hist && w && (w->traced & TRACED_HIST) ? hist_poll_start(&w->hist) : 0;
	/* The logged copy runs only on a worker whose tick latched the log (worker_run_task). */
	p->log = !logged || !task_traced(t) ? NULL : traced ? poll_log(w, t) : &w->events;
	if (p->log) {
		events_room(p->log, 2);
		uint64_t id = trace_task_id(t, false);

		events_put(p->log, BLITZ_EVENT_POLL_START, tick_clock_now(), id,
			   (uint64_t)(uintptr_t)t->vtable,
			   !traced || w ? (unsigned)w->run_source : SRC_HELPER,
			   (int)task_cold(t)->trace_seq);
		if (traced && !w)
			events_outside_publish(p->log);
	}
}

/*
 * trace_poll_end - the poll returned @r: its end logged (stamped before
 * any flush: the poll's own time), timed, and task_poll_end fired, with
 * the channels of the same copy as trace_poll_start.
 */
static inline __attribute__((always_inline)) void
trace_poll_end(struct trace_poll *p, struct blitz_worker *w, struct blitz_task *t,
	       bool traced, enum blitz_poll r)
{
	uint64_t poll_ns = p->probe_ns ? clock_now_ns() - p->probe_ns : 0;

	if (p->log) {
		uint64_t end = tick_clock_now();

		events_room(p->log, 1);
		events_put(p->log, BLITZ_EVENT_POLL_END, end, task_cold(t)->trace_id, 0,
			   r == BLITZ_READY, -1);
		if (traced && !w)
			events_outside_publish(p->log);
	}
	if (p->hist_start)
		hist_poll_timed(&w->hist, p->hist_start, r == BLITZ_READY);
	if (traced)
		TASK_PROBE(t, TASK_POLL_END, w ? (int)w->index : -1, (uint64_t)(uintptr_t)t,
			   r == BLITZ_READY, poll_ns);
}

/* ---------------------------------------------------------------------- */
/* Spawns and schedules                                                    */

/*
 * task_queueing - the queueing number a record of @type gives @t: 0 for
 * its spawn, the next for a schedule (<blitz/trace/events.h>, seq).
 */
static inline uint32_t task_queueing(struct blitz_task *t, unsigned type)
{
	return type == BLITZ_EVENT_SPAWN ? 0 : ++task_cold(t)->trace_seq;
}

void trace_outside_queued(struct blitz_task *t, unsigned type);

/*
 * trace_outside - @t is spawned or queued (@type) by a thread that is not
 * one of its runtime's workers: a record in that thread's own log
 * (event_log.h), before the task is visible to a worker.  The semaphore's
 * test inline: the summary mode alone does not call.
 */
static inline void trace_outside(struct blitz_task *t, unsigned type)
{
	if (BLITZ_EVENT_FLUSH_ENABLED())
		trace_outside_queued(t, type);
}

/*
 * trace_schedule - @w, whose tick latched a tracer, queues @t (@yield: a
 * yield's requeue, which decides where it goes): the event log's record, before the task is queued, so before
 * its poll_start on any worker.  A task of another runtime goes into this
 * thread's outside log: a tool pairs records per runtime.  The probe and
 * the summary histograms' stamp are the schedule's copies' (task.c).
 */
static inline void trace_schedule(struct blitz_worker *w, struct blitz_task *t, bool yield)
{
	if (!(w->traced & TRACED_EVENTS))
		return;
	if (w->rt != t->rt)
		trace_outside(t, BLITZ_EVENT_SCHEDULE);
	else if (task_traced(t)) {
		struct worker_events *e = &w->events;
		uint64_t id = trace_task_id(t, false);

		events_room(e, 1);
		events_put(e, BLITZ_EVENT_SCHEDULE, events_requeue_ticks(e, id), id,
			   (uint64_t)(uintptr_t)t, (unsigned)worker_local_dest(w, yield),
			   (int)++task_cold(t)->trace_seq);
	}
}

/*
 * trace_spawn - @w, whose tick latched a tracer, spawned @t: logged
 * (TRACED_EVENTS), stamped in a timed tick (TRACED_HIST).
 */
static inline void trace_spawn(struct blitz_worker *w, struct blitz_task *t)
{
	if ((w->traced & TRACED_EVENTS) && task_traced(t))
		events_log(&w->events, BLITZ_EVENT_SPAWN, trace_task_id(t, true),
			   (uint64_t)(uintptr_t)t, (unsigned)worker_local_dest(w, false), 0);
	if (w->traced & TRACED_HIST)
		hist_stamp(&w->hist, t);
}

/* ---------------------------------------------------------------------- */
/* Steals, parks                                                           */

/* trace_steal - @w's steal took @taken tasks from worker @victim. */
static inline void trace_steal(struct blitz_worker *w, unsigned victim, uint32_t taken)
{
	hist_count(&w->hist, BLITZ_HIST_STEAL, taken);
	BLITZ_STEAL((int)w->index, (int)victim, taken);
	if (w->traced & TRACED_EVENTS)
		events_log(&w->events, BLITZ_EVENT_STEAL, 0, taken, 0, (int)victim);
}

/*
 * trace_park - @w is about to sleep, @timeout_ns at most: the probe, the
 * histograms' count, the log's record (and what the worker logged for
 * another runtime, so that it does not wait with it).  Returns the clock
 * the sleep is timed from, only while a tracer listens to unpark or the
 * histograms; 0 otherwise.
 */
static inline uint64_t trace_park(struct blitz_worker *w, uint64_t timeout_ns)
{
	BLITZ_PARK((int)w->index, timeout_ns);
	hist_parked(w, timeout_ns);
	if (w->traced & TRACED_EVENTS) {
		events_park(&w->events, timeout_ns);
		events_outside_wait();
	}
	return (BLITZ_UNPARK_ENABLED() | hist_enabled()) ? clock_now_ns() : 0;
}

/*
 * unpark_waker - who woke @w, for the unpark probe and record: the
 * notifier's index (or WAKER_OUTSIDE) if the sleep consumed its
 * notification (@notified); WAKER_UNKNOWN if a notifier claimed @w as its
 * sleep ended by itself (a timeout): that notifier stores woken_by after
 * its claim, so the value there may still be an older waker's;
 * WAKER_NONE if nobody claimed it.
 */
static inline int unpark_waker(struct blitz_worker *w, int reason, bool notified)
{
	if (reason != UNPARK_NOTIFIED)
		return WAKER_NONE;
	if (!notified)
		return WAKER_UNKNOWN;
	/*
	 * Relaxed: the sleep's acq_rel exchange consumed the notifier's
	 * NOTIFIED (park_unpark, seq_cst), which it swapped in after storing
	 * woken_by (runtime_notify_parked): that store is visible here.  (A
	 * notification left over from an earlier claim that raced a timeout
	 * may be the one consumed; then this may be that earlier waker: rare,
	 * and only the probe sees it.)
	 */
	return atomic_load_explicit(&w->woken_by, memory_order_relaxed);
}

/*
 * trace_unpark - @w woke for @reason (@notified: its sleep consumed a
 * notification), having slept since @slept_from (trace_park's clock).
 */
static inline void trace_unpark(struct blitz_worker *w, int reason, bool notified,
				uint64_t slept_from)
{
	uint64_t slept = slept_from ? clock_now_ns() - slept_from : 0;

	hist_woke(&w->hist, reason, slept);
	BLITZ_UNPARK((int)w->index, reason, unpark_waker(w, reason, notified), slept);
	if (w->traced & TRACED_EVENTS)
		events_log(&w->events, BLITZ_EVENT_UNPARK, 0, 0, (unsigned)reason,
			   unpark_waker(w, reason, notified));
}

#endif
