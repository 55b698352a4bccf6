// SPDX-License-Identifier: MIT
/*
 * blitz-events - every scheduling event of blitz workers, from the
 * runtime's event log (include/blitz/trace/events.h): the events per worker,
 * poll time (each poll's start and end, paired in the worker's log) and
 * schedule latency (a task's spawn or schedule paired with the poll that
 * took that queueing, on whichever worker), the records lost and when,
 * and with -r the records themselves in time order.
 *
 * Two transports bring the logs.  A worker writes its logs into a ring
 * in shared memory (a memfd) and announces it at event_ring: the tool
 * maps it and reads the logs in place, with no probe hit per log.  The
 * threads that are not workers (the program's own, a blocking-pool
 * thread, a joiner running queued tasks) flush theirs at event_flush,
 * whose BPF program copies them into a ring buffer in chunks.  Either
 * way a whole log goes through consume_log(): written to a trace
 * file (-w), or analysed.
 *
 * A queueing and its poll are paired exactly: a record names its task by
 * an id that is never reused, and a spawn, a schedule and a poll's start
 * carry the task's queueing number, the poll's that of the queueing it
 * took.  So the two meet in a table keyed by (task, number), in whatever
 * order their logs come.  The records are still held for -r, until every
 * worker of the runtime has flushed past them (each log carries the tick
 * of its flush: a worker's later records are stamped after it), and
 * printed in time order.
 *
 * A lost record (a ring the reader did not free in time, the ring buffer
 * full) is counted with the ticks of the first and last lost: a span.
 * Polls open across a span are dropped, not paired with a later end of
 * their task, and what waits for its pair when its process exits is
 * counted "untrusted" if a span could hold that pair.
 *
 * The files, a concept each: this one the command line (the options with
 * a value, what goes with what), the loop while tracing and main;
 * events_ring.c the workers' rings, events_chunks.c the ring buffer's
 * chunks (the logs of event_flush), events_log.c a log's analysis
 * (consume_log), events_pair.c the (task, seq) table, events_settle.c the
 * processes that exited and the records' order, events_records.c -r,
 * events_print.c the prints, events_trace.c the trace file (-w, --read),
 * events_pack.c its packed records, events_dump.c --dump; events_state.h
 * the state they share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "bpf_setup.h"
#include "print_loop.h"
#include "tool_args.h"
#include "usdt_target.h"
#include "events.h"
#include "events.skel.h"
#include "events_chunks.h"
#include "events_dump.h"
#include "events_opts.h"
#include "events_pair.h"
#include "events_print.h"
#include "events_records.h"
#include "events_ring.h"
#include "events_settle.h"
#include "events_state.h"
#include "events_trace.h"

/* The default longest wait of a worker whose ring is full (BLITZ_RING_BLOCK). */
#define BLOCK_MS_DEFAULT	100

bool with_records, write_raw;
static bool discard;
/* Set by argp for the options with a value (take_values() took the value out first). */
static bool write_set, read_set, dump_set, block_set;
const char *write_path, *read_path, *dump_arg;
static const char *block_arg;

enum {
	OPT_READ = 0x2001,
	OPT_DUMP,
	OPT_BLOCK_MS,
	OPT_DISCARD,
	OPT_RAW,
};

static const struct tool_flag flags[] = {
	{ "records", 'r', "Every record too, in time order: a line per event (text) or a "
	  "\"records\" array (-j)", &with_records },
	{ "write", 'w', "FILE: write the logs into the trace FILE, packed (about 6 bytes a "
	  "record), no analysis (the cheapest reader; --read FILE analyses it)", &write_set },
	{ "raw", OPT_RAW, "With -w: each record as it is (32 bytes), not packed", &write_raw },
	{ "read", OPT_READ, "FILE: analyse the trace FILE (of -w, --dump or the flight "
	  "recorder's dump) instead of tracing, with the same output", &read_set },
	{ "dump", OPT_DUMP, "PID: what the event rings of process PID hold (BLITZ_FLIGHT, the "
	  "flight recorder), read without stopping it: into -w FILE, else analysed", &dump_set },
	{ "discard", OPT_DISCARD, "A worker whose ring is full drops records at once (counted), "
	  "instead of waiting for the tool", &discard },
	{ "block-ms", OPT_BLOCK_MS, "MS: a worker whose ring is full waits for the tool this "
	  "long at most, then drops records (counted; default 100)", &block_set },
	{ 0 },
};

const struct tool_def events_def = {
	.name = "events",
	.summary = "Record every scheduling event of blitz workers through the runtime's event "
		   "log (rings in shared memory: no probe hit per event): events per worker, "
		   "poll time and schedule latency paired from the records, what was lost.",
	.examples =
		"    blitz-events                # at Ctrl-C: events per worker, two histograms\n"
		"    blitz-events -u 1           # in microseconds, every second\n"
		"    blitz-events -r > ev.txt    # and every event, in time order\n"
		"    blitz-events -j -r > ev.json\n"
		"    blitz-events -w ev.trace    # the logs packed into a file; then:\n"
		"    blitz-events --read ev.trace -j\n"
		"    blitz-events --dump PID     # a BLITZ_FLIGHT process's last events\n",
	.opts = TOOL_OPT_UNITS,
	.unit = UNIT_NS,
	.flags = flags,
};

