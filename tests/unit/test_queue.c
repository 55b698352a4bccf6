// SPDX-License-Identifier: MIT
/*
 * test_queue.c - the per-worker ring (core/sched/queue.c) and the global queue.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "../../core/sched/inject.h"
#include "../../core/sched/queue.h"
#include "../../core/sched/task.h"
#include "../../probes/blitz_probe_codes.h"
#include "suites.h"

#define NTASKS 4096
static struct blitz_task *tasks;	/* fake tasks: only their addresses matter */
static struct blitz_queue *q, *dst;
static struct blitz_inject inject;

static long id_of(struct blitz_task *t)
{
	return (long)((char *)t - (char *)tasks) / (long)sizeof(struct blitz_task);
}

static struct blitz_task *task_n(long i)
{
	return (struct blitz_task *)((char *)tasks + i * (long)sizeof(struct blitz_task));
}

static void setup(void)
{
	tasks = calloc(NTASKS, sizeof(struct blitz_task));
	q = aligned_alloc(CACHE_LINE, sizeof(*q));
	dst = aligned_alloc(CACHE_LINE, sizeof(*dst));
	ck_assert(tasks && q && dst);
	queue_init(q);
	queue_init(dst);
	inject_init(&inject);
}

static void teardown(void)
{
	inject_destroy(&inject);
	free(tasks);
	free(q);
	free(dst);
}

START_TEST(ring_fifo_order)
{
	for (long i = 0; i < 200; i++)
		ck_assert_int_eq(queue_push(q, task_n(i), &inject), QUEUE_PUSHED);
	ck_assert_uint_eq(queue_len(q), 200);
	for (long i = 0; i < 200; i++)
		ck_assert_int_eq(id_of(queue_pop(q)), i);
	ck_assert_ptr_null(queue_pop(q));
	ck_assert(queue_is_empty(q));
}
END_TEST

START_TEST(ring_wraps_around)
{
	/* Many times around the 256 slots, 100 in flight at a time. */
	long next_in = 0, next_out = 0;

	for (int round = 0; round < 1000; round++) {
		for (int i = 0; i < 100; i++, next_in++)
			queue_push(q, task_n(next_in % NTASKS), &inject);
		for (int i = 0; i < 100; i++, next_out++)
			ck_assert_int_eq(id_of(queue_pop(q)), next_out % NTASKS);
	}
	ck_assert_uint_eq(inject_len(&inject), 0);
}
END_TEST

START_TEST(ring_overflow_moves_half)
{
	struct blitz_task *got[QUEUE_HALF + 1];

	for (long i = 0; i < QUEUE_CAPACITY; i++)
		ck_assert_int_eq(queue_push(q, task_n(i), &inject), QUEUE_PUSHED);
	ck_assert_uint_eq(inject_len(&inject), 0);
	/* The 257th push moves exactly the 128 oldest, in order, in one batch. */
	ck_assert_int_eq(queue_push(q, task_n(QUEUE_CAPACITY), &inject), QUEUE_OVERFLOWED);
	ck_assert_uint_eq(inject_len(&inject), QUEUE_HALF);
	ck_assert_uint_eq(queue_len(q), QUEUE_CAPACITY - QUEUE_HALF + 1);
	ck_assert_uint_eq(inject_pop_batch(&inject, got, QUEUE_HALF + 1), QUEUE_HALF);
	for (long i = 0; i < QUEUE_HALF; i++)
		ck_assert_int_eq(id_of(got[i]), i);
	for (long i = QUEUE_HALF; i <= QUEUE_CAPACITY; i++)
		ck_assert_int_eq(id_of(queue_pop(q)), i);
}
END_TEST

START_TEST(ring_full_with_steal_in_flight_goes_global)
{
	for (long i = 0; i < QUEUE_CAPACITY; i++)
		queue_push(q, task_n(i), &inject);
	/* A thief has claimed [0, 10) and not released: steal=0, real=10. */
	atomic_store(&q->head, queue_pack(0, 10));
	ck_assert_int_eq(queue_push(q, task_n(QUEUE_CAPACITY), &inject), QUEUE_TO_GLOBAL);
	ck_assert_uint_eq(inject_len(&inject), 1);
	ck_assert_int_eq(id_of(inject_pop(&inject)), QUEUE_CAPACITY);
	/* The owner still pops past the claim, never into it. */
	ck_assert_int_eq(id_of(queue_pop(q)), 10);
	ck_assert_uint_eq(queue_steal_pos(atomic_load(&q->head)), 0);
}
END_TEST

