// SPDX-License-Identifier: MIT
/*
 * core/sched/help.c - blitz_join from a worker: instead of blocking the
 * thread (which could wait for a task queued behind it on this very
 * worker), the worker runs its own loop (find_work: LIFO slot, ring,
 * global queue, steals; timers, I/O, parking) inside the join until the
 * target completes (the blitz-io design's helpUntilComplete;
 * docs/scheduler.md, "Joining from a worker").
 *
 * A target in the worker's LIFO slot (spawned just before the join) is
 * polled at once, without a tick around it (worker_poll_lifo): the
 * design's spawn-and-join that costs about an inline call.
 *
 * A task polled inside a join runs on top of the joiner's stack: the
 * joiner resumes only after that poll returns.  What this costs and how
 * it is bounded:
 *  - the nested ticks are the worker's ticks (budget, LIFO polls); the
 *    joiner's trace latch and current_task are its own again after them;
 *  - each nesting takes stack: a join that finds less than
 *    BLITZ_JOIN_STACK_RESERVE left returns -EDEADLK at once;
 *  - a join whose target is a task polled lower on this stack can never
 *    end: -EDEADLK when it would otherwise sleep;
 *  - a worker with nothing to run parks as in its run loop, with a waker
 *    on the target that unparks it (the target may run on another worker);
 *  - shutdown ends the wait (-ESHUTDOWN), and so does the cancellation of
 *    the joining task (-EINTR): its poll should return so it is dropped;
 *    the cancel unparks the worker that sleeps in that join.
 */
#include <errno.h>
#include <pthread.h>
#include "../clock.h"
#include "help.h"
#include "runtime.h"
#include "task.h"
#include "worker.h"

/*
 * help_stack_bounds - where on the calling thread's stack a join may
 * start helping: above *@limit (the stack's bottom plus the reserve) and
 * below *@top (its top).  A stack no larger than the reserve gets a limit
 * at its top: a join there never helps.  False (and 0, 0) if the bounds
 * cannot be read.
 */
bool help_stack_bounds(uintptr_t *limit, uintptr_t *top)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	bool ok = false;

	*limit = *top = 0;
	if (pthread_getattr_np(pthread_self(), &a))
		return false;
	if (!pthread_attr_getstack(&a, &addr, &size)) {
		*top = (uintptr_t)addr + size;
		*limit = size > BLITZ_JOIN_STACK_RESERVE ? (uintptr_t)addr + BLITZ_JOIN_STACK_RESERVE
							 : *top;
		ok = true;
	}
	pthread_attr_destroy(&a);
	return ok;
}

/* help_stack_limit - help_stack_bounds' limit; 0 (no limit) if unknown. */
uintptr_t help_stack_limit(void)
{
	uintptr_t limit, top;

	help_stack_bounds(&limit, &top);
	return limit;
}

/* ---------------------------------------------------------------------- */
/* The join waker: unparks the worker that helps                          */

static void join_wake(const void *data)
{
	worker_unpark((struct blitz_worker *)data);
}

static struct blitz_waker join_clone(const void *data);
static void join_drop(const void *data) { (void)data; }

/* The worker outlives every task of its runtime: no reference to count. */
static const struct blitz_waker_vtable join_waker_vtable = {
	.wake = join_wake,
	.wake_by_ref = join_wake,
	.clone = join_clone,
	.drop = join_drop,
};

static struct blitz_waker join_clone(const void *data)
{
	return (struct blitz_waker){ .data = data, .vtable = &join_waker_vtable };
}

static bool complete(const struct blitz_task *t)
{
	return task_lifecycle(task_state_load(t)) == TASK_COMPLETE;
}

/*
 * register_waker - before @w sleeps for @t: make @t's completion unpark
 * @w.  Returns false if @t completed (do not sleep).  Sets *@mine when
 * this call set the waker (the caller takes it back if it leaves early).
 * A waker already there is @w's own (an outer join on this stack waits
 * for @t too) or another joiner's, which we must not replace: then the
 * park's timeout (10 ms) bounds how late we see the completion.
 */
static bool register_waker(struct blitz_task *t, struct blitz_worker *w, bool *mine)
{
	uint64_t s = task_state_load(t);

	if (task_lifecycle(s) == TASK_COMPLETE)
		return false;
	if (s & TASK_JOIN_WAKER)
		return true;
	/* Written while TASK_JOIN_WAKER is clear (task.h's invariant). */
	task_cold(t)->join_waker = join_clone(w);
	for (;;) {
		if (task_lifecycle(s) == TASK_COMPLETE)
			return false;
		/*
		 * acq_rel, as every transition (task.c): the release publishes
		 * join_waker to task_finish's CAS, which calls it once it saw
		 * the bit; a COMPLETE seen on failure comes with the result.
		 */
		if (atomic_compare_exchange_weak_explicit(&t->state, &s, s | TASK_JOIN_WAKER,
							  memory_order_acq_rel,
							  memory_order_acquire)) {
			*mine = true;
			return true;
		}
	}
}

/* below - is @t polled lower on this stack (the joiner of a frame)? */
static bool below(const struct blitz_worker *w, const struct blitz_task *t)
{
	for (const struct help_frame *f = w->help; f; f = f->outer)
		if (f->joiner == t)
			return true;
	return false;
}

/*
 * cancel_ends_join - does task state @s end its join with -EINTR?  A
 * cancel does, unless a shield holds it off (then the join goes on, and
 * sleeps, until the target completes).
 */
