// SPDX-License-Identifier: MIT
/*
 * core/pipe.c - reads and writes on non-blocking, non-socket descriptors
 * through the I/O driver, the same on every backend.
 *
 * x->started: 0 idle, 1 the read or write is in flight, 2 waiting for
 * readiness after the backend answered -EAGAIN (io_uring on an O_NONBLOCK
 * file; the readiness backends wait by themselves and never answer it);
 * plus PIPE_ALL while a write_all is under way (x->done is then valid).
 */
#include <errno.h>
#include <blitz/pipe.h>

enum { PIPE_IDLE = 0, PIPE_XFER, PIPE_READY_WAIT, PIPE_PHASE = 3, PIPE_ALL = 4 };

static enum blitz_poll pipe_xfer_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				      int write, struct blitz_cx *cx)
{
	int all = x->started & PIPE_ALL;

	for (;;) {
		int phase = x->started & PIPE_PHASE;

		if (phase == PIPE_IDLE) {
			if (write)
				blitz_io_prep_write(&x->op, fd, buf, len, -1);
			else
				blitz_io_prep_read(&x->op, fd, buf, len, -1);
			x->started = all | PIPE_XFER;
		}
		if (blitz_io_poll(&x->op, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		phase = x->started & PIPE_PHASE;
		if (phase == PIPE_XFER && x->op.result == -EAGAIN) {
			blitz_io_prep_poll(&x->op, fd, write);
			x->started = all | PIPE_READY_WAIT;
			continue;
		}
		x->started = all | PIPE_IDLE;
		if (phase == PIPE_READY_WAIT && x->op.result >= 0)
			continue;	/* ready (or hung up): try again */
		x->result = x->op.result;
		return BLITZ_READY;
	}
}

enum blitz_poll blitz_pipe_read_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				     struct blitz_cx *cx)
{
	return pipe_xfer_poll(x, fd, buf, len, 0, cx);
}

enum blitz_poll blitz_pipe_write_poll(struct blitz_xfer *x, int fd, const void *buf, size_t len,
				      struct blitz_cx *cx)
{
	return pipe_xfer_poll(x, fd, (void *)buf, len, 1, cx);
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
		if (pipe_xfer_poll(x, fd, (void *)(p + x->done), len - x->done, 1, cx) == BLITZ_PENDING)
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
