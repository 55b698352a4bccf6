/* SPDX-License-Identifier: MIT */
/*
 * blitz/io.h - completion-based I/O operations.
 *
 * An operation (struct blitz_io_op) lives in the waiting task's state: no
 * allocation per operation.  Prepare it with one of the blitz_io_prep_*
 * functions, then await blitz_io_poll() until it returns BLITZ_READY; the
 * result is op->result (bytes, a descriptor, 0, or -errno).
 *
 * The same interface runs on every backend: io_uring performs the operation
 * in the kernel; epoll and poll wait until the descriptor is ready and then
 * perform it (descriptors must be non-blocking: the net layer makes them so).
 *
 * Lifetime: while an operation is pending it holds a reference to its task,
 * so the task's state (the op and any buffer inside the state) stays valid
 * until the operation completes, even if the task is cancelled meanwhile.
 * A buffer outside the task state must stay valid until completion too.
 * A cancelled task's drop function should call blitz_io_cancel().
 */
#ifndef BLITZ_IO_H
#define BLITZ_IO_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <blitz/config.h>
#include <blitz/task.h>

/* statx(2)'s buffer: <sys/stat.h> defines it with _GNU_SOURCE, <linux/stat.h> always. */
struct statx;

enum blitz_io_opcode {
	BLITZ_IO_NOP = 0,
	BLITZ_IO_READ,		/* read(fd, buf, len) at offset off (-1: current) */
	BLITZ_IO_WRITE,		/* write(fd, buf, len) at offset off (-1: current) */
	BLITZ_IO_RECV,		/* recv(fd, buf, len, flags) */
	BLITZ_IO_SEND,		/* send(fd, buf, len, flags | MSG_NOSIGNAL) */
	BLITZ_IO_ACCEPT,	/* accept4(fd, addr, addrlen, SOCK_NONBLOCK|SOCK_CLOEXEC) */
	BLITZ_IO_CONNECT,	/* connect(fd, addr, addrlen) on a non-blocking socket */
	BLITZ_IO_RECVMSG,	/* recvmsg(fd, msg, flags) */
	BLITZ_IO_SENDMSG,	/* sendmsg(fd, msg, flags | MSG_NOSIGNAL) */
	BLITZ_IO_POLL_IN,	/* wait until readable */
	BLITZ_IO_POLL_OUT,	/* wait until writable */
	/*
	 * File operations: io_uring only (the readiness backends refuse them
	 * with -EOPNOTSUPP; the fs module runs them on the blocking pool there).
	 */
	BLITZ_IO_OPENAT,	/* openat(fd, path, flags, mode) */
	BLITZ_IO_FSYNC,		/* fsync(fd), fdatasync(fd) with flags IORING_FSYNC_DATASYNC */
	BLITZ_IO_STATX,		/* statx(fd, path, flags, mask = len, buf) */
	BLITZ_IO_MKDIRAT,	/* mkdirat(fd, path, mode) */
	BLITZ_IO_RENAMEAT,	/* renameat2(fd, path, fd, path2, flags) */
	BLITZ_IO_UNLINKAT,	/* unlinkat(fd, path, flags) */
	BLITZ_IO_NR_OPCODES
};

/* blitz_io_opcode_is_file - an opcode only io_uring performs. */
static inline int blitz_io_opcode_is_file(unsigned opcode)
{
	return opcode >= BLITZ_IO_OPENAT && opcode < BLITZ_IO_NR_OPCODES;
}

