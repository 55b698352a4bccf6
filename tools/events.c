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
 * way a whole log goes through consume_log(): written raw to a trace
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
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "bpf_setup.h"
#include "hist_output.h"
#include "json_writer.h"
#include "print_loop.h"
#include "tool_args.h"
#include "usdt_target.h"
#include "events.h"
#include "events.skel.h"

/* The default longest wait of a worker whose ring is full (BLITZ_RING_BLOCK). */
#define BLOCK_MS_DEFAULT	100

static bool with_records, discard;
/* Set by argp for the options with a value (take_values() took the value out first). */
static bool write_set, read_set, dump_set, block_set;
static const char *write_path, *read_path, *dump_arg, *block_arg;

enum {
	OPT_READ = 0x2001,
	OPT_DUMP,
	OPT_BLOCK_MS,
	OPT_DISCARD,
};

static const struct tool_flag flags[] = {
	{ "records", 'r', "Every record too, in time order: a line per event (text) or a "
	  "\"records\" array (-j)", &with_records },
	{ "write", 'w', "FILE: write the logs raw into the trace FILE, no analysis (the "
	  "cheapest reader; --read FILE analyses it)", &write_set },
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

static const struct tool_def def = {
	.name = "events",
	.summary = "Record every scheduling event of blitz workers through the runtime's event "
		   "log (rings in shared memory: no probe hit per event): events per worker, "
		   "poll time and schedule latency paired from the records, what was lost.",
	.examples =
		"    blitz-events                # at Ctrl-C: events per worker, two histograms\n"
		"    blitz-events -u 1           # in microseconds, every second\n"
		"    blitz-events -r > ev.txt    # and every event, in time order\n"
		"    blitz-events -j -r > ev.json\n"
		"    blitz-events -w ev.trace    # the logs raw; then:\n"
		"    blitz-events --read ev.trace -j\n"
		"    blitz-events --dump PID     # a BLITZ_FLIGHT process's last events\n",
	.opts = TOOL_OPT_UNITS,
	.unit = UNIT_NS,
	.flags = flags,
};

static const char *const type_names[BLITZ_EVENT_TYPES] = {
	[BLITZ_EVENT_SPAWN] = "spawn", [BLITZ_EVENT_SCHEDULE] = "schedule",
	[BLITZ_EVENT_POLL_START] = "poll_start",
	[BLITZ_EVENT_POLL_END] = "poll_end", [BLITZ_EVENT_STEAL] = "steal",
	[BLITZ_EVENT_PARK] = "park", [BLITZ_EVENT_UNPARK] = "unpark",
	[BLITZ_EVENT_READER_WAIT] = "reader_wait",
};
/* Every type is named (a JSON key, a column): a new one needs its name above. */
_Static_assert(BLITZ_EVENT_TYPES == BLITZ_EVENT_READER_WAIT + 1, "a record type without a name");

/*
 * A queueing waiting for the poll that takes it, or a poll's start
 * waiting for its queueing (its log came first), keyed by (task, seq).
 */
struct held {
	__u64 task;			/* 0: an empty slot (ids start at 1) */
	__u64 ticks;
	__u32 seq;
	__u32 poll;			/* 1: a poll's start, 0: a queueing */
};

/* Open addressing, linear probing, at most half full. */
struct held_table {
	struct held *e;
	size_t cap, n, polls;
};

/*
 * One runtime of one process: its workers' count (from the logs' heads),
 * the clock factor of its process, what waits for its pair, and the
 * ticks that the losses of its writers span.
 */
struct group {
	__u32 tgid;
	__u32 workers;
	__u64 runtime;
	__u64 mult;
	struct held_table held;
	bool gone;			/* the process has exited: all it logged is here */
	__u64 upto;			/* the tick before which all its records are here (settled) */
	bool lossy;			/* a record of it was lost, between loss_from and loss_to */
	__u64 loss_from, loss_to;
};

/* Nested polls followed per worker (deeper: their time is not taken). */
#define POLL_DEPTH	64

/* One worker (or thread that is not a worker: worker -1) of one runtime of one process. */
struct wstate {
	__u32 tgid;
	__s32 worker;
	__u32 thread;			/* the writer's thread id (tells apart the logs of worker -1) */
	__u64 runtime;
	struct group *g;
	__u64 seq;			/* the last log seen */
	__u64 flushed;			/* its tick: later records of this worker come after it */
	__u64 last;			/* the tick of its last record */
	__u64 events[BLITZ_EVENT_TYPES];	/* this print */
	__u64 ready, stolen;		/* this print: polls that completed, tasks stolen */
	__u64 waited;			/* this print: ns the worker waited for this tool (reader_wait) */
	__u64 missed;			/* this print: logs not seen (a gap in seq) */
	__u64 lost;			/* this print: records lost (the logs' head.lost) */
	bool lossy;			/* a loss since the window began: an end may miss its start */
	/*
	 * The polls started and not ended, innermost last: a join on a
	 * worker polls other tasks inside its own poll (a start, then the
	 * nested polls' starts and ends, then its end).
	 */
	__u32 depth;
	__u64 open_task[POLL_DEPTH], open_ticks[POLL_DEPTH];
};

/* Records of one writer lost between two ticks (or whole logs: a gap in seq). */
struct span {
	__u32 tgid, thread;
	__s32 worker;
	__u64 runtime, mult;
	__u64 from, to;			/* ticks */
	__u64 records, logs;
};

/* A record with where it came from, for -r. */
struct full {
	struct blitz_event ev;
	__u64 mult;
	__u32 tgid, thread;
	__s32 worker;
};

/* A flush that the BPF side's chunks are bringing in, per writing thread. */
struct pending {
	__u32 tgid;
	__u32 next;			/* the index in the flush of the record expected next */
	__u32 n;			/* records held */
	bool gone;			/* its process exited: closed once its last chunks are in */
	struct blitz_event_log_head head;
	struct blitz_event rec[BLITZ_EVENT_LOG_RECORDS];
};

/* A worker's ring, mapped from its process (or only announced, if that failed). */
struct ring {
	__u32 tgid;
	__s32 worker;
	__u64 runtime;
	int fd;				/* the process's descriptor: /proc/TGID/fd/FD */
	size_t bytes;
	dev_t dev;			/* the memfd: a new one may come with the same number */
	ino_t ino;
	struct blitz_event_ring *map;	/* NULL: not mapped */
	__u64 window;			/* the worker's window being read */
	__u64 next;			/* the next log to take */
	__u64 consumed;			/* what this tool last stored in map->consumed */
	__u64 told;			/* records lost in this window that its logs told */
	struct blitz_event_log_head last;	/* the head of the last log read */
	__u32 mode0, block0;		/* as found: put back as the tool leaves */
	bool backlog;			/* found overwriting (a flight recorder): not read yet */
	bool warned;			/* its failure to map is told once */
};

struct state {
	struct tool_env *env;
	struct events_bpf *skel;
	struct ring_buffer *rb;
	struct array w;			/* struct wstate */
	struct array g;			/* struct group * */
	struct array pend;		/* struct pending *: flushes half in */
	struct pending *spare;		/* a freed one, for the next flush */
	struct array rings;		/* struct ring */
	struct array fulls;		/* struct full (-r) */
	struct array spans;		/* struct span: this print */
	struct hist poll, sched;	/* this print, in the unit */
	__u64 div;			/* ns per unit */
	/* This print: polls with no logged queueing, ends without a start, a queueing logged
	   twice, queueings still waiting for their poll at the process's exit. */
	__u64 unpaired_polls, unpaired_polls_end, stale_schedules, never_polled;
	__u64 late;			/* this print: queueings that came after their poll */
	__u64 untrusted;		/* this print: marks a lost span may have paired */
	__u64 untrusted_polls;		/* this print: of them, poll starts (their queueing) */
	__u64 lost;			/* this print: records lost (in the spans) */
	__u64 logs, ring_logs;		/* this print: logs taken, of them from rings */
	__u64 bad_records;		/* this print: records of no known type */
	__u64 rings_missed;		/* rings announced that could not be read (their records) */
	__u64 prev_flushes, prev_bad, prev_lost;
	double last_settle;		/* CLOCK_MONOTONIC s of the last settling */
	long idle_us;			/* drain's next sleep, if a pass finds nothing */
	__u64 origin;			/* ticks of the first record taken: ns 0 of -r and spans */
	bool have_origin;
	bool records_headed;		/* -r, text: the column header is above the last lines */
	bool offline;			/* --read, --dump: nothing more comes after the input */
	bool leaving;			/* the rings are being let go */
	/* -w */
	FILE *out;
	__u64 out_logs, out_records;	/* this print */
	/* --block-ms, --discard: what the rings are set to */
	__u32 block_ms, mode;
};

/* The state, for the exit handler that lets the rings go (rings_release). */
static struct state *the_state;

static void *push(struct state *st, struct array *a)
{
	void *e = array_push(a);

	if (!e)
		tool_die(st->env, "out of memory holding %zu entries", a->n);
	return e;
}

static struct wstate *wst(const struct state *st, size_t i)
{
	return array_at(&st->w, i);
}

static struct group *grp(const struct state *st, size_t i)
{
	return *(struct group **)array_at(&st->g, i);
}

static struct ring *ring_at(const struct state *st, size_t i)
{
	return array_at(&st->rings, i);
}

static struct pending *pend_at(const struct state *st, size_t i)
{
	return *(struct pending **)array_at(&st->pend, i);
}

static __u64 to_ns(__u64 ticks, __u64 mult)
{
	return (__u64)(((unsigned __int128)ticks * mult) >> 32);
}

/* ns of @ticks since the origin (signed: a record may precede it). */
static long long rel_ns(const struct state *st, __u64 ticks, __u64 mult)
{
	return ticks >= st->origin ? (long long)to_ns(ticks - st->origin, mult)
				   : -(long long)to_ns(st->origin - ticks, mult);
}

static bool pid_gone(__u32 pid)
{
	return kill((pid_t)pid, 0) && errno == ESRCH;
}

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

	fprintf(stderr, "blitz-%s: ", def.name);
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
static long parse_num(const char *what, const char *arg, long lo, long hi)
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
		usage_die("-w writes the logs raw: -r goes with the analysis (--read FILE -r)");
}

