// SPDX-License-Identifier: MIT
/*
 * sched-bench - Tokio's scheduler benchmarks (benches/rt_multi_threaded.rs)
 * on blitz, with Tokio's parameters.  One JSON line per benchmark:
 *
 * {"runtime":"blitz","bench":"spawn_many_local","workers":2,"backend":"none",
 *  "ops":10000,"iters":15,"median_ns":...,"min_ns":...,"ns_per_op":...,
 *  "p25_ns":...,"p75_ns":...,"max_ns":...}
 *
 * with "modes" and a warning on stderr when the runs fall into two modes
 * (bench_print_spread, docs/design.md's bench JSON).
 *
 * The first six are Tokio's; fanout_tree, burst_wake and pipeline are
 * blitz's own (experiments/peers/README.md, "The benches").  The same
 * benchmarks for Tokio and Go are in experiments/peers/.
 */
#include <errno.h>
#include <getopt.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <blitz.h>
#include "bench_util.h"

#define SPAWN_TASKS	10000
#define YIELD_TASKS	200
#define YIELD_COUNT	1000
#define PING_PONGS	1000
#define CHAIN_LEN	1000
#define FANOUT		4	/* fanout_tree: children per task */
#define FANOUT_DEPTH	7	/* levels below the root: (4^8 - 1) / 3 tasks */
#define FANOUT_TASKS	21845
#define BURST_TASKS	100	/* burst_wake: spawns per burst */
#define BURSTS		10	/* bursts per iteration */
#define BURST_GAP_US	1000	/* idle time before each burst (not timed) */
#define PIPE_STAGES	4	/* pipeline: tasks in the chain, source and sink included */
#define PIPE_ITEMS	10000
#define PIPE_CAPACITY	16

static struct blitz_runtime *rt;

