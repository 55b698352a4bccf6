// SPDX-License-Identifier: MIT
/*
 * sample.c - the soak's samples and the flatness verdict (sample.h).
 *
 * The slacks.  A leak grows without bound; noise does not.  The samples
 * after the warm-up are split at half time, and the largest value of the
 * second half (B) may exceed the largest of the first (A) by the slack
 * only:
 *  - RSS: 5% of max(A), at least 4 MiB.  What moves the high-water mark
 *    of a process that leaks nothing is the allocator: glibc keeps freed
 *    memory in per-thread arenas and trims it by its own rules, blocking-
 *    pool threads come and go (each may get an arena and a stack), and
 *    ~1,000 connection tasks of ~8.4 KiB each are freed and allocated again
 *    in a different order all the time.  A few MiB covers that; a leak of
 *    one 64-byte object per round trip (tens of thousands a second) or of
 *    one task per connection (hundreds a second) crosses it within a
 *    minute or two (the README has the arithmetic).
 *  - The heap in use (heap_kb()): 5% of max(A), at least 2 MiB.  It moves
 *    with the work in flight only: the live connection tasks (their number
 *    varies by tens around 1,000, 8.4 KiB each), the fs part's buffers
 *    (up to 2 x 2 x 64 KiB), the channels' rings.  The same leak as above
 *    crosses it sooner, and fragmentation never does.
 *  - Descriptors that are not sockets: 2.  They are the runtime's own (rings,
 *    eventfds, the spare descriptor kept for accept), the client's epoll
 *    instance, and the fs part's files, of which at most one per fs task
 *    (FS_FILES = 2) is open at a time.  They are counted exactly
 *    (/proc/self/fd's links), unlike the sockets: their number moves with
 *    the churn, and the count of connections that the client and the
 *    server keep cannot be read at the very instant of the listing (a
 *    sample's other_sockets is that difference, for information).  A
 *    leaked socket stays, so the exact check for sockets is the count at
 *    rest against the count before the load (soak.c), with no slack.
 */
#include <dirent.h>
#include <malloc.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <blitz.h>
#include "sample.h"
#include "soak.h"

#define RSS_SLACK_PCT		5
#define RSS_SLACK_MIN_KB	4096
#define HEAP_SLACK_PCT		5
#define HEAP_SLACK_MIN_KB	2048
#define FDS_SLACK		2

static struct sample *kept;
static size_t nkept, cap;

uint64_t proc_rss_kb(bool hwm)
{
	const char *key = hwm ? "VmHWM:" : "VmRSS:";
	char line[256];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			kb = strtoull(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

uint64_t heap_kb(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)(mi.uordblks + mi.hblkhd) / 1024;
}

uint64_t proc_fds(uint64_t *sockets)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t n = 0, socks = 0;
	char link[64];

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		if (!sockets) {
			n++;
			continue;
		}
		/* Closed since readdir() saw it: not counted at all. */
		len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		n++;
		socks += len > 7 && !strncmp(link, "socket:", 7);
	}
	closedir(d);
	if (sockets)
		*sockets = socks;
	return n;
}

void proc_fds_show(FILE *f)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char link[256];

	if (!d)
		return;
	while ((e = readdir(d))) {
		ssize_t len;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		link[len > 0 ? len : 0] = 0;
		fprintf(f, "  fd %s: %s\n", e->d_name, link);
	}
	closedir(d);
}

static double loadavg1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "re");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static uint64_t conn_fds(void)
{
	return soak_get(&soak.client_fds) + soak_get(&soak.server_fds);
}

static uint64_t sum_kinds(_Atomic uint64_t *c)
{
	uint64_t n = 0;

	for (int k = 0; k < K_NR; k++)
		n += soak_get(&c[k]);
	return n;
}

static void keep(const struct sample *s)
{
	if (nkept == cap) {
		size_t ncap = cap ? 2 * cap : 256;
		struct sample *p = realloc(kept, ncap * sizeof(*p));

		if (!p)
			return;		/* the verdict sees fewer samples */
		kept = p;
		cap = ncap;
	}
	kept[nkept++] = *s;
}

struct sample sample_take(struct blitz_runtime *rt, double t, const char *phase, FILE *out)
{
	struct sample s = { .t = t };
	struct blitz_stats st;
	struct blitz_blocking_stats bs;
	uint64_t c1, c2, conns;

