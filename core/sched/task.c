// SPDX-License-Identifier: MIT
/*
 * core/sched/task.c - the task state machine (docs/scheduler.md), references, the task
 * waker, join handles and cancellation.
 *
 * Lifecycle: IDLE -> SCHEDULED (a wake; the waker queues the task)
 *            SCHEDULED -> RUNNING (a worker polls it; clears NOTIFIED)
 *            RUNNING -> IDLE (poll returned pending, no wake meanwhile)
 *            RUNNING -> SCHEDULED (pending, but NOTIFIED/yielded/cancelled:
 *                                  the poller queues it again)
 *            RUNNING|SCHEDULED -> COMPLETE (ready, or cancelled)
 * A wake while RUNNING or SCHEDULED only sets NOTIFIED: the task is already
 * in the system, and the poller sees the bit when poll returns, so no
 * wakeup is lost.
 *
 * Memory ordering: every transition is a CAS with acq_rel on success, so
 * that what a waker wrote before waking is visible to the next poll, and
 * what a poll wrote is visible to whoever observes the new lifecycle (the
 * next poller, or a joiner that sees COMPLETE).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fault.h"
#include "../probes.h"
#include "../trace/hook.h"
#include "help.h"
#include "runtime.h"
#include "task.h"
#include "worker.h"

uint64_t task_state_load(const struct blitz_task *t)
{
	/* Acquire: pairs with the acq_rel transitions. */
	return atomic_load_explicit(&((struct blitz_task *)t)->state, memory_order_acquire);
}

/*
 * task_take_back_join_waker - a join that set @t's waker leaves before @t
 * completed: clear TASK_JOIN_WAKER.  False if the completion saw the bit
 * first: it calls the waker (or has), so a waker on the joiner's stack
 * must wait for that call.
 */
