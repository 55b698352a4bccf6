/* SPDX-License-Identifier: MIT */
/*
 * blitz/runtime.h - creating, running and shutting down a runtime.
 */
#ifndef BLITZ_RUNTIME_H
#define BLITZ_RUNTIME_H

#include <blitz/config.h>
#include <blitz/task.h>

struct blitz_runtime;

/**
 * blitz_runtime_new - create a runtime; workers start lazily, on the first spawn.
 * @cfg: the configuration, or NULL for the defaults with the BLITZ_*
 *       environment variables applied.
 *
 * Return: the runtime, or NULL with errno set (EINVAL: a bad configuration,
 * explained on stderr; ENOMEM).
 */
struct blitz_runtime *blitz_runtime_new(const struct blitz_config *cfg);

/**
 * blitz_runtime_free - shut down: stop the workers, cancel and drop every
 * task that has not completed (queued or waiting), join the workers and
 * free everything.  Handles still held stay valid until released.
 *
 * A blitz_join() or blitz_block_on() that another thread began before this
 * call stops helping, returns -ECANCELED once its task is dropped, and has
 * left the runtime before this returns.  Any other call on @rt that may
 * overlap this one is the caller's race, as for any object being freed.
 * Called from inside @rt (a poll of one of its tasks, on a worker or on a
 * thread that helps, or one of its blocking jobs), which it would wait
 * for, it refuses with a message on stderr and frees nothing.
 */
void blitz_runtime_free(struct blitz_runtime *rt);

/**
 * blitz_block_on - spawn a task and wait for it to complete.
 * @state: in: the initial state; out: the final state (copied only once
 *         the task has completed).
 *
 * From a thread that is not a worker it waits without running other
 * tasks; from a worker it waits as blitz_join() does there, helping.
 * Return: 0, -ECANCELED, -errno if the task could not be spawned, or from
 * a worker what blitz_join() may return there.
 */
int blitz_block_on(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
		   void *state, size_t size);

/*
 * A NULL @rt in the calls below (and in every call of the API that takes a
 * runtime) is the calling task's runtime; without one they answer 0, NULL
 * or -EINVAL (docs/design.md, "Bad input").
 */

/** blitz_runtime_workers - number of workers. */
unsigned blitz_runtime_workers(const struct blitz_runtime *rt);

/** blitz_runtime_config - the configuration in force. */
const struct blitz_config *blitz_runtime_config(const struct blitz_runtime *rt);

/** blitz_current_runtime - the runtime of the calling worker or task, or NULL. */
struct blitz_runtime *blitz_current_runtime(void);

/** blitz_current_worker - the calling thread's worker index, or -1. */
int blitz_current_worker(void);

#endif /* BLITZ_RUNTIME_H */
