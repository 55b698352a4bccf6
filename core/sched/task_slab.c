// SPDX-License-Identifier: MIT
/*
 * core/sched/task_slab.c - the task cache's blocks, carved from slabs
 * (task_slab.h has the rules and the why).
 *
 * One slab is being carved at a time, for every thread, under a lock: a
 * carve is a cache miss (task_cache.c, alloc_slow), which a spawn meets
 * only while a burst is larger than any burst before it, so the lock is
 * taken a few thousand times in a program's life, not per spawn.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "../compiler.h"
#include "task_slab.h"

struct task_slab {
	/* blocks carved and not given back, + 1 while being carved */
	_Atomic uint32_t live;
};

_Static_assert(sizeof(struct task_slab) <= TASK_BLOCK_ALIGN, "the header fits its line");
_Static_assert((TASK_SLAB_BYTES & (TASK_SLAB_BYTES - 1)) == 0, "slabs align to their size");

static pthread_mutex_t carve_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t slabs;		/* allocated and not freed (for tests) */
static struct task_slab *carving;	/* under carve_lock */
static size_t carve_off;		/* under carve_lock: the next block's offset */

/*
 * slab_put - one reference to @s is gone; the last frees it.  Acq_rel:
 * every thread's uses of its blocks (each ended by the put that gave the
 * block back, release) happen before the free (the last put, acquire).
 */
static void slab_put(struct task_slab *s)
{
	if (atomic_fetch_sub_explicit(&s->live, 1, memory_order_acq_rel) == 1) {
		mem_unpoison(s, TASK_SLAB_BYTES);
		free(s);
		/* Relaxed: a count for tests, read when the test knows it is still. */
		atomic_fetch_sub_explicit(&slabs, 1, memory_order_relaxed);
	}
}

/* slab_new - a slab to carve, its carving reference held; NULL if out of memory. */
static struct task_slab *slab_new(void)
{
	struct task_slab *s = aligned_alloc(TASK_SLAB_BYTES, TASK_SLAB_BYTES);

	if (!s)
		return NULL;
	atomic_init(&s->live, 1);
	atomic_fetch_add_explicit(&slabs, 1, memory_order_relaxed);
	mem_poison((char *)s + TASK_BLOCK_ALIGN, TASK_SLAB_BYTES - TASK_BLOCK_ALIGN);
	return s;
}

/*
 * A fork copies carve_lock as it is: held by a thread that does not exist
 * in the child, the child's first miss would wait for ever.  Holding it
 * across the fork also keeps the child from seeing a half-made switch of
 * slabs (the old one put, @carving not yet the new one).
 */
static void carve_lock_take(void)
{
	pthread_mutex_lock(&carve_lock);
}

static void carve_lock_give(void)
{
	pthread_mutex_unlock(&carve_lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_register(void)
{
	pthread_atfork(carve_lock_take, carve_lock_give, carve_lock_give);
}

/*
 * task_slab_alloc - a block of @bytes (a multiple of TASK_BLOCK_ALIGN, at
 * most a slab less its header line) on lines of its own, for @used of
 * them (the rest stays poisoned under AddressSanitizer); NULL if out of
 * memory.
 */
void *task_slab_alloc(size_t bytes, size_t used)
{
	char *b = NULL;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&carve_lock);
	if (!carving || carve_off + bytes > TASK_SLAB_BYTES) {
		struct task_slab *s = slab_new();

		if (!s)
			goto out;
		if (carving)
			slab_put(carving);	/* carved out: only its blocks hold it now */
		carving = s;
		carve_off = TASK_BLOCK_ALIGN;
	}
	b = (char *)carving + carve_off;
	carve_off += bytes;
	/* Relaxed: the carving reference keeps @live above zero meanwhile. */
	atomic_fetch_add_explicit(&carving->live, 1, memory_order_relaxed);
	mem_unpoison(b, used);
out:
	pthread_mutex_unlock(&carve_lock);
	return b;
}

/* task_slab_free - @block (of @bytes) goes back to its slab. */
void task_slab_free(void *block, size_t bytes)
{
	mem_poison(block, bytes);
	slab_put((struct task_slab *)((uintptr_t)block & ~(uintptr_t)(TASK_SLAB_BYTES - 1)));
}

/* task_slab_count - the slabs allocated and not yet freed (for tests). */
uint32_t task_slab_count(void)
{
	return atomic_load_explicit(&slabs, memory_order_relaxed);
}
