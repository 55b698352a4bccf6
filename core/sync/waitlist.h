/* SPDX-License-Identifier: MIT */
/*
 * core/sync/waitlist.h - the intrusive waiter queue every sync primitive
 * shares: a doubly linked FIFO of struct blitz_waiter nodes (embedded in the
 * waiting tasks' states), protected by the primitive's small TTAS lock.
 *
 * The node protocol (docs/sync.md has the long form):
 *
 *   state      who moves it                 how
 *   IDLE    -> WAITING   the owner task       under the lock (wq_enqueue)
 *   WAITING -> GRANTED   a releaser           under the lock (wq_grant): it
 *                                             unlinks the node, moves the
 *                                             waker out, then stores GRANTED
 *                                             (release) and never touches
 *                                             the node again
 *   GRANTED -> IDLE      the owner            lock-free, after an acquire
 *                                             load saw GRANTED
 *   WAITING -> IDLE      the owner (cancel)   under the lock (wq_remove)
 *   IDLE    -> INIT      the owner            OnceCell's initializer only
 *
 * So while a node is WAITING only lock holders touch its links, waker and
 * fields; once it is GRANTED only its owner does.  The owner may read the
 * state without the lock (acquire), because WAITING -> GRANTED is the only
 * change others make to it.
 *
 * Wakers are never called under the lock: a releaser collects them in a
 * wake_batch (on its stack), unlocks, then wakes (and fires the sync_wake
 * probes).  A batch holds WAKE_BATCH wakers; a release that wakes more
 * drops the lock to wake a full batch and takes it again.
 */
#ifndef BLITZ_CORE_SYNC_WAITLIST_H
#define BLITZ_CORE_SYNC_WAITLIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <blitz.h>
#include "../clock.h"
#include "../probes.h"
#include "../spinlock.h"
#include "../sched/task.h"

/* struct blitz_waiter.state */
enum {
	W_IDLE = 0,
	W_WAITING = 1,
	W_GRANTED = 2,
	W_INIT = 3,		/* OnceCell: this waiter's task runs the initializer */
};

#define WSTATE(w) ((_Atomic uint32_t *)&(w)->state)
#define WQLEN(q) ((_Atomic uint32_t *)&(q)->len)

/*
 * The queue lock is core/spinlock.h's TTAS lock over the public struct's
 * bool (the public header does not include <stdatomic.h>, as in oneshot.h).
 * Its acquire/release orderings make everything done under it (links,
 * node fields, the primitives' plain counters) visible to the next holder.
 */
static inline void wq_lock(struct blitz_waitq *q)
{
	spin_lock((struct spinlock *)&q->lock);
}

static inline void wq_unlock(struct blitz_waitq *q)
{
	spin_unlock((struct spinlock *)&q->lock);
}

static inline void wq_init(struct blitz_waitq *q, enum probe_sync_kind kind)
{
	spin_init((struct spinlock *)&q->lock);
	q->kind = (uint8_t)kind;
	atomic_init(WQLEN(q), 0);
	q->seq = 0;
	q->head = q->tail = NULL;
}

/*
 * waiter_state - the owner's lock-free look at its node.  Acquire: pairs
 * with wq_grant's release store, so what the releaser did before granting
 * (and the unlink) is visible to the owner that sees GRANTED.
 */
static inline uint32_t waiter_state(const struct blitz_waiter *w)
{
	return atomic_load_explicit(WSTATE((struct blitz_waiter *)w), memory_order_acquire);
}

/*
 * waiter_set_state - a change by the node's owner (under the lock, or after
 * it saw GRANTED).  Relaxed: nobody else reads the node until a lock
 * release publishes it (enqueue) or until it is re-enqueued.
 */
static inline void waiter_set_state(struct blitz_waiter *w, uint32_t s)
{
	atomic_store_explicit(WSTATE(w), s, memory_order_relaxed);
}

static inline uint32_t wq_len(const struct blitz_waitq *q)
{
	/* Relaxed: a snapshot for diagnostics; written under the lock. */
	return atomic_load_explicit(WQLEN((struct blitz_waitq *)q), memory_order_relaxed);
}

/* seq_before - did ticket @a arrive before ticket @b (mod 2^32)? */
static inline bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* The probes' kind for @w on @q: an RwLock queue holds readers and writers. */
static inline int wq_kind(const struct blitz_waitq *q, const struct blitz_waiter *w)
{
	if (q->kind == SYNC_RWLOCK_READ && w->asked > 1)
		return SYNC_RWLOCK_WRITE;
	return q->kind;
}

/*
 * wait_stamp - the time a wait starts, taken only while a tracer has the
 * sync_wake probe enabled (it is what wait_ns is computed from).
 */
static inline uint64_t wait_stamp(void)
{
	return BLITZ_SYNC_WAKE_ENABLED() ? clock_now_ns() : 0;
}

/*
 * A grant's waker and what the sync_wake probe reports, collected under the
 * lock and used after it.
 */
#define WAKE_BATCH 32

struct wake_batch {
	const void *prim;
	unsigned n;
	struct {
		struct blitz_waker waker;
		uint64_t since_ns;
		int kind;
	} e[WAKE_BATCH];
};

static inline void batch_init(struct wake_batch *b, const void *prim)
{
	b->prim = prim;
	b->n = 0;
}

static inline bool batch_full(const struct wake_batch *b)
{
	return b->n == WAKE_BATCH;
}

/*
 * wq_enqueue - link @w at the tail as WAITING with a waker for the polled
 * task and the next arrival ticket.  Under the lock; the unlock publishes
 * the node to the releasers.
 */
static inline void wq_enqueue(struct blitz_waitq *q, struct blitz_waiter *w,
			      struct blitz_cx *cx, uint64_t since_ns)
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
static inline void wq_remove(struct blitz_waitq *q, struct blitz_waiter *w)
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
static inline void wq_grant(struct blitz_waitq *q, struct blitz_waiter *w, struct wake_batch *b)
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

/* wq_probe_wait - fire sync_wait for a waiter that just queued (after the unlock). */
static inline void wq_probe_wait(const struct blitz_waitq *q, const void *prim,
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
 * then wake it.  The batch is empty afterwards.  Inline, with the
 * queue's other per-op functions above: a mutex hand-off called five of
 * them from semaphore.c, a good share of its instructions (measured with
 * experiments/sync-handoff: experiments/peers/NOTEBOOK.md, "2026-11-27
 * 10:45-11:14: the wait queue inline").
 */
static inline __attribute__((always_inline)) void batch_wake(struct wake_batch *b)
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

void wq_grant_before(struct blitz_waitq *q, uint32_t limit, struct wake_batch *b);
void wq_rearm(struct blitz_waiter *w, struct blitz_cx *cx, struct blitz_waker *old);

/*
 * wq_relock - a batch is full while the lock is held: unlock, wake it, and
 * lock again.  The caller re-examines the queue afterwards.
 */
static inline void wq_relock(struct blitz_waitq *q, struct wake_batch *b)
{
	wq_unlock(q);
	batch_wake(b);
	wq_lock(q);
}

#endif
