// SPDX-License-Identifier: MIT
/*
 * blitz-ewma - the adaptive global-queue interval of blitz workers over
 * time: every ewma_update (the EWMA of the poll time and the interval it
 * gives) per worker, summarised per print interval as last/min/max and a
 * log2 histogram of the average, or streamed whole with -s.  By default
 * (--summary) the histogram comes from the runtime's own (hist_snapshot:
 * a probe hit per worker every 100-200 ms, not per update), with each worker's
 * updates and mean; last/min/max, the interval and the series need every
 * update (--per-event, which -s implies).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "bpf_setup.h"
#include "hist_output.h"
#include "json_writer.h"
#include "map_snapshot.h"
#include "print_loop.h"
#include "summary_helpers.h"
#include "tool_args.h"
#include "usdt_target.h"
#include "ewma.h"
#include "ewma.skel.h"

static bool series;
static struct summary_opts mode;

static const struct tool_flag flags[] = {
	{ "series", 's', "Every update: a line per update (text), or a \"series\" array per "
	  "interval object (-j); implies --per-event", &series },
	SUMMARY_FLAGS(&mode),
	{ 0 },
};

static const struct tool_def def = {
	.name = "ewma",
	.summary = "Show the adaptive global-queue interval of blitz workers and the "
		   "average poll time it comes from (ewma_update), over time.",
	.examples =
		"    blitz-ewma 1                # updates and mean per worker, every second\n"
		"    blitz-ewma -W 1             # and a histogram of the average per worker\n"
		"    blitz-ewma --per-event 1    # last/min/max and the interval (a hit per update)\n"
		"    blitz-ewma -s               # every update as it happens\n"
		"    blitz-ewma -j -s 1 > ewma.json  # the whole time series, as JSON\n",
	.opts = TOOL_OPT_WORKER,
	.unit = UNIT_NS,
	.flags = flags,
};

struct range {
	__u64 last, min, max;
};

/* One worker of one process. */
struct wstate {
	__u32 tgid;
	__s32 worker;
	__u64 updates;			/* this print interval */
	struct range avg, ival;		/* min/max: this print interval */
	struct hist hist;		/* this interval's averages */
};

struct state {
	struct tool_env *env;
	struct ewma_bpf *skel;
	bool summary;			/* the runtime's histograms, not every update */
	struct snap cur, prev;		/* summary: this interval's histograms */
	struct ring_buffer *rb;
	struct array w;			/* struct wstate */
	__u64 prev_dropped;
	double mono_to_unix;		/* add to CLOCK_MONOTONIC seconds */
	/* The series of this interval (-s -j). */
	struct array ser;		/* struct ewma_event */
	int ntgids;
};

static struct wstate *wst(const struct state *st, size_t i)
{
	return array_at(&st->w, i);
}

static struct wstate *wstate_get(struct state *st, __u32 tgid, __s32 worker)
{
	struct wstate *w;

	for (size_t i = 0; i < st->w.n; i++)
		if (wst(st, i)->tgid == tgid && wst(st, i)->worker == worker)
			return wst(st, i);
	w = array_push(&st->w);
	if (!w)
		tool_die(st->env, "out of memory");
	w->tgid = tgid;
	w->worker = worker;
	st->ntgids = 0;
	for (size_t i = 0; i < st->w.n; i++) {
		size_t k;

		for (k = 0; k < i && wst(st, k)->tgid != wst(st, i)->tgid; k++)
			;
		st->ntgids += k == i;
	}
	return w;
}

static void range_add(struct range *r, __u64 v, bool first)
{
	r->last = v;
	if (first || v < r->min)
		r->min = v;
	if (first || v > r->max)
		r->max = v;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct state *st = ctx;
	const struct ewma_event *e = data;
	struct ewma_event *s;
	struct wstate *w;

	if (size < sizeof(*e))
		return 0;
	w = wstate_get(st, e->tgid, e->worker);
	range_add(&w->avg, e->avg_poll_ns, w->updates == 0);
	range_add(&w->ival, e->interval, w->updates == 0);
	w->updates++;
	hist_record(&w->hist, e->avg_poll_ns, e->avg_poll_ns);
	if (!series)
		return tool_sample_taken();
	if (!st->env->json) {
		printf("%.6f %7u %6d %12llu %8u\n", (double)e->ts / 1e9 + st->mono_to_unix,
		       e->tgid, e->worker, (unsigned long long)e->avg_poll_ns, e->interval);
		return tool_sample_taken();
	}
	s = array_push(&st->ser);
	if (!s)
		tool_die(st->env, "out of memory");
	*s = *e;
	return tool_sample_taken();
}

