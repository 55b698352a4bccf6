// SPDX-License-Identifier: MIT
/*
 * core/sync/semaphore.c - the counting semaphore (docs/sync.md),
 * the base of Mutex (one permit) and RwLock (BLITZ_RWLOCK_MAX_READERS).
 *
 * Anti-starvation, as in Tokio's batch semaphore:
 *  - permits go straight to queued waiters, head first: the head takes what
 *    there is (w->want counts what it still misses), and only permits that
 *    no waiter needs are added to the available count;
 *  - a task about to queue takes the lock before its last look at the
 *    available count, so permits cannot slip past it between that look and
 *    its insertion into the queue.
 *
 * The permits word holds the available count in bits 0-30 and WAITERS in
 * bit 31 (BLITZ_SEMAPHORE_MAX_PERMITS is 2^31 - 1, so the bit is free).
 * WAITERS is set, under the lock, by the CAS with which a task that has to
 * queue takes the last permits (take_available), and cleared, under the
 * lock, by the CAS that adds permits once the queue is empty
 * (add_available).  Hence:
 *  (I) whenever the queue is not empty, WAITERS is set and the count is 0;
 *  (W) while WAITERS is set only lock holders write the word: try_acquire()
 *      fails on it and release() takes the lock.
 * With the bit clear the queue is empty, so release() adds its permits with
 * one CAS and no lock (the fast path; Tokio's release always locks); a task
 * that queues later sees them in its take_available under the lock.  With
 * the bit set, release() takes the lock and hands the permits to the queue.
 * And the lock-free try_acquire() cannot barge: it fails while anyone waits.
 */
#include <stdlib.h>
#include "semaphore.h"

void sem_init_kind(struct blitz_semaphore *s, uint32_t permits, enum probe_sync_kind kind)
{
	/* More than the word holds is the most it holds (blitz/sync.h). */
	if (permits > BLITZ_SEMAPHORE_MAX_PERMITS)
		permits = BLITZ_SEMAPHORE_MAX_PERMITS;
	wq_init(&s->q, kind);
	atomic_init(PERMITS(s), permits);
}

void blitz_semaphore_init(struct blitz_semaphore *s, uint32_t permits)
{
	sem_init_kind(s, permits, SYNC_SEMAPHORE);
}

uint32_t blitz_semaphore_available(const struct blitz_semaphore *s)
{
	return sem_available(s);
}

uint32_t blitz_semaphore_queued(const struct blitz_semaphore *s)
{
	return wq_len(&s->q);
}

/*
 * The three calls a contended Mutex or RwLock makes on every op have
 * internal names (semaphore.h), which the library's own callers (mutex.c,
 * rwlock.c, and acquire_poll's fast path here) reach directly; the public
 * names are aliases of them.  Called by their exported names, each went
 * through the PLT (a library's global may be interposed): three to four
 * PLT jumps per FIFO hand-off (experiments/sync-handoff).
 */
