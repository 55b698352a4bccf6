// SPDX-License-Identifier: MIT
/*
 * backends/io_uring.c - the io_uring backend (liburing): operations run in
 * the kernel and complete through a completion queue (CQ).
 *
 * Rings.  Each worker has a ring of its own, set up with SINGLE_ISSUER and
 * DEFER_TASKRUN (kernel 6.1): only that worker submits to it and reaps it,
 * and the kernel runs its requests' completion work (task_work) when that
 * worker enters the ring (to submit, to reap or to sleep), never by
 * interrupting it or waking it from another sleep.  With one ring for all,
 * a completion woke its submitter to run the task_work and then the worker
 * sleeping in the ring (two wake-ups), and the workers' task_work contended
 * for the ring's locks (docs/io.md).  Threads that are not workers (a
 * helper in blitz_join, the tests that drive the driver) use one shared
 * ring under sq_lock, reaped by whoever holds the driver's reap_lock.
 * Where the kernel refuses the flags, or with BLITZ_IO_URING_RINGS=shared,
 * every thread uses the shared ring (a refusal is said on stderr).
 *
 * A worker's ring (struct own_ring; its fields without a lock are the
 * owner's alone):
 * - submit() prepares an entry; flush() at the end of the tick submits the
 *   tick's entries and runs the completion work that is pending, in one
 *   io_uring_enter; reap_own() at the next tick takes the CQ (entering
 *   again only if the kernel flagged more work: IORING_SQ_TASKRUN);
 * - the worker parks in it (wait_own): its own completions wake it, and so
 *   does wake_worker(), which writes an eventfd that a multishot poll in the
 *   ring watches; while the shared ring has operations in flight, a poll on
 *   the shared ring's descriptor wakes the parked worker for those too;
 * - a cancel from another thread cannot enter the ring: it is queued under
 *   cancel_lock, the eventfd wakes the owner, and the owner submits it at
 *   its next reap, flush or park.  A tag (the user_data) is the op's
 *   address with a 3-bit generation in its low bits, so a queued cancel
 *   never hits a later submission of the same op: the owner completes and
 *   resubmits an op only between two of the points where it looks at the
 *   queue, so the generation moves by at most one meanwhile;
 * - at the worker's exit it cancels everything and collects the completions.
 *
 * blitz_net_close() (uring_close): a cancel by descriptor must reach the
 * kernel before the close(2), or it would find no file (or another file
 * with the number).  The closer cancels in its own ring (entering it at
 * once) and in the shared ring; each other worker's ring gets the cancel
 * through its queue, naming a duplicate of the descriptor (the same file),
 * which the last of them closes (struct pending_close); the caller closes
 * the descriptor itself at once.
 *
 * On the shared ring a send is tried at once first (uring_submit); in a
 * worker's ring it goes with the tick's batch.  A CQE of the shared ring
 * carries the op as user_data, 0 the driver's own NOPs and cancels.
 * Blocking waits need IORING_FEAT_EXT_ARG (kernel 5.11): the timeout is
 * passed to io_uring_enter, so waiting never touches the submission queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <blitz.h>
#include "../core/fault.h"
#include "../core/spinlock.h"
#include "driver.h"

#define SHARED_ENTRIES 1024
#define OWN_ENTRIES 256
#define OWN_CQ_ENTRIES 4096	/* more in flight is fine: the kernel keeps the overflow */
#define CQE_BATCH 128

/* user_data in a worker's ring besides op tags (an address, >= 4096, | generation) */
#define TAG_INTERNAL 0		/* a cancel's own completion */
#define TAG_WAKE 1		/* the multishot poll on the eventfd */
#define TAG_SHARED 2		/* the poll on the shared ring */
#define TAG_GEN_MASK 7ull
/* In a ring's cancel queue besides tags: a struct pending_close. */
#define QUEUED_CLOSE (1ull << 62)

/*
 * A close waiting for other workers' rings to cancel what they hold on
 * @fd: one reference for the closer and one per ring it was queued to;
 * whoever drops the last closes @fd.
 */
