// SPDX-License-Identifier: MIT
/*
 * core/chan/channel.c - the bounded MPMC channel (docs/channels.md):
 * Dmitry Vyukov's bounded queue, a ring of slots each with a sequence number.
 *
 *   slot i starts with seq = 2i ("free for the send at position i").
 *   send at position t (tail):  the slot is free when seq == 2t; claim t by
 *       CAS tail t -> t+1, write the value, then seq = 2t+1 (release).
 *   recv at position h (head):  the slot holds message h when seq == 2h+1;
 *       claim h by CAS head h -> h+1, read the value, then
 *       seq = 2(h+capacity) (release): free for the next lap's send.
 *
 * Vyukov's original marks a full slot t+1, which is also "free for the
 * send at t+1" when the capacity is 1; doubling keeps the two apart for
 * every capacity (crossbeam does the same with a lap bit).
 *
 * Positions are 63-bit and never wrap in practice.  The top bit of tail is
 * the CLOSED mark (crossbeam's "mark bit"): close sets it with one fetch_or,
 * so every send either claimed its position before the close (and will be
 * received) or fails; a receiver that finds its slot empty reads tail, and
 * tail == head | CLOSED means closed and drained.
 *
 * The data path takes no lock.  Waiting senders and receivers sit on two
 * waiter lists (waitlist.c), each behind its own small lock; a successful
 * send wakes one receiver, a successful receive wakes one sender, a
 * waiter's success passes a wake on where a position is ready
 * (chan_pass_on), close wakes everyone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../fault.h"
#include "channel.h"
#include "waitlist.h"

#define CLOSED_BIT	(1ull << 63)
#define MAX_CAPACITY	(1ull << 31)
#define MAX_ELEM	(1ull << 20)

#define TAIL(ch) WL_U64(&(ch)->tail)
#define HEAD(ch) WL_U64(&(ch)->head)

static inline unsigned char *slot(const struct blitz_channel *ch, uint64_t pos)
{
	return ch->slots + (size_t)(pos & ch->mask) * ch->stride;
}

static inline _Atomic uint64_t *slot_seq(const struct blitz_channel *ch, uint64_t pos)
{
	return WL_U64(slot(ch, pos));
}

static size_t stride_of(size_t elem_size)
{
	return 8 + ((elem_size + 7) & ~(size_t)7);
}

static bool valid(size_t capacity, size_t elem_size)
{
	return capacity && capacity <= MAX_CAPACITY && !(capacity & (capacity - 1)) &&
	       elem_size && elem_size <= MAX_ELEM;
}

size_t blitz_channel_storage_size(size_t capacity, size_t elem_size)
{
	if (!valid(capacity, elem_size))
		return 0;
	return capacity * stride_of(elem_size);	/* < 2^31 * (2^20 + 16): fits */
}

int blitz_channel_init_storage(struct blitz_channel *ch, void *storage,
			       size_t capacity, size_t elem_size)
{
	if (!valid(capacity, elem_size) || !storage || ((uintptr_t)storage & 7))
		return -EINVAL;
	memset(ch, 0, sizeof(*ch));
	ch->slots = storage;
	ch->mask = capacity - 1;
	ch->elem_size = (uint32_t)elem_size;
	ch->stride = (uint32_t)stride_of(elem_size);
	for (uint64_t i = 0; i < capacity; i++)
		atomic_init(slot_seq(ch, i), 2 * i);
	atomic_init(TAIL(ch), 0);
	atomic_init(HEAD(ch), 0);
	cwl_init(&ch->senders, false);
	cwl_init(&ch->receivers, false);
	return 0;
}

int blitz_channel_init(struct blitz_channel *ch, size_t capacity, size_t elem_size)
{
	size_t size = blitz_channel_storage_size(capacity, elem_size);
	void *buf;
	int err;

	if (!size)
		return -EINVAL;
	buf = fault_malloc(FAULT_BUF_ALLOC, size);	/* malloc's alignment (16) is enough */
	if (!buf)
		return -ENOMEM;
	err = blitz_channel_init_storage(ch, buf, capacity, elem_size);
	if (err) {
		free(buf);
		return err;
	}
	ch->owns_slots = 1;
	return 0;
}

void blitz_channel_destroy(struct blitz_channel *ch)
{
	if (ch->owns_slots)
		free(ch->slots);
	ch->slots = NULL;
	ch->owns_slots = 0;
}

/*
 * closed_seen - a send or receive found the closed mark: -EPIPE, after an
 * acquire load of tail that pairs with close's release, so what the closer
 * did before blitz_channel_close (its last receive from another channel,
 * its writes) happens before the caller's return.  Without it a task that
 * sees its input closed, finishes, and is joined could let the joiner free
 * a channel the closer still read (a chain of stages, as sched-bench's
 * pipeline tears down).  The mark is never cleared, so the load sees it.
 */
