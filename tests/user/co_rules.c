// SPDX-License-Identifier: MIT
/*
 * co_rules.c - the coroutine rules of blitz/task.h, as a user's program
 * exercises them: a declaration right after BEGIN, a sub-coroutine that
 * returns early and is started over with BLITZ_CO_INIT, a break at the top
 * of a body, a poll after END, YIELD under if/else, the final state copied back by blitz_block_on.
 * tests/scripts/task-macros.sh compiles it with each compiler and
 * sanitizer under -Wall -Wextra -Wimplicit-fallthrough -Werror; it exits 0
 * when every rule held.
 */
#include <stdio.h>
#include <blitz.h>

/* A sub-coroutine: counts up, returning early once it reaches @stop. */
struct counter {
	struct blitz_co co;
	int n, runs;
};

static enum blitz_poll counter_poll(struct counter *c, int stop, struct blitz_cx *cx)
{
	BLITZ_CO_BEGIN(&c->co);
	int first = 1;		/* a declaration right after BEGIN compiles */

	c->runs += first;
	for (c->n = 0;; c->n++) {
		if (c->n == stop)
			return BLITZ_READY;	/* early return: done */
		BLITZ_YIELD(&c->co, cx);
	}
	BLITZ_CO_END(&c->co);
}

/* A break at the top of the body finishes the coroutine, as END does. */
struct breaker {
	struct blitz_co co;
	int before, after;
};

static enum blitz_poll breaker_poll(struct breaker *b, struct blitz_cx *cx)
{
	BLITZ_CO_BEGIN(&b->co);
	b->before++;
	BLITZ_YIELD(&b->co, cx);
	if (b->before)
		break;
	b->after++;
	BLITZ_CO_END(&b->co);
}

struct parent {
	struct blitz_co co;
	struct counter sub;
	struct breaker brk;
	int odd, even, after_end, total;
};

static enum blitz_poll parent_poll(void *arg, struct blitz_cx *cx)
{
	struct parent *p = arg;

	BLITZ_CO_BEGIN(&p->co);
	BLITZ_AWAIT(&p->co, counter_poll(&p->sub, 3, cx));
	p->total += p->sub.n;
	p->sub.co = BLITZ_CO_INIT;	/* start the sub-coroutine over */
	BLITZ_AWAIT(&p->co, counter_poll(&p->sub, 5, cx));
	p->total += p->sub.n;
	BLITZ_AWAIT(&p->co, breaker_poll(&p->brk, cx));
	/* if/else where a switch would not be allowed around a YIELD */
	while (p->odd + p->even < 4) {
		if ((p->odd + p->even) % 2)
			p->odd++;
		else
			p->even++;
		BLITZ_YIELD(&p->co, cx);
	}
	BLITZ_CO_END(&p->co);
}

/* A whole coroutine that reached END: polled again, it runs nothing. */
struct once {
	struct blitz_co co;
	int body;
};

static enum blitz_poll once_poll(struct once *o)
{
	BLITZ_CO_BEGIN(&o->co);
	o->body++;
	BLITZ_CO_END(&o->co);
}

static const struct blitz_task_vtable parent_vt = BLITZ_TASK_VTABLE(parent_poll, NULL);

int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct parent p = { .co = BLITZ_CO_INIT };
	struct once o = { .co = BLITZ_CO_INIT };
	int fail = 0;

	if (!rt) {
		perror("blitz_runtime_new");
		return 1;
	}
	if (blitz_block_on(rt, &parent_vt, &p, sizeof(p)) != 0)
		fail |= 1;
	blitz_runtime_free(rt);
	/* The copy came back: 3 + 5 counted, the sub-coroutine ran twice. */
	if (p.total != 8 || p.sub.runs != 2 || p.odd != 2 || p.even != 2 ||
	    !BLITZ_CO_FINISHED(&p.co) || p.brk.before != 1 || p.brk.after != 0 ||
	    !BLITZ_CO_FINISHED(&p.brk.co))
		fail |= 2;
	if (once_poll(&o) != BLITZ_READY || once_poll(&o) != BLITZ_READY || o.body != 1 ||
	    !BLITZ_CO_FINISHED(&o.co))
		fail |= 4;
	if (fail)
		fprintf(stderr, "co_rules: failed (%d): total %d runs %d odd %d even %d body %d\n",
			fail, p.total, p.sub.runs, p.odd, p.even, o.body);
	else
		puts("co_rules: ok");
	return fail;
}
