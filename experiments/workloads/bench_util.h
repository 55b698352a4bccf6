/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what the workload programs (sched-bench, sync-bench,
 * echo-bench, fs-bench, blocking-bench) share: the clock, sorting samples
 * and reading statistics off them, option values.
 */
#ifndef BLITZ_BENCH_UTIL_H
#define BLITZ_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <blitz.h>

/* bench_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t bench_now_ns(void);

/* bench_cmp_u64 - qsort() comparator of uint64_t samples, ascending. */
int bench_cmp_u64(const void *a, const void *b);

/*
 * bench_median - the median of @n (> 0) @sorted samples; of an even count,
 * the mean of the two middle ones (what the Tokio and Go peers print).
 */
uint64_t bench_median(const uint64_t *sorted, size_t n);

/*
 * bench_quantile - the @q-quantile (0 < q <= 1) of @n (> 0) @sorted
 * samples by nearest rank: the ceil(q * n)-th smallest, exact (no buckets).
 */
uint64_t bench_quantile(const uint64_t *sorted, size_t n, double q);

/*
 * bench_parse_num - option @opt's value @v as a number from @lo to @hi;
 * anything else is an error naming the program, the option and the range
 * (exit 2).
 */
long bench_parse_num(const char *opt, const char *v, long lo, long hi);

/*
 * bench_parse_size - as bench_parse_num, with an optional binary suffix:
 * K (2^10), M (2^20) or G (2^30); "64K" is 65536.
 */
long bench_parse_size(const char *opt, const char *v, long lo, long hi);

/* bench_parse_backend - a backend's name but "auto" (blitz_backend_name(); else exit 2). */
enum blitz_io_backend bench_parse_backend(const char *opt, const char *v);

/*
 * bench_config - @cfg's defaults with @workers workers, then the BLITZ_*
 * environment (which may override them); a bad variable exits 2.
 */
void bench_config(struct blitz_config *cfg, unsigned workers);

/* bench_selected - is @name in the comma-separated list @which ("all": every one)? */
bool bench_selected(const char *which, const char *name);

/* The options of the benches that run a list of named benchmarks. */
struct bench_args {
	struct blitz_config cfg;	/* --workers; the BLITZ_* environment */
	const char *which;		/* --bench: a comma-separated list, or "all" */
	int iters, warmup;		/* --iters, --warmup */
	long ops;			/* --ops; 0: each benchmark's own count */
};

/*
 * bench_getopt - getopt_long() over @opts (long options only), except that
 * a bad command line ends the program with one line on stderr and exit 2:
 * an unknown option, an option without its value, or an argument left
 * over once the options are read.
 */
struct option;
int bench_getopt(int argc, char **argv, const struct option *opts);

/*
 * bench_parse_args - --workers N, --iters K, --warmup W, --ops N,
 * --bench NAME|all|A,B, --list (prints the @n names @name(0..n-1)) and
 * --help (@usage) into @a, which holds the defaults: cfg (bench_config),
 * which, iters and warmup.  Exits 0 after --list and --help, 2 on a bad
 * option or an unknown benchmark.
 */
void bench_parse_args(int argc, char **argv, struct bench_args *a, size_t n,
		      const char *(*name)(size_t i), void (*usage)(FILE *f));

/*
 * bench_take_opt - a program's own option: find "--NAME VALUE" (or
 * "--NAME=VALUE"; @has_value false: a bare flag "--NAME") in argv, remove
 * it, and return the value ("" for a flag), or NULL if it is not there.
 * Call before bench_parse_args(), which then sees only the shared options.
 */
const char *bench_take_opt(int *argc, char **argv, const char *name, bool has_value);

#endif
