// SPDX-License-Identifier: MIT
/*
 * blitz-top - an overview of blitz workers, refreshed like top: per worker,
 * the polls, steals, tasks stolen, failed steals, parks, LIFO hits, global
 * batches and overflows of the last interval.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpf_setup.h"
#include "json_writer.h"
#include "map_snapshot.h"
#include "print_loop.h"
#include "tool_args.h"
#include "usdt_target.h"
#include "top.h"
#include "top.skel.h"

static bool noclear;

static const struct tool_flag flags[] = {
	{ "noclear", 'C', "Do not clear the screen between prints", &noclear },
	{ 0 },
};

static const struct tool_def def = {
	.name = "top",
	.summary = "Show what blitz workers do, per worker and interval (default 1 s): "
		   "polls, steals, parks, LIFO hits, global batches, overflows.",
	.examples =
		"    blitz-top                   # refresh every second\n"
		"    blitz-top -C 5 10           # every 5 s, 10 times, without clearing\n"
		"    blitz-top -j > top.json     # counters and running totals as JSON\n",
	.opts = 0,
	.unit = UNIT_TASKS,
	.flags = flags,
};

/* In struct top_val order. */
static const char *const names[TOP_NR_COUNTERS] = {
	"polls", "steals", "stolen", "steal_fails", "parks", "lifo_hits",
	"global_batches", "global_tasks", "overflows", "overflowed",
};
/* The text columns: which counters, and their headers. */
static const int cols[] = { 0, 1, 2, 3, 4, 5, 6, 8 };
static const char *const heads[] = {
	"POLLS", "STEALS", "STOLEN", "STEAL_FAIL", "PARKS", "LIFO_HITS", "GLOBAL_BAT", "OVERFLOWS",
};
#define NR_COLS (sizeof(cols) / sizeof(cols[0]))

struct state {
	struct tool_env *env;
	struct top_bpf *skel;
	struct snap cur, prev;
	__u64 prev_dropped;
};

static void json_rows(struct json *j, const char *key, const struct snap *s)
{
	json_arr_begin(j, key);
	for (size_t i = 0; i < s->n; i++) {
		json_obj_begin(j, NULL);
		json_int(j, "worker", ((const struct top_key *)snap_key(s, i))->worker);
		for (size_t c = 0; c < TOP_NR_COUNTERS; c++)
			json_uint(j, names[c], snap_val(s, i)[c]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void print(struct state *st)
{
	struct tool_env *env = st->env;
	__u64 dropped = st->skel->bss->dropped, d_dropped = dropped - st->prev_dropped;
	__u64 all[TOP_NR_COUNTERS] = { 0 };
	int err;

	st->prev_dropped = dropped;
	err = snap_delta(bpf_map__fd(st->skel->maps.counters), &st->cur, &st->prev);
	if (err)
		tool_die(env, "reading the counters: %s", strerror(-err));
	for (size_t i = 0; i < st->cur.n; i++)
		for (size_t c = 0; c < TOP_NR_COUNTERS; c++)
			all[c] += snap_val(&st->cur, i)[c];

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, "events");
		json_arr_begin(&j, "histograms");
		json_arr_end(&j);
		/* counters: this interval; totals: since the tool started. */
		json_rows(&j, "counters", &st->cur);
		json_rows(&j, "totals", &st->prev);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	if (!noclear && env->interval > 0 && isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");
	else
		putchar('\n');
	{
		char t[16];
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		strftime(t, sizeof(t), "%H:%M:%S", &tm);
		printf("%s  %s, last %.1f s: %.0f polls/s, %.0f steals/s, %.0f parks/s\n\n", t,
		       env->binary, env->elapsed, env->elapsed > 0 ? (double)all[0] / env->elapsed : 0.0,
		       env->elapsed > 0 ? (double)all[1] / env->elapsed : 0.0,
		       env->elapsed > 0 ? (double)all[4] / env->elapsed : 0.0);
	}
	printf("%6s", "WORKER");
	for (size_t c = 0; c < NR_COLS; c++)
		printf(" %11s", heads[c]);
	printf("\n");
	for (size_t i = 0; i < st->cur.n; i++) {
		printf("%6d", ((const struct top_key *)snap_key(&st->cur, i))->worker);
		for (size_t c = 0; c < NR_COLS; c++)
			printf(" %11llu", (unsigned long long)snap_val(&st->cur, i)[cols[c]]);
		printf("\n");
	}
	printf("%6s", "all");
	for (size_t c = 0; c < NR_COLS; c++)
		printf(" %11llu", (unsigned long long)all[cols[c]]);
	printf("\n");
	if (d_dropped)
		printf("\n%llu events dropped (map full)\n", (unsigned long long)d_dropped);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	struct top_bpf *skel;
	bool last;

	tool_parse_args(&env, &def, argc, argv);
	if (env.interval <= 0)
		env.interval = 1;
	tool_setup(&env);

	skel = tool_opened(&env, top_bpf__open());
	tool_loaded(&env, top_bpf__load(skel));
	st.skel = skel;
	snap_init(&st.cur, sizeof(struct top_key), sizeof(struct top_val));
	snap_init(&st.prev, sizeof(struct top_key), sizeof(struct top_val));
	tool_attach(&env, skel->obj);
	tool_banner(&env, "blitz workers");

	do {
		last = tool_wait(&env, NULL, NULL);
		print(&st);
	} while (!last);

	tool_detach(&env);
	top_bpf__destroy(skel);
	snap_free(&st.cur);
	snap_free(&st.prev);
	return 0;
}
