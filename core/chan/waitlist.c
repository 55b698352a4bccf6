// SPDX-License-Identifier: MIT
/*
 * core/chan/waitlist.c - the channels' waiter lists (protocol in waitlist.h).
 *
 * Why lists apart from core/sync/waitlist.c: a channel's data is
 * lock-free (ring slots, seqlocked values), so a waiter here is only told
 * to try again, and a notifier that finds nobody waiting (the fence
 * handshake on len) never takes this lock: a send costs no lock unless a
 * receiver sleeps.  The sync queue instead grants the resource under a
 * lock the primitive shares, in ticket order; putting channels on it would
 * lock every send.  What this list has that one does not: wake-all lists
 * (broadcast, watch), queueing a woken loser at the front, passing an
 * unused notification on (cwl_cancel), per-list statistics, and a node
 * that remembers its list (a select waits on several).
 *
 * Wakers are always called after the lock is released: a wake may run a
 * scheduler path (queueing, unparking a worker) that must not nest inside
 * a channel lock.
 */
#include <stddef.h>
#include "../clock.h"
#include "../spinlock.h"
#include "waitlist.h"

/* The node is one cache line (channel.h says 64 bytes). */
_Static_assert(sizeof(struct blitz_chan_waiter) == 64, "waiter node size");

/* Wakes collected under the lock per round of cwl_notify_all(). */
#define WAKE_BATCH 16

static void cwl_lock(struct blitz_chan_waitlist *wl)
{
	unsigned spins = 0;

	/* Acquire: the critical section sees the previous holder's list writes. */
	while (atomic_exchange_explicit(WL_U32(&wl->lock), 1, memory_order_acquire))
		/* Relaxed: only waits for the holder's release; the exchange acquires. */
		while (atomic_load_explicit(WL_U32(&wl->lock), memory_order_relaxed))
			spin_backoff(&spins);
}

static void cwl_unlock(struct blitz_chan_waitlist *wl)
{
	/* Release: publish the critical section to the next holder. */
	atomic_store_explicit(WL_U32(&wl->lock), 0, memory_order_release);
}

/*
 * len is written only under the lock and read without it by notifiers:
 * an atomic with relaxed accesses (the fences order it; see waitlist.h).
 */
static void len_add(struct blitz_chan_waitlist *wl, int d)
{
	uint32_t n = atomic_load_explicit(WL_U32(&wl->len), memory_order_relaxed);

	atomic_store_explicit(WL_U32(&wl->len), n + d, memory_order_relaxed);
}

void cwl_init(struct blitz_chan_waitlist *wl, bool wake_all)
{
	wl->head = wl->tail = NULL;
	atomic_init(WL_U32(&wl->lock), 0);
	atomic_init(WL_U32(&wl->len), 0);
	wl->wake_all = wake_all;
	wl->reserved = 0;
	wl->waits = wl->wakes = wl->cancels = 0;
}

void blitz_chan_waiter_init(struct blitz_chan_waiter *w)
{
	w->next = w->prev = NULL;
	w->list = NULL;
	w->prim = NULL;
	w->waker.data = NULL;
	w->waker.vtable = NULL;
	w->since_ns = 0;
	atomic_init(WL_U32(&w->state), BLITZ_WAITER_IDLE);
	w->kind = 0;
}

/* Under the lock. */
static void unlink_node(struct blitz_chan_waitlist *wl, struct blitz_chan_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		wl->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		wl->tail = w->prev;
	w->next = w->prev = NULL;
	len_add(wl, -1);
}

void cwl_register(struct blitz_chan_waitlist *wl, struct blitz_chan_waiter *w,
		 struct blitz_cx *cx, unsigned kind, const void *prim,
		 bool front, bool probe)
{
	struct blitz_waker wk = blitz_cx_waker(cx);

	/* Fired before the node is visible: any sync_wake for it comes after. */
	if (probe)
		BLITZ_SYNC_WAIT((int)kind, (uint64_t)(uintptr_t)prim,
				(uint64_t)(uintptr_t)wk.data);
	/* Plain writes: the unlock below publishes them to the notifier. */
	w->list = wl;
	w->prim = prim;
	w->kind = kind;
	w->since_ns = BLITZ_SYNC_WAKE_ENABLED() ? clock_now_ns() : 0;

	cwl_lock(wl);
	w->waker = wk;
	if (front && !wl->wake_all) {	/* wake-all lists only append (cwl_notify_all) */
		w->prev = NULL;
		w->next = wl->head;
		if (wl->head)
			wl->head->prev = w;
		else
			wl->tail = w;
		wl->head = w;
	} else {
		w->next = NULL;
		w->prev = wl->tail;
		if (wl->tail)
			wl->tail->next = w;
		else
			wl->head = w;
		wl->tail = w;
	}
	len_add(wl, 1);
	wl->waits++;
	/* Relaxed: read by the owner itself, or by others under the lock. */
	atomic_store_explicit(WL_U32(&w->state), BLITZ_WAITER_QUEUED, memory_order_relaxed);
	cwl_unlock(wl);

	/*
	 * seq_cst: the owner's half of the handshake.  Orders the len store
	 * above before the caller's second try, against the notifier's publish
	 * followed by its fence and its len load.
	 */
	atomic_thread_fence(memory_order_seq_cst);
}

/*
 * take_back - the owner removes @w.  Returns the state it found under the
 * lock (QUEUED: removed, its waker in *wk; WOKEN: the notifier has it).
 */
