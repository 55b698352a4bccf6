/* SPDX-License-Identifier: MIT */
/*
 * core/trace/event_ring.h - the event log's ring transport: a worker's
 * logs in a memfd that a reader maps and reads in place (the layout and
 * the protocol are <blitz/trace/events.h>, struct blitz_event_ring; docs/probes.md,
 * "The event log").  A log is committed with a few stores instead of a
 * probe's trap, and a reader that keeps up costs the worker nothing more.
 *
 * A worker uses its ring while a tracer holds event_ring's semaphore or
 * the flight recorder is on (BLITZ_FLIGHT): event_log.c decides at each
 * window's start (events_switch) and falls back to the probe transport,
 * saying so once, if the ring cannot be made (EMFILE, ENOMEM).
 *
 * Only the owning worker writes its ring's slots and the worker's fields;
 * the reader writes consumed, mode, block_ms and reader.  Every process's
 * rings are listed (event_ring_dump reads them: the flight recorder's
 * dump).
 */
#ifndef BLITZ_CORE_TRACE_EVENT_RING_H
#define BLITZ_CORE_TRACE_EVENT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <blitz/trace/events.h>

/* The ring's size per worker when neither the knob nor the flight recorder sets it. */
#define EVENT_RING_DEFAULT_KB	4096
/* BLITZ_RING_BLOCK's longest wait for a reader, until the reader says otherwise. */
#define EVENT_RING_BLOCK_MS	100
/* How often a ring nobody has claimed is announced again (event_ring_announce). */
#define EVENT_RING_UNCLAIMED_NS	(1000ull * 1000)
/* A ring's longest wait, as it goes, for a reader to claim what it holds. */
#define EVENT_RING_CLAIM_NS	(1000ull * 1000 * 1000)

/* struct event_ring - a worker's ring and the writer's own state (owner-only). */
struct event_ring {
	struct blitz_event_ring *shm;	/* NULL: none */
	size_t bytes;
	int fd;
	uint32_t logs;
	uint64_t produced;		/* logs committed (shm->produced's value) */
	uint64_t announced;		/* ns: event_ring's last hit */
	/* Records dropped since the last log handed out, and their span (ticks). */
	uint64_t lost, lost_from, lost_to;
	/*
	 * BLITZ_RING_BLOCK waited its longest for the reader and gave up with
	 * consumed at stall_at: it drops without waiting again until the
	 * reader moves.
	 */
	bool stalled;
	uint64_t stall_at;
	struct event_ring *next;	/* the process's rings (event_ring.c) */
};

/*
 * event_ring_unread - nobody reads @r (the flight recorder's
 * BLITZ_RING_OVERWRITE): a log is committed only when full, so that the
 * ring holds as long a past as its size allows; a dump reads the log
 * being written anyway.  Relaxed: the reader's mode is a hint.
 */
static inline bool event_ring_unread(const struct event_ring *r)
{
	return __atomic_load_n(&r->shm->mode, __ATOMIC_RELAXED) == BLITZ_RING_OVERWRITE;
}

int event_ring_create(struct event_ring *r, size_t bytes, int worker, unsigned workers,
		      uint64_t runtime);
void event_ring_destroy(struct event_ring *r);
void event_ring_open(struct event_ring *r, enum blitz_event_ring_mode mode);
void event_ring_announce(struct event_ring *r, uint64_t now_ns);
struct blitz_event_log *event_ring_commit(struct event_ring *r, struct blitz_event_log *buf,
					  struct blitz_event_log *scratch, uint64_t ticks);
struct blitz_event_log *event_ring_settle(struct event_ring *r, struct blitz_event_log *buf,
					  struct blitz_event_log *scratch, uint64_t ticks);
int event_ring_dump_fd(int fd);
void event_ring_wait_readers(uint64_t deadline);
void event_ring_announce_unclaimed(void);

#endif
