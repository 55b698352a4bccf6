/* SPDX-License-Identifier: MIT */
/* tools/events.h - types shared by events.bpf.c and events.c. */
#ifndef BLITZ_TOOLS_EVENTS_H
#define BLITZ_TOOLS_EVENTS_H

#include "hist.h"
#include "../include/blitz/events.h"

/* Records per ring-buffer entry: one bpf_probe_read_user of 4 KiB. */
#define EVENTS_CHUNK		128
#define EVENTS_CHUNKS		(BLITZ_EVENT_LOG_RECORDS / EVENTS_CHUNK)
/* 2M records: a second of the busiest benchmark's records, if the user side stalls. */
#define EVENTS_RINGBUF_BYTES	(64 << 20)

/* Part of one flush, as the ring buffer carries it to user space. */
struct events_chunk {
	__u32 tgid;
	__u32 first;		/* the index of rec[0] in the worker's log */
	__u32 count;		/* valid records in rec */
	__u32 last;		/* 1: the flush's last chunk */
	struct blitz_event_log_head head;
	struct blitz_event rec[EVENTS_CHUNK];
};

#endif
