/* SPDX-License-Identifier: MIT */
/* tools/tasksrc.h - types shared by tasksrc.bpf.c and tasksrc.c. */
#ifndef BLITZ_TOOLS_TASKSRC_H
#define BLITZ_TOOLS_TASKSRC_H

#include "blitz_probe_codes.h"
#include "hist.h"

#define TASKSRC_MAX_WORKERS	4096

/* Counted per task_poll_start source (SRC_*), and one more: */
#define SRC_OTHER	PROBE_NR_SOURCES	/* a value this tool does not know */
#define NR_SOURCES	(PROBE_NR_SOURCES + 1)

struct src_key {
	__s32 worker;
};

/* Polls by source on one worker. */
struct src_val {
	__u64 polls[NR_SOURCES];
};

#endif