/* ---- Options with a value ---- */

/*
 * struct tool_flag declares options without a value; the four with one
 * are flags there too (their line in --help, and argp knows their names),
 * and take_values() takes each one's value out of argv before argp
 * parses it, leaving the bare option.
 */
struct value_opt {
	const char *name;
	const char *what;		/* its value, as the errors name it */
	const char **value;
};

/* The first, --write, is also -w. */
static const struct value_opt value_opts[] = {
	{ "write", "FILE", &write_path },
	{ "read", "FILE", &read_path },
	{ "dump", "PID", &dump_arg },
	{ "block-ms", "number of ms", &block_arg },
	{ 0 },
};

/* usage_die - a bad command line: one line, exit 2 (as tool_args.c's). */
static void __attribute__((format(printf, 1, 2), noreturn)) usage_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "blitz-%s: ", events_def.name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (--help lists the options)\n");
	exit(2);
}

/* long_value - @arg is "--NAME" or "--NAME=VALUE" of a value option: which one. */
static const struct value_opt *long_value(const char *arg, const char **inline_value)
{
	for (const struct value_opt *o = value_opts; o->name; o++) {
		size_t len = strlen(o->name);

		if (strncmp(arg + 2, o->name, len))
			continue;
		if (arg[2 + len] == '\0') {
			*inline_value = NULL;
			return o;
		}
		if (arg[2 + len] == '=') {
			*inline_value = arg + 3 + len;
			return o;
		}
	}
	return NULL;
}

/*
 * take_values - argv without the values of the value options ("-w FILE",
 * "-wFILE", "-rw FILE", "--write FILE", "--write=FILE"), each kept in its
 * variable: what argp then parses.  Stops at "--".
 */
static char **take_values(int *argc, char **argv)
{
	char **out = calloc((size_t)*argc + 1, sizeof(*out));
	int n = 0;

	if (!out)
		usage_die("out of memory");
	for (int i = 0; i < *argc; i++) {
		const struct value_opt *o = NULL;
		const char *arg = argv[i], *v = NULL;

		if (i == 0 || arg[0] != '-' || arg[1] == '\0') {
			out[n++] = argv[i];
			continue;
		}
		if (!strcmp(arg, "--")) {
			while (i < *argc)
				out[n++] = argv[i++];
			break;
		}
		if (arg[1] == '-') {
			o = long_value(arg, &v);
			if (o) {
				char *bare;

				if (asprintf(&bare, "--%s", o->name) < 0)
					usage_die("out of memory");
				out[n++] = bare;
			} else {
				out[n++] = argv[i];
			}
		} else {
			/* A cluster of short options: -p and -b take the rest, -w too. */
			size_t k;

			for (k = 1; arg[k] && arg[k] != 'p' && arg[k] != 'b' && arg[k] != 'w'; k++)
				;
			if (arg[k] == 'w') {
				o = &value_opts[0];
				v = arg[k + 1] ? arg + k + 1 : NULL;
				out[n++] = strndup(arg, k + 1);
			} else {
				out[n++] = argv[i];
				/* -p PID, -b PATH: their value is the next word, as it is. */
				if (arg[k] && !arg[k + 1] && i + 1 < *argc)
					out[n++] = argv[++i];
			}
		}
		if (!o)
			continue;
		if (!v) {
			if (i + 1 >= *argc)
				usage_die("option '--%s' needs a %s", o->name, o->what);
			v = argv[++i];
		}
		*o->value = v;
	}
	out[n] = NULL;
	*argc = n;
	return out;
}

/* parse_num - @arg as a whole number from @lo to @hi, or a usage error. */
long parse_num(const char *what, const char *arg, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < lo || v > hi)
		usage_die("invalid %s: %s", what, arg);
	return v;
}

/* options_check - the options' values and what goes with what. */
static void options_check(struct state *st)
{
	st->mode = discard ? BLITZ_RING_DISCARD : BLITZ_RING_BLOCK;
	st->block_ms = BLOCK_MS_DEFAULT;
	/* A flag without its value: argp took an abbreviation (--wr) take_values does not. */
	if (write_set && !write_path)
		usage_die("option '--write' needs a FILE");
	if (read_set && !read_path)
		usage_die("option '--read' needs a FILE");
	if (dump_set && !dump_arg)
		usage_die("option '--dump' needs a PID");
	if (block_set && !block_arg)
		usage_die("option '--block-ms' needs a number of ms");
	if (block_arg)
		st->block_ms = (__u32)parse_num("--block-ms", block_arg, 0, 60000);
	if (read_path && dump_arg)
		usage_die("--read and --dump: one input at a time");
	if ((read_path || dump_arg) && (discard || block_arg))
		usage_die("--discard and --block-ms set a live ring's mode: not with --read or --dump");
	if (discard && block_arg)
		usage_die("--block-ms is the wait of the blocking mode: not with --discard");
	if (dump_arg && st->env->pid)
		usage_die("--dump names its process: not with -p");
	if (write_path && with_records)
		usage_die("-w writes the logs, not the analysis: -r goes with it (--read FILE -r)");
	if (write_raw && !write_path)
		usage_die("--raw is how -w writes: not without -w FILE");
}

