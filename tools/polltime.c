// SPDX-License-Identifier: MIT
/*
 * blitz-polltime - how long blitz poll functions run (task_poll_end's
 * poll_ns, timed by the runtime while traced: one probe hit per poll), as a
 * log2 histogram, overall, per worker (-W) and/or split by how the poll
 * ended (-R: ready or pending).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpf_setup.h"
#include "hist_tool.h"
#include "summary_helpers.h"
#include "tool_args.h"
#include "polltime.h"
#include "polltime.skel.h"

static bool by_result;
static struct summary_opts mode;

static const struct tool_flag flags[] = {
	{ "by-result", 'R', "Split by result: polls that completed the task (ready) and the others "
	  "(pending)", &by_result },
	SUMMARY_FLAGS(&mode),
	{ 0 },
};

static const struct tool_def def = {
	.name = "polltime",
	.summary = "Summarize how long blitz poll functions run (task_poll_end's "
		   "poll_ns) as a histogram.",
	.examples =
		"    blitz-polltime              # histogram in ns, printed at Ctrl-C\n"
		"    blitz-polltime -u 1         # microseconds, every second\n"
		"    blitz-polltime -W -R        # per worker, ready and pending apart\n"
		"    blitz-polltime -j > poll.json\n"
		"    blitz-polltime --per-event  # a probe hit per poll (every poll timed)\n",
	.opts = TOOL_OPT_UNITS | TOOL_OPT_WORKER,
	.unit = UNIT_NS,
	.flags = flags,
};

static const char *label(const struct hist_key *k, char *buf, size_t len)
{
	char w[32];
	const char *wl = worker_label(k->worker, w, sizeof(w));

	if (k->label == POLL_ANY)
		snprintf(buf, len, "%s", wl);
	else if (k->worker == HIST_ALL)
		snprintf(buf, len, "%s", k->label == POLL_READY ? "ready" : "pending");
	else
		snprintf(buf, len, "%s %s", wl, k->label == POLL_READY ? "ready" : "pending");
	return buf;
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct polltime_bpf *skel;
	struct hist_tool t;
	bool summary;

	tool_parse_args(&env, &def, argc, argv);
	summary = summary_mode(&env, &mode, false, NULL);
	tool_setup(&env);

	skel = tool_opened(&env, polltime_bpf__open());
	summary_load_only(skel->obj, summary);
	skel->rodata->targ_per_worker = env.per_worker;
	skel->rodata->targ_by_result = by_result;
	skel->rodata->targ_unit_div = unit_div(env.unit);
	tool_loaded(&env, polltime_bpf__load(skel));
	t = (struct hist_tool){
		.env = &env, .map_fd = bpf_map__fd(skel->maps.hists),
		.unpaired = &skel->bss->unpaired, .dropped = &skel->bss->dropped,
		.json_label = label,
		.unpaired_what = summary ? "polls not stood for yet (the runtime times the polls of one tick "
					   "in N, BLITZ_HIST_SAMPLE, auto by default; they stand for the "
					   "worker's polls at each snapshot)"
					 : "poll ends without a duration (poll_ns 0)",
	};
	hist_tool_run(&t, skel->obj, sizeof(struct hist_key), "poll time");
	summary_report(&env, skel->bss->summary_bad, skel->bss->summary_bad_version);
	polltime_bpf__destroy(skel);
	return 0;
}
