// SPDX-License-Identifier: MIT
/*
 * core/sync/barrier.c - the generation barrier (docs/sync.md).
 *
 * n participants arrive per generation; the nth is the leader: it starts
 * the next generation (arrived = 0, generation + 1) and grants every waiter
 * queued before it, all under the lock.  A waiter records its generation in
 * w->asked, which is how a cancel knows whether its arrival still counts.
 *
 * Waking a generation: the waiters of a generation are exactly the nodes
 * queued before its leader's arrival, i.e. those whose ticket precedes the
 * queue's seq at that moment (wq_grant_before).  Arrivals of the next
 * generation queue behind them with later tickets, so a leader that drops
 * the lock to wake a full batch never wakes them by mistake, and a later
 * leader that runs meanwhile wakes any of ours that are left, too.
 */
#include "waitlist.h"

#define GEN(b) ((_Atomic uint32_t *)&(b)->generation)

void blitz_barrier_init(struct blitz_barrier *b, uint32_t n)
{
	wq_init(&b->q, SYNC_BARRIER);
	b->n = n ? n : 1;
	b->arrived = 0;
	atomic_init(GEN(b), 0);
}

uint32_t blitz_barrier_generation(const struct blitz_barrier *b)
{
	/* Relaxed: a snapshot (changed under the lock). */
	return atomic_load_explicit(GEN((struct blitz_barrier *)b), memory_order_relaxed);
}

uint32_t blitz_barrier_queued(const struct blitz_barrier *b)
{
	return wq_len(&b->q);
}

/*
 * lead - under the lock: the arrival that completes the generation.  Starts
 * the next one and wakes the waiters of this one; unlocks.
 */
static void lead(struct blitz_barrier *b)
{
	struct wake_batch wb;
	/* Relaxed: under the lock, which every store of the generation holds. */
	uint32_t gen = atomic_load_explicit(GEN(b), memory_order_relaxed);

	batch_init(&wb, b);
	b->arrived = 0;
	/* Relaxed: readers under the lock see it through the lock. */
	atomic_store_explicit(GEN(b), gen + 1, memory_order_relaxed);
	wq_grant_before(&b->q, b->q.seq, &wb);
	wq_unlock(&b->q);
	batch_wake(&wb);
}

enum blitz_poll blitz_barrier_wait_poll(struct blitz_barrier *b, struct blitz_waiter *w,
					struct blitz_cx *cx, bool *leader)
{
	uint32_t st = waiter_state(w);
	uint64_t since;

	if (st == W_GRANTED) {
		/* Only the owner touches a granted node. */
		waiter_set_state(w, W_IDLE);
		*leader = false;
		return BLITZ_READY;
	}
	if (st == W_WAITING) {
		struct blitz_waker old;

		wq_lock(&b->q);
		st = waiter_state(w);
		if (st == W_WAITING)
			wq_rearm(w, cx, &old);
		wq_unlock(&b->q);
		if (st == W_WAITING) {
			blitz_waker_drop(&old);
			return BLITZ_PENDING;
		}
		waiter_set_state(w, W_IDLE);
		*leader = false;
		return BLITZ_READY;
	}
	since = wait_stamp();
	wq_lock(&b->q);
	if (++b->arrived >= b->n) {
		lead(b);
		*leader = true;
		return BLITZ_READY;
	}
	/* Relaxed: under the lock, as in lead(). */
	w->asked = atomic_load_explicit(GEN(b), memory_order_relaxed);
	w->want = 0;
	wq_enqueue(&b->q, w, cx, since);
	wq_unlock(&b->q);
	wq_probe_wait(&b->q, b, w, cx);
	return BLITZ_PENDING;
}

bool blitz_barrier_try_wait(struct blitz_barrier *b)
{
	wq_lock(&b->q);
	if (b->arrived + 1 < b->n) {
		wq_unlock(&b->q);
		return false;
	}
	b->arrived++;
	lead(b);
	return true;
}

void blitz_barrier_waiter_cancel(struct blitz_barrier *b, struct blitz_waiter *w)
{
	struct blitz_waker old = { 0 };

	if (waiter_state(w) == W_IDLE)
		return;
	wq_lock(&b->q);
	if (waiter_state(w) == W_WAITING) {
		/*
		 * Still queued: its generation is the current one (a leader
		 * grants the older ones under the lock before it moves on...
		 * unless it dropped the lock to wake a full batch, hence the
		 * check): withdraw the arrival.  Relaxed: under the lock, as
		 * in lead().
		 */
		if (w->asked == atomic_load_explicit(GEN(b), memory_order_relaxed))
			b->arrived--;
		old = w->waker;
		wq_remove(&b->q, w);
	}
	/* Granted: its generation completed; there is nothing to give back. */
	waiter_set_state(w, W_IDLE);
	wq_unlock(&b->q);
	blitz_waker_drop(&old);
}
