// SPDX-License-Identifier: MIT
/*
 * backends/io_uring.c - the io_uring backend (liburing): operations run in
 * the kernel and complete through a completion queue (CQ).
 *
 * Rings.  Each worker has a ring of its own, set up with SINGLE_ISSUER and
 * DEFER_TASKRUN (kernel 6.1): only that worker submits to it and reaps it,
 * and the kernel runs its requests' completion work (task_work) when that
 * worker enters the ring (to submit, to reap or to sleep), never by
 * interrupting it or waking it from another sleep.  With one ring for all,
 * a completion woke its submitter to run the task_work and then the worker
 * sleeping in the ring (two wake-ups), and the workers' task_work contended
 * for the ring's locks (docs/io.md).  Threads that are not workers (a
 * helper in blitz_join, the tests that drive the driver) use one shared
 * ring under sq_lock, reaped by whoever holds the driver's reap_lock; a
 * worker submits their operations for them, since the kernel cancels a
 * request whose submitter exits (see "The pending list").
 * Where the kernel refuses the flags, or with cfg.io_uring_rings shared
 * (BLITZ_IO_URING_RINGS=shared), every thread uses the shared ring (a
 * refusal is said on stderr).
 *
 * A worker's ring (struct own_ring; its fields without a lock are the
 * owner's alone):
 * - submit() prepares an entry; flush() at the end of the tick submits the
 *   tick's entries and runs the completion work that is pending, in one
 *   io_uring_enter; reap_own() at the next tick takes the CQ (entering
 *   again only if the kernel flagged more work: IORING_SQ_TASKRUN);
 * - the worker parks in it (wait_own): its own completions wake it, and so
 *   does wake_worker(), which writes an eventfd that a multishot poll in the
 *   ring watches; while the shared ring has operations in flight, a poll on
 *   the shared ring's descriptor wakes the parked worker for those too;
 * - a cancel from another thread cannot enter the ring: it is queued under
 *   cancel_lock, the eventfd wakes the owner, and the owner submits it at
 *   its next reap, flush or park.  A tag (the user_data) is the op's
 *   address with a 3-bit generation in its low bits, so a queued cancel
 *   never hits a later submission of the same op: the owner completes and
 *   resubmits an op only between two of the points where it looks at the
 *   queue, so the generation moves by at most one meanwhile;
 * - at the worker's exit it cancels everything and collects the completions.
 *
 * blitz_net_close() (uring_close): a cancel by descriptor must reach the
 * kernel before the close(2), or it would find no file (or another file
 * with the number).  The closer cancels in its own ring (entering it at
 * once) and in the shared ring; each other worker's ring gets the cancel
 * through its queue, naming a duplicate of the descriptor (the same file),
 * which the last of them closes (struct pending_close); the caller closes
 * the descriptor itself at once.
 *
 * Owned sockets (accepted with BLITZ_ACCEPT_OWNED, closed only through
 * blitz_net_close): a read arms a multishot receive into the worker ring's
 * provided buffers (struct msock) and the receive stays armed; data that
 * arrives while nobody reads waits in the socket's queue, so a read that
 * finds it completes at once, with no entry and no wake, and a read that
 * finds nothing waits without an entry.  See "Owned sockets" below.
 *
 * On the shared ring a send is tried at once first (uring_submit); in a
 * worker's ring it goes with the tick's batch.  A CQE of the shared ring
 * carries the op as user_data, 0 the driver's own NOPs and cancels.
 * Blocking waits need IORING_FEAT_EXT_ARG (kernel 5.11): the timeout is
 * passed to io_uring_enter, so waiting never touches the submission queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <blitz.h>
#include "../core/fault.h"
#include "../core/spinlock.h"
#include "driver.h"

#define SHARED_ENTRIES 1024
#define OWN_ENTRIES 256
#define OWN_CQ_ENTRIES 4096	/* more in flight is fine: the kernel keeps the overflow */
#define CQE_BATCH 128
#define BUF_ENTRIES 256		/* provided buffers per worker ring (a power of 2) */
#define BUF_SIZE 4096
#define MSOCK_CHUNK 1024
#define MSOCK_CHUNKS 1024	/* owned sockets up to descriptor 1,048,575 */

/* user_data in a worker's ring besides op tags (an address, >= 4096, | generation) */
#define TAG_INTERNAL 0		/* a cancel's own completion */
#define TAG_WAKE 1		/* the multishot poll on the eventfd */
#define TAG_SHARED 2		/* the poll on the shared ring */
#define TAG_GEN_MASK 7ull
#define TAG_MSOCK (1ull << 63)	/* an owned socket's multishot receive: struct msock | generation */
#define RING_MSOCK (-2)		/* op->ring of a read waiting on an owned socket (op->ring_tag: its msock) */
#define PENDING_LINK 1ull	/* op->ring_tag on the pending list: the next op's address | this */
/* In a ring's cancel queue besides tags: a struct pending_close. */
#define QUEUED_CLOSE (1ull << 62)

/*
 * A close waiting for other workers' rings to cancel what they hold on
 * @fd: one reference for the closer and one per ring it was queued to;
 * whoever drops the last closes @fd.
 */
struct pending_close {
	_Atomic unsigned refs;
	int fd;
};

struct uring_priv;

struct own_ring {
	struct io_uring ring;
	struct uring_priv *p;
	int efd;			/* wake_worker() writes it */
	/* The owner's alone: */
	bool wake_armed, shared_armed;
	unsigned unsubmitted;		/* entries prepared since the last enter */
	uint32_t gen;
	long in_flight;			/* ops submitted here, not yet reaped */
	/* Cancels from other threads: */
	alignas(64) struct spinlock cancel_lock;
	_Atomic bool cancel_pending;	/* written under cancel_lock; a hint outside */
	bool closed;			/* the owner has exited (under cancel_lock) */
	uint64_t *cancels;		/* tags (under cancel_lock) */
	unsigned ncancels, cancels_cap;
	/*
	 * Provided buffers for the multishot receives armed here (group 0),
	 * set up by the owner at the first one (bufs_state: 0 not yet, 1 set
	 * up, -1 refused).  Whoever consumes a buffer's data gives it back,
	 * under buf_lock (the ring of buffers has one producer at a time).
	 */
	int bufs_state;
	struct io_uring_buf_ring *br;
	unsigned char *bufs;
	struct spinlock buf_lock;
};

struct uring_priv {
	struct io_uring ring;		/* the shared ring */
	pthread_mutex_t sq_lock;
	/*
	 * Operations waiting for a worker to hand them to the kernel ("The
	 * pending list" below), oldest first, linked through ring_tag; under
	 * sq_lock.
	 */
	struct blitz_io_op *pending_head, *pending_tail;
	/*
	 * The list is not empty, or the kernel refused the last batch.
	 * Written under sq_lock; read without it (see uring_flush).
	 */
	_Atomic bool unsubmitted;
	_Atomic long shared_in_flight;	/* ops in the shared ring */
	unsigned nr_own;
	struct own_ring *own;		/* one per worker; NULL: the shared ring only */
	/* Owned sockets: fd -> struct msock (see "Owned sockets") */
	struct msock *_Atomic *_Atomic msock_chunks[MSOCK_CHUNKS];
	struct spinlock msock_lock;	/* the chunks' allocation, the free list, all */
	struct msock *msock_free, *msock_all;
	_Atomic bool no_multishot;	/* the kernel refused a multishot receive */
};

/* The calling worker's ring (initial-exec: see core/sched/worker.c's TLS). */
static __thread struct own_ring *my_ring __attribute__((tls_model("initial-exec")));

static struct own_ring *own_ring_of(struct blitz_io *io)
{
	struct own_ring *r = my_ring;

	return r && r->p == io->priv ? r : NULL;
}

static void own_rings_free(struct uring_priv *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		io_uring_queue_exit(&p->own[i].ring);
		close(p->own[i].efd);
		free(p->own[i].cancels);
		if (p->own[i].br)
			munmap(p->own[i].br, BUF_ENTRIES * sizeof(struct io_uring_buf));
		free(p->own[i].bufs);
	}
	free(p->own);
	p->own = NULL;
	p->nr_own = 0;
}

