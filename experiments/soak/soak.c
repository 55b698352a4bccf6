// SPDX-License-Identifier: MIT
/*
 * blitz-soak - mixed load on one blitz runtime for a long time, sampled,
 * and checked at the end (experiments/soak/README.md).
 *
 *   blitz-soak [--duration S] [--warmup S] [--interval S] [--connections N]
 *              [--client-threads N] [--msgs-per-conn N] [--max-msg BYTES]
 *              [--workers N] [--samples FILE] [--tmpdir DIR]
 *
 * The load: the echo part (echo.c: a server on blitz, a churning client on
 * threads outside it) and the mix (mix.c: channels, broadcast, timers,
 * fan-out, fs, blocking pool).  Every --interval seconds a sample (RSS,
 * descriptors, live tasks, every counter) goes to --samples as a JSON line.
 * At the end the load stops, everything is waited for, and one JSON line
 * on stdout gives the figures and the checks:
 *   rss_flat, heap_flat, fds_flat
 *                       flat after the warm-up (sample.c: the definition)
 *   fds_back            descriptors at rest (the listener still open) =
 *                       before the load
 *   no_task_lost        per kind spawned = completed + cancelled, the
 *                       runtime's spawn count = the soak's, no live task
 *   no_byte_wrong       every echoed byte checked, none wrong, no client error
 *   no_wrong_result     no part found a wrong result
 *   stopped             everything ended within the hang guard
 * Exit 0 when every check holds (a flatness check not judged, for a run
 * too short, counts as holding), 1 otherwise, 2 for a bad option.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/resource.h>
#include "sample.h"
#include "soak.h"

#define STOP_GUARD_S	120	/* hang guard for each step of the stop */
#define WRONG_SHOWN	20	/* messages about wrong results, at most */

struct soak_counters soak;
atomic_bool soak_stopping;
static struct blitz_runtime *rt;		/* the one runtime, set before any spawn */

const char *const soak_kind_name[K_NR] = {
	[K_DRIVER] = "driver", [K_ACCEPT] = "acceptor", [K_ECHO] = "echo",
	[K_CHAN] = "chan", [K_BCAST] = "bcast", [K_SLEEP] = "sleep",
	[K_TIMEOUT] = "timeout", [K_FANOUT] = "fanout", [K_FS] = "fs",
	[K_BLOCKING] = "blocking",
};

void soak_wrong(const char *fmt, ...)
{
	va_list ap;

	/* Relaxed: a count; the message is for a person. */
	if (atomic_fetch_add_explicit(&soak.wrong, 1, memory_order_relaxed) >= WRONG_SHOWN)
		return;
	va_start(ap, fmt);
	fprintf(stderr, PROG ": WRONG: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

struct blitz_task *soak_spawn(enum soak_kind k, const struct blitz_task_vtable *vt,
			      const void *state, size_t size)
{
	struct blitz_task *t = blitz_spawn(rt, vt, state, size);

	if (t)
		soak_add(&soak.spawned[k], 1);
	return t;
}

int soak_spawn_detached(enum soak_kind k, const struct blitz_task_vtable *vt,
			const void *state, size_t size)
{
	int rc = blitz_spawn_detached(rt, vt, state, size);

	if (!rc)
		soak_add(&soak.spawned[k], 1);
	return rc;
}

void soak_task_dropped(enum soak_kind k, const struct blitz_co *co)
{
	soak_add(co->line == -1 ? &soak.completed[k] : &soak.cancelled[k], 1);
}

/* ---------------------------------------------------------------------- */
/* Options                                                                */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--duration S] [--warmup S] [--interval S] [--connections N]\n"
		"                  [--client-threads N] [--msgs-per-conn N] [--max-msg BYTES]\n"
		"                  [--workers N] [--samples FILE] [--tmpdir DIR]\n"
		"Mixed load on one blitz runtime (echo with connection churn, channels,\n"
		"timers, fan-out, fs, blocking pool), sampled every --interval seconds;\n"
		"checks at the end, one JSON line on stdout; exit 1 if a check fails.\n"
		"Defaults: --duration 600 --warmup (a fifth of the duration, 5-60 s, at\n"
		"          most half of it)\n"
		"          --interval (duration / 120, 1-5 s) --connections 1000\n"
		"          --client-threads 1 --msgs-per-conn 50 --max-msg 4096 --workers 2\n"
		"          --tmpdir $TMPDIR or /tmp; BLITZ_* variables configure the runtime.\n");
}

