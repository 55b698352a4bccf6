// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * park.bpf.c - how long blitz workers sleep: unpark's slept_ns, which the
 * runtime times itself while the probe is enabled (one hit per sleep, no
 * pairing with park), split by unpark's reason, and who woke them.  park
 * is attached only to count the parks started.
 */
#include "blitz.bpf.h"
#include "park.h"

const volatile bool targ_per_worker = false;
DECLARE_UNIT_DIV();

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

/* Unparks without a duration (slept_ns 0: asleep when tracing started). */
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

/*
 * Defined before unpark, so attached first: the park of every sleep that
 * unpark's semaphore timed is counted.
 */
SEC("usdt")
int BPF_USDT(park, int worker, __u64 timeout_ns)
{
	struct park_key pk = { .worker = worker };

	count(&parks, &pk);
	return 0;
}

SEC("usdt")
int BPF_USDT(unpark, int worker, int reason, int waker, __u64 slept_ns)
{
	struct hist_key hk = {
		.worker = targ_per_worker ? worker : HIST_ALL,
		.label = reason,
	};
	struct waker_key wk = { .worker = worker, .waker = waker };

	if (!slept_ns) {
		__sync_fetch_and_add(&unpaired, 1);
		return 0;
	}
	if (hist_add(&hists, &hk, slept_ns / targ_unit_div, slept_ns))
		__sync_fetch_and_add(&dropped, 1);
	if (reason == UNPARK_NOTIFIED)
		count(&wakers, &wk);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
