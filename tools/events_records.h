/* SPDX-License-Identifier: MIT */
/* tools/events_records.h - -r's records, and the record types' names (events_records.c). */
#ifndef BLITZ_TOOLS_EVENTS_RECORDS_H
#define BLITZ_TOOLS_EVENTS_RECORDS_H

#include <stdbool.h>
#include <linux/types.h>
#include "events.h"

struct json;
struct state;

/* The name of each record type: a JSON key, a column. */
extern const char *const type_names[BLITZ_EVENT_TYPES];

/* records_out - the records settled (@last: all), in text or into @j. */
void records_out(struct state *st, struct json *j, bool last);

#endif /* BLITZ_TOOLS_EVENTS_RECORDS_H */
