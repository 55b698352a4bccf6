/* SPDX-License-Identifier: MIT */
/* tools/events_log.h - one whole log into blitz-events (events_log.c). */
#ifndef BLITZ_TOOLS_EVENTS_LOG_H
#define BLITZ_TOOLS_EVENTS_LOG_H

#include <stdbool.h>
#include <linux/types.h>
#include "events.h"

struct state;

/*
 * consume_log - @h's log and its @n records @rec, from any transport:
 * written raw (-w) or analysed.  False if not taken (-p, leaving).
 */
bool consume_log(struct state *st, const struct blitz_event_log_head *h,
		 const struct blitz_event *rec, __u32 n);

#endif /* BLITZ_TOOLS_EVENTS_LOG_H */
