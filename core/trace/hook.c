// SPDX-License-Identifier: MIT
/* core/trace/hook.c - the hooks' out-of-line parts (hook.h). */
#include "hook.h"

/*
 * trace_outside_queued - trace_outside's record, while event_flush
 * listens: out of line, so that a thread that is not a worker spawns and
 * queues with one semaphore test and no frame for it.
 */
__attribute__((noinline, cold)) void trace_outside_queued(struct blitz_task *t, unsigned type)
{
	struct worker_events *e;
	uint64_t id;

	if (!task_traced(t))
		return;
	e = events_outside_log(t->rt->hist_id, t->rt->num_workers);
	if (e) {
		/* The id first: a task's first id resets its queueing count. */
		id = trace_task_id(t, type == BLITZ_EVENT_SPAWN);
		events_log(e, type, id, (uint64_t)(uintptr_t)t, DEST_GLOBAL,
			   (int)task_queueing(t, type));
		events_outside_publish(e);
	}
}
