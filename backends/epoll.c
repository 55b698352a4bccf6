// SPDX-License-Identifier: MIT
/*
 * backends/epoll.c - the epoll backend: readiness (edge-triggered) turned
 * into completions by backends/readiness.c.
 *
 * Each descriptor is added once per wait with EPOLLIN | EPOLLOUT | EPOLLRDHUP
 * | EPOLLPRI | EPOLLET (EEXIST means it is already watched); close() removes
 * it from the epoll set, so a reused descriptor number is added again on its
 * next wait.  An owned socket (BLITZ_ACCEPT_OWNED), which only
 * blitz_net_close() closes, is added at its first wait only.  A read on a TCP socket that returned less than it asked for
 * makes the next read wait for the edge without trying (readiness.c,
 * perform); the peer's shutdown, an error or urgent data turn that off.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include "readiness.h"

#define EPOLL_BATCH 256

struct epoll_priv {
	struct readiness r;
	int epfd;
};

static int epoll_arm(struct blitz_io *io, int fd)
{
	struct epoll_priv *p = io->priv;
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI | EPOLLET,
		.data.fd = fd,
	};

	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
		return 1;
	return errno == EEXIST ? 0 : -errno;
}

static int epoll_init(struct blitz_io *io)
{
	struct epoll_priv *p = calloc(1, sizeof(*p));
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = -1 };
	int err;

	if (!p)
		return -ENOMEM;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		err = -errno;
		free(p);
		return err;
	}
	err = readiness_init(&p->r);
	p->r.arm_once = true;		/* an added descriptor stays until its close */
	if (!err && epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->r.wake_fd, &ev) < 0)
		err = -errno;
	if (err) {
		close(p->epfd);
		free(p);
		return err;
	}
	io->priv = p;
	return 0;
}

static void epoll_deinit(struct blitz_io *io)
{
	struct epoll_priv *p = io->priv;

	readiness_deinit(&p->r);
	close(p->epfd);
	free(p);
}

static int epoll_submit(struct blitz_io *io, struct blitz_io_op *op, bool *done)
{
	struct epoll_priv *p = io->priv;

	return readiness_submit(io, &p->r, op, done, epoll_arm);
}

/*
 * epoll_reap - at most @max events (the caller's room: a worker's run
 * queue), so that what it wakes does not overflow the queue: the events
 * left stay in the kernel's ready list, in their order, for the next
 * reap.  (An overflow sends the queue's oldest half to the global queue,
 * behind everything queued there, which made the tail at 1,000 echo
 * connections unfair: docs/io.md, "Fairness at 1,000 connections".)
 */
static int epoll_reap(struct blitz_io *io, uint64_t timeout_ns, unsigned max)
{
	struct epoll_priv *p = io->priv;
	struct epoll_event ev[EPOLL_BATCH];
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ull),
		.tv_nsec = (long)(timeout_ns % 1000000000ull),
	};
	int want = max < EPOLL_BATCH ? (int)max : EPOLL_BATCH;
	int n;

	if (want == 0)
		return 0;
	n = timeout_ns ? epoll_pwait2(p->epfd, ev, want, &ts, NULL)
		       : epoll_wait(p->epfd, ev, want, 0);

	for (int i = 0; i < n; i++) {
		struct fd_entry *e;

		if (ev[i].data.fd < 0) {
			readiness_drain_wake(&p->r);
			continue;
		}
		e = readiness_entry(&p->r, ev[i].data.fd);
		if (!e)
			continue;
		if (ev[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR | EPOLLPRI))
			readiness_ended(e);
		if (ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR | EPOLLPRI))
			readiness_run(io, e, 0);
		if (ev[i].events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
			readiness_run(io, e, 1);
	}
	return n < 0 ? 0 : n;
}

static void epoll_cancel(struct blitz_io *io, struct blitz_io_op *op)
{
	struct epoll_priv *p = io->priv;

	readiness_cancel(io, &p->r, op);
}

static void epoll_cancel_all(struct blitz_io *io)
{
	struct epoll_priv *p = io->priv;

	readiness_cancel_all(io, &p->r);
}

static int epoll_close(struct blitz_io *io, int fd)
{
	struct epoll_priv *p = io->priv;

	return readiness_close(io, &p->r, fd);
}

static void epoll_own(struct blitz_io *io, int fd)
{
	struct epoll_priv *p = io->priv;

	readiness_own(&p->r, fd);
}

static void epoll_wake(struct blitz_io *io)
{
	struct epoll_priv *p = io->priv;

	readiness_wake(&p->r);
}

const struct io_backend epoll_backend = {
	.kind = BLITZ_BACKEND_EPOLL,
	.caps = 0,		/* readiness only: files go to the blocking pool */
	.init = epoll_init,
	.deinit = epoll_deinit,
	.submit = epoll_submit,
	.reap = epoll_reap,
	.cancel = epoll_cancel,
	.wake = epoll_wake,
	.cancel_all = epoll_cancel_all,
	.close = epoll_close,
	.own = epoll_own,
};
