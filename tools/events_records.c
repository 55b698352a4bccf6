// SPDX-License-Identifier: MIT
/*
 * tools/events_records.c - -r: every record taken, with where it came
 * from (struct full), out in time order (the TSC is one clock for every
 * process) as ns since the first record taken: before the last print only
 * those that every runtime has settled (events_settle.c), the rest held
 * for a later batch.  And the names of the record types, which the prints
 * use too.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>
#include "array.h"
#include "json_writer.h"
#include "events.h"
#include "events_records.h"
#include "events_state.h"

const char *const type_names[BLITZ_EVENT_TYPES] = {
	[BLITZ_EVENT_SPAWN] = "spawn", [BLITZ_EVENT_SCHEDULE] = "schedule",
	[BLITZ_EVENT_POLL_START] = "poll_start",
	[BLITZ_EVENT_POLL_END] = "poll_end", [BLITZ_EVENT_STEAL] = "steal",
	[BLITZ_EVENT_PARK] = "park", [BLITZ_EVENT_UNPARK] = "unpark",
	[BLITZ_EVENT_READER_WAIT] = "reader_wait",
};
/* Every type is named (a JSON key, a column): a new one needs its name above. */
_Static_assert(BLITZ_EVENT_TYPES == BLITZ_EVENT_READER_WAIT + 1, "a record type without a name");

static int full_cmp(const void *a, const void *b)
{
	const struct full *x = a, *y = b;

	if (x->ev.ticks != y->ev.ticks)
		return x->ev.ticks < y->ev.ticks ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->worker - y->worker;
}

/* The records that carry a queueing number (the others: -1); a peer (the others: -1). */
static bool has_seq(unsigned type)
{
	return type == BLITZ_EVENT_SPAWN || type == BLITZ_EVENT_SCHEDULE ||
	       type == BLITZ_EVENT_POLL_START;
}

static long long rec_seq(const struct blitz_event *e)
{
	return has_seq(e->type) ? (long long)e->seq : -1;
}

static int rec_peer(const struct blitz_event *e)
{
	return e->type == BLITZ_EVENT_STEAL || e->type == BLITZ_EVENT_UNPARK ? e->peer : -1;
}

/*
 * records_out - -r: the records held, in time order (the TSC is one clock
 * for every process), as ns since the first record taken: in text at
 * every settling and each print, with -j in each print's object.  Before
 * the last print, only those every traced runtime has settled: a later
 * one may still bring an earlier record (and a thread's log, flushed when
 * its thread waits, may still: such records come in a later batch).
 */
void records_out(struct state *st, struct json *j, bool last)
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
	if (j) {
		json_arr_begin(j, "records");
	} else if (n && !st->records_headed) {
		printf("\n%12s %7s %6s %7s %-10s %10s %4s %18s %5s %6s\n", "NS", "PID", "WORKER",
		       "TID", "EVENT", "TASK", "CODE", "ARG", "PEER", "SEQ");
		st->records_headed = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct blitz_event *e = &f[i].ev;
		long long ns = rel_ns(st, e->ticks, f[i].mult);

		if (j) {
			/* [ns, pid, worker, event, task, arg, peer, tid, code, seq] */
			json_arr_begin(j, NULL);
			json_int(j, NULL, ns);
			json_uint(j, NULL, f[i].tgid);
			json_int(j, NULL, f[i].worker);
			json_str(j, NULL, type_names[e->type]);
			json_uint(j, NULL, e->task);
			json_uint(j, NULL, e->arg);
			json_int(j, NULL, rec_peer(e));
			json_uint(j, NULL, f[i].thread);
			json_uint(j, NULL, e->code);
			json_int(j, NULL, rec_seq(e));
			json_arr_end(j);
		} else if (has_seq(e->type)) {	/* arg: an address */
			printf("%12lld %7u %6d %7u %-10s %10llu %4u %#18llx %5d %6lld\n", ns, f[i].tgid,
			       f[i].worker, f[i].thread, type_names[e->type], (unsigned long long)e->task,
			       e->code, (unsigned long long)e->arg, rec_peer(e), rec_seq(e));
		} else {
			printf("%12lld %7u %6d %7u %-10s %10llu %4u %18llu %5d %6lld\n", ns, f[i].tgid,
			       f[i].worker, f[i].thread, type_names[e->type], (unsigned long long)e->task,
			       e->code, (unsigned long long)e->arg, rec_peer(e), rec_seq(e));
		}
	}
	if (j)
		json_arr_end(j);
	for (size_t i = n; i < st->fulls.n; i++)
		f[kept++] = f[i];
	st->fulls.n = kept;
}