static double num_opt(const char *opt, const char *v, double lo, double hi, bool integer)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || *end || !*v || !(d >= lo && d <= hi) || (integer && d != (long)d)) {
		fprintf(stderr, PROG ": %s %s: expected %s from %g to %g\n", opt, v,
			integer ? "a whole number" : "a number", lo, hi);
		exit(2);
	}
	return d;
}

static void parse_opts(int argc, char **argv, struct soak_opts *o)
{
	static const struct option lopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "interval", required_argument, NULL, 'i' },
		{ "connections", required_argument, NULL, 'c' },
		{ "client-threads", required_argument, NULL, 't' },
		{ "msgs-per-conn", required_argument, NULL, 'm' },
		{ "max-msg", required_argument, NULL, 's' },
		{ "workers", required_argument, NULL, 'w' },
		{ "samples", required_argument, NULL, 'o' },
		{ "tmpdir", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char err[256];
	int c;

	*o = (struct soak_opts){ .duration_s = 600, .warmup_s = -1, .interval_s = -1,
				 .connections = 1000, .client_threads = 1, .msgs_per_conn = 50,
				 .max_msg = 4096 };
	o->tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	blitz_config_default(&o->cfg);
	o->cfg.workers = 2;
	if (blitz_config_from_env(&o->cfg, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		exit(2);
	}
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->duration_s = num_opt("--duration", optarg, 1, 7 * 86400, false); break;
		case 'W': o->warmup_s = num_opt("--warmup", optarg, 0, 7 * 86400, false); break;
		case 'i': o->interval_s = num_opt("--interval", optarg, 0.1, 3600, false); break;
		case 'c': o->connections = (long)num_opt("--connections", optarg, 1, 8000, true); break;
		case 't': o->client_threads = (long)num_opt("--client-threads", optarg, 1, 64, true); break;
		case 'm': o->msgs_per_conn = (long)num_opt("--msgs-per-conn", optarg, 1, 1000000, true); break;
		case 's': o->max_msg = (long)num_opt("--max-msg", optarg, 1, 1 << 20, true); break;
		case 'w':
			o->cfg.workers = (unsigned)num_opt("--workers", optarg, 1, blitz_max_workers(), true);
			break;
		case 'o': o->samples = optarg; break;
		case 'T': o->tmpdir = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (o->warmup_s < 0) {	/* a fifth, 5 to 60 s; a short run's first half */
		o->warmup_s = o->duration_s / 5;
		o->warmup_s = o->warmup_s < 5 ? 5 : o->warmup_s > 60 ? 60 : o->warmup_s;
		if (o->warmup_s >= o->duration_s)
			o->warmup_s = o->duration_s / 2;
	}
	if (o->interval_s < 0) {
		o->interval_s = o->duration_s / 120;
		o->interval_s = o->interval_s < 1 ? 1 : o->interval_s > 5 ? 5 : o->interval_s;
	}
	if (o->warmup_s >= o->duration_s) {
		fprintf(stderr, PROG ": --warmup %g: must be shorter than --duration %g\n",
			o->warmup_s, o->duration_s);
		exit(2);
	}
	if (o->client_threads > o->connections)
		o->client_threads = o->connections;
}

/* Both ends of every connection, plus room for the runtime and the fs part. */
static void raise_nofile(const struct soak_opts *o)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)(2 * o->connections + 256);

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need) {
		fprintf(stderr, PROG ": %ld connections need %llu descriptors; ulimit -n is %llu\n",
			o->connections, (unsigned long long)need, (unsigned long long)rl.rlim_cur);
		exit(2);
	}
}

/* ---------------------------------------------------------------------- */
/* The run                                                                */

static double now_s(void)
{
	return (double)blitz_now_ns() / 1e9;
}

