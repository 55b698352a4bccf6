// SPDX-License-Identifier: MIT
/*
 * core/blocking/pool.c - the blocking pool (docs/blocking.md; Tokio's
 * blocking spawner is the model).
 *
 * - Threads start on demand: a job queued while no thread is idle starts
 *   one, up to max_threads; past the cap jobs wait in the queue.
 * - An idle thread exits after idle_ns without a job.  It takes itself off
 *   the live list and joins the thread that exited before it, leaving its
 *   own handle in last_exiting for the next one (or for shutdown): at most
 *   one handle is ever waiting to be joined, and none leaks.
 * - The queue is intrusive (the job's next/prev): no allocation per job.
 * - num_notify counts notifications sent and not yet taken: the spawner
 *   takes an idle thread (idle--, num_notify++) and signals; a thread that
 *   wakes without a notification to take (a spurious wakeup, or another
 *   thread took it) waits again.  A notification is never lost to a
 *   timeout: a thread checks num_notify before it looks at the clock.
 *
 * A job's state goes IDLE -> QUEUED -> RUNNING -> DONE, or QUEUED -> DONE
 * when it is cancelled (or the pool shuts down) before a thread takes it.
 * Every transition but the last happens under the pool's lock.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "pool.h"
#include "../clock.h"
#include "../fault.h"
#include "../probes.h"
#include "../trace/event_log.h"
#include "../sched/runtime.h"

enum { JOB_IDLE = 0, JOB_QUEUED = 1, JOB_RUNNING = 2, JOB_DONE = 3 };

void blocking_pool_init(struct blocking_pool *pool, unsigned max_threads, unsigned idle_ms)
{
	pthread_condattr_t attr;

	memset(pool, 0, sizeof(*pool));
	atomic_init(&pool->jobs_done, 0);
	pthread_mutex_init(&pool->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&pool->cond, &attr);
	pthread_condattr_destroy(&attr);
	pool->max_threads = max_threads ? max_threads : CONFIG_MAX_BLOCKING_THREADS;
	pool->idle_ns = (uint64_t)(idle_ms ? idle_ms : BLITZ_BLOCKING_IDLE_MS) * 1000000ull;
}

void blocking_pool_destroy(struct blocking_pool *pool)
{
	pthread_cond_destroy(&pool->cond);
	pthread_mutex_destroy(&pool->lock);
}

/* ---------------------------------------------------------------------- */
/* Jobs                                                                    */

void blitz_blocking_init(struct blitz_blocking *job, blitz_blocking_fn fn, void *arg)
{
	memset(job, 0, sizeof(*job));
	job->fn = fn;
	job->arg = arg;
	atomic_init(&job->state, JOB_IDLE);
}

bool blitz_blocking_done(const struct blitz_blocking *job)
{
	/* Acquire: pairs with job_complete's release; the result is visible. */
	return atomic_load_explicit(&((struct blitz_blocking *)job)->state,
				    memory_order_acquire) == JOB_DONE;
}

/*
 * job_complete - store the result, publish DONE and wake the waiter.  The
 * waker is copied out first: once DONE is visible the job's memory may be
 * reused.  The futex wake of an outside waiter may reach memory that is
 * already reused; a futex wake on any address is harmless (a waiter there
 * sees at worst a spurious wakeup, which every futex waiter tolerates).
 */
