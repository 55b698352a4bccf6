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
 * The spread of a benchmark's timed runs, and whether they fall into two
 * modes: a median alone hides a row whose runs land in one of two regimes
 * (yield_many at 2 workers: 20 to 45 ns/op from one run to the next).
 *
 * The two-mode rule, over @n sorted samples x[0] <= ... <= x[n-1]:
 *  1. split them where the ratio between neighbours, x[k] / x[k-1], is
 *     largest (the first such k);
 *  2. it is two modes when
 *     - each side holds at least max(BENCH_MODES_MIN_SIDE,
 *       n / BENCH_MODES_SIDE_DIV) samples (n / 5 rounded down; fewer than
 *       four samples are never two modes),
 *     - the gap x[k] / x[k-1] is at least BENCH_MODES_MIN_GAP, and
 *     - the gap is larger than the square of the spread inside each side,
 *       x[k-1] / x[0] and x[n-1] / x[k]: on a log scale the empty stretch
 *       between the modes is more than twice as wide as either mode.
 * Why it holds up:
 *  - ratios, not differences: the rule reads the same at 20 ns and 20 ms;
 *  - only the largest gap can pass: any other split holds the largest gap
 *    inside one of its sides, whose spread is then at least the largest
 *    gap, so more than that split's own.  One outlier (a preempted run)
 *    far from a tight mode has the largest gap and a side of one sample:
 *    no two modes, and max_ns shows it;
 *  - unimodal noise fills its range: runs spread over 100..130 (1.3 end
 *    to end) have neighbour gaps of a few percent, and a gap of 1.25
 *    would need nearly every run at the two ends, tight at each;
 *  - the square, not the spread itself: of five samples, two neighbours
 *    of a wide unimodal spread are often further apart than the two
 *    samples of a side; squared, lognormal noise of sigma 0.2 is taken
 *    for two modes in 5% of five-sample draws (0.1% of ten) instead of
 *    13% (2%), while two clusters at 20 and 45 are found as often;
 *  - all-equal samples have no gap above 1.
 * A zero sample's ratio to a positive one is infinite (0 and 0: 1).
 * experiments/peers/compare implements the same rule, thresholds named
 * alike, over the per-round medians of a runtime's row (compare-sync
 * uses compare's); keep the two in step.
 */
#define BENCH_MODES_MIN_SIDE	2	/* samples each side holds, at least... */
#define BENCH_MODES_SIDE_DIV	5	/* ...and at least a fifth of them */
#define BENCH_MODES_MIN_GAP	1.25	/* the gap's ratio, at least */

/* bench_mode - one of two modes: the median of its samples, and how many. */
struct bench_mode {
	uint64_t ns;
	size_t n;
};

/*
 * struct bench_spread - min, p25, median, p75 and max of the samples (the
 * quantiles by nearest rank, exact: bench_quantile; the median:
 * bench_median); modes is 2 when the two-mode rule above holds, with
 * mode[0] the lower and mode[1] the upper (their n add up to the samples),
 * else 1 and mode[] zero.
 */
struct bench_spread {
	uint64_t min, p25, median, p75, max;
	int modes;
	struct bench_mode mode[2];
};

/* bench_spread - @s over @n (> 0) @sorted samples. */
void bench_spread(const uint64_t *sorted, size_t n, struct bench_spread *s);

/*
 * bench_print_spread - for the JSON line of benchmark @bench, @n (> 0)
 * @sorted run times of @ops operations each: ,"p25_ns":..,"p75_ns":..,
 * "max_ns":.. on stdout, and when the runs fall into two modes
 * ,"modes":[{"ns":LOW,"n":K},{"ns":HIGH,"n":M}] there and one warning
 * line on stderr (the program's name, the bench, both modes in ns/op).
 */
void bench_print_spread(const char *bench, const uint64_t *sorted, size_t n, long ops);

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

/*
 * bench_list_backends - print the name of every I/O backend, one a line,
 * "auto" left out (blitz_backend_name() counted up): the list that scripts
 * and tests run a workload over, so that a new backend needs no script
 * edited (--list-backends).
 */
void bench_list_backends(void);

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
