// SPDX-License-Identifier: MIT
/*
 * sync-bench - the synchronization primitives and channels of blitz, on the
 * 18 benchmarks blitz-io compares with Tokio (the tracker's issue 6).  One
 * JSON line per benchmark, docs/design.md's bench JSON plus allocations per op:
 *
 * {"runtime":"blitz","bench":"mutex_try_lock","workers":1,"backend":"none",
 *  "ops":1000000,"iters":15,"median_ns":...,"min_ns":...,"ns_per_op":...,
 *  "p25_ns":...,"p75_ns":...,"max_ns":...,"allocs_per_op":0.0000}
 *
 * with "modes" before allocs_per_op, and a warning on stderr, when the
 * runs fall into two modes (bench_print_spread).
 *
 * Three groups (docs/sync.md, "sync-bench"):
 *  - single-thread try_ operations, 1,000,000 ops an iteration;
 *  - single-thread channel operations, 100,000 ops an iteration;
 *  - tasks on the runtime (--workers, default 4), 10,000 ops an iteration.
 * Only the operations are timed: an iteration's setup (a channel filled for
 * channel_try_recv, for instance) and teardown are not.  The Tokio peer,
 * experiments/peers/tokio/src/sync_bench.rs, runs the same benches under
 * the same names.
 *
 * Allocations are counted by interposing malloc and friends in this binary
 * (they call glibc's __libc_* functions and bump a relaxed atomic counter),
 * which sees libblitz's allocations too.  Sanitizer runtimes interpose
 * malloc themselves, so under SANITIZE builds nothing is counted and
 * allocs_per_op is null.
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <blitz.h>
#include "bench_util.h"

#define MAX_TASKS	8
#define MPMC_CAPACITY	1024	/* blitz's ring is a power of two; Tokio's is 1000 */
#define BCAST_CAPACITY	16

/* ---------------------------------------------------------------------- */
/* Allocation counting                                                    */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCS 0
#else
#define COUNT_ALLOCS 1
#endif

static _Atomic unsigned long nallocs;

#if COUNT_ALLOCS
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

static inline void count_alloc(void)
{
	/* Relaxed: a statistic; read after the threads that allocate are joined. */
	atomic_fetch_add_explicit(&nallocs, 1, memory_order_relaxed);
}

void *malloc(size_t size)
{
	count_alloc();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	count_alloc();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	count_alloc();
	return __libc_realloc(p, size);
}

void free(void *p)
{
	__libc_free(p);
}

