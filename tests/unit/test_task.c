// SPDX-License-Identifier: MIT
/*
 * test_task.c - every transition of the task state machine (docs/scheduler.md),
 * references and wakers, on tasks that no worker runs.
 */
#include <stdlib.h>
#include <blitz.h>
#include "../../core/sched/runtime.h"
#include "../../core/sched/task.h"
#include "suites.h"

static struct blitz_runtime *rt;

static enum blitz_poll never(void *s, struct blitz_cx *cx) { return BLITZ_PENDING; }
static const struct blitz_task_vtable never_vt = BLITZ_TASK_VTABLE(never, NULL);

/* The runtime is never started: tasks are only moved through states here. */
static void setup(void)
{
	rt = test_runtime(1);
}

static void teardown(void)
{
	blitz_runtime_free(rt);
}

static struct blitz_task *new_task(void)
{
	struct blitz_task *t = task_alloc(rt, &never_vt, NULL, 0, 1, true, OWNED_OUTSIDE);

	ck_assert_ptr_nonnull(t);
	ck_assert(owned_insert(&rt->owned, t));	/* as this thread spawns: its release is at once */
	return t;
}

static uint64_t life(struct blitz_task *t) { return task_lifecycle(task_state_load(t)); }
static uint64_t refs(struct blitz_task *t) { return task_refs(task_state_load(t)); }
static bool notified(struct blitz_task *t) { return task_state_load(t) & TASK_NOTIFIED; }

START_TEST(spawned_task_is_scheduled_with_two_refs)
{
	struct blitz_task *t = new_task();

	ck_assert_uint_eq(life(t), TASK_SCHEDULED);
	ck_assert_uint_eq(refs(t), 2);		/* scheduler + handle */
	ck_assert(task_state_load(t) & TASK_JOIN_INTEREST);
	task_finish(t, -1, 1);
	ck_assert_uint_eq(life(t), TASK_COMPLETE);
	ck_assert_uint_eq(refs(t), 1);
	blitz_task_release(t);
}
END_TEST

/*
 * A task of worker 0's shard completed by another thread is not unlinked
 * there (core/sched/owned.h): it waits on the shard's done stack with the
 * scheduler's reference, does not count as live, and worker 0's drain
 * unlinks it and drops the reference.  A second one is left on the stack
 * for owned_pop_any, shutdown's loop, which drains it and finds no live
 * task.
 */
START_TEST(completed_elsewhere_is_released_at_the_drain)
{
	struct blitz_task *a = task_alloc(rt, &never_vt, NULL, 0, 1, true, 0);
	struct blitz_task *b = task_alloc(rt, &never_vt, NULL, 0, 1, true, 0);

	ck_assert(a && b);
	ck_assert(owned_insert(&rt->owned, a));
	ck_assert(owned_insert(&rt->owned, b));
	ck_assert_uint_eq(blitz_runtime_live_tasks(rt), 2);
	task_finish(a, -1, 1);
	ck_assert_uint_eq(life(a), TASK_COMPLETE);
	ck_assert_uint_eq(refs(a), 2);		/* the done stack holds the scheduler's */
	ck_assert_uint_eq(blitz_runtime_live_tasks(rt), 1);
	owned_drain(&rt->owned, 0, &(struct owned_local){ NULL });
	ck_assert_uint_eq(refs(a), 1);		/* the handle's, only */
	ck_assert_ptr_eq(rt->owned.shard[0].head, b);
	task_finish(b, -1, 1);
	ck_assert_uint_eq(refs(b), 2);
	ck_assert_uint_eq(blitz_runtime_live_tasks(rt), 0);
	ck_assert_ptr_null(owned_pop_any(&rt->owned));
	ck_assert_uint_eq(refs(b), 1);
	ck_assert_ptr_null(rt->owned.shard[0].head);
	blitz_task_release(a);
	blitz_task_release(b);
}
END_TEST

/* outside_head - the outside shard's first task, read under its lock. */
static struct blitz_task *outside_head(void)
{
	struct owned_shard *s = &rt->owned.shard[OWNED_OUTSIDE];
	struct blitz_task *t;

	spin_lock(&s->lock);
	t = s->head;
	spin_unlock(&s->lock);
	return t;
}

