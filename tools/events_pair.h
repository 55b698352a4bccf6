/* SPDX-License-Identifier: MIT */
/*
 * tools/events_pair.h - the pairing of a queueing with its poll, by
 * (task, seq) in a table per runtime (events_pair.c).
 */
#ifndef BLITZ_TOOLS_EVENTS_PAIR_H
#define BLITZ_TOOLS_EVENTS_PAIR_H

#include <stdbool.h>
#include <linux/types.h>

struct group;
struct state;

/* pair_mark - a queueing (@poll false) or a poll's start: paired, or held for its pair. */
void pair_mark(struct state *st, struct group *g, __u64 task, __u32 seq, __u64 ticks,
	       bool poll);
/* group_final - @g's process exited: what still waits counted, the table emptied. */
void group_final(struct state *st, struct group *g);
/* group_free - @g and its table, freed. */
void group_free(struct group *g);

#endif /* BLITZ_TOOLS_EVENTS_PAIR_H */
