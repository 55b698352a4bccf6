/* SPDX-License-Identifier: MIT */
/*
 * tools/events_chunks.h - the logs of event_flush, brought in chunks by
 * the ring buffer (events_chunks.c).
 */
#ifndef BLITZ_TOOLS_EVENTS_CHUNKS_H
#define BLITZ_TOOLS_EVENTS_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "events.h"

struct pending;
struct state;

/* The most entries the ring buffers hold: a take of as many empties them (tool_ring_take). */
#define RING_CHUNKS	(EVENTS_RINGBUF_BYTES / sizeof(struct events_chunk) + \
			 EVENTS_NOTES_BYTES / sizeof(struct events_note))

/* pending_out - @p's records as a log (@whole: the flush's end), @p freed. */
void pending_out(struct state *st, struct pending *p, bool whole);
/* on_chunk - the ring buffer's callback for the chunks map. */
int on_chunk(void *ctx, void *data, size_t size);
/* take_all - what both ring buffers hold, taken. */
void take_all(struct state *st);
/* losses_drain - the losses not yet told, of process @tgid (0: all), as logs. */
void losses_drain(struct state *st, __u32 tgid);

#endif /* BLITZ_TOOLS_EVENTS_CHUNKS_H */