bool sem_try_acquire(struct blitz_semaphore *s, uint32_t n)
{
	/* Relaxed: a guess; the CAS decides. */
	uint32_t cur = atomic_load_explicit(PERMITS(s), memory_order_relaxed);

	do {
		if ((cur & WAITERS) || cur < n)
			return false;	/* queued tasks come first (I) */
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

bool blitz_semaphore_try_acquire(struct blitz_semaphore *s, uint32_t n)
	__attribute__((alias("sem_try_acquire")));

/*
 * take_available - under the lock, take up to @n of the available permits
 * (lock-free try_acquire()s and release()s may change the count meanwhile,
 * as long as WAITERS is clear).  If that is not all @n, the caller queues:
 * the same CAS sets WAITERS, so that from then on releases take the lock
 * and find the caller queued.  Return: how many were taken.
 */
static uint32_t take_available(struct blitz_semaphore *s, uint32_t n)
{
	/* Relaxed: under the lock WAITERS is exact (W); the count is a guess the CAS checks. */
	uint32_t cur = atomic_load_explicit(PERMITS(s), memory_order_relaxed);
	uint32_t take, next;

	do {
		if (cur & WAITERS)
			return 0;	/* others queued: the count is 0 (I) */
		take = cur < n ? cur : n;
		next = take < n ? WAITERS : cur - take;
		/*
		 * Acquire: as in try_acquire (pairs with the release of the
		 * permits taken).  Relaxed on failure: nothing was taken.
		 */
	} while (!atomic_compare_exchange_weak_explicit(PERMITS(s), &cur, next,
							memory_order_acquire,
							memory_order_relaxed));
	return take;
}

/*
 * add_checked - @cur's count plus @n, WAITERS clear; saturates at the
 * maximum (a release of more than was ever acquired: blitz/sync.h).
 */
static uint32_t add_checked(uint32_t cur, uint32_t n)
{
	uint64_t sum = (uint64_t)(cur & ~WAITERS) + n;

	return sum > BLITZ_SEMAPHORE_MAX_PERMITS ? BLITZ_SEMAPHORE_MAX_PERMITS : (uint32_t)sum;
}

/*
 * add_available - under the lock with the queue empty: add @n (may be 0)
 * and clear WAITERS, which ends (W): the lock-free paths may run again.
 */
static void add_available(struct blitz_semaphore *s, uint32_t n)
{
	/* Relaxed: as in take_available (WAITERS exact, the count a guess). */
	uint32_t cur = atomic_load_explicit(PERMITS(s), memory_order_relaxed);
	uint32_t next;

	do {
		next = add_checked(cur, n);
		if (next == cur)
			return;		/* nothing to add, WAITERS already clear */
		/*
		 * Release: publishes the releaser's critical section to the
		 * task that takes these permits (try_acquire / take_available
		 * acquire them).  Relaxed on failure: retried.
		 */
	} while (!atomic_compare_exchange_weak_explicit(PERMITS(s), &cur, next,
							memory_order_release,
							memory_order_relaxed));
}

/*
 * assign - under the lock: give @n permits to the queued waiters, head
 * first, granting each that has all it asked for; the rest becomes
 * available, and once the queue is empty WAITERS is cleared (even with
 * nothing left to add).  Drops and retakes the lock to wake full batches.
 * Inline in its two callers: called, with the wait queue's functions
 * called from it, a mutex hand-off took more instructions (measured with
 * experiments/sync-handoff: experiments/peers/NOTEBOOK.md, "2026-11-27
 * 10:45-11:14: the wait queue inline").
 */
static inline __attribute__((always_inline)) void
assign(struct blitz_semaphore *s, uint32_t n, struct wake_batch *b)
{
	struct blitz_waiter *w;

	for (;;) {
		uint32_t take;

		w = s->q.head;
		if (!w) {
			add_available(s, n);
			return;
		}
		if (!n)
			return;
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

/*
 * release_fast - add @n without the lock if nobody is queued (WAITERS
 * clear).  Return: false if someone is, and the lock must be taken.
 */
static bool release_fast(struct blitz_semaphore *s, uint32_t n)
{
	/* Relaxed: a guess; the CAS decides. */
	uint32_t cur = atomic_load_explicit(PERMITS(s), memory_order_relaxed);

	do {
		if (cur & WAITERS)
			return false;
		/*
		 * Release: publishes our critical section to the task that
		 * takes these permits with an acquire CAS.  A task that queues
		 * after this CAS sees the permits in its take_available(); one
		 * that queued before set WAITERS, so this CAS fails (the word
		 * changed) and the retry sees the bit.  Relaxed on failure.
		 */
	} while (!atomic_compare_exchange_weak_explicit(PERMITS(s), &cur, add_checked(cur, n),
							memory_order_release,
							memory_order_relaxed));
	return true;
}

void sem_release(struct blitz_semaphore *s, uint32_t n)
{
	struct wake_batch b;

	if (n == 0 || release_fast(s, n))
		return;
	batch_init(&b, s);
	wq_lock(&s->q);
	/* Under the lock: the WAITERS setter's unlock made its node visible. */
	assign(s, n, &b);
	wq_unlock(&s->q);
	batch_wake(&b);
}

void blitz_semaphore_release(struct blitz_semaphore *s, uint32_t n)
	__attribute__((alias("sem_release")));

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

enum blitz_poll sem_acquire_poll(struct blitz_semaphore *s, struct blitz_waiter *w,
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
	if (sem_try_acquire(s, n))
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

enum blitz_poll blitz_semaphore_acquire_poll(struct blitz_semaphore *s, struct blitz_waiter *w,
					     uint32_t n, struct blitz_cx *cx)
	__attribute__((alias("sem_acquire_poll")));

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
	/* Even with nothing to give: if @w was the last waiter, WAITERS goes. */
	assign(s, give, &b);
	wq_unlock(&s->q);
	batch_wake(&b);
	blitz_waker_drop(&old);
}