/* The most updates the ring holds: a take of as many empties it (tool_ring_take). */
#define RING_EVENTS	(EWMA_RINGBUF_BYTES / sizeof(struct ewma_event))

/* Sleep up to @timeout_ms, then take what the ring buffer holds (Ctrl-C ends the take). */
static int drain(void *ctx, int timeout_ms)
{
	struct state *st = ctx;
	struct timespec ts = { 0, (long)(timeout_ms < 50 ? timeout_ms : 50) * 1000000L };

	nanosleep(&ts, NULL);
	tool_ring_take(st->rb, 0, RING_EVENTS, false);
	fflush(stdout);
	return 0;
}

static int wstate_cmp(const void *a, const void *b)
{
	const struct wstate *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return (x->worker > y->worker) - (x->worker < y->worker);
}

/*
 * summary_read - this interval's histograms from the runtime's (summary
 * mode): each worker's updates are its histogram's count.
 */
static void summary_read(struct state *st)
{
	int err = snap_delta(bpf_map__fd(st->skel->maps.hists), &st->cur, &st->prev);

	if (err)
		tool_die(st->env, "reading the map: %s", strerror(-err));
	for (size_t i = 0; i < st->cur.n; i++) {
		const struct hist_key *k = snap_key(&st->cur, i);
		const struct hist *h = (const struct hist *)snap_val(&st->cur, i);
		struct wstate *w = wstate_get(st, (__u32)k->label, k->worker);

		w->hist = *h;
		w->updates = h->count;
	}
}

/* json_range - {"last", "min", "max", "mean"} of @r; null where not known. */
static void json_range(struct json *j, const char *name, const struct range *r,
		       const struct wstate *w, bool known, bool with_mean)
{
	json_obj_begin(j, name);
	if (known) {
		json_uint(j, "last", r->last);
		json_uint(j, "min", r->min);
		json_uint(j, "max", r->max);
	} else {
		json_null(j, "last");
		json_null(j, "min");
		json_null(j, "max");
	}
	if (with_mean && w->hist.count)
		json_double(j, "mean", (double)w->hist.sum / (double)w->hist.count, 1);
	else if (with_mean)
		json_null(j, "mean");
	json_obj_end(j);
}

/* The histograms of the average at each update: per worker (-W) or all. */
static void print_ewma_hists(const struct state *st, const struct hist *all)
{
	char buf[32];

	if (st->env->per_worker) {
		for (size_t i = 0; i < st->w.n; i++) {
			if (!wst(st, i)->hist.count)
				continue;
			printf("\n%s: average poll time at each update\n",
			       worker_label(wst(st, i)->worker, buf, sizeof(buf)));
			print_log2_hist(wst(st, i)->hist.slots, MAX_SLOTS, "nsecs");
		}
	} else if (all->count) {
		printf("\naverage poll time at each update\n");
		print_log2_hist(all->slots, MAX_SLOTS, "nsecs");
	}
}

