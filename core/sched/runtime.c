// SPDX-License-Identifier: MIT
/*
 * core/sched/runtime.c - runtime lifecycle: init with a config, lazy start of the
 * workers, block_on, join from outside, shutdown, statistics.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "constants.h"
#include "../clock.h"
#include "../compiler.h"
#include "../fault.h"
#include "../probes.h"
#include "../trace/exit_flush.h"
#include "../trace/flight.h"
#include "runtime.h"
#include "task.h"
#include "help.h"
#include "worker.h"

struct blitz_runtime *blitz_current_runtime(void)
{
	if (current_worker)
		return current_worker->rt;
	return current_task ? current_task->rt : NULL;
}

int blitz_current_worker(void)
{
	return current_worker ? (int)current_worker->index : -1;
}

unsigned blitz_runtime_workers(const struct blitz_runtime *rt)
{
	rt = runtime_or_current(rt);
	return rt ? rt->num_workers : 0;
}

const struct blitz_config *blitz_runtime_config(const struct blitz_runtime *rt)
{
	rt = runtime_or_current(rt);
	return rt ? &rt->cfg : NULL;
}

struct blitz_runtime *blitz_runtime_new(const struct blitz_config *cfg)
{
	struct blitz_config c;
	struct blitz_runtime *rt;
	char err[256];

	if (fault_setup()) {
		errno = EINVAL;
		return NULL;
	}
	if (cfg) {
		c = *cfg;
	} else {
		blitz_config_default(&c);
		if (blitz_config_from_env(&c, err, sizeof(err))) {
			fprintf(stderr, "blitz: %s\n", err);
			errno = EINVAL;
			return NULL;
		}
	}
	if (c.workers == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		c.workers = n < 1 ? 1 : n > CONFIG_MAX_WORKERS ? CONFIG_MAX_WORKERS : (unsigned)n;
	}
	if (blitz_config_validate(&c, err, sizeof(err))) {
		fprintf(stderr, "blitz: %s\n", err);
		errno = EINVAL;
		return NULL;
	}
	if (c.wake_min_backlog_ns == 0)
		c.wake_min_backlog_ns = BLITZ_WAKE_MIN_BACKLOG_NS;
	if (c.wake_backlog_ns == 0)
		c.wake_backlog_ns = BLITZ_WAKE_BACKLOG_NS;
	if (c.wake_busy_ns == 0)
		c.wake_busy_ns = BLITZ_WAKE_BUSY_NS;
	if (c.park_timeout_ns == 0)
		c.park_timeout_ns = BLITZ_PARK_TIMEOUT_NS;
	rt = aligned_alloc(CACHE_LINE, (sizeof(*rt) + CACHE_LINE - 1) & ~(size_t)(CACHE_LINE - 1));
	if (!rt)
		return NULL;
	memset(rt, 0, sizeof(*rt));
	rt->workers = aligned_alloc(CACHE_LINE, sizeof(*rt->workers) * c.workers);
	if (!rt->workers) {
		free(rt);
		return NULL;
	}
	rt->cfg = c;
	rt->num_workers = c.workers;
	rt->hist_id = hist_runtime_id();
	inject_init(&rt->inject);
	idle_init(&rt->idle, c.workers);
	owned_init(&rt->owned);
	task_depot_init(&rt->depot);
	atomic_init(&rt->shutdown, false);
	atomic_init(&rt->outside_joins, 0);
	atomic_init(&rt->outside_polling, 0);
	atomic_init(&rt->started, false);
	atomic_init(&rt->stopped_polling, 0);
	atomic_init(&rt->external_spawned, 0);
	atomic_init(&rt->io_parker, -1);
	pthread_mutex_init(&rt->start_lock, NULL);
	blitz_cancel_token_init(&rt->shutdown_token);
	runtime_timers_init(rt);
	blocking_pool_init(&rt->blocking, c.max_blocking_threads, c.blocking_idle_ms);
	for (unsigned i = 0; i < c.workers; i++)
		worker_init(&rt->workers[i], rt, i);
	if (io_driver_init(&rt->io, rt, &c)) {
		fprintf(stderr, "blitz: no I/O backend could start\n");
		blitz_runtime_free(rt);
		errno = ENODEV;
		return NULL;
	}
	atomic_init(&rt->exit_flush, false);
	atomic_init(&rt->exit_flushed, 0);
	exit_flush_register(rt);
	if (c.flight_signal && flight_signal_install(c.flight_signal))
		fprintf(stderr, "blitz: BLITZ_FLIGHT_SIGNAL=%d: %s; no dump on the signal\n",
			c.flight_signal, strerror(errno));
	return rt;
}

/*
 * start_worker - pthread_create for @w, tried again for a while (100 times,
 * 1 ms apart) when it fails for want of resources: EAGAIN (a thread limit,
 * or memory, which a moment may give back; ENOMEM from an allocator that
 * says so).  Return: 0 or the last error.
 */