/* ---- Writers and runtimes ---- */

static struct group *group_get(struct state *st, __u32 tgid, __u64 runtime, __u32 workers)
{
	struct group *g;

	for (size_t i = 0; i < st->g.n; i++)
		if (grp(st, i)->tgid == tgid && grp(st, i)->runtime == runtime)
			return grp(st, i);
	g = calloc(1, sizeof(*g));
	if (!g)
		tool_die(st->env, "out of memory");
	*(struct group **)push(st, &st->g) = g;
	g->tgid = tgid;
	g->runtime = runtime;
	g->workers = workers;
	return g;
}

static struct wstate *wstate_get(struct state *st, const struct blitz_event_log_head *h)
{
	struct wstate *w;

	for (size_t i = 0; i < st->w.n; i++) {
		w = wst(st, i);
		if (w->tgid != h->pid || w->worker != h->worker || w->runtime != h->runtime ||
		    (h->worker < 0 && w->thread != h->thread))
			continue;
		if (!w->g)	/* its process ended and was settled: a new one with its pid */
			w->g = group_get(st, h->pid, h->runtime, h->workers);
		return w;
	}
	w = push(st, &st->w);
	w->tgid = h->pid;
	w->worker = h->worker;
	w->thread = h->thread;
	w->runtime = h->runtime;
	w->g = group_get(st, h->pid, h->runtime, h->workers);
	return w;
}

/* ---- Pairing a queueing with its poll: (task, seq) ---- */

static size_t held_home(const struct held_table *t, __u64 task, __u32 seq)
{
	__u64 h = task * 0x9e3779b97f4a7c15ull ^ (__u64)seq * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h >> 29) & (t->cap - 1);
}

/* held_find - the slot of (@task, @seq) in @t, or the empty one where it would go. */
static size_t held_find(const struct held_table *t, __u64 task, __u32 seq)
{
	size_t i = held_home(t, task, seq);

	while (t->e[i].task && (t->e[i].task != task || t->e[i].seq != seq))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void held_grow(struct state *st, struct held_table *t)
{
	struct held_table nt = { .cap = t->cap ? 2 * t->cap : 1024, .n = t->n, .polls = t->polls };

	nt.e = calloc(nt.cap, sizeof(*nt.e));
	if (!nt.e)
		tool_die(st->env, "out of memory holding %zu queueings and polls", t->n);
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].task)
			nt.e[held_find(&nt, t->e[i].task, t->e[i].seq)] = t->e[i];
	free(t->e);
	*t = nt;
}

