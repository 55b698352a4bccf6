// SPDX-License-Identifier: MIT
/*
 * core/sync/notify.c - Notify (docs/sync.md): notify_one wakes the first queued
 * waiter or, when nobody waits, stores one permit (at most one: repeated
 * notifications with nobody waiting coalesce); notify_waiters wakes every
 * task queued at the time of the call and stores nothing.
 *
 * No lost notification: a waiter looks at the permit a last time under the
 * lock before it queues, and notify_one stores the permit under the lock
 * only when the queue is empty, so either the waiter sees the permit or
 * notify_one sees the waiter.  A notify_one grant carries the permit
 * (w->want = 1); if the granted task is cancelled before it sees it, the
 * cancel hands the permit on (to the next waiter, or stores it).
 */
#include "waitlist.h"

#define PERMIT(n) ((_Atomic uint32_t *)&(n)->permit)

void blitz_notify_init(struct blitz_notify *n)
{
	wq_init(&n->q, SYNC_NOTIFY);
	atomic_init(PERMIT(n), 0);
}

uint32_t blitz_notify_queued(const struct blitz_notify *n)
{
	return wq_len(&n->q);
}

bool blitz_notify_try_notified(struct blitz_notify *n)
{
	uint32_t one = 1;

	/*
	 * Relaxed load: a cheap first look; the CAS decides.  Acquire on
	 * success: pairs with notify_locked's release store, so the notified
	 * task sees what the notifier wrote before notifying.
	 */
	return atomic_load_explicit(PERMIT(n), memory_order_relaxed) == 1 &&
	       atomic_compare_exchange_strong_explicit(PERMIT(n), &one, 0,
						       memory_order_acquire,
						       memory_order_relaxed);
}

/* notify_locked - under the lock: grant the head waiter, or store the permit. */
static void notify_locked(struct blitz_notify *n, struct wake_batch *b)
{
	struct blitz_waiter *w = n->q.head;

	if (w) {
		w->want = 1;		/* this grant carries the permit */
		wq_grant(&n->q, w, b);	/* b is empty: one grant per call */
		return;
	}
	/* Release: publishes the notifier's writes to whoever consumes it. */
	atomic_store_explicit(PERMIT(n), 1, memory_order_release);
}

void blitz_notify_one(struct blitz_notify *n)
{
	struct wake_batch b;

	batch_init(&b, n);
	wq_lock(&n->q);
	notify_locked(n, &b);
	wq_unlock(&n->q);
	batch_wake(&b);
}

void blitz_notify_waiters(struct blitz_notify *n)
{
	struct wake_batch b;

	batch_init(&b, n);
	wq_lock(&n->q);
	/* Those queued now: later arrivals get later tickets and stay queued. */
	wq_grant_before(&n->q, n->q.seq, &b);
	wq_unlock(&n->q);
	batch_wake(&b);
}

enum blitz_poll blitz_notify_notified_poll(struct blitz_notify *n, struct blitz_waiter *w,
					   struct blitz_cx *cx)
{
	uint32_t st = waiter_state(w);
	uint64_t since;

	if (st == W_GRANTED) {
		/* Only the owner touches a granted node. */
		waiter_set_state(w, W_IDLE);
		return BLITZ_READY;
	}
	if (st == W_WAITING) {
		struct blitz_waker old;

		wq_lock(&n->q);
		st = waiter_state(w);
		if (st == W_WAITING)
			wq_rearm(w, cx, &old);
		wq_unlock(&n->q);
		if (st == W_WAITING) {
			blitz_waker_drop(&old);
			return BLITZ_PENDING;
		}
		waiter_set_state(w, W_IDLE);
		return BLITZ_READY;
	}
	if (blitz_notify_try_notified(n))
		return BLITZ_READY;
	since = wait_stamp();
	wq_lock(&n->q);
	/* The last look, under the lock: a permit stored before now is ours. */
	if (blitz_notify_try_notified(n)) {
		wq_unlock(&n->q);
		return BLITZ_READY;
	}
	w->want = 0;
	w->asked = 0;
	wq_enqueue(&n->q, w, cx, since);
	wq_unlock(&n->q);
	wq_probe_wait(&n->q, n, w, cx);
	return BLITZ_PENDING;
}

void blitz_notify_waiter_cancel(struct blitz_notify *n, struct blitz_waiter *w)
{
	struct blitz_waker old = { 0 };
	struct wake_batch b;
	uint32_t st = waiter_state(w);

	if (st == W_IDLE)
		return;
	batch_init(&b, n);
	wq_lock(&n->q);
	st = waiter_state(w);
	if (st == W_WAITING) {
		old = w->waker;
		wq_remove(&n->q, w);
	} else if (st == W_GRANTED && w->want == 1) {
		notify_locked(n, &b);	/* a notify_one nobody saw: pass it on */
	}
	waiter_set_state(w, W_IDLE);
	wq_unlock(&n->q);
	batch_wake(&b);
	blitz_waker_drop(&old);
}
