/* SPDX-License-Identifier: MIT */
/*
 * backends/driver.h - the I/O driver: one backend interface, a backend per
 * file (backends/driver.c's table; docs/io.md, "Adding a backend").
 *
 * An operation's state goes IDLE -> PENDING (submitted; its waker holds a
 * reference to the task) -> DONE (result stored, waker woken).  Exactly one
 * party completes an operation: the backend that finished it, or the
 * canceller that took it off a wait list first.
 *
 * Reaping is done by one thread at a time: any worker try-locks reap_lock
 * on every tick (non-blocking); a worker going to park may hold it and block
 * in reap() until a completion, a timeout or wake().
 *
 * A backend may also give each worker a queue of its own (io_uring: a ring
 * per worker, backends/io_uring.c): the worker's thread opens it at start
 * (thread_start), reaps it without the lock (reap_own), sleeps in it when it
 * parks (has_own, wait_own; woken by wake_worker) and drains it at exit
 * (thread_stop).  The shared queue above stays for the other threads.
 */
#ifndef BLITZ_BACKENDS_DRIVER_H
#define BLITZ_BACKENDS_DRIVER_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <blitz/io.h>

enum { IO_OP_IDLE = 0, IO_OP_PENDING = 1, IO_OP_DONE = 2 };

/*
 * op->claim, for operations that make a descriptor (io_op_makes_fd): the
 * descriptor goes to the task or is closed, never lost.  NONE -> COMPLETED
 * (io_complete() with a descriptor) -> DELIVERED (blitz_io_poll() handed
 * it over), or NONE -> ABANDONED (blitz_io_cancel()).  The side that finds
 * the other's mark closes the descriptor: the completer that finds
 * ABANDONED, the canceller that finds COMPLETED.
 */
enum { IO_CLAIM_NONE = 0, IO_CLAIM_ABANDONED = 1, IO_CLAIM_COMPLETED = 2, IO_CLAIM_DELIVERED = 3 };

static inline bool io_op_makes_fd(const struct blitz_io_op *op)
{
	return op->opcode == BLITZ_IO_ACCEPT || op->opcode == BLITZ_IO_OPENAT;
}

struct blitz_io;

/*
 * What a backend can do besides sockets and pipes (struct io_backend.caps);
 * code outside backends/ asks these (io_driver_can), not which backend runs.
 */
enum {
	/*
	 * The file opcodes (blitz_io_opcode_is_file) and reads and writes of
	 * regular files, completed without blocking a worker.  The readiness
	 * backends cannot: a regular file is always "ready", so the syscall
	 * would block (core/io/fs.c runs these on the blocking pool there).
	 */
	IO_CAP_FILES = 1u << 0,
};

struct io_backend {
	enum blitz_io_backend kind;
	unsigned caps;				/* IO_CAP_* */
	int (*init)(struct blitz_io *io);
	void (*deinit)(struct blitz_io *io);
	/* Start @op.  0: it will complete later; else the result, now (not -EAGAIN). */
	int (*submit)(struct blitz_io *io, struct blitz_io_op *op, bool *done);
	/*
	 * Complete what is ready, waiting at most @timeout_ns; returns
	 * completions.  @max: the events of at most this many descriptors,
	 * where the backend can leave the rest queued in their order for the
	 * next reap (epoll: the kernel's ready list; poll: the descriptors
	 * armed longest ago first, the rest still ready at the next poll());
	 * the shared io_uring ring takes all (IO_REAP_ALL: no bound).
	 */
	int (*reap)(struct blitz_io *io, uint64_t timeout_ns, unsigned max);
	void (*cancel)(struct blitz_io *io, struct blitz_io_op *op);
	/* Make a reap() that blocks return soon. */
	void (*wake)(struct blitz_io *io);
	/* Hand operations submit() only queued to the kernel (NULL: none). */
	void (*flush)(struct blitz_io *io);
	/* Cancel every operation in flight (shutdown). */
	void (*cancel_all)(struct blitz_io *io);
	/*
	 * blitz_net_close(): end what waits on @fd with -ECANCELED and close
	 * it, now or, where another thread must end something first, once it
	 * has (io_uring).  Returns 0 or -errno; NULL: close(2).
	 */
	int (*close)(struct blitz_io *io, int fd);
	/*
	 * @fd is a socket that will be closed through close() (accepted with
	 * BLITZ_ACCEPT_OWNED): the backend may keep operations armed on it
	 * between reads (NULL: nothing to do).
	 */
	void (*own)(struct blitz_io *io, int fd);

