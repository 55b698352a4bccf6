/* SPDX-License-Identifier: MIT */
/*
 * tools/events_opts.h - blitz-events' command line as its other files
 * read it: the tool's definition and the values of its options, set by
 * events.c before anything is read and not changed after.
 */
#ifndef BLITZ_TOOLS_EVENTS_OPTS_H
#define BLITZ_TOOLS_EVENTS_OPTS_H

#include <stdbool.h>
#include "tool_args.h"

/* What the tool says about itself (events_def.name: "events"). */
extern const struct tool_def events_def;
/* -r: every record too, in time order. */
extern bool with_records;
/* --raw: -w writes each record as it is, not packed. */
extern bool write_raw;
/* -w FILE, --read FILE, --dump PID: NULL when not given. */
extern const char *write_path, *read_path, *dump_arg;

/* parse_num - @arg as a whole number from @lo to @hi, or a usage error (exit 2). */
long parse_num(const char *what, const char *arg, long lo, long hi);

#endif /* BLITZ_TOOLS_EVENTS_OPTS_H */
