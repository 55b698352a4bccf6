/* SPDX-License-Identifier: MIT */
/* tools/tasksrc.h - types shared by tasksrc.bpf.c and tasksrc.c. */
#ifndef BLITZ_TOOLS_TASKSRC_H
#define BLITZ_TOOLS_TASKSRC_H

#include "hist.h"

#define TASKSRC_MAX_WORKERS	4096

/* task_poll_start's source argument. */
#define SRC_LIFO	0
#define SRC_RING	1
#define SRC_BATCH	2
#define SRC_GLOBAL	3
#define SRC_STEAL	4
#define SRC_HELPER	5
#define SRC_OTHER	6	/* a value this tool does not know */
#define NR_SOURCES	7

struct src_key {
	__s32 worker;
};

/* Polls by source on one worker. */
struct src_val {
	__u64 polls[NR_SOURCES];
};

#endif
