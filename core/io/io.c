// SPDX-License-Identifier: MIT
/*
 * core/io/io.c - the task side of I/O: submit an operation on its first poll,
 * report READY once the driver completed it.
 */
#include <errno.h>
#include "../sched/runtime.h"
#include "../sched/task.h"
#include "../sched/worker.h"

bool io_submit_op(struct blitz_io *io, struct blitz_io_op *op, struct blitz_waker waker);

/*
 * delivered - @op's result goes to its task now: a descriptor it made is
 * the task's from here on, and a later cancel leaves it alone (driver.h,
 * op->claim).  Relaxed: the completer's mark, if any, was read with DONE's
 * acquire, and nobody else writes the claim any more.
 */
static enum blitz_poll delivered(struct blitz_io_op *op)
{
	if (io_op_makes_fd(op))
		atomic_store_explicit(&op->claim, IO_CLAIM_DELIVERED, memory_order_relaxed);
	return BLITZ_READY;
}

/*
 * submitted_outside - an operation went to @rt's driver from a thread that
 * is not one of @rt's workers (an outside joiner that helps, or a worker
 * of another runtime).  This runtime's workers flush at the end of their
 * tick; we flush now.  And a worker must watch the driver for its
 * completion: one awake does (its tick reaps, its park sleeps in the
 * driver while anything is in flight), but one that parked before our
 * io_submit_op's in_flight++ sleeps on its futex (sleep_in_io's in_flight
 * test) or, on io_uring, in its own ring with the shared ring unwatched
 * (uring_wait_own's shared_in_flight test), and nobody would reap the
 * completion before its park timeout.  So wake one, as a producer does
 * for a queued task.  A Dekker pair: here in_flight++ (and on io_uring
 * shared_in_flight++), then runtime_notify_parked's seq_cst fence and its
 * loads of the idle state; there the seq_cst park announcement
 * (idle_set_parked), then a seq_cst load of the count.  Either the
 * parker sees our count and sleeps in the driver, or we see it parked
 * (and claim it) or still searching (it parks later and sees the count).
 * The wake may be for nothing (a worker already sleeping in the driver
 * watches a new operation too): a futex wake and a tick, on a path that
 * is not a worker's own submission.
 */
static void submitted_outside(struct blitz_runtime *rt)
{
	io_driver_flush(&rt->io);
	runtime_notify_parked(rt, -1);
}

enum blitz_poll blitz_io_poll(struct blitz_io_op *op, struct blitz_cx *cx)
{
	struct blitz_runtime *rt = blitz_cx_runtime(cx);
	/* Acquire: pairs with io_complete's release store; the result is ready. */
	uint32_t s = atomic_load_explicit(&op->state, memory_order_acquire);

	if (s == IO_OP_DONE)
		return delivered(op);
	if (s == IO_OP_PENDING)
		return BLITZ_PENDING;	/* our waker is registered */
	if (io_submit_op(&rt->io, op, blitz_cx_waker(cx)))
		return delivered(op);
	if (!current_worker || current_worker->rt != rt)
		submitted_outside(rt);
	return BLITZ_PENDING;
}

void blitz_io_cancel(struct blitz_io_op *op)
{
	struct blitz_io *io = op->driver;

	if (!io)
		return;
	if (io_op_makes_fd(op))
		io_abandon(op);
	/* Acquire: as in blitz_io_poll (io_complete's release); DONE needs no cancel. */
	if (atomic_load_explicit(&op->state, memory_order_acquire) == IO_OP_PENDING)
		io->backend->cancel(io, op);
}

const char *blitz_io_backend_name(const struct blitz_runtime *rt)
{
	rt = runtime_or_current(rt);
	if (!rt)
		return NULL;
	return rt->io.backend ? blitz_backend_name(rt->io.backend->kind) : "none";
}
