/* SPDX-License-Identifier: MIT */
/* tools/blockinglat.h - types shared by blockinglat.bpf.c and blockinglat.c. */
#ifndef BLITZ_TOOLS_BLOCKINGLAT_H
#define BLITZ_TOOLS_BLOCKINGLAT_H

#include "hist.h"

/* Histograms: two, or two per pool thread with -T. */
#define BLOCKINGLAT_MAX_HISTS	4096

/* hist_key.label: which interval of a job. */
#define BLOCKINGLAT_WAIT	0	/* queued to started (blocking_start's wait_ns) */
#define BLOCKINGLAT_RUN		1	/* started to ended (blocking_end's run_ns) */

/*
 * The key of a histogram: a struct hist_key (worker is always -1, the pool
 * threads are no workers; or HIST_ALL without -T) followed by the pool
 * thread's id (0 without -T).  Starting with a struct hist_key lets the
 * common histogram code read it.
 */
struct blockinglat_key {
	struct hist_key hk;
	__s32 tid;
	__s32 pad;
};

#endif
