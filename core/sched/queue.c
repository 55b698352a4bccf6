// SPDX-License-Identifier: MIT
/*
 * core/sched/queue.c - the per-worker lock-free ring with the three-phase steal.
 *
 * Decisions (docs/scheduler.md, "Decisions"): the head is a u64 of two u32
 * halves, and the steal's release CAS retries until it succeeds (as
 * Tokio's).  Abandoning the steal when the release CAS fails would leave steal != real forever: the victim could
 * never overflow again and no thief could ever steal from it again, and the
 * claimed tasks would have been copied already (so abandoning cannot give
 * them back).  tests/model/ring.pml checks both choices.
 *
 * Memory ordering, in one place:
 *  - buffer slots are relaxed atomics: they are published by the release
 *    store of tail (owner -> thieves), and handed back for reuse by the
 *    acq_rel release CAS of a steal (thief -> owner, observed by the
 *    owner's acquire load of head).
 *  - tail: written only by the owner, so the owner reads it relaxed;
 *    thieves load it acquire to see the slots written before it.
 *  - head: every CAS is acq_rel so that a claim observes the slots the
 *    owner published and a release hands the slots back to the owner.
 */
#include <errno.h>
#include "queue.h"
#include "inject.h"
#include "../probes.h"
#include "task.h"

void queue_init(struct blitz_queue *q)
{
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	for (unsigned i = 0; i < QUEUE_CAPACITY; i++)
		atomic_init(&q->buffer[i], NULL);
}

static inline void slot_store(struct blitz_queue *q, uint32_t pos, struct blitz_task *t)
{
	/* Relaxed: published by the release store of tail that follows. */
	atomic_store_explicit(&q->buffer[pos & QUEUE_MASK], t, memory_order_relaxed);
}

static inline struct blitz_task *slot_load(struct blitz_queue *q, uint32_t pos)
{
	/* Relaxed: the caller acquired tail (or wrote the slot itself). */
	return atomic_load_explicit(&q->buffer[pos & QUEUE_MASK], memory_order_relaxed);
}

/*
 * Overflow: move the oldest QUEUE_HALF tasks to the global queue in one lock
 * acquisition.  Only when no steal is in flight (steal == real), so that
 * the CAS from {real, real} to {real + half, real + half} claims the slots
 * from every thief.  Returns false if the CAS lost against a thief.
 */
static bool queue_overflow(struct blitz_queue *q, uint32_t real,
			   struct blitz_inject *inject)
{
	uint64_t expect = queue_pack(real, real);
	uint64_t next = queue_pack(real + QUEUE_HALF, real + QUEUE_HALF);
	struct blitz_task *first, *last;

	/* acq_rel: a success claims the slots away from every thief. */
	if (!atomic_compare_exchange_strong_explicit(&q->head, &expect, next,
						     memory_order_acq_rel,
						     memory_order_acquire))
		return false;

	/* The slots are ours: link them and hand the list over at once. */
	first = last = slot_load(q, real);
	for (uint32_t i = 1; i < QUEUE_HALF; i++) {
		struct blitz_task *t = slot_load(q, real + i);

		last->next = t;
		last = t;
	}
	last->next = NULL;
	inject_push_batch(inject, first, last, QUEUE_HALF);
	return true;
}

enum queue_push_result queue_push(struct blitz_queue *q, struct blitz_task *t,
				  struct blitz_inject *inject)
{
	/* Relaxed: only this thread (the owner) writes tail. */
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	enum queue_push_result res = QUEUE_PUSHED;

	for (;;) {
		/* Acquire: a thief's release CAS handed its slots back. */
		uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);
		uint32_t steal = queue_steal_pos(head), real = queue_real_pos(head);

		if (tail - steal < QUEUE_CAPACITY)
			break;
		if (steal != real) {
			/* Full while a thief copies: it owns [steal, real). */
			inject_push(inject, t);
			return QUEUE_TO_GLOBAL;
		}
		if (queue_overflow(q, real, inject)) {
			res = QUEUE_OVERFLOWED;
			break;
		}
		/* Lost against a thief: look again. */
	}
	slot_store(q, tail, t);
	/* Release: thieves that acquire tail see the slot. */
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
	return res;
}

struct blitz_task *queue_pop(struct blitz_queue *q)
{
	/*
	 * Acquire: only a first guess for the CAS below (relaxed would do: the
	 * owner pops slots it wrote itself).
	 */
	uint64_t head = atomic_load_explicit(&q->head, memory_order_acquire);

