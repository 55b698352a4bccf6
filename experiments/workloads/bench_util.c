// SPDX-License-Identifier: MIT
/* bench_util.c - see bench_util.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bench_util.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

long bench_parse_num(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || !*v || n < lo || n > hi) {
		fprintf(stderr, "%s: %s %s: expected a number from %ld to %ld\n",
			program_invocation_short_name, opt, v, lo, hi);
		exit(2);
	}
	return n;
}
