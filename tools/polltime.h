/* SPDX-License-Identifier: MIT */
/* tools/polltime.h - types shared by polltime.bpf.c and polltime.c. */
#ifndef BLITZ_TOOLS_POLLTIME_H
#define BLITZ_TOOLS_POLLTIME_H

#include "hist.h"

/* Threads that can be inside a poll at once (workers and helpers). */
#define POLLTIME_MAX_THREADS	4096
#define POLLTIME_MAX_HISTS	1024

/* hist_key.label with -R: how the poll ended. */
#define POLL_PENDING	0
#define POLL_READY	1
#define POLL_ANY	2	/* not split */

/* A poll in progress on a thread. */
struct polltime_start {
	__u64 ts;
	__u64 task;
};

#endif
