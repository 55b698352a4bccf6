/* SPDX-License-Identifier: MIT */
/*
 * sample.h - the soak's samples (what the process and the runtime look like
 * every --interval seconds) and the flatness verdict drawn from them.
 */
#ifndef BLITZ_SOAK_SAMPLE_H
#define BLITZ_SOAK_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct blitz_runtime;

struct sample {
	double t;		/* seconds since the load started */
	uint64_t rss_kb;	/* VmRSS */
	uint64_t heap_kb;	/* bytes malloc has handed out and not had back */
	uint64_t fds;		/* entries of /proc/self/fd */
	uint64_t sockets;	/* of which sockets */
	uint64_t other_sockets;	/* sockets but the client's and the server's connections */
	uint64_t nonsock;	/* fds that are not sockets */
	uint64_t live;		/* blitz_runtime_live_tasks() */
};

/* proc_rss_kb - VmRSS (or VmHWM with @hwm) of this process in KiB, 0 if unknown. */
uint64_t proc_rss_kb(bool hwm);

/*
 * heap_kb - what the C allocator has handed out and not had back, in KiB
 * (glibc's mallinfo2(): uordblks + hblkhd), summed over its arenas.  Unlike
 * RSS it does not move with fragmentation or with memory kept for reuse:
 * a leak grows it, churn does not.
 */
uint64_t heap_kb(void);

/* proc_fds - open descriptors of this process; *@sockets (if not NULL): of which sockets. */
uint64_t proc_fds(uint64_t *sockets);

/* proc_fds_show - one line per open descriptor: its number and what it is. */
void proc_fds_show(FILE *f);

/*
 * sample_take - take a sample at @t seconds into the run, append it (and
 * every counter) as one JSON line to @out (if not NULL) with "phase":
 * @phase, and keep it for the verdict if @phase is "load".
 */
struct sample sample_take(struct blitz_runtime *rt, double t, const char *phase, FILE *out);

/*
 * One resource's verdict: the samples after the warm-up split in two
 * halves by time, A then B; flat when max(B) <= limit, where limit is
 * max(A) plus the slack (sample.c says why each slack is what it is).
 */
struct flat {
	bool judged;		/* long enough (FLAT_MIN_SPAN_S, FLAT_MIN_SAMPLES) */
	bool ok;
	unsigned n_a, n_b;
	uint64_t first, last;	/* the first sample after the warm-up, the last one */
	uint64_t a_max, b_max, limit;
	double slope_per_min;	/* least-squares slope over both halves (information) */
};

/* flat_judge - the verdicts on RSS, the heap (KiB) and non-socket fds after @warmup_s. */
void flat_judge(double warmup_s, struct flat *rss, struct flat *heap, struct flat *fds);

/*
 * Not judged (a run too short to tell a leak from the warm-up's growth):
 * less than FLAT_MIN_SPAN_S seconds of samples after the warm-up, or fewer
 * than FLAT_MIN_SAMPLES samples in a half.
 */
#define FLAT_MIN_SPAN_S		120
#define FLAT_MIN_SAMPLES	10

#endif /* BLITZ_SOAK_SAMPLE_H */
