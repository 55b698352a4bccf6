// SPDX-License-Identifier: MIT
/*
 * test_event_ring.c - the event log's ring transport and the flight
 * recorder (core/trace/event_ring.c, flight.c; <blitz/trace/events.h>).  The
 * test is the rings' reader: event_ring's semaphore is raised as the
 * kernel raises it when a tracer attaches, and a thread of the test finds
 * the workers' rings in /proc/self/fd and maps them, as blitz-events does
 * from another process.  It checks that the records are the runtime's
 * statistics exactly, that none is lost while the reader keeps up, that a
 * reader that stops costs an exact count of records (and says when), that
 * task ids never repeat while task blocks are reused, and that the flight
 * recorder's dump shows a poll that blocked its worker and the tasks that
 * waited behind it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <blitz/trace/events.h>
#include "../../core/probes.h"
#include "suites.h"

#ifdef BLITZ_EVENT_RING_UNGUARDED	/* CONFIG_PROBES=y: the semaphore exists */
#define HAVE_SEMAPHORE 1
/* Not instrumented under TSan: the kernel's write is invisible to it (test_histogram.c). */
__attribute__((no_sanitize("thread"))) static void tracer_attach(void)
{
	blitz_event_ring_semaphore++;
}

__attribute__((no_sanitize("thread"))) static void tracer_detach(void)
{
	blitz_event_ring_semaphore--;
}
#else
#define HAVE_SEMAPHORE 0
static void tracer_attach(void) { }
static void tracer_detach(void) { }
#endif

#define MAX_RINGS	16

/* One mapped ring and what the reader took from it. */
struct mapped {
	struct blitz_event_ring *shm;
	size_t bytes;
	ino_t ino;
	unsigned long long next;	/* the next log to take */
	unsigned long long records, lost, spans, bad_seq;
	unsigned long long by_type[BLITZ_EVENT_TYPES];
	/* Schedules right after their task's poll end in a log, and those of them stamped as it. */
	unsigned long long requeues, requeues_at_end;
};

/*
 * struct reader - the test's reader.  @pause: while set, it maps but does
 * not take (a reader stopped, as SIGSTOP stops blitz-events).  @ids:
 * spawn records' task ids and addresses, if wanted.
 */
struct reader {
	pthread_t thread;
	atomic_bool stop, pause;
	unsigned block_ms;
	int nrings;
	struct mapped rings[MAX_RINGS];
	unsigned long long *ids, *addrs;
	size_t nids, cap;
};

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* map_new - every ring in /proc/self/fd that is not mapped yet. */
static void map_new(struct reader *r)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		char path[300], link[PATH_MAX];
		struct stat st;
		ssize_t n;
		bool known = false;
		int fd;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strncmp(link, "/memfd:blitz-events", 19) || stat(path, &st))
			continue;
		/* Made but not yet sized (ftruncate comes after memfd_create): the next look. */
		if (st.st_size < BLITZ_EVENT_RING_HEAD)
			continue;
		for (int i = 0; i < r->nrings; i++)
			known |= r->rings[i].ino == st.st_ino;
		if (known || r->nrings == MAX_RINGS)
			continue;
		fd = open(path, O_RDWR);
		if (fd < 0)
			continue;
		struct mapped *m = &r->rings[r->nrings];

		memset(m, 0, sizeof(*m));
		m->bytes = (size_t)st.st_size;
		m->shm = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		ck_assert_ptr_ne(m->shm, MAP_FAILED);
		/* Made but not yet filled in (the memfd shows in /proc first): the next look. */
		if (__atomic_load_n(&m->shm->magic, __ATOMIC_ACQUIRE) == 0) {
			munmap(m->shm, m->bytes);
			continue;
		}
		ck_assert_uint_eq(m->shm->magic, BLITZ_EVENT_RING_MAGIC);
		ck_assert_uint_eq(m->shm->version, BLITZ_EVENTS_VERSION);
		ck_assert_uint_eq(m->shm->log_bytes, sizeof(struct blitz_event_log));
		m->ino = st.st_ino;
		m->next = __atomic_load_n(&m->shm->consumed, __ATOMIC_ACQUIRE) + 1;
		__atomic_store_n(&m->shm->block_ms, r->block_ms, __ATOMIC_RELAXED);
		__atomic_store_n(&m->shm->reader, (unsigned)getpid(), __ATOMIC_RELAXED);
		/* Release: the test's thread reads the mapping once it sees the count. */
		__atomic_store_n(&r->nrings, r->nrings + 1, __ATOMIC_RELEASE);
	}
	closedir(d);
}

