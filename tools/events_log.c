// SPDX-License-Identifier: MIT
/*
 * tools/events_log.c - one whole log, whatever brought it (a ring, the
 * ring buffer's chunks, a trace file, a dump): consume_log() keeps its
 * loss as a span, then writes it raw (-w: trace_put) or analyses it.  The
 * analysis finds its writer (struct wstate: process, runtime, worker,
 * and the thread for worker -1) and runtime (struct group), and takes its
 * records in the log's order: counted, each poll's start pushed on the
 * writer's stack of open polls and paired with the end of its task, each
 * queueing and poll's start handed to the (task, seq) pairing
 * (events_pair.c).  A loss drops the writer's open polls (untrusted), so
 * that a later end of their task is not taken for theirs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <linux/types.h>
#include "array.h"
#include "hist_output.h"
#include "tool_args.h"
#include "events.h"
#include "events_log.h"
#include "events_opts.h"
#include "events_pair.h"
#include "events_state.h"
#include "events_trace.h"

/* ---- Writers and runtimes ---- */

static struct group *group_get(struct state *st, __u32 tgid, __u64 runtime, __u32 workers)
{
	struct group *g;

	for (size_t i = 0; i < st->g.n; i++)
		if (grp(st, i)->tgid == tgid && grp(st, i)->runtime == runtime)
			return grp(st, i);
	g = calloc(1, sizeof(*g));
	if (!g)
		tool_die(st->env, "out of memory");
	*(struct group **)push(st, &st->g) = g;
	g->tgid = tgid;
	g->runtime = runtime;
	g->workers = workers;
	return g;
}

static struct wstate *wstate_get(struct state *st, const struct blitz_event_log_head *h)
{
	struct wstate *w;

	for (size_t i = 0; i < st->w.n; i++) {
		w = wst(st, i);
		if (w->tgid != h->pid || w->worker != h->worker || w->runtime != h->runtime ||
		    (h->worker < 0 && w->thread != h->thread))
			continue;
		if (!w->g)	/* its process ended and was settled: a new one with its pid */
			w->g = group_get(st, h->pid, h->runtime, h->workers);
		return w;
	}
	w = push(st, &st->w);
	w->tgid = h->pid;
	w->worker = h->worker;
	w->thread = h->thread;
	w->runtime = h->runtime;
	w->g = group_get(st, h->pid, h->runtime, h->workers);
	return w;
}

/* ---- Losses ---- */

/*
 * span_add - @records records, or @logs whole logs (their records
 * unknown), of @h's writer lost between the ticks @from and @to.
 */
static void span_add(struct state *st, const struct blitz_event_log_head *h, __u64 from, __u64 to,
		     __u64 records, __u64 logs)
{
	struct span *s = push(st, &st->spans);

	if (from > to) {
		__u64 t = from;

		from = to;
		to = t;
	}
	*s = (struct span){ .tgid = h->pid, .thread = h->thread, .worker = h->worker,
			    .runtime = h->runtime, .mult = h->ticks_mult, .from = from, .to = to,
			    .records = records, .logs = logs };
	st->lost += records;
}

/*
 * loss_mark - @w lost records between the ticks @from and @to: the polls
 * it has open are dropped (untrusted: their end may be lost, and a later
 * end of their task would be another poll's), and its runtime's leftovers
 * in that span are not counted as unpaired (group_final).
 */
static void loss_mark(struct state *st, struct wstate *w, __u64 from, __u64 to)
{
	struct group *g = w->g;

	if (from > to) {
		__u64 t = from;

		from = to;
		to = t;
	}
	st->untrusted += w->depth;
	w->depth = 0;
	w->lossy = true;
	if (!g->lossy || from < g->loss_from)
		g->loss_from = from;
	if (!g->lossy || to > g->loss_to)
		g->loss_to = to;
	g->lossy = true;
}

/* ---- One log's records ---- */

static void poll_open(struct wstate *w, const struct blitz_event *e)
{
	if (w->depth < POLL_DEPTH) {
		w->open_task[w->depth] = e->task;
		w->open_ticks[w->depth] = e->ticks;
	}
	w->depth++;
}

/*
 * poll_end - @e ends the innermost open poll of its task on @w: its time.
 * An end with no open poll of its task (the window began inside the
 * poll, or its start was lost) is unpaired (untrusted after a loss), and
 * so are polls left open inside it.
 */
