/* SPDX-License-Identifier: MIT */
/* tools/events_print.h - blitz-events' print, text or JSON (events_print.c). */
#ifndef BLITZ_TOOLS_EVENTS_PRINT_H
#define BLITZ_TOOLS_EVENTS_PRINT_H

#include <stdbool.h>

struct state;

/* print - one print (@last: the tool's last, everything taken first); the counts reset. */
void print(struct state *st, bool last);

#endif /* BLITZ_TOOLS_EVENTS_PRINT_H */
