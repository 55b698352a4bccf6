// SPDX-License-Identifier: MIT
/*
 * tools/events_trace.c - the trace file.  -w writes the logs into it raw,
 * with no analysis: a struct blitz_event_file_head, then per log its head
 * (count: the records that follow) and those records.  --read FILE reads
 * one back (of -w, --dump or the flight recorder's dump) through
 * consume_log(), with the analysis's output: a file of another layout is
 * refused, one cut short is read up to the log cut.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include "tool_args.h"
#include "events.h"
#include "events_log.h"
#include "events_opts.h"
#include "events_print.h"
#include "events_settle.h"
#include "events_state.h"
#include "events_trace.h"

void trace_open(struct state *st)
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
void trace_put(struct state *st, const struct blitz_event_log_head *h,
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

void trace_close(struct state *st)
{
	if (st->out && (fflush(st->out) || ferror(st->out) || fclose(st->out)))
		tool_die(st->env, "cannot write %s: %s", write_path, strerror(errno));
	st->out = NULL;
}

/* read_fail - --read: the file @what; exits 1. */
static void __attribute__((noreturn)) read_fail(struct state *st, FILE *f, const char *what)
{
	tool_die(st->env, "%s: %s", read_path, ferror(f) ? strerror(errno) : what);
}

/* read_main - --read FILE: its logs analysed (or copied, -w), one print. */
int read_main(struct state *st)
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
				events_def.name, read_path, at);
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
