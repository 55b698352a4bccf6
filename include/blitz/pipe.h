/* SPDX-License-Identifier: MIT */
/*
 * blitz/pipe.h - awaitable reads and writes on pipes and other non-socket
 * descriptors (a child's stdin/stdout/stderr, a signalfd, an eventfd).
 *
 * The descriptor must be non-blocking (O_NONBLOCK): the readiness backends
 * perform the syscall in a worker.  io_uring does not wait on a non-blocking
 * file (it completes the read with -EAGAIN); these calls then wait for
 * readiness (a poll operation) and try again, so the same code runs on every
 * backend.  The state is a struct blitz_xfer (blitz/net.h); cancel a pending
 * one with blitz_net_cancel() and await its completion, as for sockets.
 *
 *	BLITZ_AWAIT(&s->co, blitz_pipe_read_poll(&s->x, fd, s->buf, sizeof(s->buf), cx));
 *	if (s->x.result == 0) ... end of stream (the writer closed)
 */
#ifndef BLITZ_PIPE_H
#define BLITZ_PIPE_H

#include <stddef.h>
#include <blitz/net.h>

/** blitz_pipe_read_poll - read at most @len bytes; result 0 at end of stream, or -errno. */
enum blitz_poll blitz_pipe_read_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				     struct blitz_cx *cx);

/** blitz_pipe_write_poll - write at most @len bytes (one write); result bytes or -errno. */
enum blitz_poll blitz_pipe_write_poll(struct blitz_xfer *x, int fd, const void *buf, size_t len,
				      struct blitz_cx *cx);

/**
 * blitz_pipe_write_all_poll - write all @len bytes; result @len or -errno
 * (-EPIPE when the reader has gone).
 *
 * A write to a pipe whose reader has gone also raises SIGPIPE in the thread
 * that performs it.  The runtime's threads block it (blitz/signal.h), so on
 * a worker it is only -EPIPE; a program whose own threads run tasks (a
 * blitz_join() caller helps by running queued tasks) should ignore SIGPIPE
 * or block it there.
 */
enum blitz_poll blitz_pipe_write_all_poll(struct blitz_xfer *x, int fd, const void *buf,
					  size_t len, struct blitz_cx *cx);

#endif /* BLITZ_PIPE_H */