static int start_worker(struct blitz_worker *w, const pthread_attr_t *attr)
{
	int err = EAGAIN;

	for (int i = 0; i < 100 && (err == EAGAIN || err == ENOMEM); i++) {
		if (i)
			usleep(1000);
		err = pthread_create(&w->thread, attr, worker_main, w);
	}
	return err;
}

/*
 * runtime_start - start the workers on the first spawn (lazy start).  A
 * worker that cannot start aborts the process: the queues, the steal
 * victims and the idle protocol count on every worker running.
 */
void runtime_start(struct blitz_runtime *rt)
{
	/* Acquire: pairs with the release below; the threads exist. */
	if (atomic_load_explicit(&rt->started, memory_order_acquire))
		return;
	pthread_mutex_lock(&rt->start_lock);
	/* Relaxed: under start_lock, as the store below. */
	if (!atomic_load_explicit(&rt->started, memory_order_relaxed)) {
		sigset_t old;

		/* Workers never take an asynchronous signal (blitz/signal.h). */
		runtime_block_signals(&old);
		pthread_attr_t attr;

		/* Joins nest on a worker's stack (core/sched/help.c): room for them. */
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, BLITZ_WORKER_STACK_SIZE);
		for (unsigned i = 0; i < rt->num_workers; i++) {
			int err = start_worker(&rt->workers[i], &attr);

			if (err) {
				fprintf(stderr, "blitz: cannot start worker %u: %s\n", i, strerror(err));
				abort();
			}
		}
		pthread_attr_destroy(&attr);
		runtime_restore_signals(&old);
		/* Release: pairs with the acquires above and in blitz_runtime_free. */
		atomic_store_explicit(&rt->started, true, memory_order_release);
	}
	pthread_mutex_unlock(&rt->start_lock);
}

/*
 * runtime_notify_parked - the producer's half of the idle protocol
 * (core/sched/idle.h): after queueing a task, wake one sleeping worker if nobody
 * is searching.  @waker: the notifying worker's index, -1 from outside.
 *
 * A claim that reserved the searcher slot but found no sleeper's bit gives
 * the slot back; a producer that saw the reservation meanwhile woke nobody,
 * so the last one to give it back looks at the queues again, as any last
 * searcher does (spin found the lost wakeup: tests/model/README.md,
 * finding 5).  The loop ends: it goes round only while a worker is between
 * clearing its own bit and num_parked--, or another producer just queued.
 */
void runtime_notify_parked(struct blitz_runtime *rt, int waker)
{
	int w;

	for (;;) {
		/* seq_cst fence: our queue push (or the slot's give-back) before
		 * the idle-state and queue loads that follow. */
		atomic_thread_fence(memory_order_seq_cst);
		if (idle_searching(&rt->idle) != 0)
			return;
		w = idle_claim_parked(&rt->idle);
		if (w >= 0)
			break;
		if (w != IDLE_CLAIM_LAST_GAVE_BACK || !runtime_has_work(rt))
			return;
		cpu_relax();
	}
	/*
	 * The claimed sleeper is the notifier itself, dispatching the I/O its
	 * sleep in the backend woke to (sleep_in_io): the claim stands (its bit
	 * is cleared and it is the searcher, as for any claim), but it is awake
	 * and returns from that sleep without waiting again (each backend's
	 * reap waits once, then dispatches), so it needs no wake.  The wake
	 * cost a futex call, an eventfd write, and an extra return from the
	 * next epoll_wait with the eventfd's read: almost half the syscalls
	 * an epoll echo server made per message at one connection (docs/io.md,
	 * "Who waits for completions").  reaping_asleep is the notifier's own
	 * flag (waker is the calling worker's index).
	 * The notification itself is still written, without the futex wake,
	 * so that the sleep's end consumes it as any other and the unpark
	 * probe names the waker (itself) instead of "unknown" (seq_cst, as
	 * park_unpark's exchange).
	 */
	if (w == waker && rt->workers[w].reaping_asleep) {
		/* Relaxed: published by the exchange below, as in park_unpark. */
		atomic_store_explicit(&rt->workers[w].woken_by, waker, memory_order_relaxed);
		atomic_exchange(&rt->workers[w].park.futex, PARK_NOTIFIED);
		return;
	}
	/* Relaxed: published by park_unpark's exchange. */
	atomic_store_explicit(&rt->workers[w].woken_by, waker, memory_order_relaxed);
	worker_unpark(&rt->workers[w]);
}

