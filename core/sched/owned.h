/* SPDX-License-Identifier: MIT */
/*
 * core/sched/owned.h - the runtime's list of live (not yet completed)
 * tasks, so that shutdown can cancel and drop tasks that are waiting, not
 * only those queued.
 *
 * Sharded by spawning thread: worker i inserts into shard i % OWNED_SHARDS,
 * every other thread into the last shard (OWNED_OUTSIDE).  A task
 * completed by a thread that does not insert into its shard is not
 * unlinked at once, so that a shard's lock and links stay in the cache of
 * the thread that spawns there (before, a completion on another CPU took
 * the spawner's lock and wrote its neighbours' links from there):
 *  - a task of a worker's shard is pushed onto the shard's `done' stack
 *    (one CAS, no lock, none of its neighbours' links touched), keeping
 *    the scheduler's reference, and the worker that inserts there unlinks
 *    it and drops the reference at its next tick or park (owned_drain);
 *  - a task of the outside shard completed by a worker goes onto that
 *    worker's own list (struct owned_local: no atomic at all), which the
 *    same worker unlinks in one go at its next tick or park, or as it
 *    exits.  The program's thread that spawns from outside and the
 *    worker that runs its tasks took the lock in turns, one task at a
 *    time, and the loser of each round spun and yielded, which slowed a
 *    burst of spawns from outside at one worker (docs/scheduler.md,
 *    "Known limits").  The outside
 *    shard's own spawner is not a worker and may never wait for the
 *    runtime again, so it is the completing worker, not the spawner,
 *    that drains.
 * A task that a thread that is not a worker completes is unlinked at once
 * if it is the outside shard's (its spawner's class), else handed to the
 * shard's worker as above; with 16 workers or more, workers 15, 31, ...
 * insert into the outside shard too and unlink its tasks at once.
 * The cost: the block of a task completed elsewhere is held until the
 * drain: behind a long poll of the draining worker as long as the poll,
 * and for a push onto a done stack that comes after the drain before a
 * park, until the spawner wakes (a park timeout at most).
 * Measured: experiments/task-alloc/NOTEBOOK.md, "History".
 *
 * Invariants: a task on a shard's list is alive (the scheduler's
 * reference is dropped only after the unlink); a task on a done stack or
 * on a worker's owned_local list is COMPLETE and still on its shard's
 * list (a task unlinked at once is unlinked before it is COMPLETE); the
 * list and its links change only under the shard's lock.  "Live"
 * (owned_count, owned_empty) is a linked task that is not COMPLETE.
 */
#ifndef BLITZ_CORE_OWNED_H
#define BLITZ_CORE_OWNED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../compiler.h"
#include "../spinlock.h"

#define OWNED_SHARDS 16
#define OWNED_OUTSIDE (OWNED_SHARDS - 1)	/* the shard of threads that are not workers */

struct blitz_task;

struct owned_shard {
	alignas(CACHE_LINE) struct spinlock lock;
	struct blitz_task *head;
	/* Pushed by any thread, taken whole by a drain: a line of its own. */
	alignas(CACHE_LINE) _Atomic(struct blitz_task *) done;
};

struct blitz_owned {
	struct owned_shard shard[OWNED_SHARDS];
	bool closed;			/* under every shard lock */
};

/*
 * struct owned_local - a worker's outside-shard tasks that it completed,
 * linked through task->next, for it to unlink at its next drain (owner-only).
 */
struct owned_local {
	struct blitz_task *done;
};

void owned_init(struct blitz_owned *o);
void owned_destroy(struct blitz_owned *o);
bool owned_insert(struct blitz_owned *o, struct blitz_task *t);
bool owned_remove(struct blitz_owned *o, struct blitz_task *t, int worker);
void owned_defer(struct blitz_owned *o, struct blitz_task *t, struct owned_local *local);
struct blitz_task *owned_pop_any(struct blitz_owned *o);
void owned_close(struct blitz_owned *o);
size_t owned_count(struct blitz_owned *o);
bool owned_empty(struct blitz_owned *o);
void owned_drain_shard(struct owned_shard *s);
void owned_drain_local(struct blitz_owned *o, struct owned_local *local);

/* owned_shard_of - the shard a task spawned by @worker (-1: not a worker) goes to. */
static inline unsigned owned_shard_of(int worker)
{
	return worker < 0 ? OWNED_OUTSIDE : (unsigned)worker % OWNED_SHARDS;
}

/*
 * owned_drain - worker @worker's tick or park: unlink the tasks other
 * threads completed from its shard, and the outside-shard tasks it
 * completed itself (@local).  Relaxed: a hint; a push we miss is taken
 * at the next drain, and owned_drain_shard's exchange (acquire) is what
 * reads the stack.
 */
static inline void owned_drain(struct blitz_owned *o, unsigned worker, struct owned_local *local)
{
	struct owned_shard *mine = &o->shard[owned_shard_of((int)worker)];

	if (atomic_load_explicit(&mine->done, memory_order_relaxed))
		owned_drain_shard(mine);
	if (local->done)
		owned_drain_local(o, local);
}

#endif
