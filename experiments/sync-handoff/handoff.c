// SPDX-License-Identifier: MIT
/*
 * handoff - the contended regime of sync-bench's mutex_contended_4t and
 * semaphore_contended_8t2p, made deterministic (README.md): the holders
 * take the lock (or the permits) and yield once holding it, so that the
 * other tasks queue; from then on every release hands off to the head
 * waiter (FIFO) and the releaser queues behind, until the tasks end.
 *
 *   handoff [mutex|semaphore] [OPS] [ITERS] [WORKERS]
 *
 * mutex: 4 tasks on a Mutex; semaphore: 8 tasks on a Semaphore of 2.
 * Prints one line per iteration: "<kind> <ns per op>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <blitz.h>

#define MAX_TASKS 8

static struct blitz_mutex mutex;
static struct blitz_semaphore sem;
static bool use_mutex;
static long counter;			/* under the lock */

static enum blitz_poll acquire_poll(struct blitz_waiter *w, struct blitz_cx *cx)
{
	return use_mutex ? blitz_mutex_lock_poll(&mutex, w, cx)
			 : blitz_semaphore_acquire_poll(&sem, w, 1, cx);
}

static void release(void)
{
	if (use_mutex)
		blitz_mutex_unlock(&mutex);
	else
		blitz_semaphore_release(&sem, 1);
}

struct locker {
	struct blitz_co co;
	struct blitz_waiter w;
	long i, n;
	bool holder;			/* takes a permit first and yields holding it */
};

static enum blitz_poll locker_poll(void *arg, struct blitz_cx *cx)
{
	struct locker *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_YIELD(&s->co, cx);	/* every task starts before any holds */
	if (s->holder) {
		BLITZ_AWAIT(&s->co, acquire_poll(&s->w, cx));
		BLITZ_YIELD(&s->co, cx);
		release();
	}
	for (s->i = 0; s->i < s->n; s->i++) {
		BLITZ_AWAIT(&s->co, acquire_poll(&s->w, cx));
		counter++;
		release();
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable locker_vt = BLITZ_TASK_VTABLE(locker_poll, NULL);

struct root {
	struct blitz_co co;
	int n, holders;
	long per;
	struct blitz_task *t[MAX_TASKS];
};

static enum blitz_poll root_poll(void *arg, struct blitz_cx *cx)
{
	struct root *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = 0; i < s->n; i++) {
		struct locker l = { .n = s->per, .holder = i < s->holders };

		s->t[i] = blitz_spawn(NULL, &locker_vt, &l, sizeof(l));
		if (!s->t[i]) {
			fprintf(stderr, "handoff: spawn failed\n");
			exit(1);
		}
	}
	BLITZ_AWAIT(&s->co, blitz_join_tasks_poll(s->t, (size_t)s->n, cx));
	for (int i = 0; i < s->n; i++)
		blitz_task_release(s->t[i]);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable root_vt = BLITZ_TASK_VTABLE(root_poll, NULL);

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "mutex";
	long ops = argc > 2 ? atol(argv[2]) : 100000;
	int iters = argc > 3 ? atoi(argv[3]) : 5;
	bool is_sem = strcmp(kind, "semaphore") == 0;
	uint32_t permits = is_sem ? 2 : 1;
	struct blitz_config cfg;
	struct blitz_runtime *rt;
	char err[256];

	if ((!is_sem && strcmp(kind, "mutex")) || ops < MAX_TASKS || iters < 1) {
		fprintf(stderr, "usage: handoff [mutex|semaphore] [OPS >= 8] [ITERS >= 1] [WORKERS]\n");
		return 2;
	}
	use_mutex = !is_sem;
	blitz_config_default(&cfg);
	if (blitz_config_from_env(&cfg, err, sizeof(err))) {
		fprintf(stderr, "handoff: %s\n", err);
		return 2;
	}
	cfg.workers = argc > 4 ? (unsigned)atoi(argv[4]) : 1;
	rt = blitz_runtime_new(&cfg);
	if (!rt) {
		perror("handoff: blitz_runtime_new");
		return 1;
	}
	for (int it = 0; it < iters; it++) {
		struct root r = { .n = is_sem ? 8 : 4, .holders = (int)permits };
		double t0;

		r.per = ops / r.n;
		blitz_mutex_init(&mutex);
		blitz_semaphore_init(&sem, permits);
		counter = 0;
		t0 = now_ns();
		if (blitz_block_on(rt, &root_vt, &r, sizeof(r)) != 0 || counter != r.per * r.n) {
			fprintf(stderr, "handoff: lost increments\n");
			return 1;
		}
		printf("%s %.2f\n", kind, (now_ns() - t0) / (double)(r.per * r.n));
	}
	blitz_runtime_free(rt);
	return 0;
}
