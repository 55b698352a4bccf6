// SPDX-License-Identifier: MIT
/* backends/readiness.c - see readiness.h. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "readiness.h"

int readiness_init(struct readiness *r)
{
	spin_init(&r->table_lock);
	spin_init(&r->active_lock);
	for (unsigned i = 0; i < FD_CHUNKS; i++)
		atomic_init(&r->chunks[i], NULL);
	r->active = NULL;
	r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return r->wake_fd < 0 ? -errno : 0;
}

void readiness_deinit(struct readiness *r)
{
	for (unsigned i = 0; i < FD_CHUNKS; i++)
		/* Relaxed: at deinit no other thread uses the table. */
		free(atomic_load_explicit(&r->chunks[i], memory_order_relaxed));
	close(r->wake_fd);
}

/* readiness_entry - the entry of @fd, created on first use; NULL if out of range. */
struct fd_entry *readiness_entry(struct readiness *r, int fd)
{
	unsigned c = (unsigned)fd / FD_CHUNK;
	struct fd_entry *chunk;

	if (fd < 0 || c >= FD_CHUNKS)
		return NULL;
	/* Acquire: pairs with the release store that published the chunk. */
	chunk = atomic_load_explicit(&r->chunks[c], memory_order_acquire);
	if (!chunk) {
		spin_lock(&r->table_lock);
		/* Relaxed: under table_lock, which every store of a chunk holds. */
		chunk = atomic_load_explicit(&r->chunks[c], memory_order_relaxed);
		if (!chunk) {
			chunk = calloc(FD_CHUNK, sizeof(*chunk));
			if (chunk) {
				for (unsigned i = 0; i < FD_CHUNK; i++) {
					spin_init(&chunk[i].lock);
					chunk[i].fd = (int)(c * FD_CHUNK + i);
				}
				/* Release: a lock-free reader's acquire sees the entries set up. */
				atomic_store_explicit(&r->chunks[c], chunk, memory_order_release);
			}
		}
		spin_unlock(&r->table_lock);
		if (!chunk)
			return NULL;
	}
	return &chunk[fd % FD_CHUNK];
}

/*
 * update_want - publish which sides have waiters, for the poll backend's
 * collect(), which reads it without the fd's lock.  Relaxed: a stale value
 * costs one more ppoll round, and every new waiter also wakes the reaper.
 */
static void update_want(struct fd_entry *e)
{
	atomic_store_explicit(&e->want, (short)((e->head[0] ? POLLIN : 0) | (e->head[1] ? POLLOUT : 0)),
			      memory_order_relaxed);
}

static void list_append(struct fd_entry *e, struct blitz_io_op *op)
{
	int d = op->dir;

	op->next = NULL;
	op->prev = e->tail[d];
	if (e->tail[d])
		e->tail[d]->next = op;
	else
		e->head[d] = op;
	e->tail[d] = op;
	update_want(e);
}

static void list_unlink(struct fd_entry *e, struct blitz_io_op *op)
{
	int d = op->dir;

	if (op->prev)
		op->prev->next = op->next;
	else
		e->head[d] = op->next;
	if (op->next)
		op->next->prev = op->prev;
	else
		e->tail[d] = op->prev;
	op->next = op->prev = NULL;
	update_want(e);
}

/*
 * perform - io_perform() under @e's lock, noting a short TCP read.
 *
 * A read or receive (not a peek) on a TCP socket that returns fewer bytes
 * than asked has emptied the receive queue (tcp_recvmsg stops early only
 * there, at the peer's FIN, at urgent data or on an error), and under
 * edge-triggered epoll every later arrival makes a new edge: the next read
 * can wait for that edge instead of trying and getting EAGAIN (an echo
 * server's read after its write, once per message).  The three exceptions
 * raise an event that sets @ended (readiness_ended), which turns the rule
 * off for this descriptor.  Not for other sockets: a datagram socket's short
 * read is one datagram of several queued, and a Unix stream read stops
 * early at passed descriptors and between writers' credentials.  A read
 * event clears the mark (readiness_run).
 */
static int perform(struct fd_entry *e, struct blitz_io_op *op)
{
	int res = io_perform(op);

	if (e->tcp && res > 0 && (size_t)res < op->len &&
	    (op->opcode == BLITZ_IO_READ ||
	     (op->opcode == BLITZ_IO_RECV && !(op->flags & MSG_PEEK))))
		e->drained = true;
	return res;
}

