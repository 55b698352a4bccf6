// SPDX-License-Identifier: MIT
/*
 * core/net/stream.c - accept, connect and transfers on stream sockets.
 * Each awaitable submits its operation on its first poll (`started`) and
 * is reset when it completes, so the same struct can be awaited again.
 */
#include <errno.h>
#include <unistd.h>
#include <blitz/net.h>
#include "emfile.h"
#include "owned.h"

enum blitz_poll blitz_accept_poll(struct blitz_accept *a, int listen_fd, struct blitz_cx *cx)
{
	if (!a->started) {
		a->peer.len = sizeof(a->peer.ss);
		blitz_io_prep_accept(&a->op, listen_fd, (struct sockaddr *)&a->peer.ss, &a->peer.len);
		a->started = 1;
	}
	if (blitz_io_poll(&a->op, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	a->started = 0;
	a->result = a->op.result;
	if (a->result == -EMFILE || a->result == -ENFILE)
		emfile_accept_failed(listen_fd, -a->result, a->flags & BLITZ_ACCEPT_SHED);
	if (a->result >= 0 && (a->flags & BLITZ_ACCEPT_OWNED))
		net_own(blitz_cx_runtime(cx), a->result);
	return BLITZ_READY;
}

enum blitz_poll blitz_connect_poll(struct blitz_connect *c, const struct blitz_addr *to,
				   struct blitz_cx *cx)
{
	if (!c->started) {
		if (!to) {
			c->result = -EINVAL;
			return BLITZ_READY;
		}
		c->addr = *to;
		c->fd = socket(to->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fd < 0) {
			c->result = -errno;
			return BLITZ_READY;
		}
		blitz_io_prep_connect(&c->op, c->fd, (struct sockaddr *)&c->addr.ss, c->addr.len);
		c->started = 1;
	}
	if (blitz_io_poll(&c->op, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	c->started = 0;
	if (c->op.result < 0) {
		close(c->fd);
		c->result = c->op.result;
	} else {
		c->result = c->fd;
	}
	c->fd = -1;
	return BLITZ_READY;
}

enum blitz_poll blitz_read_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				struct blitz_cx *cx)
{
	if (!x->started) {
		if (!len) {		/* recv(2) of 0 bytes would wait for data */
			x->result = 0;
			return BLITZ_READY;
		}
		blitz_io_prep_recv(&x->op, fd, buf, len, 0);
		x->started = 1;
	}
	if (blitz_io_poll(&x->op, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	x->started = 0;
	x->result = x->op.result;
	return BLITZ_READY;
}

enum blitz_poll blitz_write_poll(struct blitz_xfer *x, int fd, const void *buf, size_t len,
				 struct blitz_cx *cx)
{
	if (!x->started) {
		if (!len) {		/* as blitz_write_all_poll: nothing to wait for */
			x->result = 0;
			return BLITZ_READY;
		}
		blitz_io_prep_send(&x->op, fd, buf, len, 0);
		x->started = 1;
	}
	if (blitz_io_poll(&x->op, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	x->started = 0;
	x->result = x->op.result;
	return BLITZ_READY;
}

/*
 * The *_all/_exact forms keep `done` across partial transfers; `started`
 * is 1 while a piece is in flight, 2 between pieces.
 */
enum blitz_poll blitz_write_all_poll(struct blitz_xfer *x, int fd, const void *buf, size_t len,
				     struct blitz_cx *cx)
{
	if (x->started == 0)
		x->done = 0;
	for (;;) {
		if (x->started != 1) {
			if (x->done == len) {
				x->started = 0;
				x->result = (long)len;
				return BLITZ_READY;
			}
			blitz_io_prep_send(&x->op, fd, (const char *)buf + x->done, len - x->done, 0);
			x->started = 1;
		}
		if (blitz_io_poll(&x->op, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (x->op.result < 0) {
			x->started = 0;
			x->result = x->op.result;
			return BLITZ_READY;
		}
		x->done += (size_t)x->op.result;
		x->started = 2;
	}
}

enum blitz_poll blitz_read_exact_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				      struct blitz_cx *cx)
{
	if (x->started == 0)
		x->done = 0;
	for (;;) {
		if (x->started != 1) {
			if (x->done == len) {
				x->started = 0;
				x->result = (long)len;
				return BLITZ_READY;
			}
			blitz_io_prep_recv(&x->op, fd, (char *)buf + x->done, len - x->done, 0);
			x->started = 1;
		}
		if (blitz_io_poll(&x->op, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (x->op.result <= 0) {
			x->started = 0;
			x->result = x->op.result < 0 ? x->op.result : -EPIPE;
			return BLITZ_READY;
		}
		x->done += (size_t)x->op.result;
		x->started = 2;
	}
}

/*
 * blitz_xfer_cancel_poll - every transfer on a struct blitz_xfer (these,
 * and core/io/pipe.c's, whose `started` also says which of its two
 * operations, the transfer or a readiness wait, is in x->op) keeps
 * `started` at 0 exactly while nothing is submitted; what is, is x->op.
 * XFER_CANCELLING marks a cancel asked for, so that it is asked for once
 * however often the task is polled.
 */
#define XFER_CANCELLING		(-1)

enum blitz_poll blitz_xfer_cancel_poll(struct blitz_xfer *x, struct blitz_cx *cx)
{
	if (!x->started) {
		x->result = -ECANCELED;
		return BLITZ_READY;
	}
	if (x->started != XFER_CANCELLING) {
		blitz_io_cancel(&x->op);
		x->started = XFER_CANCELLING;
	}
	if (blitz_io_poll(&x->op, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	x->started = 0;
	/* A readiness wait that ended first moved nothing: cancelled all the same. */
	if (x->op.opcode == BLITZ_IO_POLL_IN || x->op.opcode == BLITZ_IO_POLL_OUT)
		x->result = -ECANCELED;
	else
		x->result = x->op.result;
	return BLITZ_READY;
}

static enum blitz_poll connect_inner(void *arg, struct blitz_cx *cx)
{
	struct blitz_connect_timeout *ct = arg;

	return blitz_connect_poll(&ct->c, ct->to, cx);
}

/*
 * Phases: 0 start, 1 connecting under the limit, 2 the limit passed: the
 * connect was cancelled and we wait for its completion (which closes the
 * socket unless it connected in the meantime, then we close it).
 */
enum blitz_poll blitz_connect_timeout_poll(struct blitz_connect_timeout *ct,
					   const struct blitz_addr *to, uint64_t timeout_ns,
					   struct blitz_cx *cx)
{
	switch (ct->phase) {
	case 0:
		if (!to) {
			ct->result = -EINVAL;
			return BLITZ_READY;
		}
		ct->to = to;
		ct->c.started = 0;
		blitz_timeout_init(&ct->limit, timeout_ns);
		ct->phase = 1;
		/* fall through */
	case 1:
		if (blitz_timeout_poll(&ct->limit, connect_inner, ct, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (!ct->limit.timed_out) {
			ct->phase = 0;
			ct->result = ct->c.result;
			return BLITZ_READY;
		}
		if (!ct->c.started) {		/* finished exactly at the limit */
			ct->phase = 0;
			ct->result = ct->c.result;
			return BLITZ_READY;
		}
		blitz_io_cancel(&ct->c.op);
		ct->phase = 2;
		/* fall through */
	default:
		if (blitz_connect_poll(&ct->c, ct->to, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (ct->c.result >= 0)
			close(ct->c.result);
		ct->phase = 0;
		ct->result = -ETIMEDOUT;
		return BLITZ_READY;
	}
}

void blitz_connect_timeout_cancel(struct blitz_connect_timeout *ct)
{
	blitz_timeout_cancel(&ct->limit);
	blitz_io_cancel(&ct->c.op);
}
