/* SPDX-License-Identifier: MIT */
/*
 * core/sched/task_cache.h - each worker's free lists of task blocks
 * (docs/scheduler.md, "Task memory").
 *
 * A task of up to TASK_CACHE_MAX_BYTES (header and state) lives in a block
 * of its size class, whichever thread allocates it; a larger one is a plain
 * malloc of its size.  A block freed on a worker goes to that worker's list
 * of its class, unless the worker caches TASK_CACHE_BLOCKS already; freed
 * anywhere else, or beyond the bound, it goes back to free().  A worker
 * allocates from its own lists first.
 *
 * Invariants:
 *  - The lists are touched only by their worker's thread (through
 *    current_worker), so they need no lock and no atomics.
 *  - A block on a list is a live malloc block of exactly its class's size;
 *    under AddressSanitizer all of it but the link is poisoned.
 *  - The class of a task is a function of its state_size, which never
 *    changes: the freeing thread finds the same class as the allocating one.
 *  - A worker empties its lists as it exits (task_cache_drain) and clears
 *    current_worker after, so nothing is cached after the drain.
 */
#ifndef BLITZ_CORE_TASK_CACHE_H
#define BLITZ_CORE_TASK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define TASK_CACHE_MAX_BYTES	512	/* larger tasks are not cached */
#define TASK_CACHE_BLOCKS	256	/* what one worker may hold, all classes together */
#define TASK_CACHE_CLASSES	28	/* 16-byte steps from 88 to 520 bytes (task_cache.c) */

struct task_block {
	struct task_block *next;
};

struct task_cache {
	uint32_t len;				/* blocks on all the lists */
	struct task_block *head[TASK_CACHE_CLASSES];
};

struct blitz_worker;
struct blitz_task;

void task_cache_init(struct task_cache *tc);
void *task_cache_alloc(size_t bytes);
void task_cache_free(struct blitz_task *t);
void task_cache_drain(struct blitz_worker *w);

#endif