/*
 * own_rings_init - one ring per worker, disabled until its worker enables
 * it (SINGLE_ISSUER: the enabling thread becomes the only submitter).
 */
static int own_rings_init(struct uring_priv *p, unsigned n)
{
	size_t size = ((n * sizeof(struct own_ring)) + 63) & ~(size_t)63;
	unsigned i;
	int err = 0;

	p->own = aligned_alloc(64, size);
	if (!p->own)
		return -ENOMEM;
	memset(p->own, 0, size);
	for (i = 0; i < n; i++) {
		struct own_ring *r = &p->own[i];
		struct io_uring_params params = {
			.flags = IORING_SETUP_R_DISABLED | IORING_SETUP_SINGLE_ISSUER |
				 IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
				 IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE,
			.cq_entries = OWN_CQ_ENTRIES,
		};

		err = io_uring_queue_init_params(OWN_ENTRIES, &r->ring, &params);
		if (err < 0)
			break;
		r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (r->efd < 0) {
			err = -errno;
			io_uring_queue_exit(&r->ring);
			break;
		}
		r->p = p;
		spin_init(&r->cancel_lock);
		spin_init(&r->buf_lock);
		atomic_init(&r->cancel_pending, false);
	}
	if (err) {
		own_rings_free(p, i);
		return err;
	}
	p->nr_own = n;
	return 0;
}

static void msocks_free(struct uring_priv *p);

static int uring_init(struct blitz_io *io)
{
	struct uring_priv *p = calloc(1, sizeof(*p));
	unsigned workers = io->rt ? blitz_runtime_workers(io->rt) : 0;
	int err;

	if (!p)
		return -ENOMEM;
	/*
	 * SUBMIT_ALL (5.18): an entry the kernel refuses (its CQE carries the
	 * error) does not stop the rest of a batch from being submitted.
	 */
	err = io_uring_queue_init(SHARED_ENTRIES, &p->ring, IORING_SETUP_SUBMIT_ALL);
	if (err == -EINVAL)
		err = io_uring_queue_init(SHARED_ENTRIES, &p->ring, 0);
	if (err < 0) {
		free(p);
		return err;	/* ENOSYS, EPERM (sysctl io_uring_disabled, seccomp) */
	}
	if (!(p->ring.features & IORING_FEAT_EXT_ARG)) {
		io_uring_queue_exit(&p->ring);
		free(p);
		return -EOPNOTSUPP;
	}
	pthread_mutex_init(&p->sq_lock, NULL);
	atomic_init(&p->shared_in_flight, 0);
	spin_init(&p->msock_lock);
	if (workers && !io->shared_ring) {
		err = own_rings_init(p, workers);
		if (err)
			fprintf(stderr, "blitz: io_uring: no ring per worker (SINGLE_ISSUER | DEFER_TASKRUN: %s); one shared ring\n",
				strerror(-err));
	}
	io->priv = p;
	return 0;
}

static void uring_deinit(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;

	if (p->own)
		own_rings_free(p, p->nr_own);
	msocks_free(p);
	io_uring_queue_exit(&p->ring);
	pthread_mutex_destroy(&p->sq_lock);
	free(p);
}

/*
 * take_sqe - a free entry of @ring, flushing the queue to the kernel while
 * it is full.  The sqe_full fault point makes the first look find it full.
 */
static struct io_uring_sqe *take_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = fault_fail(FAULT_SQE_FULL) ? NULL : io_uring_get_sqe(ring);

	while (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	return sqe;
}

/* get_sqe - an entry of the shared ring (under sq_lock). */
static struct io_uring_sqe *get_sqe(struct uring_priv *p)
{
	return take_sqe(&p->ring);
}

/* own_sqe - the same in a worker's ring (the owner only). */
static struct io_uring_sqe *own_sqe(struct own_ring *r)
{
	struct io_uring_sqe *sqe = take_sqe(&r->ring);

	r->unsubmitted++;
	return sqe;
}

