/* SPDX-License-Identifier: MIT */
/* tools/ewma.h - types shared by ewma.bpf.c and ewma.c. */
#ifndef BLITZ_TOOLS_EWMA_H
#define BLITZ_TOOLS_EWMA_H

#include "hist.h"

#define EWMA_RINGBUF_BYTES	(8 << 20)
#define EWMA_MAX_HISTS		4096

/* Summary mode: hists is keyed by hist_key, its label the process (tgid). */

/* One ewma_update, as streamed to user space. */
struct ewma_event {
	__u64 ts;		/* CLOCK_MONOTONIC ns */
	__u64 avg_poll_ns;
	__u32 tgid;
	__s32 worker;
	__u32 interval;		/* global-queue interval, in polls */
	__u32 pad;
};

#endif
