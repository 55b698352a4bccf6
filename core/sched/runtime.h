/* SPDX-License-Identifier: MIT */
/* core/sched/runtime.h - the runtime object and what the core files share. */
#ifndef BLITZ_CORE_RUNTIME_H
#define BLITZ_CORE_RUNTIME_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <blitz.h>
#include "../blocking/pool.h"
#include "idle.h"
#include "inject.h"
#include "owned.h"
#include "../spinlock.h"
#include "../time/timer.h"
#include "../../backends/driver.h"
#include "worker.h"

struct blitz_runtime {
	struct blitz_config cfg;
	struct blitz_inject inject;
	struct blitz_idle idle;
	struct blitz_owned owned;
	_Atomic bool shutdown;
	_Atomic bool started;
	_Atomic unsigned stopped_polling;	/* workers out of their loop (worker_main) */
	/*
	 * Threads that are not workers, inside blitz_join (runtime.c,
	 * wait_outside): joins that may still read the runtime, and helpers
	 * inside a task's poll.  blitz_runtime_free waits for the second
	 * before it drops tasks and for the first before it frees.
	 */
	_Atomic unsigned outside_joins, outside_polling;
	pthread_mutex_t start_lock;
	_Atomic uint64_t external_spawned;	/* spawns from non-worker threads */
	unsigned num_workers;
	uint64_t hist_id;			/* which runtime, for hist_snapshot (histogram.c) */
	struct blitz_worker *workers;		/* num_workers, cache-line aligned */
	struct blitz_io io;			/* the I/O driver (backends/) */
	_Atomic int io_parker;			/* worker sleeping in the driver, or -1 */
	struct blocking_pool blocking;		/* core/blocking/pool.c; no thread until a job */
	struct blitz_cancel_token shutdown_token;	/* core/sched/shutdown.c */
	/* exit_flush.c: the live list (under its lock) and the hand-over at exit. */
	struct blitz_runtime *live_next, *live_prev;
	pid_t live_pid;				/* the process that made it; 0: not live */
	_Atomic bool exit_flush;		/* the process exits: hand over (exit_flush.h) */
	_Atomic unsigned exit_flushed;		/* workers that did */
	/* Task blocks between the threads' lists (task_cache.h): its own lines. */
	alignas(CACHE_LINE) struct task_depot depot;

	/*
	 * Timers (core/time/driver.c): inserted and cancelled from any thread under
	 * timer_lock, advanced by worker 0; no wake runs under the lock.
	 */
	alignas(CACHE_LINE) struct spinlock timer_lock;
	_Atomic uint64_t timer_next;		/* ns, <= the wheel's next expiry; UINT64_MAX: none */
	_Atomic uint64_t timer_wake_at;		/* ns, when parked worker 0 polls next; 0: awake */
	_Atomic uint64_t timer_unparks;		/* inserts that woke worker 0 (a statistic) */
	struct timer_wheel timers;		/* under timer_lock */
};

void runtime_start(struct blitz_runtime *rt);
/* core/process/signal.c: around the creation of every runtime thread. */
void runtime_block_signals(sigset_t *old);
void runtime_restore_signals(const sigset_t *old);
void runtime_notify_parked(struct blitz_runtime *rt, int waker);
void runtime_unpark_for_io(struct blitz_runtime *rt);

/*
 * runtime_local_wake_wanted - after a push to the calling worker's own
 * ring: is someone asleep and nobody searching?  The pusher is awake and
 * will run the task itself, so a missed wake here costs parallelism
 * (bounded by the 10 ms park timeout), never a task: the idle state is
 * read with relaxed loads, and runtime_notify_parked()'s fence is paid only
 * when this says yes and the wake policy agrees (should_notify_others).
 * Pushes that the pusher will not run itself (the global queue) call
 * runtime_notify_parked() directly.  Inline: a worker asks after most
 * pushes.
 */
static inline bool runtime_local_wake_wanted(struct blitz_runtime *rt)
{
	return atomic_load_explicit(&rt->idle.num_searching, memory_order_relaxed) == 0 &&
	       atomic_load_explicit(&rt->idle.num_parked, memory_order_relaxed) != 0;
}
bool runtime_has_work(struct blitz_runtime *rt);
void runtime_schedule(struct blitz_runtime *rt, struct blitz_task *t, bool yield);

/*
 * worker_local_dest - where worker_schedule_local() will put a task (a
 * probe's or a record's DEST_* code).  Inline: the event log asks at
 * every spawn and schedule it records.
 */
static inline int worker_local_dest(struct blitz_worker *w, bool yield)
{
	/* Relaxed: owner-only flag (see worker_schedule_local). */
	if (atomic_load_explicit(&w->transitioning_to_park, memory_order_relaxed) || w->draining)
		return DEST_GLOBAL;
	return yield || !w->rt->cfg.lifo ? DEST_RING : DEST_LIFO;
}

/*
 * runtime_or_current - @rt, or for NULL the calling task's runtime (NULL
 * off the runtime's threads): what a NULL runtime argument of the public
 * API means (include/blitz.h, "Bad input").
 */
static inline struct blitz_runtime *runtime_or_current(const struct blitz_runtime *rt)
{
	return rt ? (struct blitz_runtime *)rt : blitz_current_runtime();
}

#endif
