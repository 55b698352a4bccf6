// SPDX-License-Identifier: MIT
/*
 * blitz-park - how long blitz workers sleep (unpark's slept_ns, timed by
 * the runtime while traced: no pairing with park) as log2 histograms
 * split by why they woke (notified, timeout, shutdown, io), the parks each
 * worker started (the park probe, counted only), and who woke whom.
 * By default from the runtime's own histograms (--summary); who woke
 * whom needs a probe hit per unpark (--per-event).
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
#include "park.h"
#include "park.skel.h"

static struct summary_opts mode;

static const struct tool_flag flags[] = {
	SUMMARY_FLAGS(&mode),
	{ 0 },
};

static const struct tool_def def = {
	.name = "park",
	.summary = "Summarize how long blitz workers sleep (unpark's slept_ns) by "
		   "wake reason, and who woke them.",
	.examples =
		"    blitz-park                  # histograms in us, printed at Ctrl-C\n"
		"    blitz-park -m 1             # milliseconds, every second\n"
		"    blitz-park -W               # per worker and reason\n"
		"    blitz-park -j > park.json\n"
		"    blitz-park --per-event      # and who woke whom (a probe hit per park)\n",
	.opts = TOOL_OPT_UNITS | TOOL_OPT_WORKER,
	.unit = UNIT_US,
	.flags = flags,
};

static const char *const reasons[UNPARK_REASONS] = {
	[UNPARK_NOTIFIED] = "notified", [UNPARK_TIMEOUT] = "timeout",
	[UNPARK_SHUTDOWN] = "shutdown", [UNPARK_IO] = "io",
};

static const char *reason_name(int r)
{
	return r >= 0 && r < UNPARK_REASONS ? reasons[r] : "unknown";
}

static const char *label(const struct hist_key *k, char *buf, size_t len)
{
	char w[32];

	if (k->worker == HIST_ALL)
		snprintf(buf, len, "%s", reason_name(k->label));
	else
		snprintf(buf, len, "%s %s", worker_label(k->worker, w, sizeof(w)),
			 reason_name(k->label));
	return buf;
}

static const char *waker_name(int waker, char *buf, size_t len)
{
	const char *name = waker == WAKER_OUTSIDE ? "outside" :
			   waker == WAKER_NONE ? "none" :
			   waker == WAKER_UNKNOWN ? "unknown" : NULL;

	if (name)
		snprintf(buf, len, "%s (%d)", name, waker);
	else
		snprintf(buf, len, "%d", waker);
	return buf;
}

struct state {
	struct tool_env *env;
	struct park_bpf *skel;
	struct snap cur, prev, wcur, wprev, pcur, pprev;
	__u64 prev_unpaired, prev_dropped;
};

static void print(struct state *st)
{
	struct tool_env *env = st->env;
	__u64 unpaired = st->skel->bss->unpaired, dropped = st->skel->bss->dropped;
	__u64 d_unpaired = unpaired - st->prev_unpaired, d_dropped = dropped - st->prev_dropped;
	__u64 started = 0, slept = 0;
	char buf[32];
	int err;

	st->prev_unpaired = unpaired;
	st->prev_dropped = dropped;
	err = snap_delta(bpf_map__fd(st->skel->maps.hists), &st->cur, &st->prev);
	if (!err)
		err = snap_delta(bpf_map__fd(st->skel->maps.wakers), &st->wcur, &st->wprev);
	if (!err)
		err = snap_delta(bpf_map__fd(st->skel->maps.parks), &st->pcur, &st->pprev);
	if (err)
		tool_die(env, "reading the maps: %s", strerror(-err));
	for (size_t i = 0; i < st->pcur.n; i++)
		started += snap_val(&st->pcur, i)[0];
	for (size_t i = 0; i < st->cur.n; i++)
		slept += ((const struct hist *)snap_val(&st->cur, i))->count;

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_hist_snap(&j, &st->cur, label, unit_div(env->unit));
		json_uint(&j, "parks_total", started);
		json_arr_begin(&j, "parks");
		for (size_t i = 0; i < st->pcur.n; i++) {
			const struct park_key *k = snap_key(&st->pcur, i);

			json_obj_begin(&j, NULL);
			json_int(&j, "worker", k->worker);
			json_uint(&j, "count", snap_val(&st->pcur, i)[0]);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_arr_begin(&j, "wakers");
		for (size_t i = 0; i < st->wcur.n; i++) {
			const struct waker_key *k = snap_key(&st->wcur, i);

			json_obj_begin(&j, NULL);
			json_int(&j, "worker", k->worker);
			json_int(&j, "waker", k->waker);
			json_uint(&j, "count", snap_val(&st->wcur, i)[0]);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_uint(&j, "unpaired", d_unpaired);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_hist_snap(env, &st->cur, label);
	printf("\nparks started: %llu, sleeps ended: %llu", (unsigned long long)started,
	       (unsigned long long)slept);
	for (size_t i = 0; i < st->pcur.n; i++)
		printf("%sworker %d: %llu", i ? ", " : " (", ((const struct park_key *)
		       snap_key(&st->pcur, i))->worker, (unsigned long long)snap_val(&st->pcur, i)[0]);
	printf("%s\n", st->pcur.n ? ")" : "");
	if (st->wcur.n) {
		printf("\nwoken by (notified unparks):\n%8s  %-14s %10s\n", "WORKER", "WAKER", "COUNT");
		for (size_t i = 0; i < st->wcur.n; i++) {
			const struct waker_key *k = snap_key(&st->wcur, i);

			if (!snap_val(&st->wcur, i)[0])
				continue;
			printf("%8d  %-14s %10llu\n", k->worker, waker_name(k->waker, buf, sizeof(buf)),
			       (unsigned long long)snap_val(&st->wcur, i)[0]);
		}
	}
	if (d_unpaired || d_dropped)
		printf("\n%llu unparks without a duration (slept_ns 0: asleep when "
		       "tracing started), %llu events dropped (map full)\n",
		       (unsigned long long)d_unpaired, (unsigned long long)d_dropped);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	struct park_bpf *skel;
	bool last, summary;

	tool_parse_args(&env, &def, argc, argv);
	summary = summary_mode(&env, &mode, false, NULL);
	tool_setup(&env);

	skel = tool_opened(&env, park_bpf__open());
	summary_load_only(skel->obj, summary);
	skel->rodata->targ_per_worker = env.per_worker;
	skel->rodata->targ_unit_div = unit_div(env.unit);
	tool_loaded(&env, park_bpf__load(skel));
	st.skel = skel;
	snap_init(&st.cur, sizeof(struct hist_key), sizeof(struct hist));
	snap_init(&st.prev, sizeof(struct hist_key), sizeof(struct hist));
	snap_init(&st.wcur, sizeof(struct waker_key), sizeof(__u64));
	snap_init(&st.wprev, sizeof(struct waker_key), sizeof(__u64));
	snap_init(&st.pcur, sizeof(struct park_key), sizeof(struct park_count));
	snap_init(&st.pprev, sizeof(struct park_key), sizeof(struct park_count));
	tool_attach(&env, skel->obj);
	tool_banner(&env, "worker sleeps");

	do {
		last = tool_wait(&env, NULL, NULL);
		print(&st);
	} while (!last);

	tool_detach(&env);
	summary_report(&env, skel->bss->summary_bad, skel->bss->summary_bad_version);
	park_bpf__destroy(skel);
	snap_free(&st.cur);
	snap_free(&st.prev);
	snap_free(&st.wcur);
	snap_free(&st.wprev);
	snap_free(&st.pcur);
	snap_free(&st.pprev);
	return 0;
}
