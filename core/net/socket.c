// SPDX-License-Identifier: MIT
/* core/net/socket.c - creating, binding and listening (nothing here waits). */
#include <errno.h>
#include <netinet/in.h>
#include <unistd.h>
#include <blitz/net.h>
#include "emfile.h"

static int open_bound(const struct blitz_addr *a, int type)
{
	int fd, one = 1, err;

	if (!a)
		return -EINVAL;
	fd = socket(a->ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (a->ss.ss_family != AF_UNIX &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0)
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

int blitz_listen(const struct blitz_addr *a, int backlog)
{
	int fd = open_bound(a, SOCK_STREAM), err;

	if (fd < 0)
		return fd;
	if (listen(fd, backlog) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	emfile_reserve_open();		/* before any accept can run out */
	return fd;
}

int blitz_udp_bind(const struct blitz_addr *a)
{
	return open_bound(a, SOCK_DGRAM);
}
