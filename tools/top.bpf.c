// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * top.bpf.c - per-worker counters of the scheduling events, the same ones
 * blitz_worker_stats keeps: polls, steals, tasks stolen, failed steals,
 * parks, LIFO hits, global batches (and their tasks), overflows (and
 * their tasks).
 */
#include "blitz.bpf.h"
#include "top.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOP_MAX_WORKERS);
	__type(key, struct top_key);
	__type(value, struct top_val);
} counters SEC(".maps");

__u64 dropped = 0;

static __always_inline struct top_val *get(int worker)
{
	static const struct top_val zero;
	struct top_key k = { .worker = worker };
	struct top_val *v = bpf_map_lookup_elem(&counters, &k);

	if (v)
		return v;
	bpf_map_update_elem(&counters, &k, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&counters, &k);
	if (!v)
		__sync_fetch_and_add(&dropped, 1);
	return v;
}

#define COUNT(worker, field, n)						\
	do {								\
		struct top_val *v = get(worker);			\
		if (v)							\
			__sync_fetch_and_add(&v->field, (n));		\
	} while (0)

SEC("usdt")
int BPF_USDT(task_poll_start, int worker, __u64 task, int source)
{
	COUNT(worker, polls, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(steal, int thief, int victim, __u32 count)
{
	struct top_val *v = get(thief);

	if (v) {
		__sync_fetch_and_add(&v->steals, 1);
		__sync_fetch_and_add(&v->stolen, count);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(steal_fail, int thief, int victim, int reason)
{
	COUNT(thief, steal_fails, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(park, int worker, __u64 timeout_ns)
{
	COUNT(worker, parks, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(lifo_hit, int worker, __u64 task)
{
	COUNT(worker, lifo_hits, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(global_batch, int worker, __u32 count, __u64 remaining)
{
	struct top_val *v = get(worker);

	if (v) {
		__sync_fetch_and_add(&v->global_batches, 1);
		__sync_fetch_and_add(&v->global_tasks, count);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(overflow, int worker, __u32 count)
{
	struct top_val *v = get(worker);

	if (v) {
		__sync_fetch_and_add(&v->overflows, 1);
		__sync_fetch_and_add(&v->overflowed, count);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