/*
 * readiness_ended - an event on @e reported the peer's shutdown, an error
 * or urgent data: a short read no longer says the socket is empty (the next
 * read returns 0, the error or the rest without a new edge), so the read
 * side is always tried from now on.  Sticky until the descriptor number
 * is registered anew (learn), and through that if it came after.
 */
void readiness_ended(struct fd_entry *e)
{
	spin_lock(&e->lock);
	e->ended = true;
	e->read_events++;
	spin_unlock(&e->lock);
}

/*
 * readiness_run - perform the waiting operations of one side in FIFO order
 * until one would block; complete the finished ones outside the lock.
 */
void readiness_run(struct blitz_io *io, struct fd_entry *e, int dir)
{
	struct blitz_io_op *done = NULL, **tail = &done, *op;

	spin_lock(&e->lock);
	if (dir == 0) {
		e->drained = false;	/* an edge: something may have arrived */
		e->read_events++;
	}
	while ((op = e->head[dir])) {
		int res = perform(e, op);

		if (res == -EAGAIN)
			break;
		list_unlink(e, op);
		op->result = res;
		*tail = op;
		tail = &op->next;
	}
	spin_unlock(&e->lock);
	while (done) {
		op = done;
		done = op->next;
		op->next = NULL;
		io_complete(io, op, op->result);
	}
}

/*
 * learn - @e's descriptor is newly watched: a file the marks of the last one
 * with this number (a closed descriptor's) must not apply to.  @seen is
 * @read_events when the operation was queued, before the registration.
 *
 * The registration reports a ready descriptor at once, so an event of the
 * new file may have run between it and this (its readiness_ended and its
 * run of the list are two critical sections, and this may fall between
 * them).  If none ran, every mark is the old file's: clear them.  If one
 * did, its @ended is the new file's and must stand: cleared, a short read
 * in the event's run would mark the socket drained with the peer's FIN
 * already consumed as an edge, and the next read would wait for ever
 * (tests/model/readiness.pml).  Its @drained may rest on the old file's
 * @tcp: clear it, and try the reads it held back once more.
 */
