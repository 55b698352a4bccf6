/* SPDX-License-Identifier: MIT */
/*
 * tools/summary.h - the summary mode's types, shared by summary.bpf.h and
 * summary_helpers.c: the runtime's per-worker histograms as the
 * hist_snapshot probe hands them out (<blitz/trace/histograms.h>), and the key
 * of the map that keeps the latest one of each worker.
 */
#ifndef BLITZ_TOOLS_SUMMARY_H
#define BLITZ_TOOLS_SUMMARY_H

#include "hist.h"
#include "../include/blitz/trace/histograms.h"

_Static_assert(BLITZ_HIST_SLOTS == MAX_SLOTS, "the runtime's and the tools' log2 slots differ");

/* Workers (of every traced process and runtime) whose latest snapshot is kept. */
#define SUMMARY_MAX_WORKERS	4096

/* A worker of one runtime of one process. */
struct summary_key {
	__u32 tgid;
	__s32 worker;
	__u64 runtime;
};

#endif /* BLITZ_TOOLS_SUMMARY_H */
