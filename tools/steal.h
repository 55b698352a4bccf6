/* SPDX-License-Identifier: MIT */
/* tools/steal.h - types shared by steal.bpf.c and steal.c. */
#ifndef BLITZ_TOOLS_STEAL_H
#define BLITZ_TOOLS_STEAL_H

#include "hist.h"

#define STEAL_MAX_HISTS		1024
#define STEAL_MAX_PAIRS		16384

/* steal_fail's reason argument. */
#define STEAL_FAIL_EMPTY	0	/* the victim's ring was empty */
#define STEAL_FAIL_BUSY		1	/* another steal from it was in flight */
#define STEAL_FAIL_NO_ROOM	2	/* the thief's ring was over half full */
#define STEAL_FAIL_REASONS	3

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
