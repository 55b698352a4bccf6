// SPDX-License-Identifier: MIT
/*
 * core/sched/task_cache.c - each worker's free lists of task blocks
 * (task_cache.h has the rules; docs/scheduler.md, "Task memory", the why).
 *
 * The classes follow malloc's own granularity (glibc, 64-bit): a request
 * of r bytes takes a chunk of r + 8 rounded up to 16.  Class c is the chunk
 * of 96 + 16c bytes and its block the largest request that chunk serves,
 * so a class's block costs malloc no more than the task's own size would,
 * and a miss on a small task still lands in malloc's fast bins (rounding
 * up to coarser classes moved the 88-byte tasks of spawn_many_local out of
 * them and cost about 170 instructions per task).  A worker keeps at most
 * TASK_CACHE_BLOCKS blocks of at most 520 bytes: 130 KiB.
 */
#include <stdlib.h>
#include "task.h"
#include "task_cache.h"
#include "worker.h"

#if defined(__SANITIZE_ADDRESS__)
#define TASK_CACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TASK_CACHE_ASAN 1
#endif
#endif

#ifdef TASK_CACHE_ASAN
#include <sanitizer/asan_interface.h>
/* A cached block stays a live malloc block: poison it so a use after free is still caught. */
#define block_poison(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define block_unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define block_poison(p, n)	((void)(p), (void)(n))
#define block_unpoison(p, n)	((void)(p), (void)(n))
#endif

static inline unsigned class_of(size_t bytes)
{
	return (unsigned)((bytes + 8 + 15) / 16 - 6);
}

static inline size_t class_bytes(unsigned c)
{
	return 16 * (c + 6) - 8;
}

_Static_assert(sizeof(struct blitz_task) + 8 + 15 >= 6 * 16, "the smallest task is class 0");
_Static_assert((TASK_CACHE_MAX_BYTES + 8 + 15) / 16 - 6 == TASK_CACHE_CLASSES - 1,
	       "TASK_CACHE_CLASSES covers TASK_CACHE_MAX_BYTES");

void task_cache_init(struct task_cache *tc)
{
	tc->len = 0;
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++)
		tc->head[c] = NULL;
}

/*
 * task_cache_alloc - a block for a task of @bytes (header and state): the
 * calling worker's cached block of its class, else malloc of the class's
 * size (from any thread: whoever frees the task may cache it), or of
 * @bytes itself beyond the largest class.
 */
void *task_cache_alloc(size_t bytes)
{
	struct blitz_worker *w = current_worker;
	struct task_block *b;
	unsigned c;

	if (bytes > TASK_CACHE_MAX_BYTES)
		return malloc(bytes);
	c = class_of(bytes);
	if (!w)
		return malloc(class_bytes(c));
	b = w->task_cache.head[c];
	if (!b) {
		stat_inc(w, task_cache_misses);
		return malloc(class_bytes(c));
	}
	w->task_cache.head[c] = b->next;
	w->task_cache.len--;
	block_unpoison(b, class_bytes(c));
	stat_inc(w, task_cache_hits);
	return b;
}

/*
 * task_cache_free - @t's last reference is gone: keep its block on the
 * calling worker's list of its class while the worker holds fewer than
 * TASK_CACHE_BLOCKS, else free().
 */
void task_cache_free(struct blitz_task *t)
{
	struct blitz_worker *w = current_worker;
	size_t bytes = sizeof(*t) + t->state_size;
	struct task_block *b = (struct task_block *)t;
	unsigned c;

	if (!w || bytes > TASK_CACHE_MAX_BYTES) {
		free(t);
		return;
	}
	if (w->task_cache.len >= TASK_CACHE_BLOCKS) {
		free(t);
		return;
	}
	c = class_of(bytes);
	b->next = w->task_cache.head[c];
	w->task_cache.head[c] = b;
	w->task_cache.len++;
	block_poison(b + 1, class_bytes(c) - sizeof(*b));
}

/* task_cache_drain - @w's thread, as it exits: give every cached block back. */
void task_cache_drain(struct blitz_worker *w)
{
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++) {
		struct task_block *b;

		while ((b = w->task_cache.head[c])) {
			w->task_cache.head[c] = b->next;
			block_unpoison(b, class_bytes(c));
			free(b);
		}
	}
	w->task_cache.len = 0;
}