static void prep_op(struct io_uring_sqe *sqe, struct blitz_io_op *op)
{
	switch (op->opcode) {
	case BLITZ_IO_READ:
		io_uring_prep_read(sqe, op->fd, op->buf, (unsigned)op->len, (__u64)op->off);
		break;
	case BLITZ_IO_WRITE:
		io_uring_prep_write(sqe, op->fd, op->buf, (unsigned)op->len, (__u64)op->off);
		break;
	case BLITZ_IO_RECV:
		io_uring_prep_recv(sqe, op->fd, op->buf, op->len, op->flags);
		break;
	case BLITZ_IO_SEND:
		io_uring_prep_send(sqe, op->fd, op->buf, op->len, op->flags | MSG_NOSIGNAL);
		break;
	case BLITZ_IO_ACCEPT:
		io_uring_prep_accept(sqe, op->fd, op->addr, op->addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		break;
	case BLITZ_IO_CONNECT:
		io_uring_prep_connect(sqe, op->fd, op->addr, op->addr_in_len);
		break;
	case BLITZ_IO_RECVMSG:
		io_uring_prep_recvmsg(sqe, op->fd, op->msg, (unsigned)op->flags);
		break;
	case BLITZ_IO_SENDMSG:
		io_uring_prep_sendmsg(sqe, op->fd, op->msg, (unsigned)op->flags | MSG_NOSIGNAL);
		break;
	case BLITZ_IO_POLL_IN:
		io_uring_prep_poll_add(sqe, op->fd, POLLIN);
		break;
	case BLITZ_IO_POLL_OUT:
		io_uring_prep_poll_add(sqe, op->fd, POLLOUT);
		break;
	case BLITZ_IO_OPENAT:
		io_uring_prep_openat(sqe, op->fd, op->path, op->flags, op->mode);
		break;
	case BLITZ_IO_FSYNC:
		io_uring_prep_fsync(sqe, op->fd, op->flags ? IORING_FSYNC_DATASYNC : 0);
		break;
	case BLITZ_IO_STATX:
		io_uring_prep_statx(sqe, op->fd, op->path, op->flags, (unsigned)op->len, op->buf);
		break;
	case BLITZ_IO_MKDIRAT:
		io_uring_prep_mkdirat(sqe, op->fd, op->path, op->mode);
		break;
	case BLITZ_IO_RENAMEAT:
		io_uring_prep_renameat(sqe, op->fd, op->path, op->fd, op->path2, (unsigned)op->flags);
		break;
	case BLITZ_IO_UNLINKAT:
		io_uring_prep_unlinkat(sqe, op->fd, op->path, op->flags);
		break;
	default:
		io_uring_prep_nop(sqe);
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* Owned sockets: a multishot receive into provided buffers                */

/*
 * struct msock - the receive side of an owned socket.  Its multishot
 * receive is armed in one worker's ring (@ring; the owner reaps its CQEs
 * and queues the data), at most once at a time (@armed); the reader, on
 * any worker, takes queued data under @lock, or leaves its op as @waiter
 * for the owner to complete (a waiter implies an armed receive).  Where
 * the receive ends without data (ENOBUFS, no multishot), the owner gives
 * the waiter a plain receive in its ring (@plain_op: the op's own fields
 * stay the task's, so a cancel finds the tag here).
 * Allocated from a free list and never freed while the driver lives (a
 * late uring_cancel may still lock a reused one: it checks @waiter); @gen
 * keeps a queued cancel off a later arming.  Freed to the list when
 * closed and not armed.
 */
struct msock_data {
	uint16_t ring, bid;		/* the buffer: p->own[ring].bufs + bid * BUF_SIZE */
	uint32_t off, len;		/* unread: [off, len) */
};

struct msock {
	alignas(64) struct spinlock lock;
	int fd;
	int32_t ring;
	uint64_t tag;			/* the armed receive's user_data */
	uint8_t gen;
	bool armed, closed, ended;
	int32_t end_res;		/* once ended: 0 (end of stream) or -errno */
	struct blitz_io_op *waiter;
	/* The op last given a plain receive (ENOBUFS, no multishot), for its cancel. */
	struct blitz_io_op *plain_op;
	uint64_t plain_tag;
	int32_t plain_ring;
	struct msock_data *q;		/* queued data, a ring of @cap */
	unsigned head, count, cap;
	struct msock *next_free, *next_all;
};

/* msock_slot - @fd's entry in the table; NULL out of range or (!@make) absent. */
static struct msock *_Atomic *msock_slot(struct uring_priv *p, int fd, bool make)
{
	unsigned c = (unsigned)fd / MSOCK_CHUNK;
	struct msock *_Atomic *chunk;

	if (fd < 0 || c >= MSOCK_CHUNKS)
		return NULL;
	/* Acquire: pairs with the release that published the chunk. */
	chunk = atomic_load_explicit(&p->msock_chunks[c], memory_order_acquire);
	if (!chunk && make) {
		spin_lock(&p->msock_lock);
		/* Relaxed: under msock_lock, which every store of a chunk holds. */
		chunk = atomic_load_explicit(&p->msock_chunks[c], memory_order_relaxed);
		if (!chunk) {
			chunk = calloc(MSOCK_CHUNK, sizeof(*chunk));
			/* Release: a lock-free reader's acquire sees it zeroed. */
			if (chunk)
				atomic_store_explicit(&p->msock_chunks[c], chunk, memory_order_release);
		}
		spin_unlock(&p->msock_lock);
	}
	return chunk ? &chunk[fd % MSOCK_CHUNK] : NULL;
}

/* msock_of - the owned socket @fd, or NULL. */
static struct msock *msock_of(struct uring_priv *p, int fd)
{
	struct msock *_Atomic *slot = msock_slot(p, fd, false);

	/* Acquire: pairs with uring_own's release; the msock is set up. */
	return slot ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
}

static void msock_put(struct uring_priv *p, struct msock *m)
{
	spin_lock(&p->msock_lock);
	m->next_free = p->msock_free;
	p->msock_free = m;
	spin_unlock(&p->msock_lock);
}

static struct msock *msock_get(struct uring_priv *p)
{
	struct msock *m;

	spin_lock(&p->msock_lock);
	m = p->msock_free;
	if (m)
		p->msock_free = m->next_free;
	spin_unlock(&p->msock_lock);
	if (!m) {
		m = aligned_alloc(64, sizeof(*m));
		if (!m)
			return NULL;
		memset(m, 0, sizeof(*m));
		spin_init(&m->lock);
		spin_lock(&p->msock_lock);
		m->next_all = p->msock_all;
		p->msock_all = m;
		spin_unlock(&p->msock_lock);
	}
	return m;
}

static void msocks_free(struct uring_priv *p)
{
	struct msock *m, *next;

	for (m = p->msock_all; m; m = next) {
		next = m->next_all;
		free(m->q);
		free(m);
	}
	for (unsigned c = 0; c < MSOCK_CHUNKS; c++)
		/* Relaxed: at deinit no other thread uses the table. */
		free(atomic_load_explicit(&p->msock_chunks[c], memory_order_relaxed));
}

/* say_once - one line on stderr the first time @said is set. */
static void say_once(_Atomic bool *said, const char *what, int err)
{
	/* Relaxed: only the line's uniqueness depends on it. */
	if (!atomic_exchange_explicit(said, true, memory_order_relaxed))
		fprintf(stderr, "blitz: io_uring: %s (%s); owned sockets receive one read at a time\n",
			what, strerror(err));
}

/*
 * own_bufs_init - the owner sets up its ring's provided buffers (group 0).
 * A kernel without buffer rings (5.19) refuses the registration: said once,
 * and reads on owned sockets go through single receives.
 */
static bool own_bufs_init(struct own_ring *r)
{
	static _Atomic bool said;
	struct io_uring_buf_reg reg = { .ring_entries = BUF_ENTRIES, .bgid = 0 };
	size_t ring_size = BUF_ENTRIES * sizeof(struct io_uring_buf);
	int err = -ENOMEM;

	if (r->bufs_state)
		return r->bufs_state > 0;
	r->bufs_state = -1;
	/* The kernel wants the ring of buffer descriptors page-aligned. */
	r->br = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (r->br == MAP_FAILED)
		r->br = NULL;
	r->bufs = malloc((size_t)BUF_ENTRIES * BUF_SIZE);
	if (r->br && r->bufs) {
		reg.ring_addr = (uint64_t)(uintptr_t)r->br;
		err = io_uring_register_buf_ring(&r->ring, &reg, 0);
	}
	if (err) {
		say_once(&said, "no provided buffer ring", -err);
		if (r->br)
			munmap(r->br, ring_size);
		free(r->bufs);
		r->br = NULL;
		r->bufs = NULL;
		return false;
	}
	io_uring_buf_ring_init(r->br);
	for (unsigned i = 0; i < BUF_ENTRIES; i++)
		io_uring_buf_ring_add(r->br, r->bufs + (size_t)i * BUF_SIZE, BUF_SIZE, (unsigned short)i,
				      io_uring_buf_ring_mask(BUF_ENTRIES), (int)i);
	/* Publishes the tail with a release store (liburing). */
	io_uring_buf_ring_advance(r->br, BUF_ENTRIES);
	r->bufs_state = 1;
	return true;
}

/*
 * buf_return - give buffer @bid back to @r's ring of buffers; any thread.
 * buf_lock makes the adds and the tail's advance one producer's; the
 * advance is a release store, so the kernel reads the entry after it.
 */
static void buf_return(struct own_ring *r, uint16_t bid)
{
	spin_lock(&r->buf_lock);
	io_uring_buf_ring_add(r->br, r->bufs + (size_t)bid * BUF_SIZE, BUF_SIZE, bid,
			      io_uring_buf_ring_mask(BUF_ENTRIES), 0);
	io_uring_buf_ring_advance(r->br, 1);
	spin_unlock(&r->buf_lock);
}

/* msock_push - queue @len bytes of buffer @bid of ring @ring (under m->lock). */
static bool msock_push(struct msock *m, unsigned ring, uint16_t bid, uint32_t len)
{
	if (m->count == m->cap) {
		unsigned cap = m->cap ? 2 * m->cap : 4;
		struct msock_data *q = malloc(cap * sizeof(*q));

		if (!q)
			return false;
		for (unsigned i = 0; i < m->count; i++)
			q[i] = m->q[(m->head + i) % m->cap];
		free(m->q);
		m->q = q;
		m->cap = cap;
		m->head = 0;
	}
	m->q[(m->head + m->count) % m->cap] = (struct msock_data){ .ring = (uint16_t)ring, .bid = bid, .len = len };
	m->count++;
	return true;
}

/*
 * msock_take - copy queued data into @buf (at most @len bytes), giving
 * back each buffer it empties (under m->lock).  Returns the bytes copied.
 */
static size_t msock_take(struct uring_priv *p, struct msock *m, void *buf, size_t len)
{
	size_t done = 0;

	while (m->count && done < len) {
		struct msock_data *d = &m->q[m->head];
		struct own_ring *r = &p->own[d->ring];
		size_t n = d->len - d->off;

		if (n > len - done)
			n = len - done;
		memcpy((char *)buf + done, r->bufs + (size_t)d->bid * BUF_SIZE + d->off, n);
		done += n;
		d->off += (uint32_t)n;
		if (d->off == d->len) {
			buf_return(r, d->bid);
			m->head = (m->head + 1) % m->cap;
			m->count--;
		}
	}
	return done;
}

/* msock_drop_data - give back every queued buffer (under m->lock; closing). */
static void msock_drop_data(struct uring_priv *p, struct msock *m)
{
	while (m->count) {
		struct msock_data *d = &m->q[m->head];

		buf_return(&p->own[d->ring], d->bid);
		m->head = (m->head + 1) % m->cap;
		m->count--;
	}
}

/* own_prep - @op into @r's next entry (the owner only): tag, ring, count. */
static void own_prep(struct uring_priv *p, struct own_ring *r, struct blitz_io_op *op)
{
	struct io_uring_sqe *sqe = own_sqe(r);

	prep_op(sqe, op);
	op->ring = (int32_t)(r - p->own);
	op->ring_tag = (uint64_t)(uintptr_t)op | (r->gen++ & TAG_GEN_MASK);
	io_uring_sqe_set_data64(sqe, op->ring_tag);
	r->in_flight++;
}

/*
 * msock_plain - a plain receive for @w, @m's waiter, in @r (its owner,
 * under m->lock); completed by own_reap as any op.  @w's ring and tag
 * stay RING_MSOCK and @m (the task may read them to cancel): its tag is
 * kept in @m.
 */
static void msock_plain(struct uring_priv *p, struct own_ring *r, struct msock *m,
			struct blitz_io_op *w)
{
	struct io_uring_sqe *sqe = own_sqe(r);

	prep_op(sqe, w);
	m->plain_op = w;
	m->plain_ring = (int32_t)(r - p->own);
	m->plain_tag = (uint64_t)(uintptr_t)w | (r->gen++ & TAG_GEN_MASK);
	io_uring_sqe_set_data64(sqe, m->plain_tag);
	r->in_flight++;
}

/* msock_arm - arm @m's multishot receive in @r, the caller's own ring (under m->lock). */
static void msock_arm(struct uring_priv *p, struct own_ring *r, struct msock *m)
{
	struct io_uring_sqe *sqe = own_sqe(r);

	io_uring_prep_recv_multishot(sqe, m->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 0;
	m->ring = (int32_t)(r - p->own);
	m->tag = TAG_MSOCK | (uint64_t)(uintptr_t)m | (m->gen++ & TAG_GEN_MASK);
	io_uring_sqe_set_data64(sqe, m->tag);
	m->armed = true;
	r->in_flight++;
}

/*
 * msock_recv - a receive on owned socket @m, from its task on a thread
 * whose own ring is @r (NULL: not a worker).  Queued data completes it at
 * once; at the end of the stream, so does the end; else it waits as @m's
 * waiter, arming the multishot receive in @r if it is not armed.  Returns
 * false (nothing done) where a plain receive must do: a second reader,
 * no ring of the caller's, no buffers or no multishot in this kernel.
 */
static bool msock_recv(struct uring_priv *p, struct own_ring *r, struct msock *m,
		       struct blitz_io_op *op, bool *done, int *res)
{
	bool ok = true;

	spin_lock(&m->lock);
	if (m->count) {
		*res = (int)msock_take(p, m, op->buf, op->len);
		*done = true;
	} else if (m->ended) {
		*res = m->end_res;
		*done = true;
	} else if (m->waiter || m->closed) {
		ok = false;
	} else if (m->armed) {
		m->waiter = op;
	/* Relaxed: a flag set once; a late view costs one refused arming. */
	} else if (r && !atomic_load_explicit(&p->no_multishot, memory_order_relaxed) &&
		   own_bufs_init(r)) {
		msock_arm(p, r, m);
		m->waiter = op;
	} else {
		ok = false;
	}
	if (ok && !*done) {
		op->ring = RING_MSOCK;
		op->ring_tag = (uint64_t)(uintptr_t)m;
	}
	spin_unlock(&m->lock);
	return ok;
}

/*
 * msock_cqe - a CQE of @m's multishot receive, in @r (its owner, or the
 * runtime's shutdown after the owner exited: then nothing is submitted).
 * Data is queued; the receive's end (no IORING_CQE_F_MORE) disarms it:
 * 0 or an error ends the stream; ENOBUFS (every buffer in use) and EINVAL
 * (a kernel without multishot receive: said once, never tried again) give
 * the waiter a plain receive instead; -ECANCELED (blitz_net_close,
 * shutdown) ends the waiter's read with -ECANCELED.  A waiter is completed
 * with what it can now have.  Returns the ops completed.
 */
static int msock_cqe(struct blitz_io *io, struct own_ring *r, struct msock *m,
		     const struct io_uring_cqe *cqe)
{
	static _Atomic bool said;
	struct uring_priv *p = io->priv;
	struct blitz_io_op *w = NULL;
	int res = cqe->res, wres = 0;
	bool put;

	spin_lock(&m->lock);
	if (cqe->flags & IORING_CQE_F_BUFFER) {
		uint16_t bid = (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);

		if (res <= 0 || m->closed) {
			buf_return(r, bid);
		} else if (!msock_push(m, (unsigned)(r - p->own), bid, (uint32_t)res)) {
			buf_return(r, bid);	/* data lost: the stream ends here */
			m->ended = true, m->end_res = -ENOMEM;
		}
	}
	if (!(cqe->flags & IORING_CQE_F_MORE)) {
		m->armed = false;
		r->in_flight--;
		if (res == -EINVAL) {
			say_once(&said, "no multishot receive", EINVAL);
			/* Relaxed: a flag set once (see msock_recv). */
			atomic_store_explicit(&p->no_multishot, true, memory_order_relaxed);
		} else if (res == 0 || (res < 0 && res != -ENOBUFS && res != -ECANCELED))
			m->ended = true, m->end_res = res;
	}
	if (m->waiter && (m->count || m->ended || !m->armed)) {
		w = m->waiter;
		m->waiter = NULL;
		if (m->count) {
			wres = (int)msock_take(p, m, w->buf, w->len);
		} else if (m->ended) {
			wres = m->end_res;
		} else if (res == -ECANCELED || m->closed || r != my_ring) {
			wres = -ECANCELED;
		} else {
			msock_plain(p, r, m, w);	/* ENOBUFS, EINVAL */
			w = NULL;
		}
	}
	put = m->closed && !m->armed;
	spin_unlock(&m->lock);
	if (put)
		msock_put(p, m);
	if (!w)
		return 0;
	io_complete(io, w, wres);
	return 1;
}

static void cancel_in_ring(struct blitz_io *io, int32_t ring, uint64_t tag);

/*
 * msock_cancel - uring_cancel() of a read waiting on an owned socket: a
 * waiter completes now; a read given a plain receive is cancelled by its
 * tag in that ring (cancel_in_ring); else it has completed already.
 */
static void msock_cancel(struct blitz_io *io, struct blitz_io_op *op)
{
	struct msock *m = (struct msock *)(uintptr_t)op->ring_tag;
	bool found, plain = false;
	uint64_t tag = 0;
	int32_t ring = 0;

	spin_lock(&m->lock);
	found = m->waiter == op;
	if (found) {
		m->waiter = NULL;
	} else if (m->plain_op == op) {
		plain = true;
		tag = m->plain_tag;
		ring = m->plain_ring;
		m->plain_op = NULL;
	}
	spin_unlock(&m->lock);
	if (found)
		io_complete(io, op, -ECANCELED);
	else if (plain)
		cancel_in_ring(io, ring, tag);
}

/*
 * msock_retire - @m's socket is closed (or its number was reused): give
 * back its queued data; free it now if its receive is not armed, else its
 * last CQE (the close's cancel ends it) completes the waiter and frees it.
 */
static void msock_retire(struct uring_priv *p, struct msock *m)
{
	bool put;

	spin_lock(&m->lock);
	m->closed = true;
	msock_drop_data(p, m);
	put = !m->armed;
	spin_unlock(&m->lock);
	if (put)
		msock_put(p, m);
}

/* msock_close - blitz_net_close() of @fd: retire its msock, if it has one. */
static void msock_close(struct uring_priv *p, int fd)
{
	struct msock *_Atomic *slot = msock_slot(p, fd, false);
	/* Acquire: as msock_of. */
	struct msock *m = slot ? atomic_exchange_explicit(slot, NULL, memory_order_acquire) : NULL;

	if (m)
		msock_retire(p, m);
}

/*
 * uring_own - @fd, just accepted with BLITZ_ACCEPT_OWNED, gets an msock.
 * Only with rings per worker (the multishot receive is armed in one).  An
 * msock left by a descriptor of the same number that was closed with
 * close(2) instead of blitz_net_close is dropped (its receive, if armed,
 * keeps that connection until shutdown: net.h says to close owned sockets
 * through blitz).
 */
static void uring_own(struct blitz_io *io, int fd)
{
	struct uring_priv *p = io->priv;
	struct msock *_Atomic *slot;
	struct msock *m;

	if (!p->own || !(slot = msock_slot(p, fd, true)) || !(m = msock_get(p)))
		return;
	m->fd = fd;
	m->ring = -1;
	m->armed = m->closed = m->ended = false;
	m->waiter = m->plain_op = NULL;
	m->head = m->count = 0;
	/* Release: msock_of's acquire sees it set up; acquire: the old one's state. */
	m = atomic_exchange_explicit(slot, m, memory_order_acq_rel);
	if (m)
		msock_retire(p, m);
}

/* ---------------------------------------------------------------------- */
/* The pending list                                                        */

/*
 * The kernel ties a request to the thread whose io_uring_enter submitted
 * it: its completion work runs on that thread, and once that thread has
 * exited, the request completes with -ECANCELED when it would have
 * completed (a pipe read submitted by a thread that then exits returns
 * -ECANCELED when its byte arrives; tried on 6.18).  A thread that is not
 * a worker (a helper in blitz_join, a worker of another runtime) may exit
 * while an operation it submitted for a task waits, so it never enters
 * the shared ring with a task's operation: the operation waits on this
 * list, and a worker of the runtime, which lives as long as the ring,
 * writes the list into the submission queue and submits it
 * (uring_flush), at the end of its tick or when it parks (worker_park,
 * which an outside submitter's unpark makes happen:
 * runtime_unpark_for_io).  So, under sq_lock, the submission queue holds
 * nothing unsubmitted, and an internal entry that any thread submits (a
 * cancel, a NOP: each completes during that enter) submits only itself.
 * (One exception, not handled: what the kernel did not take of a
 * worker's batch, refused with EBUSY or EINTR, or the rest of a batch it
 * stopped in, stays in the queue until the next enter, whoever makes it;
 * the flag makes a worker's next flush retry it, but a thread that is
 * not a worker and enters first, with a cancel or a NOP, submits it.)
 * A driver without a runtime (the backends' tests) is flushed by the
 * thread that reaps it.
 */

/* pending_next - the op after @op on a list linked through ring_tag. */
static struct blitz_io_op *pending_next(const struct blitz_io_op *op)
{
	return (struct blitz_io_op *)(uintptr_t)(op->ring_tag & ~PENDING_LINK);
}

static void pending_append(struct uring_priv *p, struct blitz_io_op *op)
{
	op->ring_tag = PENDING_LINK;	/* the last */
	if (p->pending_tail)
		p->pending_tail->ring_tag = (uint64_t)(uintptr_t)op | PENDING_LINK;
	else
		p->pending_head = op;
	p->pending_tail = op;
}

/* pending_write - move the list into the submission queue (under sq_lock). */
static void pending_write(struct uring_priv *p)
{
	struct blitz_io_op *op, *next;

	for (op = p->pending_head; op; op = next) {
		struct io_uring_sqe *sqe = get_sqe(p);

		next = pending_next(op);
		prep_op(sqe, op);
		io_uring_sqe_set_data(sqe, op);
		op->ring_tag = (uint64_t)(uintptr_t)op;	/* its tag in the ring */
		/*
		 * Release, the value unchanged: the completer's acquire load
		 * of the state (io_complete) then sees our reads and our write
		 * of the op as the C memory model counts them; the kernel's
		 * own ordering (the enter, the CQE) is invisible to it.  No one
		 * else writes the state meanwhile: a completion needs the
		 * submit below, and a cancel waits for sq_lock.
		 */
		atomic_store_explicit(&op->state, IO_OP_PENDING, memory_order_release);
	}
	p->pending_head = p->pending_tail = NULL;
}

/*
 * on_file - does @op act on the file @fd names (what IORING_ASYNC_CANCEL_FD
 * matches)?  A path operation's fd is only the directory it starts from.
 */
static bool on_file(const struct blitz_io_op *op, int fd)
{
	switch (op->opcode) {
	case BLITZ_IO_OPENAT:
	case BLITZ_IO_STATX:
	case BLITZ_IO_MKDIRAT:
	case BLITZ_IO_RENAMEAT:
	case BLITZ_IO_UNLINKAT:
		return false;
	default:
		return op->fd == fd;
	}
}

/*
 * pending_take - unlink @target, or with @target NULL every op on the
 * file @fd, from the list (under sq_lock); returns them, linked the same
 * way, for pending_cancel once the lock is dropped.  A stale unsubmitted
 * flag left behind costs the next flush one empty round.
 */
static struct blitz_io_op *pending_take(struct uring_priv *p, const struct blitz_io_op *target, int fd)
{
	struct blitz_io_op *prev = NULL, *op, *next, *taken = NULL;

	for (op = p->pending_head; op && !(target && taken); op = next) {
		next = pending_next(op);
		if (target ? op != target : !on_file(op, fd)) {
			prev = op;
			continue;
		}
		if (prev)
			prev->ring_tag = (uint64_t)(uintptr_t)next | PENDING_LINK;
		else
			p->pending_head = next;
		if (p->pending_tail == op)
			p->pending_tail = prev;
		op->ring_tag = (uint64_t)(uintptr_t)taken | PENDING_LINK;
		taken = op;
	}
	return taken;
}

/* pending_cancel - complete the ops pending_take returned, never submitted. */
static void pending_cancel(struct blitz_io *io, struct blitz_io_op *taken)
{
	struct uring_priv *p = io->priv;

	while (taken) {
		struct blitz_io_op *next = pending_next(taken);	/* before the wake frees it */

		/* Relaxed: a count (see uring_submit). */
		atomic_fetch_sub_explicit(&p->shared_in_flight, 1, memory_order_relaxed);
		io_complete(io, taken, -ECANCELED);
		taken = next;
	}
}

static int uring_submit(struct blitz_io *io, struct blitz_io_op *op, bool *done)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r;
	struct msock *m;
	int res;

	if (op->opcode >= BLITZ_IO_NR_OPCODES) {
		*done = true;
		return -EINVAL;
	}
	/*
	 * An accept is tried at once (accept4, non-blocking): an acceptor then
	 * takes a burst of pending connections in one poll, where through the
	 * ring it got one per tick (a CQE, a wake and a poll behind every
	 * runnable task each).  When nothing is pending the try costs one
	 * failed accept4 per wait.
	 */
	if (op->opcode == BLITZ_IO_ACCEPT) {
		res = io_perform(op);
		if (res != -EAGAIN) {
			*done = true;
			return res;
		}
	}
	*done = false;
	r = own_ring_of(io);
	if (op->opcode == BLITZ_IO_RECV && !op->flags && (m = msock_of(p, op->fd)) &&
	    msock_recv(p, r, m, op, done, &res))
		return *done ? res : 0;
	if (r) {
		/*
		 * Submitted with the tick's other entries by uring_flush, sends
		 * too: the kernel performs a send that finds room in the socket
		 * buffer during that enter and posts its CQE there, so it costs
		 * no syscall of its own; the task sees it at the next tick
		 * (measured: less CPU per message than a send(2) at once, and
		 * more messages per second; docs/io.md, "Why it is built
		 * this way").
		 */
		own_prep(p, r, op);
		return 0;
	}
	/*
	 * The shared ring: a send usually finds room in the socket buffer, so
	 * try it at once (MSG_DONTWAIT) and skip the ring, the reap and the
	 * wake: a thread that is not a worker would spend an enter on it
	 * alone.  Not receives: in a request/response exchange the data is
	 * rarely there yet, and the failed try costs a syscall (measured: more
	 * CPU per message).  Ordering against an earlier send on the same
	 * socket that is still in the ring is the same as for two operations
	 * on the ring: unspecified unless one waits for the other (write_all
	 * does).
	 */
	if (op->opcode == BLITZ_IO_SEND || op->opcode == BLITZ_IO_SENDMSG) {
		res = io_perform(op);
		if (res != -EAGAIN) {
			*done = true;
			return res;
		}
	}
	op->ring = -1;
	/* Relaxed: a count that says whether to look at the shared ring. */
	atomic_fetch_add_explicit(&p->shared_in_flight, 1, memory_order_relaxed);
	pthread_mutex_lock(&p->sq_lock);
	pending_append(p, op);
	/*
	 * Not submitted here: a worker hands the list to the kernel at the
	 * end of its tick or when it parks (see "The pending list").
	 * seq_cst: a parker sets its parked bit, then loads this flag
	 * (worker_park's flush); a submitter that is not a worker stores it,
	 * then fences and loads the bits (runtime_unpark_for_io): one of the
	 * two sees the other.
	 */
	atomic_store(&p->unsubmitted, true);
	pthread_mutex_unlock(&p->sq_lock);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* A worker's own ring                                                     */

/* own_enter - submit what is prepared and run the pending completion work. */
static void own_enter(struct own_ring *r)
{
	/* ring_enter: as if the kernel refused the batch (EBUSY) and took nothing. */
	if (!fault_fail(FAULT_RING_ENTER))
		io_uring_submit_and_get_events(&r->ring);
	/* What the kernel has not taken (it refused the batch: EINTR, EBUSY) is retried. */
	r->unsubmitted = io_uring_sq_ready(&r->ring);
}

/*
 * pending_close_put - drop a reference to @c; the last closes its
 * descriptor.  acq_rel: the last dropper's close comes after every other
 * ring's cancel was submitted (their releases).
 */
static void pending_close_put(struct pending_close *c)
{
	if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
		return;
	close(c->fd);
	free(c);
}

/*
 * own_take_cancels - prepare the cancels other threads queued for us.
 * Relaxed load: a hint.  A cancel queued after it read false is not lost:
 * the canceller's eventfd write wakes us or leaves a CQE, and we look
 * again at the next reap, flush or park.  A queued close cancels
 * everything on its descriptor here, entering the ring at once so that
 * the cancel finds the file before the descriptor is closed.
 */
static void own_take_cancels(struct own_ring *r)
{
	uint64_t *tags;
	unsigned n;
	bool closes = false;

	if (!atomic_load_explicit(&r->cancel_pending, memory_order_relaxed))
		return;
	spin_lock(&r->cancel_lock);
	tags = r->cancels;
	n = r->ncancels;
	r->cancels = NULL;
	r->ncancels = r->cancels_cap = 0;
	/* Relaxed: under cancel_lock, which orders it for the next taker. */
	atomic_store_explicit(&r->cancel_pending, false, memory_order_relaxed);
	spin_unlock(&r->cancel_lock);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = own_sqe(r);

		if (tags[i] & QUEUED_CLOSE) {
			struct pending_close *c = (void *)(uintptr_t)(tags[i] & ~QUEUED_CLOSE);

			io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
			closes = true;
		} else {
			io_uring_prep_cancel64(sqe, tags[i], 0);
		}
		io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
	}
	if (closes) {
		own_enter(r);
		for (unsigned i = 0; i < n; i++)
			if (tags[i] & QUEUED_CLOSE)
				pending_close_put((void *)(uintptr_t)(tags[i] & ~QUEUED_CLOSE));
	}
	free(tags);
}

/*
 * own_reap - complete what the ring's CQ holds; returns the ops completed.
 * Peeks only while the CQ has entries, so that liburing never enters the
 * kernel here (it would to run pending work: IORING_SQ_TASKRUN); the
 * caller decides when that is worth a syscall.
 */
static int own_reap(struct blitz_io *io, struct own_ring *r)
{
	struct io_uring_cqe *cqes[CQE_BATCH];
	unsigned n;
	int total = 0;

	while (io_uring_cq_ready(&r->ring) &&
	       (n = io_uring_peek_batch_cqe(&r->ring, cqes, CQE_BATCH)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t tag = cqes[i]->user_data;
			int res = cqes[i]->res;

			switch (tag) {
			case TAG_INTERNAL:
				break;
			case TAG_WAKE:
				if (!(cqes[i]->flags & IORING_CQE_F_MORE))
					r->wake_armed = false;
				break;
			case TAG_SHARED:
				r->shared_armed = false;
				break;
			default:
				if (tag & TAG_MSOCK) {
					total += msock_cqe(io, r, (struct msock *)(uintptr_t)
							   (tag & ~(TAG_MSOCK | TAG_GEN_MASK)), cqes[i]);
					break;
				}
				r->in_flight--;
				io_complete(io, (struct blitz_io_op *)(uintptr_t)(tag & ~TAG_GEN_MASK), res);
				total++;
			}
		}
		io_uring_cq_advance(&r->ring, n);
	}
	return total;
}

static int shared_reap(struct blitz_io *io, uint64_t timeout_ns);

/* uring_reap_own - a worker's tick: its own ring, then the shared one if busy. */
static int uring_reap_own(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r = own_ring_of(io);
	int n;

	if (!r)
		return -1;
	own_take_cancels(r);
	if (r->unsubmitted)
		own_enter(r);
	n = own_reap(io, r);
	/*
	 * Completion work the kernel holds for us (IORING_SQ_TASKRUN; also a
	 * CQ overflow): run it now only if the CQ gave nothing; else the
	 * tasks just woken submit, and the enter at the end of this tick
	 * (flush) runs it; if they do not, the next tick's reap does.
	 * READ_ONCE is a relaxed load: a flag seen late is seen by a later
	 * reap, and a park enters the ring anyway.
	 */
	if (!n && (IO_URING_READ_ONCE(*r->ring.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW))) {
		own_enter(r);
		n = own_reap(io, r);
	}
	/* Relaxed: a hint (see uring_submit); the lock orders the reap. */
	if (atomic_load_explicit(&p->shared_in_flight, memory_order_relaxed) > 0 &&
	    !pthread_mutex_trylock(&io->reap_lock)) {
		n += shared_reap(io, 0);
		pthread_mutex_unlock(&io->reap_lock);
	}
	return n;
}

static bool uring_has_own(struct blitz_io *io)
{
	return own_ring_of(io) != NULL;
}

/*
 * uring_wait_own - the owner parks in its ring until a completion (its
 * own, or the shared ring's while that has operations in flight),
 * wake_worker() or the timeout.  The CQEs are left for the next tick's
 * reap_own(), so the tasks they wake run on this worker (LIFO slot).
 * Returns how many op completions are waiting.
 */
static int uring_wait_own(struct blitz_io *io, uint64_t timeout_ns)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r = own_ring_of(io);
	struct __kernel_timespec ts = {
		.tv_sec = (long long)(timeout_ns / 1000000000ull),
		.tv_nsec = (long long)(timeout_ns % 1000000000ull),
	};
	struct io_uring_cqe *cqes[CQE_BATCH], *cqe;
	unsigned n;
	int ops = 0;

	own_take_cancels(r);
	/*
	 * Empty the CQ first, or the wait would return at once: the wake
	 * polls' CQEs pile up while nothing is in flight (the ticks reap only
	 * then).  Ops are rare here (the tick that found no work reaped); if
	 * there are, their tasks go to the global queue (we are parking).
	 */
	ops = own_reap(io, r);
	if (ops > 0)
		return ops;
	if (!r->wake_armed) {
		/*
		 * Multishot: one CQE per eventfd write, armed until the kernel
		 * drops it (no IORING_CQE_F_MORE).  The eventfd is never read:
		 * re-armed, the poll fires at once, a harmless early return.
		 */
		struct io_uring_sqe *sqe = own_sqe(r);

		io_uring_prep_poll_multishot(sqe, r->efd, POLLIN);
		io_uring_sqe_set_data64(sqe, TAG_WAKE);
		r->wake_armed = true;
	}
	/*
	 * Watch the shared ring while it has operations.  seq_cst: our
	 * parked bit is set (idle_set_parked, seq_cst, before this call) and
	 * then we look, against an outside submitter that counts its
	 * operation and then looks at the bits for a worker to unpark
	 * (runtime_unpark_for_io): one of the two sees the other.
	 */
	if (!r->shared_armed && atomic_load(&p->shared_in_flight) > 0) {
		struct io_uring_sqe *sqe = own_sqe(r);

		io_uring_prep_poll_add(sqe, p->ring.ring_fd, POLLIN);
		io_uring_sqe_set_data64(sqe, TAG_SHARED);
		r->shared_armed = true;
	}
	/* One io_uring_enter: submit, run pending completion work, wait. */
	io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	r->unsubmitted = io_uring_sq_ready(&r->ring);
	n = io_uring_cq_ready(&r->ring) ? io_uring_peek_batch_cqe(&r->ring, cqes, CQE_BATCH) : 0;
	for (unsigned i = 0; i < n; i++)
		ops += cqes[i]->user_data > TAG_SHARED;
	return ops;
}

/* uring_wake_worker - make worker @worker's uring_wait_own() return. */
static void uring_wake_worker(struct blitz_io *io, unsigned worker)
{
	struct uring_priv *p = io->priv;
	uint64_t one = 1;

	/* EAGAIN (the counter is full) cannot happen in practice: it is never read. */
	if (write(p->own[worker].efd, &one, sizeof(one)) < 0)
		return;
}

/* uring_thread_start - worker @worker takes its ring (if there are rings). */
static void uring_thread_start(struct blitz_io *io, unsigned worker)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r;
	int err;

	if (!p->own || worker >= p->nr_own)
		return;
	r = &p->own[worker];
	/* SINGLE_ISSUER: the thread that enables the ring is its submitter. */
	err = io_uring_register(r->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	if (err < 0) {
		fprintf(stderr, "blitz: io_uring: worker %u cannot enable its ring (%s); it uses the shared one\n",
			worker, strerror(-err));
		return;
	}
	/* A registered ring descriptor spares every enter a file lookup. */
	(void)io_uring_register_ring_fd(&r->ring);
	my_ring = r;
}

/*
 * uring_thread_stop - the worker is exiting (shutdown): cancel everything
 * in its ring and collect the completions (each releases its task), for at
 * most a second; what is left is reported by io_driver_shutdown.
 */
static void uring_thread_stop(struct blitz_io *io)
{
	struct own_ring *r = own_ring_of(io);
	struct io_uring_sqe *sqe;

	if (!r)
		return;
	spin_lock(&r->cancel_lock);
	r->closed = true;	/* later cancels are covered by the one below */
	spin_unlock(&r->cancel_lock);
	own_take_cancels(r);	/* queued closes are closed */
	sqe = own_sqe(r);
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
	for (int i = 0; i < 100; i++) {
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 10000000 };
		struct io_uring_cqe *cqe;

		io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
		r->unsubmitted = io_uring_sq_ready(&r->ring);
		own_reap(io, r);
		if (r->in_flight == 0)
			break;
	}
	(void)io_uring_unregister_ring_fd(&r->ring);
	my_ring = NULL;
}

/* ---------------------------------------------------------------------- */
/* Flushing, reaping and cancelling                                        */

/*
 * uring_flush - hand the prepared entries to the kernel in one
 * io_uring_enter: the caller's own ring (which also runs its pending
 * completion work), and the shared ring's pending list.  Only a thread
 * that outlives what it submits calls it (see "The pending list").
 */
static void uring_flush(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r = own_ring_of(io);

	if (r) {
		own_take_cancels(r);
		if (r->unsubmitted)
			own_enter(r);
	}
	/*
	 * seq_cst: at a park, after the parker's bit, the other half of
	 * uring_submit's store (see there).  At a tick's end a hint: a
	 * stale false leaves the list to the next tick or park, a stale
	 * true costs one empty lock round.
	 */
	if (!atomic_load(&p->unsubmitted))
		return;
	pthread_mutex_lock(&p->sq_lock);
	/* Relaxed: under sq_lock now, which every store of the flag holds. */
	if (atomic_load_explicit(&p->unsubmitted, memory_order_relaxed)) {
		pending_write(p);
		/*
		 * What the kernel did not take stays in the queue for the
		 * next flush: a refused batch (EINTR, EBUSY), or the rest of
		 * one it stopped in (an entry that failed, without SUBMIT_ALL;
		 * out of memory with it).  The ring_enter fault refuses all.
		 */
		if (!fault_fail(FAULT_RING_ENTER))
			io_uring_submit(&p->ring);
		atomic_store_explicit(&p->unsubmitted, io_uring_sq_ready(&p->ring) != 0,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&p->sq_lock);
}

/* shared_reap - the shared ring, under reap_lock. */
static int shared_reap(struct blitz_io *io, uint64_t timeout_ns)
{
	struct uring_priv *p = io->priv;
	struct io_uring_cqe *cqes[CQE_BATCH];
	unsigned n;
	int total = 0;

	uring_flush(io);

	if (timeout_ns) {
		struct __kernel_timespec ts = {
			.tv_sec = (long long)(timeout_ns / 1000000000ull),
			.tv_nsec = (long long)(timeout_ns % 1000000000ull),
		};
		struct io_uring_cqe *cqe;

		/* With EXT_ARG this only enters the kernel to wait. */
		if (io_uring_wait_cqe_timeout(&p->ring, &cqe, &ts) < 0)
			return 0;
	}
	while ((n = io_uring_peek_batch_cqe(&p->ring, cqes, CQE_BATCH)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			struct blitz_io_op *op = io_uring_cqe_get_data(cqes[i]);
			int res = cqes[i]->res;

			io_uring_cqe_seen(&p->ring, cqes[i]);
			if (op) {
				/* Relaxed: a count (see uring_submit). */
				atomic_fetch_sub_explicit(&p->shared_in_flight, 1, memory_order_relaxed);
				io_complete(io, op, res);
				total++;
			}
		}
	}
	return total;
}

/*
 * uring_reap - the shared ring (the driver's reap_lock is held): a thread
 * that is not a worker, or a worker whose ring could not be enabled.
 */
static int uring_reap(struct blitz_io *io, uint64_t timeout_ns, unsigned max)
{
	/* Every CQE: @max is not used (see struct io_backend). */
	return shared_reap(io, timeout_ns);
}

/*
 * submit_internal_locked - a cancel of @target (0: a NOP) in the shared
 * ring, submitted now by any thread (under sq_lock): it completes during
 * the enter, and the queue holds nothing else (see "The pending list").
 */
static void submit_internal_locked(struct uring_priv *p, uint64_t target)
{
	struct io_uring_sqe *sqe = get_sqe(p);

	if (target)
		io_uring_prep_cancel64(sqe, target, 0);
	else
		io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, NULL);
	io_uring_submit(&p->ring);
}

static void submit_internal(struct uring_priv *p, uint64_t target)
{
	pthread_mutex_lock(&p->sq_lock);
	submit_internal_locked(p, target);
	pthread_mutex_unlock(&p->sq_lock);
}

/*
 * shared_cancel - cancel @op in the shared ring: taken off the pending
 * list if it is still there (it completes here), else cancelled in the
 * kernel.  Under sq_lock, which the flusher holds to move it from one to
 * the other (and to rewrite its ring_tag).
 */
static void shared_cancel(struct blitz_io *io, struct blitz_io_op *op)
{
	struct uring_priv *p = io->priv;
	struct blitz_io_op *taken = NULL;

	pthread_mutex_lock(&p->sq_lock);
	if (op->ring_tag & PENDING_LINK)
		taken = pending_take(p, op, -1);
	else
		submit_internal_locked(p, op->ring_tag);
	pthread_mutex_unlock(&p->sq_lock);
	pending_cancel(io, taken);
}

/*
 * shared_cancel_fd - cancel everything on @fd in the shared ring, now:
 * what waits on the pending list completes here (it would otherwise be
 * submitted after the close, on no file or on another one).
 */
static void shared_cancel_fd(struct blitz_io *io, int fd)
{
	struct uring_priv *p = io->priv;
	struct blitz_io_op *taken;
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&p->sq_lock);
	taken = pending_take(p, NULL, fd);
	sqe = get_sqe(p);
	io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
	io_uring_sqe_set_data(sqe, NULL);
	io_uring_submit(&p->ring);
	pthread_mutex_unlock(&p->sq_lock);
	pending_cancel(io, taken);
}