/* held_remove - empty slot @i, moving back the entries of its run that would miss it. */
static void held_remove(struct held_table *t, size_t i)
{
	size_t j = i;

	t->polls -= t->e[i].poll;
	t->n--;
	t->e[i].task = 0;
	for (;;) {
		size_t home;

		j = (j + 1) & (t->cap - 1);
		if (!t->e[j].task)
			return;
		home = held_home(t, t->e[j].task, t->e[j].seq);
		/* Moved back unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->e[i] = t->e[j];
		t->e[j].task = 0;
		i = j;
	}
}

static void held_free(struct held_table *t)
{
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static void sched_record(struct state *st, const struct group *g, __u64 from, __u64 to)
{
	__u64 ns = to_ns(to - from, g->mult);

	hist_record(&st->sched, ns / st->div, ns);
}

/*
 * pair_mark - a queueing (@poll 0) or a poll's start (@poll 1) of @task's
 * queueing number @seq: paired with its other half if that came first
 * (schedule latency), else held for it.  A poll stamped before its
 * queueing (rdtsc is not fenced: docs/probes.md) is counted unpaired.
 */
static void pair_mark(struct state *st, struct group *g, __u64 task, __u32 seq, __u64 ticks,
		      bool poll)
{
	struct held *e;
	__u64 q, p;

	if (!task)
		return;
	if (2 * (g->held.n + 1) > g->held.cap)
		held_grow(st, &g->held);
	e = &g->held.e[held_find(&g->held, task, seq)];
	if (!e->task) {
		*e = (struct held){ .task = task, .ticks = ticks, .seq = seq, .poll = poll };
		g->held.n++;
		g->held.polls += poll;
		return;
	}
	if (e->poll == poll) {
		/* Logged twice: the layout's promise broken; the later one is kept. */
		if (poll)
			st->unpaired_polls++;
		else
			st->stale_schedules++;
		e->ticks = ticks;
		return;
	}
	q = poll ? e->ticks : ticks;
	p = poll ? ticks : e->ticks;
	/* The queueing came after its poll: a thread's log flushed late, or another worker's. */
	st->late += !poll;
	if (p >= q)
		sched_record(st, g, q, p);
	else
		st->unpaired_polls++;
	held_remove(&g->held, (size_t)(e - g->held.e));
}

/*
 * group_final - @g's process has exited: what still waits never pairs.
 * A queueing no earlier than the last lost record of the runtime, or a
 * poll no later than its first, may have lost its other half in a span:
 * untrusted; the rest never had one in the window (queued before the
 * tool came, or never polled).
 */
static void group_final(struct state *st, struct group *g)
{
	for (size_t i = 0; i < g->held.cap; i++) {
		const struct held *h = &g->held.e[i];

		if (!h->task)
			continue;
		if (g->lossy && (h->poll ? h->ticks >= g->loss_from : h->ticks <= g->loss_to)) {
			st->untrusted++;
			st->untrusted_polls += h->poll;
		} else if (h->poll)
			st->unpaired_polls++;
		else
			st->never_polled++;
	}
	held_free(&g->held);
}

/* group_free - @g and what it still holds (counted by the caller). */
static void group_free(struct group *g)
{
	held_free(&g->held);
	free(g);
}

/* ---- Losses ---- */

/*
 * span_add - @records records, or @logs whole logs (their records
 * unknown), of @h's writer lost between the ticks @from and @to.
 */
static void span_add(struct state *st, const struct blitz_event_log_head *h, __u64 from, __u64 to,
		     __u64 records, __u64 logs)
{
	struct span *s = push(st, &st->spans);

	if (from > to) {
		__u64 t = from;

		from = to;
		to = t;
	}
	*s = (struct span){ .tgid = h->pid, .thread = h->thread, .worker = h->worker,
			    .runtime = h->runtime, .mult = h->ticks_mult, .from = from, .to = to,
			    .records = records, .logs = logs };
	st->lost += records;
}

/*
 * loss_mark - @w lost records between the ticks @from and @to: the polls
 * it has open are dropped (untrusted: their end may be lost, and a later
 * end of their task would be another poll's), and its runtime's leftovers
 * in that span are not counted as unpaired (group_final).
 */
static void loss_mark(struct state *st, struct wstate *w, __u64 from, __u64 to)
{
	struct group *g = w->g;

	if (from > to) {
		__u64 t = from;

		from = to;
		to = t;
	}
	st->untrusted += w->depth;
	w->depth = 0;
	w->lossy = true;
	if (!g->lossy || from < g->loss_from)
		g->loss_from = from;
	if (!g->lossy || to > g->loss_to)
		g->loss_to = to;
	g->lossy = true;
}

/* ---- One log's records ---- */

static void poll_open(struct wstate *w, const struct blitz_event *e)
{
	if (w->depth < POLL_DEPTH) {
		w->open_task[w->depth] = e->task;
		w->open_ticks[w->depth] = e->ticks;
	}
	w->depth++;
}

/*
 * poll_end - @e ends the innermost open poll of its task on @w: its time.
 * An end with no open poll of its task (the window began inside the
 * poll, or its start was lost) is unpaired (untrusted after a loss), and
 * so are polls left open inside it.
 */
static void poll_end(struct state *st, struct wstate *w, const struct blitz_event *e, __u64 mult)
{
	__u32 d = w->depth;
	__u64 *count = w->lossy ? &st->untrusted : &st->unpaired_polls_end;

	while (d > 0 && (d > POLL_DEPTH || w->open_task[d - 1] != e->task))
		d--;
	if (d == 0) {
		(*count)++;
		return;
	}
	*count += w->depth - d;
	w->depth = d - 1;
	if (e->ticks >= w->open_ticks[d - 1]) {
		__u64 ns = to_ns(e->ticks - w->open_ticks[d - 1], mult);

		hist_record(&st->poll, ns / st->div, ns);
	}
}

/* take - one record of @w's log, in the log's order. */
static void take(struct state *st, struct wstate *w, const struct blitz_event *e, __u64 mult)
{
	if (e->type == 0 || e->type >= BLITZ_EVENT_TYPES) {
		st->bad_records++;
		return;
	}
	w->events[e->type]++;
	switch (e->type) {
	case BLITZ_EVENT_POLL_START:
		poll_open(w, e);
		pair_mark(st, w->g, e->task, e->seq, e->ticks, true);
		break;
	case BLITZ_EVENT_SPAWN:
	case BLITZ_EVENT_SCHEDULE:
		pair_mark(st, w->g, e->task, e->seq, e->ticks, false);
		break;
	case BLITZ_EVENT_POLL_END:
		poll_end(st, w, e, mult);
		w->ready += e->code != 0;
		break;
	case BLITZ_EVENT_STEAL:
		w->stolen += e->arg;
		break;
	case BLITZ_EVENT_READER_WAIT:
		w->waited += e->arg;
		break;
	}
	if (with_records) {
		struct full *f = push(st, &st->fulls);

		*f = (struct full){ .ev = *e, .mult = mult, .tgid = w->tgid, .worker = w->worker,
				    .thread = w->thread };
	}
}

/*
 * log_take - the analysis of one log (or a piece of one: the BPF side's
 * chunks with a loss between them repeat its seq): a gap in the writer's
 * seq is a span of whole logs lost, the head's loss comes before the
 * records, and the flush's tick settles the writer's records up to it.
 */
static void log_take(struct state *st, const struct blitz_event_log_head *h,
		     const struct blitz_event *rec, __u32 n)
{
	struct wstate *w = wstate_get(st, h);
	__u64 prev = w->last ? w->last : w->flushed;

	w->g->mult = h->ticks_mult;
	if (h->seq != w->seq) {
		/* A new window restarts seq at 1. */
		if (w->seq && h->seq > w->seq + 1) {
			__u64 gap = h->seq - w->seq - 1, to = n ? rec[0].ticks : h->flushed;

			w->missed += gap;
			span_add(st, h, prev, to ? to : prev, 0, gap);
			loss_mark(st, w, prev, to ? to : prev);
		}
		w->seq = h->seq;
	}
	if (h->lost) {
		w->lost += h->lost;
		loss_mark(st, w, h->lost_from, h->lost_to);
	}
	for (__u32 i = 0; i < n; i++)
		take(st, w, &rec[i], h->ticks_mult);
	if (n)
		w->last = rec[n - 1].ticks;
	if (h->flushed)
		w->flushed = h->flushed;
}

/* ---- The trace file (-w, --read) ---- */

static void trace_open(struct state *st)
{
	struct blitz_event_file_head fh = {
		.magic = BLITZ_EVENT_FILE_MAGIC, .version = BLITZ_EVENTS_VERSION,
		.head_size = sizeof(struct blitz_event_log_head),
		.record_size = sizeof(struct blitz_event),
	};

	st->out = fopen(write_path, "wb");
	if (!st->out)
		tool_die(st->env, "cannot write %s: %s", write_path, strerror(errno));
	/* Whole logs per write(): the cheapest reader makes few system calls. */
	setvbuf(st->out, NULL, _IOFBF, 1 << 20);
	if (fwrite(&fh, sizeof(fh), 1, st->out) != 1)
		tool_die(st->env, "cannot write %s: %s", write_path, strerror(errno));
}

/* trace_put - one log into the file: its head (count: @n) and @n records. */
static void trace_put(struct state *st, const struct blitz_event_log_head *h,
		      const struct blitz_event *rec, __u32 n)
{
	struct blitz_event_log_head c = *h;

	c.count = n;
	if (fwrite(&c, sizeof(c), 1, st->out) != 1 ||
	    (n && fwrite(rec, sizeof(*rec), n, st->out) != n))
		tool_die(st->env, "cannot write %s: %s", write_path, strerror(errno));
	st->out_logs++;
	st->out_records += n;
}

static void trace_close(struct state *st)
{
	if (st->out && (fflush(st->out) || ferror(st->out) || fclose(st->out)))
		tool_die(st->env, "cannot write %s: %s", write_path, strerror(errno));
	st->out = NULL;
}

/*
 * consume_log - a whole log from either transport (or from a file): its
 * loss into the spans, then into the trace file (-w) or analysed.  A log
 * this tool made to tell a loss no log told (no record in it) goes the
 * same way, but is not counted among the logs taken (st->logs).
 * Returns whether it was taken (-p keeps one process's).
 */
static bool consume_log(struct state *st, const struct blitz_event_log_head *h,
			const struct blitz_event *rec, __u32 n)
{
	if (st->leaving || (st->env->pid && h->pid != (__u32)st->env->pid))
		return false;
	if (!st->have_origin && n) {
		st->origin = rec[0].ticks;
		st->have_origin = true;
	}
	if (h->lost)
		span_add(st, h, h->lost_from, h->lost_to, h->lost, 0);
	if (st->out)
		trace_put(st, h, rec, n);
	else
		log_take(st, h, rec, n);
	return true;
}

/* ---- The BPF side's chunks: the logs of event_flush ---- */

static struct pending *pending_get(struct state *st, __u32 tgid, __u32 thread)
{
	struct pending *p;

	for (size_t i = 0; i < st->pend.n; i++) {
		p = pend_at(st, i);
		if (p->tgid == tgid && p->head.thread == thread)
			return p;
	}
	return NULL;
}

/* pending_new - a flush of @c's thread begins (or goes on after a hole). */
static struct pending *pending_new(struct state *st, const struct events_chunk *c)
{
	struct pending *p = st->spare;

	st->spare = NULL;
	if (!p && !(p = malloc(sizeof(*p))))
		tool_die(st->env, "out of memory");
	*(struct pending **)push(st, &st->pend) = p;
	p->tgid = c->tgid;
	p->n = 0;
	p->gone = false;
	p->head = c->head;
	if (!p->head.pid)
		p->head.pid = c->tgid;
	/* The runtime's count of lost records comes before its log's first record. */
	if (c->first)
		p->head.lost = p->head.lost_from = p->head.lost_to = 0;
	if (c->lost) {
		if (!p->head.lost || c->lost_from < p->head.lost_from)
			p->head.lost_from = c->lost_from;
		if (!p->head.lost || c->lost_to > p->head.lost_to)
			p->head.lost_to = c->lost_to;
		p->head.lost += c->lost;
	}
	return p;
}

/*
 * pending_out - what @p holds, as a log: the whole flush (@whole), or the
 * part before a hole (its flush's tick then not yet reached).
 */
static void pending_out(struct state *st, struct pending *p, bool whole)
{
	struct blitz_event_log_head h = p->head;

	h.count = p->n;
	if (!whole)
		h.flushed = 0;
	if (consume_log(st, &h, p->rec, p->n))
		st->logs += whole;
	for (size_t i = 0; i < st->pend.n; i++) {
		if (pend_at(st, i) != p)
			continue;
		*(struct pending **)array_at(&st->pend, i) =
			*(struct pending **)array_at(&st->pend, st->pend.n - 1);
		st->pend.n--;
		break;
	}
	if (st->spare)
		free(p);
	else
		st->spare = p;
}

/*
 * on_chunk - part of a flush.  Its chunks come in order; one missing (the
 * ring buffer was full) makes a hole, whose records the next chunk that
 * got through counts (events.bpf.c: loss_carry): the flush is taken as
 * the piece before the hole and the piece after it, that loss at its head.
 */
static int on_chunk(void *ctx, void *data, size_t size)
{
	struct state *st = ctx;
	const struct events_chunk *c = data;
	struct pending *p;
	__u32 n;

	if (size < sizeof(*c))
		return tool_sample_taken();
	p = pending_get(st, c->tgid, c->head.thread);
	if (p && (c->first == 0 || c->head.seq != p->head.seq)) {
		pending_out(st, p, true);	/* the flush before: its last chunks were lost */
		p = NULL;
	} else if (p && (c->lost || c->first != p->next)) {
		pending_out(st, p, false);	/* a hole in this one */
		p = NULL;
	}
	if (!p)
		p = pending_new(st, c);
	n = c->count < EVENTS_CHUNK ? c->count : EVENTS_CHUNK;
	if (n > BLITZ_EVENT_LOG_RECORDS - p->n)
		n = BLITZ_EVENT_LOG_RECORDS - p->n;
	memcpy(p->rec + p->n, c->rec, n * sizeof(*c->rec));
	p->n += n;
	p->next = c->first + c->count;
	if (c->last)
		pending_out(st, p, true);
	return tool_sample_taken();
}

/* The most entries the ring buffers hold: a take of as many empties them (tool_ring_take). */
#define RING_CHUNKS	(EVENTS_RINGBUF_BYTES / sizeof(struct events_chunk) + \
			 EVENTS_NOTES_BYTES / sizeof(struct events_note))

/* take_all - what the ring buffers hold, Ctrl-C or not (before a print, a process's end). */
static void take_all(struct state *st)
{
	if (st->rb)
		tool_ring_take(st->rb, 0, RING_CHUNKS, true);
}

/*
 * losses_drain - the losses the BPF side could not yet hand over (no
 * chunk of their thread got through since), of process @tgid (0: all),
 * each as a log of no records with that loss at its head.
 */
static void losses_drain(struct state *st, __u32 tgid)
{
	int fd = st->skel ? bpf_map__fd(st->skel->maps.losses) : -1;
	static __u32 keys[EVENTS_LOSS_THREADS];
	__u32 *prev = NULL;
	size_t n = 0;
	struct events_loss l;

	if (fd < 0)
		return;
	/* The keys first: a delete during the walk would restart it. */
	while (n < EVENTS_LOSS_THREADS && !bpf_map_get_next_key(fd, prev, &keys[n])) {
		prev = &keys[n];
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		__u32 key = keys[i];

		if (bpf_map_lookup_elem(fd, &key, &l) || (tgid && l.tgid != tgid) || !l.records)
			continue;
		bpf_map_delete_elem(fd, &key);
		consume_log(st, &(struct blitz_event_log_head){
				.size = sizeof(struct blitz_event), .capacity = BLITZ_EVENT_LOG_RECORDS,
				.worker = l.worker, .thread = key, .version = BLITZ_EVENTS_VERSION,
				.runtime = l.runtime, .seq = l.seq, .ticks_mult = l.ticks_mult,
				.pid = l.tgid, .lost = l.records, .lost_from = l.from, .lost_to = l.to,
			    }, NULL, 0);
	}
}

/* ---- The rings ---- */

static const struct blitz_event_log *ring_slot(const struct blitz_event_ring *r, __u64 n)
{
	return (const void *)((const char *)r + BLITZ_EVENT_RING_HEAD +
			      (size_t)((n - 1) % r->logs) * r->log_bytes);
}

/* ring_check - NULL if @r (@bytes mapped) is a ring this tool reads, else why not. */
static const char *ring_check(const struct blitz_event_ring *r, size_t bytes)
{
	static char why[96];

	/* Acquire: the worker publishes the magic last, once the rest is set. */
	if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != BLITZ_EVENT_RING_MAGIC)
		return "not an event ring (bad magic)";
	if (r->version != BLITZ_EVENTS_VERSION) {
		snprintf(why, sizeof(why), "an event ring of layout version %u (this tool reads %u)",
			 r->version, BLITZ_EVENTS_VERSION);
		return why;
	}
	if (r->log_bytes != sizeof(struct blitz_event_log) || !r->logs ||
	    BLITZ_EVENT_RING_HEAD + (__u64)r->logs * r->log_bytes > bytes) {
		snprintf(why, sizeof(why), "an event ring of %u logs of %u bytes in %zu bytes",
			 r->logs, r->log_bytes, bytes);
		return why;
	}
	return NULL;
}

