/* SPDX-License-Identifier: MIT */
/* tools/events.h - types shared by events.bpf.c and events.c. */
#ifndef BLITZ_TOOLS_EVENTS_H
#define BLITZ_TOOLS_EVENTS_H

#include "hist.h"
#include "../include/blitz/trace/events.h"

/* Records per ring-buffer entry: one bpf_probe_read_user of 4 KiB. */
#define EVENTS_CHUNK		128
#define EVENTS_CHUNKS		(BLITZ_EVENT_LOG_RECORDS / EVENTS_CHUNK)
/*
 * 2M records: the logs that still come through event_flush (the threads
 * that are not workers: spawn_many_remote's spawning thread logs at full
 * rate) for a second, if the user side stalls.
 */
#define EVENTS_RINGBUF_BYTES	(64 << 20)
/* The announcements of the workers' rings: a few per worker a second. */
#define EVENTS_NOTES_BYTES	(256 << 10)
/* Threads whose lost records wait to be told (events_loss). */
#define EVENTS_LOSS_THREADS	4096

/* Part of one flush, as the ring buffer carries it to user space. */
struct events_chunk {
	__u32 tgid;
	__u32 first;		/* the index of rec[0] in the worker's log */
	__u32 count;		/* valid records in rec */
	__u32 last;		/* 1: the flush's last chunk */
	__u32 total;		/* the flush's records */
	__u32 pad;
	/*
	 * Records of this thread that found the ring buffer full since its
	 * previous chunk that got through, and the ticks of the first and
	 * last of them: they come before rec[0].
	 */
	__u64 lost, lost_from, lost_to;
	struct blitz_event_log_head head;
	struct blitz_event rec[EVENTS_CHUNK];
};

/* A hit of event_ring: a worker's ring, for the user side to map. */
struct events_note {
	__u32 tgid;
	__s32 worker;
	__u64 runtime;
	__s32 fd;		/* in the process: /proc/TGID/fd/FD */
	__u32 pad;
	__u64 bytes;		/* the mapping's length */
};

/*
 * A thread's records lost in the ring buffer and not yet told (keyed by
 * thread id): the next of its chunks that gets through carries them; the
 * user side reads those left at its end.
 */
struct events_loss {
	__u32 tgid;
	__s32 worker;
	__u64 runtime;
	__u64 ticks_mult;
	__u64 seq;		/* the flush of the last of them */
	__u64 records, from, to;
};

#endif
