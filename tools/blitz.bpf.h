/* SPDX-License-Identifier: MIT */
/*
 * tools/blitz.bpf.h - what every blitz BPF program includes: the headers a
 * USDT-only program needs (no vmlinux.h), the log2 of a value, and the
 * update of a histogram kept in a hash map.
 */
#ifndef BLITZ_TOOLS_BPF_H
#define BLITZ_TOOLS_BPF_H

#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "hist.h"

/* The ns-to-unit divisor of the time tools: 1 ns, 1000 us, 1000000 ms. */
#define DECLARE_UNIT_DIV() const volatile __u64 targ_unit_div = 1000

/* floor(log2(v)), 0 for v == 0: a binary search over the bit halves. */
static __always_inline __u64 log2_u64(__u64 v)
{
	__u64 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* The histogram of @key in @map, created zeroed on first use. */
static __always_inline struct hist *hist_get(void *map, const struct hist_key *key)
{
	static const struct hist zero;
	struct hist *h = bpf_map_lookup_elem(map, key);

	if (h)
		return h;
	/* NOEXIST: another CPU may have created it meanwhile; fine. */
	bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/*
 * hist_add - count @value (in the unit) in the histogram @key of @map and
 * add @raw (the value before unit conversion: ns, or the unit itself) to its
 * sum.  Returns 0, or -1 when the map is full (the caller counts a drop).
 */
static __always_inline int hist_add(void *map, const struct hist_key *key,
				    __u64 value, __u64 raw)
{
	struct hist *h = hist_get(map, key);
	__u64 slot;

	if (!h)
		return -1;
	slot = log2_u64(value);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, raw);
	return 0;
}

/* Each process has its own addresses and worker indices: keys carry the tgid. */
static __always_inline __u32 current_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif /* BLITZ_TOOLS_BPF_H */
