// SPDX-License-Identifier: MIT
/*
 * blitz-steal - work stealing in blitz: a log2 histogram of how many tasks
 * each successful steal took, the failed attempts by reason, and a thief by
 * victim matrix of the tasks taken.  By default from the runtime's own
 * histograms (--summary: the sizes and the totals); the failed attempts
 * and the matrix need a probe hit per steal (--per-event).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bpf_setup.h"
#include "hist_output.h"
#include "json_writer.h"
#include "map_snapshot.h"
#include "print_loop.h"
#include "summary_helpers.h"
#include "tool_args.h"
#include "usdt_target.h"
#include "steal.h"
#include "steal.skel.h"

static struct summary_opts mode;

static const struct tool_flag flags[] = {
	SUMMARY_FLAGS(&mode),
	{ 0 },
};

static const struct tool_def def = {
	.name = "steal",
	.summary = "Summarize blitz work stealing: steal sizes, failed attempts by reason, "
		   "and who stole from whom.",
	.examples =
		"    blitz-steal                 # printed at Ctrl-C\n"
		"    blitz-steal 1 5             # every second, 5 times\n"
		"    blitz-steal -W              # one size histogram per thief\n"
		"    blitz-steal -j > steal.json\n"
		"    blitz-steal --per-event     # and failed attempts, thief by victim\n",
	.opts = TOOL_OPT_WORKER,
	.unit = UNIT_TASKS,
	.flags = flags,
};

static const char *const fail_names[STEAL_FAIL_REASONS] = {
	[STEAL_FAIL_EMPTY] = "empty", [STEAL_FAIL_BUSY] = "busy",
	[STEAL_FAIL_NO_ROOM] = "no_room",
};
static const char *const fail_text[STEAL_FAIL_REASONS] = {
	[STEAL_FAIL_EMPTY] = "victim empty", [STEAL_FAIL_BUSY] = "steal in flight",
	[STEAL_FAIL_NO_ROOM] = "thief ring over half full",
};

struct state {
	struct tool_env *env;
	struct steal_bpf *skel;
	struct snap cur, prev, pcur, pprev;
	__u64 prev_dropped;
	bool summary;			/* no pairs: the totals come from the histograms */
};

/* The matrix side: one more than the highest worker index seen. */
static int matrix_size(const struct snap *p)
{
	int n = 0;

	for (size_t i = 0; i < p->n; i++) {
		const struct pair_key *k = snap_key(p, i);

		if (k->thief >= n)
			n = k->thief + 1;
		if (k->victim >= n)
			n = k->victim + 1;
	}
	return n;
}

static const struct pair_val *pair_at(const struct snap *p, int thief, int victim)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct pair_key *k = snap_key(p, i);

		if (k->thief == thief && k->victim == victim)
			return (const struct pair_val *)snap_val(p, i);
	}
	return NULL;
}

static __u64 pair_fails(const struct pair_val *v)
{
	__u64 s = 0;

	for (int r = 0; v && r < STEAL_FAIL_REASONS; r++)
		s += v->fails[r];
	return s;
}

static void json_matrix(struct json *j, const struct snap *p, int n, const char *name)
{
	json_arr_begin(j, name);
	for (int t = 0; t < n; t++) {
		json_arr_begin(j, NULL);
		for (int v = 0; v < n; v++) {
			const struct pair_val *pv = pair_at(p, t, v);
			__u64 x = 0;

			if (pv)
				x = !strcmp(name, "tasks") ? pv->tasks :
				    !strcmp(name, "steals") ? pv->steals : pair_fails(pv);
			json_uint(j, NULL, x);
		}
		json_arr_end(j);
	}
	json_arr_end(j);
}

