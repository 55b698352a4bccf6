// SPDX-License-Identifier: MIT
/*
 * blitz-tasksrc - where blitz workers find the tasks they poll: counts of
 * task_poll_start by source (LIFO slot, local ring, global batch buffer,
 * global queue, steal, helper thread), per worker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpf_setup.h"
#include "json_writer.h"
#include "map_snapshot.h"
#include "print_loop.h"
#include "summary_helpers.h"
#include "tool_args.h"
#include "usdt_target.h"
#include "tasksrc.h"
#include "tasksrc.skel.h"

static struct summary_opts mode;

static const struct tool_flag flags[] = {
	SUMMARY_FLAGS(&mode),
	{ 0 },
};

static const struct tool_def def = {
	.name = "tasksrc",
	.summary = "Count the polls of blitz workers by where the task came from "
		   "(LIFO slot, ring, global batch, global queue, steal, helper).",
	.examples =
		"    blitz-tasksrc               # printed at Ctrl-C\n"
		"    blitz-tasksrc 1             # every second\n"
		"    blitz-tasksrc -j > src.json\n"
		"    blitz-tasksrc --per-event   # a probe hit per poll (also helper threads' polls)\n",
	.opts = 0,
	.flags = flags,
	.unit = UNIT_TASKS,
};

static const char *const src_names[NR_SOURCES] = {
	[SRC_LIFO] = "lifo", [SRC_RING] = "ring", [SRC_BATCH] = "batch",
	[SRC_GLOBAL] = "global", [SRC_STEAL] = "steal", [SRC_HELPER] = "helper",
	[SRC_OTHER] = "other",
};

struct state {
	struct tool_env *env;
	struct tasksrc_bpf *skel;
	struct snap cur, prev;
	__u64 prev_dropped;
};

static __u64 row_total(const __u64 *v)
{
	__u64 t = 0;

	for (int s = 0; s < NR_SOURCES; s++)
		t += v[s];
	return t;
}

static void json_row(struct json *j, int worker, const __u64 *v)
{
	json_obj_begin(j, NULL);
	json_int(j, "worker", worker);
	for (int s = 0; s < NR_SOURCES; s++)
		json_uint(j, src_names[s], v[s]);
	json_uint(j, "total", row_total(v));
	json_obj_end(j);
}

static void text_row(const char *name, const __u64 *v)
{
	__u64 t = row_total(v);

	printf("%-8s", name);
	for (int s = 0; s < NR_SOURCES - 1; s++)
		printf(" %10llu %5.1f%%", (unsigned long long)v[s], t ? 100.0 * (double)v[s] / (double)t : 0.0);
	if (v[SRC_OTHER])
		printf(" other %llu", (unsigned long long)v[SRC_OTHER]);
	printf(" %10llu\n", (unsigned long long)t);
}

static void print(struct state *st)
{
	struct tool_env *env = st->env;
	__u64 dropped = st->skel->bss->dropped, d_dropped = dropped - st->prev_dropped;
	__u64 all[NR_SOURCES] = { 0 };
	char buf[32];
	int err;

	st->prev_dropped = dropped;
	err = snap_delta(bpf_map__fd(st->skel->maps.sources), &st->cur, &st->prev);
	if (err)
		tool_die(env, "reading the counters: %s", strerror(-err));
	for (size_t i = 0; i < st->cur.n; i++)
		for (int s = 0; s < NR_SOURCES; s++)
			all[s] += snap_val(&st->cur, i)[s];

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, "polls");
		json_arr_begin(&j, "histograms");
		json_arr_end(&j);
		/* One row per worker (-1: helper threads), then the total (worker null). */
		json_arr_begin(&j, "counters");
		for (size_t i = 0; i < st->cur.n; i++)
			json_row(&j, ((const struct src_key *)snap_key(&st->cur, i))->worker,
				 snap_val(&st->cur, i));
		json_arr_end(&j);
		json_obj_begin(&j, "total");
		for (int s = 0; s < NR_SOURCES; s++)
			json_uint(&j, src_names[s], all[s]);
		json_uint(&j, "total", row_total(all));
		json_obj_end(&j);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	printf("\n%-8s", "WORKER");
	for (int s = 0; s < NR_SOURCES - 1; s++)
		printf(" %17s", src_names[s]);
	printf(" %10s\n", "TOTAL");
	for (size_t i = 0; i < st->cur.n; i++) {
		int w = ((const struct src_key *)snap_key(&st->cur, i))->worker;

		snprintf(buf, sizeof(buf), "%d", w);
		text_row(buf, snap_val(&st->cur, i));
	}
	text_row("all", all);
	if (d_dropped)
		printf("\n%llu events dropped (map full)\n", (unsigned long long)d_dropped);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	struct tasksrc_bpf *skel;
	bool last, summary;

	tool_parse_args(&env, &def, argc, argv);
	summary = summary_mode(&env, &mode, false, NULL);
	tool_setup(&env);

	skel = tool_opened(&env, tasksrc_bpf__open());
	summary_load_only(skel->obj, summary);
	tool_loaded(&env, tasksrc_bpf__load(skel));
	st.skel = skel;
	snap_init(&st.cur, sizeof(struct src_key), sizeof(struct src_val));
	snap_init(&st.prev, sizeof(struct src_key), sizeof(struct src_val));
	tool_attach(&env, skel->obj);
	tool_banner(&env, "task sources");

	do {
		last = tool_wait(&env, NULL, NULL);
		print(&st);
	} while (!last);

	tool_detach(&env);
	summary_report(&env, skel->bss->summary_bad, skel->bss->summary_bad_version);
	tasksrc_bpf__destroy(skel);
	snap_free(&st.cur);
	snap_free(&st.prev);
	return 0;
}
