// SPDX-License-Identifier: MIT
/*
 * core/trace/tick_clock.c - detecting the cheap clock and calibrating it
 * (tick_clock.h).
 */
#include <pthread.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "tick_clock.h"

bool tick_clock_tsc;
_Atomic uint64_t tick_clock_mult;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static pthread_once_t calibrate_once = PTHREAD_ONCE_INIT;
#define CALIBRATE_NS	20000	/* the spin between the two readings */
#define CALIBRATE_TRIES	5	/* readings of each end, the tightest kept */

static void detect(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every state. */
	tick_clock_tsc = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#endif
}

/* tick_clock_init - decide the clock (once per process). */
void tick_clock_init(void)
{
	pthread_once(&detect_once, detect);
}

/*
 * clock_pair - one reading of both clocks: the ns clock's, with the ticks
 * halfway between two tick reads around it; returns the ticks between
 * those two (the reading's uncertainty: large if the thread was preempted).
 */
static uint64_t clock_pair(uint64_t *ticks, uint64_t *ns)
{
	uint64_t a = tick_clock_now(), n = clock_now_ns(), b = tick_clock_now();

	*ticks = a + (b - a) / 2;
	*ns = n;
	return b - a;
}

/* clock_pair_tight - the tightest of CALIBRATE_TRIES readings. */
static void clock_pair_tight(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < CALIBRATE_TRIES; i++) {
		uint64_t t, n, spread = clock_pair(&t, &n);

		if (spread < best) {
			best = spread;
			*ticks = t;
			*ns = n;
		}
	}
}

/*
 * Ticks per ns against CLOCK_MONOTONIC: the tightest of a few readings of
 * both clocks, a spin of CALIBRATE_NS, the tightest again.  Each reading
 * is uncertain by about one clock read (tens of ns), so the factor is
 * within 0.1% of the truth, where a log2 bucket is 100% wide; it costs
 * the worker that calibrates CALIBRATE_NS of CPU once (it slept 2 ms in
 * its tick before, which stalled a traced program's first tick).
 */
static void calibrate(void)
{
	uint64_t t0, n0, t1, n1;

	if (!tick_clock_tsc) {
		atomic_store_explicit(&tick_clock_mult, 1ull << 32, memory_order_relaxed);
		return;
	}
	clock_pair_tight(&t0, &n0);
	while (clock_now_ns() - n0 < CALIBRATE_NS)
		;
	clock_pair_tight(&t1, &n1);
	atomic_store_explicit(&tick_clock_mult,
			      t1 > t0 ? (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0)) : 0,
			      memory_order_relaxed);
}

/* tick_clock_calibrate - measure the factor (once per process, at the first attach). */
void tick_clock_calibrate(void)
{
	pthread_once(&calibrate_once, calibrate);
}