struct pending_close {
	_Atomic unsigned refs;
	int fd;
};

struct uring_priv;

struct own_ring {
	struct io_uring ring;
	struct uring_priv *p;
	int efd;			/* wake_worker() writes it */
	/* The owner's alone: */
	bool wake_armed, shared_armed;
	unsigned unsubmitted;		/* entries prepared since the last enter */
	uint32_t gen;
	long in_flight;			/* ops submitted here, not yet reaped */
	/* Cancels from other threads: */
	alignas(64) struct spinlock cancel_lock;
	_Atomic bool cancel_pending;	/* written under cancel_lock; a hint outside */
	bool closed;			/* the owner has exited (under cancel_lock) */
	uint64_t *cancels;		/* tags (under cancel_lock) */
	unsigned ncancels, cancels_cap;
};

struct uring_priv {
	struct io_uring ring;		/* the shared ring */
	pthread_mutex_t sq_lock;
	/*
	 * Entries prepared but not yet handed to the kernel.  Written under
	 * sq_lock; read without it as a hint (see uring_flush).
	 */
	_Atomic bool unsubmitted;
	_Atomic long shared_in_flight;	/* ops in the shared ring */
	unsigned nr_own;
	struct own_ring *own;		/* one per worker; NULL: the shared ring only */
};

/* The calling worker's ring (initial-exec: see core/sched/worker.c's TLS). */
static __thread struct own_ring *my_ring __attribute__((tls_model("initial-exec")));

static struct own_ring *own_ring_of(struct blitz_io *io)
{
	struct own_ring *r = my_ring;

	return r && r->p == io->priv ? r : NULL;
}

static void own_rings_free(struct uring_priv *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		io_uring_queue_exit(&p->own[i].ring);
		close(p->own[i].efd);
		free(p->own[i].cancels);
	}
	free(p->own);
	p->own = NULL;
	p->nr_own = 0;
}

/*
 * own_rings_init - one ring per worker, disabled until its worker enables
 * it (SINGLE_ISSUER: the enabling thread becomes the only submitter).
 */
static int own_rings_init(struct uring_priv *p, unsigned n)
{
	size_t size = ((n * sizeof(struct own_ring)) + 63) & ~(size_t)63;
	unsigned i;
	int err = 0;

	p->own = aligned_alloc(64, size);
	if (!p->own)
		return -ENOMEM;
	memset(p->own, 0, size);
	for (i = 0; i < n; i++) {
		struct own_ring *r = &p->own[i];
		struct io_uring_params params = {
			.flags = IORING_SETUP_R_DISABLED | IORING_SETUP_SINGLE_ISSUER |
				 IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
				 IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE,
			.cq_entries = OWN_CQ_ENTRIES,
		};

		err = io_uring_queue_init_params(OWN_ENTRIES, &r->ring, &params);
		if (err < 0)
			break;
		r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (r->efd < 0) {
			err = -errno;
			io_uring_queue_exit(&r->ring);
			break;
		}
		r->p = p;
		spin_init(&r->cancel_lock);
		atomic_init(&r->cancel_pending, false);
	}
	if (err) {
		own_rings_free(p, i);
		return err;
	}
	p->nr_own = n;
	return 0;
}

static int uring_init(struct blitz_io *io)
{
	struct uring_priv *p = calloc(1, sizeof(*p));
	const char *mode = getenv("BLITZ_IO_URING_RINGS");
	unsigned workers = io->rt ? blitz_runtime_workers(io->rt) : 0;
	int err;

	if (!p)
		return -ENOMEM;
	/*
	 * SUBMIT_ALL (5.18): an entry the kernel refuses (its CQE carries the
	 * error) does not stop the rest of a batch from being submitted.
	 */
	err = io_uring_queue_init(SHARED_ENTRIES, &p->ring, IORING_SETUP_SUBMIT_ALL);
	if (err == -EINVAL)
		err = io_uring_queue_init(SHARED_ENTRIES, &p->ring, 0);
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
	atomic_init(&p->shared_in_flight, 0);
	if (mode && strcmp(mode, "worker") && strcmp(mode, "shared"))
		fprintf(stderr, "blitz: BLITZ_IO_URING_RINGS=%s: expected 'worker' or 'shared'; using 'worker'\n",
			mode);
	if (workers && !(mode && !strcmp(mode, "shared"))) {
		err = own_rings_init(p, workers);
		if (err)
			fprintf(stderr, "blitz: io_uring: no ring per worker (SINGLE_ISSUER | DEFER_TASKRUN: %s); one shared ring\n",
				strerror(-err));
	}
	io->priv = p;
	return 0;
}