static void poll_end(struct state *st, struct wstate *w, const struct blitz_event *e, __u64 mult)
{
	__u32 d = w->depth;
	__u64 *count = w->lossy ? &st->untrusted : &st->unpaired_polls_end;

	while (d > 0 && (d > POLL_DEPTH || w->open_task[d - 1] != e->task))
		d--;
	if (d == 0) {
		(*count)++;
		return;
	}
	*count += w->depth - d;
	w->depth = d - 1;
	if (e->ticks >= w->open_ticks[d - 1]) {
		__u64 ns = to_ns(e->ticks - w->open_ticks[d - 1], mult);

		hist_record(&st->poll, ns / st->div, ns);
	}
}

/* take - one record of @w's log, in the log's order. */
static void take(struct state *st, struct wstate *w, const struct blitz_event *e, __u64 mult)
{
	if (e->type == 0 || e->type >= BLITZ_EVENT_TYPES) {
		st->bad_records++;
		return;
	}
	w->events[e->type]++;
	switch (e->type) {
	case BLITZ_EVENT_POLL_START:
		poll_open(w, e);
		pair_mark(st, w->g, e->task, e->seq, e->ticks, true);
		break;
	case BLITZ_EVENT_SPAWN:
	case BLITZ_EVENT_SCHEDULE:
		pair_mark(st, w->g, e->task, e->seq, e->ticks, false);
		break;
	case BLITZ_EVENT_POLL_END:
		poll_end(st, w, e, mult);
		w->ready += e->code != 0;
		break;
	case BLITZ_EVENT_STEAL:
		w->stolen += e->arg;
		break;
	case BLITZ_EVENT_READER_WAIT:
		w->waited += e->arg;
		break;
	}
	if (with_records) {
		struct full *f = push(st, &st->fulls);

		*f = (struct full){ .ev = *e, .mult = mult, .tgid = w->tgid, .worker = w->worker,
				    .thread = w->thread };
	}
}

/*
 * log_take - the analysis of one log (or a piece of one: the BPF side's
 * chunks with a loss between them repeat its seq): a gap in the writer's
 * seq is a span of whole logs lost, the head's loss comes before the
 * records, and the flush's tick settles the writer's records up to it.
 */
static void log_take(struct state *st, const struct blitz_event_log_head *h,
		     const struct blitz_event *rec, __u32 n)
{
	struct wstate *w = wstate_get(st, h);
	__u64 prev = w->last ? w->last : w->flushed;

	w->g->mult = h->ticks_mult;
	if (h->seq != w->seq) {
		/* A new window restarts seq at 1. */
		if (w->seq && h->seq > w->seq + 1) {
			__u64 gap = h->seq - w->seq - 1, to = n ? rec[0].ticks : h->flushed;

			w->missed += gap;
			span_add(st, h, prev, to ? to : prev, 0, gap);
			loss_mark(st, w, prev, to ? to : prev);
		}
		w->seq = h->seq;
	}
	if (h->lost) {
		w->lost += h->lost;
		loss_mark(st, w, h->lost_from, h->lost_to);
	}
	for (__u32 i = 0; i < n; i++)
		take(st, w, &rec[i], h->ticks_mult);
	if (n)
		w->last = rec[n - 1].ticks;
	if (h->flushed)
		w->flushed = h->flushed;
}

/*
 * consume_log - a whole log from either transport (or from a file): its
 * loss into the spans, then into the trace file (-w) or analysed.  A log
 * this tool made to tell a loss no log told (no record in it) goes the
 * same way, but is not counted among the logs taken (st->logs).
 * Returns whether it was taken (-p keeps one process's).
 */
bool consume_log(struct state *st, const struct blitz_event_log_head *h,
			const struct blitz_event *rec, __u32 n)
{
	if (st->leaving || (st->env->pid && h->pid != (__u32)st->env->pid))
		return false;
	if (!st->have_origin && n) {
		st->origin = rec[0].ticks;
		st->have_origin = true;
	}
	if (h->lost)
		span_add(st, h, h->lost_from, h->lost_to, h->lost, 0);
	if (st->out)
		trace_put(st, h, rec, n);
	else
		log_take(st, h, rec, n);
	return true;
}
