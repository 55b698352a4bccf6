// SPDX-License-Identifier: MIT
/*
 * core/sync/waitlist.c - the intrusive waiter queue shared by the sync
 * primitives (the protocol is described in waitlist.h): its functions
 * that are not on every op's path (those are inline in waitlist.h).
 * Everything here runs under the queue's lock.
 *
 * Why a queue apart from core/chan/waitlist.c: here a waiter is granted
 * what it waits for.  A task takes this lock before its last look at the
 * primitive's state, and a releaser hands the permits, the lock or the
 * value to the head waiter under the same lock (GRANTED: the waiter owns
 * it when it wakes and never retries), in arrival-ticket order so nobody
 * is passed over; whether anyone waits is a bit of the primitive's own
 * state word (semaphore.c's WAITERS).  The channels' list only tells a
 * waiter to try again: their data is lock-free and their lock guards the
 * links alone, so every wait and notify there pays a seq_cst fence (the
 * handshake of core/chan/waitlist.h) that a grant does not need, and a
 * grant would put a lock on every channel send.
 */
#include "waitlist.h"

/*
 * wq_grant_before - grant every waiter whose ticket is before @limit (the
 * ones queued when the caller took the snapshot q->seq), dropping the lock
 * to wake each full batch.  Waiters that arrive meanwhile get later tickets
 * and queue behind, so they are left alone; another releaser may grant some
 * of ours meanwhile, which is fine (each node is granted once, under the
 * lock).  Under the lock, which it holds again on return.
 */
void wq_grant_before(struct blitz_waitq *q, uint32_t limit, struct wake_batch *b)
{
	struct blitz_waiter *w;

	while ((w = q->head) && seq_before(w->seq, limit)) {
		if (batch_full(b)) {
			wq_relock(q, b);
			continue;
		}
		wq_grant(q, w, b);
	}
}

/*
 * wq_rearm - a queued waiter is polled again: keep its waker if it already
 * wakes the polled task (the usual case, no reference counting), else swap
 * in a new one and hand the old one back in @old, to be dropped after the
 * unlock.  Under the lock.
 */
void wq_rearm(struct blitz_waiter *w, struct blitz_cx *cx, struct blitz_waker *old)
{
	old->vtable = NULL;
	old->data = NULL;
	if (w->waker.vtable == &task_waker_vtable && w->waker.data == cx->task)
		return;
	*old = w->waker;
	w->waker = blitz_cx_waker(cx);
}

