/* SPDX-License-Identifier: MIT */
/*
 * blitz/blocking.h - the blocking pool: run a function that blocks (a
 * syscall that cannot be made asynchronous, a long computation) on a
 * thread of its own, away from the workers (docs/blocking.md).
 *
 * A job (struct blitz_blocking) is a value the caller places: in the
 * awaiting task's state, or on the stack of a thread outside the runtime.
 * Nothing is allocated per job.  Threads start on demand, up to
 * blitz_config.max_blocking_threads, and exit after blocking_idle_ms idle.
 *
 * From a task:
 *
 *	struct hasher { struct blitz_co co; struct blitz_blocking job; ... };
 *
 *	BLITZ_CO_BEGIN(&s->co);
 *	blitz_blocking_init(&s->job, compute_hash, s);
 *	BLITZ_AWAIT(&s->co, blitz_blocking_poll(&s->job, cx));
 *	use(s->job.result);
 *	BLITZ_CO_END(&s->co);
 *
 * From a thread that is not a worker:
 *
 *	blitz_blocking_init(&job, compute_hash, data);
 *	if (blitz_spawn_blocking(rt, &job) == 0)
 *		hash = blitz_blocking_wait(&job);
 *
 * A job that is pending holds a reference to its task (as an I/O operation
 * does), so the task's state stays valid until the job has finished even if
 * the task is cancelled; a drop function calls blitz_blocking_cancel().  A
 * job that has started runs to the end: the pool cannot interrupt it.
 *
 * At shutdown (blitz_runtime_free) the jobs still queued complete with
 * -ECANCELED and the running ones are waited for: a job that never returns
 * keeps the runtime from shutting down.
 */
#ifndef BLITZ_BLOCKING_H
#define BLITZ_BLOCKING_H

#include <stdatomic.h>
#include <stdint.h>
#include <blitz/task.h>

struct blitz_runtime;
struct blitz_blocking;

/* The job's function: its return value becomes job->result. */
typedef int64_t (*blitz_blocking_fn)(void *arg);

struct blitz_blocking {
	blitz_blocking_fn fn;
	void *arg;
	int64_t result;			/* fn's return, or -ECANCELED / -ESHUTDOWN / -EAGAIN */
	_Atomic uint32_t state;		/* enum in core/blocking/pool.c */
	uint32_t outside;		/* a thread waits on state (futex) instead of a waker */
	struct blitz_waker waker;	/* the awaiting task's, while pending */
	void *pool;			/* set at submission */
	struct blitz_blocking *next;	/* the pool's queue (intrusive) */
	struct blitz_blocking *prev;
	uint64_t queued_ns;		/* for the probes; 0 unless traced */
};

/**
 * blitz_blocking_init - prepare @job to run @fn(@arg).  A NULL @fn is
 * refused when the job is queued: result -EINVAL.
 */
void blitz_blocking_init(struct blitz_blocking *job, blitz_blocking_fn fn, void *arg);

/**
 * blitz_blocking_poll - queue @job on the first poll, then wait for it.
 * Return: BLITZ_READY when job->result is valid.
 */
enum blitz_poll blitz_blocking_poll(struct blitz_blocking *job, struct blitz_cx *cx);

/**
 * blitz_spawn_blocking - queue @job from a thread that is not a worker.
 * The caller waits with blitz_blocking_wait() (or polls blitz_blocking_done()).
 * Return: 0, or -ESHUTDOWN if the runtime is shutting down, -EAGAIN if no
 * pool thread could be started, -EINVAL for a NULL @job or a job without a
 * function, or a NULL @rt off the runtime's threads.
 */
int blitz_spawn_blocking(struct blitz_runtime *rt, struct blitz_blocking *job);

/**
 * blitz_blocking_wait - sleep until a job queued by blitz_spawn_blocking()
 * has finished.  Return: job->result, or -EINVAL at once for a job that
 * was never queued (nothing would end the wait).
 */
int64_t blitz_blocking_wait(struct blitz_blocking *job);

/** blitz_blocking_done - has @job finished (job->result valid)? */
bool blitz_blocking_done(const struct blitz_blocking *job);

/**
 * blitz_blocking_cancel - take @job off the queue if no thread has started
 * it; it then completes with -ECANCELED.  A job already running finishes
 * normally.  A no-op for a job that is not pending.  Safe from a drop function.
 */
void blitz_blocking_cancel(struct blitz_blocking *job);

struct blitz_blocking_stats {
	unsigned threads;		/* pool threads alive */
	unsigned idle;			/* of which waiting for a job */
	unsigned queued;		/* jobs waiting for a thread */
	unsigned max_threads;		/* the cap */
	uint64_t threads_started;	/* since the runtime was created */
	uint64_t jobs_done;		/* jobs run to the end (not cancelled) */
};

/** blitz_blocking_stats - a snapshot of @rt's blocking pool. */
void blitz_blocking_stats(const struct blitz_runtime *rt, struct blitz_blocking_stats *out);

#endif /* BLITZ_BLOCKING_H */
