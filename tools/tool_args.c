// SPDX-License-Identifier: MIT
/*
 * tools/tool_args.c - the command line every blitz tool shares: argp options
 * (-p -b -j -v [interval [count]], the unit and per-worker options a tool
 * asks for, and its own flags), the units they choose, and the one-line
 * fatal error every tool reports with.
 */
#include <argp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "tool_args.h"

const char *argp_program_version = "blitz-tools 0.1.0";

/* say - "blitz-NAME: <message><tail>" and a newline, on stderr. */
static void say(const struct tool_env *env, const char *tail, const char *fmt, va_list ap)
{
	fprintf(stderr, "blitz-%s: ", env->def->name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "%s\n", tail);
}

void tool_die(const struct tool_env *env, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(env, "", fmt, ap);
	va_end(ap);
	exit(1);
}

/*
 * bad_usage - a bad command line: one line and exit 2, as argp's own (whose
 * argp_error() adds a second line, "Try --help"); a parse that runs with
 * ARGP_NO_EXIT (tool_args_parse for the fuzzer) gets EINVAL back instead,
 * which stops it.
 */
static error_t bad_usage(struct argp_state *state, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(state->input, " (--help lists the options)", fmt, ap);
	va_end(ap);
	if (state->flags & ARGP_NO_EXIT)
		return EINVAL;
	exit(2);
}

enum {
	OPT_PID = 'p',
	OPT_BINARY = 'b',
	OPT_MS = 'm',
	OPT_US = 'u',
	OPT_NS = 'n',
	OPT_WORKER = 'W',
	OPT_JSON = 'j',
	OPT_VERBOSE = 'v',
	OPT_HELP = 'h',
	/*
	 * glibc's argp adds a hidden --HANG[=SECS] (sleep, for attaching a
	 * debugger) that any prefix of it reaches: "--H" hung a tool for
	 * ever (found by tests/fuzz/tool_args).  Ours, found first, refuses it.
	 */
	OPT_HANG = 0x1001,
};

