// SPDX-License-Identifier: MIT
/*
 * backends/io_uring.c - the io_uring backend (liburing): operations run in
 * the kernel and complete through the completion queue.
 *
 * The submission queue has one producer at a time (sq_lock); submit() only
 * prepares an entry, and the worker flushes its tick's entries with one
 * io_uring_enter (flush()).  A send is tried at once first (uring_submit).
 * The completion queue is drained by the reaper (the driver's reap_lock).  A CQE's
 * user_data is the operation; 0 marks the driver's own NOPs and cancels.
 * Blocking waits need IORING_FEAT_EXT_ARG (kernel 5.11): the timeout is
 * passed to io_uring_enter, so waiting never touches the submission queue.
 */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "driver.h"

#define RING_ENTRIES 1024
#define CQE_BATCH 128

struct uring_priv {
	struct io_uring ring;
	pthread_mutex_t sq_lock;
	/*
	 * Entries prepared but not yet handed to the kernel.  Written under
	 * sq_lock; read without it as a hint (see uring_flush).
	 */
	_Atomic bool unsubmitted;
};

static int uring_init(struct blitz_io *io)
{
	struct uring_priv *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	/*
	 * SUBMIT_ALL (5.18): an entry the kernel refuses (its CQE carries the
	 * error) does not stop the rest of a batch from being submitted.
	 */
	err = io_uring_queue_init(RING_ENTRIES, &p->ring, IORING_SETUP_SUBMIT_ALL);
	if (err == -EINVAL)
		err = io_uring_queue_init(RING_ENTRIES, &p->ring, 0);
	if (err < 0) {
		free(p);
		return err;	/* ENOSYS, EPERM (sysctl io_uring_disabled, seccomp) */
	}
	if (!(p->ring.features & IORING_FEAT_EXT_ARG)) {
		io_uring_queue_exit(&p->ring);
		free(p);
		return -EOPNOTSUPP;
	}
	pthread_mutex_init(&p->sq_lock, NULL);
	io->priv = p;
	return 0;
}

static void uring_deinit(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;

	io_uring_queue_exit(&p->ring);
	pthread_mutex_destroy(&p->sq_lock);
	free(p);
}

/* get_sqe - a free entry, flushing the queue to the kernel if it is full. */
static struct io_uring_sqe *get_sqe(struct uring_priv *p)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&p->ring)))
		io_uring_submit(&p->ring);
	return sqe;
}