static void print(struct state *st)
{
	struct tool_env *env = st->env;
	__u64 dropped = st->skel->bss->dropped, d_dropped = dropped - st->prev_dropped;
	struct hist all = { 0 };
	char buf[32];

	if (st->summary)
		summary_read(st);
	else
		tool_ring_take(st->rb, 0, RING_EVENTS, true);
	st->prev_dropped = dropped;
	qsort(st->w.p, st->w.n, st->w.size, wstate_cmp);
	for (size_t i = 0; i < st->w.n; i++) {
		for (int s = 0; s < MAX_SLOTS; s++)
			all.slots[s] += wst(st, i)->hist.slots[s];
		all.count += wst(st, i)->hist.count;
		all.sum += wst(st, i)->hist.sum;
	}

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, "ns");
		json_arr_begin(&j, "histograms");
		if (env->per_worker)
			for (size_t i = 0; i < st->w.n; i++)
				json_hist(&j, worker_label(wst(st, i)->worker, buf, sizeof(buf)),
					  wst(st, i)->worker, &wst(st, i)->hist, 1);
		else
			json_hist(&j, "all", -1, &all, 1);
		json_arr_end(&j);
		json_arr_begin(&j, "workers");
		for (size_t i = 0; i < st->w.n; i++) {
			const struct wstate *w = wst(st, i);

			json_obj_begin(&j, NULL);
			json_uint(&j, "pid", w->tgid);
			json_int(&j, "worker", w->worker);
			json_uint(&j, "updates", w->updates);
			/* last/min/max: known per event, once there was an update */
			json_range(&j, "avg_poll_ns", &w->avg, w, !st->summary && w->updates, true);
			json_range(&j, "interval", &w->ival, w, !st->summary && w->updates, false);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		if (series) {
			/* [unix seconds, pid, worker, avg_poll_ns, interval] per update */
			json_arr_begin(&j, "series");
			for (size_t i = 0; i < st->ser.n; i++) {
				const struct ewma_event *e = array_at(&st->ser, i);

				json_arr_begin(&j, NULL);
				json_double(&j, NULL, (double)e->ts / 1e9 + st->mono_to_unix, 6);
				json_uint(&j, NULL, e->tgid);
				json_int(&j, NULL, e->worker);
				json_uint(&j, NULL, e->avg_poll_ns);
				json_uint(&j, NULL, e->interval);
				json_arr_end(&j);
			}
			json_arr_end(&j);
			st->ser.n = 0;
		}
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
	} else if (st->summary) {
		tool_print_time(env);
		printf("\n%s%6s %9s %12s\n", st->ntgids > 1 ? "    PID " : "", "WORKER", "UPDATES",
		       "AVG_NS MEAN");
		for (size_t i = 0; i < st->w.n; i++) {
			const struct wstate *w = wst(st, i);

			if (st->ntgids > 1)
				printf("%7u ", w->tgid);
			printf("%6d %9llu", w->worker, (unsigned long long)w->updates);
			if (w->hist.count)
				printf(" %12.0f\n", (double)w->hist.sum / (double)w->hist.count);
			else
				printf(" %12s\n", "-");
		}
		print_ewma_hists(st, &all);
	} else if (!series) {
		tool_print_time(env);
		printf("\n%s%6s %9s %12s %12s %12s %9s %6s %6s\n", st->ntgids > 1 ? "    PID " : "",
		       "WORKER", "UPDATES", "AVG_NS LAST", "MIN", "MAX", "INTERVAL", "MIN", "MAX");
		for (size_t i = 0; i < st->w.n; i++) {
			const struct wstate *w = wst(st, i);

			if (st->ntgids > 1)
				printf("%7u ", w->tgid);
			printf("%6d %9llu %12llu", w->worker, (unsigned long long)w->updates,
			       (unsigned long long)w->avg.last);
			if (w->updates)
				printf(" %12llu %12llu", (unsigned long long)w->avg.min,
				       (unsigned long long)w->avg.max);
			else
				printf(" %12s %12s", "-", "-");
			printf(" %9llu", (unsigned long long)w->ival.last);
			if (w->updates)
				printf(" %6llu %6llu\n", (unsigned long long)w->ival.min,
				       (unsigned long long)w->ival.max);
			else
				printf(" %6s %6s\n", "-", "-");
		}
		print_ewma_hists(st, &all);
	}
	if (d_dropped && !env->json)
		printf("\n%llu updates dropped (ring buffer full)\n", (unsigned long long)d_dropped);
	fflush(stdout);
	for (size_t i = 0; i < st->w.n; i++) {
		wst(st, i)->updates = 0;
		memset(&wst(st, i)->hist, 0, sizeof(wst(st, i)->hist));
	}
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env, .w = ARRAY_OF(struct wstate),
			    .ser = ARRAY_OF(struct ewma_event) };
	struct ewma_bpf *skel;
	bool last;

	tool_parse_args(&env, &def, argc, argv);
	st.summary = summary_mode(&env, &mode, series, "--series");
	tool_setup(&env);

	skel = tool_opened(&env, ewma_bpf__open());
	summary_load_only(skel->obj, st.summary);
	tool_loaded(&env, ewma_bpf__load(skel));
	st.skel = skel;
	snap_init(&st.cur, sizeof(struct hist_key), sizeof(struct hist));
	snap_init(&st.prev, sizeof(struct hist_key), sizeof(struct hist));
	st.rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &st, NULL);
	if (!st.rb)
		tool_die(&env, "cannot open the ring buffer: %s", strerror(errno));
	st.mono_to_unix = now_unix() - now_mono();
	tool_attach(&env, skel->obj);
	tool_banner(&env, "EWMA updates");
	if (series && !env.json)
		printf("%-17s %7s %6s %12s %8s\n", "TIME(s)", "PID", "WORKER", "AVG_POLL_NS",
		       "INTERVAL");

	do {
		last = tool_wait(&env, drain, &st);
		print(&st);
	} while (!last);

	tool_detach(&env);
	ring_buffer__free(st.rb);
	summary_report(&env, skel->bss->summary_bad, skel->bss->summary_bad_version);
	ewma_bpf__destroy(skel);
	snap_free(&st.cur);
	snap_free(&st.prev);
	array_free(&st.w);
	array_free(&st.ser);
	return 0;
}
