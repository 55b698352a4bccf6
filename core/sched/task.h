/* SPDX-License-Identifier: MIT */
/*
 * core/sched/task.h - the task header and its 64-bit packed state word
 * (docs/scheduler.md, "Tasks").
 *
 *  63            40 39      32 31     24 23       16 15    11 10  9  8   5 4     0
 * +----------------+----------+---------+-----------+--------+--+--+-----+-------+
 * | ref_count (24) | shield(8)| flags(8)| lifecycle |reserved|id|of|shard| class |
 * +----------------+----------+---------+-----------+--------+--+--+-----+-------+
 *
 * The low bits are fixed at spawn but for TASK_OWNED_OFF and TASK_TRACE_ID:
 * the block's class (task_cache.h), the live-list shard (owned.h), the
 * shard's "taken by the shutdown" flag, and "the cold part's trace id is
 * set".  Every other write of the word is a read-modify-write that keeps
 * them.
 *
 * The header is one cache line with a small state: the fields every
 * spawn, poll and completion touch (48 bytes), then the user's state.
 * What only a join, the summary mode's stamp or the event log touches
 * is the cold part (struct task_cold), at the end of its class's bytes,
 * or before the header for a task larger than the cache's classes, so
 * that an untraced task of up to 16 bytes of state moves one line
 * between the threads that spawn, poll and free it.
 *
 * Invariants:
 *  - A task is in at most one queue, and only while its lifecycle is
 *    SCHEDULED: the IDLE -> SCHEDULED transition (one CAS) is the ticket.
 *    (A COMPLETE task may sit on a live-list shard's done stack or on a
 *    worker's owned_local list, linked through the same `next': owned.h.)
 *  - The scheduler owns one reference from spawn until the task completes,
 *    or, for a task completed away from its spawner's shard, until the
 *    drain of that shard or of the completing worker's list (owned.h); a
 *    join handle owns one; every waker owns one.  The task is freed when
 *    the count reaches zero; it is always COMPLETE by then.
 *  - join_waker is written only by the joiner while TASK_JOIN_WAKER is
 *    clear, and read only by the completer once it saw that bit set; it
 *    is not initialised: nothing reads it while the bit is clear.
 */
#ifndef BLITZ_CORE_TASK_H
#define BLITZ_CORE_TASK_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <blitz.h>
#include "task_cache.h"

#define TASK_LIFECYCLE_SHIFT	16
#define TASK_LIFECYCLE_MASK	(0xffull << TASK_LIFECYCLE_SHIFT)
#define TASK_IDLE		(0ull << TASK_LIFECYCLE_SHIFT)
#define TASK_SCHEDULED		(1ull << TASK_LIFECYCLE_SHIFT)
#define TASK_RUNNING		(2ull << TASK_LIFECYCLE_SHIFT)
#define TASK_COMPLETE		(3ull << TASK_LIFECYCLE_SHIFT)

#define TASK_NOTIFIED		(1ull << 24)
#define TASK_CANCELLED		(1ull << 25)
#define TASK_JOIN_INTEREST	(1ull << 26)
#define TASK_DETACHED		(1ull << 27)
#define TASK_JOIN_WAKER		(1ull << 28)	/* join_waker is set (blitz's own flag) */
#define TASK_TRACED		(1ull << 29)	/* its task_* probes fire (trace sampling) */
/*
 * queued_at holds a schedule stamp (histogram.c): set as the task is
 * queued in a timed tick, cleared by the transition to running, so that
 * only the next poll reads the stamp.
 */
#define TASK_STAMPED		(1ull << 30)

/* The fixed low bits (the layout above). */
#define TASK_CLASS_MASK		0x1full		/* task_cache.h's class of the block */
#define TASK_CLASS_LARGE	0x1full		/* a plain malloc, the cold part in front */
#define TASK_SHARD_SHIFT	5
#define TASK_SHARD_MASK		(0xfull << TASK_SHARD_SHIFT)	/* owned.h's shard */
#define TASK_OWNED_OFF		(1ull << 9)	/* owned_pop_any took it (shutdown) */
#define TASK_TRACE_ID		(1ull << 10)	/* the cold part's trace_id and trace_seq are set */

#define TASK_SHIELD_SHIFT	32
#define TASK_SHIELD_ONE		(1ull << TASK_SHIELD_SHIFT)
#define TASK_SHIELD_MASK	(0xffull << TASK_SHIELD_SHIFT)

#define TASK_REF_SHIFT		40
#define TASK_REF_ONE		(1ull << TASK_REF_SHIFT)
#define TASK_REF_MAX		((1ull << 24) - 1)