/*
 * queue_for_owner - hand @tag (an op's tag, or QUEUED_CLOSE with a close)
 * to @r's owner and wake it; false if it has exited or there is no memory.
 */
static bool queue_for_owner(struct blitz_io *io, struct own_ring *r, uint64_t tag)
{
	struct uring_priv *p = io->priv;
	bool queued = false;

	spin_lock(&r->cancel_lock);
	if (!r->closed) {
		if (r->ncancels == r->cancels_cap) {
			unsigned cap = r->cancels_cap ? 2 * r->cancels_cap : 16;
			uint64_t *t = realloc(r->cancels, cap * sizeof(*t));

			if (!t) {
				spin_unlock(&r->cancel_lock);
				fprintf(stderr, "blitz: io_uring: no memory to queue a cancel\n");
				return false;
			}
			r->cancels = t;
			r->cancels_cap = cap;
		}
		r->cancels[r->ncancels++] = tag;
		/* Relaxed: under cancel_lock; the owner's read is a hint. */
		atomic_store_explicit(&r->cancel_pending, true, memory_order_relaxed);
		queued = true;
	}
	spin_unlock(&r->cancel_lock);
	if (queued)
		uring_wake_worker(io, (unsigned)(r - p->own));
	return queued;
}

/*
 * uring_cancel - the operation completes with -ECANCELED (or its result,
 * if it won the race).  The caller is @op's task, so @op is not resubmitted
 * meanwhile and its ring and tag are those of the pending submission (in
 * the shared ring the tag changes once, under sq_lock, when a worker
 * submits it: shared_cancel).  In another worker's ring the cancel is
 * queued for the owner (see the top); if that fails, the op completes by
 * itself, or at shutdown.
 */
