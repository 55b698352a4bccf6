/* SPDX-License-Identifier: MIT */
/* tools/top.h - types shared by top.bpf.c and top.c. */
#ifndef BLITZ_TOOLS_TOP_H
#define BLITZ_TOOLS_TOP_H

#include "hist.h"

#define TOP_MAX_WORKERS	4096

struct top_key {
	__s32 worker;
};

/* The counters of one worker, named as in struct blitz_worker_stats. */
struct top_val {
	__u64 polls;		/* task_poll_start */
	__u64 steals;		/* steal */
	__u64 stolen;		/* steal: sum of count */
	__u64 steal_fails;	/* steal_fail */
	__u64 parks;		/* park */
	__u64 lifo_hits;	/* lifo_hit */
	__u64 global_batches;	/* global_batch */
	__u64 global_tasks;	/* global_batch: sum of count */
	__u64 overflows;	/* overflow */
	__u64 overflowed;	/* overflow: sum of count */
};

#define TOP_NR_COUNTERS	(sizeof(struct top_val) / sizeof(__u64))

#endif