static void check_steal_of(uint32_t n, uint32_t max, uint32_t expect)
{
	uint32_t taken;
	int fail;
	struct blitz_task *t;

	queue_init(q);
	queue_init(dst);
	for (long i = 0; i < n; i++)
		queue_push(q, task_n(i), &inject);
	t = queue_steal_into(q, dst, max, &taken, &fail);
	ck_assert_msg(taken == expect, "steal of %u (max %u) took %u, expected %u",
		      n, max, taken, expect);
	/* The oldest `taken`: the ring gets all but the newest, which is returned. */
	ck_assert_int_eq(id_of(t), expect - 1);
	for (long i = 0; i + 1 < expect; i++)
		ck_assert_int_eq(id_of(queue_pop(dst)), i);
	ck_assert_ptr_null(queue_pop(dst));
	for (long i = expect; i < n; i++)
		ck_assert_int_eq(id_of(queue_pop(q)), i);
	ck_assert_ptr_null(queue_pop(q));
	/* Both heads agree again: no steal in flight. */
	ck_assert_uint_eq(queue_steal_pos(atomic_load(&q->head)),
			  queue_real_pos(atomic_load(&q->head)));
}

START_TEST(steal_takes_half_rounded_up_capped)
{
	static const uint32_t sizes[] = { 1, 2, 3, 4, 7, 100, 255, 256 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i], half = n - n / 2;

		check_steal_of(n, QUEUE_HALF, half > QUEUE_HALF ? QUEUE_HALF : half);
	}
	check_steal_of(256, QUEUE_HALF, 128);
}
END_TEST

START_TEST(steal_one_policy_takes_one)
{
	check_steal_of(100, 1, 1);
}
END_TEST

START_TEST(steal_from_empty_or_busy_fails)
{
	uint32_t taken;
	int fail;

	ck_assert_ptr_null(queue_steal_into(q, dst, QUEUE_HALF, &taken, &fail));
	ck_assert_int_eq(fail, STEAL_FAIL_EMPTY);
	queue_push(q, task_n(0), &inject);
	queue_push(q, task_n(1), &inject);
	atomic_store(&q->head, queue_pack(0, 1));	/* a steal in flight */
	ck_assert_ptr_null(queue_steal_into(q, dst, QUEUE_HALF, &taken, &fail));
	ck_assert_int_eq(fail, STEAL_FAIL_BUSY);
	ck_assert_uint_eq(taken, 0);
}
END_TEST

/*
 * Owner pushing and popping against several concurrent thieves: every
 * task is delivered exactly once.  Each thief drains its own ring.
 */
#define THIEVES 3
static _Atomic unsigned char *seen;
static _Atomic long delivered;
static _Atomic int owner_done;
static _Atomic long steals_ok, overflowed;
static long stress_ops;

static struct blitz_task *stress_tasks;

static void deliver(struct blitz_task *t)
{
	long id = t - stress_tasks;

	/* Assert only on failure: a ck_assert per task writes Check's log each time. */
	if (id < 0 || id >= stress_ops)
		ck_abort_msg("bad task %ld", id);
	if (atomic_fetch_add(&seen[id], 1) != 0)
		ck_abort_msg("task %ld delivered twice", id);
	atomic_fetch_add(&delivered, 1);
}

static void *thief(void *arg)
{
	struct blitz_queue *mine = arg;
	uint32_t taken;
	int fail;

	while (!atomic_load(&owner_done) || !queue_is_empty(q)) {
		struct blitz_task *t = queue_steal_into(q, mine, QUEUE_HALF, &taken, &fail);

		if (t) {
			atomic_fetch_add(&steals_ok, 1);
			deliver(t);
		} else
			sched_yield();	/* 2 cores, 4 threads: let the owner run */
		while ((t = queue_pop(mine)))
			deliver(t);
	}
	return NULL;
}