static void uring_deinit(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;

	if (p->own)
		own_rings_free(p, p->nr_own);
	io_uring_queue_exit(&p->ring);
	pthread_mutex_destroy(&p->sq_lock);
	free(p);
}

/*
 * take_sqe - a free entry of @ring, flushing the queue to the kernel while
 * it is full.  The sqe_full fault point makes the first look find it full.
 */
static struct io_uring_sqe *take_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = fault_fail(FAULT_SQE_FULL) ? NULL : io_uring_get_sqe(ring);

	while (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	return sqe;
}

/* get_sqe - an entry of the shared ring (under sq_lock). */
static struct io_uring_sqe *get_sqe(struct uring_priv *p)
{
	return take_sqe(&p->ring);
}

/* own_sqe - the same in a worker's ring (the owner only). */
static struct io_uring_sqe *own_sqe(struct own_ring *r)
{
	struct io_uring_sqe *sqe = take_sqe(&r->ring);

	r->unsubmitted++;
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

/* own_prep - @op into @r's next entry (the owner only): tag, ring, count. */
static void own_prep(struct uring_priv *p, struct own_ring *r, struct blitz_io_op *op)
{
	struct io_uring_sqe *sqe = own_sqe(r);

	prep_op(sqe, op);
	op->ring = (int32_t)(r - p->own);
	op->ring_tag = (uint64_t)(uintptr_t)op | (r->gen++ & TAG_GEN_MASK);
	io_uring_sqe_set_data64(sqe, op->ring_tag);
	r->in_flight++;
}

static int uring_submit(struct blitz_io *io, struct blitz_io_op *op, bool *done)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r;
	struct io_uring_sqe *sqe;
	int res;