/*
 * ring_open - map the memfd that process @tgid holds as descriptor @fd
 * (@bytes of it, 0: all), read-write or only read; its device and inode
 * in *@sb.  NULL with *@why set if it is not a ring ("" if it is not even
 * a "blitz-events" memfd).
 */
static void *ring_open(__u32 tgid, int fd, bool writable, size_t *bytes, struct stat *sb,
		       const char **why)
{
	char path[64], link[128];
	ssize_t len;
	void *map;
	int mfd;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", tgid, fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0) {
		/* Closed since it was listed: nothing to read there. */
		*why = errno == ENOENT ? "" : strerror(errno);
		return NULL;
	}
	link[len] = '\0';
	if (strncmp(link, "/memfd:blitz-events", strlen("/memfd:blitz-events"))) {
		*why = "";
		return NULL;
	}
	mfd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (mfd < 0 || fstat(mfd, sb)) {
		*why = strerror(errno);
		if (mfd >= 0)
			close(mfd);
		return NULL;
	}
	if (!*bytes)
		*bytes = (size_t)sb->st_size;
	if (*bytes < BLITZ_EVENT_RING_HEAD || (off_t)*bytes > sb->st_size) {
		close(mfd);
		*why = "shorter than an event ring";
		return NULL;
	}
	map = mmap(NULL, *bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, mfd, 0);
	close(mfd);
	if (map == MAP_FAILED) {
		*why = strerror(errno);
		return NULL;
	}
	*why = ring_check(map, *bytes);
	if (*why) {
		munmap(map, *bytes);
		return NULL;
	}
	return map;
}

