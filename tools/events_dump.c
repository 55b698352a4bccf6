// SPDX-License-Identifier: MIT
/*
 * tools/events_dump.c - --dump PID: what the event rings of a running
 * process hold (BLITZ_FLIGHT, the flight recorder), read from
 * /proc/PID/fd without stopping it and without becoming the rings'
 * reader: each slot copied, then its seq read again (a slot rewritten
 * under the copy is left out); the committed logs in order, then the one
 * being written; one print.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "tool_args.h"
#include "events.h"
#include "events_dump.h"
#include "events_log.h"
#include "events_opts.h"
#include "events_print.h"
#include "events_ring.h"
#include "events_settle.h"
#include "events_state.h"

/*
 * slot_copy - log @n of ring @r, copied into @out while the process runs
 * on: committed (head.seq == n) or, @partial, the one being written
 * (head.seq 0: its first head.count records, the count read with
 * acquire).  False if the slot holds neither, or changed under the copy.
 */
static bool slot_copy(const struct blitz_event_ring *r, __u64 n, struct blitz_event_log *out,
		      bool partial)
{
	const struct blitz_event_log *s = ring_slot(r, n);
	__u64 seq = __atomic_load_n(&s->head.seq, __ATOMIC_ACQUIRE), now;
	__u32 count;

	if (seq != (partial ? 0 : n))
		return false;
	count = __atomic_load_n(&s->head.count, __ATOMIC_ACQUIRE);
	if (count > BLITZ_EVENT_LOG_RECORDS)
		return false;
	memcpy(&out->head, &s->head, sizeof(out->head));
	memcpy(out->rec, s->rec, count * sizeof(out->rec[0]));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	now = __atomic_load_n(&s->head.seq, __ATOMIC_RELAXED);
	/* Committed meanwhile: the records copied are still its first ones. */
	if (now != seq && !(partial && now == n))
		return false;
	out->head.seq = n;
	out->head.count = count;
	if (partial)
		out->head.flushed = 0;
	if (!out->head.pid)
		out->head.pid = r->pid;
	return true;
}

/* dump_ring - every log ring @r holds: the committed ones in order, then the one being written. */
static void dump_ring(struct state *st, const struct blitz_event_ring *r)
{
	static struct blitz_event_log log;
	__u64 produced = __atomic_load_n(&r->produced, __ATOMIC_ACQUIRE);
	/* The oldest slot is the next to be written again: the one being written may be it. */
	__u64 first = produced + 2 > r->logs ? produced + 2 - r->logs : 1;

	for (__u64 n = first; n <= produced; n++)
		if (slot_copy(r, n, &log, false))
			st->logs += consume_log(st, &log.head, log.rec, log.head.count);
	/* Being written (or committed since); an empty one is a slot not used yet. */
	if ((slot_copy(r, produced + 1, &log, true) || slot_copy(r, produced + 1, &log, false)) &&
	    (log.head.count || log.head.lost))
		st->logs += consume_log(st, &log.head, log.rec, log.head.count);
}

/* dump_main - --dump PID: the rings of PID, read without stopping it; one print. */
int dump_main(struct state *st)
{
	__u32 pid = (__u32)parse_num("--dump PID", dump_arg, 1, INT_MAX);
	char dir[64];
	struct dirent *de;
	size_t rings = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", pid);
	if (pid_gone(pid))
		tool_die(st->env, "no such process: %u", pid);
	d = opendir(dir);
	if (!d)
		tool_die(st->env, "cannot read %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		const char *why = NULL;
		struct stat sb;
		size_t bytes = 0;
		void *map;

		if (de->d_name[0] == '.')
			continue;
		map = ring_open(pid, atoi(de->d_name), false, &bytes, &sb, &why);
		if (!map) {
			if (*why)
				tool_die(st->env, "PID %u: %s/%s: %s", pid, dir, de->d_name, why);
			continue;
		}
		dump_ring(st, map);
		munmap(map, bytes);
		rings++;
	}
	closedir(d);
	if (!rings)
		tool_die(st->env, "PID %u has no event rings (run it with BLITZ_FLIGHT set)", pid);
	offline_end(st);
	print(st, true);
	return 0;
}
