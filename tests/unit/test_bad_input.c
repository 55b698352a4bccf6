// SPDX-License-Identifier: MIT
/*
 * test_bad_input.c - every public function called with NULL, zero and
 * out-of-range arguments (include/blitz.h, "Bad input"): the scheduler,
 * configuration, time, sync and channel headers.  The I/O headers are in
 * test_bad_input_io.c.  tests/scripts/bad-input.sh checks that every
 * function include/ declares is named in one of the two files (or in its
 * list of exceptions, with the reason).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

static struct blitz_runtime *one_worker(void)
{
	struct blitz_config c;
	struct blitz_runtime *rt;

	blitz_config_default(&c);
	c.workers = 1;
	rt = blitz_runtime_new(&c);
	ck_assert_ptr_nonnull(rt);
	return rt;
}

static enum blitz_poll ready(void *arg, struct blitz_cx *cx)
{
	return BLITZ_READY;
}
static const struct blitz_task_vtable ready_vt = BLITZ_TASK_VTABLE(ready, NULL);

/* ---------------------------------------------------------------------- */
/* config.h                                                                */

START_TEST(backend_name_out_of_range_is_null)
{
	ck_assert_ptr_null(blitz_backend_name((enum blitz_io_backend)-1));
	/* Past the last name nothing is named (a hole would hide a backend from a count up to NULL). */
	for (int k = 0; k < 4; k++)
		ck_assert_ptr_null(blitz_backend_name((enum blitz_io_backend)(BLITZ_BACKEND_AUTO + 1 +
									     TEST_BACKENDS + k)));
	ck_assert_ptr_null(blitz_backend_name((enum blitz_io_backend)INT32_MAX));
}
END_TEST

START_TEST(backend_parse_refuses_null_empty_unknown)
{
	enum blitz_io_backend b = BLITZ_BACKEND_EPOLL;

	ck_assert_int_eq(blitz_backend_parse(NULL, &b), -EINVAL);
	ck_assert_int_eq(blitz_backend_parse("", &b), -EINVAL);
	ck_assert_int_eq(blitz_backend_parse("io_uringx", &b), -EINVAL);
	ck_assert_int_eq(b, BLITZ_BACKEND_EPOLL);
}
END_TEST

/* No room for the message (NULL, 0 or 1 byte): the error code alone. */
START_TEST(config_from_env_without_room_for_err)
{
	struct blitz_config c;
	char err[1] = { 'x' };

	blitz_config_default(&c);
	ck_assert_uint_ge(blitz_max_workers(), 1);
	setenv("BLITZ_BACKEND", "nosuch", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, NULL, 0), -EINVAL);
	ck_assert_int_eq(blitz_config_from_env(&c, err, 1), -EINVAL);
	ck_assert_int_eq(err[0], 0);
	unsetenv("BLITZ_BACKEND");
	setenv("BLITZ_WORKERS", "-1", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, NULL, 0), -EINVAL);
	unsetenv("BLITZ_WORKERS");
}
END_TEST

START_TEST(config_validate_refuses_each_out_of_range_field)
{
	struct blitz_config c;
	char err[128];

#define BAD(field, value) do {						\
		blitz_config_default(&c);				\
		c.field = (value);					\
		ck_assert_int_eq(blitz_config_validate(&c, err, sizeof(err)), -EINVAL); \
		ck_assert_int_eq(blitz_config_validate(&c, NULL, 0), -EINVAL); \
		ck_assert_int_eq(blitz_config_validate(&c, err, 1), -EINVAL); \
		ck_assert_str_eq(err, "");				\
	} while (0)
	BAD(workers, blitz_max_workers() + 1);
	BAD(workers, UINT32_MAX);
	BAD(budget, 0);
	BAD(global_interval, BLITZ_MAX_GLOBAL_INTERVAL + 1);
	BAD(steal, (enum blitz_steal_policy)2);
	BAD(backend, (enum blitz_io_backend)-1);
	BAD(wake, (enum blitz_wake_policy)7);
	BAD(hist_sample, 3);
	BAD(hist_sample, BLITZ_HIST_SAMPLE_MAX * 2);
	BAD(blocking_idle_ms, BLITZ_BLOCKING_IDLE_MS_LIMIT + 1);
	BAD(max_blocking_threads, BLITZ_BLOCKING_THREADS_LIMIT + 1);
	BAD(event_ring_kb, BLITZ_EVENT_RING_KB_MIN - 1);
	BAD(event_ring_kb, BLITZ_EVENT_RING_KB_MAX + 1);
	BAD(flight_kb, 1);
	BAD(flight_signal, -1);
	BAD(flight_signal, 9);		/* SIGKILL: cannot be caught */
	BAD(flight_signal, 1000);
#undef BAD
}
END_TEST

/* ---------------------------------------------------------------------- */
/* runtime.h, task.h, stats.h, shutdown.h                                  */

