/* SPDX-License-Identifier: MIT */
/*
 * blitz/shutdown.h - graceful shutdown: a token that tasks await, and a
 * drain with a deadline.
 *
 * Every runtime has a shutdown token (a struct blitz_cancel_token,
 * blitz/sync.h).  A task that should stop cleanly awaits it next to its
 * work (blitz_cancel_token_cancelled_poll() or a child token) and, once it
 * fires, finishes what it has started and returns.  The program then calls,
 * from outside the workers (main, typically after a SIGTERM from a signal
 * stream, blitz/signal.h):
 *
 *	if (blitz_runtime_shutdown(rt, 5 * BLITZ_NSEC_PER_SEC))
 *		fprintf(stderr, "some tasks did not finish in time\n");
 *
 * which cancels the token, waits until every task has finished or the
 * deadline has passed, and frees the runtime (which cancels, and drops,
 * whatever is left).  Tasks may still be spawned while the runtime drains.
 */
#ifndef BLITZ_SHUTDOWN_H
#define BLITZ_SHUTDOWN_H

#include <stddef.h>
#include <stdint.h>
#include <blitz/sync.h>

struct blitz_runtime;

/**
 * blitz_runtime_shutdown_token - the graceful-shutdown token of @rt
 * (NULL: the current task's runtime).  Cancelled by blitz_runtime_drain(),
 * or by anyone with blitz_cancel_token_cancel().  Valid until the runtime
 * is freed; child tokens made from it must be destroyed before that.
 */
struct blitz_cancel_token *blitz_runtime_shutdown_token(struct blitz_runtime *rt);

/**
 * blitz_runtime_live_tasks - tasks of @rt spawned and not yet finished,
 * counting detached ones (a snapshot).
 */
size_t blitz_runtime_live_tasks(struct blitz_runtime *rt);

/**
 * blitz_runtime_drain - cancel the shutdown token, then wait until no task
 * of @rt is left or @timeout_ns has passed.
 * @rt: the runtime; call from a thread that is not one of its workers.
 * @timeout_ns: the deadline, from now (0: look once; UINT64_MAX: none).
 * Return: 0 when every task has finished, -ETIMEDOUT when some are still
 * running at the deadline (they keep running until blitz_runtime_free()),
 * -EDEADLK from a worker, -EINVAL for a NULL @rt.
 */
int blitz_runtime_drain(struct blitz_runtime *rt, uint64_t timeout_ns);

/**
 * blitz_runtime_shutdown - blitz_runtime_drain(), then blitz_runtime_free():
 * tasks still running at the deadline are cancelled and dropped.
 * Return: what blitz_runtime_drain() returned; @rt is freed in every case
 * but -EDEADLK.
 */
int blitz_runtime_shutdown(struct blitz_runtime *rt, uint64_t timeout_ns);

#endif /* BLITZ_SHUTDOWN_H */
