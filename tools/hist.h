/* SPDX-License-Identifier: MIT */
/*
 * tools/hist.h - types shared by the BPF side and the user side of every
 * blitz tool: the log2 histogram and the keys that split it.
 *
 * Every value kept in a map is a struct of __u64 only, and every key a
 * struct of __s32 only: the user side reads maps generically (snapshot,
 * subtract the previous snapshot, sort by key) on that assumption.
 */
#ifndef BLITZ_TOOLS_HIST_H
#define BLITZ_TOOLS_HIST_H

/*
 * Slot k counts values v with floor(log2(v)) == k, except slot 0, which
 * counts 0 and 1 (the runqlat convention: "0 -> 1", "2 -> 3", "4 -> 7"...).
 * Values past the last slot land in it.
 */
#define MAX_SLOTS	40

/* A histogram of values in the tool's unit, with their count and sum. */
struct hist {
	__u64 slots[MAX_SLOTS];
	__u64 count;
	__u64 sum;		/* sum of the values in ns (time tools) or units */
};

/*
 * The key of a histogram.  worker: the worker index (-1 a non-worker
 * thread), or HIST_ALL when the tool does not split by worker.  label: a
 * tool-specific split (park: the unpark reason), 0 when unused.
 */
#define HIST_ALL	(-1000)

struct hist_key {
	__s32 worker;
	__s32 label;
};

#endif /* BLITZ_TOOLS_HIST_H */
