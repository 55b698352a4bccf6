/* SPDX-License-Identifier: MIT */
/*
 * tools/events_pack.h - a log's records in the packed encoding of a trace
 * file (<blitz/trace/events.h>, "A trace file"), and back (events_pack.c).
 */
#ifndef BLITZ_TOOLS_EVENTS_PACK_H
#define BLITZ_TOOLS_EVENTS_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "events.h"

/* events_pack - @n records into @out (room for n * BLITZ_EVENT_PACKED_MAX); its bytes. */
size_t events_pack(const struct blitz_event *rec, __u32 n, unsigned char *out);
/*
 * events_unpack - the @bytes at @in as exactly @n records into @rec; false
 * if they are not (a varint past the end, bytes left over).
 */
bool events_unpack(const unsigned char *in, size_t bytes, struct blitz_event *rec, __u32 n);

#endif /* BLITZ_TOOLS_EVENTS_PACK_H */