/*
 * A task of the outside shard completed by a worker goes onto that
 * worker's own list (core/sched/owned.h), not the shard's done stack:
 * COMPLETE, no longer live, still linked with the scheduler's reference,
 * until that worker's drain unlinks it and drops the reference.  (The
 * runtime is never started: worker 0's list is the test's to touch.)
 */
START_TEST(outside_task_completed_on_a_worker_is_released_at_its_drain)
{
	struct owned_local *local = &rt->workers[0].owned_local;
	struct blitz_task *a = new_task();

	task_finish(a, 0, 1);
	ck_assert_uint_eq(life(a), TASK_COMPLETE);
	ck_assert_ptr_eq(local->done, a);
	ck_assert_ptr_null(atomic_load(&rt->owned.shard[OWNED_OUTSIDE].done));
	ck_assert_ptr_eq(outside_head(), a);	/* not unlinked by the completer */
	ck_assert_uint_eq(blitz_runtime_live_tasks(rt), 0);
	ck_assert_uint_eq(refs(a), 2);		/* the list holds the scheduler's */
	owned_drain(&rt->owned, 0, local);
	ck_assert_ptr_null(local->done);
	ck_assert_ptr_null(outside_head());
	ck_assert_uint_eq(refs(a), 1);		/* the handle's, only */
	blitz_task_release(a);
}
END_TEST

/*
 * An outside task that a thread that is not a worker completes (its
 * spawner's class) is unlinked at once, as before.
 */
START_TEST(outside_task_completed_outside_is_unlinked_at_once)
{
	struct blitz_task *a = new_task();

	task_finish(a, -1, 1);
	/* Not deferred: on no worker's own list, no shard's done stack. */
	ck_assert_ptr_null(rt->workers[0].owned_local.done);
	ck_assert_ptr_null(atomic_load(&rt->owned.shard[OWNED_OUTSIDE].done));
	ck_assert_ptr_null(outside_head());
	ck_assert_uint_eq(refs(a), 1);
	blitz_task_release(a);
}
END_TEST

/*
 * blitz_runtime_free's loop drops a detached task A still linked at the
 * global queue's tail (a block of its own size, freed at once), then
 * finishes C, whose completion wakes its joiner J: the wake pushes J onto
 * the global queue.  Before the queue was forgotten before each drop,
 * that push wrote into A's freed block: AddressSanitizer's build of this
 * test reports it (a plain build cannot see it).  Shards: A 0, C 1, J 2,
 * the order owned_pop_any takes them.
 */
START_TEST(runtime_free_wakes_during_its_drops)
{
	struct blitz_runtime *r = test_runtime(1);
	static char big[1024];		/* past the task cache's classes: malloc'd, freed */
	struct blitz_task *a = task_alloc(r, &never_vt, big, sizeof(big), 0, false, 0);
	struct blitz_task *j = task_alloc(r, &never_vt, NULL, 0, 0, false, 2);
	struct blitz_task *c = task_alloc(r, &never_vt, NULL, 0, 0, false, 1);

	ck_assert(a && j && c);
	ck_assert(owned_insert(&r->owned, a));
	inject_push(&r->inject, a);
	ck_assert(owned_insert(&r->owned, j));
	atomic_fetch_and(&j->state, ~TASK_LIFECYCLE_MASK);	/* IDLE: waits for C */
	ck_assert(owned_insert(&r->owned, c));
	task_ref_inc(j);				/* C's join waker's reference */
	task_cold(c)->join_waker = (struct blitz_waker){ .data = j, .vtable = &task_waker_vtable };
	atomic_fetch_or(&c->state, TASK_JOIN_WAKER);
	blitz_runtime_free(r);
}
END_TEST

START_TEST(idle_wake_schedules_once)
{
	struct blitz_task *t = new_task();

	task_transition_to_running(t);
	ck_assert_int_eq(task_transition_after_poll(t, 0), TASK_NOW_IDLE);
	ck_assert_uint_eq(life(t), TASK_IDLE);
	ck_assert_int_eq(task_transition_to_scheduled(t), 1);	/* caller queues it */
	ck_assert_uint_eq(life(t), TASK_SCHEDULED);
	ck_assert_int_eq(task_transition_to_scheduled(t), 0);	/* already queued */
	ck_assert(notified(t));
	task_finish(t, -1, 1);
	blitz_task_release(t);
}
END_TEST

