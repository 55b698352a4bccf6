/* SPDX-License-Identifier: MIT */
/*
 * core/sched/help.h - a join from a worker runs other tasks until its
 * target completes (core/sched/help.c; docs/scheduler.md, "Joining from a
 * worker").
 */
#ifndef BLITZ_CORE_SCHED_HELP_H
#define BLITZ_CORE_SCHED_HELP_H

#include <stdbool.h>
#include <stdint.h>

struct blitz_task;
struct blitz_runtime;

/*
 * struct help_frame - one join helping on a worker's stack, on that
 * stack; worker->help is the innermost, and each links to the one below.
 * Only the owning worker reads or writes them.
 */
struct help_frame {
	struct help_frame *outer;
	struct blitz_task *joiner;	/* the task whose poll called the join (NULL: none) */
};

bool help_stack_bounds(uintptr_t *limit, uintptr_t *top);
uintptr_t help_stack_limit(void);
void help_wake_cancelled_joiner(struct blitz_runtime *rt, struct blitz_task *joiner);

#endif