static int closed_seen(struct blitz_channel *ch)
{
	(void)atomic_load_explicit(TAIL(ch), memory_order_acquire);
	return -EPIPE;
}

int blitz_channel_try_send(struct blitz_channel *ch, const void *elem)
{
	/* Relaxed: only a starting guess; the slot's sequence decides. */
	uint64_t t = atomic_load_explicit(TAIL(ch), memory_order_relaxed);

	for (;;) {
		_Atomic uint64_t *seq;
		int64_t diff;

		if (t & CLOSED_BIT)
			return closed_seen(ch);
		seq = slot_seq(ch, t);
		/*
		 * Acquire: pairs with the release store of the receiver that
		 * emptied this slot one lap ago, so its read of the old value
		 * happens before our write of the new one.
		 */
		diff = (int64_t)(atomic_load_explicit(seq, memory_order_acquire) - 2 * t);
		if (diff == 0) {
			/*
			 * Relaxed: the CAS only decides which sender owns
			 * position t (the slot's sequence carries the data
			 * ordering).  It fails if close marked tail meanwhile:
			 * the value would differ.
			 */
			if (atomic_compare_exchange_weak_explicit(TAIL(ch), &t, t + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				memcpy(slot(ch, t) + 8, elem, ch->elem_size);
				/* Release: the receiver's acquire load sees the value. */
				atomic_store_explicit(seq, 2 * t + 1, memory_order_release);
				cwl_notify_one(&ch->receivers);
				return 0;
			}
		} else if (diff < 0) {
			/*
			 * The slot still holds the value of one lap ago: full
			 * (or its receiver has not finished reading).  Unless
			 * tail moved or was closed meanwhile, report full.
			 */
			/* Relaxed: only compared; the next slot load orders the data. */
			uint64_t t2 = atomic_load_explicit(TAIL(ch), memory_order_relaxed);

			if (t2 == t)
				return -EAGAIN;
			t = t2;
		} else {
			/* Another sender took t: catch up (relaxed: a guess, as above). */
			t = atomic_load_explicit(TAIL(ch), memory_order_relaxed);
		}
	}
}

int blitz_channel_try_recv(struct blitz_channel *ch, void *elem)
{
	/* Relaxed: only a starting guess; the slot's sequence decides. */
	uint64_t h = atomic_load_explicit(HEAD(ch), memory_order_relaxed);

	for (;;) {
		_Atomic uint64_t *seq = slot_seq(ch, h);
		/* Acquire: pairs with the sender's release store: the value is visible. */
		int64_t diff = (int64_t)(atomic_load_explicit(seq, memory_order_acquire) - (2 * h + 1));

		if (diff == 0) {
			/* Relaxed: the CAS only decides which receiver owns h. */
			if (atomic_compare_exchange_weak_explicit(HEAD(ch), &h, h + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				memcpy(elem, slot(ch, h) + 8, ch->elem_size);
				/*
				 * Release: our read of the value happens before
				 * the next lap's sender (its acquire load) writes.
				 */
				atomic_store_explicit(seq, 2 * (h + ch->mask + 1), memory_order_release);
				cwl_notify_one(&ch->senders);
				return 0;
			}
		} else if (diff < 0) {
			/*
			 * Nothing published at h: empty, or a sender between
			 * its CAS and its publish.  tail tells them apart.
			 * Relaxed: tail's modification order is enough: tail
			 * reads h | CLOSED only if close marked it before any
			 * sender claimed h, and then none ever will.
			 */
			uint64_t t = atomic_load_explicit(TAIL(ch), memory_order_relaxed);
			uint64_t h2;

			if ((t & ~CLOSED_BIT) == h)
				return (t & CLOSED_BIT) ? closed_seen(ch) : -EAGAIN;
			h2 = atomic_load_explicit(HEAD(ch), memory_order_relaxed);	/* a guess */
			if (h2 == h)
				return -EAGAIN;	/* a send in progress (see chan_pass_on) */
			h = h2;
		} else {
			/* Another receiver took h: catch up (relaxed: a guess). */
			h = atomic_load_explicit(HEAD(ch), memory_order_relaxed);
		}
	}
}

/*
 * chan_pass_on - a waiter's send (receive) succeeded and its own node is
 * off the list (cwl_finish; while queued at the head it would take the
 * wake itself): if others wait on the same side and the position at the
 * tail (head) is ready for them, wake one of them.
 *
 * A waiter woken for position p can find an earlier position still held
 * by a sender between its claim and its publish ("a send in progress" in
 * try_recv; a receive not yet done, in try_send) and queue again at the
 * front: its wake is spent, and the value (free slot) it was for would
 * wait beside queued waiters until the next send (receive) or close.  The
 * earlier position's own notification then wakes a waiter, which takes
 * it and wakes the next while a position is ready, and so on: a run of
 * ready positions behind a slow claimant is handed out one waiter after
 * another.  The test is at the current head (tail), not at the position
 * after ours: a try_ caller, which does not pass wakes on, may have taken
 * that one meanwhile, with more ready behind it.  With nobody waiting this
 * costs one load; a wake that was not needed costs its waiter a failed
 * try.
 */
void chan_pass_on(struct blitz_channel *ch, bool send)
{
	struct blitz_chan_waitlist *wl = send ? &ch->senders : &ch->receivers;
	_Atomic uint64_t *seq;
	uint64_t pos, ready;

	/*
	 * Relaxed: a waiter queued again before our take is seen here
	 * because our try_ ran a seq_cst fence after its claim (the other
	 * side's cwl_notify_one), after which this load comes.
	 */
	if (!atomic_load_explicit(WL_U32(&wl->len), memory_order_relaxed))
		return;
	/*
	 * seq_cst fence, then the loads: against the publisher of the
	 * position we test, whose notification begins with a seq_cst fence
	 * after its release store.  Either its fence comes first and we see
	 * the position ready, or ours does and its notification, after our
	 * look, wakes a waiter itself.  Relaxed head/tail: the slot's
	 * sequence decides; acquire on it pairs with the release that readied
	 * the slot, as the woken waiter's own try does again.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	if (send) {
		pos = atomic_load_explicit(TAIL(ch), memory_order_relaxed);
		if (pos & CLOSED_BIT)
			return;		/* close woke every sender */
		ready = 2 * pos;
	} else {
		pos = atomic_load_explicit(HEAD(ch), memory_order_relaxed);
		ready = 2 * pos + 1;
	}
	seq = slot_seq(ch, pos);
	if (atomic_load_explicit(seq, memory_order_acquire) == ready)
		cwl_notify_one(wl);
}

/*
 * chan_wait - the waiting half of send_poll and recv_poll: try, queue the
 * node, try again (waitlist.h has why the second try closes the race).
 */
static enum blitz_poll chan_wait(struct blitz_channel *ch, struct blitz_chan_waiter *w,
				 struct blitz_cx *cx, bool send, void *buf, int *err)
{
	struct blitz_chan_waitlist *wl = send ? &ch->senders : &ch->receivers;
	bool woken;
	int r;

	for (int attempt = 0; attempt < 2; attempt++) {
		r = send ? blitz_channel_try_send(ch, buf) : blitz_channel_try_recv(ch, buf);
		if (r != -EAGAIN) {
			cwl_finish(w);
			if (!r)
				chan_pass_on(ch, send);
			*err = r;
			return BLITZ_READY;
		}
		if (attempt)
			break;
		if (cwl_still_queued(w, &woken))
			return BLITZ_PENDING;	/* a notification is still to come */
		cwl_register(wl, w, cx, send ? SYNC_CHAN_SEND : SYNC_CHAN_RECV, ch, woken, true);
	}
	return BLITZ_PENDING;
}

enum blitz_poll blitz_channel_send_poll(struct blitz_channel *ch, struct blitz_chan_waiter *w,
					struct blitz_cx *cx, const void *elem, int *err)
{
	return chan_wait(ch, w, cx, true, (void *)elem, err);
}

enum blitz_poll blitz_channel_recv_poll(struct blitz_channel *ch, struct blitz_chan_waiter *w,
					struct blitz_cx *cx, void *elem, int *err)
{
	return chan_wait(ch, w, cx, false, elem, err);
}

void blitz_channel_close(struct blitz_channel *ch)
{
	/*
	 * The mark is ordered against waiters by the seq_cst fence that
	 * begins cwl_notify_all (a waiter either is counted there, or its
	 * retry sees the mark).  Release: pairs with closed_seen's acquire,
	 * so the closer's earlier work happens before any -EPIPE return;
	 * acquire costs nothing more on a read-modify-write.
	 */
	uint64_t prev = atomic_fetch_or_explicit(TAIL(ch), CLOSED_BIT, memory_order_acq_rel);

	if (prev & CLOSED_BIT)
		return;
	cwl_notify_all(&ch->senders);
	cwl_notify_all(&ch->receivers);
}

bool blitz_channel_is_closed(const struct blitz_channel *ch)
{
	/* Acquire: a true answer orders like -EPIPE does (closed_seen). */
	return atomic_load_explicit(TAIL(ch), memory_order_acquire) & CLOSED_BIT;
}

size_t blitz_channel_len(const struct blitz_channel *ch)
{
	/* Relaxed: a snapshot; head is read first so that tail >= head mostly holds. */
	uint64_t h = atomic_load_explicit(HEAD(ch), memory_order_relaxed);
	uint64_t t = atomic_load_explicit(TAIL(ch), memory_order_relaxed) & ~CLOSED_BIT;

	return t > h ? (size_t)(t - h) : 0;
}

size_t blitz_channel_capacity(const struct blitz_channel *ch)
{
	return (size_t)ch->mask + 1;
}
