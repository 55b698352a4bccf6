/* SPDX-License-Identifier: MIT */
/*
 * blitz/trace/events.h - the layout of a worker's event log, as the event_flush
 * probe hands it to a tracer, as a ring in shared memory holds it, and as
 * a trace file stores it (docs/probes.md, "The event log").
 *
 * Two transports.  The ring (below, struct blitz_event_ring) is read in
 * place by a reader that maps it: no trap per log.  The probe: while a
 * tracer holds event_flush's semaphore (and not event_ring's), every worker writes a
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
#ifndef BLITZ_TRACE_EVENTS_H
#define BLITZ_TRACE_EVENTS_H

/* Records per log: one flush (a trap and a 16 KiB copy) per this many events. */
#define BLITZ_EVENT_LOG_RECORDS	512
/* A worker flushes at a tick once its last flush is this old. */
#define BLITZ_EVENT_FLUSH_NS	100000000ull
/* ...and before a park once it is this old (about a park timeout). */
#define BLITZ_EVENT_PARK_FLUSH_NS	10000000ull

/* The layout's version (a log's head.version, the ring's version): tools check it. */
#define BLITZ_EVENTS_VERSION	2

/*
 * What a record says.  Its fields are those of the per-event probe of the
 * same name (docs/probes.md), with the codes of blitz_probe_codes.h in
 * `code`, and the task named by its id (never reused in a process)
 * instead of its address.
 */
enum blitz_event_type {
	BLITZ_EVENT_SPAWN = 1,		/* task spawned here; code: DEST_*; arg: its address */
	BLITZ_EVENT_SCHEDULE,		/* task queued here; code: DEST_*; arg: its address */
	BLITZ_EVENT_POLL_START,		/* task's poll begins; code: SRC_*; arg: its vtable */
	BLITZ_EVENT_POLL_END,		/* task's poll returned; code: 1 ready, 0 pending */
	BLITZ_EVENT_STEAL,		/* arg: tasks taken; peer: the victim */
	BLITZ_EVENT_PARK,		/* arg: the sleep's limit, ns */
	BLITZ_EVENT_UNPARK,		/* code: UNPARK_*; peer: the waker (-1: outside or none) */
	BLITZ_EVENT_READER_WAIT,	/* the worker waited arg ns for the ring's reader to free a slot
					   (BLITZ_RING_BLOCK): the tracer's own cost, in the log */
	BLITZ_EVENT_TYPES
};

/* One event: 32 bytes. */
struct blitz_event {
	unsigned long long ticks;	/* the cheap clock; ns = ticks * ticks_mult >> 32 */
	unsigned long long task;	/* the task's id, from 1 (0 for worker events) */
	unsigned long long arg;		/* by type (enum blitz_event_type) */
	unsigned short type;		/* enum blitz_event_type */
	unsigned short code;		/* by type: DEST_*, SRC_*, UNPARK_*, ready */
	union {
		int peer;		/* steal, unpark: another worker, else -1 */
		/*
		 * spawn, schedule, poll_start: the task's queueing number (its
		 * spawn 0, each schedule the next): a poll's start carries its
		 * queueing's, so that a reader pairs them without comparing two
		 * workers' clocks.
		 */
		unsigned int seq;
	};
};

/* A log's header: what a tracer reads before the records. */
struct blitz_event_log_head {
	unsigned int size;		/* sizeof(struct blitz_event): the layout */
	unsigned int capacity;		/* BLITZ_EVENT_LOG_RECORDS */
	int worker;			/* the worker's index; -1: a thread that is not one of the
					   runtime's workers (its spawns, schedules and polls) */
	unsigned int workers;		/* the runtime's workers */
	unsigned int thread;		/* the writing thread's id (gettid) */
	unsigned int version;		/* BLITZ_EVENTS_VERSION */
	unsigned long long runtime;	/* which runtime of the process: 1, 2, ... */
	unsigned long long seq;		/* this log's number, from 1 in each window (in a ring: 0
					   while the worker writes it) */
	unsigned long long ticks_mult;	/* ns per tick << 32 (the clock's calibration) */
	unsigned long long flushed;	/* ticks at this flush: a later queueing or poll start is
					   stamped after it (a poll's end stamped just before a flush
					   may be written after it) */
	unsigned int count;		/* records written (in a ring: kept current as each is) */
	unsigned int pid;		/* the process */
	/*
	 * Records this worker dropped since its previous log (a ring whose
	 * reader fell behind, BLITZ_RING_DISCARD) and the ticks of the first
	 * and last of them: a reader marks that span as not to be trusted.
	 */
	unsigned long long lost;
	unsigned long long lost_from, lost_to;
};

struct blitz_event_log {
	struct blitz_event_log_head head;
	struct blitz_event rec[BLITZ_EVENT_LOG_RECORDS];
};

