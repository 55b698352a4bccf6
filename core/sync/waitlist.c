// SPDX-License-Identifier: MIT
/*
 * core/sync/waitlist.c - the intrusive waiter queue shared by the sync
 * primitives (the protocol is described in waitlist.h).  Everything here
 * except batch_wake() runs under the queue's lock.
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
 * wq_enqueue - link @w at the tail as WAITING with a waker for the polled
 * task and the next arrival ticket.  Under the lock; the unlock publishes
 * the node to the releasers.
 */
void wq_enqueue(struct blitz_waitq *q, struct blitz_waiter *w, struct blitz_cx *cx,
		uint64_t since_ns)
{
	w->waker = blitz_cx_waker(cx);
	w->since_ns = since_ns;
	w->seq = q->seq++;
	w->next = NULL;
	w->prev = q->tail;
	if (q->tail)
		q->tail->next = w;
	else
		q->head = w;
	q->tail = w;
	/* Relaxed: readers of len want a snapshot; the lock orders the rest. */
	atomic_store_explicit(WQLEN(q), wq_len(q) + 1, memory_order_relaxed);
	waiter_set_state(w, W_WAITING);
}

/* wq_remove - unlink @w (WAITING) without granting it.  Under the lock. */
void wq_remove(struct blitz_waitq *q, struct blitz_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		q->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		q->tail = w->prev;
	w->next = w->prev = NULL;
	/* Relaxed: as in wq_enqueue. */
	atomic_store_explicit(WQLEN(q), wq_len(q) - 1, memory_order_relaxed);
}

/*
 * wq_grant - unlink @w, move its waker into @b, and mark it GRANTED.  The
 * caller checked !batch_full(b).  Under the lock.
 *
 * The GRANTED store is the last touch: release, so that the owner, which
 * may see it without the lock (waiter_state's acquire) and then reuse or
 * free the node at once, sees the unlink and whatever the releaser did
 * before (the data a mutex protects, the value a OnceCell publishes).
 */
void wq_grant(struct blitz_waitq *q, struct blitz_waiter *w, struct wake_batch *b)
{
	wq_remove(q, w);
	b->e[b->n].waker = w->waker;
	b->e[b->n].since_ns = w->since_ns;
	b->e[b->n].kind = wq_kind(q, w);
	b->n++;
	w->waker.vtable = NULL;
	w->waker.data = NULL;
	atomic_store_explicit(WSTATE(w), W_GRANTED, memory_order_release);
}

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

/* wq_probe_wait - fire sync_wait for a waiter that just queued (after the unlock). */
void wq_probe_wait(const struct blitz_waitq *q, const void *prim,
		   const struct blitz_waiter *w, struct blitz_cx *cx)
{
	BLITZ_SYNC_WAIT(wq_kind(q, w), (uint64_t)(uintptr_t)prim,
			(uint64_t)(uintptr_t)cx->task);
	(void)q; (void)prim; (void)w; (void)cx;
}

/*
 * batch_wake - outside the lock: fire sync_wake for each granted waiter
 * (task = the waker's data, the task's address for a task waker; wait_ns
 * from the stamp taken when it queued, 0 if tracing started meanwhile),
 * then wake it.  The batch is empty afterwards.
 */
void batch_wake(struct wake_batch *b)
{
	uint64_t now = b->n && BLITZ_SYNC_WAKE_ENABLED() ? clock_now_ns() : 0;

	for (unsigned i = 0; i < b->n; i++) {
		uint64_t since = b->e[i].since_ns;

		BLITZ_SYNC_WAKE(b->e[i].kind, (uint64_t)(uintptr_t)b->prim,
				(uint64_t)(uintptr_t)b->e[i].waker.data,
				since && now > since ? now - since : 0);
		(void)since;
		blitz_waker_wake(&b->e[i].waker);
	}
	(void)now;
	b->n = 0;
}
