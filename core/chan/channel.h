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
 * chan_pass_on - after a waiter's successful send (@send) or receive, once
 * its node is off the list (cwl_finish): wake the next waiter on that side
 * if a position is ready for it (channel.c: a woken waiter can spend its
 * wake on a position it could not take yet).
 */
void chan_pass_on(struct blitz_channel *ch, bool send);

#endif