	/* Queues of a worker's own (all NULL: none; see the top of this file). */
	void (*thread_start)(struct blitz_io *io, unsigned worker);
	void (*thread_stop)(struct blitz_io *io);
	/* Complete what is ready in the caller's own queue; -1: it has none. */
	int (*reap_own)(struct blitz_io *io);
	/* Does the calling thread sleep in a queue of its own? */
	bool (*has_own)(struct blitz_io *io);
	/* Sleep there until a completion, wake_worker() or @timeout_ns; completions seen. */
	int (*wait_own)(struct blitz_io *io, uint64_t timeout_ns);
	void (*wake_worker)(struct blitz_io *io, unsigned worker);
};

struct blitz_io {
	const struct io_backend *backend;
	void *priv;
	struct blitz_runtime *rt;
	bool shared_ring;			/* io_uring: one ring, not one per worker */
	pthread_mutex_t reap_lock;
	_Atomic long in_flight;			/* submitted, not yet completed */
};

extern const struct io_backend io_uring_backend;
extern const struct io_backend epoll_backend;
extern const struct io_backend poll_backend;

int io_driver_init(struct blitz_io *io, struct blitz_runtime *rt, const struct blitz_config *c);
void io_driver_deinit(struct blitz_io *io);
void io_driver_shutdown(struct blitz_io *io);
#define IO_REAP_ALL	UINT_MAX
int io_driver_reap(struct blitz_io *io, uint64_t timeout_ns, unsigned max);
void io_complete(struct blitz_io *io, struct blitz_io_op *op, int32_t result);
int io_perform(struct blitz_io_op *op);
void io_abandon(struct blitz_io_op *op);

/* io_driver_can - does the running backend have capability @cap (IO_CAP_*)? */
static inline bool io_driver_can(const struct blitz_io *io, unsigned cap)
{
	return io->backend->caps & cap;
}

/*
 * io_driver_flush - start what the backend queued: what this thread
 * submitted, and what threads that are not workers left for a worker
 * (io_uring's pending list).  Only a thread that outlives the operations
 * it starts may call it: a worker, or the owner of a driver without a
 * runtime (io_uring cancels a request whose submitter has exited).
 */
static inline void io_driver_flush(struct blitz_io *io)
{
	if (io->backend->flush)
		io->backend->flush(io);
}

/* A worker's thread begins (@worker: its index) and ends. */
static inline void io_driver_thread_start(struct blitz_io *io, unsigned worker)
{
	if (io->backend->thread_start)
		io->backend->thread_start(io, worker);
}

static inline void io_driver_thread_stop(struct blitz_io *io)
{
	if (io->backend->thread_stop)
		io->backend->thread_stop(io);
}

/* io_driver_has_own - does the calling worker park in a queue of its own? */
static inline bool io_driver_has_own(struct blitz_io *io)
{
	return io->backend->has_own && io->backend->has_own(io);
}

/* io_driver_wait_own - sleep there (only if io_driver_has_own()). */
static inline int io_driver_wait_own(struct blitz_io *io, uint64_t timeout_ns)
{
	return io->backend->wait_own(io, timeout_ns);
}

/* io_driver_wake_worker - make worker @worker's io_driver_wait_own() return. */
static inline void io_driver_wake_worker(struct blitz_io *io, unsigned worker)
{
	io->backend->wake_worker(io, worker);
}

#endif
