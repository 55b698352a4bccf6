// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ewma.bpf.c - the adaptive global-queue interval: every ewma_update
 * (worker, avg_poll_ns, interval) goes to user space through a ring buffer,
 * which keeps per-worker last/min/max and, on request, the whole series.
 * Summary mode (hist_snapshot): the runtime's own histogram of the average
 * at each update, per worker; no last/min/max or series, which need every
 * update (--per-event).
 */
#include "summary.bpf.h"
#include "ewma.h"

/* Summary mode: per (process, worker), the averages at its updates. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EWMA_MAX_HISTS);
	__type(key, struct hist_key);	/* label: the process (tgid) */
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EWMA_RINGBUF_BYTES);
} events SEC(".maps");

/* Updates lost because the ring buffer was full. */
__u64 dropped = 0;

SEC("usdt")
int BPF_USDT(ewma_update, int worker, __u64 avg_poll_ns, __u32 interval)
{
	struct ewma_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&dropped, 1);
		return 0;
	}
	e->ts = bpf_ktime_get_ns();
	e->avg_poll_ns = avg_poll_ns;
	e->tgid = current_tgid();
	e->worker = worker;
	e->interval = interval;
	e->pad = 0;
	/* No wakeup per event: user space polls every 200 ms at most. */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("usdt")
int BPF_USDT(hist_snapshot, int worker, __u64 addr, __u32 size, __u64 seq)
{
	struct hist_key hk = { .worker = worker, .label = (__s32)current_tgid() };
	struct blitz_hist_snapshot *s, *old;
	struct summary_key key;

	s = summary_take(worker, addr, size, seq, &key, &old);
	if (!s)
		return 0;
	/* ns, like the per-event histogram: no shift. */
	if (summary_merge(&hists, &hk, s, old, BLITZ_HIST_EWMA, 0))
		__sync_fetch_and_add(&dropped, 1);
	summary_keep(&key, s);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
