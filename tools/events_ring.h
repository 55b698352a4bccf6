/* SPDX-License-Identifier: MIT */
/*
 * tools/events_ring.h - the workers' rings in shared memory, mapped and
 * read in place (events_ring.c).
 */
#ifndef BLITZ_TOOLS_EVENTS_RING_H
#define BLITZ_TOOLS_EVENTS_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "events.h"

struct ring;
struct state;
struct stat;

/* The state, set by main for rings_release_at_exit (NULL: nothing to let go). */
extern struct state *the_state;

/* ring_slot - the slot that log @n of @r goes in. */
const struct blitz_event_log *ring_slot(const struct blitz_event_ring *r, __u64 n);
/* ring_open - the event ring process @tgid holds as descriptor @fd, mapped; NULL and *@why. */
void *ring_open(__u32 tgid, int fd, bool writable, size_t *bytes, struct stat *sb,
		const char **why);
/* ring_finish - all @r still holds taken, and its drops not told yet. */
void ring_finish(struct state *st, struct ring *r);
/* rings_take - a pass over every ring mapped: the logs read. */
__u64 rings_take(struct state *st);
/* on_note - the ring buffer's callback for the notes map (a ring announced). */
int on_note(void *ctx, void *data, size_t size);
/* rings_gone - the rings of processes that exited: finished and unmapped. */
void rings_gone(struct state *st);
/* rings_leave - the workers stop waiting for the tool; @last: every ring let go. */
void rings_leave(struct state *st, bool last);
/* rings_release_at_exit - atexit(): the_state's rings let go. */
void rings_release_at_exit(void);

#endif /* BLITZ_TOOLS_EVENTS_RING_H */