static uint32_t take_back(struct blitz_chan_waiter *w, struct blitz_waker *wk)
{
	struct blitz_chan_waitlist *wl = w->list;	/* written only by the owner */
	uint32_t s;

	wk->vtable = NULL;
	cwl_lock(wl);
	/* Relaxed: under the lock, which orders every change of a queued node. */
	s = atomic_load_explicit(WL_U32(&w->state), memory_order_relaxed);
	if (s == BLITZ_WAITER_QUEUED) {
		unlink_node(wl, w);
		wl->cancels++;
		*wk = w->waker;
		w->waker.vtable = NULL;
	}
	/* Relaxed: off the list now, the node is the owner's alone. */
	atomic_store_explicit(WL_U32(&w->state), BLITZ_WAITER_IDLE, memory_order_relaxed);
	cwl_unlock(wl);
	blitz_waker_drop(wk);		/* outside the lock */
	return s;
}

void cwl_finish(struct blitz_chan_waiter *w)
{
	struct blitz_waker wk;
	uint32_t s = waiter_state(w);

	if (s == BLITZ_WAITER_IDLE)
		return;
	if (s == BLITZ_WAITER_WOKEN) {
		/* Woken and done: the notification was used.  Relaxed: ours alone. */
		atomic_store_explicit(WL_U32(&w->state), BLITZ_WAITER_IDLE, memory_order_relaxed);
		return;
	}
	/* Still queued: a notification racing with us is used too (we consumed). */
	take_back(w, &wk);
}

void cwl_cancel(struct blitz_chan_waiter *w)
{
	struct blitz_waker wk;
	uint32_t s = waiter_state(w);

	if (s == BLITZ_WAITER_IDLE)
		return;
	if (s == BLITZ_WAITER_QUEUED)
		s = take_back(w, &wk);
	else	/* WOKEN: ours alone (relaxed) */
		atomic_store_explicit(WL_U32(&w->state), BLITZ_WAITER_IDLE, memory_order_relaxed);
	/* Woken but giving up: pass the notification on to the next waiter. */
	if (s == BLITZ_WAITER_WOKEN && !w->list->wake_all)
		cwl_notify_one(w->list);
}

void blitz_chan_waiter_cancel(struct blitz_chan_waiter *w)
{
	cwl_cancel(w);
}

/* What a woken node hands over, copied under the lock. */
struct wake_rec {
	struct blitz_waker waker;
	const void *prim;
	uint64_t since_ns;
	unsigned kind;
};

/* Under the lock: dequeue the head, mark it WOKEN (the last write to it). */
static void dequeue_head(struct blitz_chan_waitlist *wl, struct wake_rec *r)
{
	struct blitz_chan_waiter *w = wl->head;

	unlink_node(wl, w);
	wl->wakes++;
	r->waker = w->waker;
	r->prim = w->prim;
	r->since_ns = w->since_ns;
	r->kind = w->kind;
	w->waker.vtable = NULL;
	/* Release: the owner's acquire load of WOKEN sees all of the above. */
	atomic_store_explicit(WL_U32(&w->state), BLITZ_WAITER_WOKEN, memory_order_release);
}

static void wake_rec(struct wake_rec *r)
{
	if (BLITZ_SYNC_WAKE_ENABLED()) {
		uint64_t now = clock_now_ns();

		BLITZ_SYNC_WAKE((int)r->kind, (uint64_t)(uintptr_t)r->prim,
				(uint64_t)(uintptr_t)r->waker.data,
				r->since_ns && now > r->since_ns ? now - r->since_ns : 0);
	}
	blitz_waker_wake(&r->waker);
}

void cwl_wake_one(struct blitz_chan_waitlist *wl)
{
	struct wake_rec r;

	cwl_lock(wl);
	if (!wl->head) {
		cwl_unlock(wl);
		return;
	}
	dequeue_head(wl, &r);
	cwl_unlock(wl);
	wake_rec(&r);
}

/*
 * cwl_wake_all - on a wake-all list (broadcast, watch), wake the waiters
 * queued when it starts, at most that many: a woken task that queues again
 * at once is not woken a second time by the same send, which could go on
 * for as long as receivers keep up.  This is exact because wake-all lists
 * only ever append: whoever was counted is ahead of anyone queued since,
 * and anyone not counted saw our publish in its retry (the handshake).
 *
 * On a wake-one list (a channel's, woken only this way by close) a woken
 * waiter may queue again at the front, ahead of ones that were counted, so
 * there it drains the list until it is empty.  That ends: after close,
 * a retry fails only while a sender is between claiming a slot and
 * publishing it, a few instructions.
 */
void cwl_wake_all(struct blitz_chan_waitlist *wl, uint32_t left)
{
	struct wake_rec r[WAKE_BATCH];
	uint32_t n;

	while (left) {
		cwl_lock(wl);
		for (n = 0; n < WAKE_BATCH && wl->head && (n < left || !wl->wake_all); n++)
			dequeue_head(wl, &r[n]);
		if (!wl->head)
			left = 0;
		else if (wl->wake_all)
			left -= n;
		cwl_unlock(wl);
		for (uint32_t i = 0; i < n; i++)
			wake_rec(&r[i]);
	}
}

void blitz_chan_waitlist_stats(struct blitz_chan_waitlist *wl, struct blitz_chan_stats *st)
{
	cwl_lock(wl);
	st->waits = wl->waits;
	st->wakes = wl->wakes;
	st->cancels = wl->cancels;
	/* Relaxed: under the lock, which every write of len holds. */
	st->queued = atomic_load_explicit(WL_U32(&wl->len), memory_order_relaxed);
	cwl_unlock(wl);
}