static void learn(struct blitz_io *io, struct fd_entry *e, unsigned seen)
{
	int proto = 0;
	socklen_t len = sizeof(proto);
	bool tcp = getsockopt(e->fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 &&
		   proto == IPPROTO_TCP;
	bool rerun = false;

	spin_lock(&e->lock);
	e->tcp = tcp;
	if (e->read_events == seen)
		e->ended = false;
	else
		rerun = e->drained && e->head[0];
	e->drained = false;
	spin_unlock(&e->lock);
	if (rerun)
		readiness_run(io, e, 0);
}

/*
 * readiness_submit - try @op at once; if it would block, queue it behind the
 * others of its side and make sure the backend watches @fd (arm).
 *
 * No second try after queueing: the try and the append are one critical
 * section under the fd's lock, so readiness that comes after the try
 * produces an event (epoll: the socket's wake-up puts the item on the
 * ready list, and an item newly added by arm is put there at once if the
 * descriptor is already ready; poll: level-triggered, and arm wakes the
 * reaper to add the descriptor), and the reaper's run of the list takes
 * the same lock, so it sees the queued op.  An op queued behind others
 * (no try) waits for the event the head waits for, and so does a read on a
 * side marked drained (perform): whatever arrived after the short read that
 * set the mark made an edge, and the mark is never trusted across a
 * descriptor's reuse (arm returns 1 for a new file, and learn clears it).
 */
int readiness_submit(struct blitz_io *io, struct readiness *r, struct blitz_io_op *op,
		     bool *done, int (*arm)(struct blitz_io *io, int fd))
{
	struct fd_entry *e = readiness_entry(r, op->fd);
	unsigned seen;
	int res;

	*done = true;
	/* Nothing to wait for: the fs module runs these on the blocking pool. */
	if (blitz_io_opcode_is_file(op->opcode))
		return -EOPNOTSUPP;
	if (!e)
		return op->fd < 0 ? -EBADF : -ENOMEM;
	spin_lock(&e->lock);
	/* Fast path: nobody waits on this side and it may be ready: try now. */
	if (!e->head[op->dir] && !(op->dir == 0 && e->drained && !e->ended)) {
		res = perform(e, op);
		if (res != -EAGAIN) {
			spin_unlock(&e->lock);
			return res;
		}
	}
	list_append(e, op);
	seen = e->read_events;
	if (e->watched) {		/* owned, watched since it was accepted */
		spin_unlock(&e->lock);
		*done = false;
		return 0;
	}
	spin_unlock(&e->lock);
	res = arm(io, op->fd);
	if (res > 0)
		learn(io, e, seen);
	if (res >= 0 && r->arm_once) {
		spin_lock(&e->lock);
		e->watched = e->owned;
		spin_unlock(&e->lock);
	}
	if (res < 0) {
		/* Cannot be watched: take it back. */
		spin_lock(&e->lock);
		list_unlink(e, op);
		spin_unlock(&e->lock);
		/*
		 * epoll refuses regular files and directories (EPERM): they are
		 * always ready, so the operation runs now.  The fs module
		 * (core/io/fs.c) never comes here: it runs file operations on the
		 * blocking pool on these backends.
		 */
		return res == -EPERM ? io_perform(op) : res;
	}
	*done = false;
	return 0;
}

void readiness_cancel(struct blitz_io *io, struct readiness *r, struct blitz_io_op *op)
{
	struct fd_entry *e = readiness_entry(r, op->fd);
	bool found = false;

	if (!e)
		return;
	spin_lock(&e->lock);
	for (struct blitz_io_op *p = e->head[op->dir]; p; p = p->next) {
		if (p == op) {
			list_unlink(e, op);
			found = true;
			break;
		}
	}
	spin_unlock(&e->lock);
	/* Not found: it is being completed by someone else. */
	if (found)
		io_complete(io, op, -ECANCELED);
}

/*
 * readiness_close - blitz_net_close() on these backends: take every waiting
 * operation of @fd off its lists and close @fd, under the fd's lock, so that
 * no run of the lists performs on the closed number; then complete them
 * with -ECANCELED.  close(2) takes the descriptor out of the epoll set (and
 * the poll backend drops an entry without waiters at its next round).
 */
int readiness_close(struct blitz_io *io, struct readiness *r, int fd)
{
	struct fd_entry *e = readiness_entry(r, fd);
	struct blitz_io_op *ended = NULL, *op;
	int res;

	if (!e)
		return close(fd) < 0 ? -errno : 0;
	spin_lock(&e->lock);
	for (int d = 0; d < 2; d++) {
		while ((op = e->head[d])) {
			list_unlink(e, op);
			op->next = ended;
			ended = op;
		}
	}
	e->drained = e->ended = e->owned = e->watched = false;
	res = close(fd) < 0 ? -errno : 0;
	spin_unlock(&e->lock);
	while ((op = ended)) {
		ended = op->next;
		op->next = NULL;
		io_complete(io, op, -ECANCELED);
	}
	return res;
}

/*
 * readiness_own - @fd is an owned socket: closed only by readiness_close(),
 * so on a backend that keeps a descriptor watched until its close (epoll),
 * once watched it need not be armed again (readiness_submit).
 */
void readiness_own(struct readiness *r, int fd)
{
	struct fd_entry *e = readiness_entry(r, fd);

	if (!e)
		return;
	spin_lock(&e->lock);
	e->owned = true;
	e->watched = false;
	spin_unlock(&e->lock);
}

void readiness_wake(struct readiness *r)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is already non-zero, a wake is pending. */
	if (write(r->wake_fd, &one, sizeof(one)) < 0)
		return;
}

void readiness_drain_wake(struct readiness *r)
{
	uint64_t v;

	if (read(r->wake_fd, &v, sizeof(v)) < 0)
		return;
}

/* readiness_cancel_all - complete every waiting operation with -ECANCELED. */
void readiness_cancel_all(struct blitz_io *io, struct readiness *r)
{
	for (unsigned c = 0; c < FD_CHUNKS; c++) {
		/* Acquire: pairs with the release in readiness_entry(). */
		struct fd_entry *chunk = atomic_load_explicit(&r->chunks[c], memory_order_acquire);

		for (unsigned i = 0; chunk && i < FD_CHUNK; i++) {
			struct fd_entry *e = &chunk[i];

			for (int d = 0; d < 2; d++) {
				struct blitz_io_op *op;

				spin_lock(&e->lock);
				while ((op = e->head[d])) {
					list_unlink(e, op);
					spin_unlock(&e->lock);
					io_complete(io, op, -ECANCELED);
					spin_lock(&e->lock);
				}
				spin_unlock(&e->lock);
			}
		}
	}
}
