/* SPDX-License-Identifier: MIT */
/*
 * core/chan/waitlist.h - the channels' waiter lists: an intrusive FIFO of
 * struct blitz_chan_waiter nodes (each in its waiting task's state) behind
 * a small test-and-test-and-set lock that protects the links only, never a
 * channel's data.  (cwl_: "channel waiter list", apart from core/sync's.)
 *
 * The waiter protocol (docs/channels.md, "Waiters"):
 *
 *   owner (the waiting task)              notifier (send, recv, close)
 *   ------------------------              ----------------------------
 *   try the operation: fails              publish (a value, a free slot,
 *   cwl_register(): lock, queue,          the closed flag)
 *     len++, unlock                       fence(seq_cst)
 *   fence(seq_cst)                        len == 0?  nobody to wake
 *   try again: fails -> PENDING           lock, dequeue, state = WOKEN,
 *                                           unlock, wake (outside the lock)
 *
 * The two seq_cst fences make this a Dekker handshake: either the owner's
 * second try sees what the notifier published, or the notifier sees the
 * owner's len increment and wakes someone.  So the notifier does not take
 * the lock when nobody waits, and no wakeup is lost.
 *
 * A node's state: IDLE -> QUEUED (owner, under the lock) -> WOKEN (notifier,
 * under the lock, release: its last write to the node) -> IDLE (owner,
 * after an acquire load saw WOKEN).  A QUEUED node is taken back only under
 * the lock (cwl_finish, cwl_cancel), so each queueing ends in exactly one
 * wake or one take-back: a node is never woken twice for one wait.
 *
 * Wake-one lists (a channel's senders, receivers) hand a notification to
 * one waiter; if that waiter gives up without using it (a cancelled task, a
 * select that completed on another branch), cwl_cancel() passes it on to the
 * next waiter, so a value or a free slot is never left unclaimed while
 * someone waits.  Wake-all lists (broadcast, watch) wake everyone.
 */
#ifndef BLITZ_CORE_CHAN_WAITLIST_H
#define BLITZ_CORE_CHAN_WAITLIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <blitz/channel.h>
#include "../probes.h"

#ifdef __SANITIZE_THREAD__
/*
 * ThreadSanitizer does not model fences, and GCC says so (-Wtsan) wherever
 * one is inlined.  The fences of core/chan/ order atomic accesses only (the
 * waiter handshake's len and the data it guards; the seqlocks' sequence
 * and their value words, which are atomics too): every non-atomic datum is
 * handed over by a release/acquire pair or a lock, which TSan does see.
 * So TSan loses nothing it could check here, and the warning is noise.
 */
#pragma GCC diagnostic ignored "-Wtsan"
#endif

#define WL_U32(p) ((_Atomic uint32_t *)(p))
#define WL_U64(p) ((_Atomic uint64_t *)(p))

/*
 * waiter_state - the owner's look at its node, outside the lock.
 * Acquire: pairs with the notifier's release store of WOKEN, so that once
 * the owner sees WOKEN the notifier's writes to the node (links, waker) are
 * done and the owner may queue the node again.
 */
static inline uint32_t waiter_state(const struct blitz_chan_waiter *w)
{
	return atomic_load_explicit(WL_U32(&w->state), memory_order_acquire);
}

/*
 * cwl_still_queued - the owner, after a failed try: is @w still queued
 * (then a notification is still to come and there is nothing to do)?
 * A WOKEN node becomes IDLE here, and *woken says so (it is queued again at
 * the front: it was first in line).
 */
static inline bool cwl_still_queued(struct blitz_chan_waiter *w, bool *woken)
{
	uint32_t s = waiter_state(w);

	*woken = s == BLITZ_WAITER_WOKEN;
	if (s == BLITZ_WAITER_WOKEN)
		/* Relaxed: nobody else touches a WOKEN node. */
		atomic_store_explicit(WL_U32(&w->state), BLITZ_WAITER_IDLE,
				      memory_order_relaxed);
	return s == BLITZ_WAITER_QUEUED;
}

void cwl_init(struct blitz_chan_waitlist *wl, bool wake_all);

/*
 * cwl_register - queue @w (IDLE) on @wl with a waker for the polled task,
 * then fence(seq_cst): the caller must try its operation again afterwards.
 * @front: queue at the head (a woken waiter that lost its race; ignored on
 *         a wake-all list, which only appends).
 * @probe: fire sync_wait(kind, prim, task).
 */
void cwl_register(struct blitz_chan_waitlist *wl, struct blitz_chan_waiter *w,
		 struct blitz_cx *cx, unsigned kind, const void *prim,
		 bool front, bool probe);

/* cwl_finish - the owner's operation completed: take @w back if still queued. */
void cwl_finish(struct blitz_chan_waiter *w);

/* cwl_cancel - the owner gives up: take @w back, or pass its notification on. */
void cwl_cancel(struct blitz_chan_waiter *w);

/* The slow halves of the notifies below, under the lock (waitlist.c). */
void cwl_wake_one(struct blitz_chan_waitlist *wl);
void cwl_wake_all(struct blitz_chan_waitlist *wl, uint32_t left);

/*
 * cwl_waiting - how many wait (0: nobody to wake): the notifier's half of
 * the handshake above.  seq_cst fence: orders the caller's publish before
 * the len load, against the owner's len store followed by its fence and
 * its retry.  Relaxed load: the fence does the ordering.
 */
static inline uint32_t cwl_waiting(struct blitz_chan_waitlist *wl)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(WL_U32(&wl->len), memory_order_relaxed);
}

/*
 * cwl_notify_one / cwl_notify_all - after publishing: wake the first waiter
 * (or every waiter).  Each begins with the fence of cwl_waiting and takes
 * the lock only when someone waits.  Inline: every successful channel
 * send and receive asks, and nobody waits in the common case.
 */
static inline void cwl_notify_one(struct blitz_chan_waitlist *wl)
{
	if (cwl_waiting(wl))
		cwl_wake_one(wl);
}

static inline void cwl_notify_all(struct blitz_chan_waitlist *wl)
{
	uint32_t left = cwl_waiting(wl);

	if (left)
		cwl_wake_all(wl, left);
}


#endif
