// SPDX-License-Identifier: MIT
/*
 * summary_helpers.c - the user side of the summary mode (summary_helpers.h).
 * The BPF side merges each worker's snapshot into the tool's own histogram
 * map, so everything after loading is the per-event mode's code.
 */
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "summary_helpers.h"
#include "../include/blitz/trace/histograms.h"

bool summary_mode(const struct tool_env *env, const struct summary_opts *o,
		  bool needs_events, const char *why)
{
	if (o->summary && o->per_event) {
		fprintf(stderr, "blitz-%s: --summary and --per-event exclude each other\n",
			env->def->name);
		exit(2);
	}
	if (o->summary && needs_events) {
		fprintf(stderr, "blitz-%s: %s needs every event: use it with --per-event\n",
			env->def->name, why);
		exit(2);
	}
	return !o->per_event && !needs_events;
}

void summary_load_only(struct bpf_object *obj, bool summary)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		bool snapshot = !strcmp(bpf_program__name(prog), "hist_snapshot");

		bpf_program__set_autoload(prog, snapshot == summary);
	}
}

void summary_report(const struct tool_env *env, unsigned long long skipped, unsigned version)
{
	if (!skipped)
		return;
	if (version != BLITZ_HIST_VERSION)
		fprintf(stderr, "blitz-%s: %llu snapshots skipped: the runtime's histogram layout "
			"is version %u, this tool reads version %d (build both from one tree)\n",
			env->def->name, skipped, version, BLITZ_HIST_VERSION);
	else
		fprintf(stderr, "blitz-%s: %llu snapshots skipped: their size is not this tool's "
			"or they could not be read\n", env->def->name, skipped);
}
