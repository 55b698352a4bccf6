/* SPDX-License-Identifier: MIT */
/*
 * core/blocking/pool.h - the blocking pool the runtime owns (core/blocking/pool.c).
 *
 * Everything in struct blocking_pool is guarded by its lock but jobs_done,
 * which a job counts before it completes; the other atomic is each job's
 * state word (include/blitz/blocking.h).
 */
#ifndef BLITZ_CORE_BLOCKING_H
#define BLITZ_CORE_BLOCKING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <blitz/blocking.h>

/* One pool thread; freed by whoever joins it. */
struct blocking_thread {
	pthread_t id;
	struct blocking_pool *pool;
	struct blocking_thread *next;		/* the live list */
	struct blocking_thread *prev;
};

struct blocking_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;			/* idle threads wait here (CLOCK_MONOTONIC) */
	struct blitz_blocking *head;		/* the queue: FIFO, intrusive */
	struct blitz_blocking *tail;
	struct blocking_thread *live;		/* threads not exiting on idle timeout */
	struct blocking_thread *last_exiting;	/* joined by the next one to exit */
	unsigned threads;			/* alive (started, not yet gone) */
	unsigned idle;				/* waiting for a job, not yet notified */
	unsigned queued;
	unsigned num_notify;			/* notifications not yet consumed */
	unsigned max_threads;
	uint64_t idle_ns;
	bool shutdown;
	uint64_t threads_started;
	_Atomic uint64_t jobs_done;		/* the one field not under the lock */
};

void blocking_pool_init(struct blocking_pool *pool, unsigned max_threads, unsigned idle_ms);
void blocking_pool_shutdown(struct blocking_pool *pool);
/* blocking_pool_is_mine - is the calling thread one of @pool's? */
bool blocking_pool_is_mine(const struct blocking_pool *pool);
void blocking_pool_destroy(struct blocking_pool *pool);

/*
 * blocking_submit - queue @job, which will wake @waker (or, with @outside,
 * a futex waiter) when done.  0, or -ESHUTDOWN / -EAGAIN (not queued; the
 * waker is the caller's again).
 */
int blocking_submit(struct blocking_pool *pool, struct blitz_blocking *job,
		    struct blitz_waker waker, bool outside);

#endif
