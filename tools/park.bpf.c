// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * park.bpf.c - how long blitz workers sleep: park to the next unpark of the
 * same worker thread, split by unpark's reason, and who woke them.
 */
#include "blitz.bpf.h"
#include "park.h"

const volatile bool targ_per_worker = false;
DECLARE_UNIT_DIV();

/* Thread id -> when it parked (0: not parked). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PARK_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} parked SEC(".maps");

/* Sleep durations: {worker or HIST_ALL, reason}. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PARK_MAX_HISTS);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PARK_MAX_WAKERS);
	__type(key, struct waker_key);
	__type(value, __u64);
} wakers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PARK_MAX_WAKERS);
	__type(key, struct park_key);
	__type(value, struct park_count);
} parks SEC(".maps");

__u64 unpaired = 0;
__u64 dropped = 0;

static __always_inline void count(void *map, const void *key)
{
	static const __u64 zero;
	__u64 *c = bpf_map_lookup_elem(map, key);

	if (!c) {
		bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(map, key);
		if (!c) {
			__sync_fetch_and_add(&dropped, 1);
			return;
		}
	}
	__sync_fetch_and_add(c, 1);
}

SEC("usdt")
int BPF_USDT(park, int worker, __u64 timeout_ns)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	struct park_key pk = { .worker = worker };

	if (bpf_map_update_elem(&parked, &tid, &now, BPF_ANY))
		__sync_fetch_and_add(&dropped, 1);
	count(&parks, &pk);
	return 0;
}

SEC("usdt")
int BPF_USDT(unpark, int worker, int reason, int waker)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct hist_key hk = {
		.worker = targ_per_worker ? worker : HIST_ALL,
		.label = reason,
	};
	struct waker_key wk = { .worker = worker, .waker = waker };
	__u64 *tsp, delta;

	tsp = bpf_map_lookup_elem(&parked, &tid);
	if (!tsp || !*tsp) {
		__sync_fetch_and_add(&unpaired, 1);
		return 0;
	}
	delta = bpf_ktime_get_ns() - *tsp;
	*tsp = 0;
	if (hist_add(&hists, &hk, delta / targ_unit_div, delta))
		__sync_fetch_and_add(&dropped, 1);
	if (reason == UNPARK_NOTIFIED)
		count(&wakers, &wk);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