static void uring_cancel(struct blitz_io *io, struct blitz_io_op *op)
{
	struct uring_priv *p = io->priv;

	if (op->ring == RING_MSOCK) {
		msock_cancel(io, op);
		return;
	}
	if (op->ring < 0 || !p->own) {
		shared_cancel(io, op);
		return;
	}
	cancel_in_ring(io, op->ring, op->ring_tag);
}

/* cancel_in_ring - cancel @tag in worker @ring's ring: now if it is ours, else queued. */
static void cancel_in_ring(struct blitz_io *io, int32_t ring, uint64_t tag)
{
	struct uring_priv *p = io->priv;
	struct own_ring *r = &p->own[ring];

	if (r == my_ring) {
		struct io_uring_sqe *sqe = own_sqe(r);	/* submitted by the tick's flush */

		io_uring_prep_cancel64(sqe, tag, 0);
		io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
		return;
	}
	queue_for_owner(io, r, tag);
}

/*
 * pending_close_new - queue a cancel of everything on @fd to every worker
 * ring but @mine.  The queued cancels name a duplicate of @fd (the same
 * file), so that the caller closes @fd itself at once; out of descriptors,
 * they name @fd, which the last of them then closes.  Returns the close
 * holding the caller's reference, or NULL if no ring took it.
 */
