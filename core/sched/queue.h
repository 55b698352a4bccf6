/* SPDX-License-Identifier: MIT */
/*
 * core/sched/queue.h - the per-worker 256-slot lock-free ring (docs/scheduler.md).
 *
 * head packs two 32-bit positions in one atomic word:
 *     head = steal << 32 | real
 * real is where the next pop or claim starts; steal lags behind real while
 * a steal is copying the slots [steal, real).  tail is written only by the
 * owner.  Positions are free-running u32 counters (index = pos & MASK);
 * 32-bit halves make a full wrap during one CAS window impossible in
 * practice (16-bit halves would wrap after 65,536 operations).
 *
 * Invariants: steal <= real <= tail (mod 2^32), tail - steal <= CAPACITY.
 * The owner never writes a slot in [steal, tail): push checks
 * tail - steal < CAPACITY, so a steal in flight keeps its slots.
 */
#ifndef BLITZ_CORE_QUEUE_H
#define BLITZ_CORE_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <blitz/config.h>
#include "constants.h"
#include "../compiler.h"

#define QUEUE_CAPACITY	BLITZ_QUEUE_CAPACITY
#define QUEUE_MASK	(QUEUE_CAPACITY - 1)
#define QUEUE_HALF	(QUEUE_CAPACITY / 2)

struct blitz_task;
struct blitz_inject;

struct blitz_queue {
	alignas(CACHE_LINE) _Atomic uint64_t head;
	alignas(CACHE_LINE) _Atomic uint32_t tail;
	alignas(CACHE_LINE) _Atomic(struct blitz_task *) buffer[QUEUE_CAPACITY];
};

static inline uint64_t queue_pack(uint32_t steal, uint32_t real)
{
	return (uint64_t)steal << 32 | real;
}

static inline uint32_t queue_steal_pos(uint64_t head) { return (uint32_t)(head >> 32); }
static inline uint32_t queue_real_pos(uint64_t head) { return (uint32_t)head; }

/* Result of queue_push: where the task ended up. */
enum queue_push_result {
	QUEUE_PUSHED = 0,	/* in the ring */
	QUEUE_TO_GLOBAL = 1,	/* ring full with a steal in flight: task went to the global queue */
	QUEUE_OVERFLOWED = 2,	/* ring full: QUEUE_HALF tasks moved to the global queue, task in the ring */
};

void queue_init(struct blitz_queue *q);
enum queue_push_result queue_push(struct blitz_queue *q, struct blitz_task *t,
				  struct blitz_inject *inject);
struct blitz_task *queue_pop(struct blitz_queue *q);
struct blitz_task *queue_steal_into(struct blitz_queue *src, struct blitz_queue *dst,
				    uint32_t max, uint32_t *taken, int *fail);

/* queue_len - how many tasks @q holds; inline: the owner asks on every push. */
static inline uint32_t queue_len(const struct blitz_queue *q)
{
	/* Relaxed: a hint (for notify decisions and statistics). */
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint32_t n = tail - queue_real_pos(head);

	return n > QUEUE_CAPACITY ? 0 : n;
}

bool queue_is_empty(const struct blitz_queue *q);

#endif
