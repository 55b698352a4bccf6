// SPDX-License-Identifier: MIT
/*
 * tools/hist_tool.c - the whole user side, after loading, of a tool whose
 * output is one map of histograms plus the BPF side's `unpaired` and
 * `dropped` counters (schedlat, polltime, blockinglat).
 */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpf_setup.h"
#include "hist_output.h"
#include "hist_tool.h"
#include "json_writer.h"
#include "print_loop.h"
#include "tool_args.h"
#include "usdt_target.h"

static void hist_tool_print(struct hist_tool *t)
{
	struct tool_env *env = t->env;
	__u64 unpaired = *t->unpaired, dropped = *t->dropped;
	__u64 d_unpaired = unpaired - t->prev_unpaired, d_dropped = dropped - t->prev_dropped;
	int err;

	t->prev_unpaired = unpaired;
	t->prev_dropped = dropped;
	/*
	 * Summary mode: a weighted sample stands for the events its countdown
	 * spanned, which may pass the events seen in an interval by a few
	 * (schedlat: a stamp made before, polled after): none left, not a
	 * negative number.
	 */
	if ((__s64)d_unpaired < 0)
		d_unpaired = 0;
	err = snap_delta(t->map_fd, &t->cur, &t->prev);
	if (err)
		tool_die(env, "reading the histograms: %s", strerror(-err));

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_hist_snap(&j, &t->cur, t->json_label, unit_div(env->unit));
		json_uint(&j, "unpaired", d_unpaired);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_hist_snap(env, &t->cur, t->text_label ? t->text_label : t->json_label);
	if (d_unpaired || d_dropped)
		printf("\n%llu %s, %llu events dropped (map full)\n",
		       (unsigned long long)d_unpaired, t->unpaired_what,
		       (unsigned long long)d_dropped);
	fflush(stdout);
}

void hist_tool_run(struct hist_tool *t, struct bpf_object *obj, size_t key_size,
		   const char *what)
{
	bool last;

	snap_init(&t->cur, key_size, sizeof(struct hist));
	snap_init(&t->prev, key_size, sizeof(struct hist));
	tool_attach(t->env, obj);
	tool_banner(t->env, what);
	do {
		last = tool_wait(t->env, NULL, NULL);
		hist_tool_print(t);
	} while (!last);
	tool_detach(t->env);
	snap_free(&t->cur);
	snap_free(&t->prev);
}