static struct pending_close *pending_close_new(struct blitz_io *io, struct own_ring *mine, int fd)
{
	struct uring_priv *p = io->priv;
	struct pending_close *c = malloc(sizeof(*c));
	bool queued = false;

	if (!c)
		return NULL;
	atomic_init(&c->refs, 1);
	c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (c->fd < 0)
		c->fd = fd;
	for (unsigned i = 0; i < p->nr_own; i++) {
		if (&p->own[i] == mine)
			continue;
		/* Relaxed: the queue's lock publishes @c to the owner. */
		atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
		if (queue_for_owner(io, &p->own[i], QUEUED_CLOSE | (uint64_t)(uintptr_t)c))
			queued = true;
		else
			atomic_fetch_sub_explicit(&c->refs, 1, memory_order_relaxed);
	}
	if (queued)
		return c;
	if (c->fd != fd)
		close(c->fd);
	free(c);
	return NULL;
}

/*
 * uring_close - blitz_net_close(): cancel every operation on @fd in every
 * ring that may hold one, then close it.  The cancels in the caller's own
 * ring and in the shared ring are submitted now; the other workers' rings
 * get a pending_close, whose descriptor the last of them closes.
 */
static int uring_close(struct blitz_io *io, int fd)
{
	struct uring_priv *p = io->priv;
	struct own_ring *mine = own_ring_of(io);
	struct pending_close *c = NULL;
	int res;

	if (fcntl(fd, F_GETFD) < 0)
		return -errno;
	msock_close(p, fd);
	if (p->nr_own > (mine ? 1u : 0u))
		c = pending_close_new(io, mine, fd);
	if (mine) {
		struct io_uring_sqe *sqe = own_sqe(mine);

		io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
		io_uring_sqe_set_data64(sqe, TAG_INTERNAL);
		own_enter(mine);
	}
	/* Relaxed: a hint; an op submitted there concurrently is the caller's race. */
	if (atomic_load_explicit(&p->shared_in_flight, memory_order_relaxed) > 0)
		shared_cancel_fd(io, fd);
	if (c && c->fd == fd) {
		pending_close_put(c);	/* out of descriptors: closed by the last ring */
		return 0;
	}
	res = close(fd) < 0 ? -errno : 0;
	if (c)
		pending_close_put(c);
	return res;
}