	if (op->opcode >= BLITZ_IO_NR_OPCODES) {
		*done = true;
		return -EINVAL;
	}
	/*
	 * An accept is tried at once (accept4, non-blocking): an acceptor then
	 * takes a burst of pending connections in one poll, where through the
	 * ring it got one per tick (a CQE, a wake and a poll behind every
	 * runnable task each).  When nothing is pending the try costs one
	 * failed accept4 per wait.
	 */
	if (op->opcode == BLITZ_IO_ACCEPT) {
		res = io_perform(op);
		if (res != -EAGAIN) {
			*done = true;
			return res;
		}
	}
	*done = false;
	r = own_ring_of(io);
	if (r) {
		/*
		 * Submitted with the tick's other entries by uring_flush, sends
		 * too: the kernel performs a send that finds room in the socket
		 * buffer during that enter and posts its CQE there, so it costs
		 * no syscall of its own; the task sees it at the next tick
		 * (measured: less CPU per message than a send(2) at once, and
		 * more messages per second; docs/io.md, "Why it is built
		 * this way").
		 */
		own_prep(p, r, op);
		return 0;
	}
	/*
	 * The shared ring: a send usually finds room in the socket buffer, so
	 * try it at once (MSG_DONTWAIT) and skip the ring, the reap and the
	 * wake: a thread that is not a worker would spend an enter on it
	 * alone.  Not receives: in a request/response exchange the data is
	 * rarely there yet, and the failed try costs a syscall (measured: more
	 * CPU per message).  Ordering against an earlier send on the same
	 * socket that is still in the ring is the same as for two operations
	 * on the ring: unspecified unless one waits for the other (write_all
	 * does).
	 */
	if (op->opcode == BLITZ_IO_SEND || op->opcode == BLITZ_IO_SENDMSG) {
		res = io_perform(op);
		if (res != -EAGAIN) {
			*done = true;
			return res;
		}
	}
	op->ring = -1;
	op->ring_tag = (uint64_t)(uintptr_t)op;
	/* Relaxed: a count that says whether to look at the shared ring. */
	atomic_fetch_add_explicit(&p->shared_in_flight, 1, memory_order_relaxed);
	pthread_mutex_lock(&p->sq_lock);
	sqe = get_sqe(p);
	prep_op(sqe, op);
	io_uring_sqe_set_data(sqe, op);
	/*
	 * Not submitted yet: the worker hands everything its tick prepared to
	 * the kernel in one io_uring_enter at the end of the tick
	 * (io_driver_flush); a thread that is not a worker flushes at once
	 * (blitz_io_poll), and a reaper flushes before it waits.  Relaxed:
	 * under sq_lock; read without it only as a hint (uring_flush).
	 */
	atomic_store_explicit(&p->unsubmitted, true, memory_order_relaxed);
	pthread_mutex_unlock(&p->sq_lock);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* A worker's own ring                                                     */

/* own_enter - submit what is prepared and run the pending completion work. */
static void own_enter(struct own_ring *r)
{
	/* ring_enter: as if the kernel refused the batch (EBUSY) and took nothing. */
	if (!fault_fail(FAULT_RING_ENTER))
		io_uring_submit_and_get_events(&r->ring);
	/* What the kernel has not taken (it refused the batch: EINTR, EBUSY) is retried. */
	r->unsubmitted = io_uring_sq_ready(&r->ring);
}

/*
 * pending_close_put - drop a reference to @c; the last closes its
 * descriptor.  acq_rel: the last dropper's close comes after every other
 * ring's cancel was submitted (their releases).
 */
static void pending_close_put(struct pending_close *c)
{
	if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
		return;
	close(c->fd);
	free(c);
}

/*
 * own_take_cancels - prepare the cancels other threads queued for us.
 * Relaxed load: a hint.  A cancel queued after it read false is not lost:
 * the canceller's eventfd write wakes us or leaves a CQE, and we look
 * again at the next reap, flush or park.  A queued close cancels
 * everything on its descriptor here, entering the ring at once so that
 * the cancel finds the file before the descriptor is closed.
 */
static void own_take_cancels(struct own_ring *r)
{
	uint64_t *tags;
	unsigned n;
	bool closes = false;

	if (!atomic_load_explicit(&r->cancel_pending, memory_order_relaxed))
		return;
	spin_lock(&r->cancel_lock);
	tags = r->cancels;
	n = r->ncancels;
	r->cancels = NULL;
	r->ncancels = r->cancels_cap = 0;
	/* Relaxed: under cancel_lock, which orders it for the next taker. */
	atomic_store_explicit(&r->cancel_pending, false, memory_order_relaxed);
	spin_unlock(&r->cancel_lock);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = own_sqe(r);

		if (tags[i] & QUEUED_CLOSE) {
			struct pending_close *c = (void *)(uintptr_t)(tags[i] & ~QUEUED_CLOSE);

			io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
			closes = true;
		} else {
			io_uring_prep_cancel64(sqe, tags[i], 0);
		}
		io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
	}
	if (closes) {
		own_enter(r);
		for (unsigned i = 0; i < n; i++)
			if (tags[i] & QUEUED_CLOSE)
				pending_close_put((void *)(uintptr_t)(tags[i] & ~QUEUED_CLOSE));
	}
	free(tags);
}

/*
 * own_reap - complete what the ring's CQ holds; returns the ops completed.
 * Peeks only while the CQ has entries, so that liburing never enters the
 * kernel here (it would to run pending work: IORING_SQ_TASKRUN); the
 * caller decides when that is worth a syscall.
 */
