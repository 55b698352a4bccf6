// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * blockinglat.bpf.c - the blocking pool's two intervals of a job: its queue
 * wait (blocking_start's wait_ns) and its run time (blocking_end's run_ns).
 *
 * Both are measured by the runtime while the probes are enabled, so no
 * pairing map is needed: two hits per job.  A value of 0 means the runtime
 * did not time that interval (the job was queued, or started, before the
 * tool attached): it is counted as unpaired, not as 0.
 */
#include "blitz.bpf.h"
#include "blockinglat.h"

const volatile bool targ_per_thread = false;
DECLARE_UNIT_DIV();

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BLOCKINGLAT_MAX_HISTS);
	__type(key, struct blockinglat_key);
	__type(value, struct hist);
} hists SEC(".maps");

/* Starts and ends whose interval was not timed (before the tool attached). */
__u64 unpaired = 0;
/* Events lost because the map was full. */
__u64 dropped = 0;

static __always_inline int record(__u64 ns, int label)
{
	struct blockinglat_key k = {
		.hk = { .worker = targ_per_thread ? -1 : HIST_ALL, .label = label },
		.tid = targ_per_thread ? (__s32)bpf_get_current_pid_tgid() : 0,
	};

	if (!ns) {
		__sync_fetch_and_add(&unpaired, 1);
		return 0;
	}
	/* hist_add looks the whole key up: k.hk is its first member. */
	if (hist_add(&hists, &k.hk, ns / targ_unit_div, ns))
		__sync_fetch_and_add(&dropped, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(blocking_start, __u64 job, __u64 wait_ns, __u32 threads)
{
	return record(wait_ns, BLOCKINGLAT_WAIT);
}

SEC("usdt")
int BPF_USDT(blocking_end, __u64 job, __u64 run_ns, __s64 result)
{
	return record(run_ns, BLOCKINGLAT_RUN);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