static void nap_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* wait_for - until @done() or the hang guard; false (and a message) on the guard. */
static bool wait_for(bool (*done)(void), const char *what)
{
	double until = now_s() + STOP_GUARD_S;

	while (!done()) {
		if (now_s() > until) {
			fprintf(stderr, PROG ": %s did not happen within %d s\n", what, STOP_GUARD_S);
			return false;
		}
		nap_s(0.01);
	}
	return true;
}

static bool polled_once(void)
{
	struct blitz_stats st;

	blitz_stats(rt, &st);
	return st.total_polled > 0;
}

static bool server_idle(void)
{
	return soak_get(&soak.server_fds) == 0;
}

/* The run's figures and checks, as they are printed. */
struct result {
	struct flat rss, heap, fds;
	uint64_t heap_before_kb, heap_rest_kb;
	uint64_t fds_before, fds_rest, live_rest, rt_spawned;
	uint64_t rss_warm_kb, rss_end_kb, rss_rest_kb, hwm_kb;
	uint64_t spawned, completed, cancelled;
	unsigned samples;
	bool stopped, fds_back, no_task_lost, no_byte_wrong, no_wrong_result, ok;
};

static const char *tf(bool b)
{
	return b ? "true" : "false";
}

static void print_flat(const char *name, const struct flat *f, const char *unit)
{
	printf("\"%s\":{\"judged\":%s,\"ok\":%s,\"unit\":\"%s\",\"samples_a\":%u,\"samples_b\":%u,"
	       "\"first\":%llu,\"last\":%llu,\"a_max\":%llu,\"b_max\":%llu,\"limit\":%llu,"
	       "\"slope_per_min\":%.2f},",
	       name, tf(f->judged), f->judged ? tf(f->ok) : "null", unit, f->n_a, f->n_b,
	       (unsigned long long)f->first, (unsigned long long)f->last,
	       (unsigned long long)f->a_max, (unsigned long long)f->b_max,
	       (unsigned long long)f->limit, f->slope_per_min);
}

#define U(c) ((unsigned long long)soak_get(&soak.c))

