// SPDX-License-Identifier: MIT
/*
 * blitz-schedlat - schedule latency of blitz tasks: from the moment a task
 * is queued (task_spawn, task_schedule) to the start of its next poll
 * (task_poll_start), as a log2 histogram, overall or per polling worker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "trace_helpers.h"
#include "schedlat.h"
#include "schedlat.skel.h"

static const struct tool_def def = {
	.name = "schedlat",
	.summary = "Summarize the schedule latency of blitz tasks (queued to polled) "
		   "as a histogram.",
	.examples =
		"    blitz-schedlat              # histogram in us, printed at Ctrl-C\n"
		"    blitz-schedlat 1 10         # print every second, 10 times\n"
		"    blitz-schedlat -m 5         # milliseconds, every 5 seconds\n"
		"    blitz-schedlat -W           # one histogram per polling worker\n"
		"    blitz-schedlat -p 185       # only process 185\n"
		"    blitz-schedlat -j > lat.json  # JSON for tools/plot\n"
		"    blitz-schedlat -b ./build/lib/libblitz.so\n",
	.opts = TOOL_OPT_UNITS | TOOL_OPT_WORKER,
	.unit = UNIT_US,
};

struct state {
	struct tool_env *env;
	struct schedlat_bpf *skel;
	struct snap cur, prev;
	__u64 prev_unpaired, prev_dropped;
};

static void print(struct state *st)
{
	struct tool_env *env = st->env;
	__u64 unpaired = st->skel->bss->unpaired, dropped = st->skel->bss->dropped;
	__u64 d_unpaired = unpaired - st->prev_unpaired, d_dropped = dropped - st->prev_dropped;
	int err;

	st->prev_unpaired = unpaired;
	st->prev_dropped = dropped;
	err = snap_delta(bpf_map__fd(st->skel->maps.hists), &st->cur, &st->prev);
	if (err)
		tool_die(env, "reading the histograms: %s", strerror(-err));

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_hist_snap(&j, &st->cur, NULL, unit_div(env->unit));
		json_uint(&j, "unpaired", d_unpaired);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_hist_snap(env, &st->cur, NULL);
	if (d_unpaired || d_dropped)
		printf("\n%llu polls without a queueing seen (queued before attach), "
		       "%llu events dropped (map full)\n",
		       (unsigned long long)d_unpaired, (unsigned long long)d_dropped);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	struct schedlat_bpf *skel;
	bool last;
	int err;

	tool_parse_args(&env, &def, argc, argv);
	tool_setup(&env);

	skel = schedlat_bpf__open();
	if (!skel)
		tool_die(&env, "cannot open the BPF object: %s", strerror(errno));
	skel->rodata->targ_per_worker = env.per_worker;
	skel->rodata->targ_unit_div = unit_div(env.unit);
	err = schedlat_bpf__load(skel);
	if (err)
		tool_die(&env, "cannot load the BPF programs: %s (run with -v for libbpf's log)",
			 strerror(-err));
	st.skel = skel;
	snap_init(&st.cur, sizeof(struct hist_key), sizeof(struct hist));
	snap_init(&st.prev, sizeof(struct hist_key), sizeof(struct hist));
	tool_attach(&env, skel->obj);
	tool_banner(&env, "schedule latency");

	do {
		last = tool_wait(&env, NULL, NULL);
		print(&st);
	} while (!last);

	tool_detach(&env);
	schedlat_bpf__destroy(skel);
	snap_free(&st.cur);
	snap_free(&st.prev);
	return 0;
}
