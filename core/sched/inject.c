// SPDX-License-Identifier: MIT
/*
 * core/sched/inject.c - the global injection queue.
 *
 * len is changed only under the lock; it is atomic so that workers can
 * test emptiness without taking the lock.  Writers use seq_cst stores so
 * that a producer's push is ordered before its later check of the idle
 * state (the notify side of the parking protocol, core/sched/idle.c).
 */
#include "inject.h"
#include "task.h"

void inject_init(struct blitz_inject *q)
{
	atomic_init(&q->len, 0);
	pthread_mutex_init(&q->lock, NULL);
	q->head = q->tail = NULL;
}

/*
 * inject_forget - empty @q without touching what it links: for
 * blitz_runtime_free once its workers are joined, whose drops free tasks
 * that may still be linked here (a later push would write into the
 * freed tail).
 */
void inject_forget(struct blitz_inject *q)
{
	pthread_mutex_lock(&q->lock);
	q->head = q->tail = NULL;
	/* seq_cst: as every store of len (the file comment); nobody waits on it here. */
	atomic_store(&q->len, 0);
	pthread_mutex_unlock(&q->lock);
}

void inject_destroy(struct blitz_inject *q)
{
	pthread_mutex_destroy(&q->lock);
}

void inject_push_batch(struct blitz_inject *q, struct blitz_task *first,
		       struct blitz_task *last, size_t n)
{
	last->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = first;
	else
		q->head = first;
	q->tail = last;
	/* seq_cst: see the file comment (the load is ours: len changes under the lock). */
	atomic_store(&q->len, atomic_load_explicit(&q->len, memory_order_relaxed) + n);
	pthread_mutex_unlock(&q->lock);
}

void inject_push(struct blitz_inject *q, struct blitz_task *t)
{
	inject_push_batch(q, t, t, 1);
}

size_t inject_pop_batch(struct blitz_inject *q, struct blitz_task **out, size_t max)
{
	size_t n = 0;

	/* Relaxed: a hint; the real check is under the lock. */
	if (atomic_load_explicit(&q->len, memory_order_relaxed) == 0)
		return 0;
	pthread_mutex_lock(&q->lock);
	while (n < max && q->head) {
		out[n++] = q->head;
		q->head = q->head->next;
	}
	if (!q->head)
		q->tail = NULL;
	/*
	 * Relaxed: under the lock; only pushes take part in the idle protocol
	 * (a stale, larger len only makes a reader look for nothing).
	 */
	atomic_store_explicit(&q->len,
			      atomic_load_explicit(&q->len, memory_order_relaxed) - n,
			      memory_order_relaxed);
	pthread_mutex_unlock(&q->lock);
	return n;
}

struct blitz_task *inject_pop(struct blitz_inject *q)
{
	struct blitz_task *t = NULL;

	return inject_pop_batch(q, &t, 1) ? t : NULL;
}
