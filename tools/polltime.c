// SPDX-License-Identifier: MIT
/*
 * blitz-polltime - how long blitz poll functions run: task_poll_start to
 * task_poll_end on the same thread, as a log2 histogram, overall, per worker
 * (-W) and/or split by how the poll ended (-R: ready or pending).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "trace_helpers.h"
#include "polltime.h"
#include "polltime.skel.h"

#define OPT_BY_RESULT 'R'

static const struct argp_option opts[] = {
	{ "by-result", OPT_BY_RESULT, NULL, 0,
	  "Split by result: polls that completed the task (ready) and the others (pending)", 0 },
	{ 0 },
};

static bool by_result;

static int parse(struct tool_env *env, int key, const char *arg)
{
	if (key != OPT_BY_RESULT)
		return ARGP_ERR_UNKNOWN;
	by_result = true;
	return 0;
}

static const struct tool_def def = {
	.name = "polltime",
	.summary = "Summarize how long blitz poll functions run (task_poll_start to "
		   "task_poll_end) as a histogram.",
	.examples =
		"    blitz-polltime              # histogram in ns, printed at Ctrl-C\n"
		"    blitz-polltime -u 1         # microseconds, every second\n"
		"    blitz-polltime -W -R        # per worker, ready and pending apart\n"
		"    blitz-polltime -j > poll.json\n",
	.opts = TOOL_OPT_UNITS | TOOL_OPT_WORKER,
	.unit = UNIT_NS,
	.extra = opts,
	.parse = parse,
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

struct state {
	struct tool_env *env;
	struct polltime_bpf *skel;
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
		json_hist_snap(&j, &st->cur, label, unit_div(env->unit));
		json_uint(&j, "unpaired", d_unpaired);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_hist_snap(env, &st->cur, label);
	if (d_unpaired || d_dropped)
		printf("\n%llu poll ends without their start (attached mid-poll), "
		       "%llu events dropped (map full)\n",
		       (unsigned long long)d_unpaired, (unsigned long long)d_dropped);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	struct polltime_bpf *skel;
	bool last;
	int err;

	tool_parse_args(&env, &def, argc, argv);
	tool_setup(&env);

	skel = polltime_bpf__open();
	if (!skel)
		tool_die(&env, "cannot open the BPF object: %s", strerror(errno));
	skel->rodata->targ_per_worker = env.per_worker;
	skel->rodata->targ_by_result = by_result;
	skel->rodata->targ_unit_div = unit_div(env.unit);
	err = polltime_bpf__load(skel);
	if (err)
		tool_die(&env, "cannot load the BPF programs: %s (run with -v for libbpf's log)",
			 strerror(-err));
	st.skel = skel;
	snap_init(&st.cur, sizeof(struct hist_key), sizeof(struct hist));
	snap_init(&st.prev, sizeof(struct hist_key), sizeof(struct hist));
	tool_attach(&env, skel->obj);
	tool_banner(&env, "poll time");

	do {
		last = tool_wait(&env, NULL, NULL);
		print(&st);
	} while (!last);

	tool_detach(&env);
	polltime_bpf__destroy(skel);
	snap_free(&st.cur);
	snap_free(&st.prev);
	return 0;
}