static int own_reap(struct blitz_io *io, struct own_ring *r)
{
	struct io_uring_cqe *cqes[CQE_BATCH];
	unsigned n;
	int total = 0;

	while (io_uring_cq_ready(&r->ring) &&
	       (n = io_uring_peek_batch_cqe(&r->ring, cqes, CQE_BATCH)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t tag = cqes[i]->user_data;
			int res = cqes[i]->res;

			switch (tag) {
			case TAG_INTERNAL:
				break;
			case TAG_WAKE:
				if (!(cqes[i]->flags & IORING_CQE_F_MORE))
					r->wake_armed = false;
				break;
			case TAG_SHARED:
				r->shared_armed = false;
				break;
			default:
				r->in_flight--;
				io_complete(io, (struct blitz_io_op *)(uintptr_t)(tag & ~TAG_GEN_MASK), res);
				total++;
			}
		}
		io_uring_cq_advance(&r->ring, n);
	}
	return total;
}

static int shared_reap(struct blitz_io *io, uint64_t timeout_ns);

/* uring_reap_own - a worker's tick: its own ring, then the shared one if busy. */
static int uring_reap_own(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r = own_ring_of(io);
	int n;

	if (!r)
		return -1;
	own_take_cancels(r);
	if (r->unsubmitted)
		own_enter(r);
	n = own_reap(io, r);
	/*
	 * Completion work the kernel holds for us (IORING_SQ_TASKRUN; also a
	 * CQ overflow): run it now only if the CQ gave nothing; else the
	 * tasks just woken submit, and the enter at the end of this tick
	 * (flush) runs it; if they do not, the next tick's reap does.
	 * READ_ONCE is a relaxed load: a flag seen late is seen by a later
	 * reap, and a park enters the ring anyway.
	 */
	if (!n && (IO_URING_READ_ONCE(*r->ring.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW))) {
		own_enter(r);
		n = own_reap(io, r);
	}
	/* Relaxed: a hint (see uring_submit); the lock orders the reap. */
	if (atomic_load_explicit(&p->shared_in_flight, memory_order_relaxed) > 0 &&
	    !pthread_mutex_trylock(&io->reap_lock)) {
		n += shared_reap(io, 0);
		pthread_mutex_unlock(&io->reap_lock);
	}
	return n;
}

static bool uring_has_own(struct blitz_io *io)
{
	return own_ring_of(io) != NULL;
}

/*
 * uring_wait_own - the owner parks in its ring until a completion (its
 * own, or the shared ring's while that has operations in flight),
 * wake_worker() or the timeout.  The CQEs are left for the next tick's
 * reap_own(), so the tasks they wake run on this worker (LIFO slot).
 * Returns how many op completions are waiting.
 */
static int uring_wait_own(struct blitz_io *io, uint64_t timeout_ns)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r = own_ring_of(io);
	struct __kernel_timespec ts = {
		.tv_sec = (long long)(timeout_ns / 1000000000ull),
		.tv_nsec = (long long)(timeout_ns % 1000000000ull),
	};
	struct io_uring_cqe *cqes[CQE_BATCH], *cqe;
	unsigned n;
	int ops = 0;

	own_take_cancels(r);
	/*
	 * Empty the CQ first, or the wait would return at once: the wake
	 * polls' CQEs pile up while nothing is in flight (the ticks reap only
	 * then).  Ops are rare here (the tick that found no work reaped); if
	 * there are, their tasks go to the global queue (we are parking).
	 */
	ops = own_reap(io, r);
	if (ops > 0)
		return ops;
	if (!r->wake_armed) {
		/*
		 * Multishot: one CQE per eventfd write, armed until the kernel
		 * drops it (no IORING_CQE_F_MORE).  The eventfd is never read:
		 * re-armed, the poll fires at once, a harmless early return.
		 */
		struct io_uring_sqe *sqe = own_sqe(r);

		io_uring_prep_poll_multishot(sqe, r->efd, POLLIN);
		io_uring_sqe_set_data64(sqe, TAG_WAKE);
		r->wake_armed = true;
	}
	/* Relaxed: a hint; shared completions are reaped by every tick anyway. */
	if (!r->shared_armed && atomic_load_explicit(&p->shared_in_flight, memory_order_relaxed) > 0) {
		struct io_uring_sqe *sqe = own_sqe(r);

		io_uring_prep_poll_add(sqe, p->ring.ring_fd, POLLIN);
		io_uring_sqe_set_data64(sqe, TAG_SHARED);
		r->shared_armed = true;
	}
	/* One io_uring_enter: submit, run pending completion work, wait. */
	io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	r->unsubmitted = io_uring_sq_ready(&r->ring);
	n = io_uring_cq_ready(&r->ring) ? io_uring_peek_batch_cqe(&r->ring, cqes, CQE_BATCH) : 0;
	for (unsigned i = 0; i < n; i++)
		ops += cqes[i]->user_data > TAG_SHARED;
	return ops;
}

