// SPDX-License-Identifier: MIT
/*
 * tools/events_ring.c - the workers' rings.  A worker writes its logs
 * into a ring in a memfd and announces it at event_ring (on_note); this
 * tool maps it from /proc/PID/fd, becomes its reader (its mode and wait
 * set, put back as the tool leaves: ring_release) and reads the logs
 * committed there in place, each slot handed back once read
 * (ring_free_upto).  A slot is log n once its seq is n (acquire); one
 * holding another was overwritten, and is skipped: the next log's seq
 * tells the gap.  A ring has one reader: another live one keeps it.  The
 * rings of a process that exited are read to the end (ring_finish) and
 * unmapped (rings_gone).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "array.h"
#include "print_loop.h"
#include "events.h"
#include "events_log.h"
#include "events_opts.h"
#include "events_ring.h"
#include "events_state.h"

/* The state, for the exit handler that lets the rings go (rings_release). */
struct state *the_state;

const struct blitz_event_log *ring_slot(const struct blitz_event_ring *r, __u64 n)
{
	return (const void *)((const char *)r + BLITZ_EVENT_RING_HEAD +
			      (size_t)((n - 1) % r->logs) * r->log_bytes);
}

/* ring_check - NULL if @r (@bytes mapped) is a ring this tool reads, else why not. */
static const char *ring_check(const struct blitz_event_ring *r, size_t bytes)
{
	static char why[96];

	/* Acquire: the worker publishes the magic last, once the rest is set. */
	if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != BLITZ_EVENT_RING_MAGIC)
		return "not an event ring (bad magic)";
	if (r->version != BLITZ_EVENTS_VERSION) {
		snprintf(why, sizeof(why), "an event ring of layout version %u (this tool reads %u)",
			 r->version, BLITZ_EVENTS_VERSION);
		return why;
	}
	if (r->log_bytes != sizeof(struct blitz_event_log) || !r->logs ||
	    BLITZ_EVENT_RING_HEAD + (__u64)r->logs * r->log_bytes > bytes) {
		snprintf(why, sizeof(why), "an event ring of %u logs of %u bytes in %zu bytes",
			 r->logs, r->log_bytes, bytes);
		return why;
	}
	return NULL;
}

/*
 * ring_open - map the memfd that process @tgid holds as descriptor @fd
 * (@bytes of it, 0: all), read-write or only read; its device and inode
 * in *@sb.  NULL with *@why set if it is not a ring ("" if it is not even
 * a "blitz-events" memfd).
 */
void *ring_open(__u32 tgid, int fd, bool writable, size_t *bytes, struct stat *sb,
		       const char **why)
{
	char path[64], link[128];
	ssize_t len;
	void *map;
	int mfd;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", tgid, fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0) {
		/* Closed since it was listed: nothing to read there. */
		*why = errno == ENOENT ? "" : strerror(errno);
		return NULL;
	}
	link[len] = '\0';
	if (strncmp(link, "/memfd:blitz-events", strlen("/memfd:blitz-events"))) {
		*why = "";
		return NULL;
	}
	mfd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (mfd < 0 || fstat(mfd, sb)) {
		*why = strerror(errno);
		if (mfd >= 0)
			close(mfd);
		return NULL;
	}
	if (!*bytes)
		*bytes = (size_t)sb->st_size;
	if (*bytes < BLITZ_EVENT_RING_HEAD || (off_t)*bytes > sb->st_size) {
		close(mfd);
		*why = "shorter than an event ring";
		return NULL;
	}
	map = mmap(NULL, *bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, mfd, 0);
	close(mfd);
	if (map == MAP_FAILED) {
		*why = strerror(errno);
		return NULL;
	}
	*why = ring_check(map, *bytes);
	if (*why) {
		munmap(map, *bytes);
		return NULL;
	}
	return map;
}