static void take_log(struct reader *r, struct mapped *m, const struct blitz_event_log *l)
{
	m->lost += l->head.lost;
	m->spans += l->head.lost != 0;
	for (unsigned i = 0; i < l->head.count; i++) {
		const struct blitz_event *e = &l->rec[i];

		m->records++;
		if (e->type < BLITZ_EVENT_TYPES)
			m->by_type[e->type]++;
		if (i && e->type == BLITZ_EVENT_SCHEDULE && e[-1].type == BLITZ_EVENT_POLL_END &&
		    e[-1].task == e->task) {
			m->requeues++;
			m->requeues_at_end += e[-1].ticks == e->ticks;
		}
		if (e->type == BLITZ_EVENT_SPAWN && r->ids && r->nids < r->cap) {
			r->ids[r->nids] = e->task;
			r->addrs[r->nids++] = e->arg;
		}
	}
}

/* take - what @m's worker committed; true if there was any. */
static bool take(struct reader *r, struct mapped *m)
{
	unsigned long long produced = __atomic_load_n(&m->shm->produced, __ATOMIC_ACQUIRE);
	bool any = false;

	for (; m->next <= produced; m->next++) {
		const struct blitz_event_log *l = (const void *)((char *)m->shm + BLITZ_EVENT_RING_HEAD +
			((m->next - 1) % m->shm->logs) * m->shm->log_bytes);

		if (l->head.seq != m->next)
			m->bad_seq++;
		take_log(r, m, l);
		/* Release: our reads of the slot are done before the worker reuses it. */
		__atomic_store_n(&m->shm->consumed, m->next, __ATOMIC_RELEASE);
		any = true;
	}
	return any;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	bool last = false;

	for (;;) {
		bool any = false;

		map_new(r);
		if (!atomic_load(&r->pause))
			for (int i = 0; i < r->nrings; i++)
				any |= take(r, &r->rings[i]);
		if (last)
			break;
		if (atomic_load(&r->stop))
			last = true;	/* one more pass: what the exits committed */
		else if (!any)
			nap_us(200);
	}
	return NULL;
}

static void reader_start(struct reader *r, unsigned block_ms)
{
	memset(r, 0, sizeof(*r));
	r->block_ms = block_ms;
	tracer_attach();
	ck_assert_int_eq(pthread_create(&r->thread, NULL, reader_main, r), 0);
}

/* reader_stop - after blitz_runtime_free: the workers committed their last logs at their exit. */
static void reader_stop(struct reader *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	tracer_detach();
}

static void reader_unmap(struct reader *r)
{
	for (int i = 0; i < r->nrings; i++)
		munmap(r->rings[i].shm, r->rings[i].bytes);
	free(r->ids);
	free(r->addrs);
}

static unsigned long long sum_type(const struct reader *r, int type)
{
	unsigned long long n = 0;

	for (int i = 0; i < r->nrings; i++)
		n += r->rings[i].by_type[type];
	return n;
}

/* ---------------------------------------------------------------------- */
/* A workload                                                              */

/* A task that yields @left times, then completes. */
struct yielder {
	int left;
};

static enum blitz_poll yielder_poll(void *state, struct blitz_cx *cx)
{
	struct yielder *y = state;

	if (y->left-- <= 0)
		return BLITZ_READY;
	blitz_yield_now(cx);
	return BLITZ_PENDING;
}

static const struct blitz_task_vtable yielder_vt = BLITZ_TASK_VTABLE(yielder_poll, NULL);

/* A task that spawns @n yielders (from a worker: the task cache reuses their blocks) and waits. */
struct spawner {
	int n, yields, done;
	struct blitz_task *last;
};

static enum blitz_poll spawner_poll(void *state, struct blitz_cx *cx)
{
	struct spawner *s = state;
	struct yielder y = { s->yields };

	/* A batch at a time, so that the blocks of completed tasks come back. */
	for (int i = 0; i < 64 && s->done < s->n; i++, s->done++)
		ck_assert_int_eq(blitz_spawn_detached(NULL, &yielder_vt, &y, sizeof(y)), 0);
	if (s->done == s->n)
		return BLITZ_READY;
	blitz_yield_now(cx);
	return BLITZ_PENDING;
}

static const struct blitz_task_vtable spawner_vt = BLITZ_TASK_VTABLE(spawner_poll, NULL);

static struct blitz_runtime *runtime_of(unsigned workers, unsigned flight_kb, unsigned ring_kb)
{
	struct blitz_config c;
	struct blitz_runtime *rt;