static void print(struct state *st)
{
	struct tool_env *env = st->env;
	__u64 dropped = st->skel->bss->dropped, d_dropped = dropped - st->prev_dropped;
	__u64 steals = 0, tasks = 0, fails[STEAL_FAIL_REASONS] = { 0 }, nfails = 0;
	int err, n;

	st->prev_dropped = dropped;
	err = snap_delta(bpf_map__fd(st->skel->maps.hists), &st->cur, &st->prev);
	if (!err)
		err = snap_delta(bpf_map__fd(st->skel->maps.pairs), &st->pcur, &st->pprev);
	if (err)
		tool_die(env, "reading the maps: %s", strerror(-err));
	for (size_t i = 0; i < st->pcur.n; i++) {
		const struct pair_val *v = (const struct pair_val *)snap_val(&st->pcur, i);

		steals += v->steals;
		tasks += v->tasks;
		for (int r = 0; r < STEAL_FAIL_REASONS; r++)
			fails[r] += v->fails[r];
	}
	for (int r = 0; r < STEAL_FAIL_REASONS; r++)
		nfails += fails[r];
	for (size_t i = 0; st->summary && i < st->cur.n; i++) {
		const struct hist *h = (const struct hist *)snap_val(&st->cur, i);

		steals += h->count;
		tasks += h->sum;
	}
	n = matrix_size(&st->pcur);

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_hist_snap(&j, &st->cur, NULL, 1);
		json_uint(&j, "steals", steals);
		json_uint(&j, "tasks", tasks);
		if (st->summary) {
			json_null(&j, "fails");		/* not counted by the summary mode */
		} else {
			json_obj_begin(&j, "fails");
			for (int r = 0; r < STEAL_FAIL_REASONS; r++)
				json_uint(&j, fail_names[r], fails[r]);
			json_obj_end(&j);
		}
		/* matrix.X[thief][victim] */
		json_obj_begin(&j, "matrix");
		json_int(&j, "workers", n);
		json_matrix(&j, &st->pcur, n, "tasks");
		json_matrix(&j, &st->pcur, n, "steals");
		json_matrix(&j, &st->pcur, n, "fails");
		json_obj_end(&j);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_hist_snap(env, &st->cur, NULL);
	printf("\nsteals: %llu, tasks stolen: %llu", (unsigned long long)steals,
	       (unsigned long long)tasks);
	if (steals)
		printf(" (%.1f per steal)", (double)tasks / (double)steals);
	if (st->summary) {
		printf("\nfailed attempts: not counted in summary mode (--per-event)\n");
	} else {
		printf("\nfailed attempts: %llu", (unsigned long long)nfails);
		for (int r = 0; r < STEAL_FAIL_REASONS; r++)
			printf("%s%s %llu", r ? ", " : " (", fail_text[r],
			       (unsigned long long)fails[r]);
		printf(")\n");
	}
	if (n > 0) {
		printf("\ntasks stolen (steals/failed attempts), thief by victim:\n%14s", "THIEF\\VICTIM");
		for (int v = 0; v < n; v++)
			printf(" %20d", v);
		printf("\n");
		for (int t = 0; t < n; t++) {
			printf("%14d", t);
			for (int v = 0; v < n; v++) {
				const struct pair_val *pv = pair_at(&st->pcur, t, v);
				char cell[64];

				if (t == v)
					snprintf(cell, sizeof(cell), "-");
				else
					snprintf(cell, sizeof(cell), "%llu (%llu/%llu)",
						 (unsigned long long)(pv ? pv->tasks : 0),
						 (unsigned long long)(pv ? pv->steals : 0),
						 (unsigned long long)pair_fails(pv));
				printf(" %20s", cell);
			}
			printf("\n");
		}
	}
	if (d_dropped)
		printf("\n%llu events dropped (map full)\n", (unsigned long long)d_dropped);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	struct steal_bpf *skel;
	bool last;

	tool_parse_args(&env, &def, argc, argv);
	st.summary = summary_mode(&env, &mode, false, NULL);
	tool_setup(&env);

	skel = tool_opened(&env, steal_bpf__open());
	summary_load_only(skel->obj, st.summary);
	skel->rodata->targ_per_worker = env.per_worker;
	tool_loaded(&env, steal_bpf__load(skel));
	st.skel = skel;
	snap_init(&st.cur, sizeof(struct hist_key), sizeof(struct hist));
	snap_init(&st.prev, sizeof(struct hist_key), sizeof(struct hist));
	snap_init(&st.pcur, sizeof(struct pair_key), sizeof(struct pair_val));
	snap_init(&st.pprev, sizeof(struct pair_key), sizeof(struct pair_val));
	tool_attach(&env, skel->obj);
	tool_banner(&env, "work stealing");

	do {
		last = tool_wait(&env, NULL, NULL);
		print(&st);
	} while (!last);

	tool_detach(&env);
	summary_report(&env, skel->bss->summary_bad, skel->bss->summary_bad_version);
	steal_bpf__destroy(skel);
	snap_free(&st.cur);
	snap_free(&st.prev);
	snap_free(&st.pcur);
	snap_free(&st.pprev);
	return 0;
}