void *memalign(size_t align, size_t size)
{
	count_alloc();
	return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count_alloc();
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	count_alloc();
	p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
#endif /* COUNT_ALLOCS */

static unsigned long allocs_now(void)
{
	return atomic_load_explicit(&nallocs, memory_order_relaxed);
}

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */

static struct blitz_runtime *rt;
static volatile uint64_t sink;		/* keeps results alive */

static void die(const char *what)
{
	fprintf(stderr, "sync-bench: %s\n", what);
	exit(1);
}

static void check(bool ok, const char *what)
{
	if (!ok)
		die(what);
}

/* share - task @i's part when @ops are split over @n tasks. */
static long share(long ops, int n, int i)
{
	return ops / n + (i < ops % n);
}

static size_t pow2_at_least(long n)
{
	size_t c = 1;

	while (c < (size_t)n)
		c <<= 1;
	return c;
}

/* ---------------------------------------------------------------------- */
/* Single thread, try_ operations                                          */

static struct blitz_mutex mutex;
static struct blitz_rwlock rwlock;
static struct blitz_semaphore sem;
static struct blitz_oncecell cell;
static uint64_t cell_value = 42;

static void setup_locks(long ops)
{
	blitz_mutex_init(&mutex);
	blitz_rwlock_init(&rwlock);
	blitz_semaphore_init(&sem, 10);
	blitz_oncecell_init(&cell);
	check(blitz_oncecell_try_set(&cell, &cell_value) == 0, "oncecell set");
}

static void run_mutex_try_lock(long ops)
{
	for (long i = 0; i < ops; i++) {
		check(blitz_mutex_try_lock(&mutex), "try_lock failed");
		blitz_mutex_unlock(&mutex);
	}
}

static void run_rwlock_try_read(long ops)
{
	for (long i = 0; i < ops; i++) {
		check(blitz_rwlock_try_read(&rwlock), "try_read failed");
		blitz_rwlock_read_unlock(&rwlock);
	}
}

static void run_rwlock_try_write(long ops)
{
	for (long i = 0; i < ops; i++) {
		check(blitz_rwlock_try_write(&rwlock), "try_write failed");
		blitz_rwlock_write_unlock(&rwlock);
	}
}

static void run_semaphore_try_acquire(long ops)
{
	for (long i = 0; i < ops; i++) {
		check(blitz_semaphore_try_acquire(&sem, 1), "try_acquire failed");
		blitz_semaphore_release(&sem, 1);
	}
}

static void run_oncecell_get(long ops)
{
	uint64_t sum = 0;
	void *v;

	for (long i = 0; i < ops; i++) {
		check(blitz_oncecell_get(&cell, &v), "get failed");
		sum += *(uint64_t *)v;
	}
	sink = sum;
}

static void run_oncecell_set(long ops)
{
	for (long i = 0; i < ops; i++) {
		struct blitz_oncecell c;

		blitz_oncecell_init(&c);
		check(blitz_oncecell_try_set(&c, &cell_value) == 0, "try_set failed");
	}
}

/* ---------------------------------------------------------------------- */
/* Single thread, channels                                                 */

static struct blitz_channel chan;
static struct blitz_broadcast bcast;
static struct blitz_broadcast_rx brx[4];
static struct blitz_watch watch;

static void setup_channel_big(long ops)
{
	check(blitz_channel_init(&chan, pow2_at_least(ops), sizeof(uint64_t)) == 0,
	      "channel init");
}

static void setup_channel_full(long ops)
{
	setup_channel_big(ops);
	for (uint64_t i = 0; i < (uint64_t)ops; i++)
		check(blitz_channel_try_send(&chan, &i) == 0, "fill");
}

static void setup_channel_small(long ops)
{
	check(blitz_channel_init(&chan, MPMC_CAPACITY, sizeof(uint64_t)) == 0, "channel init");
}

static void teardown_channel(long ops)
{
	blitz_channel_destroy(&chan);
}

static void run_channel_try_send(long ops)
{
	for (uint64_t i = 0; i < (uint64_t)ops; i++)
		check(blitz_channel_try_send(&chan, &i) == 0, "try_send failed");
}

static void run_channel_try_recv(long ops)
{
	uint64_t v, sum = 0;

	for (long i = 0; i < ops; i++) {
		check(blitz_channel_try_recv(&chan, &v) == 0, "try_recv failed");
		sum += v;
	}
	sink = sum;
}

static void run_channel_roundtrip(long ops)
{
	uint64_t v, sum = 0;

	for (uint64_t i = 0; i < (uint64_t)ops; i++) {
		check(blitz_channel_try_send(&chan, &i) == 0, "try_send failed");
		check(blitz_channel_try_recv(&chan, &v) == 0, "try_recv failed");
		sum += v;
	}
	sink = sum;
}

static void run_oneshot(long ops)
{
	uint64_t v, sum = 0;
	int err;

	for (uint64_t i = 0; i < (uint64_t)ops; i++) {
		struct blitz_oneshot os;

		blitz_oneshot_init(&os);
		check(blitz_oneshot_send(&os, i) == 0, "oneshot send");
		check(blitz_oneshot_try_recv(&os, &v, &err) == BLITZ_READY && !err, "oneshot recv");
		sum += v;
	}
	sink = sum;
}

static void setup_broadcast(long ops)
{
	check(blitz_broadcast_init(&bcast, BCAST_CAPACITY, sizeof(uint64_t)) == 0, "broadcast init");
	for (int r = 0; r < 4; r++)
		blitz_broadcast_subscribe(&bcast, &brx[r]);
}

static void teardown_broadcast(long ops)
{
	for (int r = 0; r < 4; r++)
		blitz_broadcast_unsubscribe(&brx[r]);
	blitz_broadcast_destroy(&bcast);
}

static void run_broadcast(long ops)
{
	uint64_t v, missed, sum = 0;

	for (uint64_t i = 0; i < (uint64_t)ops; i++) {
		check(blitz_broadcast_send(&bcast, &i) == 0, "broadcast send");
		for (int r = 0; r < 4; r++) {
			check(blitz_broadcast_try_recv(&brx[r], &v, &missed) == 0, "broadcast recv");
			sum += v;
		}
	}
	sink = sum;
}

static void setup_watch(long ops)
{
	check(blitz_watch_init(&watch, sizeof(uint64_t), NULL) == 0, "watch init");
}

static void teardown_watch(long ops)
{
	blitz_watch_destroy(&watch);
}

static void run_watch(long ops)
{
	uint64_t v, sum = 0;

	for (uint64_t i = 0; i < (uint64_t)ops; i++) {
		check(blitz_watch_send(&watch, &i) == 0, "watch send");
		blitz_watch_read(&watch, &v);
		sum += v;
	}
	sink = sum;
}

/* ---------------------------------------------------------------------- */
/* Tasks on the runtime                                                    */

/* A group of tasks spawned by one root task, which joins them all. */
struct spawn_spec {
	const struct blitz_task_vtable *vt;
	const void *state;
	size_t size;
};

struct root {
	struct blitz_co co;
	const struct spawn_spec *spec;
	int n;
	struct blitz_task *t[MAX_TASKS];
};

static enum blitz_poll root_poll(void *arg, struct blitz_cx *cx)
{
	struct root *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = 0; i < s->n; i++) {
		s->t[i] = blitz_spawn(NULL, s->spec[i].vt, s->spec[i].state, s->spec[i].size);
		check(s->t[i] != NULL, "spawn failed");
	}
	BLITZ_AWAIT(&s->co, blitz_join_tasks_poll(s->t, (size_t)s->n, cx));
	for (int i = 0; i < s->n; i++)
		blitz_task_release(s->t[i]);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable root_vt = BLITZ_TASK_VTABLE(root_poll, NULL);

static void run_group(const struct spawn_spec *spec, int n)
{
	struct root r = { .spec = spec, .n = n };

	check(blitz_block_on(rt, &root_vt, &r, sizeof(r)) == 0, "block_on failed");
}

/* channel_mpmc_4p4c: 4 producers and 4 consumers on a 1,024-slot channel. */
static _Atomic int producers_left;
static _Atomic long received;

struct producer {
	struct blitz_co co;
	struct blitz_chan_waiter w;
	long i, n;
	uint64_t v;
	int err;
};

static enum blitz_poll producer_poll(void *arg, struct blitz_cx *cx)
{
	struct producer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		s->v = (uint64_t)s->i;
		BLITZ_AWAIT(&s->co, blitz_channel_send_poll(&chan, &s->w, cx, &s->v, &s->err));
		check(s->err == 0, "send failed");
	}
	/* acq_rel: the last producer closes after every other one has sent. */
	if (atomic_fetch_sub_explicit(&producers_left, 1, memory_order_acq_rel) == 1)
		blitz_channel_close(&chan);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable producer_vt = BLITZ_TASK_VTABLE(producer_poll, NULL);

struct consumer {
	struct blitz_co co;
	struct blitz_chan_waiter w;
	long n;
	uint64_t v;
	int err;
};

static enum blitz_poll consumer_poll(void *arg, struct blitz_cx *cx)
{
	struct consumer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(&chan, &s->w, cx, &s->v, &s->err));
		if (s->err == -EPIPE)
			break;
		s->n++;
	}
	/* Relaxed: read after the join. */
	atomic_fetch_add_explicit(&received, s->n, memory_order_relaxed);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable consumer_vt = BLITZ_TASK_VTABLE(consumer_poll, NULL);

