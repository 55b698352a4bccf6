// SPDX-License-Identifier: MIT
/*
 * core/sched/co.c - the coroutine macros' one out-of-line part: what
 * BLITZ_CO_END's default case reports (include/blitz/task.h, the rules).
 *
 * A resume point that is no case of the coroutine's switch is a bug of the
 * program (an AWAIT or YIELD inside a nested switch, or a struct blitz_co
 * written over): going on would report the task finished with its work
 * undone, so the process stops here, saying where.
 */
#include <stdio.h>
#include <stdlib.h>
#include <blitz/task.h>

void blitz_co_bad_resume(int line, const char *file, int end_line)
{
	fprintf(stderr,
		"blitz: %s:%d: coroutine resumed at line %d, which is no resume point "
		"of the coroutine that ends here: an AWAIT or YIELD inside a switch of "
		"its own (not allowed: blitz/task.h), or its struct blitz_co overwritten\n",
		file, end_line, line);
	abort();
}
