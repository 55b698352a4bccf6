// SPDX-License-Identifier: MIT
/*
 * blitz-blockinglat - the blocking pool's latencies: how long jobs wait in
 * the pool's queue (blocking_spawn to blocking_start) and how long they run
 * (blocking_start to blocking_end), as two log2 histograms, overall or per
 * pool thread.  The runtime times both intervals itself while the probes
 * are enabled (wait_ns, run_ns), so the tool attaches two probes only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpf_setup.h"
#include "hist_tool.h"
#include "tool_args.h"
#include "blockinglat.h"
#include "blockinglat.skel.h"

static bool per_thread;

static const struct tool_flag flags[] = {
	{ "per-thread", 'T', "Two histograms per pool thread (by thread id)", &per_thread },
	{ 0 },
};

static const struct tool_def def = {
	.name = "blockinglat",
	.summary = "Summarize how long blitz blocking-pool jobs wait in the queue and "
		   "how long they run, as histograms.",
	.examples =
		"    blitz-blockinglat           # histograms in us, printed at Ctrl-C\n"
		"    blitz-blockinglat 1 10      # print every second, 10 times\n"
		"    blitz-blockinglat -m        # milliseconds\n"
		"    blitz-blockinglat -T        # per pool thread\n"
		"    blitz-blockinglat -p 185    # only process 185\n"
		"    blitz-blockinglat -j > pool.json  # JSON for tools/plot\n",
	.opts = TOOL_OPT_UNITS,
	.unit = UNIT_US,
	.flags = flags,
};

/* "wait" / "run" (JSON), "queue wait" / "run time" (text); "thread N " before with -T. */
static const char *key_label(const struct hist_key *hk, char *buf, size_t len, bool text)
{
	const struct blockinglat_key *k = (const struct blockinglat_key *)hk;
	const char *what = hk->label == BLOCKINGLAT_WAIT ? (text ? "queue wait" : "wait")
							   : (text ? "run time" : "run");

	if (hk->worker == HIST_ALL)
		snprintf(buf, len, "%s", what);
	else
		snprintf(buf, len, "thread %d %s", k->tid, what);
	return buf;
}

static const char *json_label(const struct hist_key *k, char *buf, size_t len)
{
	return key_label(k, buf, len, false);
}

static const char *text_label(const struct hist_key *k, char *buf, size_t len)
{
	return key_label(k, buf, len, true);
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct blockinglat_bpf *skel;
	struct hist_tool t;

	tool_parse_args(&env, &def, argc, argv);
	tool_setup(&env);

	skel = tool_opened(&env, blockinglat_bpf__open());
	skel->rodata->targ_per_thread = per_thread;
	skel->rodata->targ_unit_div = unit_div(env.unit);
	tool_loaded(&env, blockinglat_bpf__load(skel));
	t = (struct hist_tool){
		.env = &env, .map_fd = bpf_map__fd(skel->maps.hists),
		.unpaired = &skel->bss->unpaired, .dropped = &skel->bss->dropped,
		.json_label = json_label, .text_label = text_label,
		.unpaired_what = "starts or ends not timed (the job was queued or started "
				 "before attach)",
	};
	hist_tool_run(&t, skel->obj, sizeof(struct blockinglat_key),
		      "blocking-pool queue wait and run time");
	blockinglat_bpf__destroy(skel);
	return 0;
}
