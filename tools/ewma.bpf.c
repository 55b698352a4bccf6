// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ewma.bpf.c - the adaptive global-queue interval: every ewma_update
 * (worker, avg_poll_ns, interval) goes to user space through a ring buffer,
 * which keeps per-worker last/min/max and, on request, the whole series.
 */
#include "blitz.bpf.h"
#include "ewma.h"

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

char LICENSE[] SEC("license") = "Dual MIT/GPL";
