/* SPDX-License-Identifier: MIT */
/*
 * tools/events_state.h - the state that blitz-events' files share
 * (events.c says which file does what): per runtime (struct group), per
 * writer (struct wstate), per ring mapped (struct ring), per flush half
 * in (struct pending), the losses (struct span) and -r's records (struct
 * full), all held by the one struct state that every function takes; and
 * the accessors of its arrays.  A writer's group is NULL once its process
 * has exited and was settled (its counts stay until printed); ticks are
 * ns by the factor of their process (to_ns), from the first record taken
 * (rel_ns).
 */
#ifndef BLITZ_TOOLS_EVENTS_STATE_H
#define BLITZ_TOOLS_EVENTS_STATE_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "array.h"
#include "hist.h"
#include "tool_args.h"
#include "events.h"

struct events_bpf;
struct ring_buffer;

/*
 * A queueing waiting for the poll that takes it, or a poll's start
 * waiting for its queueing (its log came first), keyed by (task, seq).
 */
struct held {
	__u64 task;			/* 0: an empty slot (ids start at 1) */
	__u64 ticks;
	__u32 seq;
	__u32 poll;			/* 1: a poll's start, 0: a queueing */
};

/* Open addressing, linear probing, at most half full. */
struct held_table {
	struct held *e;
	size_t cap, n, polls;
};

/*
 * One runtime of one process: its workers' count (from the logs' heads),
 * the clock factor of its process, what waits for its pair, and the
 * ticks that the losses of its writers span.
 */
struct group {
	__u32 tgid;
	__u32 workers;
	__u64 runtime;
	__u64 mult;
	struct held_table held;
	bool gone;			/* the process has exited: all it logged is here */
	__u64 upto;			/* the tick before which all its records are here (settled) */
	bool lossy;			/* a record of it was lost, between loss_from and loss_to */
	__u64 loss_from, loss_to;
};

/* Nested polls followed per worker (deeper: their time is not taken). */
#define POLL_DEPTH	64

/* One worker (or thread that is not a worker: worker -1) of one runtime of one process. */
struct wstate {
	__u32 tgid;
	__s32 worker;
	__u32 thread;			/* the writer's thread id (tells apart the logs of worker -1) */
	__u64 runtime;
	struct group *g;
	__u64 seq;			/* the last log seen */
	__u64 flushed;			/* its tick: later records of this worker come after it */
	__u64 last;			/* the tick of its last record */
	__u64 events[BLITZ_EVENT_TYPES];	/* this print */
	__u64 ready, stolen;		/* this print: polls that completed, tasks stolen */
	__u64 waited;			/* this print: ns the worker waited for this tool (reader_wait) */
	__u64 missed;			/* this print: logs not seen (a gap in seq) */
	__u64 lost;			/* this print: records lost (the logs' head.lost) */
	bool lossy;			/* a loss since the window began: an end may miss its start */
	/*
	 * The polls started and not ended, innermost last: a join on a
	 * worker polls other tasks inside its own poll (a start, then the
	 * nested polls' starts and ends, then its end).
	 */
	__u32 depth;
	__u64 open_task[POLL_DEPTH], open_ticks[POLL_DEPTH];
};

/* Records of one writer lost between two ticks (or whole logs: a gap in seq). */
struct span {
	__u32 tgid, thread;
	__s32 worker;
	__u64 runtime, mult;
	__u64 from, to;			/* ticks */
	__u64 records, logs;
};

/* A record with where it came from, for -r. */
struct full {
	struct blitz_event ev;
	__u64 mult;
	__u32 tgid, thread;
	__s32 worker;
};

/* A flush that the BPF side's chunks are bringing in, per writing thread. */
struct pending {
	__u32 tgid;
	__u32 next;			/* the index in the flush of the record expected next */
	__u32 n;			/* records held */
	bool gone;			/* its process exited: closed once its last chunks are in */
	struct blitz_event_log_head head;
	struct blitz_event rec[BLITZ_EVENT_LOG_RECORDS];
};

