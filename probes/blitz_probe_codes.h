/* SPDX-License-Identifier: MIT */
/*
 * probes/blitz_probe_codes.h - the one table of the codes the blitz probes
 * carry in their integer arguments (where a task was queued or found, why a
 * steal failed or a worker woke, which primitive a task waits on).
 *
 * The runtime fires them (core/probes.h includes this), the libbpf tools
 * read them on both sides (tools/Makefile puts probes/ on the include path
 * of the BPF and the user compile), and the bpftrace twins #include it
 * (tools/bpftrace/run passes -I probes/).  So it stays plain C that all
 * three compilers take: no includes, enums and integer #defines only.
 *
 * docs/probes.md, "Argument codes", documents each enum here in one row:
 * `enum probe_X` is the row of `X`, and a code's name there is its
 * enumerator's without the prefix all of the enum's enumerators share, in
 * lower case.  tests/scripts/probe-catalog.sh checks that the two agree and
 * that no twin compares these arguments to a bare number.
 */
#ifndef BLITZ_PROBES_BLITZ_PROBE_CODES_H
#define BLITZ_PROBES_BLITZ_PROBE_CODES_H

/* task_spawn's and task_schedule's dest: where the task was queued. */
enum probe_dest {
	DEST_LIFO = 0,		/* the worker's LIFO slot */
	DEST_RING = 1,		/* the worker's local ring */
	DEST_GLOBAL = 2,	/* the global queue */
};

/* task_poll_start's source: where find_work took the task. */
enum probe_source {
	SRC_LIFO = 0,
	SRC_RING = 1,
	SRC_BATCH = 2,		/* the batch a worker took from the global queue */
	SRC_GLOBAL = 3,
	SRC_STEAL = 4,
	SRC_HELPER = 5,		/* run by a non-worker thread in blitz_join() */
};
/* How many sources there are: the last one + 1. */
#define PROBE_NR_SOURCES	(SRC_HELPER + 1)

/* steal_fail's reason. */
enum probe_steal_fail_reason {
	STEAL_FAIL_EMPTY = 0,	/* the victim's ring was empty */
	STEAL_FAIL_BUSY = 1,	/* another steal from that victim in flight */
	STEAL_FAIL_NO_ROOM = 2,	/* the thief's own ring is over half full */
};
#define PROBE_NR_STEAL_FAIL_REASONS	(STEAL_FAIL_NO_ROOM + 1)

/* lifo_flush's reason. */
enum probe_lifo_flush_reason {
	LIFO_FLUSH_CAP = 0,	/* MAX_LIFO_POLLS reached this tick */
	LIFO_FLUSH_PARK = 1,	/* flushed on the way to parking */
};

/* unpark's reason. */
enum probe_unpark_reason {
	UNPARK_NOTIFIED = 0,
	UNPARK_TIMEOUT = 1,	/* or a spurious wake */
	UNPARK_SHUTDOWN = 2,
	UNPARK_IO = 3,		/* slept in the I/O driver, woken by completions */
};
#define PROBE_NR_UNPARK_REASONS	(UNPARK_IO + 1)

/* unpark's waker, when it is not a worker index. */
enum probe_unpark_waker {
	WAKER_OUTSIDE = -1,	/* a thread that is not a worker */
	WAKER_NONE = -2,	/* not notified: timeout, shutdown, I/O */
	WAKER_UNKNOWN = -3,	/* claimed as its sleep ended by itself: the
				   notifier had not yet said who it was */
};

/*
 * sync_wait's and sync_wake's kind: the primitive a task waits on
 * (docs/sync.md, then the channels of docs/channels.md).
 */
enum probe_sync_kind {
	SYNC_SEMAPHORE = 0,
	SYNC_MUTEX = 1,
	SYNC_RWLOCK_READ = 2,
	SYNC_RWLOCK_WRITE = 3,
	SYNC_BARRIER = 4,
	SYNC_NOTIFY = 5,
	SYNC_ONCECELL = 6,
	SYNC_CANCEL_TOKEN = 7,
	SYNC_CHAN_SEND = 8,	/* channel send, waiting while full */
	SYNC_CHAN_RECV = 9,	/* channel recv, waiting while empty */
	SYNC_BROADCAST = 10,	/* broadcast recv */
	SYNC_WATCH = 11,	/* watch changed */
	SYNC_SELECT = 12,	/* select, any branch */
	SYNC_ONESHOT = 13,	/* oneshot recv (reserved: not fired yet) */
};

#endif /* BLITZ_PROBES_BLITZ_PROBE_CODES_H */
