// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * park.bpf.c - how long blitz workers sleep: unpark's slept_ns, which the
 * runtime times itself while the probe is enabled (one hit per sleep, no
 * pairing with park), split by unpark's reason, and who woke them.  park
 * is attached only to count the parks started.  Summary mode
 * (hist_snapshot): the runtime's own sleep histograms by reason and its
 * park counts; who woke whom needs every unpark (--per-event).
 */
#include "summary.bpf.h"
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

static __always_inline void count_n(void *map, const void *key, __u64 n)
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
	__sync_fetch_and_add(c, n);
}

static __always_inline void count(void *map, const void *key)
{
	count_n(map, key, 1);
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

/* merge_reason - the sleeps that ended for @reason since @old. */
static __always_inline void merge_reason(struct hist_key *hk, int reason,
					 const struct blitz_hist_snapshot *s,
					 const struct blitz_hist_snapshot *old)
{
	hk->label = reason;
	if (summary_merge(&hists, hk, s, old, BLITZ_HIST_SLEEP_NOTIFIED + reason,
			  summary_shift(targ_unit_div)))
		__sync_fetch_and_add(&dropped, 1);
}

SEC("usdt")
int BPF_USDT(hist_snapshot, int worker, __u64 addr, __u32 size, __u64 seq)
{
	struct hist_key hk = { .worker = targ_per_worker ? worker : HIST_ALL };
	struct park_key pk = { .worker = worker };
	struct blitz_hist_snapshot *s, *old;
	struct summary_key key;
	__u64 n;

	s = summary_take(worker, addr, size, seq, &key, &old);
	if (!s)
		return 0;
	merge_reason(&hk, UNPARK_NOTIFIED, s, old);
	merge_reason(&hk, UNPARK_TIMEOUT, s, old);
	merge_reason(&hk, UNPARK_SHUTDOWN, s, old);
	merge_reason(&hk, UNPARK_IO, s, old);
	n = summary_delta(s, old, BLITZ_HIST_PARK);
	if (n)
		count_n(&parks, &pk, n);
	summary_keep(&key, s);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
