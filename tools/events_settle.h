/* SPDX-License-Identifier: MIT */
/*
 * tools/events_settle.h - the processes that exited, and the tick up to
 * which each runtime's records are all in (events_settle.c).
 */
#ifndef BLITZ_TOOLS_EVENTS_SETTLE_H
#define BLITZ_TOOLS_EVENTS_SETTLE_H

struct state;

/* settle - every runtime's settled tick; those of exited processes finished. */
void settle(struct state *st);
/* offline_end - --read, --dump: the input is all; every process has ended. */
void offline_end(struct state *st);

#endif /* BLITZ_TOOLS_EVENTS_SETTLE_H */
