// SPDX-License-Identifier: MIT
/*
 * backends/poll.c - the poll(2) backend: the portable fallback.  Each reap
 * builds the pollfd array from the descriptors that have waiting operations
 * (level-triggered), plus the wake eventfd.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include "readiness.h"

struct poll_priv {
	struct readiness r;
	struct pollfd *fds;		/* reaper only */
	size_t cap;
	/* Reaper only: fds[1 .. unserved) may hold events the last reap left (poll_reap). */
	size_t unserved;
};

static void set_active(struct readiness *r, struct fd_entry *e, bool on)
{
	spin_lock(&r->active_lock);
	if (on && !e->active) {
		e->active_prev = NULL;
		e->active_next = r->active;
		if (r->active)
			r->active->active_prev = e;
		r->active = e;
		e->active = true;
	} else if (!on && e->active) {
		if (e->active_prev)
			e->active_prev->active_next = e->active_next;
		else
			r->active = e->active_next;
		if (e->active_next)
			e->active_next->active_prev = e->active_prev;
		e->active = false;
	}
	spin_unlock(&r->active_lock);
}

static int poll_arm(struct blitz_io *io, int fd)
{
	struct poll_priv *p = io->priv;
	struct fd_entry *e = readiness_entry(&p->r, fd);

	set_active(&p->r, e, true);
	/* A reaper blocked in poll() must add this descriptor. */
	readiness_wake(&p->r);
	return 0;
}

static int poll_init(struct blitz_io *io)
{
	struct poll_priv *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	err = readiness_init(&p->r);
	if (err) {
		free(p);
		return err;
	}
	io->priv = p;
	return 0;
}

static void poll_deinit(struct blitz_io *io)
{
	struct poll_priv *p = io->priv;

	readiness_deinit(&p->r);
	free(p->fds);
	free(p);
}

static int poll_submit(struct blitz_io *io, struct blitz_io_op *op, bool *done)
{
	struct poll_priv *p = io->priv;

	return readiness_submit(io, &p->r, op, done, poll_arm);
}

/* Collect the watched descriptors; entries without waiters leave the set. */
static size_t collect(struct poll_priv *p)
{
	size_t n = 1;

	spin_lock(&p->r.active_lock);
	for (struct fd_entry *e = p->r.active; e; e = e->active_next)
		n++;
	if (n > p->cap) {
		struct pollfd *f = realloc(p->fds, n * 2 * sizeof(*f));

		if (f) {
			p->fds = f;
			p->cap = n * 2;
		}
	}
	if (!p->fds) {
		spin_unlock(&p->r.active_lock);
		return 0;
	}
	n = 0;
	p->fds[n++] = (struct pollfd){ .fd = p->r.wake_fd, .events = POLLIN };
	for (struct fd_entry *e = p->r.active; e && n < p->cap; e = e->active_next) {
		/* Relaxed: see update_want() in readiness.c. */
		short ev = atomic_load_explicit(&e->want, memory_order_relaxed);

		p->fds[n++] = (struct pollfd){ .fd = e->fd, .events = ev ? ev : POLLIN };
	}
	spin_unlock(&p->r.active_lock);
	return n;
}

/*
 * dispatch - run the operations that @rev (poll()'s revents) lets go on
 * @fd's entry.  Possibly stale (a reap left it over): an operation that
 * is not ready yet gets -EAGAIN and keeps waiting.
 */
static void dispatch(struct blitz_io *io, struct poll_priv *p, int fd, short rev)
{
	struct fd_entry *e = readiness_entry(&p->r, fd);

	if (!e)
		return;
	if (rev & (POLLIN | POLLHUP | POLLERR | POLLRDHUP | POLLNVAL))
		readiness_run(io, e, 0);
	if (rev & (POLLOUT | POLLHUP | POLLERR | POLLNVAL))
		readiness_run(io, e, 1);
	/*
	 * Leave the set only if no operation waits, deciding under the fd's
	 * lock: a submission appends under that lock and arms (sets active)
	 * after it, so it cannot be dropped by a stale decision.
	 */
	spin_lock(&e->lock);
	if (!e->head[0] && !e->head[1])
		set_active(&p->r, e, false);
	spin_unlock(&e->lock);
}

/*
 * serve - dispatch the events of fds[1 .. @n), from the end, at most @max
 * descriptors; what is left is the next reap's (unserved).
 */
static int serve(struct blitz_io *io, struct poll_priv *p, size_t n, unsigned max)
{
	int done = 0;

	while (n > 1 && (unsigned)done < max) {
		const struct pollfd *f = &p->fds[--n];

		if (!f->revents)
			continue;
		dispatch(io, p, f->fd, f->revents);
		done++;
	}
	p->unserved = n;
	return done;
}

/*
 * poll_reap - the ready descriptors, at most @max of them (the caller's
 * room: a worker's run queue), so that what it wakes does not overflow the
 * queue (epoll_reap says what an overflow did to the tail).  The array
 * holds the active list, newest first (an entry joins at the head when
 * armed and leaves when nothing waits on it), so it is scanned from its
 * end: the descriptors armed longest ago first.  The events left over
 * are served by the next reaps, before the next poll(): a poll() of every
 * descriptor per run-queue's room costs more CPU per message than one per
 * every ready descriptor (docs/io.md, "Fairness at 1,000 connections").
 * Those events may be stale by
 * then, which costs an operation a try (dispatch); what was armed since
 * waits for the next poll(), behind them.
 */
static int poll_reap(struct blitz_io *io, uint64_t timeout_ns, unsigned max)
{
	struct poll_priv *p = io->priv;
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ull),
		.tv_nsec = (long)(timeout_ns % 1000000000ull),
	};
	size_t n;
	int done;

	if (max == 0)
		return 0;
	done = serve(io, p, p->unserved, max);
	if (done)
		return done;
	n = collect(p);
	if (n == 0 || ppoll(p->fds, n, &ts, NULL) <= 0)
		return 0;
	if (p->fds[0].revents)
		readiness_drain_wake(&p->r);
	return serve(io, p, n, max);
}

static void poll_cancel(struct blitz_io *io, struct blitz_io_op *op)
{
	struct poll_priv *p = io->priv;

	readiness_cancel(io, &p->r, op);
}

static void poll_cancel_all(struct blitz_io *io)
{
	struct poll_priv *p = io->priv;

	readiness_cancel_all(io, &p->r);
}

static int poll_close(struct blitz_io *io, int fd)
{
	struct poll_priv *p = io->priv;

	return readiness_close(io, &p->r, fd);
}

static void poll_wake(struct blitz_io *io)
{
	struct poll_priv *p = io->priv;

	readiness_wake(&p->r);
}

const struct io_backend poll_backend = {
	.kind = BLITZ_BACKEND_POLL,
	.caps = 0,		/* readiness only: files go to the blocking pool */
	.init = poll_init,
	.deinit = poll_deinit,
	.submit = poll_submit,
	.reap = poll_reap,
	.cancel = poll_cancel,
	.wake = poll_wake,
	.cancel_all = poll_cancel_all,
	.close = poll_close,
};