/* uring_wake_worker - make worker @worker's uring_wait_own() return. */
static void uring_wake_worker(struct blitz_io *io, unsigned worker)
{
	struct uring_priv *p = io->priv;
	uint64_t one = 1;

	/* EAGAIN (the counter is full) cannot happen in practice: it is never read. */
	if (write(p->own[worker].efd, &one, sizeof(one)) < 0)
		return;
}

/* uring_thread_start - worker @worker takes its ring (if there are rings). */
static void uring_thread_start(struct blitz_io *io, unsigned worker)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r;
	int err;

	if (!p->own || worker >= p->nr_own)
		return;
	r = &p->own[worker];
	/* SINGLE_ISSUER: the thread that enables the ring is its submitter. */
	err = io_uring_register(r->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	if (err < 0) {
		fprintf(stderr, "blitz: io_uring: worker %u cannot enable its ring (%s); it uses the shared one\n",
			worker, strerror(-err));
		return;
	}
	/* A registered ring descriptor spares every enter a file lookup. */
	(void)io_uring_register_ring_fd(&r->ring);
	my_ring = r;
}

/*
 * uring_thread_stop - the worker is exiting (shutdown): cancel everything
 * in its ring and collect the completions (each releases its task), for at
 * most a second; what is left is reported by io_driver_shutdown.
 */
static void uring_thread_stop(struct blitz_io *io)
{
	struct own_ring *r = own_ring_of(io);
	struct io_uring_sqe *sqe;

	if (!r)
		return;
	spin_lock(&r->cancel_lock);
	r->closed = true;	/* later cancels are covered by the one below */
	spin_unlock(&r->cancel_lock);
	own_take_cancels(r);	/* queued closes are closed */
	sqe = own_sqe(r);
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
	for (int i = 0; i < 100; i++) {
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10000000 };
		struct io_uring_cqe *cqe;

		io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
		r->unsubmitted = io_uring_sq_ready(&r->ring);
		own_reap(io, r);
		if (r->in_flight == 0)
			break;
	}
	(void)io_uring_unregister_ring_fd(&r->ring);
	my_ring = NULL;
}

/* ---------------------------------------------------------------------- */
/* Flushing, reaping and cancelling                                        */

/*
 * uring_flush - hand the prepared entries to the kernel in one
 * io_uring_enter: the caller's own ring (which also runs its pending
 * completion work), and the shared ring's.  Relaxed: the shared flag is
 * written under sq_lock by the thread that prepared an entry, and that
 * thread flushes its own entries later (program order), so it always sees
 * its own store; another thread's store is only a hint here (a stale false
 * leaves that thread's entries for it to flush, a stale true costs one
 * empty lock round).
 */
static void uring_flush(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r = own_ring_of(io);

	if (r) {
		own_take_cancels(r);
		if (r->unsubmitted)
			own_enter(r);
	}
	/* Relaxed: a hint (see above). */
	if (!atomic_load_explicit(&p->unsubmitted, memory_order_relaxed))
		return;
	pthread_mutex_lock(&p->sq_lock);
	/* Relaxed: under sq_lock now, which every store of the flag holds. */
	if (atomic_load_explicit(&p->unsubmitted, memory_order_relaxed)) {
		/* The kernel refused the whole batch (EINTR, EBUSY): retry later. */
		atomic_store_explicit(&p->unsubmitted,
				      fault_fail(FAULT_RING_ENTER) || io_uring_submit(&p->ring) < 0,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&p->sq_lock);
}

/* shared_reap - the shared ring, under reap_lock. */
static int shared_reap(struct blitz_io *io, uint64_t timeout_ns)
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
				/* Relaxed: a count (see uring_submit). */
				atomic_fetch_sub_explicit(&p->shared_in_flight, 1, memory_order_relaxed);
				io_complete(io, op, res);
				total++;
			}
		}
	}
	return total;
}