	blitz_config_default(&c);
	c.workers = workers;
	c.flight_kb = flight_kb;
	c.event_ring_kb = ring_kb;
	rt = blitz_runtime_new(&c);
	ck_assert_ptr_nonnull(rt);
	return rt;
}

/* The spawner's polls: one per batch of 64. */
static uint64_t spawner_polls(int n)
{
	return n ? (uint64_t)(n + 63) / 64 : 1;
}

/* The task records a run of @n yielders of @yields writes: spawns, schedules, polls' starts and ends. */
static uint64_t task_records(int n, int yields)
{
	uint64_t polls = (uint64_t)n * (yields + 1) + spawner_polls(n);
	uint64_t schedules = (uint64_t)n * yields + spawner_polls(n) - 1;

	return (uint64_t)n + schedules + 2 * polls;
}

/*
 * run - @n yielders of @yields each, spawned by one task, on @rt, until
 * all are polled to their end; its statistics then, and @rt freed (the
 * workers' last logs committed at their exit).
 */
static void run(struct blitz_runtime *rt, int n, int yields, struct blitz_stats *st)
{
	struct spawner s = { .n = n, .yields = yields };

	ck_assert_int_eq(blitz_block_on(rt, &spawner_vt, &s, sizeof(s)), 0);
	for (int tries = 0;; tries++) {
		blitz_stats(rt, st);
		if (st->total_polled >= (uint64_t)n * (yields + 1) + spawner_polls(n))
			break;
		ck_assert_int_lt(tries, 100000);
		nap_us(100);
	}
	blitz_runtime_free(rt);
}

/* ---------------------------------------------------------------------- */
/* Tests                                                                   */

/*
 * Every poll, spawn and park of the workers is in their rings, none lost,
 * each log in its number's order: the reader keeps up by waiting for it
 * (BLITZ_RING_BLOCK).  A yield's requeue, logged right after its poll's
 * end, is stamped as that end (events_requeue_ticks): one clock read
 * fewer.
 */
START_TEST(ring_records_equal_the_statistics)
{
	struct reader r;
	struct blitz_runtime *rt;
	struct blitz_stats st;
	unsigned long long lost = 0, bad = 0, parks = 0, requeues = 0, at_end = 0;
	unsigned workers = 2;

	if (!HAVE_SEMAPHORE)
		SKIP("built without probes (CONFIG_PROBES=n): no event_ring semaphore");
	reader_start(&r, 1000);
	rt = runtime_of(workers, 0, 0);
	run(rt, (int)test_scaled(20000), 3, &st);
	reader_stop(&r);
	for (int i = 0; i < r.nrings; i++) {
		lost += r.rings[i].lost;
		bad += r.rings[i].bad_seq;
		requeues += r.rings[i].requeues;
		at_end += r.rings[i].requeues_at_end;
	}
	ck_assert_int_eq(r.nrings, (int)workers);
	ck_assert_uint_gt(requeues, 0);
	ck_assert_uint_eq(at_end, requeues);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(bad, 0);
	/* The block_on's task is spawned by this thread: its spawn is in this thread's log. */
	ck_assert_uint_eq(sum_type(&r, BLITZ_EVENT_SPAWN), st.total_spawned - 1);
	ck_assert_uint_eq(sum_type(&r, BLITZ_EVENT_POLL_START), st.total_polled);
	ck_assert_uint_eq(sum_type(&r, BLITZ_EVENT_POLL_END), st.total_polled);
	/* The workers park after the statistics were read, until they stop: no fewer. */
	parks = sum_type(&r, BLITZ_EVENT_PARK);
	ck_assert_uint_ge(parks, st.total_parked);
	ck_assert_uint_eq(sum_type(&r, BLITZ_EVENT_UNPARK), parks);
	reader_unmap(&r);
}
END_TEST

/*
 * A reader that stops (paused, as SIGSTOP would stop blitz-events) while
 * the worker runs: the worker waits block_ms, then drops records until
 * the reader is back, and counts them.  Its next log says how many and
 * when, the same count as the runtime's own (shm->lost), and what was
 * taken plus what was lost is every record the run wrote: its task
 * records (known from the workload) and its parks and unparks, in pairs.
 */
