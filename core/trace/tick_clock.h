/* SPDX-License-Identifier: MIT */
/*
 * core/trace/tick_clock.h - the cheap clock of the tracing paths (the
 * summary histograms' stamps and timed polls, the event log's records):
 * rdtsc where the CPU says its TSC is invariant (cheaper than
 * clock_gettime), else CLOCK_MONOTONIC in ns.  Its ticks convert to
 * ns with a factor measured once against CLOCK_MONOTONIC, at the first
 * attach of a tracer (tick_clock_calibrate).
 *
 * Decided once (tick_clock_init, before the first runtime's workers
 * start), so every stamp in the process is in the same unit.  The TSCs of
 * the CPUs are taken to be in step (what an invariant TSC gives on one
 * socket, and what Linux checks at boot): a stamp made on one worker is
 * read against the clock of another.
 */
#ifndef BLITZ_CORE_TICK_CLOCK_H
#define BLITZ_CORE_TICK_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#include "../clock.h"

/*
 * tick_clock_tsc: the ticks are the TSC's.  tick_clock_mult: ns per tick
 * << 32; 0 until calibrated.  Written once each and read as plain values
 * (relaxed: nothing else is published through them).
 */
extern bool tick_clock_tsc;
extern _Atomic uint64_t tick_clock_mult;

void tick_clock_init(void);
void tick_clock_calibrate(void);

static inline uint64_t tick_clock_now(void)
{
#if defined(__x86_64__)
	if (tick_clock_tsc)
		return __rdtsc();
#endif
	return clock_now_ns();
}

/* tick_clock_to_ns - @d ticks in ns (0 before the calibration). */
static inline uint64_t tick_clock_to_ns(uint64_t d)
{
	return (uint64_t)(((unsigned __int128)d *
			   atomic_load_explicit(&tick_clock_mult, memory_order_relaxed)) >> 32);
}

#endif
