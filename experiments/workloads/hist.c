// SPDX-License-Identifier: MIT
/*
 * hist.c - the latency histogram's cold half: init, merge, quantiles
 * (hist.h has the layout and the hot hist_add).
 */
#include <string.h>
#include "hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/* The largest value that lands in bucket @i. */
static uint64_t hist_upper(unsigned i)
{
	unsigned shift;

	if (i < (1u << HIST_SUB_BITS))
		return i;
	shift = i / HIST_HALF - 1;
	return (((uint64_t)(i % HIST_HALF + HIST_HALF) + 1) << shift) - 1;
}

void hist_merge(struct hist *into, const struct hist *h)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		into->b[i] += h->b[i];
	into->count += h->count;
	into->sum += h->sum;
	if (h->min < into->min)
		into->min = h->min;
	if (h->max > into->max)
		into->max = h->max;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank = (uint64_t)(q * (double)h->count + 0.999999), seen = 0, v;

	if (!h->count)
		return 0;
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			v = hist_upper(i);
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}
