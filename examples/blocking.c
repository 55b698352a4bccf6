// SPDX-License-Identifier: MIT
/*
 * blocking.c - the blocking pool: work that would stop a worker thread.
 *
 * A worker thread runs many tasks in turn, so a task that calls something
 * that blocks (a syscall with no asynchronous form, a long computation)
 * stops every task of that worker while it does.  Such a call goes to the
 * blocking pool instead: a job (struct blitz_blocking, in the task's
 * state) runs the function on a pool thread, and the task awaits it as it
 * awaits I/O.  Threads start on demand, so jobs run in parallel.
 *
 * Eight tasks each run a job that sleeps 20 ms (standing for a blocking
 * call) and returns the square of its argument; a ticker task ticks every
 * 2 ms meanwhile, on the workers the jobs leave free.  Then main, which
 * is not a worker, runs one job itself with blitz_spawn_blocking() and
 * waits for it with blitz_blocking_wait().
 *
 * Run: build/examples/blocking   (BLITZ_BACKEND, BLITZ_BLOCKING_THREADS apply)
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <blitz.h>

#define JOBS	8

/* The blocking function: it runs on a pool thread, never on a worker. */
static int64_t slow_square(void *arg)
{
	int64_t n = (int64_t)(intptr_t)arg;
	struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	return n * n;
}

struct job_task {
	struct blitz_co co;
	struct blitz_blocking job;	/* in the state: it must outlive the wait */
	int64_t n, result;
};

static enum blitz_poll job_poll(void *arg, struct blitz_cx *cx)
{
	struct job_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	/* The argument is passed by value: the pool thread reads nothing of s. */
	blitz_blocking_init(&s->job, slow_square, (void *)(intptr_t)s->n);
	BLITZ_AWAIT(&s->co, blitz_blocking_poll(&s->job, cx));
	s->result = s->job.result;
	BLITZ_CO_END(&s->co);
}

/* A job still queued when its task is cancelled is taken back. */
static void job_drop(void *arg)
{
	blitz_blocking_cancel(&((struct job_task *)arg)->job);
}

static const struct blitz_task_vtable job_vt = BLITZ_TASK_VTABLE(job_poll, job_drop);

/* Ticks until it is cancelled: proof that the workers are not blocked. */
struct ticker {
	struct blitz_co co;
	struct blitz_interval iv;
	_Atomic uint64_t ticks;		/* read by main while it runs */
};

static enum blitz_poll ticker_poll(void *arg, struct blitz_cx *cx)
{
	struct ticker *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	blitz_interval_init(&s->iv, 2 * BLITZ_NSEC_PER_MSEC);
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_interval_tick_poll(&s->iv, cx));
		s->ticks++;
	}
	BLITZ_CO_END(&s->co);
}

/* The ticker never ends by itself: it is cancelled, and drop stops its timer. */
static void ticker_drop(void *arg)
{
	blitz_interval_cancel(&((struct ticker *)arg)->iv);
}

static const struct blitz_task_vtable ticker_vt = BLITZ_TASK_VTABLE(ticker_poll, ticker_drop);

int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct blitz_task *t[JOBS], *tick;
	struct ticker tk = { 0 };
	struct blitz_blocking job;
	struct blitz_blocking_stats st;
	uint64_t start = blitz_now_ns(), ticks;
	int64_t sum = 0, want = 0;

	if (!rt)
		return 1;
	tick = blitz_spawn(rt, &ticker_vt, &tk, sizeof(tk));
	for (int k = 0; k < JOBS; k++) {
		struct job_task init = { .n = k + 1 };

		t[k] = blitz_spawn(rt, &job_vt, &init, sizeof(init));
		if (!t[k] || !tick)
			return 1;
	}
	for (int k = 0; k < JOBS; k++) {
		if (blitz_join(t[k]) != 0)
			return 1;
		sum += ((struct job_task *)blitz_task_state(t[k]))->result;
		want += (int64_t)(k + 1) * (k + 1);
		blitz_task_release(t[k]);
	}
	printf("blocking: %d jobs of 20 ms from tasks in %.1f ms, sum of squares %lld\n",
	       JOBS, (double)(blitz_now_ns() - start) / 1e6, (long long)sum);
	/* A job from a thread outside the runtime: main waits for it itself. */
	blitz_blocking_init(&job, slow_square, (void *)(intptr_t)12);
	if (blitz_spawn_blocking(rt, &job) != 0 || blitz_blocking_wait(&job) != 144)
		return 1;
	ticks = ((struct ticker *)blitz_task_state(tick))->ticks;
	blitz_task_cancel(tick);
	blitz_join(tick);		/* -ECANCELED: it was cancelled, as asked */
	blitz_task_release(tick);
	blitz_blocking_stats(rt, &st);
	printf("blocking: main's job gave %lld; %llu pool threads started; "
	       "the ticker ticked %llu times meanwhile (%s)\n", (long long)job.result,
	       (unsigned long long)st.threads_started, (unsigned long long)ticks,
	       blitz_io_backend_name(rt));
	blitz_runtime_free(rt);
	return sum == want ? 0 : 1;
}
