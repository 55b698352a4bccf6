/* SPDX-License-Identifier: MIT */
/*
 * tools/hist_output.h - log2 histograms as text (runqlat-style) and as
 * JSON, and the labels of their keys.
 */
#ifndef BLITZ_TOOLS_HIST_OUTPUT_H
#define BLITZ_TOOLS_HIST_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "hist.h"

struct json;
struct snap;
struct tool_env;

/* print_log2_hist - a log2 histogram the way runqlat prints it. */
void print_log2_hist(const __u64 *slots, int nr_slots, const char *header);

/*
 * json_hist - one entry of "histograms": label, worker, log2 buckets up to
 * the last non-empty one, count and sum (converted by @sum_div: the raw sum
 * is in ns for time tools).
 */
void json_hist(struct json *j, const char *label, int worker, const struct hist *h,
	       __u64 sum_div);

/* "all", "worker N" or "outside" for a hist_key's worker. */
const char *worker_label(int worker, char *buf, size_t len);
/* The JSON worker of a hist_key: -1 for HIST_ALL. */
static inline int json_worker(int worker)
{
	return worker == HIST_ALL ? -1 : worker;
}

/* Hist bookkeeping shared by the histogram tools. */
bool hist_empty(const struct hist *h);
/*
 * hist_record - one value counted on the user side: @value (in the unit)
 * in its log2 slot (the last slot for any beyond), @raw (ns for time
 * tools) added to the sum.
 */
void hist_record(struct hist *h, __u64 value, __u64 raw);

/*
 * A snapshot of struct hist_key -> struct hist, printed as text (one
 * runqlat histogram per non-empty key, headed by its label unless it is
 * "all") or as the "histograms" array of the JSON object.  @label names a
 * key; NULL: worker_label().  @sum_div converts the raw sums to the unit.
 */
typedef const char *(*hist_label_fn)(const struct hist_key *k, char *buf, size_t len);
void print_hist_snap(const struct tool_env *env, const struct snap *s, hist_label_fn label);
void json_hist_snap(struct json *j, const struct snap *s, hist_label_fn label, __u64 sum_div);

#endif /* BLITZ_TOOLS_HIST_OUTPUT_H */
