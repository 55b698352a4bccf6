// SPDX-License-Identifier: MIT
/*
 * lttngsite - the anchor for blitz's per-event mode (issue 16): what an
 * LTTng-UST tracepoint costs per event while a session records it, next
 * to what nopsite.c measures for a USDT site with bpftrace attached.  The
 * event carries what a per-event probe of blitz carries (a worker index
 * and a task address; lttngsite_tp.h) and is written, with its
 * timestamp, into a per-CPU ring buffer in shared memory that
 * lttng-consumerd drains: no trap, no kernel entry per event.
 *
 *   lttngsite N     N calls of the tracepoint
 *
 * Prints one JSON line, as nopsite does: the site ("lttng"), the calls and
 * the ns per call.  Without a session enabling blitz_anchor:poll the
 * tracepoint is a test of a flag (the untraced figure).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttngsite_tp.h"

static __attribute__((noinline)) void site(long i)
{
	lttng_ust_tracepoint(blitz_anchor, poll, (int)(i & 1), (uint64_t)i * 64);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double t0;
	long n, i;

	if (argc != 2 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: lttngsite CALLS\n");
		return 2;
	}
	t0 = now_ns();
	for (i = 0; i < n; i++)
		site(i);
	printf("{\"site\":\"lttng\",\"calls\":%ld,\"ns_per_call\":%.2f}\n", n, (now_ns() - t0) / n);
	return 0;
}
