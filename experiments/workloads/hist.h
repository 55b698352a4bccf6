/* SPDX-License-Identifier: MIT */
/*
 * hist.h - a latency histogram, log-linear (HDR-like), of bounded memory:
 * what echo-bench's client and the neutral load generator
 * (experiments/peers/loadgen) record round trips in.  Plain C, no blitz:
 * the load generator is built without the library.
 *
 * Values below 2^HIST_SUB_BITS ns have a bucket each; above, every power of
 * two is split into 2^(HIST_SUB_BITS-1) equal buckets, so a bucket is at most
 * 1/64 (1.6%) of its values wide.  Values of 2^HIST_MAX_BITS ns (~18 min)
 * and more go into the last bucket.  18 KB per histogram.
 */
#ifndef BLITZ_HIST_H
#define BLITZ_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS	7
#define HIST_HALF	(1u << (HIST_SUB_BITS - 1))
#define HIST_MAX_BITS	40
#define HIST_BUCKETS	((HIST_MAX_BITS - HIST_SUB_BITS + 2) * HIST_HALF)

struct hist {
	uint64_t count, min, max, sum;
	uint64_t b[HIST_BUCKETS];
};

/* hist_init - empty @h. */
void hist_init(struct hist *h);

/* hist_merge - add @h's values to @into. */
void hist_merge(struct hist *into, const struct hist *h);

/*
 * hist_quantile - the value at quantile @q (0..1]: the upper edge of the
 * bucket holding the ceil(q * count)-th smallest value, clamped to
 * [min, max]; 0 for an empty histogram.
 */
uint64_t hist_quantile(const struct hist *h, double q);

/* The bucket of @v: for msb >= SUB_BITS, (msb - SUB_BITS + 2) * HALF + the
 * next SUB_BITS - 1 bits below the msb; buckets are ordered by value. */
static inline unsigned hist_index(uint64_t v)
{
	unsigned msb, shift;

	if (v < (1u << HIST_SUB_BITS))
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	if (msb >= HIST_MAX_BITS)
		return HIST_BUCKETS - 1;
	shift = msb - (HIST_SUB_BITS - 1);
	return (shift + 1) * HIST_HALF + (unsigned)(v >> shift) - HIST_HALF;
}

/* hist_add - record @v (ns); inline: it is on the load generators' hot path. */
static inline void hist_add(struct hist *h, uint64_t v)
{
	h->b[hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

#endif
