/* SPDX-License-Identifier: MIT */
/*
 * blitz/oneshot.h - single-value channel with a 4-state machine:
 * EMPTY -> VALUE_SENT, EMPTY -> RECEIVER_WAITING -> VALUE_SENT,
 * EMPTY|RECEIVER_WAITING -> CLOSED (and a brief SENDING while the sender
 * takes the receiver's waker; core/chan/oneshot.c).
 *
 * The channel is a value the user places (usually in the receiving task's
 * state); no allocation.  One sender, one receiver.  After a successful
 * send the sender does not touch the channel again, so the receiver may
 * free it as soon as blitz_oneshot_recv_poll() returns BLITZ_READY.
 */
#ifndef BLITZ_ONESHOT_H
#define BLITZ_ONESHOT_H

#include <stdint.h>
#include <blitz/task.h>

struct blitz_oneshot {
	uint32_t state;			/* enum in core/chan/oneshot.c; atomic */
	uint64_t value;
	struct blitz_waker waker;	/* the receiver's, while RECEIVER_WAITING */
};

void blitz_oneshot_init(struct blitz_oneshot *ch);

/** blitz_oneshot_send - deliver @value; -EPIPE if the channel was closed or already sent on. */
int blitz_oneshot_send(struct blitz_oneshot *ch, uint64_t value);

/** blitz_oneshot_close - the sender gives up: the receiver sees -EPIPE. */
void blitz_oneshot_close(struct blitz_oneshot *ch);

/**
 * blitz_oneshot_recv_poll - receive from a task.
 * @out: the value; @err: 0, or -EPIPE if the sender closed without sending.
 */
enum blitz_poll blitz_oneshot_recv_poll(struct blitz_oneshot *ch,
					struct blitz_cx *cx,
					uint64_t *out, int *err);

/** blitz_oneshot_try_recv - receive without waiting, from any thread. */
enum blitz_poll blitz_oneshot_try_recv(struct blitz_oneshot *ch, uint64_t *out, int *err);

/**
 * blitz_oneshot_recv_cancel - the receiver stops waiting: its waker is taken
 * back (for a drop function, or a select that won elsewhere).  A value sent
 * meanwhile stays in the channel.
 */
void blitz_oneshot_recv_cancel(struct blitz_oneshot *ch);

#endif /* BLITZ_ONESHOT_H */
