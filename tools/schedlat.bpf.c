// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * schedlat.bpf.c - schedule latency: from task_spawn or task_schedule of a
 * task (it is about to be queued) to the next task_poll_start of that task.
 *
 * Both queueing probes fire before the task is visible to any worker, so the
 * start time is always recorded before the poll can look it up.
 * Summary mode (hist_snapshot): the runtime's own schedule-latency
 * histograms, one queueing in BLITZ_HIST_SAMPLE stamped; the polls of the
 * others count as unpaired.
 */
#include "summary.bpf.h"
#include "schedlat.h"

const volatile bool targ_per_worker = false;
DECLARE_UNIT_DIV();

/* Queued tasks: key -> the ns time they were queued. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHEDLAT_MAX_QUEUED);
	__type(key, struct schedlat_key);
	__type(value, __u64);
} queued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHEDLAT_MAX_HISTS);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

/* Polls without a recorded queueing (queued before the tool attached). */
__u64 unpaired = 0;
/* Events lost because a map was full. */
__u64 dropped = 0;

static __always_inline int record(__u64 task)
{
	struct schedlat_key k = { .tgid = current_tgid(), .task = task };
	__u64 now = bpf_ktime_get_ns();

	if (bpf_map_update_elem(&queued, &k, &now, BPF_ANY))
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(task_spawn, __u64 task, int worker, int dest)
{
	return record(task);
}

SEC("usdt")
int BPF_USDT(task_schedule, __u64 task, int worker, int dest)
{
	return record(task);
}

SEC("usdt")
int BPF_USDT(task_poll_start, int worker, __u64 task, int source)
{
	struct schedlat_key k = { .tgid = current_tgid(), .task = task };
	struct hist_key hk = { .worker = targ_per_worker ? worker : HIST_ALL };
	__u64 *tsp, delta;

	tsp = bpf_map_lookup_elem(&queued, &k);
	if (!tsp) {
		__sync_fetch_and_add(&unpaired, 1);
		return 0;
	}
	delta = bpf_ktime_get_ns() - *tsp;
	bpf_map_delete_elem(&queued, &k);
	if ((__s64)delta < 0)
		delta = 0;
	if (hist_add(&hists, &hk, delta / targ_unit_div, delta))
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(hist_snapshot, int worker, __u64 addr, __u32 size, __u64 seq)
{
	struct hist_key hk = { .worker = targ_per_worker ? worker : HIST_ALL };
	struct blitz_hist_snapshot *s, *old;
	struct summary_key key;
	__u64 timed;

	s = summary_take(worker, addr, size, seq, &key, &old);
	if (!s)
		return 0;
	if (summary_merge(&hists, &hk, s, old, BLITZ_HIST_SCHED, summary_shift(targ_unit_div)))
		__sync_fetch_and_add(&dropped, 1);
	timed = s->hist[BLITZ_HIST_SCHED].count - (old ? old->hist[BLITZ_HIST_SCHED].count : 0);
	__sync_fetch_and_add(&unpaired, summary_delta(s, old, BLITZ_HIST_SCHED) - timed);
	summary_keep(&key, s);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