static void print_result(const struct soak_opts *o, const struct result *r)
{
	printf("{\"runtime\":\"blitz\",\"bench\":\"soak\",\"workers\":%u,\"backend\":\"%s\","
	       "\"duration_s\":%g,\"warmup_s\":%g,\"interval_s\":%g,\"connections\":%ld,"
	       "\"client_threads\":%ld,\"msgs_per_conn\":%ld,\"max_msg\":%ld,\"samples\":%u,",
	       blitz_runtime_workers(rt), blitz_io_backend_name(rt), o->duration_s, o->warmup_s,
	       o->interval_s, o->connections, o->client_threads, o->msgs_per_conn, o->max_msg,
	       r->samples);
	printf("\"rss_kb_warm\":%llu,\"rss_kb_end\":%llu,\"rss_kb_rest\":%llu,\"hwm_kb\":%llu,",
	       (unsigned long long)r->rss_warm_kb, (unsigned long long)r->rss_end_kb,
	       (unsigned long long)r->rss_rest_kb, (unsigned long long)r->hwm_kb);
	print_flat("rss", &r->rss, "KiB");
	print_flat("heap", &r->heap, "KiB");
	printf("\"heap_kb_before\":%llu,\"heap_kb_rest\":%llu,", (unsigned long long)r->heap_before_kb,
	       (unsigned long long)r->heap_rest_kb);
	print_flat("nonsock_fds", &r->fds, "fds");
	printf("\"fds_before\":%llu,\"fds_rest\":%llu,\"live_tasks_rest\":%llu,",
	       (unsigned long long)r->fds_before, (unsigned long long)r->fds_rest,
	       (unsigned long long)r->live_rest);
	printf("\"tasks\":{");
	for (int k = 0; k < K_NR; k++)
		printf("%s\"%s\":[%llu,%llu,%llu]", k ? "," : "", soak_kind_name[k], U(spawned[k]),
		       U(completed[k]), U(cancelled[k]));
	printf("},\"tasks_spawned\":%llu,\"tasks_completed\":%llu,\"tasks_cancelled\":%llu,"
	       "\"runtime_spawned\":%llu,",
	       (unsigned long long)r->spawned, (unsigned long long)r->completed,
	       (unsigned long long)r->cancelled, (unsigned long long)r->rt_spawned);
	printf("\"conns_opened\":%llu,\"conns_closed\":%llu,\"connect_retries\":%llu,"
	       "\"accepted\":%llu,\"msgs\":%llu,\"bytes_checked\":%llu,\"bytes_wrong\":%llu,"
	       "\"client_errors\":%llu,",
	       U(conns_opened), U(conns_closed), U(connect_retries), U(accepted), U(msgs),
	       U(bytes_checked), U(bytes_wrong), U(client_errors));
	printf("\"chan_msgs\":%llu,\"bcast_msgs\":%llu,\"bcast_missed\":%llu,\"sleeps\":%llu,"
	       "\"sleeps_cancelled\":%llu,\"timeouts_fired\":%llu,\"timeouts_beaten\":%llu,"
	       "\"fanout_joins\":%llu,\"fs_ops\":%llu,\"blocking_jobs\":%llu,\"wrong\":%llu,",
	       U(chan_msgs), U(bcast_msgs), U(bcast_missed), U(sleeps), U(sleeps_cancelled),
	       U(timeouts_fired), U(timeouts_beaten), U(fanout_joins), U(fs_ops), U(blocking_jobs),
	       U(wrong));
	printf("\"checks\":{\"rss_flat\":%s,\"heap_flat\":%s,\"fds_flat\":%s,\"fds_back\":%s,\"no_task_lost\":%s,"
	       "\"no_byte_wrong\":%s,\"no_wrong_result\":%s,\"stopped\":%s},\"ok\":%s}\n",
	       r->rss.judged ? tf(r->rss.ok) : "null", r->heap.judged ? tf(r->heap.ok) : "null",
	       r->fds.judged ? tf(r->fds.ok) : "null",
	       tf(r->fds_back), tf(r->no_task_lost), tf(r->no_byte_wrong), tf(r->no_wrong_result),
	       tf(r->stopped), tf(r->ok));
	fflush(stdout);
}

/*
 * The counters are read only after live_tasks() returned 0: the runtime
 * takes a task off its live list (under a spinlock) after the task's drop
 * has run, and blitz_runtime_live_tasks() takes the same locks, so every
 * task's additions happen before this read; the client threads' additions
 * are ordered by pthread_join().
 */
static void account_tasks(struct result *r)
{
	struct blitz_stats st;

	r->no_task_lost = r->live_rest == 0;
	for (int k = 0; k < K_NR; k++) {
		uint64_t s = soak_get(&soak.spawned[k]), c = soak_get(&soak.completed[k]),
			 x = soak_get(&soak.cancelled[k]);

		r->spawned += s;
		r->completed += c;
		r->cancelled += x;
		if (s != c + x) {
			fprintf(stderr, PROG ": %s tasks: %llu spawned, %llu completed, %llu cancelled\n",
				soak_kind_name[k], (unsigned long long)s, (unsigned long long)c,
				(unsigned long long)x);
			r->no_task_lost = false;
		}
	}
	blitz_stats(rt, &st);
	r->rt_spawned = st.total_spawned;
	if (r->rt_spawned != r->spawned) {
		fprintf(stderr, PROG ": the runtime counts %llu spawns, the soak %llu\n",
			(unsigned long long)r->rt_spawned, (unsigned long long)r->spawned);
		r->no_task_lost = false;
	}
}

static void progress(double t, const struct sample *s)
{
	fprintf(stderr, PROG ": %4.0f s: rss %llu KiB, fds %llu (%llu not sockets), live tasks %llu, "
		"%llu msgs, %llu connections, %llu tasks\n", t, (unsigned long long)s->rss_kb,
		(unsigned long long)s->fds, (unsigned long long)s->nonsock,
		(unsigned long long)s->live, U(msgs), U(conns_closed),
		(unsigned long long)(soak_get(&soak.completed[K_FANOUT]) +
				     soak_get(&soak.completed[K_CHAN])));
}

