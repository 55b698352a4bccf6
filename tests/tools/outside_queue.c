// SPDX-License-Identifier: MIT
/*
 * tests/tools/outside_queue.c - outside-queue [N [MS]]: the program's own
 * thread, not a worker, spawns N tasks (5) with MS milliseconds (300) of
 * sleep after each, a sleep that is not a blitz wait, then joins them.
 * The event log's outside records (core/trace/event_log.h) then reach a
 * tracer long after the workers have flushed past them: each is flushed
 * at the next spawn (its log is BLITZ_EVENT_FLUSH_NS old by then) or at
 * the joins, so blitz-events pairs them behind its merge
 * (tests/scripts/tools-events.sh).  Exits 0 once every task ran once.
 *
 * outside-queue -s: step by step, for a test that attaches and detaches
 * tracers between spawns: at each line read from stdin, spawn one task,
 * wait until a worker ran it (a sleep, not a blitz wait, so that the
 * thread's log is not flushed), and print "ran K".  At the end of input,
 * join them all.  A line "b" spawns a task that blocks its worker from
 * its poll's start to the process's end (a sleep, not a blitz wait): that
 * worker ticks no more, and at the end of input the program returns from
 * main with the runtime running.
 *
 * outside-queue -x N: spawn a task that yields for ever (its worker never
 * parks, so it snapshots and flushes only every 100-200 ms) and N tasks,
 * wait until the N ran (a sleep), print "ran N polled P" (P: the
 * runtime's polls so far) and return from main without
 * blitz_runtime_free: the workers are still running when the process
 * exits, and a tracer must still get at least P polls
 * (core/trace/exit_flush.h; tests/scripts/tools-exit.sh).
 *
 * outside-queue -X N: a second thread, not a worker, spawns N tasks and
 * then waits for ever (pause(), not a blitz wait: its log is not
 * flushed); the program's thread waits until the N ran (a sleep), prints
 * "ran N" and returns from main: the process's exit must hand over the
 * second thread's spawns that its log still holds (core/trace/event_log.c,
 * "The process's exit"; tests/scripts/tools-exit.sh).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <blitz.h>

static atomic_int ran;

static enum blitz_poll count_poll(void *state, struct blitz_cx *cx)
{
	(void)state;
	(void)cx;
	atomic_fetch_add(&ran, 1);
	return BLITZ_READY;
}

static const struct blitz_task_vtable count_vt = BLITZ_TASK_VTABLE(count_poll, NULL);

/* block_poll - counted as run, then holds its worker until the process ends. */
static enum blitz_poll block_poll(void *state, struct blitz_cx *cx)
{
	struct timespec s = { 1, 0 };

	(void)state;
	(void)cx;
	atomic_fetch_add(&ran, 1);
	for (;;)
		nanosleep(&s, NULL);
	return BLITZ_PENDING;
}

static const struct blitz_task_vtable block_vt = BLITZ_TASK_VTABLE(block_poll, NULL);

/* join_all - join and release @tasks[0..@n). */
static void join_all(struct blitz_task **tasks, int n)
{
	for (int i = 0; i < n; i++) {
		blitz_join(tasks[i]);
		blitz_task_release(tasks[i]);
	}
}

/* ran_wait - sleep (not a blitz wait) until @n tasks have run. */
static void ran_wait(int n)
{
	struct timespec ms = { 0, 1000000 };

	while (atomic_load(&ran) < n)
		nanosleep(&ms, NULL);
}

static enum blitz_poll spin_poll(void *state, struct blitz_cx *cx)
{
	(void)state;
	blitz_yield_now(cx);
	return BLITZ_PENDING;
}

static const struct blitz_task_vtable spin_vt = BLITZ_TASK_VTABLE(spin_poll, NULL);