	s.rss_kb = proc_rss_kb(false);
	s.heap_kb = heap_kb();
	c1 = conn_fds();
	s.fds = proc_fds(&s.sockets);
	c2 = conn_fds();
	conns = (c1 + c2) / 2;
	s.other_sockets = s.sockets > conns ? s.sockets - conns : 0;
	s.nonsock = s.fds - s.sockets;
	s.live = blitz_runtime_live_tasks(rt);
	blitz_stats(rt, &st);
	blitz_blocking_stats(rt, &bs);
	if (!strcmp(phase, "load"))
		keep(&s);
	if (!out)
		return s;
	fprintf(out, "{\"t_s\":%.3f,\"phase\":\"%s\",\"rss_kb\":%llu,\"hwm_kb\":%llu,\"heap_kb\":%llu,"
		"\"fds\":%llu,"
		"\"sockets\":%llu,\"nonsock_fds\":%llu,\"client_fds\":%llu,\"server_fds\":%llu,"
		"\"other_sockets\":%llu,\"live_tasks\":%llu,"
		"\"rt_spawned\":%llu,\"rt_polled\":%llu,\"spawned\":%llu,\"completed\":%llu,"
		"\"cancelled\":%llu,\"msgs\":%llu,\"bytes_checked\":%llu,\"conns_opened\":%llu,"
		"\"conns_closed\":%llu,\"connect_retries\":%llu,\"chan_msgs\":%llu,"
		"\"bcast_msgs\":%llu,\"bcast_missed\":%llu,\"sleeps\":%llu,\"sleeps_cancelled\":%llu,"
		"\"timeouts_fired\":%llu,\"timeouts_beaten\":%llu,\"fanout_joins\":%llu,"
		"\"fs_ops\":%llu,\"blocking_jobs\":%llu,\"blocking_threads\":%u,\"wrong\":%llu,"
		"\"bytes_wrong\":%llu,\"client_errors\":%llu,\"loadavg1\":%.2f}\n",
		t, phase, (unsigned long long)s.rss_kb, (unsigned long long)proc_rss_kb(true),
		(unsigned long long)s.heap_kb,
		(unsigned long long)s.fds, (unsigned long long)s.sockets,
		(unsigned long long)s.nonsock, (unsigned long long)soak_get(&soak.client_fds),
		(unsigned long long)soak_get(&soak.server_fds), (unsigned long long)s.other_sockets,
		(unsigned long long)s.live, (unsigned long long)st.total_spawned,
		(unsigned long long)st.total_polled, (unsigned long long)sum_kinds(soak.spawned),
		(unsigned long long)sum_kinds(soak.completed),
		(unsigned long long)sum_kinds(soak.cancelled),
		(unsigned long long)soak_get(&soak.msgs), (unsigned long long)soak_get(&soak.bytes_checked),
		(unsigned long long)soak_get(&soak.conns_opened),
		(unsigned long long)soak_get(&soak.conns_closed),
		(unsigned long long)soak_get(&soak.connect_retries),
		(unsigned long long)soak_get(&soak.chan_msgs), (unsigned long long)soak_get(&soak.bcast_msgs),
		(unsigned long long)soak_get(&soak.bcast_missed), (unsigned long long)soak_get(&soak.sleeps),
		(unsigned long long)soak_get(&soak.sleeps_cancelled),
		(unsigned long long)soak_get(&soak.timeouts_fired),
		(unsigned long long)soak_get(&soak.timeouts_beaten),
		(unsigned long long)soak_get(&soak.fanout_joins), (unsigned long long)soak_get(&soak.fs_ops),
		(unsigned long long)soak_get(&soak.blocking_jobs), bs.threads,
		(unsigned long long)soak_get(&soak.wrong), (unsigned long long)soak_get(&soak.bytes_wrong),
		(unsigned long long)soak_get(&soak.client_errors), loadavg1());
	fflush(out);
	return s;
}

/* The least-squares slope of @field over the samples from @from, per minute. */
static double slope(size_t from, uint64_t (*field)(const struct sample *))
{
	double n = 0, st = 0, sv = 0, stt = 0, stv = 0;

	for (size_t i = from; i < nkept; i++) {
		double t = kept[i].t / 60, v = (double)field(&kept[i]);

		n++;
		st += t;
		sv += v;
		stt += t * t;
		stv += t * v;
	}
	if (n < 2 || n * stt - st * st == 0)
		return 0;
	return (n * stv - st * sv) / (n * stt - st * st);
}

static uint64_t rss_of(const struct sample *s) { return s->rss_kb; }
static uint64_t heap_of(const struct sample *s) { return s->heap_kb; }
static uint64_t fds_of(const struct sample *s) { return s->nonsock; }

static void judge(struct flat *f, double warmup_s, uint64_t (*field)(const struct sample *),
		  uint64_t (*slack)(uint64_t a_max))
{
	size_t from = 0;
	double mid;

	memset(f, 0, sizeof(*f));
	while (from < nkept && kept[from].t < warmup_s)
		from++;
	if (from == nkept)
		return;
	mid = (kept[from].t + kept[nkept - 1].t) / 2;
	f->first = field(&kept[from]);
	f->last = field(&kept[nkept - 1]);
	for (size_t i = from; i < nkept; i++) {
		uint64_t v = field(&kept[i]);

		if (kept[i].t < mid) {
			f->n_a++;
			f->a_max = v > f->a_max ? v : f->a_max;
		} else {
			f->n_b++;
			f->b_max = v > f->b_max ? v : f->b_max;
		}
	}
	f->slope_per_min = slope(from, field);
	f->limit = f->a_max + slack(f->a_max);
	f->judged = kept[nkept - 1].t - kept[from].t >= FLAT_MIN_SPAN_S &&
		    f->n_a >= FLAT_MIN_SAMPLES && f->n_b >= FLAT_MIN_SAMPLES;
	f->ok = f->b_max <= f->limit;
}

static uint64_t rss_slack(uint64_t a_max)
{
	uint64_t pct = a_max * RSS_SLACK_PCT / 100;

	return pct > RSS_SLACK_MIN_KB ? pct : RSS_SLACK_MIN_KB;
}

static uint64_t heap_slack(uint64_t a_max)
{
	uint64_t pct = a_max * HEAP_SLACK_PCT / 100;

	return pct > HEAP_SLACK_MIN_KB ? pct : HEAP_SLACK_MIN_KB;
}

static uint64_t fds_slack(uint64_t a_max)
{
	return FDS_SLACK;
}

void flat_judge(double warmup_s, struct flat *rss, struct flat *heap, struct flat *fds)
{
	judge(rss, warmup_s, rss_of, rss_slack);
	judge(heap, warmup_s, heap_of, heap_slack);
	judge(fds, warmup_s, fds_of, fds_slack);
}
