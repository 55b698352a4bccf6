// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * polltime.bpf.c - poll durations: task_poll_end's poll_ns, which the
 * runtime times itself while the probe is enabled (one hit per poll, no
 * pairing with task_poll_start).  Summary mode (hist_snapshot): the
 * runtime's own poll-time histograms, the polls of one tick in
 * BLITZ_HIST_SAMPLE timed and standing for the others; the polls not yet
 * stood for count as unpaired.
 */
#include "summary.bpf.h"
#include "polltime.h"

const volatile bool targ_per_worker = false;
const volatile bool targ_by_result = false;
DECLARE_UNIT_DIV();

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, POLLTIME_MAX_HISTS);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

/* Poll ends without a duration (poll_ns 0: not timed). */
__u64 unpaired = 0;
__u64 dropped = 0;

SEC("usdt")
int BPF_USDT(task_poll_end, int worker, __u64 task, int ready, __u64 poll_ns)
{
	struct hist_key hk = {
		.worker = targ_per_worker ? worker : HIST_ALL,
		.label = targ_by_result ? (ready ? POLL_READY : POLL_PENDING) : POLL_ANY,
	};

	if (!poll_ns) {
		__sync_fetch_and_add(&unpaired, 1);
		return 0;
	}
	if (hist_add(&hists, &hk, poll_ns / targ_unit_div, poll_ns))
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(hist_snapshot, int worker, __u64 addr, __u32 size, __u64 seq)
{
	struct hist_key hk = { .worker = targ_per_worker ? worker : HIST_ALL };
	__u32 shift = summary_shift(targ_unit_div);
	struct blitz_hist_snapshot *s, *old;
	struct summary_key key;
	__u64 polls, timed;

	s = summary_take(worker, addr, size, seq, &key, &old);
	if (!s)
		return 0;
	hk.label = targ_by_result ? POLL_READY : POLL_ANY;
	if (summary_merge(&hists, &hk, s, old, BLITZ_HIST_POLL_READY, shift))
		__sync_fetch_and_add(&dropped, 1);
	hk.label = targ_by_result ? POLL_PENDING : POLL_ANY;
	if (summary_merge(&hists, &hk, s, old, BLITZ_HIST_POLL_PENDING, shift))
		__sync_fetch_and_add(&dropped, 1);
	polls = summary_delta(s, old, BLITZ_HIST_POLL_READY) +
		summary_delta(s, old, BLITZ_HIST_POLL_PENDING);
	timed = s->hist[BLITZ_HIST_POLL_READY].count + s->hist[BLITZ_HIST_POLL_PENDING].count -
		(old ? old->hist[BLITZ_HIST_POLL_READY].count +
		       old->hist[BLITZ_HIST_POLL_PENDING].count : 0);
	__sync_fetch_and_add(&unpaired, polls - timed);
	summary_keep(&key, s);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
