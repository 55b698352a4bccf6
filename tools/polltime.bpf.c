// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * polltime.bpf.c - poll durations: task_poll_start to task_poll_end on the
 * same thread (a worker, or a thread helping in blitz_join).
 */
#include "blitz.bpf.h"
#include "polltime.h"

const volatile bool targ_per_worker = false;
const volatile bool targ_by_result = false;
DECLARE_UNIT_DIV();

/* Thread id -> the poll it is running. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, POLLTIME_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct polltime_start);
} polling SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, POLLTIME_MAX_HISTS);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

/* Poll ends without a start seen (the tool attached during a poll). */
__u64 unpaired = 0;
__u64 dropped = 0;

SEC("usdt")
int BPF_USDT(task_poll_start, int worker, __u64 task, int source)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct polltime_start s = { .ts = bpf_ktime_get_ns(), .task = task };

	if (bpf_map_update_elem(&polling, &tid, &s, BPF_ANY))
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(task_poll_end, int worker, __u64 task, int ready)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct hist_key hk = {
		.worker = targ_per_worker ? worker : HIST_ALL,
		.label = targ_by_result ? (ready ? POLL_READY : POLL_PENDING) : POLL_ANY,
	};
	struct polltime_start *s;
	__u64 delta;

	s = bpf_map_lookup_elem(&polling, &tid);
	if (!s || !s->ts || s->task != task) {
		__sync_fetch_and_add(&unpaired, 1);
		return 0;
	}
	delta = bpf_ktime_get_ns() - s->ts;
	/* Consumed; cheaper than deleting (a thread polls again soon). */
	s->ts = 0;
	if (hist_add(&hists, &hk, delta / targ_unit_div, delta))
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
