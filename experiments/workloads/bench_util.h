/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what the workload programs (sched-bench, sync-bench,
 * echo-bench) share: the clock, sorting samples, option numbers.
 */
#ifndef BLITZ_BENCH_UTIL_H
#define BLITZ_BENCH_UTIL_H

#include <stdint.h>

/* bench_now_ns - CLOCK_MONOTONIC in ns. */
uint64_t bench_now_ns(void);

/* bench_cmp_u64 - qsort() comparator of uint64_t samples, ascending. */
int bench_cmp_u64(const void *a, const void *b);

/*
 * bench_parse_num - option @opt's value @v as a number from @lo to @hi;
 * anything else is an error naming the program, the option and the range
 * (exit 2).
 */
long bench_parse_num(const char *opt, const char *v, long lo, long hi);

#endif
