/* SPDX-License-Identifier: MIT */
/*
 * tools/tool_args.h - the command line every blitz tool shares: what a tool
 * says about itself (struct tool_def), the options it parsed and the state
 * it runs with (struct tool_env), the units of its histograms, and the
 * one-line fatal error.
 */
#ifndef BLITZ_TOOLS_TOOL_ARGS_H
#define BLITZ_TOOLS_TOOL_ARGS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct bpf_link;

/* The unit of a histogram's values. */
enum tool_unit {
	UNIT_NS,
	UNIT_US,
	UNIT_MS,
	UNIT_TASKS,		/* a count of tasks (steal sizes) */
};

/* Which common options a tool accepts beyond -p -b -j -v [interval] [count]. */
#define TOOL_OPT_UNITS	(1u << 0)	/* -n / -u / -m: the time unit */
#define TOOL_OPT_WORKER	(1u << 1)	/* -W: one histogram per worker */

/* struct tool_flag - an option of the tool's own, without argument: sets *var. */
struct tool_flag {
	const char *name;		/* the long option; NULL ends the array */
	int key;			/* the short option */
	const char *doc;
	bool *var;
};

/* struct tool_def - what a tool tells the common code about itself. */
struct tool_def {
	const char *name;		/* "schedlat": the binary is blitz-schedlat */
	const char *summary;		/* one line: what it shows */
	const char *examples;		/* the examples of --help, one per line */
	unsigned opts;			/* TOOL_OPT_* */
	enum tool_unit unit;		/* default unit */
	const struct tool_flag *flags;	/* the tool's own options, or NULL */
};

#define TOOL_MAX_LINKS	32

/* struct tool_env - the parsed options and the state of a running tool. */
struct tool_env {
	const struct tool_def *def;
	pid_t pid;			/* -p: 0 = every process */
	const char *binary_arg;		/* -b as given */
	char binary[PATH_MAX];		/* what is attached */
	double interval;		/* seconds between prints; 0 = at exit */
	long count;			/* prints; 0 = until Ctrl-C */
	enum tool_unit unit;
	bool json;
	bool verbose;
	bool per_worker;
	void *priv;			/* the tool's own option storage */

	/* Running state: the attached probes (usdt_target.h), the print loop. */
	struct bpf_link *links[TOOL_MAX_LINKS];
	int nr_links;
	long prints;
	double last_print;		/* CLOCK_MONOTONIC seconds */
	double elapsed;			/* seconds covered by the current print */
	bool target_gone;		/* the -p process exited */
	/* Is the binary mapped by a process (tool_watch_mapped)? */
	double ready_at;		/* CLOCK_MONOTONIC seconds of the first wait */
	double next_scan;		/* when to look at the processes' maps again */
	bool watch_done;		/* one maps it, or the warning is out, or -p */
};

/*
 * tool_parse_args - parse the command line into @env (exits on an error or
 * after --help).  Defaults: every process, the default binary, the tool's
 * unit, one print at exit.
 */
void tool_parse_args(struct tool_env *env, const struct tool_def *def, int argc, char **argv);

/* tool_die - print "blitz-NAME: <message>" and exit 1. */
void tool_die(const struct tool_env *env, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* ns per unit (1 for UNIT_NS and UNIT_TASKS). */
__u64 unit_div(enum tool_unit unit);
/* "ns", "us", "ms", "tasks": the JSON unit. */
const char *unit_name(enum tool_unit unit);
/* "nsecs", "usecs", "msecs", "tasks": the text histogram's header. */
const char *unit_header(enum tool_unit unit);

#endif /* BLITZ_TOOLS_TOOL_ARGS_H */
