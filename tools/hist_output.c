// SPDX-License-Identifier: MIT
/*
 * tools/hist_output.c - log2 histograms on the screen (the way runqlat
 * prints them) and in JSON (one "histograms" entry per key), and the labels
 * of their keys.
 */
#include <stdio.h>
#include <string.h>
#include "hist_output.h"
#include "json_writer.h"
#include "map_snapshot.h"
#include "tool_args.h"

static void print_stars(__u64 val, __u64 val_max, int width)
{
	int stars = (int)((val < val_max ? val : val_max) * (__u64)width / val_max);

	for (int i = 0; i < width; i++)
		putchar(i < stars ? '*' : ' ');
	if (val > val_max)
		putchar('+');
}

void print_log2_hist(const __u64 *slots, int nr_slots, const char *header)
{
	int idx_max = -1, stars;
	__u64 val_max = 0;

	for (int i = 0; i < nr_slots; i++) {
		if (slots[i] > 0)
			idx_max = i;
		if (slots[i] > val_max)
			val_max = slots[i];
	}
	if (idx_max < 0)
		return;
	/* Wider columns once the bucket bounds pass 32 bits. */
	bool wide = idx_max > 32;

	stars = wide ? 20 : 40;
	printf("%*s%-*s : count    distribution\n", wide ? 15 : 5, "", wide ? 29 : 19, header);
	for (int i = 0; i <= idx_max; i++) {
		unsigned long long low = (1ULL << (i + 1)) >> 1;
		unsigned long long high = (1ULL << (i + 1)) - 1;

		if (low == high)
			low -= 1;
		printf("%*llu -> %-*llu : %-8llu |", wide ? 20 : 10, low, wide ? 20 : 10, high,
		       (unsigned long long)slots[i]);
		print_stars(slots[i], val_max, stars);
		printf("|\n");
	}
}

void json_hist(struct json *j, const char *label, int worker, const struct hist *h,
	       __u64 sum_div)
{
	int idx_max = -1;

	for (int i = 0; i < MAX_SLOTS; i++)
		if (h->slots[i])
			idx_max = i;
	json_obj_begin(j, NULL);
	json_str(j, "label", label);
	json_int(j, "worker", worker);
	json_arr_begin(j, "buckets");
	for (int i = 0; i <= idx_max; i++) {
		json_obj_begin(j, NULL);
		json_uint(j, "low", i == 0 ? 0 : 1ULL << i);
		json_uint(j, "high", (1ULL << (i + 1)) - 1);
		json_uint(j, "count", h->slots[i]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_uint(j, "count", h->count);
	if (sum_div > 1)
		json_double(j, "sum", (double)h->sum / (double)sum_div, 3);
	else
		json_uint(j, "sum", h->sum);
	json_obj_end(j);
}

const char *worker_label(int worker, char *buf, size_t len)
{
	if (worker == HIST_ALL)
		return "all";
	if (worker < 0)
		return "outside";
	snprintf(buf, len, "worker %d", worker);
	return buf;
}

bool hist_empty(const struct hist *h)
{
	return h->count == 0;
}

void hist_record(struct hist *h, __u64 value, __u64 raw)
{
	int s = value < 2 ? 0 : 63 - __builtin_clzll(value);

	h->slots[s < MAX_SLOTS ? s : MAX_SLOTS - 1]++;
	h->count++;
	h->sum += raw;
}

static const char *default_label(const struct hist_key *k, char *buf, size_t len)
{
	return worker_label(k->worker, buf, len);
}

void print_hist_snap(const struct tool_env *env, const struct snap *s, hist_label_fn label)
{
	char buf[64];

	if (!label)
		label = default_label;
	for (size_t i = 0; i < s->n; i++) {
		const struct hist_key *k = snap_key(s, i);
		const struct hist *h = (const struct hist *)snap_val(s, i);
		const char *l = label(k, buf, sizeof(buf));

		if (hist_empty(h))
			continue;
		if (strcmp(l, "all"))
			printf("\n%s\n", l);
		else
			putchar('\n');
		print_log2_hist(h->slots, MAX_SLOTS, unit_header(env->unit));
	}
}

void json_hist_snap(struct json *j, const struct snap *s, hist_label_fn label, __u64 sum_div)
{
	char buf[64];

	if (!label)
		label = default_label;
	json_arr_begin(j, "histograms");
	for (size_t i = 0; i < s->n; i++) {
		const struct hist_key *k = snap_key(s, i);

		json_hist(j, label(k, buf, sizeof(buf)), json_worker(k->worker),
			  (const struct hist *)snap_val(s, i), sum_div);
	}
	json_arr_end(j);
}
