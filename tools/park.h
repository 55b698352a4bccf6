/* SPDX-License-Identifier: MIT */
/* tools/park.h - types shared by park.bpf.c and park.c. */
#ifndef BLITZ_TOOLS_PARK_H
#define BLITZ_TOOLS_PARK_H

#include "hist.h"

#define PARK_MAX_HISTS		4096
#define PARK_MAX_WAKERS		4096

/* hist_key.label: unpark's reason argument. */
#define UNPARK_NOTIFIED	0
#define UNPARK_TIMEOUT	1
#define UNPARK_SHUTDOWN	2
#define UNPARK_IO	3
#define UNPARK_REASONS	4

/* Who woke whom: the sleeping worker and unpark's waker argument. */
struct waker_key {
	__s32 worker;
	__s32 waker;		/* worker index, -1 a non-worker thread, -2 none */
};

/* Per worker: the parks started (each is one park probe). */
struct park_key {
	__s32 worker;
};

struct park_count {
	__u64 parks;
};

#endif
