// SPDX-License-Identifier: MIT
/*
 * blocking-bench - the blocking pool (core/blocking.c) under a known load:
 * each benchmark runs JOBS jobs through the pool, so a tracer can check
 * that it saw every one (tests/scripts/tools-blockinglat.sh).  One JSON
 * line per benchmark, as sched-bench prints them:
 *
 * {"runtime":"blitz","bench":"blocking_round_trip","workers":2,
 *  "backend":"io_uring","ops":1000,"iters":15,"median_ns":...,...}
 *
 *   blocking_round_trip  one task awaits JOBS jobs, one after the other:
 *                        submit, a pool thread runs it, the waker
 *                        reschedules the task (Tokio's spawn_blocking
 *                        round trip)
 *   blocking_fan_out     JOBS tasks spawned from main, one job each, all
 *                        in flight at once: the pool grows to its cap
 *   blocking_outside     main submits JOBS jobs with blitz_spawn_blocking
 *                        and waits for each (no task involved)
 *
 * A job sleeps --sleep-us (default 0: the pool's own overhead).  --stats
 * prints, on stderr, the jobs the program ran (counted by the job function
 * itself) and the pool's statistics:
 *
 *   stats: jobs=3000 jobs_done=3000 threads_started=9 max_threads=512
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <blitz.h>
#include "bench_util.h"

#define JOBS	1000

static struct blitz_runtime *rt;
static unsigned sleep_us;
/* Relaxed: a count read after every job has completed (the pool's release). */
static _Atomic unsigned long jobs_run;

static void die(const char *what, int err)
{
	fprintf(stderr, "blocking-bench: %s: %s\n", what, strerror(err));
	exit(1);
}

/* The job: counts itself, sleeps if asked, returns its argument. */
static int64_t job_fn(void *arg)
{
	atomic_fetch_add_explicit(&jobs_run, 1, memory_order_relaxed);
	if (sleep_us)
		usleep(sleep_us);
	return (int64_t)(intptr_t)arg;
}

/* A task that awaits @n jobs, one after the other. */
struct jobs_task {
	struct blitz_co co;
	struct blitz_blocking job;
	int i, n;
};

static enum blitz_poll jobs_task_poll(void *arg, struct blitz_cx *cx)
{
	struct jobs_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		blitz_blocking_init(&s->job, job_fn, (void *)(intptr_t)s->i);
		BLITZ_AWAIT(&s->co, blitz_blocking_poll(&s->job, cx));
		if (s->job.result != s->i)
			die("job result", s->job.result < 0 ? (int)-s->job.result : EINVAL);
	}
	BLITZ_CO_END(&s->co);
}

/* A cancelled task must not leave its job queued (docs/blocking.md). */
static void jobs_task_drop(void *arg)
{
	blitz_blocking_cancel(&((struct jobs_task *)arg)->job);
}
static const struct blitz_task_vtable jobs_task_vt =
	BLITZ_TASK_VTABLE(jobs_task_poll, jobs_task_drop);

static void bench_round_trip(void)
{
	struct jobs_task s = { .n = JOBS };

	if (blitz_block_on(rt, &jobs_task_vt, &s, sizeof(s)))
		die("block_on", errno);
}

static struct blitz_task *handles[JOBS];

static void bench_fan_out(void)
{
	struct jobs_task s = { .n = 1 };

	for (int i = 0; i < JOBS; i++)
		if (!(handles[i] = blitz_spawn(rt, &jobs_task_vt, &s, sizeof(s))))
			die("spawn", errno);
	for (int i = 0; i < JOBS; i++) {
		if (blitz_join(handles[i]))
			die("join", ECANCELED);
		blitz_task_release(handles[i]);
	}
}

static struct blitz_blocking jobs[JOBS];

static void bench_outside(void)
{
	int err;

	for (int i = 0; i < JOBS; i++) {
		blitz_blocking_init(&jobs[i], job_fn, (void *)(intptr_t)i);
		if ((err = blitz_spawn_blocking(rt, &jobs[i])))
			die("spawn_blocking", -err);
	}
	for (int i = 0; i < JOBS; i++)
		if (blitz_blocking_wait(&jobs[i]) != i)
			die("job result", EINVAL);
}

static const struct bench_def benches[] = {
	{ "blocking_round_trip", bench_round_trip, JOBS },
	{ "blocking_fan_out", bench_fan_out, JOBS },
	{ "blocking_outside", bench_outside, JOBS },
};

static void print_stats(void)
{
	struct blitz_blocking_stats st;

	blitz_blocking_stats(rt, &st);
	fprintf(stderr, "stats: jobs=%lu jobs_done=%llu threads_started=%llu max_threads=%u\n",
		atomic_load_explicit(&jobs_run, memory_order_relaxed),
		(unsigned long long)st.jobs_done, (unsigned long long)st.threads_started,
		st.max_threads);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: blocking-bench [--workers N] [--iters K] [--warmup W] "
		"[--sleep-us US] [--bench NAME[,NAME...]|all] [--stats] [--list]\n"
		"The blocking pool's round trip and fan-out on blitz, %d jobs per iteration;\n"
		"one JSON line per benchmark.  The pool's cap comes from BLITZ_BLOCKING_THREADS.\n",
		JOBS);
}

static const char *bench_name(size_t i)
{
	return benches[i].name;
}

static bool stats;

static void parse(int key, const char *arg)
{
	if (key == 'S')
		sleep_us = (unsigned)bench_parse_num("--sleep-us", arg, 0, 1000000);
	else
		stats = true;
}

int main(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "sleep-us", required_argument, NULL, 'S' },
		{ "stats", no_argument, NULL, 's' },
		{ 0 },
	};
	struct bench_cli cli = {
		.prog = "blocking-bench", .nr_benches = sizeof(benches) / sizeof(benches[0]),
		.bench_name = bench_name, .usage = usage, .extra = extra, .parse = parse,
		.iters = 15, .warmup = 3,
	};

	char tail[32];

	bench_parse_cli(&cli, 2, argc, argv);
	snprintf(tail, sizeof(tail), ",\"sleep_us\":%u", sleep_us);
	rt = blitz_runtime_new(&cli.cfg);
	if (!rt)
		die("blitz_runtime_new", errno);
	bench_run_defs(&cli, rt, benches, cli.nr_benches, tail);
	if (stats)
		print_stats();
	blitz_runtime_free(rt);
	return 0;
}
