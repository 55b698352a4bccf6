/* SPDX-License-Identifier: MIT */
/*
 * core/io/pipe.h - inside the runtime: the one transfer on a non-blocking
 * descriptor that turns io_uring's -EAGAIN into a readiness wait
 * (core/io/pipe.c), shared by blitz/pipe.h and the streams (core/io/stream.c).
 */
#ifndef BLITZ_CORE_PIPE_H
#define BLITZ_CORE_PIPE_H

#include <blitz/net.h>

/*
 * fd_xfer_poll - one @opcode (BLITZ_IO_READ, _WRITE, _RECV or _SEND) of at
 * most @len bytes on the non-blocking @fd, awaited on @x.  x->started must
 * be 0 (or PIPE_ALL, which it keeps) when the transfer starts; it is so
 * again when it returns BLITZ_READY with x->result set: the bytes moved, 0
 * at end of stream, or -errno, never -EAGAIN nor -EINTR.
 */
enum blitz_poll fd_xfer_poll(struct blitz_xfer *x, unsigned opcode, int fd, void *buf,
			     size_t len, struct blitz_cx *cx);

/* A flag of x->started the transfer leaves alone: blitz_pipe_write_all_poll's. */
#define PIPE_ALL	4

#endif /* BLITZ_CORE_PIPE_H */
