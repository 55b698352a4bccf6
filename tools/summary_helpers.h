/* SPDX-License-Identifier: MIT */
/*
 * tools/summary_helpers.h - the user side of a tool's summary mode: the
 * --summary / --per-event options, and loading either the tool's
 * per-event programs or its hist_snapshot program (summary.bpf.h).
 */
#ifndef BLITZ_TOOLS_SUMMARY_HELPERS_H
#define BLITZ_TOOLS_SUMMARY_HELPERS_H

#include <stdbool.h>
#include "tool_args.h"

struct bpf_object;

/* What the command line asked for (both false: the tool's default). */
struct summary_opts {
	bool summary;
	bool per_event;
};

#define OPT_SUMMARY	0x5301
#define OPT_PER_EVENT	0x5302

/* SUMMARY_FLAGS(&opts) - the two tool_flag entries, for a tool's flags[]. */
#define SUMMARY_FLAGS(o)							\
	{ "summary", OPT_SUMMARY, "Read the runtime's own histograms at hist_snapshot "	\
	  "(default; a probe hit per worker every few ms, not per event)", &(o)->summary }, \
	{ "per-event", OPT_PER_EVENT, "One probe hit per event (slows the traced run; "	\
	  "use it for what needs every event)", &(o)->per_event }

/*
 * summary_mode - true for the summary mode: unless --per-event, or
 * @needs_events (an option that only the per-event mode answers, named by
 * @why) says otherwise.  Both flags, or --summary with such an option:
 * one line and exit 2.
 */
bool summary_mode(const struct tool_env *env, const struct summary_opts *o,
		  bool needs_events, const char *why);

/*
 * summary_load_only - before NAME_bpf__load(): load hist_snapshot alone
 * (@summary), or every program but hist_snapshot.
 */
void summary_load_only(struct bpf_object *obj, bool summary);

/*
 * summary_report - at the end, one line on stderr if the BPF side skipped
 * snapshots (@skipped, summary_bad): of another layout than the tool's
 * <blitz/trace/histograms.h> (the last one's @version), or unreadable.
 * The histograms printed then stand for the snapshots read only.
 */
void summary_report(const struct tool_env *env, unsigned long long skipped, unsigned version);

#endif /* BLITZ_TOOLS_SUMMARY_HELPERS_H */