static inline uint64_t task_lifecycle(uint64_t s) { return s & TASK_LIFECYCLE_MASK; }
static inline unsigned task_shield(uint64_t s) { return (unsigned)((s & TASK_SHIELD_MASK) >> TASK_SHIELD_SHIFT); }
static inline uint64_t task_refs(uint64_t s) { return s >> TASK_REF_SHIFT; }

struct blitz_runtime;

struct blitz_task {
	_Atomic uint64_t state;
	const struct blitz_task_vtable *vtable;
	struct blitz_task *next;		/* global queue; once COMPLETE, owned.h's lists */
	struct blitz_runtime *rt;
	struct blitz_task *owned_prev;		/* the runtime's list of live tasks */
	struct blitz_task *owned_next;
	alignas(16) unsigned char user[];	/* the user's state struct */
};

_Static_assert(offsetof(struct blitz_task, user) == 48,
	       "the header and 16 bytes of state share a line");

/*
 * struct task_cold - what a spawn, a poll and a completion do not touch
 * unless a join waits, the summary mode stamps or the event log names
 * the task.  None of it is initialised at spawn: each field is read only
 * once a bit of the state says it was written.
 */
struct task_cold {
	struct blitz_waker join_waker;		/* while TASK_JOIN_WAKER */
	uint64_t queued_at;			/* histogram.c: when queued (ticks), while TASK_STAMPED */
	uint64_t trace_id;			/* event_log.h: its id in the log, once TASK_TRACE_ID */
	uint32_t trace_seq;			/* event_log.h: its queueings logged (spawn: 0) */
};

/* What a task larger than the cache's classes has in front of its header. */
#define TASK_COLD_FRONT	((sizeof(struct task_cold) + 15) / 16 * 16)

/* TASK_BYTES - what a task of @state bytes of state takes, cold part included. */
#define TASK_BYTES(state)	(sizeof(struct blitz_task) + (state) + sizeof(struct task_cold))

static inline void *task_user(struct blitz_task *t) { return t->user; }

/* task_class - @t's block class, or TASK_CLASS_LARGE.  Relaxed: fixed at spawn. */
static inline unsigned task_class(const struct blitz_task *t)
{
	return (unsigned)(atomic_load_explicit(&((struct blitz_task *)t)->state,
					       memory_order_relaxed) & TASK_CLASS_MASK);
}

/*
 * task_cold - @t's cold part: the last bytes of its class's size from the
 * block's start (inside what the cache unpoisons, past the state), or
 * TASK_COLD_FRONT before the header of a large task.
 */
static inline struct task_cold *task_cold(struct blitz_task *t)
{
	unsigned c = task_class(t);

	if (__builtin_expect(c == TASK_CLASS_LARGE, 0))
		return (struct task_cold *)((char *)t - TASK_COLD_FRONT);
	return (struct task_cold *)((char *)t + task_class_bytes(c) - sizeof(struct task_cold));
}

/* task_owned_shard - the live-list shard @t was linked into at spawn. */
static inline unsigned task_owned_shard(const struct blitz_task *t)
{
	return (unsigned)((atomic_load_explicit(&((struct blitz_task *)t)->state,
						memory_order_relaxed) & TASK_SHARD_MASK) >> TASK_SHARD_SHIFT);
}

struct blitz_worker;

/* The poll context: what a poll function may ask of the runtime. */
struct blitz_cx {
	struct blitz_task *task;
	struct blitz_worker *worker;	/* NULL when a non-worker thread helps */
	int yielded;			/* blitz_yield_now() was called */
};

/* What transition_after_poll decided. */
enum task_after_poll {
	TASK_NOW_IDLE,		/* wait for a wake */
	TASK_RESCHEDULE,	/* notified, yielded or cancelled while running: queue again */
};

uint64_t task_transition_to_running(struct blitz_task *t);
enum task_after_poll task_transition_after_poll(struct blitz_task *t, int yielded);
int task_transition_to_scheduled(struct blitz_task *t);
void task_ref_inc(struct blitz_task *t);
void task_ref_dec(struct blitz_task *t);
void task_finish(struct blitz_task *t, int worker, int cancelled);
void task_wake_by_ref(struct blitz_task *t);
struct blitz_task *task_alloc(struct blitz_runtime *rt,
			      const struct blitz_task_vtable *vt,
			      const void *state, size_t size, int handle, bool traced,
			      unsigned shard);
uint64_t task_state_load(const struct blitz_task *t);
bool task_take_back_join_waker(struct blitz_task *t);

/*
 * task_traced - does this task fire its task_* probes?  Decided at spawn
 * (BLITZ_TRACE_SAMPLE) and never changed, so a relaxed load is enough.
 */
static inline bool task_traced(const struct blitz_task *t)
{
	return atomic_load_explicit(&((struct blitz_task *)t)->state, memory_order_relaxed) & TASK_TRACED;
}

extern const struct blitz_waker_vtable task_waker_vtable;

#endif