static void run_channel_mpmc(long ops)
{
	struct producer p[4];
	struct consumer c[4];
	struct spawn_spec spec[8];

	atomic_store(&producers_left, 4);
	atomic_store(&received, 0);
	for (int i = 0; i < 4; i++) {
		p[i] = (struct producer){ .n = share(ops, 4, i) };
		c[i] = (struct consumer){ .n = 0 };
		spec[i] = (struct spawn_spec){ &producer_vt, &p[i], sizeof(p[i]) };
		spec[4 + i] = (struct spawn_spec){ &consumer_vt, &c[i], sizeof(c[i]) };
	}
	run_group(spec, 8);
	check(atomic_load(&received) == ops, "mpmc: lost messages");
}

/* mutex_contended_4t: 4 tasks lock, increment a counter, unlock. */
static uint64_t counter;

struct locker {
	struct blitz_co co;
	struct blitz_waiter w;
	long i, n;
	bool write;		/* rwlock: a writer */
	uint64_t seen;		/* rwlock: a reader's reads, kept alive in its own state */
};

static enum blitz_poll mutex_task_poll(void *arg, struct blitz_cx *cx)
{
	struct locker *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_mutex_lock_poll(&mutex, &s->w, cx));
		counter++;
		blitz_mutex_unlock(&mutex);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable mutex_task_vt = BLITZ_TASK_VTABLE(mutex_task_poll, NULL);

