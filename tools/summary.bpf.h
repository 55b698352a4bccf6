/* SPDX-License-Identifier: MIT */
/*
 * tools/summary.bpf.h - the BPF side of a tool's summary mode: the
 * runtime counts its events into per-worker log2 histograms while
 * hist_snapshot's semaphore is held (docs/probes.md, "Summary
 * histograms"), and fires hist_snapshot before a park at most every 100
 * ms, at a tick after 200 ms without one, and at exit.  A tool's
 * hist_snapshot program calls summary_take() to copy the
 * worker's struct with bpf_probe_read_user(), summary_merge() to add what
 * changed since that worker's previous snapshot into the tool's own
 * histogram map (the map the per-event programs fill, so the user side
 * prints both modes the same way), then summary_keep() to make it the
 * worker's latest (by seq).
 */
#ifndef BLITZ_TOOLS_SUMMARY_BPF_H
#define BLITZ_TOOLS_SUMMARY_BPF_H

#include "blitz.bpf.h"
#include "summary.h"

/* The latest snapshot of each worker. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SUMMARY_MAX_WORKERS);
	__type(key, struct summary_key);
	__type(value, struct blitz_hist_snapshot);
} summaries SEC(".maps");

/* Room for the copy (4 KiB: too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blitz_hist_snapshot);
} summary_copy SEC(".maps");

/*
 * Snapshots not merged: another layout (size, version), or the copy
 * failed; the version of the last one of another layout.
 */
__u64 summary_bad = 0;
__u32 summary_bad_version = 0;

/*
 * summary_take - copy the snapshot at @addr (@size bytes, number @seq) of
 * @worker.  Returns the copy, with *@old the worker's previous one (NULL
 * if none); NULL if it is unusable or not newer than what is kept.
 */
static __always_inline struct blitz_hist_snapshot *
summary_take(int worker, __u64 addr, __u32 size, __u64 seq,
	     struct summary_key *key, struct blitz_hist_snapshot **old)
{
	__u32 zero = 0, head[2];		/* size and version: every layout starts so */
	struct blitz_hist_snapshot *s = bpf_map_lookup_elem(&summary_copy, &zero);

	if (!s)
		return NULL;
	if (bpf_probe_read_user(head, sizeof(head), (void *)addr) || head[0] != size ||
	    size != sizeof(*s) || head[1] != BLITZ_HIST_VERSION) {
		summary_bad_version = head[1];
		__sync_fetch_and_add(&summary_bad, 1);
		return NULL;
	}
	if (bpf_probe_read_user(s, sizeof(*s), (void *)addr) || s->kinds != BLITZ_HIST_KINDS) {
		__sync_fetch_and_add(&summary_bad, 1);
		return NULL;
	}
	key->tgid = current_tgid();
	key->worker = worker;
	key->runtime = s->runtime;
	*old = bpf_map_lookup_elem(&summaries, key);
	if (*old && (*old)->seq >= seq)
		return NULL;
	return s;
}

/* summary_keep - make @s the latest snapshot of @key (after the merges). */
static __always_inline void summary_keep(const struct summary_key *key,
					 const struct blitz_hist_snapshot *s)
{
	if (bpf_map_update_elem(&summaries, key, s, BPF_ANY))
		__sync_fetch_and_add(&summary_bad, 1);
}

/* summary_delta - events of @kind since @old (NULL: since the window began). */
static __always_inline __u64 summary_delta(const struct blitz_hist_snapshot *s,
					   const struct blitz_hist_snapshot *old, int kind)
{
	return s->events[kind] - (old ? old->events[kind] : 0);
}

/*
 * summary_merge - add histogram @kind's change since @old to the histogram
 * @hk of @map.  The runtime's buckets are log2 of ns (or of a count);
 * @shift moves them to the tool's unit: 0 (ns, tasks), 10 (us: buckets of
 * 1024 ns), 20 (ms: 2^20 ns).  Returns -1 if the map is full.
 */
static __always_inline int summary_merge(void *map, const struct hist_key *hk,
					 const struct blitz_hist_snapshot *s,
					 const struct blitz_hist_snapshot *old,
					 int kind, __u32 shift)
{
	const struct blitz_hist_log2 *n = &s->hist[kind];
	struct hist *h;
	__u64 d;

	d = n->count - (old ? old->hist[kind].count : 0);
	if (!d)
		return 0;
	h = hist_get(map, hk);
	if (!h)
		return -1;
	for (__u32 i = 0; i < MAX_SLOTS; i++) {
		__u32 j = i > shift ? i - shift : 0;

		d = n->slots[i] - (old ? old->hist[kind].slots[i] : 0);
		if (!d)
			continue;
		if (j >= MAX_SLOTS)
			j = MAX_SLOTS - 1;
		__sync_fetch_and_add(&h->slots[j], d);
	}
	__sync_fetch_and_add(&h->count, n->count - (old ? old->hist[kind].count : 0));
	__sync_fetch_and_add(&h->sum, n->sum - (old ? old->hist[kind].sum : 0));
	return 0;
}

/* The slot shift of a time tool's unit divisor (targ_unit_div). */
static __always_inline __u32 summary_shift(__u64 unit_div)
{
	return unit_div >= 1000000 ? 20 : unit_div >= 1000 ? 10 : 0;
}

#endif /* BLITZ_TOOLS_SUMMARY_BPF_H */
