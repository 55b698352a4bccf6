/* SPDX-License-Identifier: MIT */
/*
 * tools/trace_helpers.h - what the user side of every blitz tool shares:
 * the common options, finding and checking the binary to attach, attaching
 * a skeleton's programs to the blitz USDT probes, the print loop, reading
 * maps as snapshots, and the two output formats (runqlat-style log2
 * histograms, one JSON object per interval).
 */
#ifndef BLITZ_TOOLS_TRACE_HELPERS_H
#define BLITZ_TOOLS_TRACE_HELPERS_H

#include <argp.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "hist.h"

struct bpf_object;
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

struct tool_env;

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

	/* Running state (tool_run_*). */
	struct bpf_link *links[TOOL_MAX_LINKS];
	int nr_links;
	long prints;
	double last_print;		/* CLOCK_MONOTONIC seconds */
	double elapsed;			/* seconds covered by the current print */
	bool target_gone;		/* the -p process exited */
};

extern volatile sig_atomic_t tool_exiting;

/*
 * tool_parse_args - parse the command line into @env (exits on an error or
 * after --help).  Defaults: every process, the default binary, the tool's
 * unit, one print at exit.
 */
void tool_parse_args(struct tool_env *env, const struct tool_def *def, int argc, char **argv);

/*
 * tool_setup - everything before opening the skeleton: the root check, the
 * target process, the binary and its probes, the memlock limit, BPF itself,
 * libbpf's log, the signal handlers.  On any problem prints one line
 * "blitz-NAME: why" on stderr and exits 1.
 */
void tool_setup(struct tool_env *env);

/* tool_die - print "blitz-NAME: <message>" and exit 1. */
void tool_die(const struct tool_env *env, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/*
 * tool_attach - attach every autoloaded program of @obj to the blitz probe of
 * the same name in env->binary (of env->pid, or of every process).  Exits 1
 * with one line on failure.
 */
void tool_attach(struct tool_env *env, struct bpf_object *obj);

/*
 * tool_opened - check NAME_bpf__open()'s @skel; tool_loaded - check
 * NAME_bpf__load()'s @err.  On failure: one line and exit 1.
 */
void *tool_opened(const struct tool_env *env, void *skel);
void tool_loaded(const struct tool_env *env, int err);
void tool_detach(struct tool_env *env);

/* tool_banner - "Tracing <what> in <binary>... Hit Ctrl-C to end." on stderr. */
void tool_banner(const struct tool_env *env, const char *what);

/*
 * tool_wait - sleep until the next print is due (the interval has passed,
 * or, without an interval, until Ctrl-C / SIGTERM / the -p process exits).
 * @poll, if not NULL, is called instead of sleeping with a timeout in ms
 * (a ring buffer's poll).  Returns true when this print is the last one.
 * Sets env->elapsed to the seconds this print covers.
 */
bool tool_wait(struct tool_env *env, int (*poll)(void *ctx, int timeout_ms), void *ctx);

/* ns per unit (1 for UNIT_NS and UNIT_TASKS). */
__u64 unit_div(enum tool_unit unit);
/* "ns", "us", "ms", "tasks": the JSON unit. */
const char *unit_name(enum tool_unit unit);
/* "nsecs", "usecs", "msecs", "tasks": the text histogram's header. */
const char *unit_header(enum tool_unit unit);

/*
 * struct snap - a copy of a map whose keys are __s32 arrays and whose values
 * are __u64 arrays, sorted by key (as signed ints, in order).
 */
struct snap {
	size_t key_size, val_size;	/* bytes */
	size_t n, cap;
	char *keys;
	__u64 *vals;			/* n * val_size / 8 */
};

void snap_init(struct snap *s, size_t key_size, size_t val_size);
void snap_free(struct snap *s);
/* Read the whole map into @s (replacing its contents). 0 or -errno. */
int snap_read(int map_fd, struct snap *s);
/*
 * snap_delta - read the map into @cur and make @cur the change since @prev
 * (the previous read, which becomes this read).  With both empty at first,
 * the first call gives the totals.  0 or -errno.
 */
int snap_delta(int map_fd, struct snap *cur, struct snap *prev);
static inline const void *snap_key(const struct snap *s, size_t i)
{
	return s->keys + i * s->key_size;
}
static inline __u64 *snap_val(const struct snap *s, size_t i)
{
	return s->vals + i * (s->val_size / 8);
}

/* --- text output ------------------------------------------------------- */

/* print_log2_hist - a log2 histogram the way runqlat prints it. */
void print_log2_hist(const __u64 *slots, int nr_slots, const char *header);

/* The header of a text print: the time, in interval mode. */
void tool_print_time(const struct tool_env *env);

/* --- JSON output ------------------------------------------------------- */

/* A minimal streaming JSON writer: commas and nesting handled for you. */
struct json {
	FILE *f;
	int depth;
	bool need_comma[16];
};

void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_int(struct json *j, const char *key, long long v);
void json_uint(struct json *j, const char *key, unsigned long long v);
void json_double(struct json *j, const char *key, double v, int decimals);
void json_str(struct json *j, const char *key, const char *v);
void json_null(struct json *j, const char *key);

/*
 * tool_json_begin - start one interval's object on stdout:
 * {"tool":..,"unit":..,"ts":..,"interval_s":..   (tool_json_end closes it).
 */
void tool_json_begin(struct json *j, const struct tool_env *env, const char *unit);
void tool_json_end(struct json *j);

/*
 * json_hist - one entry of "histograms": label, worker, log2 buckets up to
 * the last non-empty one, count and sum (converted by @sum_div: the raw sum
 * is in ns for time tools).
 */
void json_hist(struct json *j, const char *label, int worker, const struct hist *h,
	       __u64 sum_div);

/* "all", "worker N" or "outside" for a hist_key's worker. */
const char *worker_label(int worker, char *buf, size_t len);
/* The JSON worker of a hist_key: -1 for HIST_ALL. */
static inline int json_worker(int worker)
{
	return worker == HIST_ALL ? -1 : worker;
}

/* Hist bookkeeping shared by the histogram tools. */
bool hist_empty(const struct hist *h);

/*
 * A snapshot of struct hist_key -> struct hist, printed as text (one
 * runqlat histogram per non-empty key, headed by its label unless it is
 * "all") or as the "histograms" array of the JSON object.  @label names a
 * key; NULL: worker_label().  @sum_div converts the raw sums to the unit.
 */
typedef const char *(*hist_label_fn)(const struct hist_key *k, char *buf, size_t len);
void print_hist_snap(const struct tool_env *env, const struct snap *s, hist_label_fn label);
void json_hist_snap(struct json *j, const struct snap *s, hist_label_fn label, __u64 sum_div);

/*
 * struct hist_tool - the user side of a tool whose output is one map of
 * histograms (keys starting with a struct hist_key) and the BPF side's
 * `unpaired` and `dropped` counters (schedlat, polltime, blockinglat).
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

/* Wall-clock seconds (CLOCK_REALTIME) and CLOCK_MONOTONIC seconds. */
double now_unix(void);
double now_mono(void);

#endif /* BLITZ_TOOLS_TRACE_HELPERS_H */
