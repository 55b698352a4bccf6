// SPDX-License-Identifier: MIT
/*
 * blitz-events - every scheduling event of blitz workers, from the
 * runtime's event log (event_flush: one probe hit per flush of up to 512
 * records, where a per-event probe traps at each event): the events per
 * worker, poll time (each poll's start and end, paired in the worker's
 * log) and schedule latency (a task's spawn or schedule paired with its next poll,
 * on whichever worker), and with -r the records themselves in time order.
 *
 * Pairing a schedule with its poll needs both workers' records, which
 * arrive flush by flush, out of time order: they are held (32 bytes per
 * queueing and poll) until every worker of the runtime has flushed past
 * them (each flush carries its tick: a worker's later records are stamped
 * after it, and an idle worker flushes at each park, every park timeout),
 * then paired; a process that has exited has nothing more to flush.
 *
 * A thread that is not a worker (the program's own, a blocking-pool
 * thread, a joiner running queued tasks) has a log too, flushed when it
 * waits or exits, not at a pace the tool can count on: its records join
 * the merge while they are ahead of the settled tick, and one that comes
 * behind it is paired at once, with the earliest poll of its task's
 * address stamped after it that found no queueing (held as an orphan
 * until its queueing comes, or counted unpaired when the process exits).
 */
#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "bpf_setup.h"
#include "hist_output.h"
#include "json_writer.h"
#include "print_loop.h"
#include "tool_args.h"
#include "usdt_target.h"
#include "events.h"
#include "events.skel.h"

static bool with_records;

static const struct tool_flag flags[] = {
	{ "records", 'r', "Every record too, in time order: a line per event (text) or a "
	  "\"records\" array (-j)", &with_records },
	{ 0 },
};

static const struct tool_def def = {
	.name = "events",
	.summary = "Record every scheduling event of blitz workers through the runtime's event "
		   "log (a probe hit per 512 events): events per worker, poll time and schedule "
		   "latency paired from the records.",
	.examples =
		"    blitz-events                # at Ctrl-C: events per worker, two histograms\n"
		"    blitz-events -u 1           # in microseconds, every second\n"
		"    blitz-events -r > ev.txt    # and every event, in time order\n"
		"    blitz-events -j -r > ev.json\n",
	.opts = TOOL_OPT_UNITS,
	.unit = UNIT_NS,
	.flags = flags,
};

static const char *const type_names[BLITZ_EVENT_TYPES] = {
	[BLITZ_EVENT_SPAWN] = "spawn", [BLITZ_EVENT_SCHEDULE] = "schedule",
	[BLITZ_EVENT_POLL_START] = "poll_start",
	[BLITZ_EVENT_POLL_END] = "poll_end", [BLITZ_EVENT_STEAL] = "steal",
	[BLITZ_EVENT_PARK] = "park", [BLITZ_EVENT_UNPARK] = "unpark",
};

/*
 * The queueings not yet polled, by task: open addressing, linear probing
 * (key 0: empty; a task's address is never 0), at most half full.
 */
struct queued {
	__u64 *task, *ticks;
	size_t cap, n;
};

/* A poll that found no queueing, in its task's list (next: an index + 1; 0 ends it). */
struct orphan {
	__u64 ticks;
	__u32 next;
};

/*
 * One runtime of one process: its workers' count (from the log's
 * header), the clock factor of its process, its queueings waiting
 * for their polls, and the polls that found no queueing: per task, a
 * list of them (a task's address is reused as fast as tasks end, so one
 * thread's late spawns may find several polls of that address waiting),
 * in a table of the same kind as q whose `ticks` holds the list's head.
 */
struct group {
	__u32 tgid;
	__u32 workers;
	__u64 runtime;
	__u64 mult;
	struct queued q;
	struct queued orphans;		/* task -> the head of its list in opool */
	struct array opool;		/* struct orphan */
	__u32 ofree;			/* the first free orphan (index + 1) */
	size_t norphans;
	bool gone;			/* the process has exited: all it logged is here */
	__u64 upto;			/* the tick before which all its records are here (settled) */
};

/* Nested polls followed per worker (deeper: their time is not taken). */
#define POLL_DEPTH	64