/*
 * runtime_unpark_for_io - a thread that is not one of @rt's workers has
 * just counted an I/O operation in flight (core/io/io.c,
 * submitted_outside): make sure a worker will submit it (io_uring's
 * pending list) and watch the driver for it.  A worker that parked before
 * the count sleeps on its futex (or in its own ring without the shared
 * ring watched) and would see the completion only at its park timeout;
 * one that parks after it flushes the list and sees the count, and
 * sleeps in the driver.  The Dekker pair: our count (and the list's
 * flag), this fence, then the parked bits; the parker's seq_cst bit
 * (idle_set_parked), then its seq_cst loads of the flag (worker_park's
 * flush) and of the count (sleep_in_io, uring_wait_own).  Either we see
 * its bit and unpark it (it parks again, seeing both), or it sees them.
 * Not runtime_notify_parked: a searcher that it trusts to look may be
 * only a notifier's reservation (idle_claim_parked), which
 * is given back without parking, and only a park loads the count.  The
 * unpark claims nothing: the worker ends its sleep as after a timeout
 * (the unpark probe says so) and parks again.  It may be for nothing (a
 * worker asleep in the driver watches a new operation too).
 */
void runtime_unpark_for_io(struct blitz_runtime *rt)
{
	int w;

	/* seq_cst fence: the caller's count before our loads of the bits. */
	atomic_thread_fence(memory_order_seq_cst);
	w = idle_any_parked(&rt->idle);
	if (w >= 0)
		worker_unpark(&rt->workers[w]);
}

/* runtime_has_work - is anything queued that a worker could take? */
bool runtime_has_work(struct blitz_runtime *rt)
{
	if (!inject_is_empty(&rt->inject))
		return true;
	for (unsigned i = 0; i < rt->num_workers; i++)
		if (!queue_is_empty(&rt->workers[i].queue))
			return true;
	return false;
}

/* runtime_schedule - queue @t from a thread that is not one of @rt's workers. */
void runtime_schedule(struct blitz_runtime *rt, struct blitz_task *t, bool yield)
{
	(void)yield;
	inject_push(&rt->inject, t);
	runtime_notify_parked(rt, -1);
}

/* ---------------------------------------------------------------------- */
/* Waiting from outside the runtime                                        */

struct thread_waker {
	_Atomic uint32_t woken;
};

