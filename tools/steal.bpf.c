// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * steal.bpf.c - work stealing: the sizes of successful steals (a log2
 * histogram of steal's count), and per (thief, victim) pair the steals, the
 * tasks taken and the failed attempts by reason.  Summary mode
 * (hist_snapshot): the runtime's own steal-size histograms; the pairs and
 * the failed attempts need every steal (--per-event).
 */
#include "summary.bpf.h"
#include "steal.h"

const volatile bool targ_per_worker = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEAL_MAX_HISTS);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STEAL_MAX_PAIRS);
	__type(key, struct pair_key);
	__type(value, struct pair_val);
} pairs SEC(".maps");

__u64 dropped = 0;

static __always_inline struct pair_val *pair_get(int thief, int victim)
{
	static const struct pair_val zero;
	struct pair_key k = { .thief = thief, .victim = victim };
	struct pair_val *v = bpf_map_lookup_elem(&pairs, &k);

	if (v)
		return v;
	bpf_map_update_elem(&pairs, &k, &zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&pairs, &k);
	if (!v)
		__sync_fetch_and_add(&dropped, 1);
	return v;
}

SEC("usdt")
int BPF_USDT(steal, int thief, int victim, __u32 count)
{
	struct hist_key hk = { .worker = targ_per_worker ? thief : HIST_ALL };
	struct pair_val *v;

	if (hist_add(&hists, &hk, count, count))
		__sync_fetch_and_add(&dropped, 1);
	v = pair_get(thief, victim);
	if (v) {
		__sync_fetch_and_add(&v->steals, 1);
		__sync_fetch_and_add(&v->tasks, count);
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(steal_fail, int thief, int victim, int reason)
{
	struct pair_val *v;

	v = pair_get(thief, victim);
	if (!v)
		return 0;
	/* Constant indices: the verifier then needs no bounds proof. */
	switch (reason) {
	case STEAL_FAIL_EMPTY:
		__sync_fetch_and_add(&v->fails[STEAL_FAIL_EMPTY], 1);
		break;
	case STEAL_FAIL_BUSY:
		__sync_fetch_and_add(&v->fails[STEAL_FAIL_BUSY], 1);
		break;
	case STEAL_FAIL_NO_ROOM:
		__sync_fetch_and_add(&v->fails[STEAL_FAIL_NO_ROOM], 1);
		break;
	}
	return 0;
}

SEC("usdt")
int BPF_USDT(hist_snapshot, int worker, __u64 addr, __u32 size, __u64 seq)
{
	struct hist_key hk = { .worker = targ_per_worker ? worker : HIST_ALL };
	struct blitz_hist_snapshot *s, *old;
	struct summary_key key;

	s = summary_take(worker, addr, size, seq, &key, &old);
	if (!s)
		return 0;
	if (summary_merge(&hists, &hk, s, old, BLITZ_HIST_STEAL, 0))
		__sync_fetch_and_add(&dropped, 1);
	summary_keep(&key, s);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