/* Sample every interval until the duration; returns the number of samples. */
static unsigned run_load(const struct soak_opts *o, FILE *out, struct result *r)
{
	double t0 = now_s(), next = 0, next_progress = 60;
	unsigned n = 0;
	struct sample s;

	for (;;) {
		double t = now_s() - t0;

		if (t >= next) {
			s = sample_take(rt, t, "load", out);
			n++;
			if (!r->rss_warm_kb && t >= o->warmup_s)
				r->rss_warm_kb = s.rss_kb;
			r->rss_end_kb = s.rss_kb;
			if (t >= next_progress) {
				progress(t, &s);
				next_progress += 60;
			}
			next += o->interval_s;
		}
		if (t >= o->duration_s)
			return n;
		nap_s(next < o->duration_s ? next - t : o->duration_s - t);
	}
}

/* Stop the load; wait for every part, each step under the hang guard. */
static bool stop_load(void)
{
	bool ok;

	atomic_store_explicit(&soak_stopping, true, memory_order_relaxed);
	echo_client_join();		/* bounded by the client's own stall guard */
	ok = wait_for(server_idle, "the server's connections closing");
	ok = wait_for(mix_done, "the mix's drivers ending") && ok;
	echo_server_stop();
	mix_join();
	return ok;
}

int main(int argc, char **argv)
{
	struct soak_opts o;
	struct blitz_addr bound;
	struct result r = { 0 };
	FILE *out = NULL;
	struct sample s;
	int rc;

	parse_opts(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile(&o);
	if (o.samples && !(out = fopen(o.samples, "we"))) {
		fprintf(stderr, PROG ": %s: %s\n", o.samples, strerror(errno));
		return 2;
	}
	rt = blitz_runtime_new(&o.cfg);
	if (!rt) {
		perror(PROG ": blitz_runtime_new");
		return 1;
	}
	rc = echo_server_start(rt, &bound);
	if (rc) {
		fprintf(stderr, PROG ": echo server: %s\n", strerror(-rc));
		return 1;
	}
	/* The workers are up (they start on the first spawn) before the count. */
	if (!wait_for(polled_once, "the first poll"))
		return 1;
	r.fds_before = proc_fds(NULL);
	r.heap_before_kb = heap_kb();
	fprintf(stderr, PROG ": %g s of load (%g s warm-up, a sample every %g s), %ld connections, "
		"%u workers on %s\n", o.duration_s, o.warmup_s, o.interval_s, o.connections,
		blitz_runtime_workers(rt), blitz_io_backend_name(rt));
	mix_start(rt, &o);
	echo_client_start(&o, &bound);
	r.samples = run_load(&o, out, &r);
	r.stopped = stop_load();
	s = sample_take(rt, -1, "rest", out);
	r.live_rest = s.live;
	r.fds_rest = s.fds;
	r.rss_rest_kb = s.rss_kb;
	r.heap_rest_kb = s.heap_kb;
	r.hwm_kb = proc_rss_kb(true);
	r.fds_back = r.fds_rest == r.fds_before;
	if (!r.fds_back) {
		fprintf(stderr, PROG ": %llu descriptors at rest, %llu before the load:\n",
			(unsigned long long)r.fds_rest, (unsigned long long)r.fds_before);
		proc_fds_show(stderr);
	}
	account_tasks(&r);
	flat_judge(o.warmup_s, &r.rss, &r.heap, &r.fds);
	r.no_byte_wrong = !soak_get(&soak.bytes_wrong) && !soak_get(&soak.client_errors) &&
			  soak_get(&soak.bytes_checked) > 0;
	r.no_wrong_result = !soak_get(&soak.wrong);
	r.ok = r.stopped && r.fds_back && r.no_task_lost && r.no_byte_wrong && r.no_wrong_result &&
	       (!r.rss.judged || r.rss.ok) && (!r.heap.judged || r.heap.ok) &&
	       (!r.fds.judged || r.fds.ok);
	print_result(&o, &r);
	if (out)
		fclose(out);
	echo_server_close();
	blitz_runtime_free(rt);
	return r.ok ? 0 : 1;
}
