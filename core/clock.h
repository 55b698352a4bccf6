/* SPDX-License-Identifier: MIT */
/* core/clock.h - the monotonic clock in nanoseconds. */
#ifndef BLITZ_CORE_CLOCK_H
#define BLITZ_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* clock_after - the time @duration_ns after @now; past the clock's range, UINT64_MAX (never). */
static inline uint64_t clock_after(uint64_t now, uint64_t duration_ns)
{
	return duration_ns > UINT64_MAX - now ? UINT64_MAX : now + duration_ns;
}

#endif