/* ---- Reading: the loop while tracing ---- */

/*
 * drain - read for @timeout_ms: the rings, and the ring buffers (the
 * flushes of event_flush, the announcements of rings), as long as there
 * is something; a sleep only after a pass that found nothing, doubled
 * from 50 us to 1 ms while nothing comes and halved by a pass that found
 * something (a worker's ring holds a few milliseconds of its busiest
 * pace; an idle worker commits a log at a park, every 10 ms or so), or
 * until an announcement when no ring is mapped.  Settling (and -r's
 * text) ten times a second at most.  Once nothing has come for a
 * millisecond or so, -w's buffer goes to the file, so that a file
 * watched while the tool runs holds every log read.
 */
static int drain(void *ctx, int timeout_ms)
{
	struct state *st = ctx;
	double now = now_mono(), end = now + timeout_ms / 1000.0;

	do {
		__u64 got = rings_take(st);

		/* Ctrl-C ends the take: the print that follows takes the rest. */
		got += tool_ring_take(st->rb, 0, RING_CHUNKS, false) != 0;
		now = now_mono();
		if (now - st->last_settle >= 0.1) {
			settle(st);
			st->last_settle = now;
			/* -r, text: the records stream out as they settle, not held to the print. */
			if (with_records && !st->env->json) {
				records_out(st, NULL, false);
				fflush(stdout);
			}
		}
		if (got) {
			st->idle_us /= 2;
			continue;
		}
		st->idle_us = st->idle_us < 50 ? 50 : st->idle_us * 2;
		if (st->idle_us > 1000)
			st->idle_us = 1000;
		if (st->idle_us == 1000)
			trace_flush(st);	/* idle: the file holds what was read */
		if (!st->rings.n) {
			int ms = (int)((end - now) * 1000) + 1;

			tool_ring_take(st->rb, ms > 100 ? 100 : ms, RING_CHUNKS, false);
		} else if (st->idle_us < 1000) {
			struct timespec ts = { 0, st->idle_us * 1000 };

			nanosleep(&ts, NULL);
		} else {
			tool_ring_take(st->rb, 1, RING_CHUNKS, false);	/* an announcement wakes it */
		}
		now = now_mono();
	} while (now < end && !tool_exiting);
	return 0;
}

/* ---- The three ways in: tracing, a trace file, a process's rings ---- */

/* trace_main - the probes attached, the rings and flushes read until the end. */
static int trace_main(struct state *st)
{
	struct tool_env *env = st->env;
	bool last;

	tool_setup(env);
	if (write_path)
		trace_open(st);	/* a path it cannot write fails before anything is attached */
	st->skel = tool_opened(env, events_bpf__open());
	tool_loaded(env, events_bpf__load(st->skel));
	st->rb = ring_buffer__new(bpf_map__fd(st->skel->maps.notes), on_note, st, NULL);
	if (!st->rb || ring_buffer__add(st->rb, bpf_map__fd(st->skel->maps.chunks), on_chunk, st))
		tool_die(env, "cannot open the ring buffers: %s", strerror(errno));
	atexit(rings_release_at_exit);
	tool_attach(env, st->skel->obj);
	tool_banner(env, "blitz scheduling events (the event log)");
	do {
		last = tool_wait(env, drain, st);
		print(st, last);
	} while (!last);

	rings_leave(st, false);
	tool_detach(env);
	rings_leave(st, true);
	ring_buffer__free(st->rb);
	events_bpf__destroy(st->skel);
	return 0;
}

int main(int argc, char **argv)
{
	struct tool_env env = { 0 };
	struct state st = { .env = &env };
	char **args = take_values(&argc, argv);
	int rc;

	st.w = ARRAY_OF(struct wstate);
	st.g = ARRAY_OF(struct group *);
	st.pend = ARRAY_OF(struct pending *);
	st.rings = ARRAY_OF(struct ring);
	st.fulls = ARRAY_OF(struct full);
	st.spans = ARRAY_OF(struct span);
	the_state = &st;
	tool_parse_args(&env, &events_def, argc, args);
	options_check(&st);
	st.div = unit_div(env.unit);
	st.offline = read_path || dump_arg;
	if (write_path && st.offline)
		trace_open(&st);
	if (read_path)
		rc = read_main(&st);
	else if (dump_arg)
		rc = dump_main(&st);
	else
		rc = trace_main(&st);

	the_state = NULL;
	for (size_t i = 0; i < st.g.n; i++)
		group_free(grp(&st, i));
	array_free(&st.g);
	for (size_t i = 0; i < st.pend.n; i++)
		free(pend_at(&st, i));
	free(st.spare);
	array_free(&st.pend);
	array_free(&st.rings);
	array_free(&st.w);
	array_free(&st.fulls);
	array_free(&st.spans);
	free(args);
	return rc;
}
