/* SPDX-License-Identifier: MIT */
/*
 * core/probes.h - the USDT probes of probes/blitz.d.
 *
 * BLITZ_<NAME>(args...) fires a probe; BLITZ_<NAME>_ENABLED() is true only
 * while a tracer is attached (a semaphore the kernel increments).  Guard any
 * argument that costs something to compute with the _ENABLED() check.
 * With CONFIG_PROBES=n both compile to nothing (scripts/gen-probes).
 */
#ifndef BLITZ_CORE_PROBES_H
#define BLITZ_CORE_PROBES_H

#include <generated/blitz_probes.h>

/*
 * TASK_PROBE(t, NAME, args...) - a task_* probe, fired only for a traced
 * task (BLITZ_TRACE_SAMPLE=N traces one task in N, each traced whole, so
 * that spawn/schedule/poll/complete pairs stay intact).  The semaphore is
 * tested first: with nobody attached nothing else is looked at.
 */
#define TASK_PROBE(t, NAME, ...)					\
	do {								\
		if (BLITZ_##NAME##_ENABLED() && task_traced(t))		\
			BLITZ_##NAME(__VA_ARGS__);			\
	} while (0)

/* task_poll_start's source argument: where find_work took the task. */
enum blitz_source {
	SRC_LIFO = 0,
	SRC_RING = 1,
	SRC_BATCH = 2,
	SRC_GLOBAL = 3,
	SRC_STEAL = 4,
	SRC_HELPER = 5,		/* run by a non-worker thread in blitz_join() */
};

/* task_spawn / task_schedule's dest argument: where the task was queued. */
enum blitz_dest {
	DEST_LIFO = 0,
	DEST_RING = 1,
	DEST_GLOBAL = 2,
};

/* steal_fail's reason argument. */
enum blitz_steal_fail {
	STEAL_FAIL_EMPTY = 0,
	STEAL_FAIL_BUSY = 1,	/* another steal from that victim in flight */
	STEAL_FAIL_NO_ROOM = 2,	/* the thief's own ring is over half full */
};

/* lifo_flush's reason argument. */
enum blitz_lifo_flush {
	LIFO_FLUSH_CAP = 0,	/* MAX_LIFO_POLLS reached this tick */
	LIFO_FLUSH_PARK = 1,	/* flushed on the way to parking */
};

/* unpark's reason argument. */
enum blitz_unpark_reason {
	UNPARK_NOTIFIED = 0,
	UNPARK_TIMEOUT = 1,
	UNPARK_SHUTDOWN = 2,
	UNPARK_IO = 3,		/* slept in the I/O driver, woken by completions */
};

/* unpark's waker argument, besides a worker index. */
enum blitz_unpark_waker {
	WAKER_OUTSIDE = -1,	/* a thread that is not a worker */
	WAKER_NONE = -2,	/* not notified: timeout, shutdown, I/O */
	WAKER_UNKNOWN = -3,	/* claimed as its sleep ended by itself: the
				   notifier had not yet said who it was */
};

#endif