/*
 * A schedule stamp (the summary histograms, histogram.c) is read by the
 * task's next poll only: the transition to running returns it and clears
 * it, so that a later poll, in whatever tick, never takes it for its own
 * wait.
 */
START_TEST(a_stamp_is_read_by_the_next_poll_only)
{
	struct blitz_task *t = new_task();

	hist_stamp(&rt->workers[0].hist, t);
	ck_assert(task_state_load(t) & TASK_STAMPED);
	ck_assert(task_transition_to_running(t) & TASK_STAMPED);	/* this poll reads it */
	ck_assert(!(task_state_load(t) & TASK_STAMPED));
	ck_assert_int_eq(task_transition_after_poll(t, 0), TASK_NOW_IDLE);
	ck_assert_int_eq(task_transition_to_scheduled(t), 1);		/* queued again, unstamped */
	ck_assert(!(task_transition_to_running(t) & TASK_STAMPED));
	task_finish(t, -1, 1);
	blitz_task_release(t);
}
END_TEST

START_TEST(wake_while_running_is_not_lost)
{
	struct blitz_task *t = new_task();

	task_transition_to_running(t);
	ck_assert_uint_eq(life(t), TASK_RUNNING);
	ck_assert_int_eq(task_transition_to_scheduled(t), 0);	/* in the system */
	ck_assert(notified(t));
	/* poll returns pending: the poller must queue it again. */
	ck_assert_int_eq(task_transition_after_poll(t, 0), TASK_RESCHEDULE);
	ck_assert_uint_eq(life(t), TASK_SCHEDULED);
	ck_assert(!notified(t));
	task_finish(t, -1, 1);
	blitz_task_release(t);
}
END_TEST

START_TEST(wake_while_scheduled_is_cleared_by_running)
{
	struct blitz_task *t = new_task();

	ck_assert_int_eq(task_transition_to_scheduled(t), 0);
	ck_assert(notified(t));
	ck_assert(task_transition_to_running(t) & TASK_NOTIFIED);
	ck_assert(!notified(t));
	ck_assert_int_eq(task_transition_after_poll(t, 0), TASK_NOW_IDLE);
	task_finish(t, -1, 1);
	blitz_task_release(t);
}
END_TEST

START_TEST(yield_reschedules)
{
	struct blitz_task *t = new_task();

	task_transition_to_running(t);
	ck_assert_int_eq(task_transition_after_poll(t, 1), TASK_RESCHEDULE);
	ck_assert_uint_eq(life(t), TASK_SCHEDULED);
	task_finish(t, -1, 1);
	blitz_task_release(t);
}
END_TEST

START_TEST(complete_ignores_wakes)
{
	struct blitz_task *t = new_task();

	task_transition_to_running(t);
	task_finish(t, -1, 0);
	ck_assert_uint_eq(life(t), TASK_COMPLETE);
	ck_assert(!blitz_task_cancelled(t));
	ck_assert_int_eq(task_transition_to_scheduled(t), 0);
	ck_assert(!notified(t));
	ck_assert_uint_eq(life(t), TASK_COMPLETE);
	blitz_task_release(t);
}
END_TEST

START_TEST(cancel_during_final_poll_is_not_a_cancellation)
{
	struct blitz_task *t = new_task();

	task_transition_to_running(t);
	blitz_task_cancel(t);			/* lands while the poll runs */
	task_finish(t, -1, 0);			/* and the poll returned READY */
	ck_assert_uint_eq(life(t), TASK_COMPLETE);
	ck_assert(!blitz_task_cancelled(t));
	blitz_task_release(t);
}
END_TEST

START_TEST(cancel_after_completion_keeps_the_result)
{
	struct blitz_task *t = new_task();

	task_transition_to_running(t);
	task_finish(t, -1, 0);
	blitz_task_cancel(t);			/* too late: it has its result */
	ck_assert_uint_eq(life(t), TASK_COMPLETE);
	ck_assert(!blitz_task_cancelled(t));
	ck_assert(!(atomic_load(&t->state) & TASK_CANCELLED));
	blitz_task_release(t);
}
END_TEST

