// SPDX-License-Identifier: MIT
/*
 * core/chan/oneshot.c - the single-value channel (docs/channels.md).
 *
 * States: EMPTY, RECEIVER_WAITING, VALUE_SENT, CLOSED (blitz/oneshot.h's four) and
 * SENDING, a transient state in which the sender owns the waker slot.
 *
 * Who may touch ch->waker:
 *  - the receiver, while the state is EMPTY (it writes its waker, then
 *    publishes it with the CAS EMPTY -> RECEIVER_WAITING), and when it
 *    takes the waker back with the CAS RECEIVER_WAITING -> EMPTY;
 *  - the sender, after its CAS RECEIVER_WAITING -> SENDING: from then on
 *    the receiver cannot take the waker back, so reading it is safe (a
 *    plain "copy, then CAS RECEIVER_WAITING -> VALUE_SENT" would be an ABA:
 *    the receiver may take back and re-register in between, and the stale
 *    copy would be woken after its reference was dropped).
 * After VALUE_SENT or CLOSED is stored the sender touches only its copy of
 * the waker, so the receiver may free the channel as soon as it sees them.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <blitz/oneshot.h>

enum {
	ONESHOT_EMPTY = 0,
	ONESHOT_VALUE_SENT = 1,
	ONESHOT_RECEIVER_WAITING = 2,
	ONESHOT_CLOSED = 3,
	ONESHOT_SENDING = 4,
};

#define STATE(ch) ((_Atomic uint32_t *)&(ch)->state)

void blitz_oneshot_init(struct blitz_oneshot *ch)
{
	atomic_init(STATE(ch), ONESHOT_EMPTY);
	ch->value = 0;
	ch->waker.data = NULL;
	ch->waker.vtable = NULL;
}

/* finish - move to @to (VALUE_SENT or CLOSED); -EPIPE if already finished. */
static int finish(struct blitz_oneshot *ch, uint32_t to)
{
	/* Acquire (relaxed would do): a first guess; each CAS acquires what it needs. */
	uint32_t s = atomic_load_explicit(STATE(ch), memory_order_acquire);

	for (;;) {
		struct blitz_waker w;

		if (s == ONESHOT_CLOSED || s == ONESHOT_VALUE_SENT || s == ONESHOT_SENDING)
			return -EPIPE;
		if (s == ONESHOT_EMPTY) {
			/* acq_rel: publishes the value to the receiver's acquire load. */
			if (atomic_compare_exchange_weak_explicit(STATE(ch), &s, to,
								  memory_order_acq_rel,
								  memory_order_acquire))
				return 0;
			continue;
		}
		/* RECEIVER_WAITING: claim the waker slot first (acquire: see the waker). */
		if (!atomic_compare_exchange_weak_explicit(STATE(ch), &s, ONESHOT_SENDING,
							   memory_order_acq_rel,
							   memory_order_acquire))
			continue;
		w = ch->waker;
		/* Release: the value (written before) and our last touch of ch. */
		atomic_store_explicit(STATE(ch), to, memory_order_release);
		blitz_waker_wake(&w);
		return 0;
	}
}

int blitz_oneshot_send(struct blitz_oneshot *ch, uint64_t value)
{
	/* Acquire (relaxed would do): an early -EPIPE; finish() decides with a CAS. */
	uint32_t s = atomic_load_explicit(STATE(ch), memory_order_acquire);

	if (s == ONESHOT_CLOSED || s == ONESHOT_VALUE_SENT || s == ONESHOT_SENDING)
		return -EPIPE;
	ch->value = value;	/* published by finish()'s release */
	return finish(ch, ONESHOT_VALUE_SENT);
}

void blitz_oneshot_close(struct blitz_oneshot *ch)
{
	finish(ch, ONESHOT_CLOSED);
}

/*
 * take_back - the receiver withdraws its registered waker.  Returns false
 * if the sender got there first (the state is or becomes final).
 */
static bool take_back(struct blitz_oneshot *ch)
{
	uint32_t s = ONESHOT_RECEIVER_WAITING;

	/*
	 * acq_rel (relaxed would do: RECEIVER_WAITING is only ever our own
	 * store): a success beats finish()'s claim, so the waker is ours again.
	 */
	if (atomic_compare_exchange_strong_explicit(STATE(ch), &s, ONESHOT_EMPTY,
						    memory_order_acq_rel,
						    memory_order_acquire)) {
		blitz_waker_drop(&ch->waker);
		return true;
	}
	/*
	 * SENDING is brief (a copy and a store): wait it out.  Acquire: pairs
	 * with finish()'s release store, after which the sender leaves ch alone.
	 */
	while (atomic_load_explicit(STATE(ch), memory_order_acquire) == ONESHOT_SENDING)
		sched_yield();
	return false;
}

/* try_take - the result if the sender finished: READY, else PENDING. */
static enum blitz_poll try_take(struct blitz_oneshot *ch, uint32_t s, uint64_t *out, int *err)
{
	if (s == ONESHOT_VALUE_SENT) {
		*out = ch->value;
		*err = 0;
		return BLITZ_READY;
	}
	if (s == ONESHOT_CLOSED) {
		*err = -EPIPE;
		return BLITZ_READY;
	}
	return BLITZ_PENDING;
}

enum blitz_poll blitz_oneshot_try_recv(struct blitz_oneshot *ch, uint64_t *out, int *err)
{
	uint32_t s;

	/* Acquire: see the value written before VALUE_SENT. */
	while ((s = atomic_load_explicit(STATE(ch), memory_order_acquire)) == ONESHOT_SENDING)
		sched_yield();
	return try_take(ch, s, out, err);
}

enum blitz_poll blitz_oneshot_recv_poll(struct blitz_oneshot *ch, struct blitz_cx *cx,
					uint64_t *out, int *err)
{
	struct blitz_waker mine;
	uint32_t s;

	for (;;) {
		/* Acquire: pairs with finish()'s release (store or CAS): see the value. */
		s = atomic_load_explicit(STATE(ch), memory_order_acquire);
		if (s == ONESHOT_SENDING) {
			sched_yield();
			continue;
		}
		if (try_take(ch, s, out, err) == BLITZ_READY)
			return BLITZ_READY;
		if (s == ONESHOT_EMPTY)
			break;
		/* RECEIVER_WAITING: ours already?  Else swap it for ours. */
		mine = blitz_cx_waker(cx);
		if (blitz_waker_will_wake(&ch->waker, &mine)) {
			blitz_waker_drop(&mine);
			return BLITZ_PENDING;
		}
		blitz_waker_drop(&mine);
		take_back(ch);
	}
	ch->waker = blitz_cx_waker(cx);
	s = ONESHOT_EMPTY;
	/* acq_rel: publishes the waker to the sender's claim. */
	if (atomic_compare_exchange_strong_explicit(STATE(ch), &s, ONESHOT_RECEIVER_WAITING,
						    memory_order_acq_rel,
						    memory_order_acquire))
		return BLITZ_PENDING;
	/* The sender finished first: drop our waker and read the result. */
	blitz_waker_drop(&ch->waker);
	return blitz_oneshot_recv_poll(ch, cx, out, err);
}

void blitz_oneshot_recv_cancel(struct blitz_oneshot *ch)
{
	take_back(ch);
}
