/* SPDX-License-Identifier: MIT */
/*
 * tools/hist_tool.h - the whole user side, after loading, of a tool whose
 * output is one map of histograms (schedlat, polltime, blockinglat).
 */
#ifndef BLITZ_TOOLS_HIST_TOOL_H
#define BLITZ_TOOLS_HIST_TOOL_H

#include <stddef.h>
#include <linux/types.h>
#include "hist_output.h"
#include "map_snapshot.h"

struct bpf_object;
struct tool_env;

/*
 * struct hist_tool - the user side of a tool whose output is one map of
 * histograms (keys starting with a struct hist_key) and the BPF side's
 * `unpaired` and `dropped` counters.
 */
struct hist_tool {
	struct tool_env *env;
	int map_fd;				/* the histograms */
	const volatile __u64 *unpaired;		/* the BPF side's counters (bss) */
	const volatile __u64 *dropped;
	hist_label_fn json_label;		/* NULL: worker_label() */
	hist_label_fn text_label;		/* NULL: json_label */
	const char *unpaired_what;		/* "polls without ... (why)" for text */
	struct snap cur, prev;
	__u64 prev_unpaired, prev_dropped;
};

/*
 * hist_tool_run - attach @obj's programs, print the banner "Tracing @what
 * ...", print @t's histograms (changes since the last print) at each
 * interval and at the end, then detach.  @t's fields up to unpaired_what
 * are set by the caller; @key_size is the size of the map's keys.
 */
void hist_tool_run(struct hist_tool *t, struct bpf_object *obj, size_t key_size,
		   const char *what);

#endif /* BLITZ_TOOLS_HIST_TOOL_H */