START_TEST(cancel_respects_shield)
{
	struct blitz_task *t = new_task();
	struct blitz_cx cx = { .task = t };

	task_transition_to_running(t);
	blitz_shield_enter(&cx);
	atomic_fetch_or(&t->state, TASK_CANCELLED);
	/* Shielded: the cancellation waits, the task idles normally. */
	ck_assert_int_eq(task_transition_after_poll(t, 0), TASK_NOW_IDLE);
	task_transition_to_scheduled(t);
	task_transition_to_running(t);
	blitz_shield_exit(&cx);
	/* Shield gone: pending now means requeue so a worker drops it. */
	ck_assert_int_eq(task_transition_after_poll(t, 0), TASK_RESCHEDULE);
	task_finish(t, -1, 1);
	ck_assert(blitz_task_cancelled(t));
	blitz_task_release(t);
}
END_TEST

START_TEST(waker_refs)
{
	struct blitz_task *t = new_task();
	struct blitz_cx cx = { .task = t };
	struct blitz_waker a = blitz_cx_waker(&cx), b;

	ck_assert_uint_eq(sizeof(struct blitz_waker), 16);
	ck_assert_uint_eq(refs(t), 3);
	b = blitz_waker_clone(&a);
	ck_assert_uint_eq(refs(t), 4);
	ck_assert(blitz_waker_will_wake(&a, &b));
	blitz_waker_drop(&b);
	ck_assert_uint_eq(refs(t), 3);
	task_transition_to_running(t);
	blitz_waker_wake_by_ref(&a);		/* keeps the reference */
	ck_assert_uint_eq(refs(t), 3);
	ck_assert(notified(t));
	blitz_waker_wake(&a);			/* consumes it */
	ck_assert_uint_eq(refs(t), 2);
	ck_assert_ptr_null(a.vtable);
	task_finish(t, -1, 1);
	blitz_task_release(t);
}
END_TEST

START_TEST(state_word_layout)
{
	ck_assert_uint_eq(TASK_REF_SHIFT, 40);
	ck_assert_uint_eq(TASK_SHIELD_SHIFT, 32);
	ck_assert_uint_eq(TASK_NOTIFIED, 1ull << 24);
	ck_assert_uint_eq(TASK_LIFECYCLE_SHIFT, 16);
	/* The hot header and 16 bytes of state in one line; the cold part after. */
	ck_assert_uint_eq(offsetof(struct blitz_task, user), 48);
	ck_assert_uint_eq(blitz_task_size(24), TASK_BYTES(24));
	printf("task header: %zu bytes; an idle task with a 24-byte state: %zu bytes\n",
	       sizeof(struct blitz_task), blitz_task_size(24));
}
END_TEST

static Suite *task_suite(void)
{
	Suite *s = suite_create("task");
	TCase *tc = TCASE("state", 10);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, spawned_task_is_scheduled_with_two_refs);
	tcase_add_test(tc, completed_elsewhere_is_released_at_the_drain);
	tcase_add_test(tc, outside_task_completed_on_a_worker_is_released_at_its_drain);
	tcase_add_test(tc, outside_task_completed_outside_is_unlinked_at_once);
	tcase_add_test(tc, runtime_free_wakes_during_its_drops);
	tcase_add_test(tc, idle_wake_schedules_once);
	tcase_add_test(tc, a_stamp_is_read_by_the_next_poll_only);
	tcase_add_test(tc, wake_while_running_is_not_lost);
	tcase_add_test(tc, wake_while_scheduled_is_cleared_by_running);
	tcase_add_test(tc, yield_reschedules);
	tcase_add_test(tc, complete_ignores_wakes);
	tcase_add_test(tc, cancel_respects_shield);
	tcase_add_test(tc, cancel_during_final_poll_is_not_a_cancellation);
	tcase_add_test(tc, cancel_after_completion_keeps_the_result);
	tcase_add_test(tc, waker_refs);
	tcase_add_test(tc, state_word_layout);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("task", task_suite)