START_TEST(a_stopped_reader_costs_an_exact_count)
{
	struct reader r;
	struct blitz_runtime *rt;
	struct blitz_stats st;
	unsigned long long lost = 0, counted = 0, spans = 0, taken = 0, expect, sleeps;
	int n = (int)test_scaled(20000), yields = 3;
	struct spawner s = { .n = n, .yields = yields };

	if (!HAVE_SEMAPHORE)
		SKIP("built without probes (CONFIG_PROBES=n): no event_ring semaphore");
	reader_start(&r, 5);
	atomic_store(&r.pause, true);
	rt = runtime_of(1, 0, 64);	/* three slots: the pause fills them */
	/* Detached and waited for by its counts: a join from here would help, polling unlogged. */
	ck_assert_int_eq(blitz_spawn_detached(rt, &spawner_vt, &s, sizeof(s)), 0);
	/* Paused until the worker has dropped records (its own count): whatever the machine's pace. */
	for (int tries = 0;; tries++) {
		ck_assert_msg(tries < 30000, "the worker dropped nothing in 30 s with its reader paused");
		if (__atomic_load_n(&r.nrings, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&r.rings[0].shm->lost, __ATOMIC_RELAXED))
			break;
		nap_us(1000);
	}
	atomic_store(&r.pause, false);
	for (int tries = 0;; tries++) {
		blitz_stats(rt, &st);
		if (st.total_polled >= (uint64_t)n * (yields + 1) + spawner_polls(n))
			break;
		ck_assert_int_lt(tries, 300000);
		nap_us(100);
	}
	blitz_runtime_free(rt);
	reader_stop(&r);
	ck_assert_int_eq(r.nrings, 1);
	lost = r.rings[0].lost;
	spans = r.rings[0].spans;
	taken = r.rings[0].records;
	counted = __atomic_load_n(&r.rings[0].shm->lost, __ATOMIC_RELAXED);
	ck_assert_uint_gt(lost, 0);
	ck_assert_uint_gt(spans, 0);
	ck_assert_uint_eq(lost, counted);
	ck_assert_uint_eq(r.rings[0].bad_seq, 0);
	/* The worker's waits for us are ours, not the workload's. */
	expect = task_records(n, yields);
	taken -= sum_type(&r, BLITZ_EVENT_READER_WAIT);
	ck_assert_uint_ge(taken + lost, expect + sum_type(&r, BLITZ_EVENT_PARK) +
			  sum_type(&r, BLITZ_EVENT_UNPARK));
	sleeps = taken + lost - expect;
	ck_assert_msg(sleeps % 2 == 0, "taken %llu + lost %llu - %llu task records: not parks and "
		      "unparks in pairs", taken, lost, expect);
	reader_unmap(&r);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static size_t distinct(unsigned long long *v, size_t n)
{
	size_t d = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		d += i == 0 || v[i] != v[i - 1];
	return d;
}

/*
 * A million spawns through a few hundred reused task blocks: every
 * spawn record names a new id, where the addresses repeat.
 */
START_TEST(task_ids_never_repeat)
{
	struct reader r;
	struct blitz_runtime *rt;
	struct blitz_stats st;
	size_t n = (size_t)test_scaled(1000000), ids, addrs;

	if (!HAVE_SEMAPHORE)
		SKIP("built without probes (CONFIG_PROBES=n): no event_ring semaphore");
	reader_start(&r, 1000);
	r.cap = n;
	r.ids = calloc(n, sizeof(*r.ids));
	r.addrs = calloc(n, sizeof(*r.addrs));
	ck_assert(r.ids && r.addrs);
	rt = runtime_of(2, 0, 0);
	run(rt, (int)n, 0, &st);
	reader_stop(&r);
	ck_assert_uint_eq(r.nids, n);
	ids = distinct(r.ids, r.nids);
	addrs = distinct(r.addrs, r.nids);
	ck_assert_uint_eq(ids, n);
	ck_assert_uint_ne(r.ids[0], 0);
	ck_assert_msg(addrs * 10 < n, "%zu addresses for %zu tasks: blocks not reused", addrs, n);
	reader_unmap(&r);
}
END_TEST

/* A task that spawns @n others, then blocks its worker for 50 ms. */
struct blocker {
	int n;
};

static enum blitz_poll blocker_poll(void *state, struct blitz_cx *cx)
{
	struct blocker *b = state;
	struct yielder y = { 0 };

	(void)cx;
	for (int i = 0; i < b->n; i++)
		ck_assert_int_eq(blitz_spawn_detached(NULL, &yielder_vt, &y, sizeof(y)), 0);
	nap_us(50000);
	return BLITZ_READY;
}

static const struct blitz_task_vtable blocker_vt = BLITZ_TASK_VTABLE(blocker_poll, NULL);

/* One record of a dump, with its log's clock factor. */
struct rec {
	struct blitz_event e;
	unsigned long long mult;
	int worker;
};

static unsigned long long ns(const struct rec *r)
{
	return (unsigned long long)(((unsigned __int128)r->e.ticks * r->mult) >> 32);
}

/* read_dump - the records of trace file @path, in file order; how many into *@n. */
static struct rec *read_dump(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	struct blitz_event_file_head fh;
	struct blitz_event_log_head h;
	struct rec *v = NULL;
	size_t cap = 0;

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(&fh, sizeof(fh), 1, f), 1);
	ck_assert_uint_eq(fh.magic, BLITZ_EVENT_FILE_MAGIC);
	ck_assert_uint_eq(fh.version, BLITZ_EVENTS_VERSION);
	ck_assert_uint_eq(fh.head_size, sizeof(h));
	ck_assert_uint_eq(fh.record_size, sizeof(struct blitz_event));
	*n = 0;
	while (fread(&h, sizeof(h), 1, f) == 1) {
		ck_assert_uint_le(h.count, BLITZ_EVENT_LOG_RECORDS);
		for (unsigned i = 0; i < h.count; i++) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 1024;
				v = realloc(v, cap * sizeof(*v));
				ck_assert_ptr_nonnull(v);
			}
			ck_assert_uint_eq(fread(&v[*n].e, sizeof(v[*n].e), 1, f), 1);
			v[*n].mult = h.ticks_mult;
			v[(*n)++].worker = h.worker;
		}
	}
	fclose(f);
	return v;
}

