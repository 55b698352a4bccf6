// SPDX-License-Identifier: MIT
/*
 * core/sched/task_cache.c - free task blocks: each thread's lists and the
 * runtime's depot (task_cache.h has the rules; docs/scheduler.md, "Task
 * memory", the why).
 *
 * The classes (task_cache.h) are carved from slabs (task_slab.h).  A
 * thread keeps at most TASK_CACHE_BLOCKS blocks of at most 576 bytes
 * that it freed itself (144 KiB), and whatever it took from a depot (at
 * most TASK_DEPOT_BYTES per class) until it spawns them.
 */
#include <pthread.h>
#include <stdlib.h>
#include "../compiler.h"
#include "runtime.h"
#include "task.h"
#include "task_cache.h"
#include "task_slab.h"
#include "worker.h"

/* block_bytes - what a block of class @c takes of its slab (task_slab.h). */
static inline size_t block_bytes(unsigned c)
{
	return TASK_BLOCK_BYTES(task_class_bytes(c));
}

_Static_assert(TASK_BYTES(0) + 8 + 15 >= 6 * 16, "the smallest task is class 0");
_Static_assert(TASK_CACHE_CLASSES <= TASK_CLASS_LARGE, "a class fits the state's bits");
_Static_assert((TASK_CACHE_MAX_BYTES + 8 + 15) / 16 - 6 == TASK_CACHE_CLASSES - 1,
	       "TASK_CACHE_CLASSES covers TASK_CACHE_MAX_BYTES");

void task_cache_init(struct task_cache *tc)
{
	tc->len = 0;
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++)
		tc->head[c] = NULL;
}


/* ---------------------------------------------------------------------- */
/* The depot                                                               */

#define DEPOT_COUNT_BITS	16
#define DEPOT_COUNT_MASK	((1u << DEPOT_COUNT_BITS) - 1)

_Static_assert(TASK_DEPOT_BYTES / TASK_BLOCK_BYTES(16 * 6 - 8) <= DEPOT_COUNT_MASK,
	       "the smallest class's depot count fits in the head word");

static inline uint32_t depot_max(unsigned c)
{
	return (uint32_t)(TASK_DEPOT_BYTES / block_bytes(c));
}

void task_depot_init(struct task_depot *d)
{
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++)
		atomic_init(&d->head[c], 0);
}

/*
 * depot_push - the chain @head..@tail of @n blocks (class @c) onto @d;
 * false if the depot would hold more than depot_max(@c), or @head's
 * address does not fit the head word (above 2^48: never for malloc on
 * Linux today; such a chain goes back to its slabs).  @tail's link is
 * NULL again after a false.  Release: whoever takes the
 * depot sees the links we wrote (and each block's last use, which this
 * thread saw by dropping its last reference).  The exchange that empties
 * it and every later push are read-modify-writes, so one acquire exchange
 * sees every push before it.
 */
static bool depot_push(struct task_depot *d, unsigned c, struct task_block *head,
		       struct task_block *tail, uint32_t n)
{
	uint64_t addr = (uint64_t)(uintptr_t)head;
	/* Relaxed: only a guess at the head; the CAS checks it. */
	uint64_t old = atomic_load_explicit(&d->head[c], memory_order_relaxed), new;

	if (addr >> (64 - DEPOT_COUNT_BITS))
		return false;
	do {
		if ((old & DEPOT_COUNT_MASK) + n > depot_max(c)) {
			/*
			 * A failed CAS may have linked the chain to the depot's
			 * old top: unlink it, or the caller's give-back of the
			 * chain would walk into the depot.
			 */
			tail->next = NULL;
			return false;
		}
		tail->next = (struct task_block *)(uintptr_t)(old >> DEPOT_COUNT_BITS);
		new = addr << DEPOT_COUNT_BITS | ((old & DEPOT_COUNT_MASK) + n);
	} while (!atomic_compare_exchange_weak_explicit(&d->head[c], &old, new,
							 memory_order_release,
							 memory_order_relaxed));
	return true;
}

/* list_adopt - the chain @b of @n blocks becomes @tc's list @c (which is empty). */
static inline void list_adopt(struct task_cache *tc, unsigned c, struct task_block *b, uint32_t n)
{
	tc->head[c] = b;
	tc->len += n;
}

/*
 * depot_take - empty @d's stack of class @c into @tc's list of it (which
 * is empty); returns the blocks taken.  Acquire: see depot_push.
 */
static uint32_t depot_take(struct task_depot *d, unsigned c, struct task_cache *tc)
{
	uint64_t x;

	/* Relaxed: an empty depot is the common miss; no exchange for it. */
	if (!atomic_load_explicit(&d->head[c], memory_order_relaxed))
		return 0;
	x = atomic_exchange_explicit(&d->head[c], 0, memory_order_acquire);
	list_adopt(tc, c, (struct task_block *)(uintptr_t)(x >> DEPOT_COUNT_BITS),
		   (uint32_t)(x & DEPOT_COUNT_MASK));
	return (uint32_t)(x & DEPOT_COUNT_MASK);
}