/*
 * The ring: a worker's logs in shared memory that a reader maps and
 * reads in place, with no trap per log (docs/probes.md, "The event
 * log").  While a tracer holds event_ring's semaphore (or the flight
 * recorder is on), each worker makes a ring in a memfd of its own
 * (named "blitz-events") and fires event_ring(worker, runtime, fd, bytes)
 * as it opens a window, then every millisecond or so until a reader has
 * claimed it (`reader`), then every BLITZ_EVENT_FLUSH_NS, so that a
 * reader finds it: it maps /proc/PID/fd/FD.  A ring that holds records
 * nobody claimed when its worker goes, or the process exits, is announced
 * every millisecond while the runtime waits for its reader (1 s at most).
 *
 * The worker fills log number n (from 1) in slot (n - 1) % logs, with
 * head.seq 0 while it writes and head.count kept current, then commits
 * it: head.seq = n, and `produced` = n with release.  The reader takes
 * logs consumed + 1 .. produced (acquire) and then stores `consumed` with
 * release, which frees their slots.  A worker that finds every slot
 * taken does as `mode` says: BLITZ_RING_BLOCK waits for the reader, for
 * at most block_ms, then drops records until the reader frees a slot;
 * BLITZ_RING_DISCARD drops them at once; BLITZ_RING_OVERWRITE (the flight
 * recorder) takes the oldest slot.  Dropped records are counted exactly:
 * `lost`, and the next log's head.lost with its span.  The reader sets
 * mode and block_ms as it attaches and writes its pid in `reader`.
 *
 * Fields a side writes while the other reads are accessed with the
 * __atomic builtins (plain types here: this text compiles for BPF too).
 */
#define BLITZ_EVENT_RING_MAGIC	0x676e727a74696c62ull	/* "blitzrng" */
/* The ring's first log starts here (its header is padded to a page). */
#define BLITZ_EVENT_RING_HEAD	4096

enum blitz_event_ring_mode {
	BLITZ_RING_BLOCK = 0,		/* wait for the reader (at most block_ms), then drop */
	BLITZ_RING_DISCARD = 1,		/* drop at once, counted */
	BLITZ_RING_OVERWRITE = 2,	/* the flight recorder: keep the newest logs */
};

struct blitz_event_ring {
	unsigned long long magic;	/* BLITZ_EVENT_RING_MAGIC */
	unsigned int version;		/* BLITZ_EVENTS_VERSION */
	unsigned int logs;		/* slots */
	unsigned int log_bytes;		/* sizeof(struct blitz_event_log): the slots' stride */
	int worker;
	unsigned int workers;
	unsigned int pid;		/* the process */
	unsigned long long runtime;
	unsigned long long window;	/* which window of the worker: from 1 */
	/* The worker's line. */
	unsigned long long produced __attribute__((aligned(64)));	/* logs committed */
	unsigned long long lost;	/* records dropped in this window */
	/* The reader's line. */
	unsigned long long consumed __attribute__((aligned(64)));	/* logs released */
	unsigned int mode;		/* enum blitz_event_ring_mode */
	unsigned int block_ms;		/* BLITZ_RING_BLOCK's longest wait */
	unsigned int reader;		/* the reader's pid, 0: none */
};

/*
 * A trace file (blitz-events -w, a flight recorder's dump): this header,
 * then logs in the order they were read (each worker's in its order; the
 * workers' interleaved), in one of two encodings named by the magic.
 *
 * Raw (BLITZ_EVENT_FILE_MAGIC: the flight recorder's dump, blitz-events
 * -w --raw): each log is its head, then head.count records as above.
 *
 * Packed (BLITZ_EVENT_FILE_PACKED_MAGIC: blitz-events -w), about 6 bytes
 * a record where a raw one is 32: each log is its head (head.count
 * records), a 32-bit count of the bytes that follow (in the host's order,
 * as every field of the file), and those bytes, each record relative to
 * the one before it in the log (every "before" 0 at a log's start).  A varint is LEB128 (7 bits a
 * byte, low first, the high bit set on all but the last); zz(d) is the
 * zigzag of a difference taken as signed, modulo 2^64 (2d, or -2d-1 when
 * negative).  A record is:
 *   - a byte: type in bits 0-3 (15: a varint of the type follows), bit 4
 *     set if task is not 0, code in bits 5-7 (7: a varint of the code
 *     follows after the type's);
 *   - varint zz(ticks - the previous record's ticks);
 *   - if bit 4: varint zz(task - the previous nonzero task);
 *   - varint zz(arg - the arg of the previous record of the same type,
 *     the types from 15 up counted as one);
 *   - varint zz of peer (seq) as a 32-bit signed value.
 * The encoding is exact for every value: unpacked, a log is the raw one.
 * The writer takes each varint's shortest form, which a record's
 * BLITZ_EVENT_PACKED_MAX bytes bound; a log's count of bytes above that
 * bound, or a varint past 64 bits, is damaged.
 */
#define BLITZ_EVENT_FILE_MAGIC	0x3276657a74696c62ull	/* "blitzev2" */
#define BLITZ_EVENT_FILE_PACKED_MAGIC	0x32766b707a746c62ull	/* "bltzpkv2" */
/* A packed record takes at most this many bytes (a type and a code escaped, 3 varints of 64 bits). */
#define BLITZ_EVENT_PACKED_MAX	(1 + 3 + 3 + 3 * 10 + 5)

struct blitz_event_file_head {
	unsigned long long magic;	/* BLITZ_EVENT_FILE_MAGIC or BLITZ_EVENT_FILE_PACKED_MAGIC */
	unsigned int version;		/* BLITZ_EVENTS_VERSION */
	unsigned int head_size;		/* sizeof(struct blitz_event_log_head) */
	unsigned int record_size;	/* sizeof(struct blitz_event) */
	unsigned int reserved;
};

#endif /* BLITZ_TRACE_EVENTS_H */