/*
 * uring_cancel_all - shutdown, after the workers have exited (each drained
 * its own ring): cancel everything in the shared ring (IORING_ASYNC_CANCEL_ANY,
 * kernel 5.19) and what is still on its pending list, and complete what a
 * worker's ring still holds in its CQ (reading a CQ needs no enter; what
 * did not finish is reported).
 */
static void uring_cancel_all(struct blitz_io *io)
{
	struct uring_priv *p = io->priv;
	struct blitz_io_op *taken;
	struct io_uring_sqe *sqe;

	for (unsigned i = 0; i < p->nr_own; i++)
		if (p->own[i].in_flight > 0)
			own_reap(io, &p->own[i]);
	pthread_mutex_lock(&p->sq_lock);
	taken = p->pending_head;	/* never submitted: they complete here */
	p->pending_head = p->pending_tail = NULL;
	sqe = get_sqe(p);
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data(sqe, NULL);
	/* Relaxed: under sq_lock; this submits a refused batch too. */
	atomic_store_explicit(&p->unsubmitted, false, memory_order_relaxed);
	io_uring_submit(&p->ring);
	pthread_mutex_unlock(&p->sq_lock);
	pending_cancel(io, taken);
}

/* A NOP's completion makes a waiting reaper (of the shared ring) return. */
static void uring_wake(struct blitz_io *io)
{
	submit_internal(io->priv, 0);
}

const struct io_backend io_uring_backend = {
	.kind = BLITZ_BACKEND_IO_URING,
	.caps = IO_CAP_FILES,
	.init = uring_init,
	.deinit = uring_deinit,
	.submit = uring_submit,
	.reap = uring_reap,
	.cancel = uring_cancel,
	.wake = uring_wake,
	.flush = uring_flush,
	.cancel_all = uring_cancel_all,
	.close = uring_close,
	.own = uring_own,
	.thread_start = uring_thread_start,
	.thread_stop = uring_thread_stop,
	.reap_own = uring_reap_own,
	.has_own = uring_has_own,
	.wait_own = uring_wait_own,
	.wake_worker = uring_wake_worker,
};
