// SPDX-License-Identifier: MIT
/*
 * hello.c - the first example: a runtime, four tasks, and joining them.
 *
 * A blitz task is a poll function over a state struct.  The runtime calls
 * the function; it runs until it must wait or is done, and returns
 * BLITZ_PENDING or BLITZ_READY.  The BLITZ_CO_* macros let it be written
 * top to bottom: each BLITZ_YIELD or BLITZ_AWAIT is a point where the
 * function returns and where the next poll resumes.  Because the function
 * returns there, its local variables are gone on the next poll: whatever
 * must survive a YIELD or an AWAIT lives in the state struct.
 *
 * Run: build/examples/hello   (BLITZ_BACKEND, BLITZ_WORKERS, ... apply)
 */
#include <stdio.h>
#include <blitz.h>

#define TASKS	4
#define STEPS	1000

/* A task's state: its resume point, its input, and what it computes. */
struct summer {
	struct blitz_co co;	/* where the next poll resumes */
	int id;			/* set before the spawn */
	int i;			/* a loop counter that must survive a YIELD */
	long sum;		/* the result, read by main once joined */
	int worker;		/* the worker that ran the last step */
};

/* Sums id, 2 id, ..., STEPS id, yielding to the other tasks at every step. */
static enum blitz_poll summer_poll(void *arg, struct blitz_cx *cx)
{
	struct summer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 1; s->i <= STEPS; s->i++) {
		s->sum += (long)s->i * s->id;
		/* Back of the queue: another task (or worker) runs meanwhile. */
		BLITZ_YIELD(&s->co, cx);
	}
	s->worker = blitz_cx_worker(cx);
	BLITZ_CO_END(&s->co);
}

/* The task type: its poll function, and a drop function (none needed here). */
static const struct blitz_task_vtable summer_vt = BLITZ_TASK_VTABLE(summer_poll, NULL);

int main(void)
{
	struct blitz_runtime *rt;
	struct blitz_task *t[TASKS];
	long total = 0, want = 0;

	/* NULL: the defaults, with the BLITZ_* environment variables applied. */
	rt = blitz_runtime_new(NULL);
	if (!rt)
		return 1;
	for (int k = 0; k < TASKS; k++) {
		struct summer init = { .id = k + 1 };

		/*
		 * blitz_spawn copies @init into the task: the task works on
		 * its own copy, so changing `init` now would change nothing.
		 * The handle it returns is how main reaches that copy.
		 */
		t[k] = blitz_spawn(rt, &summer_vt, &init, sizeof(init));
		if (!t[k])
			return 1;
	}
	for (int k = 0; k < TASKS; k++) {
		struct summer *s;

		/* From main (not a worker) blitz_join waits, helping to run tasks. */
		if (blitz_join(t[k]) != 0)
			return 1;
		s = blitz_task_state(t[k]);	/* the task's copy, now final */
		/* Worker -1: main itself, which runs tasks while it waits. */
		printf("task %d: sum %ld, last step on worker %d\n", s->id, s->sum, s->worker);
		total += s->sum;
		want += (long)(k + 1) * STEPS * (STEPS + 1) / 2;
		blitz_task_release(t[k]);	/* the handle is given back */
	}
	printf("hello: %d tasks, %u workers, backend %s, total %ld\n", TASKS,
	       blitz_runtime_workers(rt), blitz_io_backend_name(rt), total);
	blitz_runtime_free(rt);
	return total == want ? 0 : 1;
}
