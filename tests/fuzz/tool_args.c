// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/tool_args.c - the command line every blitz tool parses
 * (tools/tool_args.c, argp), from any arguments.
 *
 * The input's first byte picks a tool shape: the common options alone, or
 * with the unit and per-worker options and flags of the tool's own (as
 * blitz-steal's --summary/--per-event, blitz-top's -C).  The rest is the
 * argument list, one word per NUL- or newline-separated piece.  The parse
 * runs with ARGP_NO_EXIT, so a bad option returns instead of exiting.
 * Properties: a parse that succeeds leaves a usable setting (a PID of at
 * least 1 or none, an interval in (0, 86400] or none, a count only with an
 * interval, a unit and per-worker mode only where the tool offers them);
 * one that fails says EINVAL (or ARGP's own error for an unknown option).
 */
#include <string.h>
#include "fuzz.h"
#include "../../tools/tool_args.c"

static bool summary, per_event, noclear;

static const struct tool_flag own_flags[] = {
	{ "summary", 0x100, "Summary mode", &summary },
	{ "per-event", 0x101, "Per-event mode", &per_event },
	{ "noclear", 'C', "Do not clear the screen", &noclear },
	{ 0 },
};

static const struct tool_def defs[] = {
	{ .name = "plain", .summary = "The common options only.", .examples = "    blitz-plain\n",
	  .unit = UNIT_TASKS },
	{ .name = "units", .summary = "Units and per-worker histograms.",
	  .examples = "    blitz-units -m 1 5\n", .opts = TOOL_OPT_UNITS | TOOL_OPT_WORKER,
	  .unit = UNIT_US },
	{ .name = "flags", .summary = "Flags of its own.", .examples = "    blitz-flags --summary\n",
	  .opts = TOOL_OPT_UNITS, .unit = UNIT_NS, .flags = own_flags },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tool_def *def;
	struct tool_env *env;
	struct fuzz_argv a;
	error_t err;

	if (!size)
		return 0;
	def = &defs[data[0] % (sizeof(defs) / sizeof(defs[0]))];
	fuzz_argv_init(&a, "blitz-fuzz", data + 1, size - 1);
	env = calloc(1, sizeof(*env));
	if (!env)
		abort();
	summary = per_event = noclear = false;
	err = tool_args_parse(env, def, a.argc, a.argv, ARGP_NO_EXIT);
	if (!err) {
		FUZZ_CHECK(env->pid >= 0);
		FUZZ_CHECK(env->interval == 0 || (env->interval > 0 && env->interval <= 86400));
		FUZZ_CHECK(env->count >= 0 && (!env->count || env->interval > 0));
		FUZZ_CHECK((def->opts & TOOL_OPT_UNITS) || env->unit == def->unit);
		FUZZ_CHECK((def->opts & TOOL_OPT_WORKER) || !env->per_worker);
		FUZZ_CHECK(def->flags || !(summary || per_event || noclear));
	} else {
		FUZZ_CHECK(err == EINVAL || err == ARGP_ERR_UNKNOWN);
	}
	free(env);
	fuzz_argv_free(&a);
	return 0;
}
