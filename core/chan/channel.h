/* SPDX-License-Identifier: MIT */
/*
 * core/chan/channel.h - what the combinators need of the MPMC channel
 * beyond include/blitz/channel.h.
 */
#ifndef BLITZ_CORE_CHAN_CHANNEL_H
#define BLITZ_CORE_CHAN_CHANNEL_H

#include <stdbool.h>
#include <blitz/channel.h>

/*
 * chan_try_as_waiter - a waiting task's try (recv_poll, send_poll, a
 * select's channel branch): try_send (@send) or try_recv of @buf, and on
 * success pass a wake on to the next waiter if the next position is
 * already ready (channel.c, pass_on: a woken waiter can spend its wake on
 * a position it could not take yet).  Returns what the try_ form returns.
 */
int chan_try_as_waiter(struct blitz_channel *ch, bool send, void *buf);

#endif