START_TEST(runtime_new_bad_config_is_einval)
{
	struct blitz_config c;

	blitz_config_default(&c);
	c.budget = 0;
	errno = 0;
	ck_assert_ptr_null(blitz_runtime_new(&c));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/*
 * trace.h: a bad path, one too long, a missing directory, no ring; no
 * file left behind, neither the dump nor its ".part".
 */
START_TEST(trace_dump_refuses_null_empty_and_no_ring)
{
	char dir[] = "/tmp/blitz-dump-XXXXXX", path[64], part[72], *longer = malloc(PATH_MAX + 1);

	ck_assert_ptr_nonnull(longer);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/dump", dir);
	snprintf(part, sizeof(part), "%s.part", path);
	memset(longer, 'a', PATH_MAX);
	longer[PATH_MAX] = 0;
	ck_assert_int_eq(blitz_trace_dump(NULL), -EINVAL);
	ck_assert_int_eq(blitz_trace_dump(""), -EINVAL);
	ck_assert_int_eq(blitz_trace_dump(longer), -ENAMETOOLONG);
	ck_assert_int_eq(blitz_trace_dump("/nonexistent-dir/dump"), -ENOENT);
	ck_assert_int_eq(blitz_trace_dump(path), -ENODATA);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_ne(access(part, F_OK), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	free(longer);
}
END_TEST

START_TEST(runtime_free_null_is_a_no_op)
{
	blitz_runtime_free(NULL);
}
END_TEST

START_TEST(spawn_refuses_null_runtime_vtable_and_state)
{
	struct blitz_runtime *rt = one_worker();
	struct blitz_task_vtable no_poll = ready_vt;
	int x = 0;

	no_poll.poll = NULL;
	/* NULL runtime: the calling task's; there is none here. */
	errno = 0;
	ck_assert_ptr_null(blitz_spawn(NULL, &ready_vt, NULL, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(blitz_spawn_detached(NULL, &ready_vt, NULL, 0), -EINVAL);
	ck_assert_int_eq(blitz_block_on(NULL, &ready_vt, NULL, 0), -EINVAL);
	ck_assert_ptr_null(blitz_spawn(rt, NULL, NULL, 0));
	ck_assert_int_eq(blitz_spawn_detached(rt, &no_poll, NULL, 0), -EINVAL);
	ck_assert_int_eq(blitz_block_on(rt, NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(blitz_block_on(rt, &ready_vt, NULL, sizeof(x)), -EINVAL);
	/* Zero bytes of state: a task without state. */
	ck_assert_int_eq(blitz_block_on(rt, &ready_vt, &x, 0), 0);
	ck_assert_int_eq(blitz_block_on(rt, &ready_vt, NULL, 0), 0);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(spawn_of_a_state_over_4g_is_einval)
{
	struct blitz_runtime *rt = one_worker();
	char x = 0;

	errno = 0;
	ck_assert_ptr_null(blitz_spawn(rt, &ready_vt, &x, SIZE_MAX));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(blitz_spawn_detached(rt, &ready_vt, &x, SIZE_MAX - 64), -EINVAL);
	ck_assert_int_eq(blitz_block_on(rt, &ready_vt, &x, (size_t)UINT32_MAX + 1), -EINVAL);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(task_size_saturates)
{
	ck_assert_uint_gt(blitz_task_size(0), 0);
	ck_assert_uint_eq(blitz_task_size(SIZE_MAX), SIZE_MAX);
	ck_assert_uint_eq(blitz_task_size(SIZE_MAX - 1), SIZE_MAX);
}
END_TEST

START_TEST(task_handle_null)
{
	ck_assert_int_eq(blitz_join(NULL), -EINVAL);
	blitz_task_cancel(NULL);
	blitz_task_release(NULL);
}
END_TEST

/* A handle of a finished task: every query and a second cancel are defined. */
START_TEST(task_handle_after_completion)
{
	struct blitz_runtime *rt = one_worker();
	struct blitz_task *t = blitz_spawn(rt, &ready_vt, NULL, 0);

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert(blitz_task_done(t));
	ck_assert(!blitz_task_cancelled(t));
	ck_assert_ptr_nonnull(blitz_task_state(t));
	blitz_task_cancel(t);		/* too late: nothing changes */
	blitz_task_cancel(t);
	ck_assert(!blitz_task_cancelled(t));
	blitz_task_release(t);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(runtime_queries_off_a_worker)
{
	struct blitz_runtime *rt = one_worker();
	struct blitz_worker_stats ws;
	struct blitz_stats st;

	ck_assert_ptr_null(blitz_current_runtime());
	ck_assert_int_eq(blitz_current_worker(), -1);
	ck_assert_uint_eq(blitz_runtime_workers(rt), 1);
	ck_assert_ptr_nonnull(blitz_runtime_config(rt));
	/* NULL: the current runtime, and off a worker there is none. */
	ck_assert_uint_eq(blitz_runtime_workers(NULL), 0);
	ck_assert_ptr_null(blitz_runtime_config(NULL));
	memset(&st, 0xff, sizeof(st));
	blitz_stats(NULL, &st);
	ck_assert_uint_eq(st.total_spawned, 0);
	ck_assert_uint_eq(st.num_workers, 0);
	ck_assert_int_eq(blitz_worker_stats(rt, 1, &ws), -EINVAL);
	ck_assert_int_eq(blitz_worker_stats(rt, UINT32_MAX, &ws), -EINVAL);
	ck_assert_int_eq(blitz_worker_stats(NULL, 0, &ws), -EINVAL);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(shutdown_null_runtime)
{
	ck_assert_ptr_null(blitz_runtime_shutdown_token(NULL));
	ck_assert_uint_eq(blitz_runtime_live_tasks(NULL), 0);
	ck_assert_int_eq(blitz_runtime_drain(NULL, 0), -EINVAL);
	ck_assert_int_eq(blitz_runtime_shutdown(NULL, 0), -EINVAL);
}
END_TEST

START_TEST(shutdown_zero_and_huge_timeouts)
{
	struct blitz_runtime *rt = one_worker();

	ck_assert_int_eq(blitz_runtime_drain(rt, 0), 0);
	ck_assert_int_eq(blitz_runtime_drain(rt, UINT64_MAX), 0);
	ck_assert_int_eq(blitz_runtime_shutdown(rt, UINT64_MAX), 0);
}
END_TEST

/* A test that must abort says so in one line on stderr: see abort_says(). */
static void die_quietly(void)
{
	/* Check's fork mode reports the signal; keep the core out of it. */
	signal(SIGABRT, SIG_DFL);
}

/* Run @fn in a child; it must abort (SIGABRT). */
static void expect_abort(void (*fn)(void))
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		die_quietly();
		freopen("/dev/null", "w", stderr);
		fn();
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGABRT);
}

/* ---------------------------------------------------------------------- */
/* The cx-only calls and the vtable's schedule functions, from a task       */

struct in_task {
	int step;
	int worker;
	struct blitz_runtime *rt;
};

static enum blitz_poll cx_calls(void *arg, struct blitz_cx *cx)
{
	struct in_task *s = arg;
	struct blitz_waker w;

	if (s->step++ == 0) {
		/* Shields nest; the same number of exits leaves none held. */
		for (int i = 0; i < 255; i++)
			blitz_shield_enter(cx);
		for (int i = 0; i < 255; i++)
			blitz_shield_exit(cx);
		s->worker = blitz_cx_worker(cx);
		s->rt = blitz_cx_runtime(cx);
		w = blitz_cx_waker(cx);
		blitz_waker_drop(&w);
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	return BLITZ_READY;
}
static const struct blitz_task_vtable cx_calls_vt = BLITZ_TASK_VTABLE(cx_calls, NULL);

START_TEST(cx_calls_are_defined_at_their_limits)
{
	struct blitz_runtime *rt = one_worker();
	struct in_task s = { 0 };

	ck_assert_int_eq(blitz_block_on(rt, &cx_calls_vt, &s, sizeof(s)), 0);
	ck_assert_int_eq(s.step, 2);
	ck_assert_int_eq(s.worker, 0);
	ck_assert_ptr_eq(s.rt, rt);
	blitz_runtime_free(rt);
}
END_TEST

static enum blitz_poll shield_too_deep(void *arg, struct blitz_cx *cx)
{
	for (int i = 0; i < 256; i++)
		blitz_shield_enter(cx);
	return BLITZ_READY;
}
static const struct blitz_task_vtable shield_too_deep_vt = BLITZ_TASK_VTABLE(shield_too_deep, NULL);

static void nest_256_shields(void)
{
	struct blitz_runtime *rt = one_worker();

	blitz_block_on(rt, &shield_too_deep_vt, NULL, 0);
}

START_TEST(shield_256_deep_aborts)
{
	expect_abort(nest_256_shields);
}
END_TEST

/* A shield exit with none held leaves the count at zero. */
static enum blitz_poll shield_exit_unheld(void *arg, struct blitz_cx *cx)
{
	blitz_shield_exit(cx);
	blitz_shield_exit(cx);
	return BLITZ_READY;
}
static const struct blitz_task_vtable shield_exit_unheld_vt = BLITZ_TASK_VTABLE(shield_exit_unheld, NULL);

START_TEST(shield_exit_without_enter_is_a_no_op)
{
	struct blitz_runtime *rt = one_worker();

	ck_assert_int_eq(blitz_block_on(rt, &shield_exit_unheld_vt, NULL, 0), 0);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * blitz_join from a worker (it helps there, docs/scheduler.md "Joining from
 * a worker"): a completed task is 0 at once; a task of another runtime,
 * whose workers this one cannot stand in for, is -EDEADLK without waiting;
 * blitz_join_poll on a done task: READY.
 */
struct join_in_task {
	struct blitz_task *other, *foreign;
	int join_rc, foreign_rc;
	enum blitz_poll joined;
};

static enum blitz_poll join_from_worker(void *arg, struct blitz_cx *cx)
{
	struct join_in_task *s = arg;

	s->join_rc = blitz_join(s->other);
	s->foreign_rc = blitz_join(s->foreign);
	s->joined = blitz_join_poll(s->other, cx);
	return s->joined;
}
static const struct blitz_task_vtable join_from_worker_vt = BLITZ_TASK_VTABLE(join_from_worker, NULL);

START_TEST(join_from_a_worker_of_another_runtime_is_edeadlk)
{
	struct blitz_runtime *rt = one_worker(), *rt2 = one_worker();
	struct join_in_task s = { .other = blitz_spawn(rt, &ready_vt, NULL, 0),
				  .foreign = blitz_spawn(rt2, &ready_vt, NULL, 0) };

	ck_assert_int_eq(blitz_join(s.other), 0);
	ck_assert_int_eq(blitz_block_on(rt, &join_from_worker_vt, &s, sizeof(s)), 0);
	ck_assert_int_eq(s.join_rc, 0);
	ck_assert_int_eq(s.foreign_rc, -EDEADLK);
	ck_assert_int_eq(s.joined, BLITZ_READY);
	ck_assert_int_eq(blitz_join(s.foreign), 0);
	blitz_task_release(s.other);
	blitz_task_release(s.foreign);
	blitz_runtime_free(rt2);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * blitz_task_schedule and blitz_task_reschedule are the runtime's (the
 * vtable's schedule and reschedule, BLITZ_TASK_VTABLE); a task whose
 * vtable names them directly, as here, runs like any other.
 */
static const struct blitz_task_vtable explicit_vt = {
	.poll = cx_calls, .drop = NULL,
	.schedule = blitz_task_schedule, .reschedule = blitz_task_reschedule,
};

START_TEST(explicit_schedule_functions)
{
	struct blitz_runtime *rt = one_worker();
	struct in_task s = { 0 };

	ck_assert_int_eq(blitz_block_on(rt, &explicit_vt, &s, sizeof(s)), 0);
	ck_assert_int_eq(s.step, 2);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* sync.h                                                                  */

START_TEST(semaphore_counts_saturate)
{
	struct blitz_semaphore s;

	blitz_semaphore_init(&s, UINT32_MAX);
	ck_assert_uint_eq(blitz_semaphore_available(&s), BLITZ_SEMAPHORE_MAX_PERMITS);
	blitz_semaphore_release(&s, UINT32_MAX);
	ck_assert_uint_eq(blitz_semaphore_available(&s), BLITZ_SEMAPHORE_MAX_PERMITS);
	ck_assert(!blitz_semaphore_try_acquire(&s, UINT32_MAX));
	blitz_semaphore_init(&s, 0);
	ck_assert(blitz_semaphore_try_acquire(&s, 0));
	ck_assert(!blitz_semaphore_try_acquire(&s, 1));
	blitz_semaphore_release(&s, 0);
	ck_assert_uint_eq(blitz_semaphore_available(&s), 0);
	ck_assert_uint_eq(blitz_semaphore_queued(&s), 0);
}
END_TEST

/* Each waiter_cancel on an idle waiter, and each acquire of zero. */
struct idle_waiters {
	struct blitz_semaphore sem;
	struct blitz_mutex m;
	struct blitz_rwlock l;
	struct blitz_barrier b;
	struct blitz_notify n;
	struct blitz_oncecell c;
	struct blitz_cancel_token t;
	struct blitz_waiter w;
	bool leader;
};

static enum blitz_poll zero_and_idle(void *arg, struct blitz_cx *cx)
{
	struct idle_waiters *s = arg;

	/* Zero permits: ready at once, nothing taken, w left idle. */
	ck_assert_int_eq(blitz_semaphore_acquire_poll(&s->sem, &s->w, 0, cx), BLITZ_READY);
	blitz_semaphore_waiter_cancel(&s->sem, &s->w);
	blitz_mutex_waiter_cancel(&s->m, &s->w);
	blitz_rwlock_waiter_cancel(&s->l, &s->w);
	blitz_barrier_waiter_cancel(&s->b, &s->w);
	blitz_notify_waiter_cancel(&s->n, &s->w);
	blitz_oncecell_waiter_cancel(&s->c, &s->w);
	blitz_cancel_token_waiter_cancel(&s->t, &s->w);
	/* A barrier of 0 is a barrier of 1: every arrival leads. */
	ck_assert_int_eq(blitz_barrier_wait_poll(&s->b, &s->w, cx, &s->leader), BLITZ_READY);
	ck_assert(s->leader);
	return BLITZ_READY;
}

START_TEST(idle_waiter_cancels_and_zero_counts)
{
	struct blitz_runtime *rt = one_worker();
	struct idle_waiters s = { 0 };

	blitz_semaphore_init(&s.sem, 1);
	blitz_mutex_init(&s.m);
	blitz_rwlock_init(&s.l);
	blitz_barrier_init(&s.b, 0);
	blitz_notify_init(&s.n);
	blitz_oncecell_init(&s.c);
	blitz_cancel_token_init(&s.t);
	test_run_poll(rt, zero_and_idle, &s);
	ck_assert_uint_eq(blitz_semaphore_available(&s.sem), 1);
	ck_assert_uint_eq(blitz_barrier_generation(&s.b), 1);
	ck_assert(blitz_barrier_try_wait(&s.b));
	ck_assert_uint_eq(blitz_barrier_queued(&s.b), 0);
	blitz_cancel_token_destroy(&s.t);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(unlock_of_a_lock_not_held_is_a_no_op)
{
	struct blitz_mutex m;
	struct blitz_rwlock l;

	blitz_mutex_init(&m);
	blitz_mutex_unlock(&m);
	blitz_mutex_unlock(&m);
	ck_assert(blitz_mutex_try_lock(&m));
	ck_assert(!blitz_mutex_try_lock(&m));	/* one holder only */
	ck_assert(blitz_mutex_is_locked(&m));
	blitz_mutex_unlock(&m);
	ck_assert(!blitz_mutex_is_locked(&m));
	ck_assert_uint_eq(blitz_mutex_queued(&m), 0);

	blitz_rwlock_init(&l);
	blitz_rwlock_read_unlock(&l);
	blitz_rwlock_write_unlock(&l);
	ck_assert(blitz_rwlock_try_write(&l));
	ck_assert(!blitz_rwlock_try_read(&l));
	blitz_rwlock_write_unlock(&l);
	ck_assert(blitz_rwlock_try_read(&l));
	blitz_rwlock_write_unlock(&l);		/* a reader holds it, not a writer */
	ck_assert(!blitz_rwlock_try_write(&l));
	blitz_rwlock_read_unlock(&l);
	ck_assert(blitz_rwlock_try_write(&l));
	ck_assert_uint_eq(blitz_rwlock_queued(&l), 0);
}
END_TEST

START_TEST(notify_and_oncecell_with_nobody_waiting)
{
	struct blitz_notify n;
	struct blitz_oncecell c;
	int x;

	blitz_notify_init(&n);
	blitz_notify_waiters(&n);		/* nobody waits: nothing is stored */
	ck_assert(!blitz_notify_try_notified(&n));
	blitz_notify_one(&n);			/* stored for the next waiter */
	blitz_notify_one(&n);			/* at most one is stored */
	ck_assert(blitz_notify_try_notified(&n));
	ck_assert(!blitz_notify_try_notified(&n));
	ck_assert_uint_eq(blitz_notify_queued(&n), 0);

	blitz_oncecell_init(&c);
	ck_assert_int_eq(blitz_oncecell_state(&c), BLITZ_ONCECELL_UNINITIALIZED);
	ck_assert_int_eq(blitz_oncecell_try_set(&c, NULL), 0);	/* NULL is a value */
	ck_assert_int_eq(blitz_oncecell_try_set(&c, &x), -EEXIST);
	ck_assert_int_eq(blitz_oncecell_state(&c), BLITZ_ONCECELL_INITIALIZED);
	ck_assert_uint_eq(blitz_oncecell_queued(&c), 0);
}
END_TEST

/* An initialized cell never calls @init: NULL is fine there. */
struct cell_state {
	struct blitz_oncecell c;
	struct blitz_waiter w;
	void *value;
};

static enum blitz_poll get_set_cell(void *arg, struct blitz_cx *cx)
{
	struct cell_state *s = arg;

	return blitz_oncecell_get_or_init_poll(&s->c, &s->w, cx, NULL, NULL, &s->value);
}

START_TEST(oncecell_get_of_a_set_cell_needs_no_init)
{
	struct blitz_runtime *rt = one_worker();
	struct cell_state s = { 0 };
	int x;

	blitz_oncecell_init(&s.c);
	ck_assert_int_eq(blitz_oncecell_try_set(&s.c, &x), 0);
	test_run_poll(rt, get_set_cell, &s);
	ck_assert_ptr_eq(s.value, &x);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(cancel_token_twice_and_child_of_a_cancelled_parent)
{
	struct blitz_cancel_token p, c;

	blitz_cancel_token_init(&p);
	blitz_cancel_token_cancel(&p);
	blitz_cancel_token_cancel(&p);		/* idempotent */
	ck_assert(blitz_cancel_token_is_cancelled(&p));
	blitz_cancel_token_init_child(&c, &p);	/* starts cancelled */
	ck_assert(blitz_cancel_token_is_cancelled(&c));
	ck_assert_uint_eq(blitz_cancel_token_queued(&c), 0);
	blitz_cancel_token_destroy(&c);
	blitz_cancel_token_destroy(&p);
}
END_TEST

struct token_wait {
	struct blitz_cancel_token *t;
	struct blitz_waiter w;
};

static enum blitz_poll wait_cancelled(void *arg, struct blitz_cx *cx)
{
	struct token_wait *s = arg;

	return blitz_cancel_token_cancelled_poll(s->t, &s->w, cx);
}

static enum blitz_poll wait_token_task(void *arg, struct blitz_cx *cx)
{
	return wait_cancelled(arg, cx);
}
static const struct blitz_task_vtable wait_token_vt = BLITZ_TASK_VTABLE(wait_token_task, NULL);

/* A drain with no deadline (UINT64_MAX) waits for the tasks, not a wrapped clock. */
START_TEST(drain_without_deadline_waits_for_the_tasks)
{
	struct blitz_runtime *rt = one_worker();
	struct token_wait s = { .t = blitz_runtime_shutdown_token(rt) };

	/* A detached task that ends when the drain cancels the token. */
	ck_assert_ptr_nonnull(s.t);
	ck_assert_int_eq(blitz_spawn_detached(rt, &wait_token_vt, &s, sizeof(s)), 0);
	ck_assert_int_eq(blitz_runtime_drain(rt, UINT64_MAX), 0);
	ck_assert_uint_eq(blitz_runtime_live_tasks(rt), 0);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* oneshot.h                                                               */

START_TEST(oneshot_send_twice_close_twice)
{
	struct blitz_oneshot ch;
	uint64_t v = 0;
	int err = 1;

	blitz_oneshot_init(&ch);
	ck_assert_int_eq(blitz_oneshot_try_recv(&ch, &v, &err), BLITZ_PENDING);
	blitz_oneshot_recv_cancel(&ch);		/* no receive pending: nothing */
	ck_assert_int_eq(blitz_oneshot_send(&ch, 7), 0);
	ck_assert_int_eq(blitz_oneshot_send(&ch, 8), -EPIPE);
	blitz_oneshot_close(&ch);		/* after a send: the value stays */
	ck_assert_int_eq(blitz_oneshot_try_recv(&ch, &v, &err), BLITZ_READY);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(err, 0);
	blitz_oneshot_init(&ch);
	blitz_oneshot_close(&ch);
	blitz_oneshot_close(&ch);
	ck_assert_int_eq(blitz_oneshot_send(&ch, 9), -EPIPE);
	ck_assert_int_eq(blitz_oneshot_try_recv(&ch, &v, &err), BLITZ_READY);
	ck_assert_int_eq(err, -EPIPE);
}
END_TEST

struct oneshot_recv {
	struct blitz_oneshot ch;
	uint64_t v;
	int err;
};

static enum blitz_poll recv_closed(void *arg, struct blitz_cx *cx)
{
	struct oneshot_recv *s = arg;

	return blitz_oneshot_recv_poll(&s->ch, cx, &s->v, &s->err);
}

START_TEST(oneshot_recv_of_a_closed_channel)
{
	struct blitz_runtime *rt = one_worker();
	struct oneshot_recv s = { .err = 1 };

	blitz_oneshot_init(&s.ch);
	blitz_oneshot_close(&s.ch);
	test_run_poll(rt, recv_closed, &s);
	ck_assert_int_eq(s.err, -EPIPE);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* channel.h                                                               */

START_TEST(channel_geometry_out_of_range)
{
	struct blitz_channel ch;
	struct blitz_broadcast bc;
	struct blitz_watch wt;
	uint64_t storage[64];
	const size_t bad[][2] = {
		{ 0, 8 }, { 3, 8 }, { (size_t)1 << 32, 8 }, { SIZE_MAX, 8 },
		{ 4, 0 }, { 4, ((size_t)1 << 20) + 1 }, { 4, SIZE_MAX },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t cap = bad[i][0], elem = bad[i][1];

		ck_assert_uint_eq(blitz_channel_storage_size(cap, elem), 0);
		ck_assert_uint_eq(blitz_broadcast_storage_size(cap, elem), 0);
		ck_assert_int_eq(blitz_channel_init(&ch, cap, elem), -EINVAL);
		ck_assert_int_eq(blitz_broadcast_init(&bc, cap, elem), -EINVAL);
		ck_assert_int_eq(blitz_channel_init_storage(&ch, storage, cap, elem), -EINVAL);
		ck_assert_int_eq(blitz_broadcast_init_storage(&bc, storage, cap, elem), -EINVAL);
	}
	ck_assert_uint_eq(blitz_watch_storage_size(0), 0);
	ck_assert_uint_eq(blitz_watch_storage_size(SIZE_MAX), 0);
	ck_assert_int_eq(blitz_watch_init(&wt, 0, NULL), -EINVAL);
	ck_assert_int_eq(blitz_watch_init(&wt, ((size_t)1 << 20) + 1, NULL), -EINVAL);
	ck_assert_int_eq(blitz_watch_init_storage(&wt, storage, 0, NULL), -EINVAL);
	/* Storage: NULL or not 8-byte aligned. */
	ck_assert_int_eq(blitz_channel_init_storage(&ch, NULL, 4, 8), -EINVAL);
	ck_assert_int_eq(blitz_channel_init_storage(&ch, (char *)storage + 1, 4, 8), -EINVAL);
	ck_assert_int_eq(blitz_broadcast_init_storage(&bc, NULL, 4, 8), -EINVAL);
	ck_assert_int_eq(blitz_broadcast_init_storage(&bc, (char *)storage + 4, 4, 8), -EINVAL);
	ck_assert_int_eq(blitz_watch_init_storage(&wt, NULL, 8, NULL), -EINVAL);
	ck_assert_int_eq(blitz_watch_init_storage(&wt, (char *)storage + 2, 8, NULL), -EINVAL);
}
END_TEST

/* Closed twice, used after the close, destroyed: each defined. */
START_TEST(channels_closed_twice_and_used_after)
{
	struct blitz_channel ch;
	struct blitz_broadcast bc;
	struct blitz_broadcast_rx brx;
	struct blitz_watch wt;
	struct blitz_watch_rx wrx;
	struct blitz_chan_stats st;
	uint64_t v = 1, missed = 0;

	ck_assert_int_eq(blitz_channel_init(&ch, 1, sizeof(v)), 0);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), -EAGAIN);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &v), 0);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &v), -EAGAIN);
	blitz_channel_close(&ch);
	blitz_channel_close(&ch);
	ck_assert(blitz_channel_is_closed(&ch));
	ck_assert_int_eq(blitz_channel_try_send(&ch, &v), -EPIPE);
	ck_assert_uint_eq(blitz_channel_len(&ch), 1);
	ck_assert_uint_eq(blitz_channel_capacity(&ch), 1);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), 0);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), -EPIPE);
	blitz_chan_waitlist_stats(&ch.receivers, &st);
	ck_assert_uint_eq(st.waits + st.queued, 0);
	blitz_channel_destroy(&ch);

	ck_assert_int_eq(blitz_broadcast_init(&bc, 1, sizeof(v)), 0);
	ck_assert_int_eq(blitz_broadcast_send(&bc, &v), 0);	/* nobody subscribed: dropped */
	blitz_broadcast_subscribe(&bc, &brx);
	ck_assert_uint_eq(blitz_broadcast_receivers(&bc), 1);
	ck_assert_int_eq(blitz_broadcast_try_recv(&brx, &v, &missed), -EAGAIN);
	ck_assert_int_eq(blitz_broadcast_send(&bc, &v), 0);
	ck_assert_int_eq(blitz_broadcast_send(&bc, &v), 0);	/* laps the receiver */
	ck_assert_int_eq(blitz_broadcast_try_recv(&brx, &v, &missed), -EOVERFLOW);
	ck_assert_uint_eq(missed, 1);
	blitz_broadcast_close(&bc);
	blitz_broadcast_close(&bc);
	ck_assert_int_eq(blitz_broadcast_send(&bc, &v), -EPIPE);
	ck_assert_int_eq(blitz_broadcast_try_recv(&brx, &v, &missed), 0);
	ck_assert_int_eq(blitz_broadcast_try_recv(&brx, &v, &missed), -EPIPE);
	blitz_broadcast_unsubscribe(&brx);
	ck_assert_uint_eq(blitz_broadcast_receivers(&bc), 0);
	blitz_broadcast_destroy(&bc);

	/* A watch of NULL initial value holds zeroes; NULL out reads the generation. */
	ck_assert_int_eq(blitz_watch_init(&wt, sizeof(v), NULL), 0);
	ck_assert_uint_eq(blitz_watch_read(&wt, &v), 0);
	ck_assert_uint_eq(v, 0);
	blitz_watch_subscribe(&wt, &wrx);
	ck_assert_int_eq(blitz_watch_try_changed(&wrx, NULL), -EAGAIN);
	ck_assert_int_eq(blitz_watch_send(&wt, &v), 0);
	ck_assert_uint_eq(blitz_watch_read(&wt, NULL), 1);
	ck_assert_int_eq(blitz_watch_try_changed(&wrx, NULL), 0);
	blitz_watch_close(&wt);
	blitz_watch_close(&wt);
	ck_assert_int_eq(blitz_watch_send(&wt, &v), -EPIPE);
	ck_assert_int_eq(blitz_watch_try_changed(&wrx, NULL), -EPIPE);
	blitz_watch_destroy(&wt);
}
END_TEST

/* Waiters cancelled while idle; zero-length and odd combinator arrays. */
struct combos {
	struct blitz_channel ch;
	struct blitz_broadcast bc;
	struct blitz_broadcast_rx brx;
	struct blitz_watch wt;
	struct blitz_watch_rx wrx;
	struct blitz_chan_waiter w;
	struct blitz_select_branch br[1];
	struct blitz_task *tasks[2];
	size_t index, winner, none_winner;
	uint64_t v, missed;
	int err[3];
	int step;
};

static enum blitz_poll combos_poll(void *arg, struct blitz_cx *cx)
{
	struct combos *s = arg;

	blitz_chan_waiter_init(&s->w);
	blitz_chan_waiter_cancel(&s->w);
	/* Closed: every receive is ready at once with -EPIPE, w stays idle. */
	ck_assert_int_eq(blitz_channel_send_poll(&s->ch, &s->w, cx, &s->v, &s->err[0]), BLITZ_READY);
	ck_assert_int_eq(blitz_channel_recv_poll(&s->ch, &s->w, cx, &s->v, &s->err[0]), BLITZ_READY);
	ck_assert_int_eq(blitz_broadcast_recv_poll(&s->brx, &s->w, cx, &s->v, &s->missed, &s->err[1]),
			 BLITZ_READY);
	ck_assert_int_eq(blitz_watch_changed_poll(&s->wrx, &s->w, cx, NULL, &s->err[2]), BLITZ_READY);
	ck_assert_int_eq(blitz_select_poll(s->br, 0, cx, &s->index), BLITZ_READY);
	ck_assert_uint_eq(s->index, 0);
	blitz_select_cancel(s->br, 0);
	/* A branch of an unknown kind wins with -EINVAL. */
	s->br[0].kind = 99;
	ck_assert_int_eq(blitz_select_poll(s->br, 1, cx, &s->index), BLITZ_READY);
	ck_assert_int_eq(s->br[0].err, -EINVAL);
	ck_assert_int_eq(blitz_join_all_poll(NULL, 0, cx), BLITZ_READY);
	blitz_join_all_cancel(NULL, 0);
	ck_assert_int_eq(blitz_race_poll(NULL, 0, cx, &s->winner), BLITZ_READY);
	ck_assert_uint_eq(s->winner, 0);
	blitz_race_cancel(NULL, 0);
	ck_assert_int_eq(blitz_join_tasks_poll(s->tasks, 2, cx), BLITZ_READY);
	ck_assert_int_eq(blitz_race_tasks_poll(s->tasks, 2, cx, &s->none_winner), BLITZ_READY);
	blitz_race_tasks_cancel(s->tasks, 2);
	return BLITZ_READY;
}

START_TEST(closed_receives_and_empty_combinators)
{
	struct blitz_runtime *rt = one_worker();
	struct combos *s = calloc(1, sizeof(*s));

	ck_assert_int_eq(blitz_channel_init(&s->ch, 2, sizeof(s->v)), 0);
	ck_assert_int_eq(blitz_broadcast_init(&s->bc, 2, sizeof(s->v)), 0);
	ck_assert_int_eq(blitz_watch_init(&s->wt, sizeof(s->v), NULL), 0);
	blitz_broadcast_subscribe(&s->bc, &s->brx);
	blitz_watch_subscribe(&s->wt, &s->wrx);
	blitz_channel_close(&s->ch);
	blitz_broadcast_close(&s->bc);
	blitz_watch_close(&s->wt);
	s->none_winner = 7;
	test_run_poll(rt, combos_poll, s);
	ck_assert_int_eq(s->err[0], -EPIPE);
	ck_assert_int_eq(s->err[1], -EPIPE);
	ck_assert_int_eq(s->err[2], -EPIPE);
	ck_assert_uint_eq(s->none_winner, 2);
	blitz_broadcast_unsubscribe(&s->brx);
	blitz_channel_destroy(&s->ch);
	blitz_broadcast_destroy(&s->bc);
	blitz_watch_destroy(&s->wt);
	blitz_runtime_free(rt);
	free(s);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* time.h                                                                  */

struct timers {
	struct blitz_sleep zero, past, never;
	struct blitz_timeout to_zero, to_never;
	struct blitz_interval iv;
	int step;
};

static enum blitz_poll timers_poll(void *arg, struct blitz_cx *cx)
{
	struct timers *s = arg;

	switch (s->step) {
	case 0:
		/* A zero duration and a deadline in the past: ready at once. */
		blitz_sleep_init(&s->zero, 0);
		ck_assert_int_eq(blitz_sleep_poll(&s->zero, cx), BLITZ_READY);
		blitz_sleep_until_init(&s->past, 0);
		ck_assert_int_eq(blitz_sleep_poll(&s->past, cx), BLITZ_READY);
		/* The farthest deadline: registered (pending), then cancelled. */
		blitz_sleep_init(&s->never, UINT64_MAX);
		ck_assert_uint_eq(blitz_sleep_deadline(&s->never), UINT64_MAX);
		ck_assert_int_eq(blitz_sleep_poll(&s->never, cx), BLITZ_PENDING);
		blitz_sleep_cancel(&s->never);
		blitz_sleep_cancel(&s->never);		/* twice: nothing */
		blitz_sleep_cancel(&s->zero);		/* fired: nothing */
		/* Reset to the past: ready at once. */
		blitz_sleep_reset(&s->never, 0);
		ck_assert_int_eq(blitz_sleep_poll(&s->never, cx), BLITZ_READY);
		/* A limit of zero on an inner that is ready: the inner wins. */
		blitz_timeout_init(&s->to_zero, 0);
		ck_assert_int_eq(blitz_timeout_poll(&s->to_zero, ready, NULL, cx), BLITZ_READY);
		ck_assert_int_eq(s->to_zero.timed_out, 0);
		blitz_timeout_until_init(&s->to_never, UINT64_MAX);
		blitz_timeout_cancel(&s->to_never);	/* never polled: nothing */
		/* A period of 0 is 1 ns; the first tick is at once. */
		blitz_interval_init(&s->iv, 0);
		ck_assert_uint_eq(s->iv.period_ns, 1);
		ck_assert_int_eq(blitz_interval_tick_poll(&s->iv, cx), BLITZ_READY);
		blitz_interval_cancel(&s->iv);
		blitz_interval_init(&s->iv, UINT64_MAX);
		ck_assert_int_eq(blitz_interval_tick_poll(&s->iv, cx), BLITZ_READY);
		ck_assert_int_eq(blitz_interval_tick_poll(&s->iv, cx), BLITZ_PENDING);
		blitz_interval_cancel(&s->iv);
		blitz_interval_cancel(&s->iv);
		s->step = 1;
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	ck_assert_uint_gt(blitz_now_ns(), 0);
	return BLITZ_READY;
}

START_TEST(timers_at_zero_and_at_the_clocks_end)
{
	struct blitz_runtime *rt = one_worker();
	struct timers s = { 0 };

	test_run_poll(rt, timers_poll, &s);
	blitz_runtime_free(rt);
}
END_TEST

Suite *bad_input_suite(void);
Suite *bad_input_suite(void)
{
	Suite *s = suite_create("bad_input");
	TCase *tc = TCASE("config", 10);

	tcase_add_test(tc, backend_name_out_of_range_is_null);
	tcase_add_test(tc, backend_parse_refuses_null_empty_unknown);
	tcase_add_test(tc, config_from_env_without_room_for_err);
	tcase_add_test(tc, config_validate_refuses_each_out_of_range_field);
	suite_add_tcase(s, tc);
	tc = TCASE("runtime", 30);
	tcase_add_test(tc, runtime_new_bad_config_is_einval);
	tcase_add_test(tc, runtime_free_null_is_a_no_op);
	tcase_add_test(tc, trace_dump_refuses_null_empty_and_no_ring);
	tcase_add_test(tc, spawn_refuses_null_runtime_vtable_and_state);
	tcase_add_test(tc, spawn_of_a_state_over_4g_is_einval);
	tcase_add_test(tc, task_size_saturates);
	tcase_add_test(tc, task_handle_null);
	tcase_add_test(tc, task_handle_after_completion);
	tcase_add_test(tc, runtime_queries_off_a_worker);
	tcase_add_test(tc, shutdown_null_runtime);
	tcase_add_test(tc, shutdown_zero_and_huge_timeouts);
	tcase_add_test(tc, cx_calls_are_defined_at_their_limits);
	tcase_add_test(tc, shield_256_deep_aborts);
	tcase_add_test(tc, shield_exit_without_enter_is_a_no_op);
	tcase_add_test(tc, join_from_a_worker_of_another_runtime_is_edeadlk);
	tcase_add_test(tc, explicit_schedule_functions);
	tcase_add_test(tc, drain_without_deadline_waits_for_the_tasks);
	suite_add_tcase(s, tc);
	tc = TCASE("sync", 10);
	tcase_add_test(tc, semaphore_counts_saturate);
	tcase_add_test(tc, idle_waiter_cancels_and_zero_counts);
	tcase_add_test(tc, unlock_of_a_lock_not_held_is_a_no_op);
	tcase_add_test(tc, notify_and_oncecell_with_nobody_waiting);
	tcase_add_test(tc, oncecell_get_of_a_set_cell_needs_no_init);
	tcase_add_test(tc, cancel_token_twice_and_child_of_a_cancelled_parent);
	tcase_add_test(tc, oneshot_send_twice_close_twice);
	tcase_add_test(tc, oneshot_recv_of_a_closed_channel);
	suite_add_tcase(s, tc);
	tc = TCASE("channel", 10);
	tcase_add_test(tc, channel_geometry_out_of_range);
	tcase_add_test(tc, channels_closed_twice_and_used_after);
	tcase_add_test(tc, closed_receives_and_empty_combinators);
	suite_add_tcase(s, tc);
	tc = TCASE("time", 10);
	tcase_add_test(tc, timers_at_zero_and_at_the_clocks_end);
	suite_add_tcase(s, tc);
	return s;
}
BLITZ_SUITE("bad_input", bad_input_suite)
