/* SPDX-License-Identifier: MIT */
/* tools/events_dump.h - --dump PID, a running process's rings (events_dump.c). */
#ifndef BLITZ_TOOLS_EVENTS_DUMP_H
#define BLITZ_TOOLS_EVENTS_DUMP_H

struct state;

/* dump_main - --dump PID: the logs its rings hold taken, then the one print. */
int dump_main(struct state *st);

#endif /* BLITZ_TOOLS_EVENTS_DUMP_H */
