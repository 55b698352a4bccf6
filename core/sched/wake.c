// SPDX-License-Identifier: MIT
/*
 * core/sched/wake.c - BLITZ_WAKE=bounded's halves of the wake hooks
 * (wake.h, which has eager's and backlog's beside them and describes the
 * three policies).  None of this runs under eager or backlog.  (The
 * owner's own test after a local push, wake_bounded_local_push, is inline
 * in wake.h: it runs per push.)
 *
 * "Behind": a worker whose backlog (its ring length x its EWMA poll time)
 * reaches wake_backlog_ns, or that has been awake without parking for
 * wake_busy_ns (CPU-bound work still spreads, and so does the queue of a
 * preempted worker).  Other threads judge it from relaxed loads of the
 * owner's published awake_since and EWMA: a hint, and a wrong answer
 * costs a wake or a steal, or defers one to a later look (a park timeout
 * at the latest); the owner's own tasks are never lost, it is awake to
 * run them.
 */
#include "wake.h"

/* wake_worker_behind - is @v, seen from another thread at @now, behind? */
bool wake_worker_behind(struct blitz_worker *v, uint64_t now)
{
	const struct blitz_config *cfg = &v->rt->cfg;
	uint32_t n = queue_len(&v->queue);

	if (n == 0)
		return false;
	/*
	 * Relaxed: written by @v alone and read here as a hint; no other data
	 * is read through it.
	 */
	return n * atomic_load_explicit(&v->stats.ewma_poll_ns, memory_order_relaxed) >=
	       cfg->wake_backlog_ns || awake_too_long(v, now);
}

/* rings_behind - a ring whose owner is behind? */
static bool rings_behind(struct blitz_runtime *rt)
{
	uint64_t now = clock_now_ns();

	for (unsigned i = 0; i < rt->num_workers; i++)
		if (wake_worker_behind(&rt->workers[i], now))
			return true;
	return false;
}

/*
 * wake_bounded_has_work - bounded's runtime_has_work: the global queue, or
 * a ring whose owner is behind; a ring whose owner keeps up is left to it.
 */
bool wake_bounded_has_work(struct blitz_runtime *rt)
{
	return !inject_is_empty(&rt->inject) || rings_behind(rt);
}

/*
 * lower_awake - is a worker numbered below @w awake (not parking)?
 * seq_cst: see wake_park_begin.
 */
static bool lower_awake(struct blitz_worker *w)
{
	for (unsigned i = 0; i < w->index; i++)
		if (atomic_load(&w->rt->workers[i].awake_since) != 0)
			return true;
	return false;
}

/*
 * wake_bounded_final_check - a ring whose owner is behind, or the global
 * queue -- unless this tick left the global queue to the lower workers
 * (defer_global) and one of them is still awake: it takes that work at its
 * next global check or its own final check, instead of us notifying
 * ourselves in a loop until it does.  If it runs a long poll meanwhile,
 * our park timeout finds it awake longer than the busy bound and we take
 * the work then.
 */
bool wake_bounded_final_check(struct blitz_worker *w)
{
	struct blitz_runtime *rt = w->rt;

	/* The global queue first (seq_cst, inject_len): see lower_awake. */
	if (!inject_is_empty(&rt->inject) && !(w->defer_global && lower_awake(w)))
		return true;
	return rings_behind(rt);
}

/*
 * lower_keep_up - are the workers numbered below @w neither behind nor
 * awake for wake_busy_ns without parking (preempted, or running a long
 * poll)?
 */
static bool lower_keep_up(struct blitz_worker *w, uint64_t now)
{
	struct blitz_runtime *rt = w->rt;

	for (unsigned i = 0; i < w->index; i++) {
		struct blitz_worker *v = &rt->workers[i];

		if (awake_too_long(v, now) || wake_worker_behind(v, now))
			return false;
	}
	return true;
}

/*
 * wake_bounded_tick_start - the tick's time, the first tick since a park,
 * and whether this tick defers to the workers numbered below us.
 */
void wake_bounded_tick_start(struct blitz_worker *w, uint64_t start)
{
	w->tick_start = start;
	/*
	 * While the workers numbered below us keep up, this tick hands our
	 * reaped wakes to them and leaves the global queue to them (a worker
	 * that parks looks at the global queue: wake_bounded_has_work).
	 */
	w->defer_global = w->index > 0 && lower_keep_up(w, start);
	/* The first tick since a park; relaxed: a hint for wake_worker_behind(). */
	if (atomic_load_explicit(&w->awake_since, memory_order_relaxed) == 0)
		atomic_store_explicit(&w->awake_since, start, memory_order_relaxed);
}
