// SPDX-License-Identifier: MIT
/*
 * core/sync/semaphore.c - the counting semaphore (seed 001, "Semaphore"),
 * the base of Mutex (one permit) and RwLock (BLITZ_RWLOCK_MAX_READERS).
 *
 * Anti-starvation, as in the seed and Tokio's batch semaphore:
 *  - release() always takes the lock and looks at the queue;
 *  - permits go straight to queued waiters, head first: the head takes what
 *    there is (w->want counts what it still misses), and only permits that
 *    no waiter needs are added to the available count;
 *  - a task about to queue takes the lock before its last look at the
 *    available count, so permits cannot slip past it between that look and
 *    its insertion into the queue.
 * Invariant (I): whenever the queue is not empty, permits == 0.  Permits are
 * only ever added under the lock with the queue empty, and a waiter queues
 * (under the lock) only after taking every available permit.  Hence the
 * lock-free try_acquire() cannot barge: it sees 0 while anyone waits.
 */
#include <stdlib.h>
#include "semaphore.h"

#define PERMITS(s) ((_Atomic uint32_t *)&(s)->permits)

void sem_init_kind(struct blitz_semaphore *s, uint32_t permits, enum sync_kind kind)
{
	if (permits > BLITZ_SEMAPHORE_MAX_PERMITS)
		abort();
	wq_init(&s->q, kind);
	atomic_init(PERMITS(s), permits);
}

void blitz_semaphore_init(struct blitz_semaphore *s, uint32_t permits)
{
	sem_init_kind(s, permits, SYNC_SEMAPHORE);
}

uint32_t blitz_semaphore_available(const struct blitz_semaphore *s)
{
	/* Relaxed: a snapshot. */
	return atomic_load_explicit(PERMITS((struct blitz_semaphore *)s), memory_order_relaxed);
}

uint32_t blitz_semaphore_queued(const struct blitz_semaphore *s)
{
	return wq_len(&s->q);
}

bool blitz_semaphore_try_acquire(struct blitz_semaphore *s, uint32_t n)
{
	uint32_t cur = atomic_load_explicit(PERMITS(s), memory_order_relaxed);

	do {
		if (cur < n)
			return false;
		/*
		 * Acquire on success: pairs with the release that added these
		 * permits (add_available), so the critical section sees what
		 * the last holder wrote before releasing.  Relaxed on failure:
		 * nothing was taken.
		 */
	} while (!atomic_compare_exchange_weak_explicit(PERMITS(s), &cur, cur - n,
							memory_order_acquire,
							memory_order_relaxed));
	return true;
}

/*
 * take_available - under the lock, take up to @n of the available permits
 * (lock-free try_acquire()s may take some concurrently; nobody adds any
 * while we hold the lock).  Return: how many were taken.
 */
static uint32_t take_available(struct blitz_semaphore *s, uint32_t n)
{
	uint32_t cur = atomic_load_explicit(PERMITS(s), memory_order_relaxed);
	uint32_t take;

	do {
		take = cur < n ? cur : n;
		if (take == 0)
			return 0;
		/* Acquire: as in try_acquire. */
	} while (!atomic_compare_exchange_weak_explicit(PERMITS(s), &cur, cur - take,
							memory_order_acquire,
							memory_order_relaxed));
	return take;
}

/* add_available - under the lock with the queue empty (invariant I). */
static void add_available(struct blitz_semaphore *s, uint32_t n)
{
	/*
	 * Release: publishes the releaser's critical section to the task that
	 * takes these permits (try_acquire / take_available acquire them).
	 */
	uint32_t prev = atomic_fetch_add_explicit(PERMITS(s), n, memory_order_release);

	if (prev + (uint64_t)n > BLITZ_SEMAPHORE_MAX_PERMITS)
		abort();	/* released more than was ever acquired */
}

/*
 * assign - under the lock: give @n permits to the queued waiters, head
 * first, granting each that has all it asked for; the rest becomes
 * available.  Drops and retakes the lock to wake full batches.
 */
static void assign(struct blitz_semaphore *s, uint32_t n, struct wake_batch *b)
{
	struct blitz_waiter *w;

	while (n) {
		uint32_t take;

		w = s->q.head;
		if (!w) {
			add_available(s, n);
			return;
		}
		if (w->want <= n && batch_full(b)) {
			/* The n permits are ours meanwhile: nobody can take them. */
			wq_relock(&s->q, b);
			continue;
		}
		take = w->want < n ? w->want : n;
		w->want -= take;
		n -= take;
		if (w->want == 0)
			wq_grant(&s->q, w, b);
	}
}

void blitz_semaphore_release(struct blitz_semaphore *s, uint32_t n)
{
	struct wake_batch b;

	if (n == 0)
		return;
	batch_init(&b, s);
	wq_lock(&s->q);
	assign(s, n, &b);
	wq_unlock(&s->q);
	batch_wake(&b);
}

/*
 * poll_queued - a waiter that is (or was) queued is polled: READY if it
 * was granted, else make sure its waker is current.
 */
static enum blitz_poll poll_queued(struct blitz_waitq *q, struct blitz_waiter *w,
				   struct blitz_cx *cx)
{
	struct blitz_waker old;
	uint32_t st;

	wq_lock(q);
	/* Under the lock: a grant, made under it too, is visible. */
	st = waiter_state(w);
	if (st == W_WAITING)
		wq_rearm(w, cx, &old);
	wq_unlock(q);
	if (st == W_WAITING) {
		blitz_waker_drop(&old);
		return BLITZ_PENDING;
	}
	waiter_set_state(w, W_IDLE);
	return BLITZ_READY;
}

enum blitz_poll blitz_semaphore_acquire_poll(struct blitz_semaphore *s, struct blitz_waiter *w,
					     uint32_t n, struct blitz_cx *cx)
{
	uint32_t st = waiter_state(w);
	uint64_t since;

	if (st == W_GRANTED) {
		/* Only the owner touches a granted node. */
		waiter_set_state(w, W_IDLE);
		return BLITZ_READY;
	}
	if (st == W_WAITING)
		return poll_queued(&s->q, w, cx);
	/* Idle: a new acquisition.  The fast path cannot barge (invariant I). */
	if (blitz_semaphore_try_acquire(s, n))
		return BLITZ_READY;
	since = wait_stamp();
	wq_lock(&s->q);
	/* Locked before the last look: nothing released can slip past us. */
	w->asked = n;
	w->want = n - take_available(s, n);
	if (w->want == 0) {
		wq_unlock(&s->q);
		return BLITZ_READY;
	}
	wq_enqueue(&s->q, w, cx, since);
	wq_unlock(&s->q);
	wq_probe_wait(&s->q, s, w, cx);
	return BLITZ_PENDING;
}

void blitz_semaphore_waiter_cancel(struct blitz_semaphore *s, struct blitz_waiter *w)
{
	struct blitz_waker old = { 0 };
	struct wake_batch b;
	uint32_t st = waiter_state(w), give = 0;

	if (st == W_IDLE)
		return;		/* nothing queued, nothing held: s is not touched */
	batch_init(&b, s);
	wq_lock(&s->q);
	st = waiter_state(w);
	if (st == W_WAITING) {
		/* The permits assigned to it so far go back, to the queue first. */
		give = w->asked - w->want;
		old = w->waker;
		wq_remove(&s->q, w);
	} else if (st == W_GRANTED) {
		give = w->asked;	/* granted, never seen: all go back */
	}
	waiter_set_state(w, W_IDLE);
	if (give)
		assign(s, give, &b);
	wq_unlock(&s->q);
	batch_wake(&b);
	blitz_waker_drop(&old);
}
