/* SPDX-License-Identifier: MIT */
/* tools/park.h - types shared by park.bpf.c and park.c. */
#ifndef BLITZ_TOOLS_PARK_H
#define BLITZ_TOOLS_PARK_H

#include "blitz_probe_codes.h"
#include "hist.h"

#define PARK_MAX_HISTS		4096
#define PARK_MAX_WAKERS		4096

/* hist_key.label: unpark's reason argument (UNPARK_*). */
#define UNPARK_REASONS	PROBE_NR_UNPARK_REASONS

/* Who woke whom: the sleeping worker and unpark's waker argument. */
struct waker_key {
	__s32 worker;
	__s32 waker;		/* a worker index or a WAKER_* code */
};

/* Per worker: the parks started (each is one park probe). */
struct park_key {
	__s32 worker;
};

struct park_count {
	__u64 parks;
};

#endif
