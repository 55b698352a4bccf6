/* SPDX-License-Identifier: MIT */
/* tools/schedlat.h - types shared by schedlat.bpf.c and schedlat.c. */
#ifndef BLITZ_TOOLS_SCHEDLAT_H
#define BLITZ_TOOLS_SCHEDLAT_H

#include "hist.h"

/* Tasks queued and not yet polled that the tool can follow at once. */
#define SCHEDLAT_MAX_QUEUED	(1 << 18)
/* Histograms: one, or one per worker with -W. */
#define SCHEDLAT_MAX_HISTS	1024

/* A queued task: its address is unique within its process while queued. */
struct schedlat_key {
	__u32 tgid;
	__u32 pad;
	__u64 task;
};

#endif