/* outbox_clear - @o's chain of class @c was taken (or freed): empty. */
static inline void outbox_clear(struct task_outbox *o, unsigned c)
{
	o->head[c] = o->tail[c] = NULL;
	o->n[c] = 0;
}

static void free_list(struct task_block *b, unsigned c)
{
	while (b) {
		struct task_block *next = b->next;

		task_slab_free(b, block_bytes(c));
		b = next;
	}
}

void task_outbox_init(struct task_outbox *o)
{
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++)
		outbox_clear(o, c);
}

/* task_depot_drain - the runtime is being freed, its workers gone: free every block. */
void task_depot_drain(struct task_depot *d)
{
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++) {
		uint64_t x = atomic_exchange_explicit(&d->head[c], 0, memory_order_acquire);

		free_list((struct task_block *)(uintptr_t)(x >> DEPOT_COUNT_BITS), c);
	}
}

/* task_depot_blocks - what @d holds of the class of tasks of @bytes (for tests). */
uint32_t task_depot_blocks(struct task_depot *d, size_t bytes)
{
	/* Relaxed: a snapshot. */
	return (uint32_t)(atomic_load_explicit(&d->head[task_class_of(bytes)], memory_order_relaxed) &
			  DEPOT_COUNT_MASK);
}

/* task_depot_max - the most a depot holds of the class of tasks of @bytes. */
uint32_t task_depot_max(size_t bytes)
{
	return depot_max(task_class_of(bytes));
}

/* ---------------------------------------------------------------------- */
/* The lists of a thread that is not a worker                              */

/*
 * initial-exec: libblitz is loaded at start-up (as hist_ready_polls).
 * outside_state: OUTSIDE_NEW until the thread's first use registers the
 * key; OUTSIDE_DEAD once the key's destructor has given the lists back
 * (another destructor may still spawn or free a task after ours: that
 * thread then carves blocks and gives them back to their slabs, and
 * nothing is left behind).
 */
enum { OUTSIDE_NEW, OUTSIDE_LIVE, OUTSIDE_DEAD };
static __thread struct task_cache outside_cache __attribute__((tls_model("initial-exec")));
static __thread unsigned char outside_state __attribute__((tls_model("initial-exec")));
static pthread_key_t outside_key;
static pthread_once_t outside_once = PTHREAD_ONCE_INIT;
static bool outside_key_ok;

/* The thread exits: give its blocks back (the key's destructor, on that thread). */
static void outside_exit(void *unused)
{
	(void)unused;
	outside_state = OUTSIDE_DEAD;
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++) {
		free_list(outside_cache.head[c], c);
		outside_cache.head[c] = NULL;
	}
	outside_cache.len = 0;
}

/* task_cache_thread_exit - what the key's destructor does (tests call it). */
void task_cache_thread_exit(void)
{
	outside_exit(NULL);
}

/* task_cache_thread_blocks - what the calling thread's lists hold (for tests). */
uint32_t task_cache_thread_blocks(void)
{
	return outside_cache.len;
}

static void outside_key_create(void)
{
	outside_key_ok = pthread_key_create(&outside_key, outside_exit) == 0;
}

/*
 * outside - the calling thread's lists, or NULL if they could not be
 * given back at its exit (no key, or after its destructor ran): then
 * nothing is kept.  A non-NULL value for the key makes its destructor run
 * when the thread exits.
 */
static struct task_cache *outside(void)
{
	if (__builtin_expect(outside_state != OUTSIDE_LIVE, 0)) {
		if (outside_state == OUTSIDE_DEAD)
			return NULL;
		pthread_once(&outside_once, outside_key_create);
		if (!outside_key_ok || pthread_setspecific(outside_key, &outside_cache))
			return NULL;
		outside_state = OUTSIDE_LIVE;
	}
	return &outside_cache;
}

/* ---------------------------------------------------------------------- */
/* Allocation and free                                                     */

/* list_pop - the first block of @tc's list @c (there is one), unpoisoned. */
static inline void *list_pop(struct task_cache *tc, unsigned c)
{
	struct task_block *b = tc->head[c];

	tc->head[c] = b->next;
	tc->len--;
	mem_unpoison(b, task_class_bytes(c));
	return b;
}

/* list_push - @b onto @tc's list @c, poisoned but for its link. */
static inline void list_push(struct task_cache *tc, unsigned c, struct task_block *b)
{
	b->next = tc->head[c];
	tc->head[c] = b;
	tc->len++;
	mem_poison(b + 1, task_class_bytes(c) - sizeof(*b));
}

/*
 * alloc_slow - @tc's list @c is empty (or @tc is NULL: a thread whose
 * lists could not be set up): a worker's own outbox chain of the class,
 * else the whole depot's blocks, else a new block from a slab.  On a
 * worker (@w), a block from the outbox or the depot counts as a hit, a
 * new one as a miss.
 */
