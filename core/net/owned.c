// SPDX-License-Identifier: MIT
/*
 * core/net/owned.c - sockets blitz closes itself (blitz_net_close): the
 * backend ends what it holds armed on the descriptor before the close, so
 * that nothing keeps the connection open behind the caller's back; a socket
 * accepted with BLITZ_ACCEPT_OWNED may keep a receive armed between reads
 * (io_uring's multishot receive, backends/io_uring.c).
 */
#include <errno.h>
#include <unistd.h>
#include <blitz/net.h>
#include "../sched/runtime.h"
#include "owned.h"

int blitz_net_close(struct blitz_runtime *rt, int fd)
{
	struct blitz_io *io;

	if (fd < 0)
		return -EBADF;
	rt = runtime_or_current(rt);
	io = rt ? &rt->io : NULL;
	if (!io || !io->backend || !io->backend->close)
		return close(fd) < 0 ? -errno : 0;
	return io->backend->close(io, fd);
}

void net_own(struct blitz_runtime *rt, int fd)
{
	if (rt->io.backend && rt->io.backend->own)
		rt->io.backend->own(&rt->io, fd);
}