/* exit_early - the -x mode: @n tasks run, then out with the runtime running. */
static int exit_early(struct blitz_runtime *rt, int n)
{
	struct blitz_stats st;

	if (blitz_spawn_detached(rt, &spin_vt, NULL, 0)) {
		perror("outside-queue: blitz_spawn_detached");
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (blitz_spawn_detached(rt, &count_vt, NULL, 0)) {
			perror("outside-queue: blitz_spawn_detached");
			return 1;
		}
	ran_wait(n);
	blitz_stats(rt, &st);
	printf("ran %d polled %llu\n", n, (unsigned long long)st.total_polled);
	fflush(stdout);
	return 0;	/* the runtime is not freed: its workers run on into exit() */
}

struct spawner {
	struct blitz_runtime *rt;
	int n;
	atomic_int spawned;		/* -1: a spawn failed */
};

/* spawn_then_pause - -X's second thread: @arg's N tasks, then no return. */
static void *spawn_then_pause(void *arg)
{
	struct spawner *s = arg;

	for (int i = 0; i < s->n; i++)
		if (blitz_spawn_detached(s->rt, &count_vt, NULL, 0)) {
			perror("outside-queue: blitz_spawn_detached");
			atomic_store(&s->spawned, -1);
			return NULL;
		}
	atomic_store(&s->spawned, s->n);
	for (;;)
		pause();
}

/* exit_beside - the -X mode: a thread spawns @n tasks, the process exits while it waits. */
static int exit_beside(struct blitz_runtime *rt, int n)
{
	static struct spawner s;
	struct timespec ms = { 0, 1000000 };
	pthread_t thread;
	int err;

	s.rt = rt;
	s.n = n;
	err = pthread_create(&thread, NULL, spawn_then_pause, &s);
	if (err) {
		fprintf(stderr, "outside-queue: pthread_create: %s\n", strerror(err));
		return 1;
	}
	while (atomic_load(&s.spawned) == 0)
		nanosleep(&ms, NULL);
	if (atomic_load(&s.spawned) < 0)
		return 1;
	ran_wait(n);
	printf("ran %d\n", n);
	fflush(stdout);
	return 0;	/* the thread still waits, its log unflushed, as exit() stops it */
}

/*
 * read_line - the next line of stdin, or false at its end.  It waits in
 * poll(2), not in stdio: a signal that comes meanwhile (the flight
 * recorder's dump) is handled at once under ThreadSanitizer too, which
 * holds a signal back until its thread is in a call it knows blocks.
 */
static bool read_line(char *first)
{
	struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
	char c = 0;
	ssize_t r;

	*first = 0;
	do {
		r = poll(&in, 1, -1);
		if (r > 0)
			r = read(STDIN_FILENO, &c, 1);
		if (r == 1 && !*first)
			*first = c;
	} while ((r == 1 && c != '\n') || (r < 0 && errno == EINTR));
	return r == 1;
}

/*
 * steps - the -s mode: a task per line of stdin, each run before "ran K";
 * *@blocked once a "b" line's task holds its worker (no join then).
 */
static int steps(struct blitz_runtime *rt, bool *blocked)
{
	struct blitz_task *tasks[64];
	int n = 0;
	char first;

	while (read_line(&first)) {
		if (n == (int)(sizeof(tasks) / sizeof(tasks[0]))) {
			fprintf(stderr, "outside-queue -s: at most %d steps\n", n);
			return 2;
		}
		*blocked |= first == 'b';
		tasks[n] = blitz_spawn(rt, first == 'b' ? &block_vt : &count_vt, NULL, 0);
		if (!tasks[n]) {
			perror("outside-queue: blitz_spawn");
			return 1;
		}
		ran_wait(++n);
		printf("ran %d\n", n);
		fflush(stdout);
	}
	if (!*blocked)
		join_all(tasks, n);
	return 0;
}

int main(int argc, char **argv)
{
	bool step = argc == 2 && !strcmp(argv[1], "-s");
	bool early = argc == 3 && !strcmp(argv[1], "-x");
	bool beside = argc == 3 && !strcmp(argv[1], "-X");
	int n = step ? 1 : early || beside ? atoi(argv[2]) : argc > 1 ? atoi(argv[1]) : 5;
	int ms = early || beside ? 0 : argc > 2 ? atoi(argv[2]) : 300;
	struct timespec pause = { ms / 1000, (long)(ms % 1000) * 1000000 };
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct blitz_task **tasks = calloc(n > 0 ? (size_t)n : 1, sizeof(*tasks));

	if (n <= 0 || ms < 0 || !rt || !tasks) {
		fprintf(stderr, "usage: outside-queue [N > 0 [MS >= 0]] | -s | -x N > 0 | -X N > 0 "
			"(or no runtime, no memory)\n");
		return 2;
	}
	if (early || beside) {
		free(tasks);
		return early ? exit_early(rt, n) : exit_beside(rt, n);
	}
	if (step) {
		bool blocked = false;
		int rc = steps(rt, &blocked);

		if (blocked)
			return rc;	/* a worker held: out with the runtime running */
		blitz_runtime_free(rt);
		free(tasks);
		return rc;
	}
	for (int i = 0; i < n; i++) {
		tasks[i] = blitz_spawn(rt, &count_vt, NULL, 0);
		if (!tasks[i]) {
			perror("outside-queue: blitz_spawn");
			return 1;
		}
		nanosleep(&pause, NULL);
	}
	join_all(tasks, n);
	blitz_runtime_free(rt);
	free(tasks);
	if (atomic_load(&ran) != n) {
		fprintf(stderr, "outside-queue: %d of %d tasks ran\n", atomic_load(&ran), n);
		return 1;
	}
	return 0;
}