static void thread_wake(const void *data)
{
	struct thread_waker *tw = (struct thread_waker *)data;

	/* Release: the joiner's acquire load sees the task's final state. */
	atomic_store_explicit(&tw->woken, 1, memory_order_release);
	syscall(SYS_futex, &tw->woken, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static struct blitz_waker thread_clone(const void *data);
static void thread_drop(const void *data) { (void)data; }

static const struct blitz_waker_vtable thread_waker_vtable = {
	.wake = thread_wake,
	.wake_by_ref = thread_wake,
	.clone = thread_clone,
	.drop = thread_drop,
};

static struct blitz_waker thread_clone(const void *data)
{
	return (struct blitz_waker){ .data = data, .vtable = &thread_waker_vtable };
}

/*
 * outside_stack_room - may a join from this non-worker thread, at this
 * depth, run queued tasks on its stack?  A task it runs may join in turn,
 * and each nesting takes stack: as on a worker (core/sched/help.c), a
 * join that finds less than BLITZ_JOIN_STACK_RESERVE left only waits, and
 * so does one on a stack that is not the thread's own (a fiber's: its
 * room is unknown).  The bounds are read once per thread
 * (pthread_getattr_np reads /proc/self/maps for the main thread); if they
 * cannot be read, the join helps without a bound, as before.
 */
static bool outside_stack_room(void)
{
	static _Thread_local uintptr_t limit, top;
	static _Thread_local int known;		/* 0: not read yet, 1: read, -1: unreadable */
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);

	if (!known)
		known = help_stack_bounds(&limit, &top) ? 1 : -1;
	return known < 0 || (here > limit && here < top);
}

/*
 * The runtimes whose tasks this thread is polling while it helps, innermost
 * first (frames on its stack): a join nested in such a poll ends when any
 * of them shuts down, since that runtime's free waits for the poll, and
 * the joined task may be one of another runtime that only the free's
 * drops would end.  Each is alive while its frame is (its
 * outside_polling count is held).
 */
struct outside_frame {
	struct blitz_runtime *rt;
	struct outside_frame *outer;
};

static __thread struct outside_frame *outside_frames;

/* helped_runtime_stopping - does a runtime this thread helps shut down? */
static bool helped_runtime_stopping(void)
{
	for (struct outside_frame *f = outside_frames; f; f = f->outer)
		/* Acquire: pairs with the free's store; only whether to stop. */
		if (atomic_load_explicit(&f->rt->shutdown, memory_order_acquire))
			return true;
	return false;
}

/*
 * help_outside - run one task of @rt's global queue from a thread that is
 * not a worker: 1 if it ran one, 0 if the queue was empty, -1 once the
 * runtime shuts down (the caller stops helping).
 *
 * blitz_runtime_free drops every task that has not completed, so none
 * may be inside a poll here while it does: outside_polling counts us
 * first, then we test the flag; the free sets the flag, then waits for
 * the count to fall to zero before its drops.  Both sides seq_cst (a
 * Dekker pair): either we see the flag and run nothing, or the free sees
 * our count and waits for the poll.  A poll that joins in turn (nested
 * here) ends its join with -ESHUTDOWN (wait_outside), so the wait ends.
 */
static int help_outside(struct blitz_runtime *rt, struct blitz_task *joiner)
{
	struct blitz_task *other = NULL;
	bool stopping;

	atomic_fetch_add_explicit(&rt->outside_polling, 1, memory_order_seq_cst);
	stopping = atomic_load_explicit(&rt->shutdown, memory_order_seq_cst);
	if (!stopping)
		other = inject_pop(&rt->inject);
	if (other) {
		struct outside_frame f = { .rt = rt, .outer = outside_frames };

		outside_frames = &f;
		worker_run_task(NULL, other);
		outside_frames = f.outer;
		current_task = joiner;	/* the poll leaves it NULL */
	}
	/* Release: the poll's writes come before the free's drops (its acquire load). */
	atomic_fetch_sub_explicit(&rt->outside_polling, 1, memory_order_release);
	if (other)
		return 1;
	return stopping ? -1 : 0;
}

/*
 * leave_early - a join inside a task's poll ends before @t completed (the
 * runtime shuts down): take the waker back, or, if @t's completion already
 * took it, wait for its call (it is on our stack).
 */
static void leave_early(struct blitz_task *t, struct thread_waker *tw)
{
	if (task_take_back_join_waker(t))
		return;
	/* Acquire: as in wait_outside; the completer calls us in task_finish. */
	while (!atomic_load_explicit(&tw->woken, memory_order_acquire))
		sched_yield();
}

/*
 * wait_outside - wait for @t from a non-worker thread.  With @help, run
 * queued tasks meanwhile, while the stack has room for them
 * (outside_stack_room).  The waker lives on our stack, so once it is
 * registered we return only after the completer has called it, or
 * after taking it back.
 *
 * blitz_runtime_free may run meanwhile (a join begun before it was
 * called): it stops the helping (help_outside), drops @t, which wakes us,
 * and frees the runtime only once outside_joins, which counts the joins
 * that read the runtime, is back to zero.  A join inside the poll of a
 * task this thread helps with (a nested one, on this runtime or another)
 * returns -ESHUTDOWN once a runtime it helps shuts down, as a worker's
 * join does (help.c): that runtime's free waits for the poll to return.
 */
static int wait_outside(struct blitz_task *t, bool help)
{
	struct blitz_runtime *rt = t->rt;
	struct blitz_task *joiner = current_task;	/* set: nested in a helped poll */
	struct thread_waker tw = { .woken = 0 };
	uint64_t s = task_state_load(t);
	bool registered = false, counted = help || joiner;
	int ret = 0;

	if (task_lifecycle(s) == TASK_COMPLETE)
		return blitz_task_cancelled(t) ? -ECANCELED : 0;
	help = help && outside_stack_room();
	/*
	 * Relaxed: the free must see it only for a join begun before the
	 * free was called (the contract: blitz_runtime_free), which that
	 * order gives; a nested join's is also before its poll's release
	 * decrement of outside_polling, which the free waits for.
	 */
	if (counted)
		atomic_fetch_add_explicit(&rt->outside_joins, 1, memory_order_relaxed);

	if (!(s & TASK_JOIN_WAKER)) {
		task_cold(t)->join_waker = thread_clone(&tw);
		for (;;) {
			if (task_lifecycle(s) == TASK_COMPLETE)
				break;
			/*
			 * acq_rel, as task_cas: the release publishes join_waker to
			 * task_finish's CAS; a COMPLETE seen on failure comes with
			 * the task's result.
			 */
			if (atomic_compare_exchange_weak_explicit(&t->state, &s, s | TASK_JOIN_WAKER,
								  memory_order_acq_rel,
								  memory_order_acquire)) {
				registered = true;
				break;
			}
		}
	}
	/* Acquire: pairs with thread_wake's release store: the final state is visible. */
	while (registered ? !atomic_load_explicit(&tw.woken, memory_order_acquire)
			  : task_lifecycle(task_state_load(t)) != TASK_COMPLETE) {
		struct timespec ts = { 0, 1000000 };
		int ran = help ? help_outside(rt, joiner) : 0;

		if (ran > 0)
			continue;
		if (ran < 0)
			help = false;
		if (joiner && helped_runtime_stopping()) {
			if (registered)
				leave_early(t, &tw);
			ret = -ESHUTDOWN;
			break;
		}
		events_outside_wait();	/* what it logged, before it sleeps */
		if (registered)
			syscall(SYS_futex, &tw.woken, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		else
			sched_yield();
	}
	/* Release: our last read of the runtime comes before the free's (acquire). */
	if (counted)
		atomic_fetch_sub_explicit(&rt->outside_joins, 1, memory_order_release);
	if (ret)
		return ret;
	return blitz_task_cancelled(t) ? -ECANCELED : 0;
}

/*
 * wait_for - wait for @t: on one of its runtime's workers by helping
 * (core/sched/help.c), on a worker of another runtime not at all (its
 * tasks may need this thread), elsewhere as wait_outside.
 */
static int wait_for(struct blitz_task *t, bool help)
{
	struct blitz_worker *w = current_worker;

	if (!w)
		return wait_outside(t, help);
	if (w->rt == t->rt)
		return worker_join(w, t);
	errno = EDEADLK;
	return -EDEADLK;
}

int blitz_join(struct blitz_task *t)
{
	if (!t)
		return -EINVAL;
	return wait_for(t, true);
}

int blitz_block_on(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
		   void *state, size_t size)
{
	struct blitz_task *t = blitz_spawn(rt, vt, state, size);
	int ret;

	if (!t)
		return -errno;
	ret = wait_for(t, false);
	/* Not done (a join from a worker that stopped waiting): still running. */
	if (blitz_task_done(t) && size)
		memcpy(state, task_user(t), size);
	blitz_task_release(t);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Shutdown                                                                */

/*
 * freed_from_inside - is this thread running @rt's code: one of its
 * workers, a thread helping it (a poll of one of its tasks is on this
 * stack), or one of its blocking threads?  The free would wait for
 * itself: for its own worker's exit, for that poll to return, for its
 * own job.
 */
static bool freed_from_inside(struct blitz_runtime *rt)
{
	if (current_worker && current_worker->rt == rt)
		return true;
	for (struct outside_frame *f = outside_frames; f; f = f->outer)
		if (f->rt == rt)
			return true;
	return blocking_pool_is_mine(&rt->blocking);
}

/* Forward: blitz_runtime_new() frees a half-built runtime with it. */
void blitz_runtime_free(struct blitz_runtime *rt)
{
	struct blitz_task *t;

	if (!rt)
		return;
	if (freed_from_inside(rt)) {
		fprintf(stderr, "blitz: blitz_runtime_free: called from inside that runtime (a task, "
			"or a blocking job, of it): refused; free it from a thread outside it\n");
		return;
	}
	exit_flush_unregister(rt);		/* its workers hand over at their exit */
	owned_close(&rt->owned);		/* no new tasks from here on */
	events_outside_wait();			/* what this thread logged */
	/*
	 * seq_cst: the workers' acquire load of the flag needs the release
	 * half; help_outside's Dekker pair (its count, then the flag) needs
	 * the total order.
	 */
	atomic_store_explicit(&rt->shutdown, true, memory_order_seq_cst);
	/* Acquire: pairs with runtime_start's release: the thread handles are written. */
	if (atomic_load_explicit(&rt->started, memory_order_acquire)) {
		for (unsigned i = 0; i < rt->num_workers; i++)
			worker_unpark(&rt->workers[i]);
		for (unsigned i = 0; i < rt->num_workers; i++)
			pthread_join(rt->workers[i].thread, NULL);
	}
	/*
	 * A thread that is not a worker may be polling a task it took from
	 * the global queue (help_outside): wait for that poll, which could
	 * queue a blocking job or an I/O operation, and which the drops below
	 * must not race.  seq_cst: the other half of help_outside's pair.
	 */
	while (atomic_load_explicit(&rt->outside_polling, memory_order_seq_cst))
		sched_yield();
	/*
	 * No thread can queue a blocking job any more: cancel the queued
	 * ones, wait for the running ones and join the pool's threads.  Their
	 * completions wake tasks, which are dropped below like any other.
	 */
	blocking_pool_shutdown(&rt->blocking);
	/*
	 * The workers are gone: every task that has not completed is still on
	 * the live list, queued or waiting (owned_pop_any drains the done
	 * stacks, whose tasks are complete).  Cancel and drop each of them (a
	 * drop may release other handles).  The queues are not read again;
	 * the global one is forgotten before each drop: the drop may free a
	 * task still linked there, and a wake during a later drop pushes onto
	 * that queue (from this thread, not a worker), which would write into
	 * the freed tail (found by a review, 2026-11-29;
	 * task:runtime_free_wakes_during_its_drops).
	 */
	/*
	 * Operations still in flight hold references to their tasks: cancel
	 * them and collect the completions, so every task can be freed.
	 */
	io_driver_shutdown(&rt->io);
	while ((t = owned_pop_any(&rt->owned))) {
		inject_forget(&rt->inject);
		task_finish(t, -1, 1);
	}
	inject_forget(&rt->inject);
	/*
	 * Joins from other threads were woken by the drops (or end with
	 * -ESHUTDOWN, nested): wait until none reads the runtime any more.
	 * Acquire: pairs with each one's release as it leaves.
	 */
	while (atomic_load_explicit(&rt->outside_joins, memory_order_acquire))
		sched_yield();
	runtime_timers_free(rt);	/* after the drops, which may cancel sleeps */
	io_driver_deinit(&rt->io);
	inject_destroy(&rt->inject);
	owned_destroy(&rt->owned);
	blocking_pool_destroy(&rt->blocking);
	pthread_mutex_destroy(&rt->start_lock);
	blitz_cancel_token_destroy(&rt->shutdown_token);	/* no task is left to wait on it */
	task_depot_drain(&rt->depot);	/* no worker is left to fill it */
	for (unsigned i = 0; i < rt->num_workers; i++)
		worker_events_free(&rt->workers[i].events);
	free(rt->workers);
	free(rt);
}

/* ---------------------------------------------------------------------- */
/* Statistics                                                              */

int blitz_worker_stats(const struct blitz_runtime *rt, unsigned index,
		       struct blitz_worker_stats *out)
{
	rt = runtime_or_current(rt);
	if (!rt || index >= rt->num_workers)
		return -EINVAL;
	worker_read_stats(&rt->workers[index], out);
	return 0;
}

void blitz_stats(const struct blitz_runtime *rt, struct blitz_stats *out)
{
	memset(out, 0, sizeof(*out));
	rt = runtime_or_current(rt);
	if (!rt)
		return;
	out->num_workers = rt->num_workers;
	/* Relaxed: a statistic (a snapshot). */
	out->total_spawned = atomic_load_explicit(&((struct blitz_runtime *)rt)->external_spawned,
						  memory_order_relaxed);
	for (unsigned i = 0; i < rt->num_workers; i++) {
		struct blitz_worker_stats ws;

		worker_read_stats(&rt->workers[i], &ws);
		out->total_spawned += ws.spawned;
		out->total_polled += ws.polls;
		out->total_stolen += ws.stolen;
		out->total_parked += ws.parks;
	}
}