static void job_complete(struct blitz_blocking *job, int64_t result)
{
	struct blitz_waker w = job->waker;
	bool outside = job->outside;

	job->waker.vtable = NULL;
	job->result = result;
	/* Release: the waiter's acquire load of DONE sees the result. */
	atomic_store_explicit(&job->state, JOB_DONE, memory_order_release);
	if (outside)
		syscall(SYS_futex, &job->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	else
		blitz_waker_wake(&w);
}

/* Under the lock.  The state stores are relaxed: the lock orders them. */
static void jobq_push(struct blocking_pool *pool, struct blitz_blocking *job)
{
	job->next = NULL;
	job->prev = pool->tail;
	if (pool->tail)
		pool->tail->next = job;
	else
		pool->head = job;
	pool->tail = job;
	pool->queued++;
	/* Relaxed: read under the lock (cancel) or by the submitter itself. */
	atomic_store_explicit(&job->state, JOB_QUEUED, memory_order_relaxed);
}

static void jobq_unlink(struct blocking_pool *pool, struct blitz_blocking *job)
{
	if (job->prev)
		job->prev->next = job->next;
	else
		pool->head = job->next;
	if (job->next)
		job->next->prev = job->prev;
	else
		pool->tail = job->prev;
	job->next = job->prev = NULL;
	pool->queued--;
}

static struct blitz_blocking *jobq_pop(struct blocking_pool *pool)
{
	struct blitz_blocking *job = pool->head;

	if (!job)
		return NULL;
	jobq_unlink(pool, job);
	/* Relaxed: under the lock, like every state change before DONE. */
	atomic_store_explicit(&job->state, JOB_RUNNING, memory_order_relaxed);
	return job;
}

/* ---------------------------------------------------------------------- */
/* Pool threads                                                            */

static void *pool_thread(void *arg);

/* start_thread - under the lock: one more thread.  0 or -errno. */
static int start_thread(struct blocking_pool *pool)
{
	struct blocking_thread *t = calloc(1, sizeof(*t));
	sigset_t old;
	int err;

	if (!t)
		return -ENOMEM;
	t->pool = pool;
	runtime_block_signals(&old);	/* no asynchronous signal in the pool (blitz/signal.h) */
	err = fault_fail(FAULT_POOL_THREAD) ? EAGAIN : pthread_create(&t->id, NULL, pool_thread, t);
	runtime_restore_signals(&old);
	if (err) {
		free(t);
		return -err;
	}
	t->next = pool->live;
	if (pool->live)
		pool->live->prev = t;
	pool->live = t;
	pool->threads++;
	pool->threads_started++;
	return 0;
}

/* run_job - outside the lock: run @job and complete it, firing the probes. */
static void run_job(struct blocking_pool *pool, struct blitz_blocking *job, unsigned threads)
{
	bool timed = BLITZ_BLOCKING_START_ENABLED() || BLITZ_BLOCKING_END_ENABLED();
	uint64_t start = timed ? clock_now_ns() : 0;
	int64_t r;

	BLITZ_BLOCKING_START((uint64_t)(uintptr_t)job,
			     job->queued_ns && start ? start - job->queued_ns : 0, threads);
	r = job->fn(job->arg);
	BLITZ_BLOCKING_END((uint64_t)(uintptr_t)job, start ? clock_now_ns() - start : 0, r);
	/*
	 * Relaxed: a statistic; counted before the completion's release store,
	 * so a waiter that saw its job done also sees it counted.
	 */
	atomic_fetch_add_explicit(&pool->jobs_done, 1, memory_order_relaxed);
	job_complete(job, r);
}

/* deadline - @ns from now on CLOCK_MONOTONIC, for pthread_cond_timedwait. */
static struct timespec deadline(uint64_t ns)
{
	uint64_t at = clock_now_ns() + ns;

	return (struct timespec){ .tv_sec = (time_t)(at / 1000000000ull),
				  .tv_nsec = (long)(at % 1000000000ull) };
}

/*
 * wait_for_job - under the lock: wait as an idle thread.  Returns true if
 * notified of a job, false on shutdown or idle timeout (idle already
 * given back in both cases).
 */
static bool wait_for_job(struct blocking_pool *pool)
{
	struct timespec until = deadline(pool->idle_ns);

	pool->idle++;
	for (;;) {
		int rc = pthread_cond_timedwait(&pool->cond, &pool->lock, &until);

		if (pool->num_notify) {
			pool->num_notify--;	/* the notifier took us off idle */
			return true;
		}
		if (pool->shutdown || rc == ETIMEDOUT) {
			pool->idle--;
			return false;
		}
		/* A spurious wakeup: nothing for us, wait out the same deadline. */
	}
}

/*
 * thread_exit - under the lock, the thread's last act on the pool.  Past
 * the idle timeout it leaves the live list, becomes last_exiting and
 * returns the previous last_exiting for us to join.  At shutdown it stays
 * on the live list: blocking_pool_shutdown() joins it.
 */
static struct blocking_thread *thread_exit(struct blocking_pool *pool, struct blocking_thread *self)
{
	struct blocking_thread *prev = NULL;

	pool->threads--;
	if (pool->shutdown)
		return NULL;
	if (self->prev)
		self->prev->next = self->next;
	else
		pool->live = self->next;
	if (self->next)
		self->next->prev = self->prev;
	prev = pool->last_exiting;
	pool->last_exiting = self;
	return prev;
}

/* The pool whose thread this is (NULL on any other thread). */
static __thread struct blocking_pool *my_pool;

bool blocking_pool_is_mine(const struct blocking_pool *pool)
{
	return my_pool == pool;
}

static void *pool_thread(void *arg)
{
	struct blocking_thread *self = arg, *prev;
	struct blocking_pool *pool = self->pool;
	struct blitz_blocking *job;

	my_pool = pool;
	pthread_setname_np(pthread_self(), "blitz-blocking");
	pthread_mutex_lock(&pool->lock);
	for (;;) {
		while ((job = jobq_pop(pool))) {
			unsigned threads = pool->threads;

			pthread_mutex_unlock(&pool->lock);
			run_job(pool, job, threads);
			pthread_mutex_lock(&pool->lock);
		}
		if (events_outside_pending()) {
			/* The tasks its jobs woke, logged: to the tracer before it idles, unlocked. */
			pthread_mutex_unlock(&pool->lock);
			events_outside_wait();
			pthread_mutex_lock(&pool->lock);
			continue;
		}
		if (pool->shutdown || !wait_for_job(pool))
			break;
	}
	prev = thread_exit(pool, self);
	pthread_mutex_unlock(&pool->lock);
	if (prev) {
		pthread_join(prev->id, NULL);
		free(prev);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Submitting, waiting, cancelling                                         */

int blocking_submit(struct blocking_pool *pool, struct blitz_blocking *job,
		    struct blitz_waker waker, bool outside)
{
	unsigned queued, threads;

	job->waker = waker;
	if (!job->fn)
		return -EINVAL;		/* nothing to run (blitz/blocking.h) */
	job->outside = outside;
	job->pool = pool;
	job->queued_ns = BLITZ_BLOCKING_START_ENABLED() ? clock_now_ns() : 0;
	pthread_mutex_lock(&pool->lock);
	if (pool->shutdown) {
		pthread_mutex_unlock(&pool->lock);
		return -ESHUTDOWN;
	}
	if (pool->idle == 0) {
		/* Past the cap the job waits for a busy thread to finish. */
		if (pool->threads < pool->max_threads &&
		    start_thread(pool) < 0 && pool->threads == 0) {
			pthread_mutex_unlock(&pool->lock);
			return -EAGAIN;
		}
	} else {
		pool->idle--;
		pool->num_notify++;
		pthread_cond_signal(&pool->cond);
	}
	jobq_push(pool, job);
	queued = pool->queued;
	threads = pool->threads;
	pthread_mutex_unlock(&pool->lock);
	BLITZ_BLOCKING_SPAWN((uint64_t)(uintptr_t)job, queued, threads);
	return 0;
}

static struct blocking_pool *pool_of(struct blitz_runtime *rt)
{
	return &rt->blocking;
}

enum blitz_poll blitz_blocking_poll(struct blitz_blocking *job, struct blitz_cx *cx)
{
	struct blitz_waker w;
	int err;

	/* Acquire: pairs with job_complete's release store; the result is ready. */
	uint32_t s = atomic_load_explicit(&job->state, memory_order_acquire);

	if (s == JOB_DONE)
		return BLITZ_READY;
	if (s != JOB_IDLE)
		return BLITZ_PENDING;	/* our waker is registered */
	w = blitz_cx_waker(cx);
	err = blocking_submit(pool_of(blitz_cx_runtime(cx)), job, w, false);
	if (err == 0)
		return BLITZ_PENDING;
	blitz_waker_drop(&job->waker);
	job->result = err;
	/* Relaxed: only this task reads it. */
	atomic_store_explicit(&job->state, JOB_DONE, memory_order_relaxed);
	return BLITZ_READY;
}

int blitz_spawn_blocking(struct blitz_runtime *rt, struct blitz_blocking *job)
{
	struct blitz_waker none = { 0 };

	rt = runtime_or_current(rt);
	if (!rt || !job)
		return -EINVAL;
	return blocking_submit(pool_of(rt), job, none, true);
}

int64_t blitz_blocking_wait(struct blitz_blocking *job)
{
	uint32_t s;

	/* Relaxed: a job never queued stays IDLE; nothing would end the wait. */
	if (atomic_load_explicit(&job->state, memory_order_relaxed) == JOB_IDLE)
		return -EINVAL;
	events_outside_wait();
	/* Acquire: pairs with job_complete's release store. */
	while ((s = atomic_load_explicit(&job->state, memory_order_acquire)) != JOB_DONE)
		syscall(SYS_futex, &job->state, FUTEX_WAIT_PRIVATE, s, NULL, NULL, 0);
	return job->result;
}

void blitz_blocking_cancel(struct blitz_blocking *job)
{
	struct blocking_pool *pool = job->pool;
	bool found = false;

	/* Relaxed: a hint; the lock decides. */
	if (!pool || atomic_load_explicit(&job->state, memory_order_relaxed) != JOB_QUEUED)
		return;
	pthread_mutex_lock(&pool->lock);
	/* Relaxed: QUEUED and RUNNING are written under this lock. */
	if (atomic_load_explicit(&job->state, memory_order_relaxed) == JOB_QUEUED) {
		jobq_unlink(pool, job);
		found = true;
	}
	pthread_mutex_unlock(&pool->lock);
	if (found)
		job_complete(job, -ECANCELED);
}

/* ---------------------------------------------------------------------- */
/* Shutdown and statistics                                                 */

static void join_and_free(struct blocking_thread *t)
{
	pthread_join(t->id, NULL);
	free(t);
}

/*
 * blocking_pool_shutdown - complete the queued jobs with -ECANCELED, let
 * the running ones finish, and join every thread.  After the shutdown flag
 * is set (under the lock) no thread leaves the live list or changes
 * last_exiting, so both can be taken and joined without the lock.
 */
void blocking_pool_shutdown(struct blocking_pool *pool)
{
	struct blitz_blocking *queued, *job;
	struct blocking_thread *live, *last;

	pthread_mutex_lock(&pool->lock);
	pool->shutdown = true;
	queued = pool->head;
	pool->head = pool->tail = NULL;
	pool->queued = 0;
	live = pool->live;
	pool->live = NULL;
	last = pool->last_exiting;
	pool->last_exiting = NULL;
	pthread_cond_broadcast(&pool->cond);
	pthread_mutex_unlock(&pool->lock);
	while ((job = queued)) {
		queued = job->next;
		job->next = job->prev = NULL;
		job_complete(job, -ECANCELED);
	}
	while (live) {
		struct blocking_thread *t = live;

		live = t->next;
		join_and_free(t);
	}
	if (last)
		join_and_free(last);
}

void blitz_blocking_stats(const struct blitz_runtime *rt, struct blitz_blocking_stats *out)
{
	struct blocking_pool *pool;

	rt = runtime_or_current(rt);
	if (!rt) {
		memset(out, 0, sizeof(*out));
		return;
	}
	pool = pool_of((struct blitz_runtime *)rt);
	pthread_mutex_lock(&pool->lock);
	out->threads = pool->threads;
	out->idle = pool->idle;
	out->queued = pool->queued;
	out->max_threads = pool->max_threads;
	out->threads_started = pool->threads_started;
	/* Relaxed: a statistic (see run_job). */
	out->jobs_done = atomic_load_explicit(&pool->jobs_done, memory_order_relaxed);
	pthread_mutex_unlock(&pool->lock);
}
