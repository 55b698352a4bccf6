// SPDX-License-Identifier: MIT
/*
 * blocking-bench - what a trip through the blocking pool costs
 * (blitz/blocking.h), the tracker's issue 9.  The job is trivial (it
 * returns its argument), so what is measured is the pool: queueing a job,
 * waking a pool thread, and waking the waiter again.  One JSON line per
 * benchmark, docs/design.md's bench JSON plus rates, latency and threads:
 *
 * {"runtime":"blitz","bench":"blocking_roundtrip","workers":2,
 *  "backend":"io_uring","from":"task","ops":2000,"iters":15,"median_ns":...,
 *  "min_ns":...,"ns_per_op":...,"ops_per_sec":...,"p50_ns":...,
 *  "p99_ns":...,"max_ns":...,"os_threads":5}
 *
 *  - blocking_roundtrip: a task awaits one job after another
 *    (blitz_blocking_poll); the latency of each, from before the job is
 *    queued to the task having its result;
 *  - blocking_burst: a task queues ops jobs at once, then awaits them in
 *    order; throughput only (p50_ns... are null);
 *  - blocking_roundtrip_outside: the main thread, not a worker, queues one
 *    job after another and sleeps until each is done (blitz_spawn_blocking,
 *    blitz_blocking_wait).
 *
 * median_ns/min_ns are over the iterations; ns_per_op and ops_per_sec come
 * from the median; the percentiles (nearest rank, exact) are over every job
 * of every measured iteration.  os_threads is the process's thread count
 * after the benchmark (main, the workers and the pool threads alive).  The
 * Tokio peer, experiments/peers/tokio/src/blocking_bench.rs, runs the same
 * benchmarks under the same names; experiments/peers/run-blocking puts the
 * two side by side.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <blitz.h>
#include "bench_util.h"

#define PROG	"blocking-bench"

static struct blitz_runtime *rt;

static void die(const char *what)
{
	fprintf(stderr, PROG ": %s\n", what);
	exit(1);
}

/*
 * The job: as trivial as a closure that returns a number, after sleeping
 * --sleep-us (default 0).  It counts itself, so that a tracer's counts can
 * be checked against the jobs that really ran (--stats).
 */
static unsigned sleep_us;
static _Atomic unsigned long jobs_run;

static int64_t echo_job(void *arg)
{
	if (sleep_us)
		usleep(sleep_us);
	/* Relaxed: a count, read after every job has been waited for. */
	atomic_fetch_add_explicit(&jobs_run, 1, memory_order_relaxed);
	return (int64_t)(intptr_t)arg;
}

/* --stats: on stderr, the jobs run and the pool's own statistics. */
static void print_stats(void)
{
	struct blitz_blocking_stats st;

	blitz_blocking_stats(rt, &st);
	fprintf(stderr, "stats: jobs=%lu jobs_done=%llu threads_started=%llu max_threads=%u\n",
		atomic_load_explicit(&jobs_run, memory_order_relaxed),
		(unsigned long long)st.jobs_done, (unsigned long long)st.threads_started,
		st.max_threads);
}

static void check_result(const struct blitz_blocking *job, long want)
{
	if (job->result != want) {
		fprintf(stderr, PROG ": job %ld returned %lld\n", want, (long long)job->result);
		exit(1);
	}
}

/* ---------------------------------------------------------------------- */
/* blocking_roundtrip: from a task, one job at a time                      */

struct roundtrip {
	struct blitz_co co;
	struct blitz_blocking job;
	long i, n;
	uint64_t t0;
	uint64_t *lat;			/* n samples */
};