static void die(const char *what)
{
	fprintf(stderr, "sched-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A countdown whose last decrement sends on a oneshot. */
struct countdown {
	_Atomic long left;
	struct blitz_oneshot *done;
};

static void countdown_hit(struct countdown *c)
{
	if (atomic_fetch_sub_explicit(&c->left, 1, memory_order_acq_rel) == 1)
		blitz_oneshot_send(c->done, 1);
}

/* A root task that waits for a oneshot (the bench's rx.recv()). */
struct wait_done {
	struct blitz_oneshot *done;
};

static enum blitz_poll wait_done_poll(void *arg, struct blitz_cx *cx)
{
	struct wait_done *s = arg;
	uint64_t v;
	int err;

	return blitz_oneshot_recv_poll(s->done, cx, &v, &err);
}
static const struct blitz_task_vtable wait_done_vt = BLITZ_TASK_VTABLE(wait_done_poll, NULL);

/* ---------------------------------------------------------------------- */
/* spawn_many_local: one task spawns 10,000 tasks that count down.         */

struct hit { struct countdown *c; };

static enum blitz_poll hit_poll(void *arg, struct blitz_cx *cx)
{
	countdown_hit(((struct hit *)arg)->c);
	return BLITZ_READY;
}
static const struct blitz_task_vtable hit_vt = BLITZ_TASK_VTABLE(hit_poll, NULL);

struct spawner {
	struct blitz_co co;
	struct blitz_oneshot done;
	struct countdown c;
	int n;
};

static enum blitz_poll spawner_poll(void *arg, struct blitz_cx *cx)
{
	struct spawner *s = arg;
	uint64_t v;
	int err;

	BLITZ_CO_BEGIN(&s->co);
	blitz_oneshot_init(&s->done);
	s->c.done = &s->done;
	atomic_init(&s->c.left, s->n);
	for (int i = 0; i < s->n; i++) {
		struct hit h = { &s->c };

		if (blitz_spawn_detached(NULL, &hit_vt, &h, sizeof(h)))
			die("spawn");
	}
	BLITZ_AWAIT(&s->co, blitz_oneshot_recv_poll(&s->done, cx, &v, &err));
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable spawner_vt = BLITZ_TASK_VTABLE(spawner_poll, NULL);

static void bench_spawn_many_local(void)
{
	struct spawner s = { .n = SPAWN_TASKS };

	if (blitz_block_on(rt, &spawner_vt, &s, sizeof(s)))
		die("block_on");
}

/* ---------------------------------------------------------------------- */
/* spawn_many_remote: main spawns 10,000 empty tasks, then awaits each.   */

static enum blitz_poll empty_poll(void *arg, struct blitz_cx *cx)
{
	return BLITZ_READY;
}
static const struct blitz_task_vtable empty_vt = BLITZ_TASK_VTABLE(empty_poll, NULL);

struct join_all {
	struct blitz_co co;
	struct blitz_task **handles;
	int n, i;
};

static enum blitz_poll join_all_poll(void *arg, struct blitz_cx *cx)
{
	struct join_all *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_join_poll(s->handles[s->i], cx));
		blitz_task_release(s->handles[s->i]);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable join_all_vt = BLITZ_TASK_VTABLE(join_all_poll, NULL);

static struct blitz_task *handles[SPAWN_TASKS];

static void bench_spawn_many_remote(void)
{
	struct join_all j = { .handles = handles, .n = SPAWN_TASKS };

	for (int i = 0; i < SPAWN_TASKS; i++)
		if (!(handles[i] = blitz_spawn(rt, &empty_vt, NULL, 0)))
			die("spawn");
	if (blitz_block_on(rt, &join_all_vt, &j, sizeof(j)))
		die("block_on");
}

/* ---------------------------------------------------------------------- */
/* yield_many: 200 tasks x 1,000 yields, spawned from main.               */

struct yielder {
	struct blitz_co co;
	struct countdown *c;
	int i;
};

static enum blitz_poll yielder_poll(void *arg, struct blitz_cx *cx)
{
	struct yielder *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < YIELD_COUNT; s->i++)
		BLITZ_YIELD(&s->co, cx);
	countdown_hit(s->c);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable yielder_vt = BLITZ_TASK_VTABLE(yielder_poll, NULL);

static void bench_yield_many(void)
{
	struct blitz_oneshot done;
	struct countdown c = { .done = &done };
	struct wait_done w = { &done };

	blitz_oneshot_init(&done);
	atomic_init(&c.left, YIELD_TASKS);
	for (int i = 0; i < YIELD_TASKS; i++) {
		struct yielder y = { .c = &c };

		if (blitz_spawn_detached(rt, &yielder_vt, &y, sizeof(y)))
			die("spawn");
	}
	if (blitz_block_on(rt, &wait_done_vt, &w, sizeof(w)))
		die("block_on");
}

/* ---------------------------------------------------------------------- */
/* ping_pong: 1,000 x (spawn a task that spawns a pong, two oneshots).    */

struct pong {
	struct blitz_co co;
	struct blitz_oneshot rx1;	/* ping -> pong */
	struct blitz_oneshot *tx2;	/* pong -> ping (in the ping's state) */
};

static enum blitz_poll pong_poll(void *arg, struct blitz_cx *cx)
{
	struct pong *s = arg;
	uint64_t v;
	int err;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, blitz_oneshot_recv_poll(&s->rx1, cx, &v, &err));
	blitz_oneshot_send(s->tx2, 1);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable pong_vt = BLITZ_TASK_VTABLE(pong_poll, NULL);

struct ping {
	struct blitz_co co;
	struct blitz_oneshot rx2;
	struct countdown *c;
};

static enum blitz_poll ping_poll(void *arg, struct blitz_cx *cx)
{
	struct ping *s = arg;
	struct blitz_task *h;
	struct pong *p;
	struct pong init;
	uint64_t v;
	int err;

	BLITZ_CO_BEGIN(&s->co);
	blitz_oneshot_init(&s->rx2);
	blitz_oneshot_init(&init.rx1);
	init.co.line = 0;
	init.tx2 = &s->rx2;
	if (!(h = blitz_spawn(NULL, &pong_vt, &init, sizeof(init))))
		die("spawn");
	p = blitz_task_state(h);
	blitz_oneshot_send(&p->rx1, 1);
	blitz_task_release(h);
	BLITZ_AWAIT(&s->co, blitz_oneshot_recv_poll(&s->rx2, cx, &v, &err));
	countdown_hit(s->c);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable ping_vt = BLITZ_TASK_VTABLE(ping_poll, NULL);

struct ping_root {
	struct blitz_co co;
	struct blitz_oneshot done;
	struct countdown c;
};

static enum blitz_poll ping_root_poll(void *arg, struct blitz_cx *cx)
{
	struct ping_root *s = arg;
	uint64_t v;
	int err;

	BLITZ_CO_BEGIN(&s->co);
	blitz_oneshot_init(&s->done);
	s->c.done = &s->done;
	atomic_init(&s->c.left, PING_PONGS);
	for (int i = 0; i < PING_PONGS; i++) {
		struct ping p = { .c = &s->c };

		if (blitz_spawn_detached(NULL, &ping_vt, &p, sizeof(p)))
			die("spawn");
	}
	BLITZ_AWAIT(&s->co, blitz_oneshot_recv_poll(&s->done, cx, &v, &err));
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable ping_root_vt = BLITZ_TASK_VTABLE(ping_root_poll, NULL);

static void bench_ping_pong(void)
{
	struct ping_root r = { 0 };

	if (blitz_block_on(rt, &ping_root_vt, &r, sizeof(r)))
		die("block_on");
}

/* ---------------------------------------------------------------------- */
/* chained_spawn: each task spawns the next, 1,000 deep.                  */

struct chain {
	struct blitz_oneshot *done;
	int n;
};

static enum blitz_poll chain_poll(void *arg, struct blitz_cx *cx);
static const struct blitz_task_vtable chain_vt = BLITZ_TASK_VTABLE(chain_poll, NULL);

static enum blitz_poll chain_poll(void *arg, struct blitz_cx *cx)
{
	struct chain *s = arg;

	if (s->n == 0) {
		blitz_oneshot_send(s->done, 1);
	} else {
		struct chain next = { s->done, s->n - 1 };

		if (blitz_spawn_detached(NULL, &chain_vt, &next, sizeof(next)))
			die("spawn");
	}
	return BLITZ_READY;
}

struct chain_root {
	struct blitz_co co;
	struct blitz_oneshot done;
};

static enum blitz_poll chain_root_poll(void *arg, struct blitz_cx *cx)
{
	struct chain_root *s = arg;
	uint64_t v;
	int err;

	BLITZ_CO_BEGIN(&s->co);
	blitz_oneshot_init(&s->done);
	{
		struct chain c = { &s->done, CHAIN_LEN };

		if (blitz_spawn_detached(NULL, &chain_vt, &c, sizeof(c)))
			die("spawn");
	}
	BLITZ_AWAIT(&s->co, blitz_oneshot_recv_poll(&s->done, cx, &v, &err));
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable chain_root_vt = BLITZ_TASK_VTABLE(chain_root_poll, NULL);

static void bench_chained_spawn(void)
{
	struct chain_root r = { 0 };

	if (blitz_block_on(rt, &chain_root_vt, &r, sizeof(r)))
		die("block_on");
}

/* ---------------------------------------------------------------------- */
/* spawn_await: one task spawns 10,000 tasks, then awaits each in order.  */

struct spawn_await {
	struct blitz_co co;
	struct blitz_task **handles;
	int i;
};

static enum blitz_poll spawn_await_poll(void *arg, struct blitz_cx *cx)
{
	struct spawn_await *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = 0; i < SPAWN_TASKS; i++)
		if (!(s->handles[i] = blitz_spawn(NULL, &empty_vt, NULL, 0)))
			die("spawn");
	for (s->i = 0; s->i < SPAWN_TASKS; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_join_poll(s->handles[s->i], cx));
		blitz_task_release(s->handles[s->i]);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable spawn_await_vt = BLITZ_TASK_VTABLE(spawn_await_poll, NULL);

static void bench_spawn_await(void)
{
	struct spawn_await s = { .handles = handles };

	if (blitz_block_on(rt, &spawn_await_vt, &s, sizeof(s)))
		die("block_on");
}

/* ---------------------------------------------------------------------- */
/* fanout_tree: each task spawns 4 children and awaits them, 7 levels.    */

struct node {
	struct blitz_co co;
	struct blitz_task *child[FANOUT];
	int depth, i;
	long count;		/* out: tasks in this subtree */
};

static enum blitz_poll node_poll(void *arg, struct blitz_cx *cx);
static const struct blitz_task_vtable node_vt = BLITZ_TASK_VTABLE(node_poll, NULL);

static enum blitz_poll node_poll(void *arg, struct blitz_cx *cx)
{
	struct node *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	s->count = 1;
	if (s->depth > 0) {
		for (int i = 0; i < FANOUT; i++) {
			struct node c = { .depth = s->depth - 1 };

			if (!(s->child[i] = blitz_spawn(NULL, &node_vt, &c, sizeof(c))))
				die("spawn");
		}
		/* In spawn order, as Tokio's JoinHandles are awaited. */
		for (s->i = 0; s->i < FANOUT; s->i++) {
			BLITZ_AWAIT(&s->co, blitz_join_poll(s->child[s->i], cx));
			s->count += ((struct node *)blitz_task_state(s->child[s->i]))->count;
			blitz_task_release(s->child[s->i]);
		}
	}
	BLITZ_CO_END(&s->co);
}

static void bench_fanout_tree(void)
{
	struct node root = { .depth = FANOUT_DEPTH };

	if (blitz_block_on(rt, &node_vt, &root, sizeof(root)))
		die("block_on");
	if (root.count != FANOUT_TASKS)
		die("fanout_tree: wrong count");
}

/* ---------------------------------------------------------------------- */
/* burst_wake: bursts of 100 spawns from main into an idle runtime; each  */
/* task's wait from its spawn to its first poll is a latency sample.     */

static uint64_t *lat;			/* the measured iterations' samples */
static size_t lat_len, lat_cap;
static int lat_on;			/* run_bench: an iteration that is measured */

static void lat_reserve(size_t more)
{
	if (lat_len + more <= lat_cap)
		return;
	lat_cap = (lat_len + more) * 2;
	if (!(lat = realloc(lat, lat_cap * sizeof(*lat))))
		die("realloc");
}

struct burst {
	sem_t done;
	_Atomic long left;
	uint64_t wait[BURST_TASKS];	/* per task: first poll - spawn, ns */
};

struct burst_task {
	struct burst *b;
	uint64_t spawned;
	int i;
};

static enum blitz_poll burst_poll(void *arg, struct blitz_cx *cx)
{
	struct burst_task *s = arg;

	s->b->wait[s->i] = bench_now_ns() - s->spawned;
	/* acq_rel: the last one's post follows every task's sample. */
	if (atomic_fetch_sub_explicit(&s->b->left, 1, memory_order_acq_rel) == 1)
		sem_post(&s->b->done);
	return BLITZ_READY;
}
static const struct blitz_task_vtable burst_vt = BLITZ_TASK_VTABLE(burst_poll, NULL);

/*
 * One iteration: BURSTS times, let the runtime go idle (a 1 ms sleep,
 * not timed: its workers park), then spawn a burst from main and wait
 * for all of it; the time is the bursts' alone.
 */
static uint64_t bench_burst_wake_timed(void)
{
	static struct burst b;
	uint64_t total = 0;

	if (sem_init(&b.done, 0, 0))
		die("sem_init");
	for (int k = 0; k < BURSTS; k++) {
		uint64_t start;

		usleep(BURST_GAP_US);
		atomic_store_explicit(&b.left, BURST_TASKS, memory_order_relaxed);
		start = bench_now_ns();
		for (int i = 0; i < BURST_TASKS; i++) {
			struct burst_task t = { &b, bench_now_ns(), i };

			if (blitz_spawn_detached(rt, &burst_vt, &t, sizeof(t)))
				die("spawn");
		}
		while (sem_wait(&b.done))
			;
		total += bench_now_ns() - start;
		if (lat_on) {
			lat_reserve(BURST_TASKS);
			memcpy(lat + lat_len, b.wait, sizeof(b.wait));
			lat_len += BURST_TASKS;
		}
	}
	sem_destroy(&b.done);
	return total;
}

/* ---------------------------------------------------------------------- */
/* pipeline: a chain of 4 tasks joined by 16-slot channels; the source    */
/* sends 10,000 items through two relays to the sink.                     */

static struct blitz_channel pipe_chan[PIPE_STAGES - 1];

struct stage {
	struct blitz_co co;
	struct blitz_chan_waiter w;
	struct blitz_channel *in, *out;	/* NULL: the source, the sink */
	long i, sum;
	uint64_t v;
	int err;
};

static enum blitz_poll stage_poll(void *arg, struct blitz_cx *cx)
{
	struct stage *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0;; s->i++) {
		if (s->in) {
			BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(s->in, &s->w, cx, &s->v, &s->err));
			if (s->err == -EPIPE)
				break;
		} else if (s->i == PIPE_ITEMS) {
			break;
		} else {
			s->v = (uint64_t)s->i;
		}
		if (!s->out) {
			s->sum += (long)s->v;
			continue;
		}
		BLITZ_AWAIT(&s->co, blitz_channel_send_poll(s->out, &s->w, cx, &s->v, &s->err));
		if (s->err)
			die("pipeline: send");
	}
	if (s->out)
		blitz_channel_close(s->out);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable stage_vt = BLITZ_TASK_VTABLE(stage_poll, NULL);

/* The root: spawns the stages, source last, and awaits the sink. */
struct pipe_root {
	struct blitz_co co;
	struct blitz_task *sink;
	long sum;
};

static enum blitz_poll pipe_root_poll(void *arg, struct blitz_cx *cx)
{
	struct pipe_root *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = PIPE_STAGES - 1; i >= 0; i--) {
		struct stage st = {
			.in = i > 0 ? &pipe_chan[i - 1] : NULL,
			.out = i < PIPE_STAGES - 1 ? &pipe_chan[i] : NULL,
		};
		struct blitz_task *t = blitz_spawn(NULL, &stage_vt, &st, sizeof(st));

		if (!t)
			die("spawn");
		if (i == PIPE_STAGES - 1)
			s->sink = t;
		else
			blitz_task_release(t);
	}
	BLITZ_AWAIT(&s->co, blitz_join_poll(s->sink, cx));
	s->sum = ((struct stage *)blitz_task_state(s->sink))->sum;
	blitz_task_release(s->sink);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable pipe_root_vt = BLITZ_TASK_VTABLE(pipe_root_poll, NULL);

static void bench_pipeline(void)
{
	struct pipe_root r = { 0 };

	for (int i = 0; i < PIPE_STAGES - 1; i++)
		if (blitz_channel_init(&pipe_chan[i], PIPE_CAPACITY, sizeof(uint64_t)))
			die("channel init");
	if (blitz_block_on(rt, &pipe_root_vt, &r, sizeof(r)))
		die("block_on");
	if (r.sum != (long)PIPE_ITEMS * (PIPE_ITEMS - 1) / 2)
		die("pipeline: wrong sum");
	for (int i = 0; i < PIPE_STAGES - 1; i++)
		blitz_channel_destroy(&pipe_chan[i]);
}

/* ---------------------------------------------------------------------- */

struct bench {
	const char *name;
	void (*run)(void);
	long ops;
	uint64_t (*timed)(void);	/* times itself (instead of run), samples latencies */
};

static const struct bench benches[] = {
	{ "spawn_many_local", bench_spawn_many_local, SPAWN_TASKS, NULL },
	{ "spawn_many_remote", bench_spawn_many_remote, SPAWN_TASKS, NULL },
	{ "yield_many", bench_yield_many, (long)YIELD_TASKS * YIELD_COUNT, NULL },
	{ "ping_pong", bench_ping_pong, PING_PONGS, NULL },
	{ "chained_spawn", bench_chained_spawn, CHAIN_LEN, NULL },
	{ "spawn_await", bench_spawn_await, SPAWN_TASKS, NULL },
	{ "fanout_tree", bench_fanout_tree, FANOUT_TASKS, NULL },
	{ "burst_wake", NULL, (long)BURSTS * BURST_TASKS, bench_burst_wake_timed },
	{ "pipeline", bench_pipeline, PIPE_ITEMS, NULL },
};

/*
 * iter_stats - with --iter-stats, one stderr line per timed iteration: its
 * time and what each worker did during it (polls, tasks stolen, parks), to
 * see why one iteration is slower than the next.
 */
static int iter_stats;

static void read_worker_stats(struct blitz_worker_stats *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		blitz_worker_stats(rt, i, &out[i]);
}

static void print_iter_stats(const char *name, int iter, uint64_t ns,
			     const struct blitz_worker_stats *before,
			     const struct blitz_worker_stats *after, unsigned n)
{
	fprintf(stderr, "%s iter %d: %.3f ms", name, iter, (double)ns / 1e6);
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, " | w%u polls=%llu stolen=%llu parks=%llu", i,
			(unsigned long long)(after[i].polls - before[i].polls),
			(unsigned long long)(after[i].stolen - before[i].stolen),
			(unsigned long long)(after[i].parks - before[i].parks));
	fputc('\n', stderr);
}

static void run_bench(const struct bench *b, unsigned workers, int iters, int warmup)
{
	struct blitz_worker_stats before[64], after[64];
	unsigned nw = workers < 64 ? workers : 64;

	uint64_t *t = calloc((size_t)iters, sizeof(*t));
	uint64_t median;

	if (!t)
		die("calloc");
	for (int i = 0; i < warmup; i++)
		b->timed ? (void)b->timed() : b->run();
	lat_len = 0;
	lat_on = 1;
	for (int i = 0; i < iters; i++) {
		uint64_t start;

		if (iter_stats)
			read_worker_stats(before, nw);
		start = bench_now_ns();
		if (b->timed) {
			t[i] = b->timed();
		} else {
			b->run();
			t[i] = bench_now_ns() - start;
		}
		if (iter_stats) {
			read_worker_stats(after, nw);
			print_iter_stats(b->name, i, t[i], before, after, nw);
		}
	}
	lat_on = 0;
	qsort(t, (size_t)iters, sizeof(*t), bench_cmp_u64);
	median = bench_median(t, (size_t)iters);
	printf("{\"runtime\":\"blitz\",\"bench\":\"%s\",\"workers\":%u,\"backend\":\"%s\","
	       "\"ops\":%ld,\"iters\":%d,\"median_ns\":%llu,\"min_ns\":%llu,\"ns_per_op\":%.2f",
	       b->name, workers, blitz_io_backend_name(rt), b->ops, iters, (unsigned long long)median,
	       (unsigned long long)t[0], (double)median / (double)b->ops);
	bench_print_spread(b->name, t, (size_t)iters, b->ops);
	/* burst_wake: spawn to first poll over every measured task, nearest rank. */
	if (lat_len) {
		qsort(lat, lat_len, sizeof(*lat), bench_cmp_u64);
		printf(",\"p50_ns\":%llu,\"p99_ns\":%llu",
		       (unsigned long long)bench_quantile(lat, lat_len, 0.5),
		       (unsigned long long)bench_quantile(lat, lat_len, 0.99));
	}
	printf("}\n");
	fflush(stdout);
	free(t);
}

static void print_stats(void)
{
	struct blitz_stats s;

	blitz_stats(rt, &s);
	fprintf(stderr, "stats: spawned=%llu polled=%llu stolen=%llu parked=%llu\n",
		(unsigned long long)s.total_spawned, (unsigned long long)s.total_polled,
		(unsigned long long)s.total_stolen, (unsigned long long)s.total_parked);
	for (unsigned i = 0; i < s.num_workers; i++) {
		struct blitz_worker_stats w;

		blitz_worker_stats(rt, i, &w);
		fprintf(stderr, "  worker %u: polls=%llu steals=%llu stolen=%llu steal_fails=%llu "
			"parks=%llu lifo_hits=%llu global_batches=%llu overflows=%llu "
			"ewma_poll_ns=%llu interval=%llu\n", i,
			(unsigned long long)w.polls, (unsigned long long)w.steals,
			(unsigned long long)w.stolen, (unsigned long long)w.steal_fails,
			(unsigned long long)w.parks, (unsigned long long)w.lifo_hits,
			(unsigned long long)w.global_batches, (unsigned long long)w.overflows,
			(unsigned long long)w.ewma_poll_ns, (unsigned long long)w.global_interval);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sched-bench [--workers N] [--iters K] [--warmup W] "
		"[--bench NAME|all] [--stats] [--iter-stats] [--list] [--list-backends]\n"
		"Tokio's scheduler benchmarks and three of blitz's own; one JSON line per benchmark.\n"
		"The policy knobs come from the environment (BLITZ_LIFO, BLITZ_STEAL, ...).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workers", required_argument, NULL, 'w' },
		{ "iters", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "bench", required_argument, NULL, 'b' },
		{ "stats", no_argument, NULL, 's' },
		{ "iter-stats", no_argument, NULL, 'I' },
		{ "list", no_argument, NULL, 'l' },
		{ "list-backends", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct blitz_config cfg;
	const char *which = "all";
	int iters = 15, warmup = 3, stats = 0, c, found = 0;

	bench_config(&cfg, 2);
	while ((c = bench_getopt(argc, argv, opts)) != -1) {
		switch (c) {
		case 'w': cfg.workers = (unsigned)bench_parse_num("--workers", optarg, 1, blitz_max_workers()); break;
		case 'i': iters = (int)bench_parse_num("--iters", optarg, 1, 1000000); break;
		case 'W': warmup = (int)bench_parse_num("--warmup", optarg, 0, 1000000); break;
		case 'b': which = optarg; break;
		case 's': stats = 1; break;
		case 'I': iter_stats = 1; break;
		case 'l':
			for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
				puts(benches[i].name);
			return 0;
		case 'B': bench_list_backends(); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	rt = blitz_runtime_new(&cfg);
	if (!rt)
		die("blitz_runtime_new");
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++) {
		if (strcmp(which, "all") && strcmp(which, benches[i].name))
			continue;
		found = 1;
		run_bench(&benches[i], cfg.workers, iters, warmup);
	}
	if (!found) {
		fprintf(stderr, "sched-bench: --bench %s: no such benchmark (try --list)\n", which);
		blitz_runtime_free(rt);
		return 2;
	}
	if (stats)
		print_stats();
	blitz_runtime_free(rt);
	return 0;
}
