/* SPDX-License-Identifier: MIT */
/*
 * core/sched/inject.h - the global injection queue: a mutex-protected intrusive
 * list (through task->next) with an atomic length for lock-free emptiness
 * checks.  Spawns from outside the workers, ring overflows and wakes during
 * a park transition land here; workers take batches into their 32-slot
 * batch buffer.
 */
#ifndef BLITZ_CORE_INJECT_H
#define BLITZ_CORE_INJECT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include "../compiler.h"

struct blitz_task;

struct blitz_inject {
	alignas(CACHE_LINE) _Atomic size_t len;
	pthread_mutex_t lock;
	struct blitz_task *head;
	struct blitz_task *tail;
};

void inject_init(struct blitz_inject *q);
void inject_destroy(struct blitz_inject *q);
void inject_forget(struct blitz_inject *q);
void inject_push(struct blitz_inject *q, struct blitz_task *t);
void inject_push_batch(struct blitz_inject *q, struct blitz_task *first,
		       struct blitz_task *last, size_t n);
size_t inject_pop_batch(struct blitz_inject *q, struct blitz_task **out, size_t max);
struct blitz_task *inject_pop(struct blitz_inject *q);

static inline size_t inject_len(struct blitz_inject *q)
{
	/*
	 * seq_cst: the emptiness check in the parking protocol must be ordered
	 * after the parker's seq_cst update of the idle state (core/sched/idle.c);
	 * on x86_64 a seq_cst load is a plain load.
	 */
	return atomic_load(&q->len);
}

static inline bool inject_is_empty(struct blitz_inject *q)
{
	return inject_len(q) == 0;
}

#endif
