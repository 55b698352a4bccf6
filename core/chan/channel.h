/* SPDX-License-Identifier: MIT */
/*
 * core/chan/channel.h - what the combinators need of the MPMC channel
 * beyond include/blitz/channel.h.
 */
#ifndef BLITZ_CORE_CHAN_CHANNEL_H
#define BLITZ_CORE_CHAN_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <blitz/channel.h>

/*
 * chan_try_at - a waiting task's try (recv_poll, send_poll, a select's
 * channel branch): try_send (@send) or try_recv of @buf; on success *@pos
 * is the position taken.  Returns what the try_ form returns.
 */
int chan_try_at(struct blitz_channel *ch, bool send, void *buf, uint64_t *pos);

/*
 * chan_pass_on - after a waiter's successful try at @pos, once its node
 * is off the list (cwl_finish): wake the next waiter if the next position
 * is already ready (channel.c, pass_on: a woken waiter can spend its wake
 * on a position it could not take yet).
 */
void chan_pass_on(struct blitz_channel *ch, bool send, uint64_t pos);

#endif
