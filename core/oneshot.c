// SPDX-License-Identifier: MIT
/*
 * core/oneshot.c - the single-value channel (seed 001, "Oneshot").
 *
 * The receiver writes its waker only while the state is EMPTY and then
 * publishes it with the CAS EMPTY -> RECEIVER_WAITING; from then on only the
 * sender reads it, and it takes it with the CAS RECEIVER_WAITING ->
 * VALUE_SENT (or CLOSED).  After that CAS the sender touches only its local
 * copy of the waker, so the receiver may free the channel as soon as it sees
 * VALUE_SENT.
 */
#include <errno.h>
#include <stdatomic.h>
#include <blitz/oneshot.h>

enum {
	ONESHOT_EMPTY = 0,
	ONESHOT_VALUE_SENT = 1,
	ONESHOT_RECEIVER_WAITING = 2,
	ONESHOT_CLOSED = 3,
};

#define STATE(ch) ((_Atomic uint32_t *)&(ch)->state)

void blitz_oneshot_init(struct blitz_oneshot *ch)
{
	atomic_init(STATE(ch), ONESHOT_EMPTY);
	ch->value = 0;
	ch->waker.data = NULL;
	ch->waker.vtable = NULL;
}

/* finish - move to @to (VALUE_SENT or CLOSED); -EPIPE if already closed. */
static int finish(struct blitz_oneshot *ch, uint32_t to)
{
	uint32_t s = atomic_load_explicit(STATE(ch), memory_order_acquire);

	for (;;) {
		struct blitz_waker w = { 0 };

		if (s == ONESHOT_CLOSED || s == ONESHOT_VALUE_SENT)
			return -EPIPE;
		if (s == ONESHOT_RECEIVER_WAITING)
			w = ch->waker;	/* stable while RECEIVER_WAITING */
		/* acq_rel: publishes the value; acquires the receiver's waker. */
		if (atomic_compare_exchange_weak_explicit(STATE(ch), &s, to,
							  memory_order_acq_rel,
							  memory_order_acquire)) {
			blitz_waker_wake(&w);
			return 0;
		}
	}
}

int blitz_oneshot_send(struct blitz_oneshot *ch, uint64_t value)
{
	uint32_t s = atomic_load_explicit(STATE(ch), memory_order_acquire);

	if (s == ONESHOT_CLOSED || s == ONESHOT_VALUE_SENT)
		return -EPIPE;
	ch->value = value;	/* published by finish()'s CAS */
	return finish(ch, ONESHOT_VALUE_SENT);
}

void blitz_oneshot_close(struct blitz_oneshot *ch)
{
	finish(ch, ONESHOT_CLOSED);
}

enum blitz_poll blitz_oneshot_recv_poll(struct blitz_oneshot *ch, struct blitz_cx *cx,
					uint64_t *out, int *err)
{
	/* Acquire: see the value written before VALUE_SENT. */
	uint32_t s = atomic_load_explicit(STATE(ch), memory_order_acquire);

	switch (s) {
	case ONESHOT_VALUE_SENT:
		*out = ch->value;
		*err = 0;
		return BLITZ_READY;
	case ONESHOT_CLOSED:
		*err = -EPIPE;
		return BLITZ_READY;
	case ONESHOT_RECEIVER_WAITING:
		return BLITZ_PENDING;	/* our waker is registered already */
	}
	ch->waker = blitz_cx_waker(cx);
	if (atomic_compare_exchange_strong_explicit(STATE(ch), &s, ONESHOT_RECEIVER_WAITING,
						    memory_order_acq_rel,
						    memory_order_acquire))
		return BLITZ_PENDING;
	/* The sender finished first: take our waker back and read the result. */
	blitz_waker_drop(&ch->waker);
	return blitz_oneshot_recv_poll(ch, cx, out, err);
}
