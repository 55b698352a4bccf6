// SPDX-License-Identifier: MIT
/*
 * core/chan/broadcast.c - the broadcast channel (docs/channels.md):
 * a ring that every receiver reads at its own position; senders never wait.
 *
 * Senders are serialised by a small lock (send_lock: a slot write and two
 * stores); receivers never take it.  Message p lives in slot p & mask, and
 * the slot's sequence word is a seqlock over it:
 *
 *   seq == 2p + 1   message p is being written
 *   seq == 2p + 2   message p is complete
 *
 * A receiver at position pos reads tail (how far the senders got), reads
 * seq, copies the value, and reads seq again: the copy is message pos only
 * if both reads gave 2pos + 2.  Otherwise a sender lapped it: message pos
 * (and maybe more) was overwritten, and the receiver skips to the oldest
 * message still retained, reporting -EOVERFLOW and exactly how many it
 * skipped.  Every position is thus either received or counted as missed.
 *
 * The value is copied in relaxed atomic 64-bit words (words.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../fault.h"
#include "../spinlock.h"
#include "waitlist.h"
#include "words.h"

#define MAX_CAPACITY	(1ull << 31)
#define MAX_ELEM	(1ull << 20)

#define TAIL(bc) WL_U64(&(bc)->tail)

/* slot_seq - slot pos's sequence word; the value's words follow it (seq + 1). */
static inline _Atomic uint64_t *slot_seq(const struct blitz_broadcast *bc, uint64_t pos)
{
	return WL_U64(bc->slots + (size_t)(pos & bc->mask) * bc->stride);
}

static size_t stride_of(size_t elem_size)
{
	return 8 + words_size(elem_size);
}

static bool valid(size_t capacity, size_t elem_size)
{
	return capacity && capacity <= MAX_CAPACITY && !(capacity & (capacity - 1)) &&
	       elem_size && elem_size <= MAX_ELEM;
}

size_t blitz_broadcast_storage_size(size_t capacity, size_t elem_size)
{
	return valid(capacity, elem_size) ? capacity * stride_of(elem_size) : 0;
}

int blitz_broadcast_init_storage(struct blitz_broadcast *bc, void *storage,
				 size_t capacity, size_t elem_size)
{
	if (!valid(capacity, elem_size) || !storage || ((uintptr_t)storage & 7))
		return -EINVAL;
	memset(bc, 0, sizeof(*bc));
	bc->slots = storage;
	bc->mask = capacity - 1;
	bc->elem_size = (uint32_t)elem_size;
	bc->stride = (uint32_t)stride_of(elem_size);
	memset(storage, 0, capacity * bc->stride);	/* seq 0: no message yet */
	atomic_init(TAIL(bc), 0);
	atomic_init(WL_U32(&bc->send_lock), 0);
	atomic_init(WL_U32(&bc->closed), 0);
	atomic_init(WL_U32(&bc->nreceivers), 0);
	cwl_init(&bc->receivers, true);
	return 0;
}

int blitz_broadcast_init(struct blitz_broadcast *bc, size_t capacity, size_t elem_size)
{
	size_t size = blitz_broadcast_storage_size(capacity, elem_size);
	void *buf;

	if (!size)
		return -EINVAL;
	buf = fault_malloc(FAULT_BUF_ALLOC, size);
	if (!buf)
		return -ENOMEM;
	blitz_broadcast_init_storage(bc, buf, capacity, elem_size);
	bc->owns_slots = 1;
	return 0;
}

void blitz_broadcast_destroy(struct blitz_broadcast *bc)
{
	if (bc->owns_slots)
		free(bc->slots);
	bc->slots = NULL;
	bc->owns_slots = 0;
}

static __attribute__((noinline)) void send_lock_slow(struct blitz_broadcast *bc)
{
	unsigned spins = 0;

	do {
		/* Relaxed: only waits for the holder's release; the exchange acquires. */
		while (atomic_load_explicit(WL_U32(&bc->send_lock), memory_order_relaxed))
			spin_backoff(&spins);
		/* Acquire: as in send_lock. */
	} while (atomic_exchange_explicit(WL_U32(&bc->send_lock), 1, memory_order_acquire));
}

