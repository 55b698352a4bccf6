/* SPDX-License-Identifier: MIT */
/* tools/steal.h - types shared by steal.bpf.c and steal.c. */
#ifndef BLITZ_TOOLS_STEAL_H
#define BLITZ_TOOLS_STEAL_H

#include "blitz_probe_codes.h"
#include "hist.h"

#define STEAL_MAX_HISTS		1024
#define STEAL_MAX_PAIRS		16384

/* pair_val.fails: one counter per steal_fail reason (STEAL_FAIL_*). */
#define STEAL_FAIL_REASONS	PROBE_NR_STEAL_FAIL_REASONS

/* A (thief, victim) pair. */
struct pair_key {
	__s32 thief;
	__s32 victim;
};

/* What one thief took from one victim, and how often it came back empty. */
struct pair_val {
	__u64 steals;
	__u64 tasks;
	__u64 fails[STEAL_FAIL_REASONS];
};

#endif
