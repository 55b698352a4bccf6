// SPDX-License-Identifier: MIT
/*
 * tools/print_loop.c - when a tool prints and what heads each print: Ctrl-C
 * and SIGTERM, the wait for the next interval (or the end, or the -p
 * process's exit) with the watch for a process mapping the binary, the
 * bounded take of a ring buffer, the time line of a text print and the
 * envelope of a JSON print.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "json_writer.h"
#include "print_loop.h"
#include "tool_args.h"
#include "usdt_target.h"

volatile sig_atomic_t tool_exiting;

static void on_signal(int sig)
{
	tool_exiting = 1;
}

void tool_catch_signals(void)
{
	/*
	 * SA_RESTART keeps a write to a slow pipe whole; the waits that
	 * matter (nanosleep, epoll_wait) return EINTR whatever the flag.
	 */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The take in progress (tool_ring_take): samples left, and whether Ctrl-C ends it. */
static long take_left;
static bool take_to_print;

int tool_sample_taken(void)
{
	if (--take_left <= 0 || (tool_exiting && !take_to_print))
		return -EINTR;
	return 0;
}

int tool_ring_take(struct ring_buffer *rb, int timeout_ms, long max, bool print)
{
	take_left = max;
	take_to_print = print;
	if (tool_exiting && !print)
		return 0;
	return timeout_ms > 0 ? ring_buffer__poll(rb, timeout_ms) : ring_buffer__consume(rb);
}

double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The -p process still runs: it exists and is not a zombie awaiting its parent. */
static bool target_alive(const struct tool_env *env)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	if (!env->pid)
		return true;
	if (kill(env->pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", env->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')'. */
	p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

bool tool_wait(struct tool_env *env, int (*poll)(void *ctx, int timeout_ms), void *ctx)
{
	double deadline, now;
	bool last = false;

	if (env->last_print == 0)
		env->last_print = now_mono();
	deadline = env->interval > 0 ? env->last_print + env->interval : 0;
	for (;;) {
		double slice = 0.2;

		now = now_mono();
		tool_watch_mapped(env, now);
		if (tool_exiting) {
			last = true;
			break;
		}
		if (!target_alive(env)) {
			env->target_gone = true;
			last = true;
			break;
		}
		if (deadline && now >= deadline)
			break;
		if (deadline && deadline - now < slice)
			slice = deadline - now;
		if (poll) {
			poll(ctx, (int)(slice * 1000) + 1);
		} else {
			struct timespec ts = {
				.tv_sec = (time_t)slice,
				.tv_nsec = (long)((slice - (double)(time_t)slice) * 1e9),
			};

			nanosleep(&ts, NULL);
		}
	}
	env->elapsed = now - env->last_print;
	env->last_print = now;
	env->prints++;
	if (env->count && env->prints >= env->count)
		last = true;
	return last;
}

void tool_print_time(const struct tool_env *env)
{
	char buf[32];
	time_t t;
	struct tm tm;

	if (env->interval <= 0)
		return;
	t = time(NULL);
	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	printf("\n%s\n", buf);
}

void tool_json_begin(struct json *j, const struct tool_env *env, const char *unit)
{
	memset(j, 0, sizeof(*j));
	j->f = stdout;
	json_obj_begin(j, NULL);
	json_str(j, "tool", env->def->name);
	json_str(j, "unit", unit);
	json_double(j, "ts", now_unix(), 6);
	if (env->interval > 0)
		json_double(j, "interval_s", env->elapsed, 6);
	else
		json_null(j, "interval_s");
}

void tool_json_end(struct json *j)
{
	json_obj_end(j);
	fputc('\n', j->f);
	fflush(j->f);
}
