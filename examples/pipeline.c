// SPDX-License-Identifier: MIT
/*
 * pipeline.c - three stages joined by channels, spread over the workers.
 *
 *	producer --numbers--> 4 squarers --squares--> summer (the main task)
 *
 * The channels are bounded (16 values): a producer that gets ahead waits
 * for room (backpressure) and a squarer with nothing to read waits for a
 * value; neither blocks its worker thread, which runs other tasks
 * meanwhile.  The end of the stream is a close: the producer closes
 * `numbers` after its last value; each squarer gets -EPIPE once `numbers`
 * is closed and empty; the last squarer to stop closes `squares`; the
 * summer gets -EPIPE and joins them all.
 *
 * Every wait on a channel uses a waiter node in the task's state (zeroed
 * by the spawn's copy of a zeroed struct); a task that could be cancelled
 * while it waits takes its node back in its drop function.
 *
 * Run: build/examples/pipeline   (BLITZ_BACKEND, BLITZ_WORKERS apply)
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <blitz.h>

#define NUMBERS		20000
#define SQUARERS	4

/* What the stages share; it lives in main() and outlives every task. */
struct pipe_line {
	struct blitz_channel numbers, squares;
	atomic_int squarers_left;	/* the last one closes `squares` */
};

struct producer {
	struct blitz_co co;
	struct pipe_line *p;
	struct blitz_chan_waiter w;
	long n;
	int err;
};

static enum blitz_poll producer_poll(void *arg, struct blitz_cx *cx)
{
	struct producer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->n = 1; s->n <= NUMBERS; s->n++)
		BLITZ_AWAIT(&s->co, blitz_channel_send_poll(&s->p->numbers, &s->w, cx,
							    &s->n, &s->err));
	blitz_channel_close(&s->p->numbers);
	BLITZ_CO_END(&s->co);
}

struct squarer {
	struct blitz_co co;
	struct pipe_line *p;
	struct blitz_chan_waiter w;	/* one node serves the receive and the send */
	long n;
	int err;
	long count;			/* values it squared */
	unsigned workers;		/* a bit per worker it ran on */
};

static enum blitz_poll squarer_poll(void *arg, struct blitz_cx *cx)
{
	struct squarer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(&s->p->numbers, &s->w, cx,
							    &s->n, &s->err));
		if (s->err == -EPIPE)		/* closed and drained */
			break;
		s->n *= s->n;
		s->count++;
		if (blitz_cx_worker(cx) >= 0)
			s->workers |= 1u << (blitz_cx_worker(cx) % 32);
		BLITZ_AWAIT(&s->co, blitz_channel_send_poll(&s->p->squares, &s->w, cx,
							    &s->n, &s->err));
	}
	if (atomic_fetch_sub(&s->p->squarers_left, 1) == 1)
		blitz_channel_close(&s->p->squares);
	BLITZ_CO_END(&s->co);
}

/* Nodes are taken back in drop: it runs at the end, and at a cancel too. */
static void producer_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct producer *)arg)->w);
}

static void squarer_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct squarer *)arg)->w);
}

static const struct blitz_task_vtable producer_vt = BLITZ_TASK_VTABLE(producer_poll, producer_drop);
static const struct blitz_task_vtable squarer_vt = BLITZ_TASK_VTABLE(squarer_poll, squarer_drop);

struct summer {
	struct blitz_co co;
	struct pipe_line *p;
	struct blitz_task *t[1 + SQUARERS];	/* the producer, then the squarers */
	struct blitz_chan_waiter w;
	long n, sum, count;
	int err;
};

static int spawn_stages(struct summer *s)
{
	struct producer pr = { .p = s->p };
	struct squarer sq = { .p = s->p };

	s->t[0] = blitz_spawn(NULL, &producer_vt, &pr, sizeof(pr));
	for (int k = 1; k <= SQUARERS; k++)
		s->t[k] = blitz_spawn(NULL, &squarer_vt, &sq, sizeof(sq));
	for (int k = 0; k <= SQUARERS; k++)
		if (!s->t[k])
			return -1;
	return 0;
}

static enum blitz_poll summer_poll(void *arg, struct blitz_cx *cx)
{
	struct summer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	if (spawn_stages(s) < 0)
		return BLITZ_READY;
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(&s->p->squares, &s->w, cx,
							    &s->n, &s->err));
		if (s->err == -EPIPE)
			break;
		s->sum += s->n;
		s->count++;
	}
	/* Every stage has finished or is finishing: wait for all of them. */
	BLITZ_AWAIT(&s->co, blitz_join_tasks_poll(s->t, 1 + SQUARERS, cx));
	BLITZ_CO_END(&s->co);
}

static const struct blitz_task_vtable summer_vt = BLITZ_TASK_VTABLE(summer_poll, NULL);

int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct pipe_line p = { .squarers_left = SQUARERS };
	struct summer s = { .p = &p };
	long want = (long)NUMBERS * (NUMBERS + 1) * (2 * NUMBERS + 1) / 6, count = 0;

	if (!rt || blitz_channel_init(&p.numbers, 16, sizeof(long)) < 0 ||
	    blitz_channel_init(&p.squares, 16, sizeof(long)) < 0)
		return 1;
	if (blitz_block_on(rt, &summer_vt, &s, sizeof(s)) != 0 || !s.t[SQUARERS])
		return 1;
	for (int k = 1; k <= SQUARERS; k++) {
		struct squarer *q = blitz_task_state(s.t[k]);

		printf("squarer %d: %ld values, on workers", k, q->count);
		for (int w = 0; w < 32; w++)
			if (q->workers & (1u << w))
				printf(" %d", w);
		printf("\n");
		count += q->count;
	}
	for (int k = 0; k <= SQUARERS; k++)
		blitz_task_release(s.t[k]);
	printf("pipeline: %ld squares of 1..%d, sum %ld (%s, %u workers)\n", s.count, NUMBERS,
	       s.sum, blitz_io_backend_name(rt), blitz_runtime_workers(rt));
	blitz_runtime_free(rt);
	blitz_channel_destroy(&p.numbers);
	blitz_channel_destroy(&p.squares);
	return s.sum == want && s.count == NUMBERS && count == NUMBERS ? 0 : 1;
}