static const struct argp_option common_opts[] = {
	{ "pid", OPT_PID, "PID", 0, "Trace this process only, in the libblitz.so it maps", 0 },
	{ "binary", OPT_BINARY, "PATH", 0,
	  "The libblitz.so (or static program) to attach to; default: $BLITZ_LIB, "
	  "then PREFIX/lib/libblitz.so for a tool in PREFIX/bin, then BUILD/lib/libblitz.so "
	  "for one in BUILD/tools/bin, then /usr/local/lib/libblitz.so", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per interval (for tools/plot)", 0 },
	{ "verbose", OPT_VERBOSE, NULL, 0, "Verbose debug output (libbpf's log)", 0 },
	{ NULL, OPT_HELP, NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{ "HANG", OPT_HANG, "SECS", OPTION_ARG_OPTIONAL | OPTION_HIDDEN, "Refused (see OPT_HANG)", 0 },
	{ 0 },
};

static const struct argp_option unit_opts[] = {
	{ "milliseconds", OPT_MS, NULL, 0, "Histogram in milliseconds", 0 },
	{ "microseconds", OPT_US, NULL, 0, "Histogram in microseconds", 0 },
	{ "nanoseconds", OPT_NS, NULL, 0, "Histogram in nanoseconds", 0 },
	{ 0 },
};

static const struct argp_option worker_opts[] = {
	{ "per-worker", OPT_WORKER, NULL, 0, "One histogram per worker", 0 },
	{ 0 },
};

/*
 * parse_long - @arg as a whole number from @lo to @hi into *@out; else
 * bad_usage() (which exits, unless the parse runs with ARGP_NO_EXIT) and
 * EINVAL, which stops the parse.
 */
static error_t parse_long(struct argp_state *state, const char *what, const char *arg,
			  long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < lo || v > hi)
		return bad_usage(state, "invalid %s: %s", what, arg);
	*out = v;
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct tool_env *env = state->input;
	char *end;
	long v;

	switch (key) {
	case OPT_PID:
		if (parse_long(state, "PID", arg, 1, INT_MAX, &v))
			return EINVAL;
		env->pid = (pid_t)v;
		break;
	case OPT_BINARY:
		env->binary_arg = arg;
		break;
	case OPT_HANG:
		return bad_usage(state, "unrecognized option '--HANG'");
	case OPT_MS:
		env->unit = UNIT_MS;
		break;
	case OPT_US:
		env->unit = UNIT_US;
		break;
	case OPT_NS:
		env->unit = UNIT_NS;
		break;
	case OPT_WORKER:
		env->per_worker = true;
		break;
	case OPT_JSON:
		env->json = true;
		break;
	case OPT_VERBOSE:
		env->verbose = true;
		break;
	case OPT_HELP:
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num == 0) {
			errno = 0;
			env->interval = strtod(arg, &end);
			if (errno || *end || end == arg || !(env->interval > 0) ||
			    env->interval > 86400)
				return bad_usage(state, "invalid interval: %s", arg);
		} else if (state->arg_num == 1) {
			if (parse_long(state, "count", arg, 1, LONG_MAX, &env->count))
				return EINVAL;
		} else {
			return bad_usage(state, "unrecognized positional argument: %s", arg);
		}
		break;
	case ARGP_KEY_INIT:
		/*
		 * An unknown option or a missing value is getopt's one line
		 * ("unrecognized option '--x'"); argp would add "Try --help"
		 * on err_stream.  Without it argp prints nothing more and
		 * returns the error (tool_parse_args exits 2).
		 */
		state->err_stream = NULL;
		break;
	default:
		for (const struct tool_flag *f = env->def->flags; f && f->name; f++) {
			if (f->key == key) {
				*f->var = true;
				return 0;
			}
		}
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static size_t nr_opts(const struct argp_option *o)
{
	size_t n = 0;

	while (o && (o[n].name || o[n].key))
		n++;
	return n;
}

/* flag_opts - the argp options of @flags (a calloc'ed array, ended by a zero entry). */
static struct argp_option *flag_opts(const struct tool_env *env, const struct tool_flag *flags)
{
	size_t n = 0;
	struct argp_option *o;

	while (flags && flags[n].name)
		n++;
	o = calloc(n + 1, sizeof(*o));
	if (!o)
		tool_die(env, "out of memory");
	for (size_t i = 0; i < n; i++)
		o[i] = (struct argp_option){ flags[i].name, flags[i].key, NULL, 0, flags[i].doc, 0 };
	return o;
}

/*
 * tool_args_parse - parse the command line into @env with argp's @flags:
 * 0 (an error or --help exits, as argp does) or ARGP_NO_EXIT (the error is
 * printed and returned; tests/fuzz/tool_args.c parses that way).
 * Return: 0, or the argp error (EINVAL: a bad option or value).
 */
static error_t tool_args_parse(struct tool_env *env, const struct tool_def *def,
			       int argc, char **argv, unsigned flags)
{
	struct argp_option *own = flag_opts(env, def->flags);
	const struct argp_option *parts[4] = { common_opts };
	size_t n = 0, k = 0;
	struct argp_option *opts;
	char *doc;
	struct argp argp = { 0 };
	error_t err;

	env->def = def;
	env->unit = def->unit;
	if (def->opts & TOOL_OPT_UNITS)
		parts[1] = unit_opts;
	if (def->opts & TOOL_OPT_WORKER)
		parts[2] = worker_opts;
	parts[3] = own;
	for (int i = 0; i < 4; i++)
		n += nr_opts(parts[i]);
	opts = calloc(n + 1, sizeof(*opts));
	if (!opts)
		tool_die(env, "out of memory");
	for (int i = 0; i < 4; i++)
		for (size_t m = 0; m < nr_opts(parts[i]); m++)
			opts[k++] = parts[i][m];
	if (asprintf(&doc, "%s\v"
		     "EXAMPLES:\n%s", def->summary, def->examples) < 0)
		tool_die(env, "out of memory");
	argp.options = opts;
	argp.parser = parse_arg;
	argp.args_doc = "[interval [count]]";
	argp.doc = doc;
	err = argp_parse(&argp, argc, argv, flags, NULL, env);
	free(opts);
	free(own);
	free(doc);
	return err;
}

void tool_parse_args(struct tool_env *env, const struct tool_def *def, int argc, char **argv)
{
	if (tool_args_parse(env, def, argc, argv, 0))
		exit(2);
}

__u64 unit_div(enum tool_unit unit)
{
	switch (unit) {
	case UNIT_US: return 1000;
	case UNIT_MS: return 1000000;
	default: return 1;
	}
}

const char *unit_name(enum tool_unit unit)
{
	switch (unit) {
	case UNIT_NS: return "ns";
	case UNIT_US: return "us";
	case UNIT_MS: return "ms";
	default: return "tasks";
	}
}

const char *unit_header(enum tool_unit unit)
{
	switch (unit) {
	case UNIT_NS: return "nsecs";
	case UNIT_US: return "usecs";
	case UNIT_MS: return "msecs";
	default: return "tasks";
	}
}
