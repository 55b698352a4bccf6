// SPDX-License-Identifier: MIT
/*
 * core/io/prep.c - the blitz_io_prep_* functions of <blitz/io.h>: fill in an
 * operation before it is submitted (core/io/io.c), and the opcode names.
 * Preparing touches only the caller's struct; nothing here knows a backend.
 */
#include <string.h>
#include "../../backends/driver.h"

static void prep(struct blitz_io_op *op, unsigned opcode, int fd)
{
	memset(op, 0, sizeof(*op));
	op->opcode = (uint8_t)opcode;
	op->fd = fd;
	op->off = -1;
	atomic_init(&op->state, IO_OP_IDLE);
}

void blitz_io_prep_read(struct blitz_io_op *op, int fd, void *buf, size_t len, off_t off)
{
	prep(op, BLITZ_IO_READ, fd);
	op->buf = buf;
	op->len = len;
	op->off = off;
}

void blitz_io_prep_write(struct blitz_io_op *op, int fd, const void *buf, size_t len, off_t off)
{
	prep(op, BLITZ_IO_WRITE, fd);
	op->buf = (void *)buf;
	op->len = len;
	op->off = off;
	op->dir = 1;
}

void blitz_io_prep_recv(struct blitz_io_op *op, int fd, void *buf, size_t len, int flags)
{
	prep(op, BLITZ_IO_RECV, fd);
	op->buf = buf;
	op->len = len;
	op->flags = flags;
}

void blitz_io_prep_send(struct blitz_io_op *op, int fd, const void *buf, size_t len, int flags)
{
	prep(op, BLITZ_IO_SEND, fd);
	op->buf = (void *)buf;
	op->len = len;
	op->flags = flags;
	op->dir = 1;
}

void blitz_io_prep_accept(struct blitz_io_op *op, int fd, struct sockaddr *addr, socklen_t *addrlen)
{
	prep(op, BLITZ_IO_ACCEPT, fd);
	op->addr = addr;
	op->addrlen = addrlen;
}

void blitz_io_prep_connect(struct blitz_io_op *op, int fd, const struct sockaddr *addr, socklen_t len)
{
	prep(op, BLITZ_IO_CONNECT, fd);
	op->addr = (struct sockaddr *)addr;
	op->addr_in_len = len;
	op->dir = 1;
}

void blitz_io_prep_recvmsg(struct blitz_io_op *op, int fd, struct msghdr *msg, int flags)
{
	prep(op, BLITZ_IO_RECVMSG, fd);
	op->msg = msg;
	op->flags = flags;
}

void blitz_io_prep_sendmsg(struct blitz_io_op *op, int fd, const struct msghdr *msg, int flags)
{
	prep(op, BLITZ_IO_SENDMSG, fd);
	op->msg = (struct msghdr *)msg;
	op->flags = flags;
	op->dir = 1;
}

void blitz_io_prep_poll(struct blitz_io_op *op, int fd, int out)
{
	prep(op, out ? BLITZ_IO_POLL_OUT : BLITZ_IO_POLL_IN, fd);
	op->dir = out ? 1 : 0;
}

void blitz_io_prep_openat(struct blitz_io_op *op, int dirfd, const char *path, int flags, unsigned mode)
{
	prep(op, BLITZ_IO_OPENAT, dirfd);
	op->path = path;
	op->flags = flags;
	op->mode = mode;
}

void blitz_io_prep_fsync(struct blitz_io_op *op, int fd, int datasync)
{
	prep(op, BLITZ_IO_FSYNC, fd);
	op->flags = datasync;
	op->dir = 1;
}

void blitz_io_prep_statx(struct blitz_io_op *op, int dirfd, const char *path, int flags,
			 unsigned mask, struct statx *out)
{
	prep(op, BLITZ_IO_STATX, dirfd);
	op->path = path;
	op->flags = flags;
	op->len = mask;
	op->buf = out;
}

void blitz_io_prep_mkdirat(struct blitz_io_op *op, int dirfd, const char *path, unsigned mode)
{
	prep(op, BLITZ_IO_MKDIRAT, dirfd);
	op->path = path;
	op->mode = mode;
}

void blitz_io_prep_renameat(struct blitz_io_op *op, int dirfd, const char *from, const char *to,
			    int flags)
{
	prep(op, BLITZ_IO_RENAMEAT, dirfd);
	op->path = from;
	op->path2 = to;
	op->flags = flags;
}

void blitz_io_prep_unlinkat(struct blitz_io_op *op, int dirfd, const char *path, int flags)
{
	prep(op, BLITZ_IO_UNLINKAT, dirfd);
	op->path = path;
	op->flags = flags;
}

const char *blitz_io_opcode_name(unsigned opcode)
{
	static const char *const names[BLITZ_IO_NR_OPCODES] = {
		"nop", "read", "write", "recv", "send", "accept", "connect",
		"recvmsg", "sendmsg", "poll_in", "poll_out",
		"openat", "fsync", "statx", "mkdirat", "renameat", "unlinkat",
	};

	return opcode < BLITZ_IO_NR_OPCODES ? names[opcode] : "?";
}
