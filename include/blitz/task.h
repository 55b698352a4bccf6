/* SPDX-License-Identifier: MIT */
/*
 * blitz/task.h - stackless tasks, wakers, join handles.
 *
 * A task is one allocation: a small header followed by the user's state
 * struct.  The runtime calls the task's poll function with that state; poll
 * returns BLITZ_READY when the task is done or BLITZ_PENDING after it has
 * arranged to be woken (by handing a waker to whatever it waits on).
 *
 * The BLITZ_CO_* macros let a poll function be written top to bottom:
 *
 *	struct counter { struct blitz_co co; int i; };
 *
 *	static enum blitz_poll counter_poll(void *arg, struct blitz_cx *cx)
 *	{
 *		struct counter *s = arg;
 *
 *		BLITZ_CO_BEGIN(&s->co);
 *		for (s->i = 0; s->i < 10; s->i++)
 *			BLITZ_YIELD(&s->co, cx);
 *		BLITZ_CO_END(&s->co);
 *	}
 *	static const struct blitz_task_vtable counter_vt = BLITZ_TASK_VTABLE(counter_poll, NULL);
 *
 * Locals do not survive an AWAIT or a YIELD: keep them in the state struct.
 */
#ifndef BLITZ_TASK_H
#define BLITZ_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum blitz_poll {
	BLITZ_PENDING = 0,
	BLITZ_READY = 1,
};

struct blitz_task;
struct blitz_cx;
struct blitz_runtime;

/*
 * Type erasure through a vtable: poll and drop are the user's; schedule and
 * reschedule are the runtime's (BLITZ_TASK_VTABLE fills them in).
 *  - poll(state, cx): run the task until it is done or must wait.
 *  - drop(state): release what the state holds; called once, on a worker,
 *    when the task completes or is cancelled (NULL: nothing to release).
 *    The state stays readable by a join handle after drop.
 *  - schedule(task): queue a task that a wake moved from IDLE to SCHEDULED.
 *  - reschedule(task): queue a task that was woken (or yielded) while it was
 *    running; it goes to the back of the local queue, not the LIFO slot.
 */
struct blitz_task_vtable {
	enum blitz_poll (*poll)(void *state, struct blitz_cx *cx);
	void (*drop)(void *state);
	void (*schedule)(struct blitz_task *task);
	void (*reschedule)(struct blitz_task *task);
};

void blitz_task_schedule(struct blitz_task *task);
void blitz_task_reschedule(struct blitz_task *task);

#define BLITZ_TASK_VTABLE(poll_fn, drop_fn) {			\
	.poll = (poll_fn), .drop = (drop_fn),			\
	.schedule = blitz_task_schedule,			\
	.reschedule = blitz_task_reschedule,			\
}

/*
 * Wakers: 16-byte values (data + vtable).  A waker owns one reference to
 * what it wakes.  wake() consumes the waker, wake_by_ref() does not,
 * clone() takes another reference, drop() releases one.
 */
struct blitz_waker;
struct blitz_waker_vtable {
	void (*wake)(const void *data);
	void (*wake_by_ref)(const void *data);
	struct blitz_waker (*clone)(const void *data);
	void (*drop)(const void *data);
};

struct blitz_waker {
	const void *data;
	const struct blitz_waker_vtable *vtable;
};

static inline void blitz_waker_wake(struct blitz_waker *w)
{
	const struct blitz_waker_vtable *vt = w->vtable;

	w->vtable = NULL;
	if (vt)
		vt->wake(w->data);
}

static inline void blitz_waker_wake_by_ref(const struct blitz_waker *w)
{
	if (w->vtable)
		w->vtable->wake_by_ref(w->data);
}

static inline struct blitz_waker blitz_waker_clone(const struct blitz_waker *w)
{
	return w->vtable ? w->vtable->clone(w->data) : *w;
}

static inline void blitz_waker_drop(struct blitz_waker *w)
{
	const struct blitz_waker_vtable *vt = w->vtable;

	w->vtable = NULL;
	if (vt)
		vt->drop(w->data);
}

static inline bool blitz_waker_will_wake(const struct blitz_waker *a,
					 const struct blitz_waker *b)
{
	return a->data == b->data && a->vtable == b->vtable;
}

/** blitz_cx_waker - a new waker (one more reference) for the polled task. */
struct blitz_waker blitz_cx_waker(struct blitz_cx *cx);

