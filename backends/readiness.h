/* SPDX-License-Identifier: MIT */
/*
 * backends/readiness.h - what epoll and poll share: a table of descriptors,
 * each with two FIFO wait lists (read side, write side) of operations that
 * got EAGAIN, and the rule that makes readiness into completion:
 *
 *   run_list(fd, dir): under the fd's lock, perform the waiting operations
 *   in order until one gets EAGAIN; complete the others after unlocking.
 *
 * A submission tries the operation and, if it would block, appends it to
 * its list (one critical section); a readiness event runs the list.
 * Because both happen under the fd's lock and every
 * readiness change after an EAGAIN produces an event, no wakeup is lost.
 */
#ifndef BLITZ_BACKENDS_READINESS_H
#define BLITZ_BACKENDS_READINESS_H

#include <stdbool.h>
#include "../core/spinlock.h"
#include "driver.h"

struct fd_entry {
	struct spinlock lock;
	struct blitz_io_op *head[2], *tail[2];
	struct fd_entry *active_next, *active_prev;	/* poll: entries with waiters */
	_Atomic short want;		/* POLLIN/POLLOUT for the non-empty lists */
	bool active;
	/*
	 * Edge-triggered backends (epoll), under lock: @tcp is learnt when the
	 * descriptor is newly registered (arm returned 1; learn() in
	 * readiness.c); @drained says a read on it returned less than it asked
	 * for since the last read event, so the receive queue was empty and the
	 * next read waits for the edge instead of trying (readiness_submit);
	 * @ended says an event reported the peer's shutdown, an error or
	 * urgent data, after which a short read proves nothing.
	 */
	bool tcp, drained, ended;
	/*
	 * @read_events: read-side events run on the entry (readiness_ended,
	 * readiness_run of side 0), under lock.  learn() compares it with the
	 * count at the append to tell whether an event of the new file came
	 * between its registration and learn, whose @ended must then stand.
	 */
	unsigned read_events;
	/*
	 * @owned: an owned socket (BLITZ_ACCEPT_OWNED), which only
	 * readiness_close() closes; @watched: the backend has watched it
	 * since (epoll: added), so its next waits skip arm.  Under lock.
	 */
	bool owned, watched;
	int fd;
};

#define FD_CHUNK 1024
#define FD_CHUNKS 1024		/* up to 1,048,576 descriptors */

struct readiness {
	struct spinlock table_lock;
	struct fd_entry *_Atomic chunks[FD_CHUNKS];
	/* poll backend: the entries that have waiters */
	struct spinlock active_lock;
	struct fd_entry *active;
	int wake_fd;			/* eventfd */
	bool arm_once;			/* epoll: an owned descriptor is armed once */
	void (*on_wait)(struct blitz_io *io, struct fd_entry *e, int fd);
};

int readiness_init(struct readiness *r);
void readiness_deinit(struct readiness *r);
struct fd_entry *readiness_entry(struct readiness *r, int fd);
/*
 * readiness_submit - @arm makes the backend watch the descriptor: 1 if it
 * is newly watched (epoll's ADD succeeded: a descriptor the backend had not
 * seen, or a reused number), 0 if it already was, or -errno.
 */
int readiness_submit(struct blitz_io *io, struct readiness *r, struct blitz_io_op *op,
		     bool *done, int (*arm)(struct blitz_io *io, int fd));
void readiness_run(struct blitz_io *io, struct fd_entry *e, int dir);
void readiness_ended(struct fd_entry *e);
void readiness_cancel(struct blitz_io *io, struct readiness *r, struct blitz_io_op *op);
int readiness_close(struct blitz_io *io, struct readiness *r, int fd);
void readiness_own(struct readiness *r, int fd);
void readiness_wake(struct readiness *r);
void readiness_cancel_all(struct blitz_io *io, struct readiness *r);
void readiness_drain_wake(struct readiness *r);

#endif
