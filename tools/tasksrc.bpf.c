// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tasksrc.bpf.c - where workers find the tasks they poll: task_poll_start
 * counted by its source argument, per worker.  Summary mode
 * (hist_snapshot): the runtime's own count of each worker's polls by
 * source, added up from the change since that worker's previous snapshot.
 */
#include "summary.bpf.h"
#include "tasksrc.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TASKSRC_MAX_WORKERS);
	__type(key, struct src_key);
	__type(value, struct src_val);
} sources SEC(".maps");

__u64 dropped = 0;

/* counters_of - @worker's counters, made on first use; NULL (counted) if full. */
static __always_inline struct src_val *counters_of(int worker)
{
	static const struct src_val zero;
	struct src_key k = { .worker = worker };
	struct src_val *v = bpf_map_lookup_elem(&sources, &k);

	if (!v) {
		bpf_map_update_elem(&sources, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sources, &k);
		if (!v)
			__sync_fetch_and_add(&dropped, 1);
	}
	return v;
}

SEC("usdt")
int BPF_USDT(task_poll_start, int worker, __u64 task, int source)
{
	struct src_val *v = counters_of(worker);
	__u64 s = (__u32)source;	/* u64: one register, bounded once */

	if (!v)
		return 0;
	if (s > SRC_OTHER)
		s = SRC_OTHER;
	__sync_fetch_and_add(&v->polls[s], 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(hist_snapshot, int worker, __u64 addr, __u32 size, __u64 seq)
{
	struct blitz_hist_snapshot *s, *old;
	struct summary_key key;
	struct src_val *v;

	s = summary_take(worker, addr, size, seq, &key, &old);
	if (!s)
		return 0;
	v = counters_of(worker);
	if (!v)
		return 0;
	for (__u32 i = 0; i < PROBE_NR_SOURCES; i++) {
		__u64 d = s->polls_by_source[i] - (old ? old->polls_by_source[i] : 0);

		if (d)
			__sync_fetch_and_add(&v->polls[i], d);
	}
	summary_keep(&key, s);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
