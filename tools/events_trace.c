// SPDX-License-Identifier: MIT
/*
 * tools/events_trace.c - the trace file.  -w writes the logs into it with
 * no analysis, packed (events_pack.c; --raw: as the records are): a
 * struct blitz_event_file_head, then per log its head (count: the records
 * that follow) and those records, packed behind their bytes' count or
 * raw.  --read FILE reads either back (of -w, --dump or the flight
 * recorder's dump) through consume_log(), with the analysis's output: a
 * file of another layout is refused, one cut short is read up to the log
 * cut, one whose packed records do not decode is refused at that log.
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
#include "events_pack.h"
#include "events_print.h"
#include "events_settle.h"
#include "events_state.h"
#include "events_trace.h"

void trace_open(struct state *st)
{
	struct blitz_event_file_head fh = {
		.magic = write_raw ? BLITZ_EVENT_FILE_MAGIC : BLITZ_EVENT_FILE_PACKED_MAGIC,
		.version = BLITZ_EVENTS_VERSION,
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

/* A log's records packed: written by trace_put, read by read_records (one at a time). */
static unsigned char packed[BLITZ_EVENT_LOG_RECORDS * BLITZ_EVENT_PACKED_MAX];

/* put - @bytes at @p into the file, or exit 1 saying why. */
static void put(struct state *st, const void *p, size_t bytes)
{
	if (bytes && fwrite(p, bytes, 1, st->out) != 1)
		tool_die(st->env, "cannot write %s: %s", write_path, strerror(errno));
}

/* trace_put - one log into the file: its head (count: @n) and @n records, packed or raw. */
void trace_put(struct state *st, const struct blitz_event_log_head *h,
	       const struct blitz_event *rec, __u32 n)
{
	struct blitz_event_log_head c = *h;
	__u32 bytes;

	c.count = n;
	put(st, &c, sizeof(c));
	if (write_raw) {
		put(st, rec, n * sizeof(*rec));
	} else {
		/* Every caller hands a log's records, BLITZ_EVENT_LOG_RECORDS at most. */
		if (n > BLITZ_EVENT_LOG_RECORDS)
			tool_die(st->env, "a log of %u records, more than a log holds", n);
		bytes = (__u32)events_pack(rec, n, packed);
		put(st, &bytes, sizeof(bytes));
		put(st, packed, bytes);
	}
	st->out_logs++;
	st->out_records += n;
}

void trace_flush(struct state *st)
{
	if (st->out && fflush(st->out))
		tool_die(st->env, "cannot write %s: %s", write_path, strerror(errno));
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

/*
 * read_records - the records of @log (its head read, count checked; the
 * log starts at byte @where) from @f, raw or packed; false if the file
 * ends inside them.  *@at moves past them.
 */
static bool read_records(struct state *st, FILE *f, bool is_packed, struct blitz_event_log *log,
			 long long where, long long *at)
{
	__u32 bytes;

	if (!is_packed) {
		*at += (long long)log->head.count * sizeof(log->rec[0]);
		return fread(log->rec, sizeof(log->rec[0]), log->head.count, f) == log->head.count;
	}
	if (fread(&bytes, sizeof(bytes), 1, f) != 1)
		return false;
	if (bytes > (size_t)log->head.count * BLITZ_EVENT_PACKED_MAX)
		tool_die(st->env, "%s: damaged: the log at byte %lld packs %u records in %u bytes",
			 read_path, where, log->head.count, bytes);
	if (fread(packed, 1, bytes, f) != bytes)
		return false;
	if (!events_unpack(packed, bytes, log->rec, log->head.count))
		tool_die(st->env, "%s: damaged: the log at byte %lld does not unpack into its %u records",
			 read_path, where, log->head.count);
	*at += sizeof(bytes) + (long long)bytes;
	return true;
}

/* read_main - --read FILE: its logs analysed (or copied, -w), one print. */
int read_main(struct state *st)
{
	static struct blitz_event_log log;
	struct blitz_event_file_head fh;
	FILE *f = fopen(read_path, "rb");
	long long at = sizeof(fh);
	bool is_packed;

	if (!f)
		tool_die(st->env, "cannot open %s: %s", read_path, strerror(errno));
	if (fread(&fh, sizeof(fh), 1, f) != 1)
		read_fail(st, f, "not a blitz-events trace (shorter than its header)");
	if (fh.magic != BLITZ_EVENT_FILE_MAGIC && fh.magic != BLITZ_EVENT_FILE_PACKED_MAGIC)
		read_fail(st, f, "not a blitz-events trace (bad magic)");
	is_packed = fh.magic == BLITZ_EVENT_FILE_PACKED_MAGIC;
	if (fh.version != BLITZ_EVENTS_VERSION) {
		tool_die(st->env, "%s: a trace of layout version %u (this tool reads %u)", read_path,
			 fh.version, BLITZ_EVENTS_VERSION);
	}
	if (fh.head_size != sizeof(log.head) || fh.record_size != sizeof(log.rec[0]))
		read_fail(st, f, "a trace of another layout (its header's sizes)");
	for (;;) {
		long long start = at;
		size_t got = fread(&log.head, 1, sizeof(log.head), f);

		if (!got && feof(f))
			break;
		if (got == sizeof(log.head) &&
		    (log.head.size != sizeof(log.rec[0]) || log.head.version != BLITZ_EVENTS_VERSION ||
		     log.head.count > BLITZ_EVENT_LOG_RECORDS)) {
			tool_die(st->env, "%s: damaged: the log at byte %lld has no log's head",
				 read_path, at);
		}
		at += (long long)got;
		if (got != sizeof(log.head) || !read_records(st, f, is_packed, &log, start, &at)) {
			if (ferror(f))
				read_fail(st, f, "");
			fprintf(stderr, "blitz-%s: %s: cut short in the log at byte %lld: read up to it\n",
				events_def.name, read_path, start);
			break;
		}
		st->logs += consume_log(st, &log.head, log.rec, log.head.count);
	}
	fclose(f);
	offline_end(st);
	print(st, true);
	return 0;
}
