/* SPDX-License-Identifier: MIT */
/* tools/events_trace.h - the trace file: written (-w), read (--read) (events_trace.c). */
#ifndef BLITZ_TOOLS_EVENTS_TRACE_H
#define BLITZ_TOOLS_EVENTS_TRACE_H

#include <linux/types.h>
#include "events.h"

struct state;

/* trace_open - write_path created and its file head written (st->out). */
void trace_open(struct state *st);
/* trace_put - a log of @n records into the file. */
void trace_put(struct state *st, const struct blitz_event_log_head *h,
	       const struct blitz_event *rec, __u32 n);
/* trace_flush - what was written reaches the file (no-op if none is open). */
void trace_flush(struct state *st);
/* trace_close - the file flushed and closed (no-op if none is open). */
void trace_close(struct state *st);
/* read_main - --read FILE: its logs taken, then the one print. */
int read_main(struct state *st);

#endif /* BLITZ_TOOLS_EVENTS_TRACE_H */