/* One worker (or thread that is not a worker: worker -1) of one runtime of one process. */
struct wstate {
	__u32 tgid;
	__s32 worker;
	__u32 thread;			/* the writer's thread id (tells apart the logs of worker -1) */
	__u64 runtime;
	struct group *g;
	__u64 seq;			/* the last flush seen */
	__u64 flushed;			/* its tick: later records of this worker come after it */
	__u64 events[BLITZ_EVENT_TYPES];	/* this print */
	__u64 ready, stolen;		/* this print: polls that completed, tasks stolen */
	__u64 missed;			/* this print: flushes not seen (a gap in seq) */
	/*
	 * The polls started and not ended, innermost last: a join on a
	 * worker polls other tasks inside its own poll (a start, then the
	 * nested polls' starts and ends, then its end).
	 */
	__u32 depth;
	__u64 open_task[POLL_DEPTH], open_ticks[POLL_DEPTH];
	/* Its queueings and poll starts not yet settled, in its (time) order from head. */
	struct array marks;		/* struct mark */
	size_t head;
};

/* A spawn, a schedule or a poll's start, held for pairing. */
struct mark {
	__u64 ticks, task;
	__u32 poll;			/* 1: a poll's start, 0: a queueing */
};

/* A record with where it came from, for -r. */
struct full {
	struct blitz_event ev;
	__u64 mult;
	__u32 tgid, thread;
	__s32 worker;
};

struct state {
	struct tool_env *env;
	struct events_bpf *skel;
	struct ring_buffer *rb;
	struct array w;			/* struct wstate */
	struct array g;			/* struct group * */
	struct array fulls;		/* struct full (-r) */
	struct hist poll, sched;	/* this print, in the unit */
	/* This print: polls with no logged queueing, starts without an end, queueings of a
	   task dropped unpolled, queueings still waiting for their poll at the process's exit. */
	__u64 unpaired_polls, unpaired_polls_end, stale_schedules, never_polled;
	__u64 late;			/* this print: marks of a thread's log paired behind the merge */
	__u64 prev_flushes, prev_lost, prev_bad;
	double last_pair;		/* CLOCK_MONOTONIC s of the last pairing */
	__u64 origin;			/* -r: ticks of the first record printed */
	bool have_origin;
	bool records_headed;		/* -r, text: the column header is above the last lines */
};

static void *push(struct state *st, struct array *a)
{
	void *e = array_push(a);

	if (!e)
		tool_die(st->env, "out of memory holding %zu records", a->n);
	return e;
}

static struct wstate *wst(const struct state *st, size_t i)
{
	return array_at(&st->w, i);
}

static struct group *grp(const struct state *st, size_t i)
{
	return *(struct group **)array_at(&st->g, i);
}

static __u64 to_ns(__u64 ticks, __u64 mult)
{
	return (__u64)(((unsigned __int128)ticks * mult) >> 32);
}

static struct group *group_get(struct state *st, __u32 tgid, __u64 runtime, __u32 workers)
{
	struct group *g;

	for (size_t i = 0; i < st->g.n; i++)
		if (grp(st, i)->tgid == tgid && grp(st, i)->runtime == runtime)
			return grp(st, i);
	g = calloc(1, sizeof(*g));
	if (!g)
		tool_die(st->env, "out of memory");
	g->opool = ARRAY_OF(struct orphan);
	*(struct group **)push(st, &st->g) = g;
	g->tgid = tgid;
	g->runtime = runtime;
	g->workers = workers;
	return g;
}

static struct wstate *wstate_get(struct state *st, const struct events_chunk *c)
{
	__u32 tgid = c->tgid;
	__s32 worker = c->head.worker;
	__u32 thread = c->head.thread;
	__u64 runtime = c->head.runtime;
	struct wstate *w;

	for (size_t i = 0; i < st->w.n; i++) {
		w = wst(st, i);
		if (w->tgid != tgid || w->worker != worker || w->runtime != runtime ||
		    (worker < 0 && w->thread != thread))
			continue;
		if (!w->g)	/* its process ended and was settled: a new one with its pid */
			w->g = group_get(st, tgid, runtime, c->head.workers);
		return w;
	}
	w = push(st, &st->w);
	w->tgid = tgid;
	w->worker = worker;
	w->thread = thread;
	w->runtime = runtime;
	w->g = group_get(st, tgid, runtime, c->head.workers);
	w->marks = ARRAY_OF(struct mark);
	return w;
}

/*
 * poll_end - @e ends the innermost open poll of @w: its time.  An end
 * with no open poll of its task (the window began inside the poll) is
 * unpaired, and so are polls left open inside it.
 */