/** blitz_cx_worker - index of the worker polling, or -1 off the workers. */
int blitz_cx_worker(const struct blitz_cx *cx);

/** blitz_cx_runtime - the runtime of the polled task. */
struct blitz_runtime *blitz_cx_runtime(const struct blitz_cx *cx);

/**
 * blitz_yield_now - make the polled task runnable again at the back of its
 * worker's queue; the poll function must return BLITZ_PENDING next.
 */
void blitz_yield_now(struct blitz_cx *cx);

/**
 * blitz_shield_enter / blitz_shield_exit - defer cancellation of the polled
 * task while the shield is held (nestable, at most 255 deep: a 256th enter
 * aborts, saying so on stderr; an exit with no shield held does nothing).
 */
void blitz_shield_enter(struct blitz_cx *cx);
void blitz_shield_exit(struct blitz_cx *cx);

/*
 * Spawning.  A handle (struct blitz_task *) owns a reference; give it back
 * with blitz_task_release() (which detaches a task that has not finished).
 */

/**
 * blitz_spawn - start a task running @vt over a copy of @state (@size bytes).
 * @rt: the runtime, or NULL for the current task's runtime.
 *
 * From a worker the task goes to that worker's LIFO slot, from any other
 * thread to the global queue.
 * Return: a join handle, or NULL (errno ENOMEM; ESHUTDOWN once the runtime
 * is shutting down; EINVAL: no runtime, a NULL @vt or poll function, a
 * NULL @state with @size > 0, or @size over UINT32_MAX).  @size 0: a task
 * without state (@state is not read).
 */
struct blitz_task *blitz_spawn(struct blitz_runtime *rt,
			       const struct blitz_task_vtable *vt,
			       const void *state, size_t size);

/** blitz_spawn_detached - blitz_spawn without a handle; 0 or -errno. */
int blitz_spawn_detached(struct blitz_runtime *rt,
			 const struct blitz_task_vtable *vt,
			 const void *state, size_t size);

/**
 * blitz_join_poll - await a task from inside another task.
 * Return: BLITZ_READY once @task has completed (or was cancelled).
 */
enum blitz_poll blitz_join_poll(struct blitz_task *task, struct blitz_cx *cx);

/**
 * blitz_join - wait for @task, helping to run tasks meanwhile.
 *
 * From a thread that is not a worker: runs tasks of the global queue
 * until @task completes, while at least BLITZ_JOIN_STACK_RESERVE of the
 * thread's stack is left (a task it runs may join in turn, nesting on
 * that stack); below that, or on a stack that is not the thread's own,
 * it only waits.  From a worker of @task's runtime (a poll
 * function may call it): @task in the worker's LIFO slot (just spawned)
 * is polled at once; else the worker runs its own loop (its LIFO slot,
 * queues, steals, timers, I/O; parking when idle) until @task completes;
 * the tasks it runs nest on the caller's stack, so the caller resumes
 * after them (docs/scheduler.md, "Joining from a worker").
 *
 * Return: 0 if it completed, -ECANCELED if it was cancelled, -EINVAL for
 * a NULL @task.  From a
 * worker also, without waiting for @task: -EDEADLK if less than
 * BLITZ_JOIN_STACK_RESERVE of the stack is left, if @task is the caller
 * or polled lower on this stack (found once nothing else is left to run),
 * or if the worker belongs to another runtime; -ESHUTDOWN once the
 * runtime shuts down; -EINTR if the calling task was cancelled (it is
 * dropped when its poll returns).  From a task that a thread which is
 * not a worker runs while it helps, -ESHUTDOWN too (blitz_runtime_free
 * waits for that poll to return).  blitz_join_poll never blocks.
 */
int blitz_join(struct blitz_task *task);

/** blitz_task_state - the task's state struct (valid while the handle is held). */
void *blitz_task_state(struct blitz_task *task);

/** blitz_task_done - has @task completed or been cancelled? */
bool blitz_task_done(const struct blitz_task *task);

/** blitz_task_cancelled - did @task end by cancellation? */
bool blitz_task_cancelled(const struct blitz_task *task);

/**
 * blitz_task_cancel - request cancellation: the task is not polled again
 * (once no shield is held); its drop function runs and joiners are woken.
 * A task that has finished, or a NULL @task: nothing.
 */
void blitz_task_cancel(struct blitz_task *task);

/** blitz_task_release - give back the handle; an unfinished task runs on, detached (NULL: nothing). */
void blitz_task_release(struct blitz_task *task);

