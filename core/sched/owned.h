/* SPDX-License-Identifier: MIT */
/*
 * core/sched/owned.h - the runtime's list of live (not yet completed)
 * tasks, so that shutdown can cancel and drop tasks that are waiting, not
 * only those queued.
 *
 * Sharded by spawning thread: worker i inserts into shard i % OWNED_SHARDS,
 * every other thread into the last shard (OWNED_OUTSIDE).  A task of a
 * worker's shard completed by a thread that does not insert there is not
 * unlinked at once: it is pushed onto the shard's `done' stack (one CAS,
 * no lock, none of its neighbours' links touched), keeping the
 * scheduler's reference, and the worker that inserts there unlinks it
 * and drops the reference at its next tick or park (owned_drain).  So a
 * shard's lock and links stay in the cache of the worker that spawns
 * there; before, a completion on another CPU took the spawner's lock and
 * wrote its neighbours' links from there.  The outside shard's tasks are
 * unlinked at once, under its lock, by whoever completes them: a thread
 * that is not a worker may never wait for the runtime again, so no drain
 * of that shard could be counted on (with 16 workers or more, workers
 * 15, 31, ... insert there too, and keep that path).  The cost: the
 * block of a task completed elsewhere is held until the drain, at its
 * spawner's next tick or park: behind a long poll of the spawner as long
 * as the poll, and for a push that comes after the drain before a park,
 * until the spawner wakes (a park timeout at most).
 * Measurements: experiments/task-alloc/README.md, History 2026-11-29.
 *
 * Invariants: a task on a shard's list is alive (the scheduler's
 * reference is dropped only after the unlink); a task on a done stack is
 * COMPLETE and still on its shard's list (a task unlinked at once is
 * unlinked before it is COMPLETE); the list and its links change
 * only under the shard's lock.  "Live" (owned_count, owned_empty) is a
 * linked task that is not COMPLETE.
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
/* Flags in a task's owned_shard, beside the shard's index: */
#define OWNED_DEFERRED (1u << 31)	/* owned_remove left it for owned_defer */
#define OWNED_OFF (1u << 30)		/* owned_pop_any took it (shutdown) */

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

void owned_init(struct blitz_owned *o);
void owned_destroy(struct blitz_owned *o);
bool owned_insert(struct blitz_owned *o, struct blitz_task *t, unsigned hint);
void owned_remove(struct blitz_owned *o, struct blitz_task *t, int worker);
void owned_defer(struct blitz_owned *o, struct blitz_task *t);
struct blitz_task *owned_pop_any(struct blitz_owned *o);
void owned_close(struct blitz_owned *o);
size_t owned_count(struct blitz_owned *o);
bool owned_empty(struct blitz_owned *o);
void owned_drain_shard(struct owned_shard *s);

/* owned_shard_of - the shard a task spawned by @worker (-1: not a worker) goes to. */
static inline unsigned owned_shard_of(int worker)
{
	return worker < 0 ? OWNED_OUTSIDE : (unsigned)worker % OWNED_SHARDS;
}

/*
 * owned_drain - worker @worker's tick or park: unlink the tasks other
 * threads completed from its shard.  Relaxed: a hint; a push we miss is
 * taken at the next drain, and owned_drain_shard's exchange (acquire) is
 * what reads the stack.
 */
static inline void owned_drain(struct blitz_owned *o, unsigned worker)
{
	struct owned_shard *mine = &o->shard[owned_shard_of((int)worker)];

	if (atomic_load_explicit(&mine->done, memory_order_relaxed))
		owned_drain_shard(mine);
}

#endif
