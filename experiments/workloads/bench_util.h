/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what the workload programs (sched-bench, sync-bench,
 * echo-bench, blocking-bench) share: the clock, sorting samples, the result
 * line, option numbers.
 */
#ifndef BLITZ_BENCH_UTIL_H
#define BLITZ_BENCH_UTIL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <blitz.h>

/* bench_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t bench_now_ns(void);

/* bench_cmp_u64 - qsort() comparator of uint64_t samples, ascending. */
int bench_cmp_u64(const void *a, const void *b);

/*
 * bench_json_result - print the common fields of a benchmark's JSON line
 * from its @iters iteration times @t (sorted in place), without the closing
 * brace: the caller adds its own fields, then "}\n".
 *
 *	{"runtime":"blitz","bench":NAME,"workers":N,"backend":B,"ops":N,
 *	 "iters":N,"median_ns":N,"min_ns":N,"ns_per_op":X
 */
void bench_json_result(const char *name, unsigned workers, const char *backend, long ops,
		       uint64_t *t, int iters);

/*
 * bench_parse_num - option @opt's value @v as a number from @lo to @hi;
 * anything else is an error naming the program, the option and the range
 * (exit 2).
 */
long bench_parse_num(const char *opt, const char *v, long lo, long hi);

/*
 * struct bench_cli - the command line the benchmark programs (sched-bench,
 * sync-bench, blocking-bench) share: --workers N --iters K --warmup W
 * --bench NAME[,NAME...]|all --list --help, and the program's own options.
 */
struct bench_cli {
	/* Set by the program before bench_parse_cli(). */
	const char *prog;			/* for messages */
	size_t nr_benches;
	const char *(*bench_name)(size_t i);	/* for --list and --bench */
	void (*usage)(FILE *f);
	const struct option *extra;		/* its own options, or NULL */
	void (*parse)(int key, const char *arg);	/* one of @extra's */
	/* Defaults in (set by the program), values out. */
	struct blitz_config cfg;		/* from the environment, then --workers */
	int iters, warmup;
	const char *which;			/* --bench, checked */
};

/*
 * bench_parse_cli - fill @cli->cfg from the defaults and the environment
 * (workers = @workers unless --workers) and parse @argv.  --help, --list
 * exit 0; a bad option, value or benchmark name is a message and exit 2.
 */
void bench_parse_cli(struct bench_cli *cli, unsigned workers, int argc, char **argv);

/* A benchmark of sched-bench or blocking-bench: one run() does @ops operations. */
struct bench_def {
	const char *name;
	void (*run)(void);
	long ops;
};

/*
 * bench_run_defs - run each of the @n benchmarks @defs that @cli->which
 * selects on @rt: @cli->warmup untimed runs, then @cli->iters timed ones,
 * and print its result line ending with @tail (more fields: "" for none).
 */
void bench_run_defs(const struct bench_cli *cli, struct blitz_runtime *rt,
		    const struct bench_def *defs, size_t n, const char *tail);

/* bench_selected - is @name in the comma-separated list @which ("all": every one)? */
bool bench_selected(const char *which, const char *name);

#endif
