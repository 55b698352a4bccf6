// SPDX-License-Identifier: MIT
/*
 * co_nested_switch.c - the hazard blitz/task.h forbids: a YIELD inside a
 * switch of the program's own.  Its case belongs to the inner switch, so
 * the resume finds no case of the coroutine's: BLITZ_CO_END's default
 * must stop the process naming this file and the lines, instead of
 * reporting the task finished with its work undone.
 * tests/scripts/task-macros.sh expects SIGABRT and that message.
 */
#include <stdio.h>
#include <blitz.h>

struct st {
	struct blitz_co co;
	int kind, steps;
};

static enum blitz_poll st_poll(void *arg, struct blitz_cx *cx)
{
	struct st *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	switch (s->kind) {
	case 1:
		BLITZ_YIELD(&s->co, cx);	/* CO_NESTED_YIELD_LINE */
		s->steps++;
		break;
	default:
		break;
	}
	BLITZ_CO_END(&s->co);			/* CO_NESTED_END_LINE */
}

static const struct blitz_task_vtable st_vt = BLITZ_TASK_VTABLE(st_poll, NULL);

int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct st s = { .kind = 1 };
	int r;

	if (!rt)
		return 1;
	r = blitz_block_on(rt, &st_vt, &s, sizeof(s));
	blitz_runtime_free(rt);
	/* Not reached while the check works. */
	printf("co_nested_switch: finished (r=%d) with steps=%d\n", r, s.steps);
	return 0;
}