static void run_mutex_contended(long ops)
{
	struct locker l[4];
	struct spawn_spec spec[4];

	counter = 0;
	for (int i = 0; i < 4; i++) {
		l[i] = (struct locker){ .n = share(ops, 4, i) };
		spec[i] = (struct spawn_spec){ &mutex_task_vt, &l[i], sizeof(l[i]) };
	}
	run_group(spec, 4);
	check(counter == (uint64_t)ops, "mutex: lost increments");
}

/* rwlock_contended_4r2w: 4 readers and 2 writers; a fifth of the ops write. */
static enum blitz_poll rwlock_task_poll(void *arg, struct blitz_cx *cx)
{
	struct locker *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		if (s->write) {
			BLITZ_AWAIT(&s->co, blitz_rwlock_write_poll(&rwlock, &s->w, cx));
			counter++;
			blitz_rwlock_write_unlock(&rwlock);
		} else {
			BLITZ_AWAIT(&s->co, blitz_rwlock_read_poll(&rwlock, &s->w, cx));
			/* Not the shared sink: readers hold the lock together. */
			s->seen += counter;
			blitz_rwlock_read_unlock(&rwlock);
		}
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable rwlock_task_vt = BLITZ_TASK_VTABLE(rwlock_task_poll, NULL);

static void run_rwlock_contended(long ops)
{
	long writes = ops / 5, reads = ops - writes;
	struct locker l[6];
	struct spawn_spec spec[6];

	counter = 0;
	for (int i = 0; i < 6; i++) {
		bool w = i >= 4;

		l[i] = (struct locker){ .n = w ? share(writes, 2, i - 4) : share(reads, 4, i),
					.write = w };
		spec[i] = (struct spawn_spec){ &rwlock_task_vt, &l[i], sizeof(l[i]) };
	}
	run_group(spec, 6);
	check(counter == (uint64_t)writes, "rwlock: lost increments");
}

/* semaphore_contended_8t2p: 8 tasks acquire and release 1 of 2 permits. */
static enum blitz_poll sem_task_poll(void *arg, struct blitz_cx *cx)
{
	struct locker *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_semaphore_acquire_poll(&sem, &s->w, 1, cx));
		blitz_semaphore_release(&sem, 1);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable sem_task_vt = BLITZ_TASK_VTABLE(sem_task_poll, NULL);

static void run_semaphore_contended(long ops)
{
	struct locker l[8];
	struct spawn_spec spec[8];

	blitz_semaphore_init(&sem, 2);
	for (int i = 0; i < 8; i++) {
		l[i] = (struct locker){ .n = share(ops, 8, i) };
		spec[i] = (struct spawn_spec){ &sem_task_vt, &l[i], sizeof(l[i]) };
	}
	run_group(spec, 8);
	check(blitz_semaphore_available(&sem) == 2, "semaphore: lost permits");
}

/* barrier_4t: 4 tasks wait on a barrier of 4, ops rounds. */
static struct blitz_barrier barrier;
static _Atomic long leaders;

struct barrier_task {
	struct blitz_co co;
	struct blitz_waiter w;
	long i, n, led;
	bool leader;
};

static enum blitz_poll barrier_task_poll(void *arg, struct blitz_cx *cx)
{
	struct barrier_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_barrier_wait_poll(&barrier, &s->w, cx, &s->leader));
		s->led += s->leader;
	}
	/* Relaxed: read after the join. */
	atomic_fetch_add_explicit(&leaders, s->led, memory_order_relaxed);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable barrier_task_vt = BLITZ_TASK_VTABLE(barrier_task_poll, NULL);