/* send_lock - one exchange inline; the wait, which a lone sender never has, apart. */
static inline void send_lock(struct blitz_broadcast *bc)
{
	/* Acquire: we see the previous sender's tail and slot writes. */
	if (atomic_exchange_explicit(WL_U32(&bc->send_lock), 1, memory_order_acquire))
		send_lock_slow(bc);
}

static void send_unlock(struct blitz_broadcast *bc)
{
	/* Release: the next sender sees ours. */
	atomic_store_explicit(WL_U32(&bc->send_lock), 0, memory_order_release);
}

int blitz_broadcast_send(struct blitz_broadcast *bc, const void *elem)
{
	_Atomic uint64_t *seq;
	uint64_t p;

	send_lock(bc);
	/* Relaxed: closed is written under send_lock, which orders it for us. */
	if (atomic_load_explicit(WL_U32(&bc->closed), memory_order_relaxed)) {
		send_unlock(bc);
		return -EPIPE;
	}
	/* Relaxed: only senders write tail, under the lock. */
	p = atomic_load_explicit(TAIL(bc), memory_order_relaxed);
	seq = slot_seq(bc, p);
	/*
	 * The seqlock write: odd first; the release fence keeps the value's
	 * word stores after it, so a reader whose copy saw any of them sees
	 * (after its acquire fence) at least this odd sequence.
	 */
	atomic_store_explicit(seq, 2 * p + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	words_store(seq + 1, elem, bc->elem_size);
	/* Release: a reader that loads 2p+2 with acquire sees the whole value. */
	atomic_store_explicit(seq, 2 * p + 2, memory_order_release);
	/* Release: a reader that sees tail > p sees seq >= 2p+2 for slot p. */
	atomic_store_explicit(TAIL(bc), p + 1, memory_order_release);
	send_unlock(bc);
	cwl_notify_all(&bc->receivers);
	return 0;
}

void blitz_broadcast_close(struct blitz_broadcast *bc)
{
	send_lock(bc);
	/*
	 * Release: a receiver that loads closed with acquire then sees the
	 * final tail (every send happened before, under the lock).
	 */
	atomic_store_explicit(WL_U32(&bc->closed), 1, memory_order_release);
	send_unlock(bc);
	cwl_notify_all(&bc->receivers);
}

void blitz_broadcast_subscribe(struct blitz_broadcast *bc, struct blitz_broadcast_rx *rx)
{
	rx->bc = bc;
	/* Acquire: start after the messages already complete. */
	rx->pos = atomic_load_explicit(TAIL(bc), memory_order_acquire);
	/* Relaxed: a count for information only. */
	atomic_fetch_add_explicit(WL_U32(&bc->nreceivers), 1, memory_order_relaxed);
}

void blitz_broadcast_unsubscribe(struct blitz_broadcast_rx *rx)
{
	if (!rx->bc)
		return;
	/* Relaxed: the count orders nothing. */
	atomic_fetch_sub_explicit(WL_U32(&rx->bc->nreceivers), 1, memory_order_relaxed);
	rx->bc = NULL;
}

unsigned blitz_broadcast_receivers(const struct blitz_broadcast *bc)
{
	return atomic_load_explicit(WL_U32(&bc->nreceivers), memory_order_relaxed);	/* a snapshot */
}

/*
 * lapped - slot pos holds sequence @s, not message pos's: a sender has
 * overwritten it with (or is writing) message q >= pos + capacity.  The
 * oldest message that can still be read is q - capacity + 1 (q replaced
 * q - capacity).  Skip there and report it.
 */
static __attribute__((noinline, cold)) int lapped(struct blitz_broadcast_rx *rx, uint64_t s,
						  uint64_t *missed)
{
	uint64_t q = (s - 1) / 2;	/* 2q+1 (writing) or 2q+2 (written) */
	uint64_t next = q - rx->bc->mask;

	*missed = next - rx->pos;
	rx->pos = next;
	return -EOVERFLOW;
}

/*
 * nothing_new - the receiver is at tail: -EAGAIN, or -EPIPE once closed.
 * Closed is read after tail here, so tail is read again: acquire on closed
 * pairs with close's release (under send_lock, after every send), so the
 * tail read after it is final, and a send between our first read and the
 * close is received, not lost behind -EPIPE.
 */
static __attribute__((noinline, cold)) int nothing_new(struct blitz_broadcast_rx *rx, void *elem,
							uint64_t *missed)
{
	struct blitz_broadcast *bc = rx->bc;

	if (!atomic_load_explicit(WL_U32(&bc->closed), memory_order_acquire))
		return -EAGAIN;
	/* Acquire: as in try_recv; after the acquire of closed, the final tail. */
	if (atomic_load_explicit(TAIL(bc), memory_order_acquire) != rx->pos)
		return blitz_broadcast_try_recv(rx, elem, missed);	/* sent before the close */
	return -EPIPE;
}

/* lapped_whole - a sender is more than a ring ahead: skip to t - capacity. */
static __attribute__((noinline, cold)) int lapped_whole(struct blitz_broadcast_rx *rx, uint64_t t,
							 uint64_t *missed)
{
	uint64_t oldest = t - (rx->bc->mask + 1);

	*missed = oldest - rx->pos;
	rx->pos = oldest;
	return -EOVERFLOW;
}

/*
 * The hot path is the lines below and a copy of one word; the rare
 * outcomes are out of line, where inline the registers for them were
 * saved on every call (callgrind over sync-bench's broadcast_send_recv4).
 */
int blitz_broadcast_try_recv(struct blitz_broadcast_rx *rx, void *elem, uint64_t *missed)
{
	struct blitz_broadcast *bc = rx->bc;
	uint64_t pos = rx->pos;
	/* Acquire: pairs with the sender's release store of tail. */
	uint64_t t = atomic_load_explicit(TAIL(bc), memory_order_acquire);
	_Atomic uint64_t *seq;
	uint64_t s1, s2;

	if (pos == t)
		return nothing_new(rx, elem, missed);
	if (t - pos > bc->mask + 1)
		return lapped_whole(rx, t, missed);
	seq = slot_seq(bc, pos);
	/* Acquire: pairs with the release store of 2pos+2: the copy sees the value. */
	s1 = atomic_load_explicit(seq, memory_order_acquire);
	if (s1 != 2 * pos + 2)
		return lapped(rx, s1, missed);	/* s1 > 2pos+2: tail > pos made it >= */
	words_load(elem, seq + 1, bc->elem_size);
	/*
	 * Acquire fence, then relaxed: if the copy read any word of a later
	 * message, the sequence reads odd or newer (see the sender's fence).
	 */
	atomic_thread_fence(memory_order_acquire);
	s2 = atomic_load_explicit(seq, memory_order_relaxed);
	if (s2 != s1)
		return lapped(rx, s2, missed);
	rx->pos = pos + 1;
	return 0;
}

enum blitz_poll blitz_broadcast_recv_poll(struct blitz_broadcast_rx *rx,
					  struct blitz_chan_waiter *w, struct blitz_cx *cx,
					  void *elem, uint64_t *missed, int *err)
{
	bool woken;
	int r;

	for (int attempt = 0; attempt < 2; attempt++) {
		r = blitz_broadcast_try_recv(rx, elem, missed);
		if (r != -EAGAIN) {
			cwl_finish(w);
			*err = r;
			return BLITZ_READY;
		}
		if (attempt || cwl_still_queued(w, &woken))
			return BLITZ_PENDING;
		cwl_register(&rx->bc->receivers, w, cx, SYNC_BROADCAST, rx->bc, false, true);
	}
	return BLITZ_PENDING;
}
