// SPDX-License-Identifier: MIT
/*
 * tools/events_print.c - a print: what the tracing holds taken first (at
 * the last one also the flushes half in, the losses not yet told and the
 * rings' last logs), then as text (a line per writer, the two histograms,
 * the lost spans, the counts of what was not paired) or as one JSON
 * object, or with -w what went into the file; then the counts start
 * again, and the writers of ended processes go.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include "array.h"
#include "hist_output.h"
#include "json_writer.h"
#include "print_loop.h"
#include "tool_args.h"
#include "events.h"
#include "events.skel.h"
#include "events_chunks.h"
#include "events_opts.h"
#include "events_print.h"
#include "events_records.h"
#include "events_ring.h"
#include "events_settle.h"
#include "events_state.h"
#include "events_trace.h"

/* json_who - which log: the process, the worker (or a thread that is not one), the runtime. */
static void json_who(struct json *j, __u32 tgid, __s32 worker, __u32 thread, __u64 runtime)
{
	json_uint(j, "pid", tgid);
	json_int(j, "worker", worker);
	if (worker < 0)
		json_uint(j, "thread", thread);
	json_uint(j, "runtime", runtime);
}

static void json_wstate(struct json *j, const struct wstate *w)
{
	json_obj_begin(j, NULL);
	json_who(j, w->tgid, w->worker, w->thread, w->runtime);
	for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
		json_uint(j, type_names[t], w->events[t]);
	json_uint(j, "ready", w->ready);
	json_uint(j, "stolen", w->stolen);
	json_uint(j, "reader_wait_ns", w->waited);
	json_uint(j, "flushes_missed", w->missed);
	json_uint(j, "lost", w->lost);
	json_obj_end(j);
}