struct blitz_io_op {
	uint8_t opcode;			/* enum blitz_io_opcode */
	uint8_t backend;		/* set at submission */
	uint16_t dir;			/* readiness backends: 0 read side, 1 write side */
	int fd;
	int flags;
	int32_t result;			/* valid once done */
	_Atomic uint32_t state;		/* enum in backends/driver.h */
	_Atomic uint32_t claim;		/* accept, openat: who owns the descriptor (driver.h) */
	void *buf;
	size_t len;
	off_t off;
	union {
		struct {			/* sockets */
			struct sockaddr *addr;	/* accept: out; connect: in */
			socklen_t *addrlen;	/* accept: in/out */
			socklen_t addr_in_len;	/* connect */
			struct msghdr *msg;
		};
		struct {			/* files */
			const char *path;
			const char *path2;	/* renameat: the new name */
			unsigned mode;		/* openat, mkdirat */
		};
	};
	uint64_t submit_ns;
	struct blitz_waker waker;
	void *driver;			/* the runtime's driver, set at submission */
	union {
		struct {		/* readiness backends: the fd's wait list */
			struct blitz_io_op *next;
			struct blitz_io_op *prev;
		};
		struct {		/* io_uring: where it was submitted */
			uint64_t ring_tag;	/* its user_data there */
			int32_t ring;		/* a worker's ring; -1: the shared one */
		};
	};
};

void blitz_io_prep_read(struct blitz_io_op *op, int fd, void *buf, size_t len, off_t off);
void blitz_io_prep_write(struct blitz_io_op *op, int fd, const void *buf, size_t len, off_t off);
void blitz_io_prep_recv(struct blitz_io_op *op, int fd, void *buf, size_t len, int flags);
void blitz_io_prep_send(struct blitz_io_op *op, int fd, const void *buf, size_t len, int flags);
void blitz_io_prep_accept(struct blitz_io_op *op, int fd, struct sockaddr *addr, socklen_t *addrlen);
void blitz_io_prep_connect(struct blitz_io_op *op, int fd, const struct sockaddr *addr, socklen_t len);
void blitz_io_prep_recvmsg(struct blitz_io_op *op, int fd, struct msghdr *msg, int flags);
void blitz_io_prep_sendmsg(struct blitz_io_op *op, int fd, const struct msghdr *msg, int flags);
void blitz_io_prep_poll(struct blitz_io_op *op, int fd, int out);
void blitz_io_prep_openat(struct blitz_io_op *op, int dirfd, const char *path, int flags, unsigned mode);
void blitz_io_prep_fsync(struct blitz_io_op *op, int fd, int datasync);
void blitz_io_prep_statx(struct blitz_io_op *op, int dirfd, const char *path, int flags,
			 unsigned mask, struct statx *out);
void blitz_io_prep_mkdirat(struct blitz_io_op *op, int dirfd, const char *path, unsigned mode);
void blitz_io_prep_renameat(struct blitz_io_op *op, int dirfd, const char *from, const char *to,
			    int flags);
void blitz_io_prep_unlinkat(struct blitz_io_op *op, int dirfd, const char *path, int flags);

/**
 * blitz_io_poll - submit @op on the first poll, then wait for it.
 * Return: BLITZ_READY when op->result is valid.
 */
enum blitz_poll blitz_io_poll(struct blitz_io_op *op, struct blitz_cx *cx);

/**
 * blitz_io_cancel - ask for a pending @op to be cancelled; it completes
 * (with -ECANCELED, or its real result if it finished first) later.  A no-op
 * for an operation that is not pending.  Safe from a drop function.  Call
 * it from @op's task (its poll or drop function), or from a thread that
 * synchronizes with the task after the poll that submitted @op returned.
 *
 * An operation that makes a descriptor (accept, openat) never loses one:
 * a descriptor that blitz_io_poll() has not handed to the task, whether
 * it came before the cancel or comes after it, is closed, and the result
 * is -ECANCELED.
 */
void blitz_io_cancel(struct blitz_io_op *op);

/** blitz_io_backend_name - "io_uring", "epoll" or "poll" (NULL without a runtime). */
const char *blitz_io_backend_name(const struct blitz_runtime *rt);

/** blitz_io_opcode_name - "read", "accept", ...; "?" past BLITZ_IO_NR_OPCODES. */
const char *blitz_io_opcode_name(unsigned opcode);

#endif /* BLITZ_IO_H */