static void poll_end(struct state *st, struct wstate *w, const struct blitz_event *e, __u64 mult,
		     __u64 div)
{
	__u32 d = w->depth;

	while (d > 0 && (d > POLL_DEPTH || w->open_task[d - 1] != e->task))
		d--;
	if (d == 0) {
		st->unpaired_polls_end++;
		return;
	}
	st->unpaired_polls_end += w->depth - d;
	w->depth = d - 1;
	if (e->ticks >= w->open_ticks[d - 1]) {
		__u64 ns = to_ns(e->ticks - w->open_ticks[d - 1], mult);

		hist_record(&st->poll, ns / div, ns);
	}
}

static void settle(struct state *st, struct group *g, const struct mark *m, __u64 div);

/*
 * hold - a queueing or a poll's start, for pairing: held in @w's order
 * for the merge, or, from a thread's log and behind the settled tick
 * (the merge has passed it), paired at once.
 */
static void hold(struct state *st, struct wstate *w, const struct mark *m, __u64 div)
{
	if (w->worker < 0 && m->ticks < w->g->upto) {
		st->late++;
		settle(st, w->g, m, div);
	} else
		*(struct mark *)push(st, &w->marks) = *m;
}

/* take - one record of @w's log, in the log's order. */
static void take(struct state *st, struct wstate *w, const struct blitz_event *e, __u64 mult)
{
	__u64 div = unit_div(st->env->unit);

	if (e->type == 0 || e->type >= BLITZ_EVENT_TYPES)
		return;
	w->events[e->type]++;
	switch (e->type) {
	case BLITZ_EVENT_POLL_START:
		if (w->depth < POLL_DEPTH) {
			w->open_task[w->depth] = e->task;
			w->open_ticks[w->depth] = e->ticks;
		}
		w->depth++;
		__attribute__((fallthrough));	/* held for its schedule */
	case BLITZ_EVENT_SPAWN:
	case BLITZ_EVENT_SCHEDULE:
		hold(st, w, &(struct mark){ .ticks = e->ticks, .task = e->task,
					    .poll = e->type == BLITZ_EVENT_POLL_START }, div);
		break;
	case BLITZ_EVENT_POLL_END:
		poll_end(st, w, e, mult, div);
		w->ready += e->arg != 0;
		break;
	case BLITZ_EVENT_STEAL:
		w->stolen += e->arg;
		break;
	}
	if (with_records) {
		struct full *f = push(st, &st->fulls);

		*f = (struct full){ .ev = *e, .mult = mult, .tgid = w->tgid, .worker = w->worker,
				    .thread = w->thread };
	}
}

static int on_chunk(void *ctx, void *data, size_t size)
{
	struct state *st = ctx;
	const struct events_chunk *c = data;
	struct wstate *w;

	if (size < sizeof(*c))
		return 0;
	w = wstate_get(st, c);
	w->g->mult = c->head.ticks_mult;
	if (c->first == 0) {
		/* A new window restarts seq at 1. */
		if (c->head.seq > w->seq + 1 && w->seq)
			w->missed += c->head.seq - w->seq - 1;
		w->seq = c->head.seq;
	}
	for (__u32 i = 0; i < c->count && i < EVENTS_CHUNK; i++)
		take(st, w, &c->rec[i], c->head.ticks_mult);
	/* Settled up to the flush only once all its chunks are here. */
	if (c->last)
		w->flushed = c->head.flushed;
	return tool_sample_taken();
}

/* The most chunks the ring holds: a take of as many empties it (tool_ring_take). */
#define RING_CHUNKS	(EVENTS_RINGBUF_BYTES / sizeof(struct events_chunk))

/* take_all - the chunks the ring holds, Ctrl-C or not (before pairing as final, a print). */
static void take_all(struct state *st)
{
	tool_ring_take(st->rb, 0, RING_CHUNKS, true);
}

static size_t slot_of(const struct queued *q, __u64 task)
{
	return (size_t)((task * 0x9e3779b97f4a7c15ull) >> 32) & (q->cap - 1);
}

/* queued_find - the slot of @task in @q, or of the empty slot where it would go. */
static size_t queued_find(const struct queued *q, __u64 task)
{
	size_t i = slot_of(q, task);

	while (q->task[i] && q->task[i] != task)
		i = (i + 1) & (q->cap - 1);
	return i;
}

