// SPDX-License-Identifier: MIT
/*
 * core/trace/event_ring.c - the ring transport of the event log
 * (event_ring.h): making a worker's ring, committing a log, waiting for
 * or dropping past a reader that fell behind, and the flight recorder's
 * dump of every ring of the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "../clock.h"
#include "../probes.h"
#include "event_ring.h"
#include "tick_clock.h"

/*
 * The process's rings, for the dump.  A flag, not a mutex: the dump may
 * run in a signal handler (BLITZ_FLIGHT_SIGNAL), which only tries it.
 */
static atomic_flag rings_busy = ATOMIC_FLAG_INIT;
static struct event_ring *rings;

static void rings_lock(void)
{
	/* Acquire: the list's writes of the holder before us. */
	while (atomic_flag_test_and_set_explicit(&rings_busy, memory_order_acquire))
		sched_yield();
}

static void rings_unlock(void)
{
	atomic_flag_clear_explicit(&rings_busy, memory_order_release);
}

static struct blitz_event_log *slot(const struct blitz_event_ring *shm, uint64_t n)
{
	return (struct blitz_event_log *)((char *)shm + BLITZ_EVENT_RING_HEAD +
					  ((n - 1) % shm->logs) * shm->log_bytes);
}

/*
 * event_ring_create - @r's ring of @bytes (rounded down to whole logs, at
 * least two), in a memfd named "blitz-events" that a reader finds in
 * /proc/PID/fd.  0, or -errno with nothing made.
 */
int event_ring_create(struct event_ring *r, size_t bytes, int worker, unsigned workers,
		      uint64_t runtime)
{
	size_t logs = bytes > BLITZ_EVENT_RING_HEAD ?
		      (bytes - BLITZ_EVENT_RING_HEAD) / sizeof(struct blitz_event_log) : 0;
	struct blitz_event_ring *shm;
	int fd, err;

	if (logs < 2)
		logs = 2;
	if (logs > UINT32_MAX)
		return -EINVAL;
	bytes = BLITZ_EVENT_RING_HEAD + logs * sizeof(struct blitz_event_log);
	fd = memfd_create("blitz-events", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)bytes)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Populated: a first write to each page would fault, microseconds each, inside the window. */
	shm = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (shm == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	memset(r, 0, sizeof(*r));
	r->shm = shm;
	r->bytes = bytes;
	r->fd = fd;
	r->logs = (uint32_t)logs;
	shm->version = BLITZ_EVENTS_VERSION;
	shm->logs = (unsigned)logs;
	shm->log_bytes = sizeof(struct blitz_event_log);
	shm->worker = worker;
	shm->workers = workers;
	shm->pid = (unsigned)getpid();
	shm->runtime = runtime;
	/*
	 * Release: a reader that finds the memfd in /proc before we are done
	 * (it is there from memfd_create) sees the magic only after the rest.
	 */
	__atomic_store_n(&shm->magic, BLITZ_EVENT_RING_MAGIC, __ATOMIC_RELEASE);
	rings_lock();
	r->next = rings;
	rings = r;
	rings_unlock();
	return 0;
}

/*
 * unclaimed - does @shm hold what no reader has mapped yet (records
 * committed, dropped, or in the log being written) while a tracer holds
 * event_ring's semaphore?  Its reader finds it from the announcement, at
 * its own pace; once it has claimed the ring (reader, acquire: written
 * after its mapping), its mapping outlives ours and the process.
 */
static bool unclaimed(const struct blitz_event_ring *shm)
{
	const struct blitz_event_log *open;

	if (!BLITZ_EVENT_RING_ENABLED() ||
	    __atomic_load_n(&shm->mode, __ATOMIC_RELAXED) == BLITZ_RING_OVERWRITE ||
	    __atomic_load_n(&shm->reader, __ATOMIC_ACQUIRE))
		return false;
	open = slot(shm, __atomic_load_n(&shm->produced, __ATOMIC_ACQUIRE) + 1);
	return __atomic_load_n(&shm->produced, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&shm->lost, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&open->head.count, __ATOMIC_ACQUIRE);
}