static void json_spans(struct state *st, struct json *j)
{
	json_arr_begin(j, "lost_spans");
	for (size_t i = 0; i < st->spans.n; i++) {
		const struct span *s = array_at(&st->spans, i);

		json_obj_begin(j, NULL);
		json_who(j, s->tgid, s->worker, s->thread, s->runtime);
		json_int(j, "from_ns", rel_ns(st, s->from, s->mult));
		json_int(j, "to_ns", rel_ns(st, s->to, s->mult));
		json_uint(j, "records", s->records);
		json_uint(j, "logs", s->logs);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* The spans of this print, in text: the first 20. */
static void print_spans(struct state *st)
{
	if (!st->spans.n)
		return;
	printf("\nlost spans (ns since the first record):\n%7s %8s %14s %14s %9s %6s\n", "PID",
	       "WORKER", "FROM_NS", "TO_NS", "RECORDS", "LOGS");
	for (size_t i = 0; i < st->spans.n && i < 20; i++) {
		const struct span *s = array_at(&st->spans, i);
		char who[16];

		if (s->worker < 0)
			snprintf(who, sizeof(who), "t%u", s->thread);
		else
			snprintf(who, sizeof(who), "%d", s->worker);
		printf("%7u %8s %14lld %14lld %9llu %6llu\n", s->tgid, who,
		       rel_ns(st, s->from, s->mult), rel_ns(st, s->to, s->mult),
		       (unsigned long long)s->records, (unsigned long long)s->logs);
	}
	if (st->spans.n > 20)
		printf("... and %zu more\n", st->spans.n - 20);
}

static void print_text(struct state *st, __u64 flushes, __u64 bad, __u64 waiting, __u64 orphans)
{
	const char *unit = unit_header(st->env->unit);
	__u64 waits = 0, waited = 0;

	tool_print_time(st->env);
	printf("\n%7s %8s %9s %9s %10s %10s %9s %7s %7s %7s %7s %7s\n", "PID", "WORKER", "SPAWN",
	       "SCHEDULE", "POLL_START", "READY", "STEAL", "STOLEN", "PARK", "UNPARK", "MISSED",
	       "LOST");
	for (size_t i = 0; i < st->w.n; i++) {
		const struct wstate *w = wst(st, i);
		char who[16];

		/* A thread that is not a worker: t and its id. */
		if (w->worker < 0)
			snprintf(who, sizeof(who), "t%u", w->thread);
		else
			snprintf(who, sizeof(who), "%d", w->worker);
		printf("%7u %8s %9llu %9llu %10llu %10llu %9llu %7llu %7llu %7llu %7llu %7llu\n",
		       w->tgid, who, (unsigned long long)w->events[BLITZ_EVENT_SPAWN],
		       (unsigned long long)w->events[BLITZ_EVENT_SCHEDULE],
		       (unsigned long long)w->events[BLITZ_EVENT_POLL_START],
		       (unsigned long long)w->ready, (unsigned long long)w->events[BLITZ_EVENT_STEAL],
		       (unsigned long long)w->stolen, (unsigned long long)w->events[BLITZ_EVENT_PARK],
		       (unsigned long long)w->events[BLITZ_EVENT_UNPARK],
		       (unsigned long long)w->missed, (unsigned long long)w->lost);
	}
	if (st->poll.count) {
		printf("\npoll time:\n");
		print_log2_hist(st->poll.slots, MAX_SLOTS, unit);
	}
	if (st->sched.count) {
		printf("\nschedule latency (spawned or queued, to polled):\n");
		print_log2_hist(st->sched.slots, MAX_SLOTS, unit);
	}
	print_spans(st);
	for (size_t i = 0; i < st->w.n; i++) {
		waits += wst(st, i)->events[BLITZ_EVENT_READER_WAIT];
		waited += wst(st, i)->waited;
	}
	printf("\n%llu logs (%llu from rings, %llu flushes), %llu records lost in %zu spans, "
	       "%llu rings not read, %llu flushes unreadable; the workers waited for this tool "
	       "%llu times, %.3f ms in all; %llu polls without a logged queueing (queued before "
	       "the tool, or unlogged), %llu never polled (the process exited), %llu not paired "
	       "for a loss (untrusted), %llu waiting for their poll, %llu polls waiting for their "
	       "queueing\n",
	       (unsigned long long)st->logs, (unsigned long long)st->ring_logs,
	       (unsigned long long)flushes, (unsigned long long)st->lost, st->spans.n,
	       (unsigned long long)st->rings_missed, (unsigned long long)bad,
	       (unsigned long long)waits, waited / 1e6, (unsigned long long)st->unpaired_polls,
	       (unsigned long long)st->never_polled, (unsigned long long)st->untrusted,
	       (unsigned long long)waiting, (unsigned long long)orphans);
}

/* json_transport - how the logs came in and what of them was lost or unreadable. */
static void json_transport(struct json *j, const struct state *st, __u64 flushes, __u64 rb_lost,
			   __u64 bad)
{
	json_uint(j, "ring_logs", st->ring_logs);
	json_uint(j, "rings_missed", st->rings_missed);
	json_uint(j, "flushes", flushes);
	json_uint(j, "lost", st->lost);
	json_uint(j, "lost_ringbuf", rb_lost);
	json_uint(j, "bad", bad);
}

/* print_written - -w's print: what went into the file, what was lost. */
static void print_written(struct state *st, __u64 flushes, __u64 bad, __u64 rb_lost)
{
	struct tool_env *env = st->env;

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_obj_begin(&j, "written");
		json_str(&j, "file", write_path);
		json_uint(&j, "logs", st->out_logs);
		json_uint(&j, "records", st->out_records);
		json_obj_end(&j);
		json_transport(&j, st, flushes, rb_lost, bad);
		json_spans(st, &j);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_spans(st);
	printf("%llu logs (%llu from rings, %llu flushes), %llu records written to %s; "
	       "%llu records lost in %zu spans, %llu rings not read, %llu flushes unreadable\n",
	       (unsigned long long)st->out_logs, (unsigned long long)st->ring_logs,
	       (unsigned long long)flushes, (unsigned long long)st->out_records, write_path,
	       (unsigned long long)st->lost, st->spans.n, (unsigned long long)st->rings_missed,
	       (unsigned long long)bad);
	fflush(stdout);
}

static void print_json(struct state *st, __u64 flushes, __u64 bad, __u64 rb_lost, __u64 waiting,
		       __u64 orphans, bool last)
{
	struct tool_env *env = st->env;
	__u64 totals[BLITZ_EVENT_TYPES] = { 0 };
	struct json j;

	for (size_t i = 0; i < st->w.n; i++)
		for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
			totals[t] += wst(st, i)->events[t];
	tool_json_begin(&j, env, unit_name(env->unit));
	json_uint(&j, "logs", st->logs);
	json_transport(&j, st, flushes, rb_lost, bad);
	json_obj_begin(&j, "events");
	for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
		json_uint(&j, type_names[t], totals[t]);
	json_obj_end(&j);
	json_arr_begin(&j, "workers");
	for (size_t i = 0; i < st->w.n; i++)
		json_wstate(&j, wst(st, i));
	json_arr_end(&j);
	json_arr_begin(&j, "histograms");
	json_hist(&j, "poll time", -1, &st->poll, st->div);
	json_hist(&j, "schedule latency", -1, &st->sched, st->div);
	json_arr_end(&j);
	json_uint(&j, "unpaired", st->unpaired_polls);
	json_uint(&j, "unpaired_poll_ends", st->unpaired_polls_end);
	json_uint(&j, "stale_schedules", st->stale_schedules);
	json_uint(&j, "never_polled", st->never_polled);
	json_uint(&j, "untrusted", st->untrusted);
	json_uint(&j, "untrusted_polls", st->untrusted_polls);
	json_uint(&j, "waiting", waiting);
	json_uint(&j, "orphans", orphans);
	json_uint(&j, "late", st->late);
	json_spans(st, &j);
	if (with_records)
		records_out(st, &j, last);
	tool_json_end(&j);
}

/* print_reset - printed: the counts start again; the workers of ended processes go. */
static void print_reset(struct state *st)
{
	size_t kept = 0;

	for (size_t i = 0; i < st->w.n; i++) {
		struct wstate *w = wst(st, i);

		if (!w->g)
			continue;
		memset(w->events, 0, sizeof(w->events));
		w->ready = w->stolen = w->waited = w->missed = w->lost = 0;
		memmove(wst(st, kept++), w, sizeof(*w));
	}
	st->w.n = kept;
	memset(&st->poll, 0, sizeof(st->poll));
	memset(&st->sched, 0, sizeof(st->sched));
	st->unpaired_polls = st->unpaired_polls_end = st->stale_schedules = st->never_polled = 0;
	st->late = st->untrusted = st->untrusted_polls = st->lost = st->logs = st->ring_logs = 0;
	st->bad_records = st->rings_missed = 0;
	st->out_logs = st->out_records = 0;
	st->spans.n = 0;
}

void print(struct state *st, bool last)
{
	__u64 flushes = 0, bad = 0, waiting = 0, orphans = 0, rb_lost = 0;

	if (!st->offline) {
		rings_take(st);
		take_all(st);
		if (last) {
			/* What is half in is all there will be; so are the losses not yet told. */
			while (st->pend.n)
				pending_out(st, pend_at(st, 0), true);
			losses_drain(st, 0);
			for (size_t i = 0; i < st->rings.n; i++)
				if (ring_at(st, i)->map)
					ring_finish(st, ring_at(st, i));
		}
	}
	if (st->skel) {
		flushes = st->skel->bss->flushes - st->prev_flushes;
		bad = st->skel->bss->bad - st->prev_bad;
		rb_lost = st->skel->bss->lost - st->prev_lost;
		st->prev_flushes = st->skel->bss->flushes;
		st->prev_bad = st->skel->bss->bad;
		st->prev_lost = st->skel->bss->lost;
	}
	bad += st->bad_records;
	if (st->out) {
		if (last)
			trace_close(st);
		print_written(st, flushes, bad, rb_lost);
		print_reset(st);
		return;
	}
	settle(st);
	for (size_t i = 0; i < st->g.n; i++) {
		waiting += grp(st, i)->held.n - grp(st, i)->held.polls;
		orphans += grp(st, i)->held.polls;
	}
	if (st->env->json) {
		print_json(st, flushes, bad, rb_lost, waiting, orphans, last);
	} else {
		/* The records that settled since the last drain, then the counts. */
		if (with_records)
			records_out(st, NULL, last);
		print_text(st, flushes, bad, waiting, orphans);
		st->records_headed = false;
		fflush(stdout);
	}
	print_reset(st);
}