/* A worker's ring, mapped from its process (or only announced, if that failed). */
struct ring {
	__u32 tgid;
	__s32 worker;
	__u64 runtime;
	int fd;				/* the process's descriptor: /proc/TGID/fd/FD */
	size_t bytes;
	dev_t dev;			/* the memfd: a new one may come with the same number */
	ino_t ino;
	struct blitz_event_ring *map;	/* NULL: not mapped */
	__u64 window;			/* the worker's window being read */
	__u64 next;			/* the next log to take */
	__u64 consumed;			/* what this tool last stored in map->consumed */
	__u64 told;			/* records lost in this window that its logs told */
	struct blitz_event_log_head last;	/* the head of the last log read */
	__u32 mode0, block0;		/* as found: put back as the tool leaves */
	bool backlog;			/* found overwriting (a flight recorder): not read yet */
	bool warned;			/* its failure to map is told once */
	bool finished;			/* read to its end (ring_finish): not again */
};

struct state {
	struct tool_env *env;
	struct events_bpf *skel;
	struct ring_buffer *rb;
	struct array w;			/* struct wstate */
	struct array g;			/* struct group * */
	struct array pend;		/* struct pending *: flushes half in */
	struct pending *spare;		/* a freed one, for the next flush */
	struct array rings;		/* struct ring */
	struct array fulls;		/* struct full (-r) */
	struct array spans;		/* struct span: this print */
	struct hist poll, sched;	/* this print, in the unit */
	__u64 div;			/* ns per unit */
	/* This print: polls with no logged queueing, ends without a start, a queueing logged
	   twice, queueings still waiting for their poll at the process's exit. */
	__u64 unpaired_polls, unpaired_polls_end, stale_schedules, never_polled;
	__u64 late;			/* this print: queueings that came after their poll */
	__u64 untrusted;		/* this print: marks a lost span may have paired */
	__u64 untrusted_polls;		/* this print: of them, poll starts (their queueing) */
	__u64 lost;			/* this print: records lost (in the spans) */
	__u64 logs, ring_logs;		/* this print: logs taken, of them from rings */
	__u64 bad_records;		/* this print: records of no known type */
	__u64 rings_missed;		/* rings announced that could not be read (their records) */
	__u64 prev_flushes, prev_bad, prev_lost;
	double last_settle;		/* CLOCK_MONOTONIC s of the last settling */
	long idle_us;			/* drain's next sleep, if a pass finds nothing */
	__u64 origin;			/* ticks of the first record taken: ns 0 of -r and spans */
	bool have_origin;
	bool records_headed;		/* -r, text: the column header is above the last lines */
	bool offline;			/* --read, --dump: nothing more comes after the input */
	bool leaving;			/* the rings are being let go */
	/* -w */
	FILE *out;
	__u64 out_logs, out_records;	/* this print */
	/* --block-ms, --discard: what the rings are set to */
	__u32 block_ms, mode;
};

static inline void *push(struct state *st, struct array *a)
{
	void *e = array_push(a);

	if (!e)
		tool_die(st->env, "out of memory holding %zu entries", a->n);
	return e;
}

static inline struct wstate *wst(const struct state *st, size_t i)
{
	return array_at(&st->w, i);
}

static inline struct group *grp(const struct state *st, size_t i)
{
	return *(struct group **)array_at(&st->g, i);
}

static inline struct ring *ring_at(const struct state *st, size_t i)
{
	return array_at(&st->rings, i);
}

static inline struct pending *pend_at(const struct state *st, size_t i)
{
	return *(struct pending **)array_at(&st->pend, i);
}

static inline __u64 to_ns(__u64 ticks, __u64 mult)
{
	return (__u64)(((unsigned __int128)ticks * mult) >> 32);
}

/* ns of @ticks since the origin (signed: a record may precede it). */
static inline long long rel_ns(const struct state *st, __u64 ticks, __u64 mult)
{
	return ticks >= st->origin ? (long long)to_ns(ticks - st->origin, mult)
				   : -(long long)to_ns(st->origin - ticks, mult);
}

static inline bool pid_gone(__u32 pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

#endif /* BLITZ_TOOLS_EVENTS_STATE_H */