START_TEST(steal_stress_exactly_once)
{
	pthread_t th[THIEVES];
	struct blitz_queue *rings[THIEVES];
	struct blitz_task *t;
	const char *env = getenv("BLITZ_STRESS_OPS");
	unsigned seed = 1;

	stress_ops = env ? atol(env) : 2000000;
	seen = calloc((size_t)stress_ops, 1);
	stress_tasks = calloc((size_t)stress_ops, sizeof(*stress_tasks));
	ck_assert(seen && stress_tasks);
	atomic_store(&delivered, 0);
	atomic_store(&owner_done, 0);
	for (int i = 0; i < THIEVES; i++) {
		rings[i] = aligned_alloc(CACHE_LINE, sizeof(*rings[i]));
		queue_init(rings[i]);
		pthread_create(&th[i], NULL, thief, rings[i]);
	}
	for (long id = 0; id < stress_ops; id++) {
		queue_push(q, &stress_tasks[id], &inject);
		/* Pop now and then, in bursts, so the ring is sometimes full. */
		seed = seed * 1103515245 + 12345;
		if ((seed >> 16) % 3 == 0)
			while ((seed = seed * 1103515245 + 12345) % 4 && (t = queue_pop(q)))
				deliver(t);
	}
	while ((t = queue_pop(q)))
		deliver(t);
	atomic_store(&owner_done, 1);
	for (int i = 0; i < THIEVES; i++)
		pthread_join(th[i], NULL);
	while ((t = inject_pop(&inject))) {	/* overflowed tasks */
		atomic_fetch_add(&overflowed, 1);
		deliver(t);
	}
	printf("steal stress: %ld tasks, %ld steals, %ld via the global queue\n",
	       stress_ops, atomic_load(&steals_ok), atomic_load(&overflowed));
	/* The interleavings this test is for really happened. */
	ck_assert_int_gt(atomic_load(&steals_ok), 0);
	ck_assert_int_eq(atomic_load(&delivered), stress_ops);
	for (int i = 0; i < THIEVES; i++)
		free(rings[i]);
	free((void *)seen);
	free(stress_tasks);
}
END_TEST

START_TEST(inject_batch_fifo)
{
	struct blitz_task *out[64];

	for (long i = 0; i < 100; i++)
		inject_push(&inject, task_n(i));
	ck_assert_uint_eq(inject_len(&inject), 100);
	ck_assert_uint_eq(inject_pop_batch(&inject, out, 64), 64);
	for (long i = 0; i < 64; i++)
		ck_assert_int_eq(id_of(out[i]), i);
	ck_assert_uint_eq(inject_len(&inject), 36);
	ck_assert_uint_eq(inject_pop_batch(&inject, out, 64), 36);
	ck_assert_int_eq(id_of(out[35]), 99);
	ck_assert(inject_is_empty(&inject));
	ck_assert_uint_eq(inject_pop_batch(&inject, out, 64), 0);
}
END_TEST

START_TEST(layout_separate_cache_lines)
{
	ck_assert_uint_eq(offsetof(struct blitz_queue, head) % CACHE_LINE, 0);
	ck_assert_uint_eq(offsetof(struct blitz_queue, tail) % CACHE_LINE, 0);
	ck_assert_uint_eq(offsetof(struct blitz_queue, buffer) % CACHE_LINE, 0);
	ck_assert_uint_ne(offsetof(struct blitz_queue, head) / CACHE_LINE,
			  offsetof(struct blitz_queue, tail) / CACHE_LINE);
	ck_assert_uint_ne(offsetof(struct blitz_queue, tail) / CACHE_LINE,
			  offsetof(struct blitz_queue, buffer) / CACHE_LINE);
}
END_TEST

static Suite *queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = TCASE("ring", 30);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ring_fifo_order);
	tcase_add_test(tc, ring_wraps_around);
	tcase_add_test(tc, ring_overflow_moves_half);
	tcase_add_test(tc, ring_full_with_steal_in_flight_goes_global);
	tcase_add_test(tc, steal_takes_half_rounded_up_capped);
	tcase_add_test(tc, steal_one_policy_takes_one);
	tcase_add_test(tc, steal_from_empty_or_busy_fails);
	tcase_add_test(tc, inject_batch_fifo);
	tcase_add_test(tc, layout_separate_cache_lines);
	suite_add_tcase(s, tc);

	tc = TCASE("stress", 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, steal_stress_exactly_once);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("queue", queue_suite)
