// SPDX-License-Identifier: MIT
/*
 * tools/events_settle.c - settling: the processes that exited (their
 * rings read to the end, what the ring buffers hold of them taken, their
 * flushes half in closed, their runtimes finished and dropped), and each
 * runtime's settled tick, before which all its records are here (a
 * worker's later records are stamped after its last flush): -r prints up
 * to it.  While tracing ten times a second at most (drain), and at each
 * print; --read and --dump end every process at the input's end.
 */
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "array.h"
#include "events_chunks.h"
#include "events_pair.h"
#include "events_ring.h"
#include "events_settle.h"
#include "events_state.h"

/*
 * gone_check - the processes that exited since the last check: their
 * rings read to the end, what the ring buffers hold of them taken, and
 * their flushes half in closed (the rest was lost).
 */
static void gone_check(struct state *st)
{
	bool any = false;
	size_t i = 0;

	rings_gone(st);
	for (size_t i = 0; i < st->g.n; i++) {
		struct group *g = grp(st, i);

		if (!g->gone && pid_gone(g->tgid))
			g->gone = any = true;
	}
	for (size_t i = 0; i < st->pend.n; i++)
		if (pid_gone(pend_at(st, i)->tgid))
			pend_at(st, i)->gone = any = true;
	if (!any)
		return;
	take_all(st);
	while (i < st->pend.n) {
		if (pend_at(st, i)->gone)
			pending_out(st, pend_at(st, i), true);	/* the last one moves here */
		else
			i++;
	}
	for (i = 0; i < st->g.n; i++)
		if (grp(st, i)->gone)
			losses_drain(st, grp(st, i)->tgid);
}

/*
 * settled - the tick before which all of @g's records are here: the
 * oldest of its workers' last flushes (a worker's later records are
 * stamped after its flush), once every worker has flushed; everything if
 * the process has exited; 0 (nothing) before every worker flushed.  A
 * thread that is not a worker flushes at its own pace: not waited for.
 */
static __u64 settled(const struct state *st, struct group *g)
{
	__u64 low = ~0ull;
	__u32 seen = 0;

	if (g->gone)
		return ~0ull;
	for (size_t i = 0; i < st->w.n; i++) {
		if (wst(st, i)->g != g || wst(st, i)->worker < 0)
			continue;
		seen++;
		if (wst(st, i)->flushed < low)
			low = wst(st, i)->flushed;
	}
	return seen >= g->workers ? low : 0;
}

/*
 * settle - every runtime's settled tick (for -r); the runtimes of exited
 * processes finished (group_final) and dropped.
 */
void settle(struct state *st)
{
	size_t kept = 0;

	if (!st->offline)
		gone_check(st);
	for (size_t i = 0; i < st->g.n; i++) {
		struct group *g = grp(st, i);

		g->upto = settled(st, g);
		if (g->gone) {
			group_final(st, g);
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

/* offline_end - the input is read: every process has ended. */
void offline_end(struct state *st)
{
	for (size_t i = 0; i < st->g.n; i++)
		grp(st, i)->gone = true;
}