static __attribute__((noinline)) void *alloc_slow(struct blitz_runtime *rt, struct blitz_worker *w,
						  struct task_cache *tc, unsigned c)
{
	if (w && w->task_outbox.head[c]) {
		/* Our own chain bound for the depot: no atomic, and warm. */
		struct task_outbox *o = &w->task_outbox;

		list_adopt(tc, c, o->head[c], o->n[c]);
		outbox_clear(o, c);
		stat_inc(w, task_cache_hits);
		return list_pop(tc, c);
	}
	if (tc && depot_take(&rt->depot, c, tc)) {
		if (w)
			stat_inc(w, task_cache_hits);
		return list_pop(tc, c);
	}
	if (w)
		stat_inc(w, task_cache_misses);
	return task_slab_alloc(block_bytes(c), task_class_bytes(c));
}

/* alloc_outside - task_cache_alloc on a thread that is not a worker. */
static __attribute__((noinline)) void *alloc_outside(struct blitz_runtime *rt, unsigned c)
{
	struct task_cache *tc = outside();

	if (tc && tc->head[c])
		return list_pop(tc, c);
	return alloc_slow(rt, NULL, tc, c);
}

/*
 * task_cache_alloc - a block for a task of @bytes (TASK_BYTES: header,
 * state, cold part) of class @c (task_class, or TASK_CLASS_LARGE) that
 * is spawned into @rt: from the calling thread's
 * list of its class, else from @rt's depot of it, else a new block of the
 * class from a slab; beyond the largest class, a malloc with the cold
 * part in front (task.h), and the address returned is the header's.  A
 * worker's hit is the short path (no call, no stack frame); the rest is
 * out of line.
 */
void *task_cache_alloc(struct blitz_runtime *rt, unsigned c, size_t bytes)
{
	struct blitz_worker *w = current_worker;

	if (c == TASK_CLASS_LARGE) {
		char *b = malloc(bytes - sizeof(struct task_cold) + TASK_COLD_FRONT);

		return b ? b + TASK_COLD_FRONT : NULL;
	}
	if (__builtin_expect(!w, 0))
		return alloc_outside(rt, c);
	if (__builtin_expect(!w->task_cache.head[c], 0))
		return alloc_slow(rt, w, &w->task_cache, c);
	stat_inc(w, task_cache_hits);
	return list_pop(&w->task_cache, c);
}

/*
 * free_slow - the calling worker's lists are full, or the caller is not
 * a worker: a worker's block goes onto its outbox chain of the class,
 * which goes to its runtime's depot (or, if that is full, back to the
 * slabs) when it holds TASK_DEPOT_BATCH; another thread's onto its own
 * list while it has room; anything else back to its slab.
 */
static __attribute__((noinline)) void free_slow(struct blitz_worker *w, struct task_block *b,
						unsigned c)
{
	struct task_outbox *o;

	if (!w) {
		struct task_cache *tc = outside();

		if (tc && tc->len < TASK_CACHE_BLOCKS)
			list_push(tc, c, b);
		else
			task_slab_free(b, block_bytes(c));
		return;
	}
	o = &w->task_outbox;
	b->next = o->head[c];
	if (!o->head[c])
		o->tail[c] = b;
	o->head[c] = b;
	mem_poison(b + 1, task_class_bytes(c) - sizeof(*b));
	if (++o->n[c] < TASK_DEPOT_BATCH)
		return;
	if (!depot_push(&w->rt->depot, c, o->head[c], o->tail[c], o->n[c]))
		free_list(o->head[c], c);
	outbox_clear(o, c);
}

/*
 * task_cache_free - @t's last reference is gone: onto the calling
 * thread's list of its class while that thread holds fewer than
 * TASK_CACHE_BLOCKS; else, on a worker, into its runtime's depot; else
 * back to its slab (a task larger than the classes: free()).
 */
void task_cache_free(struct blitz_task *t)
{
	struct blitz_worker *w = current_worker;
	unsigned c = task_class(t);

	if (c == TASK_CLASS_LARGE) {
		free((char *)t - TASK_COLD_FRONT);
		return;
	}
	if (__builtin_expect(w && w->task_cache.len < TASK_CACHE_BLOCKS, 1))
		list_push(&w->task_cache, c, (struct task_block *)t);
	else
		free_slow(w, (struct task_block *)t, c);
}

/* task_cache_drain - @w's thread, as it exits: give every cached block back. */
void task_cache_drain(struct blitz_worker *w)
{
	for (unsigned c = 0; c < TASK_CACHE_CLASSES; c++) {
		free_list(w->task_cache.head[c], c);
		w->task_cache.head[c] = NULL;
		free_list(w->task_outbox.head[c], c);
	}
	w->task_cache.len = 0;
	task_outbox_init(&w->task_outbox);
}
