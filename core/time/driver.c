// SPDX-License-Identifier: MIT
/*
 * core/time/driver.c - the runtime's timer wheel: one per runtime, under a
 * spinlock; any thread inserts and cancels, worker 0 advances it at the
 * start of every tick and sleeps no longer than its next expiry
 * (core/sched/worker.c).  The wheel itself is core/time/wheel.c.
 */
#include <errno.h>
#include <stdlib.h>
#include "../clock.h"
#include "../probes.h"
#include "../sched/runtime.h"
#include "../sched/task.h"
#include "timer.h"

/*
 * Shared state (struct blitz_runtime):
 *   timer_lock     guards timers (the wheel) and the entries' links and
 *                  state.  Held for a few list operations at a time; no
 *                  wake, drop or callback ever runs under it (a wake takes
 *                  the global queue's lock and may notify a worker).
 *   timer_next     ns, a lower bound of the wheel's next expiry
 *                  (UINT64_MAX: empty); written under timer_lock, read
 *                  without it by worker 0.
 *   timer_wake_at  ns: when worker 0, parked, will look at the wheel again
 *                  by itself; 0 while it runs (it looks at every tick).
 *
 * The race between worker 0 choosing how long to sleep and another thread
 * inserting an earlier timer is closed by a Dekker pattern (seq_cst on both
 * sides, as the idle protocol in core/sched/idle.h):
 *   inserter:  insert; store timer_next = min(timer_next, due);
 *              load timer_wake_at; if due < it, unpark worker 0.
 *   worker 0:  store timer_wake_at = now + 10 ms;
 *              load timer_next; sleep until min(it, now + 10 ms).
 * Either worker 0's load sees the new timer_next (and sleeps no longer than
 * the new deadline), or the inserter's load sees timer_wake_at (and unparks
 * worker 0).  An unpark that comes before worker 0 is asleep is not lost:
 * it leaves the park state NOTIFIED and park_wait() returns at once
 * (core/sched/park.c).  Worker 0 stores timer_wake_at = 0 when it wakes; an
 * inserter that sees 0 leaves it alone, and worker 0 polls the wheel at the
 * start of its next tick, before it can park again.
 */

void runtime_timers_init(struct blitz_runtime *rt)
{
	spin_init(&rt->timer_lock);
	timer_wheel_init(&rt->timers, clock_now_ns());
	atomic_init(&rt->timer_next, UINT64_MAX);
	atomic_init(&rt->timer_wake_at, 0);
	atomic_init(&rt->timer_unparks, 0);
}

/*
 * runtime_timers_free - at shutdown, after the tasks were dropped (their
 * drop functions may cancel sleeps): entries still registered are dropped,
 * not fired; their wakers are released.
 */
void runtime_timers_free(struct blitz_runtime *rt)
{
	size_t n;
	struct timer_fire *all;

	spin_lock(&rt->timer_lock);
	all = timer_wheel_take_all(&rt->timers, &n);
	/* Relaxed: under the lock; no worker is left to read it. */
	atomic_store_explicit(&rt->timer_next, UINT64_MAX, memory_order_relaxed);
	spin_unlock(&rt->timer_lock);
	for (size_t i = 0; i < n; i++)
		timer_fire_drop(&all[i]);
	free(all);
}

/*
 * runtime_timer_start - register @e (IDLE, deadline and action set) from
 * any thread.  Return: true if registered; false if it is already due (not
 * registered: the caller fires it or treats it as done).
 */
bool runtime_timer_start(struct blitz_runtime *rt, struct blitz_timer_entry *e)
{
	uint64_t due = timer_tick_ns(e->when);
	bool ok;

	runtime_start(rt);		/* nothing advances the wheel without workers */
	spin_lock(&rt->timer_lock);
	ok = timer_wheel_insert(&rt->timers, e);
	if (ok) {
		/* Relaxed: under timer_lock, which every store of timer_next holds. */
		uint64_t next = atomic_load_explicit(&rt->timer_next, memory_order_relaxed);

		/* seq_cst, and always a store: the inserter's half of the Dekker above. */
		atomic_store(&rt->timer_next, due < next ? due : next);
	}
	spin_unlock(&rt->timer_lock);
	if (!ok)
		return false;
	/* seq_cst: ordered after our store to timer_next. */
	if (due < atomic_load(&rt->timer_wake_at)) {
		/* Relaxed: a statistic. */
		atomic_fetch_add_explicit(&rt->timer_unparks, 1, memory_order_relaxed);
		worker_unpark(&rt->workers[0]);	/* futex or I/O driver sleep */
	}
	return true;
}

/*
 * runtime_timer_cancel - unregister @e, which the caller owns (no insert or
 * cancel of it runs concurrently), and drop its waker.  Afterwards the
 * wheel does not touch @e.  Return: true if it was still registered.
 */
