// SPDX-License-Identifier: MIT
/*
 * tools/events_pair.c - a queueing paired with the poll that took it.  A
 * spawn, a schedule and a poll's start name the task (an id never
 * reused) and a queueing number, so the two halves meet in a table of
 * their runtime keyed by (task, seq), in whatever order their logs come:
 * the first waits there (struct held), the second makes the schedule
 * latency.  Open addressing, linear probing, at most half full; a removal
 * moves back the entries of its run that would miss the empty slot (no
 * tombstones).  What still waits as its process exits is counted by
 * group_final().
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "hist_output.h"
#include "tool_args.h"
#include "events_pair.h"
#include "events_state.h"

static size_t held_home(const struct held_table *t, __u64 task, __u32 seq)
{
	__u64 h = task * 0x9e3779b97f4a7c15ull ^ (__u64)seq * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h >> 29) & (t->cap - 1);
}

/* held_find - the slot of (@task, @seq) in @t, or the empty one where it would go. */
static size_t held_find(const struct held_table *t, __u64 task, __u32 seq)
{
	size_t i = held_home(t, task, seq);

	while (t->e[i].task && (t->e[i].task != task || t->e[i].seq != seq))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void held_grow(struct state *st, struct held_table *t)
{
	struct held_table nt = { .cap = t->cap ? 2 * t->cap : 1024, .n = t->n, .polls = t->polls };

	nt.e = calloc(nt.cap, sizeof(*nt.e));
	if (!nt.e)
		tool_die(st->env, "out of memory holding %zu queueings and polls", t->n);
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].task)
			nt.e[held_find(&nt, t->e[i].task, t->e[i].seq)] = t->e[i];
	free(t->e);
	*t = nt;
}

/* held_remove - empty slot @i, moving back the entries of its run that would miss it. */
static void held_remove(struct held_table *t, size_t i)
{
	size_t j = i;

	t->polls -= t->e[i].poll;
	t->n--;
	t->e[i].task = 0;
	for (;;) {
		size_t home;

		j = (j + 1) & (t->cap - 1);
		if (!t->e[j].task)
			return;
		home = held_home(t, t->e[j].task, t->e[j].seq);
		/* Moved back unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->e[i] = t->e[j];
		t->e[j].task = 0;
		i = j;
	}
}

static void held_free(struct held_table *t)
{
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static void sched_record(struct state *st, const struct group *g, __u64 from, __u64 to)
{
	__u64 ns = to_ns(to - from, g->mult);

	hist_record(&st->sched, ns / st->div, ns);
}

/*
 * pair_mark - a queueing (@poll 0) or a poll's start (@poll 1) of @task's
 * queueing number @seq: paired with its other half if that came first
 * (schedule latency), else held for it.  A poll stamped before its
 * queueing (rdtsc is not fenced: docs/probes.md) is counted unpaired.
 */
void pair_mark(struct state *st, struct group *g, __u64 task, __u32 seq, __u64 ticks,
		      bool poll)
{
	struct held *e;
	__u64 q, p;

	if (!task)
		return;
	if (2 * (g->held.n + 1) > g->held.cap)
		held_grow(st, &g->held);
	e = &g->held.e[held_find(&g->held, task, seq)];
	if (!e->task) {
		*e = (struct held){ .task = task, .ticks = ticks, .seq = seq, .poll = poll };
		g->held.n++;
		g->held.polls += poll;
		return;
	}
	if (e->poll == poll) {
		/* Logged twice: the layout's promise broken; the later one is kept. */
		if (poll)
			st->unpaired_polls++;
		else
			st->stale_schedules++;
		e->ticks = ticks;
		return;
	}
	q = poll ? e->ticks : ticks;
	p = poll ? ticks : e->ticks;
	/* The queueing came after its poll: a thread's log flushed late, or another worker's. */
	st->late += !poll;
	if (p >= q)
		sched_record(st, g, q, p);
	else
		st->unpaired_polls++;
	held_remove(&g->held, (size_t)(e - g->held.e));
}

/*
 * group_final - @g's process has exited: what still waits never pairs.
 * A queueing no earlier than the last lost record of the runtime, or a
 * poll no later than its first, may have lost its other half in a span:
 * untrusted; the rest never had one in the window (queued before the
 * tool came, or never polled).
 */
void group_final(struct state *st, struct group *g)
{
	for (size_t i = 0; i < g->held.cap; i++) {
		const struct held *h = &g->held.e[i];

		if (!h->task)
			continue;
		if (g->lossy && (h->poll ? h->ticks >= g->loss_from : h->ticks <= g->loss_to)) {
			st->untrusted++;
			st->untrusted_polls += h->poll;
		} else if (h->poll)
			st->unpaired_polls++;
		else
			st->never_polled++;
	}
	held_free(&g->held);
}

/* group_free - @g and what it still holds (counted by the caller). */
void group_free(struct group *g)
{
	held_free(&g->held);
	free(g);
}