/** blitz_task_size - bytes one task of @state_size takes (header + state; at most SIZE_MAX). */
size_t blitz_task_size(size_t state_size);

/*
 * Protothread-style coroutine macros: BLITZ_CO_BEGIN opens a switch on the
 * coroutine's resume point (struct blitz_co, 0 at the start), each
 * BLITZ_AWAIT and BLITZ_YIELD is a case of that switch named by its line,
 * BLITZ_CO_END closes it.
 *
 * BLITZ_AWAIT(co, expr): evaluate expr (an enum blitz_poll) and return
 * BLITZ_PENDING until it is BLITZ_READY; it is evaluated again on every
 * poll, so expr is an awaitable's poll call, not a value computed once.
 * BLITZ_YIELD(co, cx): let the worker run others, then go on here.
 *
 * The rules (each follows from the switch):
 *  - Locals do not survive an AWAIT or a YIELD: a resume jumps past their
 *    initialisation.  Keep what lives across one in the state struct.
 *  - No AWAIT or YIELD inside a switch of your own between BEGIN and END:
 *    its case would belong to the inner switch, and the resume could not
 *    find it.  Such a resume is caught: BLITZ_CO_END's default case calls
 *    blitz_co_bad_resume(), which names the file and lines and aborts (in
 *    every build: the check is on the path a good resume never takes).
 *    Use if/else there, or move the switch into a function of its own.
 *  - At most one AWAIT or YIELD per source line (two would be the same
 *    case: "duplicate case value").
 *  - An early `return BLITZ_READY` between BEGIN and END is allowed: the
 *    task is done and is not polled again.  A coroutine that a parent
 *    polls as an awaitable (a function of its own with BEGIN/END over a
 *    struct blitz_co in the parent's state) is polled again only if the
 *    parent starts it over: set its struct blitz_co to BLITZ_CO_INIT first.
 *  - A `break` at the top of the body (in no loop or switch of its own)
 *    leaves the coroutine's switch: the coroutine finishes, as at END.
 *  - A poll after END (or after BLITZ_CO_FINISHED()) returns BLITZ_READY
 *    again and runs nothing.
 *  - The state is a copy: blitz_spawn() and blitz_block_on() copy @state
 *    into the task, so a pointer into the caller's struct is not the
 *    task's; blitz_block_on() copies the final state back once the task has
 *    completed.  Point into the state from inside the poll function only.
 *  - The awaitables of the API (struct blitz_xfer, blitz_accept,
 *    blitz_sleep, ...) need no zeroing between uses: one that returned
 *    BLITZ_READY is ready for its next operation.  One that an AWAIT left
 *    pending (a timeout won, the task is dropped) still has its operation
 *    in flight: cancel it and await its completion before its buffer goes
 *    (docs/io.md, "The life of an operation").
 */
struct blitz_co {
	int line;		/* resume point: 0 start, -1 finished, else a line */
};

#define BLITZ_CO_INIT		((struct blitz_co){ 0 })
#define BLITZ_CO_FINISHED(co)	((co)->line == -1)

#define BLITZ_CO_BEGIN(co)	switch ((co)->line) { case 0:;

#define BLITZ_AWAIT(co, expr)						\
	do {								\
		(co)->line = __LINE__;					\
		__attribute__((fallthrough));				\
	case __LINE__:							\
		if ((expr) != BLITZ_READY)				\
			return BLITZ_PENDING;				\
	} while (0)

#define BLITZ_YIELD(co, cx)						\
	do {								\
		(co)->line = __LINE__;					\
		blitz_yield_now(cx);					\
		return BLITZ_PENDING;					\
	case __LINE__:;							\
	} while (0)

#define BLITZ_CO_END(co)						\
		(co)->line = -1;					\
		return BLITZ_READY;					\
	case -1:							\
		return BLITZ_READY;					\
	default:							\
		blitz_co_bad_resume((co)->line, __FILE__, __LINE__);	\
	}								\
	(co)->line = -1;						\
	return BLITZ_READY

/**
 * blitz_co_bad_resume - a coroutine was resumed at @line, which is no case
 * of its switch (an AWAIT or YIELD inside a nested switch, or a struct
 * blitz_co overwritten): print the file, both lines and the rule, and
 * abort.  Called by BLITZ_CO_END only.
 */
__attribute__((noreturn, cold))
void blitz_co_bad_resume(int line, const char *file, int end_line);

#endif /* BLITZ_TASK_H */