/*
 * uring_reap - the shared ring (the driver's reap_lock is held): a thread
 * that is not a worker, or a worker whose ring could not be enabled.
 */
static int uring_reap(struct blitz_io *io, uint64_t timeout_ns)
{
	return shared_reap(io, timeout_ns);
}

static void submit_internal(struct uring_priv *p, uint64_t target)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&p->sq_lock);
	sqe = get_sqe(p);
	if (target)
		io_uring_prep_cancel64(sqe, target, 0);
	else
		io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, NULL);
	/* Relaxed: under sq_lock; this submits the queued entries too. */
	atomic_store_explicit(&p->unsubmitted, false, memory_order_relaxed);
	io_uring_submit(&p->ring);
	pthread_mutex_unlock(&p->sq_lock);
}

/* submit_internal_fd - cancel everything on @fd in the shared ring, now. */
static void submit_internal_fd(struct uring_priv *p, int fd)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&p->sq_lock);
	sqe = get_sqe(p);
	io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
	io_uring_sqe_set_data(sqe, NULL);
	/* Relaxed: under sq_lock; this submits the queued entries too. */
	atomic_store_explicit(&p->unsubmitted, false, memory_order_relaxed);
	io_uring_submit(&p->ring);
	pthread_mutex_unlock(&p->sq_lock);
}

/*
 * queue_for_owner - hand @tag (an op's tag, or QUEUED_CLOSE with a close)
 * to @r's owner and wake it; false if it has exited or there is no memory.
 */
static bool queue_for_owner(struct blitz_io *io, struct own_ring *r, uint64_t tag)
{
	struct uring_priv *p = io->priv;
	bool queued = false;

	spin_lock(&r->cancel_lock);
	if (!r->closed) {
		if (r->ncancels == r->cancels_cap) {
			unsigned cap = r->cancels_cap ? 2 * r->cancels_cap : 16;
			uint64_t *t = realloc(r->cancels, cap * sizeof(*t));

			if (!t) {
				spin_unlock(&r->cancel_lock);
				fprintf(stderr, "blitz: io_uring: no memory to queue a cancel\n");
				return false;
			}
			r->cancels = t;
			r->cancels_cap = cap;
		}
		r->cancels[r->ncancels++] = tag;
		/* Relaxed: under cancel_lock; the owner's read is a hint. */
		atomic_store_explicit(&r->cancel_pending, true, memory_order_relaxed);
		queued = true;
	}
	spin_unlock(&r->cancel_lock);
	if (queued)
		uring_wake_worker(io, (unsigned)(r - p->own));
	return queued;
}

/*
 * uring_cancel - the operation completes with -ECANCELED (or its result,
 * if it won the race).  The caller is @op's task, so @op is not resubmitted
 * meanwhile and its ring and tag are those of the pending submission.  In
 * another worker's ring the cancel is queued for the owner (see the top);
 * if that fails, the op completes by itself, or at shutdown.
 */
static void uring_cancel(struct blitz_io *io, struct blitz_io_op *op)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r;

	if (op->ring < 0 || !p->own) {
		submit_internal(p, op->ring_tag);
		return;
	}
	r = &p->own[op->ring];
	if (r == my_ring) {
		struct io_uring_sqe *sqe = own_sqe(r);	/* submitted by the tick's flush */

		io_uring_prep_cancel64(sqe, op->ring_tag, 0);
		io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
		return;
	}
	queue_for_owner(io, r, op->ring_tag);
}

/*
 * pending_close_new - queue a cancel of everything on @fd to every worker
 * ring but @mine.  The queued cancels name a duplicate of @fd (the same
 * file), so that the caller closes @fd itself at once; out of descriptors,
 * they name @fd, which the last of them then closes.  Returns the close
 * holding the caller's reference, or NULL if no ring took it.
 */