static void run_barrier(long ops)
{
	struct barrier_task b[4];
	struct spawn_spec spec[4];

	blitz_barrier_init(&barrier, 4);
	atomic_store(&leaders, 0);
	for (int i = 0; i < 4; i++) {
		b[i] = (struct barrier_task){ .n = ops };
		spec[i] = (struct spawn_spec){ &barrier_task_vt, &b[i], sizeof(b[i]) };
	}
	run_group(spec, 4);
	check(atomic_load(&leaders) == ops, "barrier: one leader per round");
}

/* notify_ping_pong: two tasks notify each other in turn, ops round trips. */
static struct blitz_notify ping, pong;

struct notifier {
	struct blitz_co co;
	struct blitz_waiter w;
	long i, n;
	bool first;		/* notifies first */
};

static enum blitz_poll notifier_poll(void *arg, struct blitz_cx *cx)
{
	struct notifier *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		if (s->first) {
			blitz_notify_one(&ping);
			BLITZ_AWAIT(&s->co, blitz_notify_notified_poll(&pong, &s->w, cx));
		} else {
			BLITZ_AWAIT(&s->co, blitz_notify_notified_poll(&ping, &s->w, cx));
			blitz_notify_one(&pong);
		}
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable notifier_vt = BLITZ_TASK_VTABLE(notifier_poll, NULL);

static void run_notify(long ops)
{
	struct notifier n[2] = { { .n = ops, .first = true }, { .n = ops } };
	struct spawn_spec spec[2] = {
		{ &notifier_vt, &n[0], sizeof(n[0]) },
		{ &notifier_vt, &n[1], sizeof(n[1]) },
	};

	blitz_notify_init(&ping);
	blitz_notify_init(&pong);
	run_group(spec, 2);
}

/* ---------------------------------------------------------------------- */

struct bench {
	const char *name;
	long ops;
	bool tasks;			/* runs tasks on the runtime */
	void (*setup)(long ops);	/* untimed, before each iteration */
	void (*run)(long ops);		/* timed */
	void (*teardown)(long ops);	/* untimed, after each iteration */
};

static const struct bench benches[] = {
	{ "mutex_try_lock", 1000000, false, setup_locks, run_mutex_try_lock, NULL },
	{ "rwlock_try_read", 1000000, false, setup_locks, run_rwlock_try_read, NULL },
	{ "rwlock_try_write", 1000000, false, setup_locks, run_rwlock_try_write, NULL },
	{ "semaphore_try_acquire", 1000000, false, setup_locks, run_semaphore_try_acquire, NULL },
	{ "oncecell_get", 1000000, false, setup_locks, run_oncecell_get, NULL },
	{ "oncecell_set", 1000000, false, NULL, run_oncecell_set, NULL },
	{ "channel_try_send", 100000, false, setup_channel_big, run_channel_try_send,
	  teardown_channel },
	{ "channel_try_recv", 100000, false, setup_channel_full, run_channel_try_recv,
	  teardown_channel },
	{ "channel_roundtrip", 100000, false, setup_channel_small, run_channel_roundtrip,
	  teardown_channel },
	{ "oneshot_create_send_recv", 100000, false, NULL, run_oneshot, NULL },
	{ "broadcast_send_recv4", 100000, false, setup_broadcast, run_broadcast,
	  teardown_broadcast },
	{ "watch_send_borrow", 100000, false, setup_watch, run_watch, teardown_watch },
	{ "channel_mpmc_4p4c", 10000, true, setup_channel_small, run_channel_mpmc,
	  teardown_channel },
	{ "mutex_contended_4t", 10000, true, setup_locks, run_mutex_contended, NULL },
	{ "rwlock_contended_4r2w", 10000, true, setup_locks, run_rwlock_contended, NULL },
	{ "semaphore_contended_8t2p", 10000, true, NULL, run_semaphore_contended, NULL },
	{ "barrier_4t", 10000, true, NULL, run_barrier, NULL },
	{ "notify_ping_pong", 10000, true, NULL, run_notify, NULL },
};

#define NBENCH (sizeof(benches) / sizeof(benches[0]))

/* one_iter - one iteration of @b; returns its run time, adds its allocations. */
static uint64_t one_iter(const struct bench *b, long ops, unsigned long *allocs)
{
	unsigned long a0;
	uint64_t start, t;

	if (b->setup)
		b->setup(ops);
	a0 = allocs_now();
	start = bench_now_ns();
	b->run(ops);
	t = bench_now_ns() - start;
	*allocs += allocs_now() - a0;
	if (b->teardown)
		b->teardown(ops);
	return t;
}

static void print_allocs(unsigned long allocs, long ops, int iters)
{
	if (COUNT_ALLOCS)
		printf(",\"allocs_per_op\":%.4f}\n", (double)allocs / ((double)ops * iters));
	else
		printf(",\"allocs_per_op\":null}\n");
}

static void run_bench(const struct bench *b, long ops, unsigned workers, int iters, int warmup)
{
	uint64_t *t = calloc((size_t)iters, sizeof(*t));
	unsigned long allocs = 0, ignored = 0;
	uint64_t median;

	check(t != NULL, "calloc");
	for (int i = 0; i < warmup; i++)
		one_iter(b, ops, &ignored);
	for (int i = 0; i < iters; i++)
		t[i] = one_iter(b, ops, &allocs);
	qsort(t, (size_t)iters, sizeof(*t), bench_cmp_u64);
	median = bench_median(t, (size_t)iters);
	printf("{\"runtime\":\"blitz\",\"bench\":\"%s\",\"workers\":%u,\"backend\":\"%s\","
	       "\"ops\":%ld,\"iters\":%d,\"median_ns\":%llu,\"min_ns\":%llu,\"ns_per_op\":%.2f",
	       b->name, b->tasks ? workers : 1, b->tasks ? blitz_io_backend_name(rt) : "none",
	       ops, iters, (unsigned long long)median, (unsigned long long)t[0],
	       (double)median / (double)ops);
	bench_print_spread(b->name, t, (size_t)iters, ops);
	print_allocs(allocs, ops, iters);
	fflush(stdout);
	free(t);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sync-bench [--workers N] [--iters K] [--warmup W] [--ops N] "
		"[--bench NAME|all|A,B] [--list]\n"
		"blitz's sync primitives and channels on blitz-io's 18 benchmarks against Tokio;\n"
		"one JSON line per benchmark.  --workers (default 4) is for the task benches;\n"
		"--ops overrides every benchmark's op count (for smoke tests).\n");
}

static const char *bench_name(size_t i)
{
	return benches[i].name;
}

int main(int argc, char **argv)
{
	struct bench_args a = { .which = "all", .iters = 15, .warmup = 3 };

	bench_config(&a.cfg, 4);
	bench_parse_args(argc, argv, &a, NBENCH, bench_name, usage);
	for (size_t i = 0; i < NBENCH; i++) {
		const struct bench *b = &benches[i];

		if (!bench_selected(a.which, b->name))
			continue;
		if (b->tasks && !rt && !(rt = blitz_runtime_new(&a.cfg))) {
			perror("sync-bench: blitz_runtime_new");
			return 1;
		}
		run_bench(b, a.ops ? a.ops : b->ops, a.cfg.workers, a.iters, a.warmup);
	}
	blitz_runtime_free(rt);
	return 0;
}