/* ring_claim - @m is read by this tool, in its mode, with its wait. */
static void ring_claim(const struct state *st, struct blitz_event_ring *m)
{
	__atomic_store_n(&m->block_ms, st->block_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&m->mode, st->mode, __ATOMIC_RELEASE);
	__atomic_store_n(&m->reader, (__u32)getpid(), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * ring_attach - @r is mapped: become its reader (unless another live one
 * is), with this tool's mode and wait, and start at the first log not
 * released.  False (and unmapped) if another reader has it.
 */
static bool ring_attach(struct state *st, struct ring *r, const char **why)
{
	struct blitz_event_ring *m = r->map;
	__u32 reader = __atomic_load_n(&m->reader, __ATOMIC_ACQUIRE);

	if (reader && reader != (__u32)getpid() && !pid_gone(reader)) {
		static char busy[64];

		snprintf(busy, sizeof(busy), "another reader has it (PID %u)", reader);
		*why = busy;
		return false;
	}
	r->mode0 = __atomic_load_n(&m->mode, __ATOMIC_RELAXED);
	r->block0 = __atomic_load_n(&m->block_ms, __ATOMIC_RELAXED);
	ring_claim(st, m);
	r->window = __atomic_load_n(&m->window, __ATOMIC_ACQUIRE);
	r->consumed = __atomic_load_n(&m->consumed, __ATOMIC_ACQUIRE);
	r->next = r->consumed + 1;
	r->backlog = r->mode0 == BLITZ_RING_OVERWRITE;
	r->finished = false;
	return true;
}

/* ring_release - @r's mode and wait as found, no reader; unmapped. */
static void ring_release(struct ring *r)
{
	struct blitz_event_ring *m = r->map;

	if (!m)
		return;
	__atomic_store_n(&m->block_ms, r->block0, __ATOMIC_RELAXED);
	__atomic_store_n(&m->mode, r->mode0, __ATOMIC_RELEASE);
	__atomic_store_n(&m->reader, 0, __ATOMIC_RELEASE);
	munmap(m, r->bytes);
	r->map = NULL;
}

/*
 * ring_free_upto - logs up to @n are read: their slots go back to the
 * worker.  A compare-and-swap from what this tool stored last, so that a
 * worker that restarted the count (a new window) is not handed a stale
 * one.
 */
static void ring_free_upto(struct ring *r, __u64 n)
{
	__u64 expected = r->consumed;

	if (__atomic_compare_exchange_n(&r->map->consumed, &expected, n, false, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		r->consumed = n;
	else
		r->consumed = expected;
}

/*
 * ring_take - the logs @r's worker committed and this tool has not read,
 * @max at most, each freed once read.  A slot whose seq is not its log's
 * was overwritten (the flight recorder keeps the newest): skipped, the
 * next log's seq tells the gap (log_take).  Returns the logs read.
 */
static __u64 ring_take(struct state *st, struct ring *r, __u64 max)
{
	struct blitz_event_ring *m = r->map;
	__u64 window = __atomic_load_n(&m->window, __ATOMIC_ACQUIRE), produced, taken = 0;

	if (window != r->window) {
		/*
		 * A new window: the worker counts its logs from 1 again, in its
		 * own mode and with no reader, until this tool claims it again.
		 */
		r->window = window;
		r->next = 1;
		r->told = 0;
		if (!st->leaving)
			ring_claim(st, m);
		r->consumed = __atomic_load_n(&m->consumed, __ATOMIC_ACQUIRE);
	}
	produced = __atomic_load_n(&m->produced, __ATOMIC_ACQUIRE);
	if (produced + 1 < r->next)
		return 0;	/* a window restarting: its new number is not out yet */
	/*
	 * A flight recorder's ring, as the tool found it: its worker may be
	 * writing the oldest slot again (it saw the mode after it took it);
	 * start past it.
	 */
	if (r->backlog) {
		r->backlog = false;
		if (produced - r->next + 1 >= m->logs) {
			r->next = produced + 2 - m->logs;
			ring_free_upto(r, r->next - 1);
		}
	}
	while (r->next <= produced && taken < max) {
		__u64 n = r->next;
		const struct blitz_event_log *s = ring_slot(m, n);

		if (__atomic_load_n(&s->head.seq, __ATOMIC_ACQUIRE) == n) {
			struct blitz_event_log_head h = s->head;

			if (!h.pid)
				h.pid = r->tgid;
			if (h.count > BLITZ_EVENT_LOG_RECORDS)
				h.count = BLITZ_EVENT_LOG_RECORDS;
			if (consume_log(st, &h, s->rec, h.count)) {
				st->logs++;
				st->ring_logs++;
			}
			r->told += h.lost;
			r->last = h;
			r->last.flushed = h.count ? s->rec[h.count - 1].ticks : h.flushed;
		}
		r->next++;
		taken++;
		ring_free_upto(r, n);
	}
	return taken;
}

/*
 * ring_finish - the tool is done with @r (its process exited, or the
 * tool leaves): the logs committed, then the log its worker is writing,
 * up to the records published (head.count, acquire: a record is written
 * before the count that covers it), then the records it dropped that no
 * log read has told (its next log would: ring->lost counts them all), as
 * a span after the last record read.  Once: the tool's last print and
 * the pass over the processes gone may both come to a ring, and the log
 * being written, read in place, would be read twice.
 */
void ring_finish(struct state *st, struct ring *r)
{
	const struct blitz_event_log *s;
	struct blitz_event_log_head h;
	__u64 lost;
	__u32 count;

	if (r->finished)
		return;
	r->finished = true;
	ring_take(st, r, ~0ull);
	s = ring_slot(r->map, r->next);
	lost = __atomic_load_n(&r->map->lost, __ATOMIC_ACQUIRE);
	if (!__atomic_load_n(&s->head.seq, __ATOMIC_ACQUIRE) &&
	    (count = __atomic_load_n(&s->head.count, __ATOMIC_ACQUIRE))) {
		h = s->head;
		h.seq = r->next;
		h.count = count < BLITZ_EVENT_LOG_RECORDS ? count : BLITZ_EVENT_LOG_RECORDS;
		h.flushed = 0;
		if (!h.pid)
			h.pid = r->tgid;
		if (consume_log(st, &h, s->rec, h.count)) {
			st->logs++;
			st->ring_logs++;
		}
		r->told += h.lost;
		r->last = h;
		r->last.flushed = s->rec[h.count - 1].ticks;
	}
	h = r->last;
	if (lost <= r->told || !h.size)
		return;
	h.count = 0;
	h.lost = lost - r->told;
	h.lost_from = h.lost_to = h.flushed;
	h.flushed = 0;
	consume_log(st, &h, NULL, 0);
	r->told = lost;
}

/* rings_take - a pass over every mapped ring; the logs read. */
__u64 rings_take(struct state *st)
{
	__u64 taken = 0;

	for (size_t i = 0; i < st->rings.n; i++)
		if (ring_at(st, i)->map)
			taken += ring_take(st, ring_at(st, i), ring_at(st, i)->map->logs);
	return taken;
}

static struct ring *ring_find(struct state *st, __u32 tgid, __s32 worker, __u64 runtime)
{
	for (size_t i = 0; i < st->rings.n; i++) {
		struct ring *r = ring_at(st, i);

		if (r->tgid == tgid && r->worker == worker && r->runtime == runtime)
			return r;
	}
	return NULL;
}

/* ring_same - is /proc/TGID/fd/FD still the memfd @r maps? */
static bool ring_same(const struct ring *r)
{
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", r->tgid, r->fd);
	return !stat(path, &sb) && sb.st_dev == r->dev && sb.st_ino == r->ino;
}

/* ring_map - map the ring @n announces and attach to it; a failure is told once. */
static void ring_map(struct state *st, struct ring *r, const struct events_note *n)
{
	const char *why = NULL;
	struct stat sb;

	r->fd = n->fd;
	r->bytes = n->bytes;
	r->map = ring_open(n->tgid, n->fd, true, &r->bytes, &sb, &why);
	if (r->map && (r->map->worker != n->worker || r->map->runtime != n->runtime ||
		       (r->map->pid && r->map->pid != n->tgid))) {
		why = "not the ring announced (another worker's)";
	} else if (r->map) {
		r->dev = sb.st_dev;
		r->ino = sb.st_ino;
		if (ring_attach(st, r, &why))
			return;
	}
	if (r->map)
		munmap(r->map, r->bytes);
	r->map = NULL;
	if (r->warned)
		return;
	/* Its records are lost uncounted: said, and counted as a ring missed. */
	st->rings_missed++;
	fprintf(stderr, "blitz-%s: PID %u worker %d: cannot read its ring /proc/%u/fd/%d: %s\n",
		events_def.name, n->tgid, n->worker, n->tgid, n->fd,
		pid_gone(n->tgid) ? "the process has exited" : *why ? why : "not a blitz-events memfd");
	r->warned = true;
}

/*
 * ring_note - a worker announced its ring (as it opens a window, and
 * every BLITZ_EVENT_FLUSH_NS): mapped unless it is already, or mapped
 * again if the worker made another.
 */
static void ring_note(struct state *st, const struct events_note *n)
{
	struct ring *r = ring_find(st, n->tgid, n->worker, n->runtime);

	if (r && r->map) {
		/*
		 * A note read after its process exited (the tool was stopped, or
		 * behind) says nothing new: rings_gone finishes the ring it maps.
		 */
		if (pid_gone(n->tgid) ||
		    (r->fd == n->fd && r->bytes == n->bytes && ring_same(r)))
			return;
		ring_finish(st, r);	/* the old one's last logs, and its untold drops */
		ring_release(r);
	}
	if (!r) {
		r = push(st, &st->rings);
		r->tgid = n->tgid;
		r->worker = n->worker;
		r->runtime = n->runtime;
	}
	ring_map(st, r, n);
}

int on_note(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct events_note))
		ring_note(ctx, data);
	return tool_sample_taken();
}

/* rings_gone - the rings of processes that exited: their committed logs, then unmapped. */
void rings_gone(struct state *st)
{
	size_t kept = 0;

	for (size_t i = 0; i < st->rings.n; i++) {
		struct ring *r = ring_at(st, i);

		if (pid_gone(r->tgid)) {
			if (r->map) {
				ring_finish(st, r);
			}
			ring_release(r);
			continue;
		}
		memmove(ring_at(st, kept++), r, sizeof(*r));
	}
	st->rings.n = kept;
}

/*
 * rings_leave - the tool goes: the workers must not wait for it any
 * more.  A ring found waiting for its reader (BLITZ_RING_BLOCK) drops
 * (BLITZ_RING_DISCARD) until the probes are detached; one found in
 * another mode (a flight recorder's) gets it back at once.  @last: every
 * ring as found, unmapped.
 */
void rings_leave(struct state *st, bool last)
{
	st->leaving = true;
	for (size_t i = 0; i < st->rings.n; i++) {
		struct ring *r = ring_at(st, i);

		if (!r->map)
			continue;
		if (last)
			ring_release(r);
		else
			__atomic_store_n(&r->map->mode, r->mode0 == BLITZ_RING_BLOCK ?
					 BLITZ_RING_DISCARD : r->mode0, __ATOMIC_RELEASE);
	}
}

void rings_release_at_exit(void)
{
	if (the_state)
		rings_leave(the_state, true);
}