static struct pending_close *pending_close_new(struct blitz_io *io, struct own_ring *mine, int fd)
{
	struct uring_priv *p = io->priv;
	struct pending_close *c = malloc(sizeof(*c));
	bool queued = false;

	if (!c)
		return NULL;
	atomic_init(&c->refs, 1);
	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (c->fd < 0)
		c->fd = fd;
	for (unsigned i = 0; i < p->nr_own; i++) {
		if (&p->own[i] == mine)
			continue;
		/* Relaxed: the queue's lock publishes @c to the owner. */
		atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
		if (queue_for_owner(io, &p->own[i], QUEUED_CLOSE | (uint64_t)(uintptr_t)c))
			queued = true;
		else
			atomic_fetch_sub_explicit(&c->refs, 1, memory_order_relaxed);
	}
	if (queued)
		return c;
	if (c->fd != fd)
		close(c->fd);
	free(c);
	return NULL;
}

/*
 * uring_close - blitz_net_close(): cancel every operation on @fd in every
 * ring that may hold one, then close it.  The cancels in the caller's own
 * ring and in the shared ring are submitted now; the other workers' rings
 * get a pending_close, whose descriptor the last of them closes.
 */
static int uring_close(struct blitz_io *io, int fd)
{
	struct uring_priv *p = io->priv;
	struct own_ring *mine = own_ring_of(io);
	struct pending_close *c = NULL;
	int res;

	if (fcntl(fd, F_GETFD) < 0)
		return -errno;
	if (p->nr_own > (mine ? 1u : 0u))
		c = pending_close_new(io, mine, fd);
	if (mine) {
		struct io_uring_sqe *sqe = own_sqe(mine);

		io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
		io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
		own_enter(mine);
	}
	/* Relaxed: a hint; an op submitted there concurrently is the caller's race. */
	if (atomic_load_explicit(&p->shared_in_flight, memory_order_relaxed) > 0)
		submit_internal_fd(p, fd);
	if (c && c->fd == fd) {
		pending_close_put(c);	/* out of descriptors: closed by the last ring */
		return 0;
	}
	res = close(fd) < 0 ? -errno : 0;
	if (c)
		pending_close_put(c);
	return res;
}

/*
 * uring_cancel_all - shutdown, after the workers have exited (each drained
 * its own ring): cancel everything in the shared ring (IORING_ASYNC_CANCEL_ANY,
 * kernel 5.19), and complete what a worker's ring still holds in its CQ
 * (reading a CQ needs no enter; what did not finish is reported).
 */
static void uring_cancel_all(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;
	struct io_uring_sqe *sqe;

	for (unsigned i = 0; i < p->nr_own; i++)
		if (p->own[i].in_flight > 0)
			own_reap(io, &p->own[i]);
	pthread_mutex_lock(&p->sq_lock);
	sqe = get_sqe(p);
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data(sqe, NULL);
	/* Relaxed: under sq_lock; this submits the queued entries too. */
	atomic_store_explicit(&p->unsubmitted, false, memory_order_relaxed);
	io_uring_submit(&p->ring);
	pthread_mutex_unlock(&p->sq_lock);
}

/* A NOP's completion makes a waiting reaper (of the shared ring) return. */
static void uring_wake(struct blitz_io *io)
{
	submit_internal(io->priv, 0);
}

const struct io_backend io_uring_backend = {
	.kind = BLITZ_BACKEND_IO_URING,
	.caps = IO_CAP_FILES,
	.init = uring_init,
	.deinit = uring_deinit,
	.submit = uring_submit,
	.reap = uring_reap,
	.cancel = uring_cancel,
	.wake = uring_wake,
	.flush = uring_flush,
	.cancel_all = uring_cancel_all,
	.close = uring_close,
	.thread_start = uring_thread_start,
	.thread_stop = uring_thread_stop,
	.reap_own = uring_reap_own,
	.has_own = uring_has_own,
	.wait_own = uring_wait_own,
	.wake_worker = uring_wake_worker,
};