static bool cancel_ends_join(uint64_t s)
{
	return (s & TASK_CANCELLED) && task_shield(s) == 0;
}

/*
 * joiner_cancelled - was the joining task cancelled (no shield held)?
 * Relaxed: a hint, read again on the next round; the poll's own
 * transitions order what follows.
 */
static bool joiner_cancelled(const struct blitz_task *joiner)
{
	if (!joiner)
		return false;
	return cancel_ends_join(atomic_load_explicit(&((struct blitz_task *)joiner)->state,
						     memory_order_relaxed));
}

/*
 * park_in_join - @w has nothing to run and sleeps in @joiner's join until
 * @t's waker, new work, or the cancellation of @joiner wakes it.  The last
 * is help_wake_cancelled_joiner's, from the canceller's thread; without
 * it, only the park timeout let the join see the cancel.  A Dekker pair,
 * seq_cst on both sides: here store join_sleeper, then load @joiner's
 * state; there set TASK_CANCELLED, then (after a fence) load
 * join_sleeper.  Either we see the cancel and do not sleep, or it sees
 * us and unparks us (a NOTIFIED left before our sleep ends it at once).
 */
static void park_in_join(struct blitz_worker *w, struct blitz_task *joiner)
{
	if (joiner) {
		atomic_store(&w->join_sleeper, joiner);
		/* A shielded joiner's cancel does not end the join: it sleeps. */
		if (!cancel_ends_join(atomic_load(&joiner->state)))
			worker_park(w);
		/* Relaxed: a late clear costs a canceller an unpark for nothing. */
		atomic_store_explicit(&w->join_sleeper, NULL, memory_order_relaxed);
		return;
	}
	worker_park(w);
}

/*
 * help_wake_cancelled_joiner - @joiner, a running task of @rt, was just
 * cancelled: unpark the worker whose join it sleeps in, if any
 * (park_in_join has the other half).  O(workers), for the cancel of a
 * running task only.
 */
void help_wake_cancelled_joiner(struct blitz_runtime *rt, struct blitz_task *joiner)
{
	/* seq_cst: our TASK_CANCELLED before the loads below (park_in_join). */
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned i = 0; i < rt->num_workers; i++)
		/* Relaxed: ordered by the fence above. */
		if (atomic_load_explicit(&rt->workers[i].join_sleeper, memory_order_relaxed) == joiner)
			worker_unpark(&rt->workers[i]);
}

/*
 * help - run @w's loop until @t completes; 0 when it did, else the
 * reason it stopped waiting (the header's list).
 */
static int help(struct blitz_worker *w, struct blitz_task *t, struct help_frame *f)
{
	bool mine = false;
	int ret = 0;

	for (;;) {
		/* Acquire: pairs with blitz_runtime_free's release store. */
		if (atomic_load_explicit(&w->rt->shutdown, memory_order_acquire)) {
			ret = -ESHUTDOWN;
			break;
		}
		if (joiner_cancelled(f->joiner)) {
			ret = -EINTR;
			break;
		}
		if (worker_help_tick(w, t) > 0) {
			current_task = f->joiner;
			if (complete(t))
				break;
			continue;
		}
		if (complete(t))
			break;
		/* Nothing to run here: sleep, unless nothing could wake us. */
		if (below(w, t)) {
			ret = -EDEADLK;
			break;
		}
		if (!register_waker(t, w, &mine))
			break;
		park_in_join(w, f->joiner);
	}
	if (ret && mine)
		task_take_back_join_waker(t);	/* else its call is an unpark for nothing */
	return ret;
}

/*
 * worker_join - blitz_join on worker @w (the calling thread's) for a task
 * @t of @w's runtime.  First the fast path: @t in the LIFO slot is polled
 * at once (worker_poll_lifo).  Else the helping loop, whose nested ticks
 * are the worker's ticks: the joiner resumes with the budget and LIFO
 * polls the last one left (at least one unit, the joiner's own poll's,
 * which its tick takes when the poll returns), and with its own trace
 * latch and current_task again.  The loop's time, less what inner joins
 * already counted, goes to helped_ns (tick() leaves it out of the EWMA
 * sample), and the fast-path polls inside it are no longer the enclosing
 * tick's to count.
 */
int worker_join(struct blitz_worker *w, struct blitz_task *t)
{
	struct help_frame f = { .outer = w->help, .joiner = current_task };
	uint8_t traced = w->traced;
	uint64_t start, helped, inlined;
	int ret;

	if (complete(t))
		return blitz_task_cancelled(t) ? -ECANCELED : 0;
	if (t == f.joiner || (uintptr_t)__builtin_frame_address(0) < w->stack_limit)
		return -EDEADLK;
	/* The frame is there for the fast path too: a join below() looks for it. */
	w->help = &f;
	if (worker_poll_lifo(w, t)) {
		current_task = f.joiner;
		w->traced = latch_after_nested(w, traced);
		if (complete(t)) {
			w->help = f.outer;
			return blitz_task_cancelled(t) ? -ECANCELED : 0;
		}
	}
	helped = w->helped_ns;
	inlined = w->inline_polls;
	start = clock_now_ns();
	ret = help(w, t, &f);
	w->help = f.outer;
	worker_help_leave(w);
	current_task = f.joiner;
	if (w->budget == 0)
		w->budget = 1;
	w->traced = latch_after_nested(w, traced);
	w->inline_polls = inlined;
	w->helped_ns = helped + (clock_now_ns() - start);
	if (ret)
		return ret;
	return blitz_task_cancelled(t) ? -ECANCELED : 0;
}
