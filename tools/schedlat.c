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
#include "bpf_setup.h"
#include "hist_tool.h"
#include "summary_helpers.h"
#include "tool_args.h"
#include "schedlat.h"
#include "schedlat.skel.h"

static struct summary_opts mode;

static const struct tool_flag flags[] = {
	SUMMARY_FLAGS(&mode),
	{ 0 },
};

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
		"    blitz-schedlat -b ./build/lib/libblitz.so\n"
		"    blitz-schedlat --per-event  # a probe hit per queueing and poll\n",
	.opts = TOOL_OPT_UNITS | TOOL_OPT_WORKER,
	.unit = UNIT_US,
	.flags = flags,
};

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct schedlat_bpf *skel;
	struct hist_tool t;
	bool summary;

	tool_parse_args(&env, &def, argc, argv);
	summary = summary_mode(&env, &mode, false, NULL);
	tool_setup(&env);

	skel = tool_opened(&env, schedlat_bpf__open());
	summary_load_only(skel->obj, summary);
	skel->rodata->targ_per_worker = env.per_worker;
	skel->rodata->targ_unit_div = unit_div(env.unit);
	tool_loaded(&env, schedlat_bpf__load(skel));
	t = (struct hist_tool){
		.env = &env, .map_fd = bpf_map__fd(skel->maps.hists),
		.unpaired = &skel->bss->unpaired, .dropped = &skel->bss->dropped,
		.unpaired_what = summary ? "polls whose queueing no stamp stands for yet (the runtime stamps "
					   "the schedules of one tick in N, BLITZ_HIST_SAMPLE, auto by "
					   "default; a worker's stamps stand for its polls at each snapshot)"
					 : "polls without a queueing seen (queued before attach)",
	};
	hist_tool_run(&t, skel->obj, sizeof(struct hist_key), "schedule latency");
	summary_report(&env, skel->bss->summary_bad, skel->bss->summary_bad_version);
	schedlat_bpf__destroy(skel);
	return 0;
}
