// SPDX-License-Identifier: MIT
/*
 * backends/driver.c - backend selection, the operation life cycle, and the
 * non-blocking syscalls the readiness backends perform.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "../core/clock.h"
#include "../core/fault.h"
#include "../core/probes.h"
#include "driver.h"

static const struct io_backend *const backends[] = {
#if CONFIG_BACKEND_IO_URING
	&io_uring_backend,
#endif
#if CONFIG_BACKEND_EPOLL
	&epoll_backend,
#endif
#if CONFIG_BACKEND_POLL
	&poll_backend,
#endif
};
#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]))

/* The one table of backend names: BLITZ_BACKEND's words, the probes' labels. */
static const char *const kind_names[] = {
	[BLITZ_BACKEND_AUTO] = "auto",
	[BLITZ_BACKEND_IO_URING] = "io_uring",
	[BLITZ_BACKEND_EPOLL] = "epoll",
	[BLITZ_BACKEND_POLL] = "poll",
};
#define NR_KINDS (sizeof(kind_names) / sizeof(kind_names[0]))

const char *blitz_backend_name(enum blitz_io_backend b)
{
	return (unsigned)b < NR_KINDS ? kind_names[b] : NULL;
}

int blitz_backend_parse(const char *name, enum blitz_io_backend *out)
{
	for (unsigned i = 0; name && i < NR_KINDS; i++) {
		if (!strcmp(name, kind_names[i])) {
			*out = (enum blitz_io_backend)i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * io_driver_init - start @c's backend; with BLITZ_BACKEND_AUTO the
 * first that works, in the order io_uring, epoll, poll, saying on stderr
 * which one was unavailable and why.  A forced backend that is not
 * available falls back too, but says so (it is never silently replaced).
 */
int io_driver_init(struct blitz_io *io, struct blitz_runtime *rt, const struct blitz_config *c)
{
	enum blitz_io_backend want = c->backend;
	bool forced = want != BLITZ_BACKEND_AUTO;
	unsigned first = 0;
	int err = -ENODEV;

	memset(io, 0, sizeof(*io));
	io->rt = rt;
	io->shared_ring = c->io_uring_rings == BLITZ_IO_URING_RINGS_SHARED;
	pthread_mutex_init(&io->reap_lock, NULL);
	atomic_init(&io->in_flight, 0);
	if (forced) {
		while (first < NR_BACKENDS && backends[first]->kind != want)
			first++;
		if (first == NR_BACKENDS) {
			fprintf(stderr, "blitz: backend %s is not built in (CONFIG_BACKEND_*); using the default order\n",
				kind_names[want]);
			first = 0;
		}
	}
	for (unsigned i = first; i < NR_BACKENDS; i++) {
		err = backends[i]->init(io);
		if (err == 0) {
			io->backend = backends[i];
			return 0;
		}
		if (i + 1 < NR_BACKENDS)
			fprintf(stderr, "blitz: %s unavailable (%s)%s; using %s\n",
				kind_names[backends[i]->kind], strerror(-err),
				forced && i == first ? " although it was asked for" : "",
				kind_names[backends[i + 1]->kind]);
	}
	/* Nothing after the asked-for one worked: try those before it. */
	for (unsigned i = 0; i < first; i++) {
		err = backends[i]->init(io);
		if (err == 0) {
			fprintf(stderr, "blitz: using %s\n", kind_names[backends[i]->kind]);
			io->backend = backends[i];
			return 0;
		}
	}
	pthread_mutex_destroy(&io->reap_lock);
	return err;
}

void io_driver_deinit(struct blitz_io *io)
{
	if (!io->backend)
		return;
	io->backend->deinit(io);
	io->backend = NULL;
	pthread_mutex_destroy(&io->reap_lock);
}

/*
 * io_driver_shutdown - cancel what is in flight and collect the completions
 * (each releases its task reference).  Bounded: an operation the kernel
 * will not give back within a second is reported and left.
 */
void io_driver_shutdown(struct blitz_io *io)
{
	if (!io->backend)
		return;
	io->backend->cancel_all(io);
	/* seq_cst, though any order would do: the workers are joined, we reap. */
	for (int i = 0; i < 100 && atomic_load(&io->in_flight) > 0; i++)
		io->backend->reap(io, 10000000, IO_REAP_ALL);
	if (atomic_load(&io->in_flight) > 0)
		fprintf(stderr, "blitz: %ld I/O operations still in flight at shutdown\n",
			atomic_load(&io->in_flight));
}

/*
 * io_claim - move @op's claim from NONE to @to; false if another side got
 * there first.  acq_rel: the canceller that sees COMPLETED then waits for
 * DONE (the completer's release store), and the completer that sees
 * ABANDONED sees the cancel's writes before it.
 */
static bool io_claim(struct blitz_io_op *op, uint32_t to)
{
	uint32_t none = IO_CLAIM_NONE;

	return atomic_compare_exchange_strong_explicit(&op->claim, &none, to, memory_order_acq_rel,
						       memory_order_acquire);
}

/*
 * io_abandon - blitz_io_cancel() on an operation that makes a descriptor,
 * from @op's task: a descriptor already completed but not handed over is
 * closed now; one still to come is closed by io_complete().
 */
void io_abandon(struct blitz_io_op *op)
{
	if (io_claim(op, IO_CLAIM_ABANDONED) ||
	    atomic_load_explicit(&op->claim, memory_order_acquire) != IO_CLAIM_COMPLETED)
		return;		/* the completer closes it; or it was handed over */
	/* The completer stores DONE right after COMPLETED.  Acquire: its result. */
	while (atomic_load_explicit(&op->state, memory_order_acquire) != IO_OP_DONE)
		sched_yield();
	close(op->result);
	op->result = -ECANCELED;
	/* Relaxed: only this task reads it from here on. */
	atomic_store_explicit(&op->claim, IO_CLAIM_DELIVERED, memory_order_relaxed);
}

/*
 * io_complete - store the result, mark DONE and wake the submitter.  The
 * waker is copied out first: once DONE is visible the task may reuse the op.
 */
void io_complete(struct blitz_io *io, struct blitz_io_op *op, int32_t result)
{
	struct blitz_waker w;

	/*
	 * Acquire: pairs with the release store of PENDING in io_submit_op(),
	 * so the op's fields (waker, buffers) written before submission are
	 * visible here even when the hand-off went through the kernel (the
	 * io_uring rings), which the C memory model does not see.
	 */
	(void)atomic_load_explicit(&op->state, memory_order_acquire);
	w = op->waker;
	if (result >= 0 && io_op_makes_fd(op) && !io_claim(op, IO_CLAIM_COMPLETED)) {
		close(result);		/* abandoned: the task will not take it */
		result = -ECANCELED;
	}
	BLITZ_IO_COMPLETE(io->backend->kind, op->opcode, result,
			  BLITZ_IO_COMPLETE_ENABLED() && op->submit_ns ? clock_now_ns() - op->submit_ns : 0,
			  (uint64_t)(uintptr_t)op);

	op->waker.vtable = NULL;
	op->result = result;
	/* Release: the task's acquire load of DONE sees the result. */
	atomic_store_explicit(&op->state, IO_OP_DONE, memory_order_release);
	/* Relaxed: a count for the parking decision, not a synchronization. */
	atomic_fetch_sub_explicit(&io->in_flight, 1, memory_order_relaxed);
	blitz_waker_wake(&w);
}

/*
 * io_driver_reap - complete what is ready if no other thread is reaping;
 * without waiting, a worker with a queue of its own reaps that (the
 * backend then looks at the shared one too).  @max: see struct
 * io_backend's reap.
 */
int io_driver_reap(struct blitz_io *io, uint64_t timeout_ns, unsigned max)
{
	int n;

	if (!timeout_ns && io->backend->reap_own && (n = io->backend->reap_own(io)) >= 0)
		return n;
	if (pthread_mutex_trylock(&io->reap_lock))
		return 0;
	n = io->backend->reap(io, timeout_ns, max);
	pthread_mutex_unlock(&io->reap_lock);
	return n;
}

/*
 * io_perform - the non-blocking syscall of @op, for the readiness backends.
 * Returns the result, or -EAGAIN if the descriptor is not ready.
 */
int io_perform(struct blitz_io_op *op)
{
	ssize_t r;
	int fd = op->fd;

	switch (op->opcode) {
	case BLITZ_IO_NOP:
		return 0;
	case BLITZ_IO_READ:
		r = op->off < 0 ? read(fd, op->buf, op->len) : pread(fd, op->buf, op->len, op->off);
		break;
	case BLITZ_IO_WRITE:
		r = op->off < 0 ? write(fd, op->buf, op->len) : pwrite(fd, op->buf, op->len, op->off);
		break;
	case BLITZ_IO_RECV:
		r = recv(fd, op->buf, op->len, op->flags | MSG_DONTWAIT);
		break;
	case BLITZ_IO_SEND:
		r = send(fd, op->buf, op->len, op->flags | MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	case BLITZ_IO_RECVMSG:
		r = recvmsg(fd, op->msg, op->flags | MSG_DONTWAIT);
		break;
	case BLITZ_IO_SENDMSG:
		r = sendmsg(fd, op->msg, op->flags | MSG_DONTWAIT | MSG_NOSIGNAL);
		break;
	case BLITZ_IO_ACCEPT:
		if (fault_fail(FAULT_ACCEPT)) {
			/* As accept4 out of descriptors: the process's (EMFILE) or the system's. */
			errno = fault_pick(FAULT_ACCEPT, 2) ? ENFILE : EMFILE;
			r = -1;
			break;
		}
		r = accept4(fd, op->addr, op->addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		break;
	case BLITZ_IO_CONNECT: {
		/* First call starts the connect; later calls read its outcome. */
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(op->flags & 1)) {
			op->flags |= 1;
			r = connect(fd, op->addr, op->addr_in_len);
			if (r == 0 || errno != EINPROGRESS)
				break;
			return -EAGAIN;
		}
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (poll(&p, 1, 0) == 0)
			return -EAGAIN;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			return -errno;
		return -err;
	}
	case BLITZ_IO_POLL_IN:
	case BLITZ_IO_POLL_OUT: {
		struct pollfd p = { .fd = fd, .events = op->opcode == BLITZ_IO_POLL_IN ? POLLIN : POLLOUT };

		r = poll(&p, 1, 0);
		if (r == 0)
			return -EAGAIN;
		if (r > 0)
			return p.revents;
		break;
	}
	default:
		return -EINVAL;
	}
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return (int)r;
}

/*
 * fault_error - for the io_complete fault point: an error that @op's kind
 * of transfer can complete with, or 0 for operations the point leaves
 * alone.  -EAGAIN is one of them: the callers that can get it (streams,
 * pipes) wait for readiness and try again.
 */
static int fault_error(const struct blitz_io_op *op)
{
	static const int recv_errs[] = { ECONNRESET, EAGAIN };
	static const int send_errs[] = { EPIPE, ECONNRESET, EAGAIN };
	static const int read_errs[] = { EIO, EAGAIN };
	static const int write_errs[] = { EIO, EPIPE, EAGAIN };
	static const int sync_errs[] = { EIO };
	const int *errs;
	size_t n;

	switch (op->opcode) {
	case BLITZ_IO_RECV:
	case BLITZ_IO_RECVMSG:
		errs = recv_errs, n = sizeof(recv_errs) / sizeof(int);
		break;
	case BLITZ_IO_SEND:
	case BLITZ_IO_SENDMSG:
		errs = send_errs, n = sizeof(send_errs) / sizeof(int);
		break;
	case BLITZ_IO_READ:
		errs = read_errs, n = sizeof(read_errs) / sizeof(int);
		break;
	case BLITZ_IO_WRITE:
		errs = write_errs, n = sizeof(write_errs) / sizeof(int);
		break;
	case BLITZ_IO_FSYNC:
		errs = sync_errs, n = 1;
		break;
	default:
		return 0;
	}
	if (!fault_fail(FAULT_IO_COMPLETE))
		return 0;
	return -errs[fault_pick(FAULT_IO_COMPLETE, n)];
}

/* fault_short - for the short_rw fault point: ask a transfer for fewer bytes. */
static void fault_short(struct blitz_io_op *op)
{
	switch (op->opcode) {
	case BLITZ_IO_READ:
	case BLITZ_IO_WRITE:
	case BLITZ_IO_RECV:
	case BLITZ_IO_SEND:
		if (op->len > 1 && fault_fail(FAULT_SHORT_RW))
			op->len = 1 + fault_pick(FAULT_SHORT_RW, op->len - 1);
		break;
	default:
		break;
	}
}

/*
 * io_submit_op - start @op with @waker (whose reference the op takes over).
 * Returns true if it completed at once (op->result valid, waker dropped).
 *
 * Fault points (core/fault.h), each on a path a real failure takes:
 * io_submit refuses the operation at once as a backend without room for
 * it does (epoll_ctl, readiness.c's descriptor table: -ENOMEM);
 * io_complete completes it, without running it, through io_complete()
 * with an error, as the kernel completes one that failed; short_rw makes
 * a transfer ask for fewer bytes than it was given, which the kernel may
 * always do.
 */
bool io_submit_op(struct blitz_io *io, struct blitz_io_op *op, struct blitz_waker waker);
bool io_submit_op(struct blitz_io *io, struct blitz_io_op *op, struct blitz_waker waker)
{
	bool done = false;
	int r;

	op->waker = waker;
	op->driver = io;
	op->backend = (uint8_t)io->backend->kind;
	/* The clock only while someone traces completions. */
	op->submit_ns = BLITZ_IO_COMPLETE_ENABLED() ? clock_now_ns() : 0;
	BLITZ_IO_SUBMIT(io->backend->kind, op->opcode, op->fd, (uint64_t)(uintptr_t)op);
	/* Release: publishes the op's fields to the completer (io_complete). */
	atomic_store_explicit(&op->state, IO_OP_PENDING, memory_order_release);
	/* Relaxed: a count (see io_complete). */
	atomic_fetch_add_explicit(&io->in_flight, 1, memory_order_relaxed);
	if (fault_fail(FAULT_IO_SUBMIT)) {
		done = true;
		r = -ENOMEM;
	} else if ((r = fault_error(op))) {
		io_complete(io, op, r);
		return false;
	} else {
		fault_short(op);
		r = io->backend->submit(io, op, &done);
	}
	if (!done)
		return false;
	/* Finished without waiting: no wake needed.  Relaxed: the count again. */
	atomic_fetch_sub_explicit(&io->in_flight, 1, memory_order_relaxed);
	op->result = r;
	BLITZ_IO_COMPLETE(io->backend->kind, op->opcode, r,
			  BLITZ_IO_COMPLETE_ENABLED() && op->submit_ns ? clock_now_ns() - op->submit_ns : 0,
			  (uint64_t)(uintptr_t)op);
	/* Relaxed: no completer ever saw the op; only its own task reads it. */
	atomic_store_explicit(&op->state, IO_OP_DONE, memory_order_relaxed);
	blitz_waker_drop(&op->waker);
	return true;
}