bool task_take_back_join_waker(struct blitz_task *t)
{
	uint64_t s = task_state_load(t);

	while (task_lifecycle(s) != TASK_COMPLETE) {
		/* acq_rel: as the registration's CAS (the transitions above). */
		if (atomic_compare_exchange_weak_explicit(&t->state, &s, s & ~TASK_JOIN_WAKER,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return true;
	}
	return false;
}

/*
 * task_cas - acq_rel on success (see "Memory ordering" above); acquire on
 * failure, since callers act on the state they read (a COMPLETE comes with
 * the task's result).
 */
static bool task_cas(struct blitz_task *t, uint64_t *old, uint64_t new)
{
	return atomic_compare_exchange_weak_explicit(&t->state, old, new,
						     memory_order_acq_rel,
						     memory_order_acquire);
}

/*
 * SCHEDULED -> RUNNING, clearing NOTIFIED and STAMPED (the caller reads a
 * stamp it saw in the state returned, the state before).
 */
uint64_t task_transition_to_running(struct blitz_task *t)
{
	/* Relaxed: a first guess; task_cas confirms it. */
	uint64_t s = atomic_load_explicit(&t->state, memory_order_relaxed);

	while (!task_cas(t, &s, (s & ~(TASK_LIFECYCLE_MASK | TASK_NOTIFIED | TASK_STAMPED)) |
			 TASK_RUNNING))
		;
	return s;
}

/*
 * After a pending poll: RUNNING -> IDLE, unless the task was notified,
 * yielded or cancelled (without a shield) meanwhile; then RUNNING ->
 * SCHEDULED and the caller queues it again.
 */
enum task_after_poll task_transition_after_poll(struct blitz_task *t, int yielded)
{
	/* Relaxed: a first guess; task_cas confirms it. */
	uint64_t s = atomic_load_explicit(&t->state, memory_order_relaxed);
	uint64_t next;
	enum task_after_poll r;

	do {
		bool again = yielded || (s & TASK_NOTIFIED) ||
			     ((s & TASK_CANCELLED) && task_shield(s) == 0);

		next = s & ~(TASK_LIFECYCLE_MASK | TASK_NOTIFIED);
		next |= again ? TASK_SCHEDULED : TASK_IDLE;
		r = again ? TASK_RESCHEDULE : TASK_NOW_IDLE;
	} while (!task_cas(t, &s, next));
	return r;
}

/*
 * A wake: IDLE -> SCHEDULED returns 1 (the caller must queue the task);
 * RUNNING or SCHEDULED sets NOTIFIED and returns 0; COMPLETE returns 0.
 */
int task_transition_to_scheduled(struct blitz_task *t)
{
	/* Relaxed: a first guess; task_cas confirms it. */
	uint64_t s = atomic_load_explicit(&t->state, memory_order_relaxed);

	for (;;) {
		uint64_t life = task_lifecycle(s);

		if (life == TASK_COMPLETE)
			return 0;
		if (life == TASK_IDLE) {
			if (task_cas(t, &s, (s & ~TASK_LIFECYCLE_MASK) | TASK_SCHEDULED))
				return 1;
			continue;
		}
		/*
		 * A CAS even when NOTIFIED is already set (writing the same
		 * value), never a return on the load above: the bit seen may be
		 * one the next poll is about to clear, and only a write in the
		 * state's modification order makes what the waker wrote before
		 * waking (a channel waiter marked WOKEN, which the task reads
		 * without a lock) visible to that poll (docs/scheduler.md, "Tasks").
		 */
		if (task_cas(t, &s, s | TASK_NOTIFIED))
			return 0;
	}
}

void task_ref_inc(struct blitz_task *t)
{
	/* Relaxed: a new reference is made from an existing one. */
	uint64_t prev = atomic_fetch_add_explicit(&t->state, TASK_REF_ONE,
						  memory_order_relaxed);

	if (task_refs(prev) >= TASK_REF_MAX)
		abort();	/* 16 million references: a leak, not a workload */
}

void task_ref_dec(struct blitz_task *t)
{
	/*
	 * acq_rel: the release publishes our last use of the task to whoever
	 * frees it; the acquire (on the last reference) sees everyone's.
	 */
	uint64_t prev = atomic_fetch_sub_explicit(&t->state, TASK_REF_ONE,
						  memory_order_acq_rel);

	if (task_refs(prev) == 1)
		task_cache_free(t);
}

/*
 * task_finish - the task completed (or is cancelled): drop its state,
 * take it off the live list (now, or at a later drain: owned.h), mark it
 * COMPLETE, wake the joiner, and give back the scheduler's reference (a
 * deferred one with the list's).  @worker: the calling thread's index
 * among @t's runtime's workers, -1 if it is not one of them (run_task's
 * worker is of the task's runtime: a task is queued only there); a
 * deferred outside task goes onto that worker's own list.
 */
void task_finish(struct blitz_task *t, int worker, int cancelled)
{
	uint64_t s;
	bool deferred;

	if (t->vtable->drop)
		t->vtable->drop(task_user(t));
	deferred = owned_remove(&t->rt->owned, t, worker);
	/* Relaxed: a first guess; task_cas confirms it. */
	s = atomic_load_explicit(&t->state, memory_order_relaxed);
	/*
	 * CANCELLED in the final state says how the task ended: a cancel that
	 * arrived during a poll that then returned READY did not take effect.
	 */
	while (!task_cas(t, &s, (s & ~(TASK_LIFECYCLE_MASK | TASK_NOTIFIED | TASK_CANCELLED)) |
			 TASK_COMPLETE | (cancelled ? TASK_CANCELLED : 0)))
		;
	/*
	 * One test for task_complete's and hist_snapshot's semaphores; under
	 * it no call (a call would cost the untraced path a stack frame).  A
	 * poll that returned READY (cancelled 0: run_task is the only such
	 * caller) is counted for the summary histograms on the thread that
	 * polled it, in every tick, timed or not: one add, no test.
	 */
	if (__builtin_expect(BLITZ_TASK_COMPLETE_ENABLED() | BLITZ_HIST_SNAPSHOT_ENABLED(), 0)) {
		TASK_PROBE(t, TASK_COMPLETE, worker, (uint64_t)(uintptr_t)t, cancelled);
		hist_poll_ready(!cancelled);
	}
	/* JOIN_WAKER was set before COMPLETE: the joiner no longer touches it. */
	if (s & TASK_JOIN_WAKER)
		blitz_waker_wake(&task_cold(t)->join_waker);
	/* The scheduler's reference: now, or with the list's (owned.h). */
	if (__builtin_expect(deferred, 0))
		owned_defer(&t->rt->owned, t,
			    worker >= 0 ? &t->rt->workers[worker].owned_local : NULL);
	else
		task_ref_dec(t);
}

/* ---------------------------------------------------------------------- */
/* The task waker                                                          */

void task_wake_by_ref(struct blitz_task *t)
{
	if (task_transition_to_scheduled(t))
		t->vtable->schedule(t);
}

static void waker_wake_by_ref(const void *data)
{
	task_wake_by_ref((struct blitz_task *)data);
}

static void waker_wake(const void *data)
{
	task_wake_by_ref((struct blitz_task *)data);
	task_ref_dec((struct blitz_task *)data);
}

static struct blitz_waker waker_clone(const void *data)
{
	task_ref_inc((struct blitz_task *)data);
	return (struct blitz_waker){ .data = data, .vtable = &task_waker_vtable };
}

static void waker_drop(const void *data)
{
	task_ref_dec((struct blitz_task *)data);
}

const struct blitz_waker_vtable task_waker_vtable = {
	.wake = waker_wake,
	.wake_by_ref = waker_wake_by_ref,
	.clone = waker_clone,
	.drop = waker_drop,
};

struct blitz_waker blitz_cx_waker(struct blitz_cx *cx)
{
	return waker_clone(cx->task);
}

int blitz_cx_worker(const struct blitz_cx *cx)
{
	return cx->worker ? (int)cx->worker->index : -1;
}

struct blitz_runtime *blitz_cx_runtime(const struct blitz_cx *cx)
{
	return cx->task->rt;
}

void blitz_yield_now(struct blitz_cx *cx)
{
	cx->yielded = 1;
}

void blitz_shield_enter(struct blitz_cx *cx)
{
	/* Relaxed: only the polling thread changes the shield. */
	uint64_t prev = atomic_fetch_add_explicit(&cx->task->state, TASK_SHIELD_ONE,
						  memory_order_relaxed);

	if (task_shield(prev) == 255) {
		fprintf(stderr, "blitz_shield_enter: shield nested 256 deep (at most 255)\n");
		abort();
	}
}

void blitz_shield_exit(struct blitz_cx *cx)
{
	/*
	 * Relaxed: as in blitz_shield_enter.  Only this thread changes the
	 * shield, so the count read here is the one the subtraction sees; an
	 * exit with no shield held is a no-op (the count would borrow from
	 * the state's other bits).
	 */
	if (!task_shield(atomic_load_explicit(&cx->task->state, memory_order_relaxed)))
		return;
	atomic_fetch_sub_explicit(&cx->task->state, TASK_SHIELD_ONE, memory_order_relaxed);
	/* A deferred cancellation takes effect when poll returns pending. */
}

/* ---------------------------------------------------------------------- */
/* Scheduling (the vtable's schedule and reschedule)                      */

/*
 * schedule_on - queue @t from @w (current_worker, NULL outside a worker):
 * on that worker if it belongs to @t's runtime, else on the global
 * queue.  The probe fires before the task is visible to
 * other workers, so that task_schedule always precedes task_poll_start.
 *
 * Two copies: schedule_traced() fires the probe, and is taken only while a
 * tracer holds task_schedule's semaphore; the untraced path has no probe
 * site, so it keeps its tail calls and needs no stack frame (a probe whose
 * arguments live across the call costs instructions on every wake:
 * docs/probes.md, "What an unattached probe costs").
 */
static inline __attribute__((always_inline)) void
schedule_on(struct blitz_worker *w, struct blitz_task *t, bool yield, bool traced)
{
	if (traced && w && (w->traced & TRACED_HIST))
		hist_stamp(&w->hist, t);
	else if (traced && !w && hist_enabled())
		hist_stamp_outside(t);
	if (w && w->rt == t->rt) {
		if (traced)
			TASK_PROBE(t, TASK_SCHEDULE, (uint64_t)(uintptr_t)t, (int)w->index,
				   worker_local_dest(w, yield));
		worker_schedule_local(w, t, yield);
	} else {
		if (traced)
			TASK_PROBE(t, TASK_SCHEDULE, (uint64_t)(uintptr_t)t, -1, DEST_GLOBAL);
		runtime_schedule(t->rt, t, yield);
	}
}

/* schedule_traced - the copy with the probe (TRACED_SCHEDULE). */
static __attribute__((noinline, cold)) void
schedule_traced(struct blitz_worker *w, struct blitz_task *t, bool yield)
{
	schedule_on(w, t, yield, true);
}

/*
 * schedule_outside - a thread that is not a worker, while a tracer
 * listens (it reads the semaphores): logged, then the probe's copy.
 */
static __attribute__((noinline, cold)) void schedule_outside(struct blitz_task *t, bool yield)
{
	trace_outside(t, BLITZ_EVENT_SCHEDULE);
	schedule_on(NULL, t, yield, true);
}

/* schedule_stamped - a schedule in a timed tick (TRACED_HIST): every one is stamped. */
static TRACE_COPY void
schedule_stamped(struct blitz_worker *w, struct blitz_task *t, bool yield)
{
	hist_stamp(&w->hist, t);
	schedule_on(w, t, yield, false);
}

/*
 * schedule_latched - a worker whose tick latched a tracer: the event
 * log's record first (TRACED_EVENTS), then the probe's
 * copy (TRACED_SCHEDULE), the stamped one in a timed tick (TRACED_HIST),
 * or the plain schedule (a latch for local_push or the polls only).
 * Every way out is a tail call, so that no path keeps a frame.
 */
static TRACE_COPY void
schedule_latched(struct blitz_worker *w, struct blitz_task *t, bool yield)
{
	trace_schedule(w, t, yield);
	if (w->traced & TRACED_SCHEDULE) {
		schedule_traced(w, t, yield);
		return;
	}
	if (w->traced & TRACED_HIST) {
		schedule_stamped(w, t, yield);
		return;
	}
	schedule_on(w, t, yield, false);
}

/*
 * schedule - queue @t.  A worker tests its tick's latch, zero in an
 * untimed tick of the summary histograms as when nothing is attached;
 * another thread the semaphores.
 */
static inline __attribute__((always_inline)) void schedule(struct blitz_task *t, bool yield)
{
	struct blitz_worker *w = current_worker;

	if (__builtin_expect(w ? w->traced != 0 :
			     BLITZ_TASK_SCHEDULE_ENABLED() | hist_enabled() |
			     BLITZ_EVENT_FLUSH_ENABLED(), 0)) {
		if (!w)
			schedule_outside(t, yield);
		else
			schedule_latched(w, t, yield);
		return;
	}
	schedule_on(w, t, yield, false);
}

void blitz_task_schedule(struct blitz_task *t)
{
	schedule(t, false);
}

void blitz_task_reschedule(struct blitz_task *t)
{
	schedule(t, true);
}

/* ---------------------------------------------------------------------- */
/* Spawning                                                                */

size_t blitz_task_size(size_t state_size)
{
	/* Saturates: no task is that large (blitz_spawn refuses it). */
	if (state_size > SIZE_MAX - TASK_BYTES(0))
		return SIZE_MAX;
	return TASK_BYTES(state_size);
}

/*
 * spawn_traced - a worker's spawn while a tracer listens (trace_spawn).
 * Out of line: one test of the latch on the untraced path.
 */
static TRACE_COPY void spawn_traced(struct blitz_worker *w, struct blitz_task *t)
{
	trace_spawn(w, t);
}

/*
 * task_alloc - one block for header and state (task_cache.c: the worker's
 * cache of its size class, else a new block on lines of its own), for
 * the live list's @shard (owned_shard_of the spawner).  The scheduler holds one
 * reference, a handle (if @handle) another.  The task starts SCHEDULED.
 */
struct blitz_task *task_alloc(struct blitz_runtime *rt,
			      const struct blitz_task_vtable *vt,
			      const void *state, size_t size, int handle, bool traced, unsigned shard)
{
	struct blitz_task *t;
	size_t bytes;
	unsigned c;

	if (size > UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* The task_alloc fault point fails it as the allocator would (core/fault.h). */
	if (fault_fail(FAULT_TASK_ALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	bytes = TASK_BYTES(size);
	c = bytes > TASK_CACHE_MAX_BYTES ? TASK_CLASS_LARGE : task_class_of(bytes);
	t = task_cache_alloc(rt, c, bytes);
	if (!t)
		return NULL;
	/* The cold part is left as it is: the state's bits say what is set. */
	atomic_init(&t->state, (handle ? 2 : 1) * TASK_REF_ONE | TASK_SCHEDULED |
		    (handle ? TASK_JOIN_INTEREST : TASK_DETACHED) | (traced ? TASK_TRACED : 0) |
		    c | (uint64_t)shard << TASK_SHARD_SHIFT);
	t->vtable = vt;
	t->next = NULL;
	t->rt = rt;
	if (size)
		memcpy(t->user, state, size);
	return t;
}

static struct blitz_task *spawn(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
				const void *state, size_t size, int handle)
{
	struct blitz_worker *w = current_worker;
	struct blitz_task *t;
	uint64_t nth;

	if (!rt)
		rt = blitz_current_runtime();
	if (!rt || !vt || !vt->poll || (size && !state)) {
		errno = EINVAL;
		return NULL;
	}
	if (w && w->rt != rt)
		w = NULL;
	/* Relaxed: the nth spawn here, for trace sampling only. */
	nth = w ? atomic_load_explicit(&w->stats.spawned, memory_order_relaxed)
		: atomic_load_explicit(&rt->external_spawned, memory_order_relaxed);
	t = task_alloc(rt, vt, state, size, handle,
		       rt->cfg.trace_sample <= 1 || nth % rt->cfg.trace_sample == 0,
		       w ? w->index % OWNED_SHARDS : OWNED_OUTSIDE);
	if (!t)
		return NULL;
	if (!owned_insert(&rt->owned, t)) {
		task_cache_free(t);
		errno = ESHUTDOWN;
		return NULL;
	}
	if (w)
		stat_inc(w, spawned);
	else
		/* Relaxed: a statistic. */
		atomic_fetch_add_explicit(&rt->external_spawned, 1, memory_order_relaxed);
	TASK_PROBE(t, TASK_SPAWN, (uint64_t)(uintptr_t)t, w ? (int)w->index : -1,
		   w ? worker_local_dest(w, false) : DEST_GLOBAL);
	/*
	 * A thread that is not a worker, while a tracer listens: the summary
	 * mode's countdown inline (a call per spawn showed in
	 * spawn_many_remote's time), its own log behind the semaphore.
	 */
	if (__builtin_expect(w ? w->traced & (TRACED_HIST | TRACED_EVENTS) :
			     hist_enabled() | BLITZ_EVENT_FLUSH_ENABLED(), 0)) {
		if (w) {
			spawn_traced(w, t);
		} else {
			trace_outside(t, BLITZ_EVENT_SPAWN);
			if (hist_enabled())
				hist_stamp_outside(t);
		}
	}
	if (w) {
		worker_schedule_local(w, t, false);
	} else {
		runtime_start(rt);
		runtime_schedule(rt, t, false);
	}
	return t;
}

struct blitz_task *blitz_spawn(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
			       const void *state, size_t size)
{
	return spawn(rt, vt, state, size, 1);
}

int blitz_spawn_detached(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
			 const void *state, size_t size)
{
	return spawn(rt, vt, state, size, 0) ? 0 : -errno;
}

/* ---------------------------------------------------------------------- */
/* Join handles                                                            */

void *blitz_task_state(struct blitz_task *t)
{
	return task_user(t);
}

bool blitz_task_done(const struct blitz_task *t)
{
	return task_lifecycle(task_state_load(t)) == TASK_COMPLETE;
}

bool blitz_task_cancelled(const struct blitz_task *t)
{
	uint64_t s = task_state_load(t);

	return task_lifecycle(s) == TASK_COMPLETE && (s & TASK_CANCELLED);
}

/*
 * blitz_join_poll - the joiner's half of the join-waker protocol: store the
 * waker while TASK_JOIN_WAKER is clear, then set the bit unless the task
 * completed meanwhile.  A different waker on a later poll: clear the bit
 * first (fails if COMPLETE), replace, set again.
 */
enum blitz_poll blitz_join_poll(struct blitz_task *t, struct blitz_cx *cx)
{
	uint64_t s = task_state_load(t);
	struct task_cold *cold = task_cold(t);
	struct blitz_waker mine;

	if (task_lifecycle(s) == TASK_COMPLETE)
		return BLITZ_READY;
	if (s & TASK_JOIN_WAKER) {
		if (cold->join_waker.data == cx->task)
			return BLITZ_PENDING;	/* already registered */
		while (!task_cas(t, &s, s & ~TASK_JOIN_WAKER))
			if (task_lifecycle(s) == TASK_COMPLETE)
				return BLITZ_READY;
		blitz_waker_drop(&cold->join_waker);
	}
	mine = blitz_cx_waker(cx);
	cold->join_waker = mine;
	for (;;) {
		if (task_lifecycle(s) == TASK_COMPLETE) {
			blitz_waker_drop(&cold->join_waker);
			return BLITZ_READY;
		}
		if (task_cas(t, &s, s | TASK_JOIN_WAKER))
			return BLITZ_PENDING;
	}
}

/*
 * blitz_task_cancel - a completed task keeps its result: the flag is set only
 * while the task is not COMPLETE (a CAS, so a completion that lands first
 * wins and blitz_task_cancelled()/blitz_join() report the result, not
 * -ECANCELED).  acq_rel: the flag is seen by the poller's transitions.
 */
void blitz_task_cancel(struct blitz_task *t)
{
	uint64_t s;

	if (!t)
		return;
	s = task_state_load(t);
	do {
		if (task_lifecycle(s) == TASK_COMPLETE || (s & TASK_CANCELLED))
			return;
	} while (!task_cas(t, &s, s | TASK_CANCELLED));
	/* Idle: queue it so a worker drops it; running: it is requeued after poll. */
	task_wake_by_ref(t);
	/* Running: its poll may sleep in a join (help.c), which ends on a cancel. */
	if (task_lifecycle(s) == TASK_RUNNING)
		help_wake_cancelled_joiner(t->rt, t);
}

void blitz_task_release(struct blitz_task *t)
{
	uint64_t s;

	if (!t)
		return;
	s = task_state_load(t);
	/* Still registered as our own joiner's waker?  Take it back first. */
	if ((s & TASK_JOIN_WAKER) && current_task && task_cold(t)->join_waker.data == current_task) {
		while (task_lifecycle(s) != TASK_COMPLETE) {
			if (task_cas(t, &s, s & ~TASK_JOIN_WAKER)) {
				blitz_waker_drop(&task_cold(t)->join_waker);
				break;
			}
		}
	}
	/* Relaxed: nothing reads TASK_DETACHED; task_ref_dec publishes our last use. */
	atomic_fetch_or_explicit(&t->state, TASK_DETACHED, memory_order_relaxed);
	task_ref_dec(t);
}
