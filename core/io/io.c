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
 * of another runtime).  We do not flush it: on io_uring the kernel would
 * cancel it when this thread exits (backends/io_uring.c, "The pending
 * list"); a worker does, at the end of its tick or when it parks.  And a
 * worker must watch the driver for its completion, which a worker that
 * parked before io_submit_op's in_flight++ (and, on io_uring, the pending
 * list's flag) does not: runtime_unpark_for_io wakes one, which flushes
 * and watches as it parks again (the ordering argument is there).
 */
static void submitted_outside(struct blitz_runtime *rt)
{
	runtime_unpark_for_io(rt);
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