static void queued_grow(struct state *st, struct queued *q)
{
	struct queued n = { .cap = q->cap ? q->cap * 2 : 1024 };

	n.task = calloc(n.cap, sizeof(*n.task));
	n.ticks = calloc(n.cap, sizeof(*n.ticks));
	if (!n.task || !n.ticks)
		tool_die(st->env, "out of memory holding %zu queued tasks", q->n);
	for (size_t i = 0; i < q->cap; i++) {
		if (q->task[i]) {
			size_t k = queued_find(&n, q->task[i]);

			n.task[k] = q->task[i];
			n.ticks[k] = q->ticks[i];
			n.n++;
		}
	}
	free(q->task);
	free(q->ticks);
	*q = n;
}

/* queued_remove - empty slot @i, moving back the entries its probe runs through. */
static void queued_remove(struct queued *q, size_t i)
{
	size_t j = i;

	q->task[i] = 0;
	q->n--;
	for (;;) {
		size_t home;

		j = (j + 1) & (q->cap - 1);
		if (!q->task[j])
			return;
		home = slot_of(q, q->task[j]);
		/* Moved back unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		q->task[i] = q->task[j];
		q->ticks[i] = q->ticks[j];
		q->task[j] = 0;
		i = j;
	}
}

static void queued_free(struct queued *q)
{
	free(q->task);
	free(q->ticks);
	memset(q, 0, sizeof(*q));
}

/* queued_slot - the slot of @task in @q, grown for one more; empty if it is not there. */
static size_t queued_slot(struct state *st, struct queued *q, __u64 task)
{
	if (2 * (q->n + 1) > q->cap)
		queued_grow(st, q);
	return queued_find(q, task);
}

/* queued_put - @task at @ticks into @q; true if it replaced an entry of that task. */
static bool queued_put(struct state *st, struct queued *q, __u64 task, __u64 ticks)
{
	size_t i = queued_slot(st, q, task);
	bool had = q->task[i] != 0;

	q->n += !had;
	q->task[i] = task;
	q->ticks[i] = ticks;
	return had;
}

static void sched_record(struct state *st, const struct group *g, __u64 from, __u64 to, __u64 div)
{
	__u64 ns = to_ns(to - from, g->mult);

	hist_record(&st->sched, ns / div, ns);
}

static struct orphan *orphan_at(struct group *g, __u32 ref)
{
	return array_at(&g->opool, ref - 1);
}

/* orphan_add - a poll of @task at @ticks found no queueing: at the end of its task's list. */
static void orphan_add(struct state *st, struct group *g, __u64 task, __u64 ticks)
{
	__u32 ref = g->ofree;
	size_t i;

	if (ref) {
		g->ofree = orphan_at(g, ref)->next;
	} else {
		push(st, &g->opool);
		ref = (__u32)g->opool.n;
	}
	*orphan_at(g, ref) = (struct orphan){ .ticks = ticks };
	g->norphans++;
	i = queued_slot(st, &g->orphans, task);
	if (!g->orphans.task[i]) {	/* the list's head */
		g->orphans.task[i] = task;
		g->orphans.ticks[i] = ref;
		g->orphans.n++;
		return;
	}
	for (__u32 r = (__u32)g->orphans.ticks[i];; r = orphan_at(g, r)->next) {
		if (!orphan_at(g, r)->next) {
			orphan_at(g, r)->next = ref;
			return;
		}
	}
}

/*
 * orphan_take - the earliest poll of @task waiting as an orphan that is
 * stamped at or after @ticks (its queueing's): out of the list, its tick
 * in *@poll.  False if there is none (earlier ones stay: their own
 * queueings may still come, from another thread's log).
 */
static bool orphan_take(struct group *g, __u64 task, __u64 ticks, __u64 *poll)
{
	__u32 best = 0, best_prev = 0, prev = 0;
	size_t i;

	if (!g->norphans)
		return false;
	i = queued_find(&g->orphans, task);
	if (!g->orphans.task[i])
		return false;
	for (__u32 r = (__u32)g->orphans.ticks[i]; r; prev = r, r = orphan_at(g, r)->next) {
		__u64 t = orphan_at(g, r)->ticks;

		if (t >= ticks && (!best || t < orphan_at(g, best)->ticks)) {
			best = r;
			best_prev = prev;
		}
	}
	if (!best)
		return false;
	*poll = orphan_at(g, best)->ticks;
	if (best_prev)
		orphan_at(g, best_prev)->next = orphan_at(g, best)->next;
	else if (orphan_at(g, best)->next)
		g->orphans.ticks[i] = orphan_at(g, best)->next;
	else
		queued_remove(&g->orphans, i);
	orphan_at(g, best)->next = g->ofree;
	g->ofree = best;
	g->norphans--;
	return true;
}

/* orphans_free - every orphan of @g is dropped (counted by the caller). */
static void orphans_free(struct group *g)
{
	queued_free(&g->orphans);
	array_free(&g->opool);
	g->ofree = 0;
	g->norphans = 0;
}

/* group_free - @g and what it still holds (counted by the caller). */
static void group_free(struct group *g)
{
	queued_free(&g->q);
	orphans_free(g);
	free(g);
}

/*
 * settle - one mark of @g, in time order but for a thread's late ones
 * (hold): a queueing takes the earliest orphan poll of its task stamped
 * after it (the poll came first: the queueing's thread flushed late),
 * else waits for its task's poll (a queueing already waiting was for a
 * task dropped unpolled: stale); a poll takes its task's waiting
 * queueing (schedule latency), or waits as an orphan for one from a
 * thread's log that has not come yet (queued before the tool attached,
 * or stamped just after the poll, if none ever does: counted unpaired
 * when the process exits).
 */
static void settle(struct state *st, struct group *g, const struct mark *m, __u64 div)
{
	size_t i;
	__u64 poll;

	if (!m->poll) {
		if (orphan_take(g, m->task, m->ticks, &poll)) {
			sched_record(st, g, m->ticks, poll, div);
			return;
		}
		st->stale_schedules += queued_put(st, &g->q, m->task, m->ticks);
		return;
	}
	i = g->q.cap ? queued_find(&g->q, m->task) : 0;
	if (g->q.cap && g->q.task[i]) {
		if (m->ticks >= g->q.ticks[i])
			sched_record(st, g, g->q.ticks[i], m->ticks, div);
		else
			st->unpaired_polls++;	/* stamped the other way round (docs/probes.md) */
		queued_remove(&g->q, i);
		return;
	}
	orphan_add(st, g, m->task, m->ticks);
}

/*
 * settled - the tick before which all of @g's records are here: the
 * oldest of its workers' last flushes (a worker's later records are
 * stamped after its flush), once every worker has flushed; everything if
 * the process has exited (pair() took its last flushes first); 0
 * (nothing) before every worker flushed.
 */
static __u64 settled(const struct state *st, struct group *g)
{
	__u64 low = ~0ull;
	__u32 seen = 0;

	if (g->gone)
		return ~0ull;
	for (size_t i = 0; i < st->w.n; i++) {
		if (wst(st, i)->g != g || wst(st, i)->worker < 0)
			continue;	/* a thread's log: not at a pace to wait for (hold) */
		seen++;
		if (wst(st, i)->flushed < low)
			low = wst(st, i)->flushed;
	}
	return seen >= g->workers ? low : 0;
}

/*
 * pair_group - @g's marks up to the settled tick, in time order: each
 * log's are in order already, so a merge of its logs (a few, with
 * something held) gives the runtime's order without a sort, and each
 * task's queueing is paired with its next poll as they come.  What is
 * not settled waits for the next pairing; once the process has exited,
 * the queueings still waiting will never be polled.
 */
static void pair_group(struct state *st, struct group *g)
{
	__u64 div = unit_div(st->env->unit), upto = settled(st, g);
	struct wstate **ws;
	size_t k = 0;

	g->upto = upto;
	if (!upto)
		return;
	ws = malloc(st->w.n * sizeof(*ws));
	if (!ws)
		tool_die(st->env, "out of memory");
	for (size_t i = 0; i < st->w.n; i++)
		if (wst(st, i)->g == g && wst(st, i)->head < wst(st, i)->marks.n)
			ws[k++] = wst(st, i);
	for (;;) {
		struct wstate *min = NULL;
		const struct mark *mm = NULL;

		for (size_t i = 0; i < k; i++) {
			const struct mark *m;

			if (ws[i]->head == ws[i]->marks.n)
				continue;
			m = array_at(&ws[i]->marks, ws[i]->head);
			/* At the same tick a queueing goes before a poll. */
			if (m->ticks < upto && (!mm || m->ticks < mm->ticks ||
						(m->ticks == mm->ticks && mm->poll && !m->poll))) {
				min = ws[i];
				mm = m;
			}
		}
		if (!min)
			break;
		settle(st, g, mm, div);
		min->head++;
	}
	for (size_t i = 0; i < k; i++) {	/* what is settled goes */
		struct array *a = &ws[i]->marks;

		memmove(a->p, array_at(a, ws[i]->head), (a->n - ws[i]->head) * a->size);
		a->n -= ws[i]->head;
		ws[i]->head = 0;
	}
	free(ws);
	if (g->gone) {
		st->never_polled += g->q.n;	/* the process exited: no poll will come */
		queued_free(&g->q);
		st->unpaired_polls += g->norphans;	/* nor a queueing */
		orphans_free(g);
	}
}

/*
 * pair - settle every runtime's pairs; drop the runtimes of exited
 * processes.  A process found gone flushed its last records before it
 * exited: they are taken from the ring buffer before its pairs are
 * settled as final.
 */
static void pair(struct state *st)
{
	size_t kept = 0;
	bool newly_gone = false;

	for (size_t i = 0; i < st->g.n; i++) {
		struct group *g = grp(st, i);

		if (!g->gone && kill((pid_t)g->tgid, 0) && errno == ESRCH)
			g->gone = newly_gone = true;
	}
	if (newly_gone)
		take_all(st);

	for (size_t i = 0; i < st->g.n; i++) {
		struct group *g = grp(st, i);

		pair_group(st, g);
		if (g->gone) {
			/* Its workers' states stay (the counts) until printed, without the group. */
			for (size_t k = 0; k < st->w.n; k++)
				if (wst(st, k)->g == g)
					wst(st, k)->g = NULL;
			group_free(g);
			continue;
		}
		*(struct group **)array_at(&st->g, kept++) = g;
	}
	st->g.n = kept;
}

static void records_out(struct state *st, struct json *j, bool last);

/* Wait up to @timeout_ms for records, take them, pair what has settled. */
static int drain(void *ctx, int timeout_ms)
{
	struct state *st = ctx;

	double now;

	/* Ctrl-C ends either take: the print that follows takes the rest. */
	tool_ring_take(st->rb, timeout_ms, RING_CHUNKS, false);
	/* The BPF side wakes us only when a quarter of the ring waits: take what is there. */
	tool_ring_take(st->rb, 0, RING_CHUNKS, false);
	/* Pairing merges what waits: ten times a second at most. */
	now = now_mono();
	if (now - st->last_pair >= 0.1) {
		pair(st);
		st->last_pair = now;
		/* -r, text: the records stream out as they settle, not held to the print. */
		if (with_records && !st->env->json) {
			records_out(st, NULL, false);
			fflush(stdout);
		}
	}
	return 0;
}

static int full_cmp(const void *a, const void *b)
{
	const struct full *x = a, *y = b;

	if (x->ev.ticks != y->ev.ticks)
		return x->ev.ticks < y->ev.ticks ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->worker - y->worker;
}

/*
 * records_out - -r: the records held, in time order (the TSC is one clock
 * for every process), as ns since the first record printed: in text at
 * every pairing and each print, with -j in each print's object.  Before
 * the last print, only those every traced runtime has settled: a later
 * one may still bring an earlier record (and a thread's log, flushed when
 * its thread waits, may still: such records come in a later batch).
 */
static void records_out(struct state *st, struct json *j, bool last)
{
	struct full *f = st->fulls.p;
	__u64 upto = ~0ull;
	size_t n = 0, kept = 0;

	for (size_t i = 0; i < st->g.n && !last; i++)
		if (!grp(st, i)->gone && grp(st, i)->upto < upto)
			upto = grp(st, i)->upto;
	qsort(f, st->fulls.n, sizeof(*f), full_cmp);
	while (n < st->fulls.n && f[n].ev.ticks < upto)
		n++;
	if (n && !st->have_origin) {
		st->origin = f[0].ev.ticks;
		st->have_origin = true;
	}
	if (j) {
		json_arr_begin(j, "records");
	} else if (n && !st->records_headed) {
		printf("\n%12s %7s %6s %7s %-10s %18s %12s %5s\n", "NS", "PID", "WORKER", "TID",
		       "EVENT", "TASK", "ARG", "PEER");
		st->records_headed = true;
	}
	for (size_t i = 0; i < n; i++) {
		/* Signed: a record may precede the origin, held back by an earlier print. */
		long long ns = f[i].ev.ticks >= st->origin ? (long long)to_ns(f[i].ev.ticks - st->origin, f[i].mult)
							    : -(long long)to_ns(st->origin - f[i].ev.ticks, f[i].mult);

		if (j) {
			/* [ns, pid, worker, event, task, arg, peer, tid] */
			json_arr_begin(j, NULL);
			json_int(j, NULL, ns);
			json_uint(j, NULL, f[i].tgid);
			json_int(j, NULL, f[i].worker);
			json_str(j, NULL, type_names[f[i].ev.type]);
			json_uint(j, NULL, f[i].ev.task);
			json_uint(j, NULL, f[i].ev.arg);
			json_int(j, NULL, f[i].ev.peer);
			json_uint(j, NULL, f[i].thread);
			json_arr_end(j);
		} else {
			printf("%12lld %7u %6d %7u %-10s %#18llx %12llu %5d\n", ns,
			       f[i].tgid, f[i].worker, f[i].thread, type_names[f[i].ev.type],
			       (unsigned long long)f[i].ev.task, (unsigned long long)f[i].ev.arg,
			       f[i].ev.peer);
		}
	}
	if (j)
		json_arr_end(j);
	for (size_t i = n; i < st->fulls.n; i++)
		f[kept++] = f[i];
	st->fulls.n = kept;
}

static void json_wstate(struct json *j, const struct wstate *w)
{
	json_obj_begin(j, NULL);
	json_uint(j, "pid", w->tgid);
	json_int(j, "worker", w->worker);
	if (w->worker < 0)
		json_uint(j, "thread", w->thread);
	json_uint(j, "runtime", w->runtime);
	for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
		json_uint(j, type_names[t], w->events[t]);
	json_uint(j, "ready", w->ready);
	json_uint(j, "stolen", w->stolen);
	json_uint(j, "flushes_missed", w->missed);
	json_obj_end(j);
}

static void print_text(struct state *st, __u64 flushes, __u64 lost, __u64 bad, __u64 waiting,
		       __u64 orphans)
{
	const char *unit = unit_header(st->env->unit);

	tool_print_time(st->env);
	printf("\n%7s %8s %9s %9s %10s %10s %9s %7s %7s %7s %7s\n", "PID", "WORKER", "SPAWN", "SCHEDULE",
	       "POLL_START", "READY", "STEAL", "STOLEN", "PARK", "UNPARK", "MISSED");
	for (size_t i = 0; i < st->w.n; i++) {
		const struct wstate *w = wst(st, i);
		char who[16];

		/* A thread that is not a worker: t and its id. */
		if (w->worker < 0)
			snprintf(who, sizeof(who), "t%u", w->thread);
		else
			snprintf(who, sizeof(who), "%d", w->worker);
		printf("%7u %8s %9llu %9llu %10llu %10llu %9llu %7llu %7llu %7llu %7llu\n", w->tgid,
		       who, (unsigned long long)w->events[BLITZ_EVENT_SPAWN],
		       (unsigned long long)w->events[BLITZ_EVENT_SCHEDULE],
		       (unsigned long long)w->events[BLITZ_EVENT_POLL_START],
		       (unsigned long long)w->ready, (unsigned long long)w->events[BLITZ_EVENT_STEAL],
		       (unsigned long long)w->stolen, (unsigned long long)w->events[BLITZ_EVENT_PARK],
		       (unsigned long long)w->events[BLITZ_EVENT_UNPARK],
		       (unsigned long long)w->missed);
	}
	if (st->poll.count) {
		printf("\npoll time:\n");
		print_log2_hist(st->poll.slots, MAX_SLOTS, unit);
	}
	if (st->sched.count) {
		printf("\nschedule latency (spawned or queued, to polled):\n");
		print_log2_hist(st->sched.slots, MAX_SLOTS, unit);
	}
	printf("\n%llu flushes, %llu records lost (ring buffer full), %llu flushes unreadable; "
	       "%llu polls without a logged queueing (queued before the tool, or unlogged), "
	       "%llu queueings of a task dropped unpolled, %llu never polled (the process "
	       "exited), %llu waiting for their poll, %llu polls waiting for their queueing "
	       "(a thread's log)\n",
	       (unsigned long long)flushes, (unsigned long long)lost, (unsigned long long)bad,
	       (unsigned long long)st->unpaired_polls, (unsigned long long)st->stale_schedules,
	       (unsigned long long)st->never_polled, (unsigned long long)waiting,
	       (unsigned long long)orphans);
}

static void print(struct state *st, bool last)
{
	struct tool_env *env = st->env;
	__u64 flushes = st->skel->bss->flushes, lost = st->skel->bss->lost, bad = st->skel->bss->bad;
	__u64 d_flushes = flushes - st->prev_flushes, d_lost = lost - st->prev_lost;
	__u64 d_bad = bad - st->prev_bad;
	__u64 totals[BLITZ_EVENT_TYPES] = { 0 }, waiting = 0, orphans = 0;

	st->prev_flushes = flushes;
	st->prev_lost = lost;
	st->prev_bad = bad;
	take_all(st);
	pair(st);
	for (size_t i = 0; i < st->g.n; i++) {
		waiting += grp(st, i)->q.n;
		orphans += grp(st, i)->norphans;
	}
	for (size_t i = 0; i < st->w.n; i++)
		for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
			totals[t] += wst(st, i)->events[t];

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_uint(&j, "flushes", d_flushes);
		json_uint(&j, "lost", d_lost);
		json_uint(&j, "bad", d_bad);
		json_obj_begin(&j, "events");
		for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
			json_uint(&j, type_names[t], totals[t]);
		json_obj_end(&j);
		json_arr_begin(&j, "workers");
		for (size_t i = 0; i < st->w.n; i++)
			json_wstate(&j, wst(st, i));
		json_arr_end(&j);
		json_arr_begin(&j, "histograms");
		json_hist(&j, "poll time", -1, &st->poll, unit_div(env->unit));
		json_hist(&j, "schedule latency", -1, &st->sched, unit_div(env->unit));
		json_arr_end(&j);
		json_uint(&j, "unpaired", st->unpaired_polls);
		json_uint(&j, "unpaired_poll_ends", st->unpaired_polls_end);
		json_uint(&j, "stale_schedules", st->stale_schedules);
		json_uint(&j, "never_polled", st->never_polled);
		json_uint(&j, "waiting", waiting);
		json_uint(&j, "orphans", orphans);
		json_uint(&j, "late", st->late);
		if (with_records)
			records_out(st, &j, last);
		tool_json_end(&j);
	} else {
		/* The records that settled since the last drain, then the counts. */
		if (with_records)
			records_out(st, NULL, last);
		print_text(st, d_flushes, d_lost, d_bad, waiting, orphans);
		st->records_headed = false;
		fflush(stdout);
	}
	/* Printed: the counts start again; the workers of ended processes go. */
	size_t kept = 0;

	for (size_t i = 0; i < st->w.n; i++) {
		struct wstate *w = wst(st, i);

		if (!w->g) {
			array_free(&w->marks);
			continue;
		}
		memset(w->events, 0, sizeof(w->events));
		w->ready = w->stolen = w->missed = 0;
		memmove(wst(st, kept++), w, sizeof(*w));
	}
	st->w.n = kept;
	memset(&st->poll, 0, sizeof(st->poll));
	memset(&st->sched, 0, sizeof(st->sched));
	st->unpaired_polls = st->unpaired_polls_end = st->stale_schedules = st->never_polled = 0;
	st->late = 0;
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	bool last;

	st.w = ARRAY_OF(struct wstate);
	st.g = ARRAY_OF(struct group *);
	st.fulls = ARRAY_OF(struct full);
	tool_parse_args(&env, &def, argc, argv);
	tool_setup(&env);

	st.skel = tool_opened(&env, events_bpf__open());
	tool_loaded(&env, events_bpf__load(st.skel));
	st.rb = ring_buffer__new(bpf_map__fd(st.skel->maps.chunks), on_chunk, &st, NULL);
	if (!st.rb)
		tool_die(&env, "cannot open the ring buffer: %s", strerror(errno));
	tool_attach(&env, st.skel->obj);
	tool_banner(&env, "blitz scheduling events (the event log)");
	do {
		last = tool_wait(&env, drain, &st);
		print(&st, last);
	} while (!last);

	tool_detach(&env);
	ring_buffer__free(st.rb);
	events_bpf__destroy(st.skel);
	for (size_t i = 0; i < st.g.n; i++)
		group_free(grp(&st, i));
	array_free(&st.g);
	for (size_t i = 0; i < st.w.n; i++)
		array_free(&wst(&st, i)->marks);
	array_free(&st.w);
	array_free(&st.fulls);
	return 0;
}