static enum blitz_poll roundtrip_poll(void *arg, struct blitz_cx *cx)
{
	struct roundtrip *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		s->t0 = bench_now_ns();
		blitz_blocking_init(&s->job, echo_job, (void *)(intptr_t)s->i);
		BLITZ_AWAIT(&s->co, blitz_blocking_poll(&s->job, cx));
		s->lat[s->i] = bench_now_ns() - s->t0;
		check_result(&s->job, s->i);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable roundtrip_vt = BLITZ_TASK_VTABLE(roundtrip_poll, NULL);

static void run_roundtrip(long ops, uint64_t *lat)
{
	struct roundtrip s = { .n = ops, .lat = lat };

	if (blitz_block_on(rt, &roundtrip_vt, &s, sizeof(s)))
		die("block_on failed");
}

/* ---------------------------------------------------------------------- */
/* blocking_burst: from a task, ops jobs at once                           */

/* The jobs live outside the task (as Tokio's live in their own allocations). */
static struct blitz_blocking *burst_jobs;

struct burst {
	struct blitz_co co;
	struct blitz_blocking *jobs;
	long i, n;
};

static enum blitz_poll burst_poll(void *arg, struct blitz_cx *cx)
{
	struct burst *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	/* The first poll of a job queues it: queue them all before awaiting any. */
	for (long i = 0; i < s->n; i++) {
		blitz_blocking_init(&s->jobs[i], echo_job, (void *)(intptr_t)i);
		blitz_blocking_poll(&s->jobs[i], cx);
	}
	for (s->i = 0; s->i < s->n; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_blocking_poll(&s->jobs[s->i], cx));
		check_result(&s->jobs[s->i], s->i);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable burst_vt = BLITZ_TASK_VTABLE(burst_poll, NULL);

static void run_burst(long ops, uint64_t *lat)
{
	struct burst s = { .jobs = burst_jobs, .n = ops };

	if (blitz_block_on(rt, &burst_vt, &s, sizeof(s)))
		die("block_on failed");
}

/* ---------------------------------------------------------------------- */
/* blocking_roundtrip_outside: from the main thread, one job at a time     */

static void run_outside(long ops, uint64_t *lat)
{
	struct blitz_blocking job;

	for (long i = 0; i < ops; i++) {
		uint64_t t0 = bench_now_ns();

		blitz_blocking_init(&job, echo_job, (void *)(intptr_t)i);
		if (blitz_spawn_blocking(rt, &job))
			die("blitz_spawn_blocking failed");
		blitz_blocking_wait(&job);
		lat[i] = bench_now_ns() - t0;
		check_result(&job, i);
	}
}

/* ---------------------------------------------------------------------- */

struct bench {
	const char *name;
	const char *from;		/* "task" or "thread" */
	long ops;
	bool latency;			/* run() fills one sample per op */
	void (*run)(long ops, uint64_t *lat);
};

static const struct bench benches[] = {
	{ "blocking_roundtrip", "task", 2000, true, run_roundtrip },
	{ "blocking_burst", "task", 1000, false, run_burst },
	{ "blocking_roundtrip_outside", "thread", 2000, true, run_outside },
};

#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static const char *bench_name(size_t i)
{
	return benches[i].name;
}

/* os_threads - the process's threads now (/proc/self/status), or -1. */
static long os_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void print_latency(const struct bench *b, uint64_t *lat, size_t n)
{
	if (!b->latency) {
		printf(",\"p50_ns\":null,\"p99_ns\":null,\"max_ns\":null");
		return;
	}
	qsort(lat, n, sizeof(*lat), bench_cmp_u64);
	printf(",\"p50_ns\":%llu,\"p99_ns\":%llu,\"max_ns\":%llu",
	       (unsigned long long)bench_quantile(lat, n, 0.50),
	       (unsigned long long)bench_quantile(lat, n, 0.99), (unsigned long long)lat[n - 1]);
}

static void run_bench(const struct bench *b, long ops, int iters, int warmup)
{
	uint64_t *t = calloc((size_t)iters, sizeof(*t));
	uint64_t *lat = calloc((size_t)iters * (size_t)ops, sizeof(*lat));
	uint64_t med;

	burst_jobs = calloc((size_t)ops, sizeof(*burst_jobs));
	if (!t || !lat || !burst_jobs)
		die("out of memory");
	for (int i = -warmup; i < iters; i++) {
		uint64_t start = bench_now_ns();

		b->run(ops, lat + (i < 0 ? 0 : (size_t)i * (size_t)ops));
		if (i >= 0)
			t[i] = bench_now_ns() - start;
	}
	qsort(t, (size_t)iters, sizeof(*t), bench_cmp_u64);
	med = bench_median(t, (size_t)iters);
	printf("{\"runtime\":\"blitz\",\"bench\":\"%s\",\"workers\":%u,\"backend\":\"%s\","
	       "\"from\":\"%s\",\"ops\":%ld,\"iters\":%d,\"median_ns\":%llu,\"min_ns\":%llu,"
	       "\"ns_per_op\":%.2f,\"ops_per_sec\":%.1f",
	       b->name, blitz_runtime_workers(rt), blitz_io_backend_name(rt), b->from, ops, iters,
	       (unsigned long long)med, (unsigned long long)t[0], (double)med / (double)ops,
	       (double)ops * 1e9 / (double)med);
	print_latency(b, lat, (size_t)iters * (size_t)ops);
	printf(",\"os_threads\":%ld,\"sleep_us\":%u}\n", os_threads(), sleep_us);
	fflush(stdout);
	free(burst_jobs);
	free(lat);
	free(t);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--workers N] [--iters K] [--warmup W] [--ops N] "
		"[--bench NAME|all|A,B] [--sleep-us US] [--stats] [--list]\n"
		"A trivial job's trip through blitz's blocking pool: from a task one at a time\n"
		"(latency), from a task many at once (throughput), from a thread outside the\n"
		"runtime; one JSON line per benchmark.  Defaults: --workers 2 --iters 15\n"
		"--warmup 3; --ops overrides every benchmark's job count.  The pool's knobs\n"
		"come from the environment (BLITZ_BLOCKING_THREADS, BLITZ_BLOCKING_IDLE_MS).\n"
		"--sleep-us: each job sleeps that long; --stats: the jobs run and the pool's\n"
		"statistics on stderr at the end.\n");
}

int main(int argc, char **argv)
{
	struct bench_args a = { .which = "all", .iters = 15, .warmup = 3 };

	const char *sleep_arg, *stats;

	bench_config(&a.cfg, 2);
	sleep_arg = bench_take_opt(&argc, argv, "sleep-us", true);
	stats = bench_take_opt(&argc, argv, "stats", false);
	if (sleep_arg)
		sleep_us = (unsigned)bench_parse_num("--sleep-us", sleep_arg, 0, 1000000);
	bench_parse_args(argc, argv, &a, NBENCH, bench_name, usage);
	if (!(rt = blitz_runtime_new(&a.cfg))) {
		perror(PROG ": blitz_runtime_new");
		return 1;
	}
	for (size_t i = 0; i < NBENCH; i++)
		if (bench_selected(a.which, benches[i].name))
			run_bench(&benches[i], a.ops ? a.ops : benches[i].ops, a.iters, a.warmup);
	if (stats)
		print_stats();
	blitz_runtime_free(rt);
	return 0;
}
