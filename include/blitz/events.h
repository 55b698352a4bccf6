/* SPDX-License-Identifier: MIT */
/*
 * blitz/events.h - the layout of a worker's event log, as the event_flush
 * probe hands it to a tracer (docs/probes.md, "The event log").
 *
 * While a tracer holds event_flush's semaphore, every worker writes a
 * record of each scheduling event (a spawn, a schedule, a poll's start and end, a
 * steal, a park, an unpark) into a log in its own memory, stamped with
 * the runtime's cheap clock, and fires event_flush(worker, log, count,
 * seq) with the address of this struct when the log is full, before a
 * park when the last flush is BLITZ_EVENT_PARK_FLUSH_NS old, at a tick
 * when it is BLITZ_EVENT_FLUSH_NS old, and at its exit.  A thread that
 * is not one of the runtime's workers logs the spawns, schedules and
 * polls of its tasks into a log of its own (worker -1), flushed when full,
 * before the thread waits and at its exit.  A BPF program copies the
 * header and the first count records with bpf_probe_read_user().  The
 * probe fires on the log's own thread, the only writer, so the copy is
 * consistent: one trap for up to BLITZ_EVENT_LOG_RECORDS events, where a
 * per-event probe costs a trap per event.
 *
 * Plain C types only (no headers): the same text compiles for BPF.
 */
#ifndef BLITZ_EVENTS_H
#define BLITZ_EVENTS_H

/* Records per log: one flush (a trap and a 16 KiB copy) per this many events. */
#define BLITZ_EVENT_LOG_RECORDS	512
/* A worker flushes at a tick once its last flush is this old. */
#define BLITZ_EVENT_FLUSH_NS	100000000ull
/* ...and before a park once it is this old (about a park timeout). */
#define BLITZ_EVENT_PARK_FLUSH_NS	10000000ull

/*
 * What a record says.  The fields are those of the per-event probe of the
 * same name (docs/probes.md), with the codes of blitz_probe_codes.h.
 */
enum blitz_event_type {
	BLITZ_EVENT_SPAWN = 1,		/* task spawned by this worker; arg: DEST_*, as task_spawn */
	BLITZ_EVENT_SCHEDULE,		/* task queued by this worker; arg: DEST_*, as task_schedule */
	BLITZ_EVENT_POLL_START,		/* task's poll begins; arg: SRC_*, as task_poll_start */
	BLITZ_EVENT_POLL_END,		/* task's poll returned; arg: 1 ready, 0 pending */
	BLITZ_EVENT_STEAL,		/* arg: tasks taken; peer: the victim */
	BLITZ_EVENT_PARK,		/* arg: the sleep's limit, ns */
	BLITZ_EVENT_UNPARK,		/* arg: UNPARK_*; peer: the waker (-1: outside or none) */
	BLITZ_EVENT_TYPES
};

/* One event: 32 bytes. */
struct blitz_event {
	unsigned long long ticks;	/* the cheap clock; ns = ticks * ticks_mult >> 32 */
	unsigned long long task;	/* the task (0 for worker events) */
	unsigned long long arg;
	unsigned int type;		/* enum blitz_event_type */
	int peer;			/* another worker (steal, unpark), else -1 */
};

/* The log's header: what a tracer reads before the records. */
struct blitz_event_log_head {
	unsigned int size;		/* sizeof(struct blitz_event): the layout */
	unsigned int capacity;		/* BLITZ_EVENT_LOG_RECORDS */
	int worker;			/* the worker's index; -1: a thread that is not one of the
					   runtime's workers (its spawns, schedules and polls) */
	unsigned int workers;		/* the runtime's workers */
	unsigned int thread;		/* the writing thread's id (gettid) */
	unsigned int reserved;
	unsigned long long runtime;	/* which runtime of the process: 1, 2, ... */
	unsigned long long seq;		/* this worker's flush number, from 1 in each window */
	unsigned long long ticks_mult;	/* ns per tick << 32 (the clock's calibration) */
	unsigned long long flushed;	/* ticks at this flush: a later queueing or poll start is
					   stamped after it (a poll's end stamped just before a flush
					   may be written after it) */
};

struct blitz_event_log {
	struct blitz_event_log_head head;
	struct blitz_event rec[BLITZ_EVENT_LOG_RECORDS];
};

#endif /* BLITZ_EVENTS_H */