	for (;;) {
		uint32_t steal = queue_steal_pos(head), real = queue_real_pos(head);
		/* Relaxed: the owner reads its own tail. */
		uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
		uint64_t next;

		if (real == tail)
			return NULL;
		/* With no steal in flight both halves move; else only real. */
		next = steal == real ? queue_pack(real + 1, real + 1)
				     : queue_pack(steal, real + 1);
		/* acq_rel: orders the claim against a concurrent thief's CAS. */
		if (atomic_compare_exchange_weak_explicit(&q->head, &head, next,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return slot_load(q, real);
	}
}

/*
 * Phase 1, claim: CAS {s, r} -> {s, r + n}.  Fails (returns 0) if a steal is
 * already in flight (s != r) or there is nothing to take; a lost CAS
 * against the owner's pop or another thief is retried with the new head.
 */
static uint32_t steal_claim(struct blitz_queue *src, uint32_t max,
			    uint32_t *first, int *fail)
{
	/*
	 * Acquire: pairs with the release of the head CAS that wrote it (the
	 * owner's queue_pop, a thief's), so the tail loaded below is not older.
	 */
	uint64_t head = atomic_load_explicit(&src->head, memory_order_acquire);

	for (;;) {
		uint32_t steal = queue_steal_pos(head), real = queue_real_pos(head);
		uint32_t tail, n;

		if (steal != real) {
			*fail = STEAL_FAIL_BUSY;
			return 0;
		}
		/* Acquire: see the slots the owner published before tail. */
		tail = atomic_load_explicit(&src->tail, memory_order_acquire);
		n = tail - real;
		if (n == 0 || n > QUEUE_CAPACITY) {
			/* n > CAPACITY: tail read before a newer head; empty for us. */
			*fail = STEAL_FAIL_EMPTY;
			return 0;
		}
		n -= n / 2;		/* half, rounded up */
		if (n > max)
			n = max;
		/* acq_rel, as every head CAS (see the top); tail's acquire covers the slots. */
		if (atomic_compare_exchange_weak_explicit(&src->head, &head,
							  queue_pack(steal, real + n),
							  memory_order_acq_rel,
							  memory_order_acquire)) {
			*first = real;
			return n;
		}
	}
}

/*
 * Phase 3, release: CAS {s, r'} -> {r', r'}, retried until it succeeds: the
 * owner's pops may move r' meanwhile, and nobody else can move s (only the
 * thread that claimed may release).
 */
static void steal_release(struct blitz_queue *src)
{
	/* Acquire: only a first guess; the acq_rel CAS below hands the slots back. */
	uint64_t head = atomic_load_explicit(&src->head, memory_order_acquire);

	for (;;) {
		uint32_t real = queue_real_pos(head);

		/* acq_rel: hand the copied slots back to the owner. */
		if (atomic_compare_exchange_weak_explicit(&src->head, &head,
							  queue_pack(real, real),
							  memory_order_acq_rel,
							  memory_order_acquire))
			return;
	}
}

/*
 * queue_steal_into - move up to half of @src (at most @max) into @dst, the
 * calling thread's own ring.  Returns one stolen task to run at once (the
 * rest are pushed to @dst) and sets *taken to the total moved; on failure
 * returns NULL with *fail set to a STEAL_FAIL_* reason.
 */
struct blitz_task *queue_steal_into(struct blitz_queue *src, struct blitz_queue *dst,
				    uint32_t max, uint32_t *taken, int *fail)
{
	/* Relaxed: dst is the caller's own ring. */
	uint32_t dst_tail = atomic_load_explicit(&dst->tail, memory_order_relaxed);
	/*
	 * Acquire: pairs with a thief's steal_release on our ring (as in
	 * queue_push), so the slots it copied out are free to overwrite.
	 */
	uint64_t dst_head = atomic_load_explicit(&dst->head, memory_order_acquire);
	uint32_t first, n;

	*taken = 0;
	/* Room for a full half in our own ring, or do not steal at all. */
	if (dst_tail - queue_steal_pos(dst_head) > QUEUE_HALF) {
		*fail = STEAL_FAIL_NO_ROOM;
		return NULL;
	}
	if (max > QUEUE_HALF)
		max = QUEUE_HALF;
	n = steal_claim(src, max, &first, fail);
	if (n == 0)
		return NULL;

	/* Phase 2, copy: the slots [first, first + n) are ours until release. */
	for (uint32_t i = 0; i + 1 < n; i++)
		slot_store(dst, dst_tail + i, slot_load(src, first + i));
	struct blitz_task *ret = slot_load(src, first + n - 1);

	steal_release(src);
	if (n > 1)
		/* Release: publish the copied slots to our own thieves. */
		atomic_store_explicit(&dst->tail, dst_tail + n - 1, memory_order_release);
	*taken = n;
	return ret;
}

bool queue_is_empty(const struct blitz_queue *q)
{
	/*
	 * seq_cst: the parking protocol's final check (core/sched/idle.c) needs this
	 * load ordered after the parker's seq_cst update of the idle state.
	 */
	uint64_t head = atomic_load(&q->head);
	uint32_t tail = atomic_load(&q->tail);

	return tail == queue_real_pos(head);
}