static void prep_op(struct io_uring_sqe *sqe, struct blitz_io_op *op)
{
	switch (op->opcode) {
	case BLITZ_IO_READ:
		io_uring_prep_read(sqe, op->fd, op->buf, (unsigned)op->len, (__u64)op->off);
		break;
	case BLITZ_IO_WRITE:
		io_uring_prep_write(sqe, op->fd, op->buf, (unsigned)op->len, (__u64)op->off);
		break;
	case BLITZ_IO_RECV:
		io_uring_prep_recv(sqe, op->fd, op->buf, op->len, op->flags);
		break;
	case BLITZ_IO_SEND:
		io_uring_prep_send(sqe, op->fd, op->buf, op->len, op->flags | MSG_NOSIGNAL);
		break;
	case BLITZ_IO_ACCEPT:
		io_uring_prep_accept(sqe, op->fd, op->addr, op->addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		break;
	case BLITZ_IO_CONNECT:
		io_uring_prep_connect(sqe, op->fd, op->addr, op->addr_in_len);
		break;
	case BLITZ_IO_RECVMSG:
		io_uring_prep_recvmsg(sqe, op->fd, op->msg, (unsigned)op->flags);
		break;
	case BLITZ_IO_SENDMSG:
		io_uring_prep_sendmsg(sqe, op->fd, op->msg, (unsigned)op->flags | MSG_NOSIGNAL);
		break;
	case BLITZ_IO_POLL_IN:
		io_uring_prep_poll_add(sqe, op->fd, POLLIN);
		break;
	case BLITZ_IO_POLL_OUT:
		io_uring_prep_poll_add(sqe, op->fd, POLLOUT);
		break;
	case BLITZ_IO_OPENAT:
		io_uring_prep_openat(sqe, op->fd, op->path, op->flags, op->mode);
		break;
	case BLITZ_IO_FSYNC:
		io_uring_prep_fsync(sqe, op->fd, op->flags ? IORING_FSYNC_DATASYNC : 0);
		break;
	case BLITZ_IO_STATX:
		io_uring_prep_statx(sqe, op->fd, op->path, op->flags, (unsigned)op->len, op->buf);
		break;
	case BLITZ_IO_MKDIRAT:
		io_uring_prep_mkdirat(sqe, op->fd, op->path, op->mode);
		break;
	case BLITZ_IO_RENAMEAT:
		io_uring_prep_renameat(sqe, op->fd, op->path, op->fd, op->path2, (unsigned)op->flags);
		break;
	case BLITZ_IO_UNLINKAT:
		io_uring_prep_unlinkat(sqe, op->fd, op->path, op->flags);
		break;
	default:
		io_uring_prep_nop(sqe);
		break;
	}
}

static int uring_submit(struct blitz_io *io, struct blitz_io_op *op, bool *done)
{
	struct uring_priv *p = io->priv;
	struct io_uring_sqe *sqe;
	int r;

	if (op->opcode >= BLITZ_IO_NR_OPCODES) {
		*done = true;
		return -EINVAL;
	}
	/*
	 * A send usually finds room in the socket buffer: try it at once
	 * (MSG_DONTWAIT) and skip the ring, the reap and the wake.  Not
	 * receives: in a request/response exchange the data is rarely there
	 * yet, and the failed try costs a syscall (measured: more CPU per
	 * message).  Ordering against an earlier send on the same socket that
	 * is still in the ring is the same as for two operations on the ring:
	 * unspecified unless one waits for the other (write_all does).
	 */
	if (op->opcode == BLITZ_IO_SEND || op->opcode == BLITZ_IO_SENDMSG) {
		r = io_perform(op);
		if (r != -EAGAIN) {
			*done = true;
			return r;
		}
	}
	*done = false;
	pthread_mutex_lock(&p->sq_lock);
	sqe = get_sqe(p);
	prep_op(sqe, op);
	io_uring_sqe_set_data(sqe, op);
	/*
	 * Not submitted yet: the worker hands everything its tick prepared to
	 * the kernel in one io_uring_enter at the end of the tick
	 * (io_driver_flush); a thread that is not a worker flushes at once
	 * (blitz_io_poll), and a reaper flushes before it waits.
	 */
	atomic_store_explicit(&p->unsubmitted, true, memory_order_relaxed);
	pthread_mutex_unlock(&p->sq_lock);
	return 0;
}

/*
 * uring_flush - hand the prepared entries to the kernel in one
 * io_uring_enter.  Relaxed: the flag is written under sq_lock by the thread
 * that prepared an entry, and that thread flushes its own entries later
 * (program order), so it always sees its own store; another thread's
 * store is only a hint here (a stale false leaves that thread's entries
 * for it to flush, a stale true costs one empty lock round).
 */
static void uring_flush(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;

	if (!atomic_load_explicit(&p->unsubmitted, memory_order_relaxed))
		return;
	pthread_mutex_lock(&p->sq_lock);
	if (atomic_load_explicit(&p->unsubmitted, memory_order_relaxed)) {
		/* The kernel refused the whole batch (EINTR, EBUSY): retry later. */
		atomic_store_explicit(&p->unsubmitted, io_uring_submit(&p->ring) < 0,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&p->sq_lock);
}

static int uring_reap(struct blitz_io *io, uint64_t timeout_ns)
{
	struct uring_priv *p = io->priv;
	struct io_uring_cqe *cqes[CQE_BATCH];
	unsigned n;
	int total = 0;

	uring_flush(io);

	if (timeout_ns) {
		struct __kernel_timespec ts = {
			.tv_sec = (long long)(timeout_ns / 1000000000ull),
			.tv_nsec = (long long)(timeout_ns % 1000000000ull),
		};
		struct io_uring_cqe *cqe;

		/* With EXT_ARG this only enters the kernel to wait. */
		if (io_uring_wait_cqe_timeout(&p->ring, &cqe, &ts) < 0)
			return 0;
	}
	while ((n = io_uring_peek_batch_cqe(&p->ring, cqes, CQE_BATCH)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			struct blitz_io_op *op = io_uring_cqe_get_data(cqes[i]);
			int res = cqes[i]->res;

			io_uring_cqe_seen(&p->ring, cqes[i]);
			if (op) {
				io_complete(io, op, res);
				total++;
			}
		}
	}
	return total;
}

static void submit_internal(struct uring_priv *p, struct blitz_io_op *target)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&p->sq_lock);
	sqe = get_sqe(p);
	if (target)
		io_uring_prep_cancel(sqe, target, 0);
	else
		io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, NULL);
	/* Relaxed: under sq_lock; this submits the queued entries too. */
	atomic_store_explicit(&p->unsubmitted, false, memory_order_relaxed);
	io_uring_submit(&p->ring);
	pthread_mutex_unlock(&p->sq_lock);
}

/* The operation completes with -ECANCELED (or its result, if it won the race). */
static void uring_cancel(struct blitz_io *io, struct blitz_io_op *op)
{
	submit_internal(io->priv, op);
}

/* Cancel everything the ring holds (IORING_ASYNC_CANCEL_ANY, kernel 5.19). */
static void uring_cancel_all(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&p->sq_lock);
	sqe = get_sqe(p);
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data(sqe, NULL);
	/* Relaxed: under sq_lock; this submits the queued entries too. */
	atomic_store_explicit(&p->unsubmitted, false, memory_order_relaxed);
	io_uring_submit(&p->ring);
	pthread_mutex_unlock(&p->sq_lock);
}

/* A NOP's completion makes a waiting reaper return. */
static void uring_wake(struct blitz_io *io)
{
	submit_internal(io->priv, NULL);
}

const struct io_backend io_uring_backend = {
	.name = "io_uring",
	.kind = BLITZ_BACKEND_IO_URING,
	.init = uring_init,
	.deinit = uring_deinit,
	.submit = uring_submit,
	.reap = uring_reap,
	.cancel = uring_cancel,
	.wake = uring_wake,
	.flush = uring_flush,
	.cancel_all = uring_cancel_all,
};
