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

#endif