/* ring_claim - @m is read by this tool, in its mode, with its wait. */
static void ring_claim(const struct state *st, struct blitz_event_ring *m)
{
	__atomic_store_n(&m->block_ms, st->block_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&m->mode, st->mode, __ATOMIC_RELEASE);
	__atomic_store_n(&m->reader, (__u32)getpid(), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * ring_attach - @r is mapped: become its reader (unless another live one
 * is), with this tool's mode and wait, and start at the first log not
 * released.  False (and unmapped) if another reader has it.
 */
static bool ring_attach(struct state *st, struct ring *r, const char **why)
{
	struct blitz_event_ring *m = r->map;
	__u32 reader = __atomic_load_n(&m->reader, __ATOMIC_ACQUIRE);

	if (reader && reader != (__u32)getpid() && !pid_gone(reader)) {
		static char busy[64];

		snprintf(busy, sizeof(busy), "another reader has it (PID %u)", reader);
		*why = busy;
		return false;
	}
	r->mode0 = __atomic_load_n(&m->mode, __ATOMIC_RELAXED);
	r->block0 = __atomic_load_n(&m->block_ms, __ATOMIC_RELAXED);
	ring_claim(st, m);
	r->window = __atomic_load_n(&m->window, __ATOMIC_ACQUIRE);
	r->consumed = __atomic_load_n(&m->consumed, __ATOMIC_ACQUIRE);
	r->next = r->consumed + 1;
	r->backlog = r->mode0 == BLITZ_RING_OVERWRITE;
	return true;
}

/* ring_release - @r's mode and wait as found, no reader; unmapped. */
static void ring_release(struct ring *r)
{
	struct blitz_event_ring *m = r->map;

	if (!m)
		return;
	__atomic_store_n(&m->block_ms, r->block0, __ATOMIC_RELAXED);
	__atomic_store_n(&m->mode, r->mode0, __ATOMIC_RELEASE);
	__atomic_store_n(&m->reader, 0, __ATOMIC_RELEASE);
	munmap(m, r->bytes);
	r->map = NULL;
}

/*
 * ring_free_upto - logs up to @n are read: their slots go back to the
 * worker.  A compare-and-swap from what this tool stored last, so that a
 * worker that restarted the count (a new window) is not handed a stale
 * one.
 */
static void ring_free_upto(struct ring *r, __u64 n)
{
	__u64 expected = r->consumed;

	if (__atomic_compare_exchange_n(&r->map->consumed, &expected, n, false, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		r->consumed = n;
	else
		r->consumed = expected;
}

/*
 * ring_take - the logs @r's worker committed and this tool has not read,
 * @max at most, each freed once read.  A slot whose seq is not its log's
 * was overwritten (the flight recorder keeps the newest): skipped, the
 * next log's seq tells the gap (log_take).  Returns the logs read.
 */
static __u64 ring_take(struct state *st, struct ring *r, __u64 max)
{
	struct blitz_event_ring *m = r->map;
	__u64 window = __atomic_load_n(&m->window, __ATOMIC_ACQUIRE), produced, taken = 0;

	if (window != r->window) {
		/*
		 * A new window: the worker counts its logs from 1 again, in its
		 * own mode and with no reader, until this tool claims it again.
		 */
		r->window = window;
		r->next = 1;
		r->told = 0;
		if (!st->leaving)
			ring_claim(st, m);
		r->consumed = __atomic_load_n(&m->consumed, __ATOMIC_ACQUIRE);
	}
	produced = __atomic_load_n(&m->produced, __ATOMIC_ACQUIRE);
	if (produced + 1 < r->next)
		return 0;	/* a window restarting: its new number is not out yet */
	/*
	 * A flight recorder's ring, as the tool found it: its worker may be
	 * writing the oldest slot again (it saw the mode after it took it);
	 * start past it.
	 */
	if (r->backlog) {
		r->backlog = false;
		if (produced - r->next + 1 >= m->logs) {
			r->next = produced + 2 - m->logs;
			ring_free_upto(r, r->next - 1);
		}
	}
	while (r->next <= produced && taken < max) {
		__u64 n = r->next;
		const struct blitz_event_log *s = ring_slot(m, n);

		if (__atomic_load_n(&s->head.seq, __ATOMIC_ACQUIRE) == n) {
			struct blitz_event_log_head h = s->head;

			if (!h.pid)
				h.pid = r->tgid;
			if (h.count > BLITZ_EVENT_LOG_RECORDS)
				h.count = BLITZ_EVENT_LOG_RECORDS;
			if (consume_log(st, &h, s->rec, h.count)) {
				st->logs++;
				st->ring_logs++;
			}
			r->told += h.lost;
			r->last = h;
			r->last.flushed = h.count ? s->rec[h.count - 1].ticks : h.flushed;
		}
		r->next++;
		taken++;
		ring_free_upto(r, n);
	}
	return taken;
}

/*
 * ring_finish - the tool is done with @r (its process exited, or the
 * tool leaves): the logs committed, then the log its worker is writing,
 * up to the records published (head.count, acquire: a record is written
 * before the count that covers it), then the records it dropped that no
 * log read has told (its next log would: ring->lost counts them all), as
 * a span after the last record read.
 */
static void ring_finish(struct state *st, struct ring *r)
{
	const struct blitz_event_log *s;
	struct blitz_event_log_head h;
	__u64 lost;
	__u32 count;

	ring_take(st, r, ~0ull);
	s = ring_slot(r->map, r->next);
	lost = __atomic_load_n(&r->map->lost, __ATOMIC_ACQUIRE);
	if (!__atomic_load_n(&s->head.seq, __ATOMIC_ACQUIRE) &&
	    (count = __atomic_load_n(&s->head.count, __ATOMIC_ACQUIRE))) {
		h = s->head;
		h.seq = r->next;
		h.count = count < BLITZ_EVENT_LOG_RECORDS ? count : BLITZ_EVENT_LOG_RECORDS;
		h.flushed = 0;
		if (!h.pid)
			h.pid = r->tgid;
		if (consume_log(st, &h, s->rec, h.count)) {
			st->logs++;
			st->ring_logs++;
		}
		r->told += h.lost;
		r->last = h;
		r->last.flushed = s->rec[h.count - 1].ticks;
	}
	h = r->last;
	if (lost <= r->told || !h.size)
		return;
	h.count = 0;
	h.lost = lost - r->told;
	h.lost_from = h.lost_to = h.flushed;
	h.flushed = 0;
	consume_log(st, &h, NULL, 0);
	r->told = lost;
}

/* rings_take - a pass over every mapped ring; the logs read. */
static __u64 rings_take(struct state *st)
{
	__u64 taken = 0;

	for (size_t i = 0; i < st->rings.n; i++)
		if (ring_at(st, i)->map)
			taken += ring_take(st, ring_at(st, i), ring_at(st, i)->map->logs);
	return taken;
}

static struct ring *ring_find(struct state *st, __u32 tgid, __s32 worker, __u64 runtime)
{
	for (size_t i = 0; i < st->rings.n; i++) {
		struct ring *r = ring_at(st, i);

		if (r->tgid == tgid && r->worker == worker && r->runtime == runtime)
			return r;
	}
	return NULL;
}

/* ring_same - is /proc/TGID/fd/FD still the memfd @r maps? */
static bool ring_same(const struct ring *r)
{
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", r->tgid, r->fd);
	return !stat(path, &sb) && sb.st_dev == r->dev && sb.st_ino == r->ino;
}

/* ring_map - map the ring @n announces and attach to it; a failure is told once. */
static void ring_map(struct state *st, struct ring *r, const struct events_note *n)
{
	const char *why = NULL;
	struct stat sb;

	r->fd = n->fd;
	r->bytes = n->bytes;
	r->map = ring_open(n->tgid, n->fd, true, &r->bytes, &sb, &why);
	if (r->map && (r->map->worker != n->worker || r->map->runtime != n->runtime ||
		       (r->map->pid && r->map->pid != n->tgid))) {
		why = "not the ring announced (another worker's)";
	} else if (r->map) {
		r->dev = sb.st_dev;
		r->ino = sb.st_ino;
		if (ring_attach(st, r, &why))
			return;
	}
	if (r->map)
		munmap(r->map, r->bytes);
	r->map = NULL;
	if (r->warned)
		return;
	/* Its records are lost uncounted: said, and counted as a ring missed. */
	st->rings_missed++;
	fprintf(stderr, "blitz-%s: PID %u worker %d: cannot read its ring /proc/%u/fd/%d: %s\n",
		def.name, n->tgid, n->worker, n->tgid, n->fd,
		pid_gone(n->tgid) ? "the process has exited" : *why ? why : "not a blitz-events memfd");
	r->warned = true;
}

/*
 * ring_note - a worker announced its ring (as it opens a window, and
 * every BLITZ_EVENT_FLUSH_NS): mapped unless it is already, or mapped
 * again if the worker made another.
 */
static void ring_note(struct state *st, const struct events_note *n)
{
	struct ring *r = ring_find(st, n->tgid, n->worker, n->runtime);

	if (r && r->map) {
		/*
		 * A note read after its process exited (the tool was stopped, or
		 * behind) says nothing new: rings_gone finishes the ring it maps.
		 */
		if (pid_gone(n->tgid) ||
		    (r->fd == n->fd && r->bytes == n->bytes && ring_same(r)))
			return;
		ring_finish(st, r);	/* the old one's last logs, and its untold drops */
		ring_release(r);
	}
	if (!r) {
		r = push(st, &st->rings);
		r->tgid = n->tgid;
		r->worker = n->worker;
		r->runtime = n->runtime;
	}
	ring_map(st, r, n);
}

static int on_note(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct events_note))
		ring_note(ctx, data);
	return tool_sample_taken();
}

/* rings_gone - the rings of processes that exited: their committed logs, then unmapped. */
static void rings_gone(struct state *st)
{
	size_t kept = 0;

	for (size_t i = 0; i < st->rings.n; i++) {
		struct ring *r = ring_at(st, i);

		if (pid_gone(r->tgid)) {
			if (r->map) {
				ring_finish(st, r);
			}
			ring_release(r);
			continue;
		}
		memmove(ring_at(st, kept++), r, sizeof(*r));
	}
	st->rings.n = kept;
}

/*
 * rings_leave - the tool goes: the workers must not wait for it any
 * more.  A ring found waiting for its reader (BLITZ_RING_BLOCK) drops
 * (BLITZ_RING_DISCARD) until the probes are detached; one found in
 * another mode (a flight recorder's) gets it back at once.  @last: every
 * ring as found, unmapped.
 */
static void rings_leave(struct state *st, bool last)
{
	st->leaving = true;
	for (size_t i = 0; i < st->rings.n; i++) {
		struct ring *r = ring_at(st, i);

		if (!r->map)
			continue;
		if (last)
			ring_release(r);
		else
			__atomic_store_n(&r->map->mode, r->mode0 == BLITZ_RING_BLOCK ?
					 BLITZ_RING_DISCARD : r->mode0, __ATOMIC_RELEASE);
	}
}

static void rings_release_at_exit(void)
{
	if (the_state)
		rings_leave(the_state, true);
}

/* ---- Settling: processes that exited, the records' order ---- */

/*
 * gone_check - the processes that exited since the last check: their
 * rings read to the end, what the ring buffers hold of them taken, and
 * their flushes half in closed (the rest was lost).
 */
static void gone_check(struct state *st)
{
	bool any = false;
	size_t i = 0;

	rings_gone(st);
	for (size_t i = 0; i < st->g.n; i++) {
		struct group *g = grp(st, i);

		if (!g->gone && pid_gone(g->tgid))
			g->gone = any = true;
	}
	for (size_t i = 0; i < st->pend.n; i++)
		if (pid_gone(pend_at(st, i)->tgid))
			pend_at(st, i)->gone = any = true;
	if (!any)
		return;
	take_all(st);
	while (i < st->pend.n) {
		if (pend_at(st, i)->gone)
			pending_out(st, pend_at(st, i), true);	/* the last one moves here */
		else
			i++;
	}
	for (i = 0; i < st->g.n; i++)
		if (grp(st, i)->gone)
			losses_drain(st, grp(st, i)->tgid);
}

/*
 * settled - the tick before which all of @g's records are here: the
 * oldest of its workers' last flushes (a worker's later records are
 * stamped after its flush), once every worker has flushed; everything if
 * the process has exited; 0 (nothing) before every worker flushed.  A
 * thread that is not a worker flushes at its own pace: not waited for.
 */
static __u64 settled(const struct state *st, struct group *g)
{
	__u64 low = ~0ull;
	__u32 seen = 0;

	if (g->gone)
		return ~0ull;
	for (size_t i = 0; i < st->w.n; i++) {
		if (wst(st, i)->g != g || wst(st, i)->worker < 0)
			continue;
		seen++;
		if (wst(st, i)->flushed < low)
			low = wst(st, i)->flushed;
	}
	return seen >= g->workers ? low : 0;
}

/*
 * settle - every runtime's settled tick (for -r); the runtimes of exited
 * processes finished (group_final) and dropped.
 */
static void settle(struct state *st)
{
	size_t kept = 0;

	if (!st->offline)
		gone_check(st);
	for (size_t i = 0; i < st->g.n; i++) {
		struct group *g = grp(st, i);

		g->upto = settled(st, g);
		if (g->gone) {
			group_final(st, g);
			/* Its workers' states stay (the counts) until printed, without the group. */
			for (size_t k = 0; k < st->w.n; k++)
				if (wst(st, k)->g == g)
					wst(st, k)->g = NULL;
			group_free(g);
			continue;
		}
		*(struct group **)array_at(&st->g, kept++) = g;
	}
	st->g.n = kept;
}

/* offline_end - the input is read: every process has ended. */
static void offline_end(struct state *st)
{
	for (size_t i = 0; i < st->g.n; i++)
		grp(st, i)->gone = true;
}

/* ---- -r ---- */

static int full_cmp(const void *a, const void *b)
{
	const struct full *x = a, *y = b;

	if (x->ev.ticks != y->ev.ticks)
		return x->ev.ticks < y->ev.ticks ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->worker - y->worker;
}

/* The records that carry a queueing number (the others: -1); a peer (the others: -1). */
static bool has_seq(unsigned type)
{
	return type == BLITZ_EVENT_SPAWN || type == BLITZ_EVENT_SCHEDULE ||
	       type == BLITZ_EVENT_POLL_START;
}

static long long rec_seq(const struct blitz_event *e)
{
	return has_seq(e->type) ? (long long)e->seq : -1;
}

static int rec_peer(const struct blitz_event *e)
{
	return e->type == BLITZ_EVENT_STEAL || e->type == BLITZ_EVENT_UNPARK ? e->peer : -1;
}

/*
 * records_out - -r: the records held, in time order (the TSC is one clock
 * for every process), as ns since the first record taken: in text at
 * every settling and each print, with -j in each print's object.  Before
 * the last print, only those every traced runtime has settled: a later
 * one may still bring an earlier record (and a thread's log, flushed when
 * its thread waits, may still: such records come in a later batch).
 */
static void records_out(struct state *st, struct json *j, bool last)
{
	struct full *f = st->fulls.p;
	__u64 upto = ~0ull;
	size_t n = 0, kept = 0;

	for (size_t i = 0; i < st->g.n && !last; i++)
		if (!grp(st, i)->gone && grp(st, i)->upto < upto)
			upto = grp(st, i)->upto;
	qsort(f, st->fulls.n, sizeof(*f), full_cmp);
	while (n < st->fulls.n && f[n].ev.ticks < upto)
		n++;
	if (j) {
		json_arr_begin(j, "records");
	} else if (n && !st->records_headed) {
		printf("\n%12s %7s %6s %7s %-10s %10s %4s %18s %5s %6s\n", "NS", "PID", "WORKER",
		       "TID", "EVENT", "TASK", "CODE", "ARG", "PEER", "SEQ");
		st->records_headed = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct blitz_event *e = &f[i].ev;
		long long ns = rel_ns(st, e->ticks, f[i].mult);

		if (j) {
			/* [ns, pid, worker, event, task, arg, peer, tid, code, seq] */
			json_arr_begin(j, NULL);
			json_int(j, NULL, ns);
			json_uint(j, NULL, f[i].tgid);
			json_int(j, NULL, f[i].worker);
			json_str(j, NULL, type_names[e->type]);
			json_uint(j, NULL, e->task);
			json_uint(j, NULL, e->arg);
			json_int(j, NULL, rec_peer(e));
			json_uint(j, NULL, f[i].thread);
			json_uint(j, NULL, e->code);
			json_int(j, NULL, rec_seq(e));
			json_arr_end(j);
		} else if (has_seq(e->type)) {	/* arg: an address */
			printf("%12lld %7u %6d %7u %-10s %10llu %4u %#18llx %5d %6lld\n", ns, f[i].tgid,
			       f[i].worker, f[i].thread, type_names[e->type], (unsigned long long)e->task,
			       e->code, (unsigned long long)e->arg, rec_peer(e), rec_seq(e));
		} else {
			printf("%12lld %7u %6d %7u %-10s %10llu %4u %18llu %5d %6lld\n", ns, f[i].tgid,
			       f[i].worker, f[i].thread, type_names[e->type], (unsigned long long)e->task,
			       e->code, (unsigned long long)e->arg, rec_peer(e), rec_seq(e));
		}
	}
	if (j)
		json_arr_end(j);
	for (size_t i = n; i < st->fulls.n; i++)
		f[kept++] = f[i];
	st->fulls.n = kept;
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
 * text) ten times a second at most.
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

/* ---- Printing ---- */

/* json_who - which log: the process, the worker (or a thread that is not one), the runtime. */
static void json_who(struct json *j, __u32 tgid, __s32 worker, __u32 thread, __u64 runtime)
{
	json_uint(j, "pid", tgid);
	json_int(j, "worker", worker);
	if (worker < 0)
		json_uint(j, "thread", thread);
	json_uint(j, "runtime", runtime);
}

static void json_wstate(struct json *j, const struct wstate *w)
{
	json_obj_begin(j, NULL);
	json_who(j, w->tgid, w->worker, w->thread, w->runtime);
	for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
		json_uint(j, type_names[t], w->events[t]);
	json_uint(j, "ready", w->ready);
	json_uint(j, "stolen", w->stolen);
	json_uint(j, "reader_wait_ns", w->waited);
	json_uint(j, "flushes_missed", w->missed);
	json_uint(j, "lost", w->lost);
	json_obj_end(j);
}

static void json_spans(struct state *st, struct json *j)
{
	json_arr_begin(j, "lost_spans");
	for (size_t i = 0; i < st->spans.n; i++) {
		const struct span *s = array_at(&st->spans, i);

		json_obj_begin(j, NULL);
		json_who(j, s->tgid, s->worker, s->thread, s->runtime);
		json_int(j, "from_ns", rel_ns(st, s->from, s->mult));
		json_int(j, "to_ns", rel_ns(st, s->to, s->mult));
		json_uint(j, "records", s->records);
		json_uint(j, "logs", s->logs);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* The spans of this print, in text: the first 20. */
static void print_spans(struct state *st)
{
	if (!st->spans.n)
		return;
	printf("\nlost spans (ns since the first record):\n%7s %8s %14s %14s %9s %6s\n", "PID",
	       "WORKER", "FROM_NS", "TO_NS", "RECORDS", "LOGS");
	for (size_t i = 0; i < st->spans.n && i < 20; i++) {
		const struct span *s = array_at(&st->spans, i);
		char who[16];

		if (s->worker < 0)
			snprintf(who, sizeof(who), "t%u", s->thread);
		else
			snprintf(who, sizeof(who), "%d", s->worker);
		printf("%7u %8s %14lld %14lld %9llu %6llu\n", s->tgid, who,
		       rel_ns(st, s->from, s->mult), rel_ns(st, s->to, s->mult),
		       (unsigned long long)s->records, (unsigned long long)s->logs);
	}
	if (st->spans.n > 20)
		printf("... and %zu more\n", st->spans.n - 20);
}

static void print_text(struct state *st, __u64 flushes, __u64 bad, __u64 waiting, __u64 orphans)
{
	const char *unit = unit_header(st->env->unit);
	__u64 waits = 0, waited = 0;

	tool_print_time(st->env);
	printf("\n%7s %8s %9s %9s %10s %10s %9s %7s %7s %7s %7s %7s\n", "PID", "WORKER", "SPAWN",
	       "SCHEDULE", "POLL_START", "READY", "STEAL", "STOLEN", "PARK", "UNPARK", "MISSED",
	       "LOST");
	for (size_t i = 0; i < st->w.n; i++) {
		const struct wstate *w = wst(st, i);
		char who[16];

		/* A thread that is not a worker: t and its id. */
		if (w->worker < 0)
			snprintf(who, sizeof(who), "t%u", w->thread);
		else
			snprintf(who, sizeof(who), "%d", w->worker);
		printf("%7u %8s %9llu %9llu %10llu %10llu %9llu %7llu %7llu %7llu %7llu %7llu\n",
		       w->tgid, who, (unsigned long long)w->events[BLITZ_EVENT_SPAWN],
		       (unsigned long long)w->events[BLITZ_EVENT_SCHEDULE],
		       (unsigned long long)w->events[BLITZ_EVENT_POLL_START],
		       (unsigned long long)w->ready, (unsigned long long)w->events[BLITZ_EVENT_STEAL],
		       (unsigned long long)w->stolen, (unsigned long long)w->events[BLITZ_EVENT_PARK],
		       (unsigned long long)w->events[BLITZ_EVENT_UNPARK],
		       (unsigned long long)w->missed, (unsigned long long)w->lost);
	}
	if (st->poll.count) {
		printf("\npoll time:\n");
		print_log2_hist(st->poll.slots, MAX_SLOTS, unit);
	}
	if (st->sched.count) {
		printf("\nschedule latency (spawned or queued, to polled):\n");
		print_log2_hist(st->sched.slots, MAX_SLOTS, unit);
	}
	print_spans(st);
	for (size_t i = 0; i < st->w.n; i++) {
		waits += wst(st, i)->events[BLITZ_EVENT_READER_WAIT];
		waited += wst(st, i)->waited;
	}
	printf("\n%llu logs (%llu from rings, %llu flushes), %llu records lost in %zu spans, "
	       "%llu rings not read, %llu flushes unreadable; the workers waited for this tool "
	       "%llu times, %.3f ms in all; %llu polls without a logged queueing (queued before "
	       "the tool, or unlogged), %llu never polled (the process exited), %llu not paired "
	       "for a loss (untrusted), %llu waiting for their poll, %llu polls waiting for their "
	       "queueing\n",
	       (unsigned long long)st->logs, (unsigned long long)st->ring_logs,
	       (unsigned long long)flushes, (unsigned long long)st->lost, st->spans.n,
	       (unsigned long long)st->rings_missed, (unsigned long long)bad,
	       (unsigned long long)waits, waited / 1e6, (unsigned long long)st->unpaired_polls,
	       (unsigned long long)st->never_polled, (unsigned long long)st->untrusted,
	       (unsigned long long)waiting, (unsigned long long)orphans);
}

/* print_written - -w's print: what went into the file, what was lost. */
static void print_written(struct state *st, __u64 flushes, __u64 bad, __u64 rb_lost)
{
	struct tool_env *env = st->env;

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_obj_begin(&j, "written");
		json_str(&j, "file", write_path);
		json_uint(&j, "logs", st->out_logs);
		json_uint(&j, "records", st->out_records);
		json_obj_end(&j);
		json_uint(&j, "ring_logs", st->ring_logs);
		json_uint(&j, "rings_missed", st->rings_missed);
		json_uint(&j, "flushes", flushes);
		json_uint(&j, "lost", st->lost);
		json_uint(&j, "lost_ringbuf", rb_lost);
		json_uint(&j, "bad", bad);
		json_spans(st, &j);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_spans(st);
	printf("%llu logs (%llu from rings, %llu flushes), %llu records written to %s; "
	       "%llu records lost in %zu spans, %llu rings not read, %llu flushes unreadable\n",
	       (unsigned long long)st->out_logs, (unsigned long long)st->ring_logs,
	       (unsigned long long)flushes, (unsigned long long)st->out_records, write_path,
	       (unsigned long long)st->lost, st->spans.n, (unsigned long long)st->rings_missed,
	       (unsigned long long)bad);
	fflush(stdout);
}

static void print_json(struct state *st, __u64 flushes, __u64 bad, __u64 rb_lost, __u64 waiting,
		       __u64 orphans, bool last)
{
	struct tool_env *env = st->env;
	__u64 totals[BLITZ_EVENT_TYPES] = { 0 };
	struct json j;

	for (size_t i = 0; i < st->w.n; i++)
		for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
			totals[t] += wst(st, i)->events[t];
	tool_json_begin(&j, env, unit_name(env->unit));
	json_uint(&j, "logs", st->logs);
	json_uint(&j, "ring_logs", st->ring_logs);
	json_uint(&j, "rings_missed", st->rings_missed);
	json_uint(&j, "flushes", flushes);
	json_uint(&j, "lost", st->lost);
	json_uint(&j, "lost_ringbuf", rb_lost);
	json_uint(&j, "bad", bad);
	json_obj_begin(&j, "events");
	for (int t = 1; t < BLITZ_EVENT_TYPES; t++)
		json_uint(&j, type_names[t], totals[t]);
	json_obj_end(&j);
	json_arr_begin(&j, "workers");
	for (size_t i = 0; i < st->w.n; i++)
		json_wstate(&j, wst(st, i));
	json_arr_end(&j);
	json_arr_begin(&j, "histograms");
	json_hist(&j, "poll time", -1, &st->poll, st->div);
	json_hist(&j, "schedule latency", -1, &st->sched, st->div);
	json_arr_end(&j);
	json_uint(&j, "unpaired", st->unpaired_polls);
	json_uint(&j, "unpaired_poll_ends", st->unpaired_polls_end);
	json_uint(&j, "stale_schedules", st->stale_schedules);
	json_uint(&j, "never_polled", st->never_polled);
	json_uint(&j, "untrusted", st->untrusted);
	json_uint(&j, "untrusted_polls", st->untrusted_polls);
	json_uint(&j, "waiting", waiting);
	json_uint(&j, "orphans", orphans);
	json_uint(&j, "late", st->late);
	json_spans(st, &j);
	if (with_records)
		records_out(st, &j, last);
	tool_json_end(&j);
}

/* print_reset - printed: the counts start again; the workers of ended processes go. */
static void print_reset(struct state *st)
{
	size_t kept = 0;

	for (size_t i = 0; i < st->w.n; i++) {
		struct wstate *w = wst(st, i);

		if (!w->g)
			continue;
		memset(w->events, 0, sizeof(w->events));
		w->ready = w->stolen = w->waited = w->missed = w->lost = 0;
		memmove(wst(st, kept++), w, sizeof(*w));
	}
	st->w.n = kept;
	memset(&st->poll, 0, sizeof(st->poll));
	memset(&st->sched, 0, sizeof(st->sched));
	st->unpaired_polls = st->unpaired_polls_end = st->stale_schedules = st->never_polled = 0;
	st->late = st->untrusted = st->untrusted_polls = st->lost = st->logs = st->ring_logs = 0;
	st->bad_records = st->rings_missed = 0;
	st->out_logs = st->out_records = 0;
	st->spans.n = 0;
}

static void print(struct state *st, bool last)
{
	__u64 flushes = 0, bad = 0, waiting = 0, orphans = 0, rb_lost = 0;

	if (!st->offline) {
		rings_take(st);
		take_all(st);
		if (last) {
			/* What is half in is all there will be; so are the losses not yet told. */
			while (st->pend.n)
				pending_out(st, pend_at(st, 0), true);
			losses_drain(st, 0);
			for (size_t i = 0; i < st->rings.n; i++)
				if (ring_at(st, i)->map)
					ring_finish(st, ring_at(st, i));
		}
	}
	if (st->skel) {
		flushes = st->skel->bss->flushes - st->prev_flushes;
		bad = st->skel->bss->bad - st->prev_bad;
		rb_lost = st->skel->bss->lost - st->prev_lost;
		st->prev_flushes = st->skel->bss->flushes;
		st->prev_bad = st->skel->bss->bad;
		st->prev_lost = st->skel->bss->lost;
	}
	bad += st->bad_records;
	if (st->out) {
		if (last)
			trace_close(st);
		print_written(st, flushes, bad, rb_lost);
		print_reset(st);
		return;
	}
	settle(st);
	for (size_t i = 0; i < st->g.n; i++) {
		waiting += grp(st, i)->held.n - grp(st, i)->held.polls;
		orphans += grp(st, i)->held.polls;
	}
	if (st->env->json) {
		print_json(st, flushes, bad, rb_lost, waiting, orphans, last);
	} else {
		/* The records that settled since the last drain, then the counts. */
		if (with_records)
			records_out(st, NULL, last);
		print_text(st, flushes, bad, waiting, orphans);
		st->records_headed = false;
		fflush(stdout);
	}
	print_reset(st);
}

/* ---- The three ways in: tracing, a trace file, a process's rings ---- */

/* read_fail - --read: the file @what; exits 1. */
static void __attribute__((noreturn)) read_fail(struct state *st, FILE *f, const char *what)
{
	tool_die(st->env, "%s: %s", read_path, ferror(f) ? strerror(errno) : what);
}

/* read_main - --read FILE: its logs analysed (or copied, -w), one print. */
static int read_main(struct state *st)
{
	static struct blitz_event_log log;
	struct blitz_event_file_head fh;
	FILE *f = fopen(read_path, "rb");
	long long at = sizeof(fh);

	if (!f)
		tool_die(st->env, "cannot open %s: %s", read_path, strerror(errno));
	if (fread(&fh, sizeof(fh), 1, f) != 1)
		read_fail(st, f, "not a blitz-events trace (shorter than its header)");
	if (fh.magic != BLITZ_EVENT_FILE_MAGIC)
		read_fail(st, f, "not a blitz-events trace (bad magic)");
	if (fh.version != BLITZ_EVENTS_VERSION) {
		tool_die(st->env, "%s: a trace of layout version %u (this tool reads %u)", read_path,
			 fh.version, BLITZ_EVENTS_VERSION);
	}
	if (fh.head_size != sizeof(log.head) || fh.record_size != sizeof(log.rec[0]))
		read_fail(st, f, "a trace of another layout (its header's sizes)");
	for (;;) {
		size_t got = fread(&log.head, 1, sizeof(log.head), f);

		if (!got && feof(f))
			break;
		if (got == sizeof(log.head) &&
		    (log.head.size != sizeof(log.rec[0]) || log.head.version != BLITZ_EVENTS_VERSION ||
		     log.head.count > BLITZ_EVENT_LOG_RECORDS)) {
			tool_die(st->env, "%s: damaged: the log at byte %lld has no log's head",
				 read_path, at);
		}
		if (got != sizeof(log.head) ||
		    fread(log.rec, sizeof(log.rec[0]), log.head.count, f) != log.head.count) {
			if (ferror(f))
				read_fail(st, f, "");
			fprintf(stderr, "blitz-%s: %s: cut short in the log at byte %lld: read up to it\n",
				def.name, read_path, at);
			break;
		}
		st->logs += consume_log(st, &log.head, log.rec, log.head.count);
		at += sizeof(log.head) + (long long)log.head.count * sizeof(log.rec[0]);
	}
	fclose(f);
	offline_end(st);
	print(st, true);
	return 0;
}

/*
 * slot_copy - log @n of ring @r, copied into @out while the process runs
 * on: committed (head.seq == n) or, @partial, the one being written
 * (head.seq 0: its first head.count records, the count read with
 * acquire).  False if the slot holds neither, or changed under the copy.
 */
static bool slot_copy(const struct blitz_event_ring *r, __u64 n, struct blitz_event_log *out,
		      bool partial)
{
	const struct blitz_event_log *s = ring_slot(r, n);
	__u64 seq = __atomic_load_n(&s->head.seq, __ATOMIC_ACQUIRE), now;
	__u32 count;

	if (seq != (partial ? 0 : n))
		return false;
	count = __atomic_load_n(&s->head.count, __ATOMIC_ACQUIRE);
	if (count > BLITZ_EVENT_LOG_RECORDS)
		return false;
	memcpy(&out->head, &s->head, sizeof(out->head));
	memcpy(out->rec, s->rec, count * sizeof(out->rec[0]));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	now = __atomic_load_n(&s->head.seq, __ATOMIC_RELAXED);
	/* Committed meanwhile: the records copied are still its first ones. */
	if (now != seq && !(partial && now == n))
		return false;
	out->head.seq = n;
	out->head.count = count;
	if (partial)
		out->head.flushed = 0;
	if (!out->head.pid)
		out->head.pid = r->pid;
	return true;
}

/* dump_ring - every log ring @r holds: the committed ones in order, then the one being written. */
static void dump_ring(struct state *st, const struct blitz_event_ring *r)
{
	static struct blitz_event_log log;
	__u64 produced = __atomic_load_n(&r->produced, __ATOMIC_ACQUIRE);
	/* The oldest slot is the next to be written again: the one being written may be it. */
	__u64 first = produced + 2 > r->logs ? produced + 2 - r->logs : 1;

	for (__u64 n = first; n <= produced; n++)
		if (slot_copy(r, n, &log, false))
			st->logs += consume_log(st, &log.head, log.rec, log.head.count);
	/* Being written (or committed since); an empty one is a slot not used yet. */
	if ((slot_copy(r, produced + 1, &log, true) || slot_copy(r, produced + 1, &log, false)) &&
	    (log.head.count || log.head.lost))
		st->logs += consume_log(st, &log.head, log.rec, log.head.count);
}

/* dump_main - --dump PID: the rings of PID, read without stopping it; one print. */
static int dump_main(struct state *st)
{
	__u32 pid = (__u32)parse_num("--dump PID", dump_arg, 1, INT_MAX);
	char dir[64];
	struct dirent *de;
	size_t rings = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", pid);
	if (pid_gone(pid))
		tool_die(st->env, "no such process: %u", pid);
	d = opendir(dir);
	if (!d)
		tool_die(st->env, "cannot read %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		const char *why = NULL;
		struct stat sb;
		size_t bytes = 0;
		void *map;

		if (de->d_name[0] == '.')
			continue;
		map = ring_open(pid, atoi(de->d_name), false, &bytes, &sb, &why);
		if (!map) {
			if (*why)
				tool_die(st->env, "PID %u: %s/%s: %s", pid, dir, de->d_name, why);
			continue;
		}
		dump_ring(st, map);
		munmap(map, bytes);
		rings++;
	}
	closedir(d);
	if (!rings)
		tool_die(st->env, "PID %u has no event rings (run it with BLITZ_FLIGHT set)", pid);
	offline_end(st);
	print(st, true);
	return 0;
}

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
	tool_parse_args(&env, &def, argc, args);
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
