/* SPDX-License-Identifier: MIT */
/*
 * core/sched/task_cache.h - free task blocks: each worker's lists, each
 * other thread's, and the runtime's depot between them (docs/scheduler.md,
 * "Task memory").
 *
 * A task of up to TASK_CACHE_MAX_BYTES (header and state) lives in a block
 * of its size class, whichever thread allocates it; a larger one is a plain
 * malloc of its size.  A block freed on a worker goes to that worker's list
 * of its class, unless the worker holds TASK_CACHE_BLOCKS already; then to
 * its runtime's depot of the class, TASK_DEPOT_BATCH at a time (a chain
 * kept in the worker's outbox until then), unless that would hold more
 * than depot_max(class) blocks; then back to its slab.  A block freed on
 * any other thread goes to that thread's lists (the same bound), else to
 * its slab.  An allocation takes a block from the calling thread's list of
 * its class; if that is empty, a worker's own outbox chain of the class,
 * else the whole depot of the class (the runtime's it spawns into); if
 * that is empty too, a new block carved from a slab (task_slab.h: on
 * cache lines of its own).  So a burst of tasks that one thread spawns
 * and a worker frees (a remote spawn, a burst beyond a worker's bound)
 * comes back to the next burst instead of to a new block.
 *
 * Invariants:
 *  - A thread's lists are touched only by that thread (a worker's through
 *    current_worker, another's are thread-local), so they need no lock and
 *    no atomics.
 *  - The depot is a stack per class that is pushed a chain at a time (a
 *    worker's outbox of TASK_DEPOT_BATCH blocks) and emptied whole (one
 *    exchange), never popped one by one: no push ever reads a block on
 *    it, so there is no ABA.  Its head word packs the top
 *    block's address (shifted up 16) and the number of blocks (low 16).
 *  - A block on a list or in the depot is a block of its class carved
 *    from a slab and not given back to it (task_slab.h); under
 *    AddressSanitizer all of it but the link is poisoned.
 *  - The class of a task is a function of its size, kept in its state
 *    (task.h) from spawn: the freeing thread finds the allocating one's.
 *  - A thread holds at most TASK_CACHE_BLOCKS blocks that it freed itself,
 *    plus what it took from a depot (at most depot_max of a class per
 *    take) until it spawns them: a take is whole, so a thread that takes
 *    a depot a burst left full holds up to TASK_DEPOT_BYTES of that class.
 *  - A worker empties its lists as it exits (task_cache_drain) and clears
 *    current_worker after; another thread's lists are emptied at its exit
 *    (a thread-specific key's destructor); the depot when its runtime is
 *    freed (task_depot_drain), after its workers are gone.
 */
#ifndef BLITZ_CORE_TASK_CACHE_H
#define BLITZ_CORE_TASK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define TASK_CACHE_MAX_BYTES	512	/* larger tasks are not cached */
#define TASK_CACHE_BLOCKS	256	/* a thread's lists take its frees while they hold fewer (all classes) */
#define TASK_CACHE_CLASSES	28	/* 16-byte steps from 88 to 520 bytes (task_cache.c) */

/*
 * The classes are 16-byte steps of a task's size (TASK_BYTES: header,
 * state, cold part), 88 to 520 bytes: the steps of glibc's chunks, which
 * the blocks once were.  A class's block is its size rounded up to a
 * cache line (task_slab.h), so several classes share a block size.
 */
static inline unsigned task_class_of(size_t bytes)
{
	return (unsigned)((bytes + 8 + 15) / 16 - 6);
}

/* task_class_bytes - the largest task of class @c. */
static inline size_t task_class_bytes(unsigned c)
{
	return 16 * (c + 6) - 8;
}

#define TASK_DEPOT_BYTES	(4u << 20)	/* what a depot may hold per class */
#define TASK_DEPOT_BATCH	64		/* a worker's blocks go to the depot this many at a time */

struct task_block {
	struct task_block *next;
};

struct task_cache {
	uint32_t len;				/* blocks on all the lists */
	struct task_block *head[TASK_CACHE_CLASSES];
};

/*
 * A worker's blocks on their way to the depot: a chain per class, pushed
 * whole (one compare-and-swap) when it holds TASK_DEPOT_BATCH.
 */
struct task_outbox {
	struct task_block *head[TASK_CACHE_CLASSES], *tail[TASK_CACHE_CLASSES];
	uint32_t n[TASK_CACHE_CLASSES];
};

/* A runtime's depot: per class, (top block << 16) | blocks; 0 when empty. */
struct task_depot {
	_Atomic uint64_t head[TASK_CACHE_CLASSES];
};

struct blitz_worker;
struct blitz_runtime;
struct blitz_task;

void task_cache_init(struct task_cache *tc);
void task_outbox_init(struct task_outbox *o);
void *task_cache_alloc(struct blitz_runtime *rt, unsigned c, size_t bytes);
void task_cache_free(struct blitz_task *t);
void task_cache_drain(struct blitz_worker *w);
void task_depot_init(struct task_depot *d);
void task_depot_drain(struct task_depot *d);
uint32_t task_depot_blocks(struct task_depot *d, size_t bytes);
uint32_t task_depot_max(size_t bytes);
void task_cache_thread_exit(void);
uint32_t task_cache_thread_blocks(void);

#endif