/*
 * ring_fire - event_ring for @r, from any thread: the ring's descriptor
 * and size are fixed from its making to event_ring_destroy.
 */
static void ring_fire(const struct event_ring *r)
{
	BLITZ_EVENT_RING(r->shm->worker, r->shm->runtime, r->fd, (uint64_t)r->bytes);
}

/*
 * wait_claimed - until @r's reader has claimed it, or @deadline (ns):
 * without it a program that ends (or frees its runtime) before the reader
 * got to its ring takes the ring's records with it, uncounted.  Announced
 * again at every look: the worker that announced it is gone or stopped,
 * and the announcement its reader would have taken may have come while
 * the probe's program was not yet on (its semaphore rises first).
 */
static void wait_claimed(const struct event_ring *r, uint64_t deadline)
{
	struct timespec ms = { 0, 1000000 };

	while (unclaimed(r->shm) && clock_now_ns() < deadline) {
		ring_fire(r);
		nanosleep(&ms, NULL);
	}
}

/*
 * event_ring_wait_readers - the process exits: every ring's reader has
 * claimed it, or @deadline passed (exit_flush.c).  The list is tried, not
 * waited for, as a dump tries it.
 */
void event_ring_wait_readers(uint64_t deadline)
{
	if (!BLITZ_EVENT_RING_ENABLED() ||
	    atomic_flag_test_and_set_explicit(&rings_busy, memory_order_acquire))
		return;
	for (struct event_ring *r = rings; r; r = r->next)
		wait_claimed(r, deadline);
	rings_unlock();
}

/*
 * event_ring_announce_unclaimed - fire event_ring for every ring of the
 * process that holds records nobody claimed, from the thread that waits
 * at the exit for the workers (exit_flush.c): a worker held in a poll
 * announces nothing, and its reader may have missed its announcement.
 * The list is tried, not waited for.
 */
void event_ring_announce_unclaimed(void)
{
	if (!BLITZ_EVENT_RING_ENABLED() ||
	    atomic_flag_test_and_set_explicit(&rings_busy, memory_order_acquire))
		return;
	for (struct event_ring *r = rings; r; r = r->next)
		if (unclaimed(r->shm))
			ring_fire(r);
	rings_unlock();
}

/*
 * event_ring_destroy - @r's ring goes (its worker is freed), once its
 * reader has claimed it (1 s at most, EVENT_RING_CLAIM_NS): the reader's
 * mapping stays valid.
 */
void event_ring_destroy(struct event_ring *r)
{
	if (!r->shm)
		return;
	wait_claimed(r, clock_now_ns() + EVENT_RING_CLAIM_NS);
	rings_lock();
	for (struct event_ring **at = &rings; *at; at = &(*at)->next)
		if (*at == r) {
			*at = r->next;
			break;
		}
	rings_unlock();
	munmap(r->shm, r->bytes);
	close(r->fd);
	r->shm = NULL;
}

/*
 * event_ring_open - a window starts on @r in @mode: empty, with the
 * window's number raised, so that a reader of the last one starts over.
 * Before the window's first log is handed out and before it is announced:
 * a reader maps it only after event_ring fires.
 */
void event_ring_open(struct event_ring *r, enum blitz_event_ring_mode mode)
{
	struct blitz_event_ring *shm = r->shm;

	r->produced = 0;
	r->lost = r->lost_from = r->lost_to = 0;
	r->stalled = false;
	r->announced = 0;
	__atomic_store_n(&shm->produced, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&shm->lost, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&shm->consumed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&shm->mode, (unsigned)mode, __ATOMIC_RELAXED);
	__atomic_store_n(&shm->block_ms, EVENT_RING_BLOCK_MS, __ATOMIC_RELAXED);
	__atomic_store_n(&shm->reader, 0, __ATOMIC_RELAXED);
	/* Release: a reader that sees the new window sees it empty. */
	__atomic_store_n(&shm->window, shm->window + 1, __ATOMIC_RELEASE);
}