/*
 * The flight recorder, no tracer attached: after a poll that blocked its
 * worker for 50 ms, a dump shows that poll, the tasks it spawned queued
 * behind it, and their wait: spawned inside it, polled after its end.
 * The ring is three logs, and the worker then idles through some fifteen
 * parks: with nobody reading, a log is committed only when full.
 */
START_TEST(flight_dump_shows_a_blocked_poll)
{
	char dir[] = "/tmp/blitz-flight-XXXXXX", path[64];
	struct blocker b = { 8 };
	struct blitz_runtime *rt;
	struct rec *v, *start = NULL, *end = NULL;
	size_t n, behind = 0;
	int logs;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/dump", dir);
	rt = runtime_of(1, 64, 0);	/* three logs: idle parks must not push the past out */
	ck_assert_int_eq(blitz_block_on(rt, &blocker_vt, &b, sizeof(b)), 0);
	nap_us(150000);		/* the yielders ran; then some fifteen idle park timeouts */
	logs = blitz_trace_dump(path);
	blitz_runtime_free(rt);
	ck_assert_int_gt(logs, 0);
	v = read_dump(path, &n);
	/* The blocker's poll: the one that lasted 50 ms or more. */
	for (size_t i = 0; i < n; i++) {
		if (v[i].e.type != BLITZ_EVENT_POLL_END || !v[i].e.code)
			continue;
		for (size_t j = i; j-- > 0;)
			if (v[j].e.type == BLITZ_EVENT_POLL_START && v[j].e.task == v[i].e.task) {
				if (ns(&v[i]) - ns(&v[j]) >= 50000000ull) {
					start = &v[j];
					end = &v[i];
				}
				break;
			}
	}
	ck_assert_msg(start, "no poll of 50 ms in the dump's %zu records", n);
	ck_assert_uint_eq(start->e.arg, (unsigned long long)(uintptr_t)&blocker_vt);
	/* The tasks it spawned: queued inside it, first polled after its end, waiting that long. */
	for (struct rec *s = start; s < end; s++) {
		if (s->e.type != BLITZ_EVENT_SPAWN)
			continue;
		for (struct rec *p = end; p < v + n; p++)
			if (p->e.type == BLITZ_EVENT_POLL_START && p->e.task == s->e.task &&
			    p->e.seq == s->e.seq) {
				ck_assert_uint_ge(ns(p) - ns(s), ns(end) - ns(s));
				behind++;
				break;
			}
	}
	ck_assert_uint_eq(behind, (size_t)b.n);
	free(v);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0);	/* the dump's ".part" was renamed, not left */
}
END_TEST

static Suite *event_ring_suite(void)
{
	Suite *s = suite_create("event_ring");
	TCase *tc = TCASE("ring", 120);

	tcase_add_test(tc, ring_records_equal_the_statistics);
	tcase_add_test(tc, a_stopped_reader_costs_an_exact_count);
	tcase_add_test(tc, task_ids_never_repeat);
	tcase_add_test(tc, flight_dump_shows_a_blocked_poll);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("event_ring", event_ring_suite);