bool runtime_timer_cancel(struct blitz_runtime *rt, struct blitz_timer_entry *e)
{
	struct timer_fire f;
	bool ok;

	/*
	 * Without the lock: IDLE (never registered, or cancelled by us) and
	 * FIRED (acquire: the firing thread is done with @e) are final while
	 * we own @e; REGISTERED or FIRING need the lock to decide.
	 */
	uint32_t s = timer_entry_state(e);

	if (s == TIMER_IDLE || s == TIMER_FIRED)
		return false;
	spin_lock(&rt->timer_lock);
	ok = timer_wheel_cancel(&rt->timers, e);
	if (ok) {
		f.heap = NULL;		/* wheel-owned entries are never cancelled */
		f.kind = e->kind;
		if (e->kind == TIMER_KIND_WAKER) {
			f.u.waker = e->u.waker;
			e->u.waker.vtable = NULL;	/* the reference moved to f */
		}
		/* Relaxed: raising it is fine, see timer_next above. */
		atomic_store_explicit(&rt->timer_next, timer_wheel_next_deadline(&rt->timers),
				      memory_order_relaxed);
	}
	spin_unlock(&rt->timer_lock);
	if (ok)
		timer_fire_drop(&f);
	return ok;
}

/*
 * runtime_timer_wake_at - wake @waker (consuming it) at @deadline_ns, with
 * an entry the wheel allocates and frees: fire-and-forget, no cancel.
 * Return: 0, or -ENOMEM (the waker is dropped).
 */
int runtime_timer_wake_at(struct blitz_runtime *rt, uint64_t deadline_ns,
			  struct blitz_waker waker)
{
	struct blitz_timer_entry *e = timer_entry_new_waker(deadline_ns, waker);

	if (!e) {
		blitz_waker_drop(&waker);
		return -ENOMEM;
	}
	if (!runtime_timer_start(rt, e)) {
		free(e);
		blitz_waker_wake(&waker);	/* due already */
	}
	return 0;
}

#define FIRE_BATCH 32

/*
 * runtime_poll_timers - worker 0, at the start of every tick: fire what is
 * due, in batches of FIRE_BATCH taken under the lock and woken after it is
 * released.  A woken task goes where any wake from worker 0 goes: its LIFO
 * slot (or the global queue while it is on its way to park).  Returns
 * whether it fired any (the tick then leaves the time out of its EWMA
 * sample).
 */
bool runtime_poll_timers(struct blitz_runtime *rt)
{
	struct timer_fire batch[FIRE_BATCH];
	bool fired = false;
	uint64_t now;
	size_t n;

	/*
	 * Relaxed: a stale (higher) value only delays a new timer to the next
	 * tick; before parking, worker 0 reads timer_next with seq_cst.
	 */
	if (atomic_load_explicit(&rt->timer_next, memory_order_relaxed) == UINT64_MAX)
		return false;
	now = clock_now_ns();
	if (now < atomic_load_explicit(&rt->timer_next, memory_order_relaxed))
		return false;
	do {
		struct blitz_timer_entry *e;

		n = 0;
		spin_lock(&rt->timer_lock);
		while (n < FIRE_BATCH && (e = timer_wheel_poll(&rt->timers, now)))
			timer_entry_take(e, &batch[n++]);
		/* Relaxed: under the lock; see timer_next above. */
		atomic_store_explicit(&rt->timer_next, timer_wheel_next_deadline(&rt->timers),
				      memory_order_relaxed);
		spin_unlock(&rt->timer_lock);
		for (size_t i = 0; i < n; i++) {
			struct timer_fire *f = &batch[i];

			BLITZ_TIMER_FIRE(f->kind == TIMER_KIND_WAKER &&
					 f->u.waker.vtable == &task_waker_vtable ?
					 (uint64_t)(uintptr_t)f->u.waker.data : 0,
					 f->deadline_ns, now - f->deadline_ns);
			timer_fire_run(f);
		}
		fired |= n > 0;
	} while (n == FIRE_BATCH);
	return fired;
}

/*
 * runtime_timer_park_timeout - worker 0 is about to park for at most
 * @max_ns: publish when it will look at the wheel again and return how long
 * to sleep (0: a timer is due already, do not sleep).  Worker 0's half of
 * the Dekker above.
 */
uint64_t runtime_timer_park_timeout(struct blitz_runtime *rt, uint64_t max_ns)
{
	uint64_t now = clock_now_ns();
	uint64_t limit = now + max_ns;
	uint64_t next;

	atomic_store(&rt->timer_wake_at, limit);		/* seq_cst */
	next = atomic_load(&rt->timer_next);			/* seq_cst */
	if (next >= limit)
		return max_ns;
	if (next <= now)
		return 0;
	/*
	 * We will wake at next: inserters of deadlines in [next, limit) need
	 * not wake us.  Relaxed: a stale higher value costs a spurious unpark.
	 */
	atomic_store_explicit(&rt->timer_wake_at, next, memory_order_relaxed);
	return next - now;
}

/* runtime_timer_unparked - worker 0 is awake again and polls at every tick. */
void runtime_timer_unparked(struct blitz_runtime *rt)
{
	/* Relaxed: a stale nonzero value costs a spurious unpark, no more. */
	atomic_store_explicit(&rt->timer_wake_at, 0, memory_order_relaxed);
}

/* runtime_timer_count - entries registered (for tests and statistics). */
size_t runtime_timer_count(struct blitz_runtime *rt)
{
	size_t n;

	spin_lock(&rt->timer_lock);
	n = rt->timers.count;
	spin_unlock(&rt->timer_lock);
	return n;
}