/*
 * event_ring_announce - fire event_ring for a reader to find the ring: at
 * the window's start (@now_ns 0), then every EVENT_RING_UNCLAIMED_NS
 * until a reader claims it, then every BLITZ_EVENT_FLUSH_NS (a reader
 * that attached later).  A reader's probe may miss the first: the kernel
 * raises the semaphore before the tool's program is on, and an idle
 * worker's tick may fall in between.  Relaxed on reader: a hint.
 */
void event_ring_announce(struct event_ring *r, uint64_t now_ns)
{
	if (now_ns && (now_ns - r->announced < EVENT_RING_UNCLAIMED_NS ||
		       (now_ns - r->announced < BLITZ_EVENT_FLUSH_NS &&
			__atomic_load_n(&r->shm->reader, __ATOMIC_RELAXED))))
		return;
	r->announced = now_ns ? now_ns : clock_now_ns();
	ring_fire(r);
}

/* nap - BLITZ_RING_BLOCK's wait between looks: yield a few times, then sleep 20 us. */
static void nap(unsigned *naps)
{
	struct timespec ts = { 0, 20000 };

	if ((*naps)++ < 8)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

/*
 * room - is the slot of the next log free (its last log consumed)?
 * BLITZ_RING_BLOCK waits for it, block_ms at most, and after a wait that
 * ran out does not wait again until the reader has moved.  Acquire on
 * consumed: the reader's reads of the slot are done before we overwrite it.
 */
static bool room(struct event_ring *r, uint64_t *waited_ns)
{
	struct blitz_event_ring *shm = r->shm;
	unsigned mode = __atomic_load_n(&shm->mode, __ATOMIC_RELAXED), naps = 0;
	uint64_t consumed = __atomic_load_n(&shm->consumed, __ATOMIC_ACQUIRE), since;

	if (mode == BLITZ_RING_OVERWRITE || r->produced - consumed < r->logs) {
		r->stalled = false;
		return true;
	}
	if (mode != BLITZ_RING_BLOCK || (r->stalled && consumed == r->stall_at))
		return false;
	since = clock_now_ns();
	for (;;) {
		nap(&naps);
		event_ring_announce(r, clock_now_ns());	/* a reader that missed it */
		consumed = __atomic_load_n(&shm->consumed, __ATOMIC_ACQUIRE);
		if (r->produced - consumed < r->logs) {
			r->stalled = false;
			*waited_ns = clock_now_ns() - since;
			return true;
		}
		if (clock_now_ns() - since >=
		    __atomic_load_n(&shm->block_ms, __ATOMIC_RELAXED) * 1000000ull) {
			r->stalled = true;
			r->stall_at = consumed;
			return false;
		}
	}
}

/*
 * head_fill - a slot's head @h from the worker's @src, all but seq and
 * count, which a dump reads at any time (copy_log) and so are written
 * only atomically, by the caller.  The rest a dump reads only once it
 * has acquired a count above 0, stored (with release) after these.
 */
static void head_fill(struct blitz_event_log_head *h, const struct blitz_event_log_head *src)
{
	h->size = src->size;
	h->capacity = src->capacity;
	h->worker = src->worker;
	h->workers = src->workers;
	h->thread = src->thread;
	h->version = src->version;
	h->runtime = src->runtime;
	h->ticks_mult = src->ticks_mult;
	__atomic_store_n(&h->flushed, src->flushed, __ATOMIC_RELAXED);
	h->pid = src->pid;
}

/*
 * next_log - where the worker's next records go: the next slot, its head
 * @scratch's (the worker's header) with seq 0 and the records dropped
 * before it, and first a reader_wait record if the worker waited for the
 * slot; or, without room, @scratch itself, whose records will be counted
 * lost.  seq goes to 0 before anything else of the slot is written (the
 * release fence): a dump that copies the slot meanwhile sees it change
 * (event_ring_dump_fd).  The log's head.count is its records so far.
 */
static struct blitz_event_log *next_log(struct event_ring *r, struct blitz_event_log *scratch)
{
	struct blitz_event_log *l;
	uint64_t waited = 0;

	if (!room(r, &waited)) {
		__atomic_store_n(&scratch->head.count, 0, __ATOMIC_RELAXED);
		return scratch;
	}
	l = slot(r->shm, r->produced + 1);
	__atomic_store_n(&l->head.seq, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&l->head.count, 0, __ATOMIC_RELAXED);
	atomic_thread_fence(memory_order_release);
	head_fill(&l->head, &scratch->head);
	l->head.lost = r->lost;
	l->head.lost_from = r->lost_from;
	l->head.lost_to = r->lost_to;
	r->lost = r->lost_from = r->lost_to = 0;
	if (waited) {
		l->rec[0] = (struct blitz_event){ .ticks = tick_clock_now(), .type = BLITZ_EVENT_READER_WAIT,
						  .arg = waited, .peer = -1 };
		__atomic_store_n(&l->head.count, 1, __ATOMIC_RELEASE);
	}
	return l;
}

/*
 * event_ring_commit - the worker's log @buf is done (its head.count
 * records; @ticks: now): a slot is committed (head.seq, then produced,
 * with release: the records before the number that the reader acquires);
 * @scratch's records are counted lost, with their span.  Returns where the
 * next records go (next_log).  @buf NULL: the window's first log.
 */
struct blitz_event_log *event_ring_commit(struct event_ring *r, struct blitz_event_log *buf,
					  struct blitz_event_log *scratch, uint64_t ticks)
{
	uint32_t n = buf ? buf->head.count : 0;

	if (buf == scratch && n) {
		if (!r->lost)
			r->lost_from = scratch->rec[0].ticks;
		r->lost_to = scratch->rec[n - 1].ticks;
		r->lost += n;
		__atomic_store_n(&r->shm->lost, r->shm->lost + n, __ATOMIC_RELAXED);
	} else if (buf && buf != scratch) {
		__atomic_store_n(&buf->head.flushed, ticks, __ATOMIC_RELAXED);	/* a dump reads it */
		__atomic_store_n(&buf->head.seq, ++r->produced, __ATOMIC_RELEASE);
		__atomic_store_n(&r->shm->produced, r->produced, __ATOMIC_RELEASE);
	}
	return next_log(r, scratch);
}

/*
 * event_ring_settle - the window ends (the worker exits) with records
 * dropped since its last log (@scratch, in use, holds none: the caller
 * committed it): a last, empty log says so, once a slot is free.  It
 * waits block_ms for one even after a wait that ran out (the reader may
 * be back by now); without a slot the count stays in shm->lost alone.
 * Returns where records would go next.
 */
struct blitz_event_log *event_ring_settle(struct event_ring *r, struct blitz_event_log *buf,
					  struct blitz_event_log *scratch, uint64_t ticks)
{
	if (!r->lost)
		return buf;
	if (buf == scratch) {
		r->stalled = false;
		buf = next_log(r, scratch);
	}
	return buf == scratch ? buf : event_ring_commit(r, buf, scratch, ticks);
}

/* ---------------------------------------------------------------------- */
/* The dump                                                                */

/* The dump's copy of one log (under rings_busy). */
static struct blitz_event_log dump_copy;

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * copy_log - log @n of @shm (@open: the one being written, seq 0) into
 * dump_copy, if the worker did not retake its slot meanwhile: the
 * slot's seq is read before (acquire: the records written before it) and
 * after the copy (the fence: after the copy's reads), as a seqlock's
 * reader does.  A committed log must keep seq n; the open one may be
 * committed meanwhile (n), which only adds to it.
 */
static bool copy_log(const struct blitz_event_ring *shm, uint64_t n, bool open)
{
	const struct blitz_event_log *l = slot(shm, n);
	struct blitz_event_log_head *h = &dump_copy.head;
	uint64_t seq = __atomic_load_n(&l->head.seq, __ATOMIC_ACQUIRE), after;
	uint32_t count = __atomic_load_n(&l->head.count, __ATOMIC_ACQUIRE);

	if (seq != (open ? 0 : n) || !count || count > BLITZ_EVENT_LOG_RECORDS)
		return false;
	/*
	 * Field by field: the worker writes seq, count and flushed while the
	 * slot is open (atomically); the rest as it takes the slot, before
	 * the count acquired above (head_fill).  A slot the worker takes
	 * again during the copy (it wrote a whole ring meanwhile) is caught
	 * by the seq check after it, as a seqlock's reader's is.
	 */
	*h = (struct blitz_event_log_head){
		.size = l->head.size, .capacity = l->head.capacity, .worker = l->head.worker,
		.workers = l->head.workers, .thread = l->head.thread, .version = l->head.version,
		.runtime = l->head.runtime, .seq = n, .ticks_mult = l->head.ticks_mult,
		.flushed = __atomic_load_n(&l->head.flushed, __ATOMIC_RELAXED), .count = count,
		.pid = l->head.pid, .lost = l->head.lost, .lost_from = l->head.lost_from,
		.lost_to = l->head.lost_to,
	};
	memcpy(dump_copy.rec, l->rec, count * sizeof(struct blitz_event));
	atomic_thread_fence(memory_order_acquire);
	after = __atomic_load_n(&l->head.seq, __ATOMIC_RELAXED);
	return after == seq || (open && after == n);
}

/* dump_ring - @shm's logs still in its slots, oldest first, and the one being written. */
static int dump_ring(int fd, const struct blitz_event_ring *shm, unsigned *logs)
{
	uint64_t produced = __atomic_load_n(&shm->produced, __ATOMIC_ACQUIRE);
	uint64_t first = produced + 2 > shm->logs ? produced + 2 - shm->logs : 1;
	int err;

	for (uint64_t n = first; n <= produced + 1; n++) {
		if (!copy_log(shm, n, n == produced + 1))
			continue;
		err = write_all(fd, &dump_copy, sizeof(dump_copy.head) +
				dump_copy.head.count * sizeof(struct blitz_event));
		if (err)
			return err;
		(*logs)++;
	}
	return 0;
}

/*
 * event_ring_dump_fd - every ring of the process, as a trace file
 * (<blitz/trace/events.h>), to @fd: the number of logs written, -ENODATA if
 * there is no ring, -EBUSY if another dump or a ring's making holds the
 * list for 100 ms, or the write's -errno.  Only write(2) and memory
 * reads: a signal handler may call it.
 */
int event_ring_dump_fd(int fd)
{
	struct blitz_event_file_head fh = {
		.magic = BLITZ_EVENT_FILE_MAGIC, .version = BLITZ_EVENTS_VERSION,
		.head_size = sizeof(struct blitz_event_log_head),
		.record_size = sizeof(struct blitz_event),
	};
	struct timespec ms = { 0, 1000000 };
	unsigned logs = 0;
	int err, tries = 0;

	while (atomic_flag_test_and_set_explicit(&rings_busy, memory_order_acquire)) {
		if (++tries > 100)
			return -EBUSY;
		nanosleep(&ms, NULL);
	}
	err = rings ? write_all(fd, &fh, sizeof(fh)) : -ENODATA;
	for (struct event_ring *r = rings; r && !err; r = r->next)
		err = dump_ring(fd, r->shm, &logs);
	rings_unlock();
	return err ? err : (int)logs;
}
