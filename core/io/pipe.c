// SPDX-License-Identifier: MIT
/*
 * core/io/pipe.c - reads and writes on non-blocking descriptors through the
 * I/O driver, the same on every backend: blitz/pipe.h's, and through
 * fd_xfer_poll() (core/io/pipe.h) the streams' on sockets and pipes.
 *
 * The readiness backends wait for a descriptor by themselves and never
 * answer -EAGAIN; io_uring does not wait on an O_NONBLOCK file and does.
 * So a transfer that gets -EAGAIN waits for readiness (a poll operation)
 * and is tried again; so is one that gets -EINTR.
 *
 * x->started: the phase (0 idle, 1 the transfer is in flight, 2 waiting
 * for readiness) plus PIPE_ALL while a write_all is under way (x->done is
 * then valid).
 */
#include <errno.h>
#include <blitz/pipe.h>
#include "pipe.h"

enum { PIPE_IDLE = 0, PIPE_XFER, PIPE_READY_WAIT, PIPE_PHASE = 3 };

static void prep_xfer(struct blitz_io_op *io, unsigned opcode, int fd, void *buf, size_t len)
{
	switch (opcode) {
	case BLITZ_IO_RECV:
		blitz_io_prep_recv(io, fd, buf, len, 0);
		break;
	case BLITZ_IO_SEND:
		blitz_io_prep_send(io, fd, buf, len, 0);
		break;
	case BLITZ_IO_READ:
		blitz_io_prep_read(io, fd, buf, len, -1);
		break;
	default:
		blitz_io_prep_write(io, fd, buf, len, -1);
		break;
	}
}

/*
 * next_phase - the phase after @phase completed with @result:
 * - the transfer: -EAGAIN waits for readiness, -EINTR tries again, any
 *   other result is the answer (PIPE_IDLE);
 * - the readiness wait: ready (or hung up, which the transfer will report)
 *   or -EINTR tries the transfer again; an error (the wait was cancelled)
 *   is the answer.
 */
static int next_phase(int phase, long result)
{
	if (phase == PIPE_XFER)
		return result == -EAGAIN ? PIPE_READY_WAIT :
		       result == -EINTR ? PIPE_XFER : PIPE_IDLE;
	/* A readiness wait: ready (or hung up: the transfer will say), or failed. */
	return result >= 0 || result == -EINTR ? PIPE_XFER : PIPE_IDLE;
}

enum blitz_poll fd_xfer_poll(struct blitz_xfer *x, unsigned opcode, int fd, void *buf,
			     size_t len, struct blitz_cx *cx)
{
	int all = x->started & PIPE_ALL, out = opcode == BLITZ_IO_WRITE || opcode == BLITZ_IO_SEND;

	if ((x->started & PIPE_PHASE) == PIPE_IDLE) {
		prep_xfer(&x->op, opcode, fd, buf, len);
		x->started = all | PIPE_XFER;
	}
	for (;;) {
		int phase;

		if (blitz_io_poll(&x->op, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		phase = next_phase(x->started & PIPE_PHASE, x->op.result);
		x->started = all | phase;
		if (phase == PIPE_IDLE)
			break;
		if (phase == PIPE_XFER)
			prep_xfer(&x->op, opcode, fd, buf, len);
		else
			blitz_io_prep_poll(&x->op, fd, out);
	}
	x->result = x->op.result;
	return BLITZ_READY;
}

enum blitz_poll blitz_pipe_read_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				     struct blitz_cx *cx)
{
	return fd_xfer_poll(x, BLITZ_IO_READ, fd, buf, len, cx);
}

enum blitz_poll blitz_pipe_write_poll(struct blitz_xfer *x, int fd, const void *buf, size_t len,
				      struct blitz_cx *cx)
{
	return fd_xfer_poll(x, BLITZ_IO_WRITE, fd, (void *)buf, len, cx);
}

/* x->done counts what has been written while PIPE_ALL is set. */
enum blitz_poll blitz_pipe_write_all_poll(struct blitz_xfer *x, int fd, const void *buf,
					  size_t len, struct blitz_cx *cx)
{
	const char *p = buf;

	if (!(x->started & PIPE_ALL)) {
		x->done = 0;
		x->started = PIPE_ALL;
	}
	while (x->done < len) {
		if (blitz_pipe_write_poll(x, fd, p + x->done, len - x->done, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (x->result <= 0) {
			x->started = PIPE_IDLE;
			if (x->result == 0)
				x->result = -EIO;	/* a pipe never takes 0 of >0 bytes */
			return BLITZ_READY;
		}
		x->done += (size_t)x->result;
	}
	x->started = PIPE_IDLE;
	x->result = (long)len;
	return BLITZ_READY;
}
