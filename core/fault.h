/* SPDX-License-Identifier: MIT */
/*
 * core/fault.h - fault injection, the kernel's way (docs/faults.md).
 *
 * A fault point is a place where the runtime can fail for real (an
 * allocation, a submission, a completion, a thread start); the hook there
 * asks fault_fail(point) and, when told to fail, takes the same error path
 * a real failure takes.  Which points fail, and how often, comes from
 * BLITZ_FAIL (parsed by fault_setup(), core/fault.c, which also holds the
 * one table of the points' names).
 *
 * With CONFIG_FAULT_INJECTION off every hook compiles to nothing:
 * fault_fail() is a constant false and the branch it guards is dead code.
 */
#ifndef BLITZ_CORE_FAULT_H
#define BLITZ_CORE_FAULT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The fault points; their names (BLITZ_FAIL's words) are in core/fault.c. */
enum fault_point {
	FAULT_TASK_ALLOC,	/* core/sched/task.c: a task's allocation */
	FAULT_BUF_ALLOC,	/* stream, channel and file buffers */
	FAULT_SQE_FULL,		/* backends/io_uring.c: no free submission entry */
	FAULT_RING_ENTER,	/* backends/io_uring.c: the kernel refuses a batch */
	FAULT_IO_SUBMIT,	/* backends/driver.c: a backend refuses an operation */
	FAULT_IO_COMPLETE,	/* backends/driver.c: a transfer completes with an error */
	FAULT_SHORT_RW,		/* backends/driver.c: a transfer moves fewer bytes */
	FAULT_ACCEPT,		/* backends/driver.c: accept runs out of descriptors */
	FAULT_POOL_THREAD,	/* core/blocking/pool.c: a pool thread cannot start */
	FAULT_TIMER_ALLOC,	/* core/time/wheel.c: a wheel-owned entry's allocation */
	FAULT_NR_POINTS
};

/*
 * fault_setup - read BLITZ_FAIL once per process (blitz_runtime_new calls
 * it).  Return: 0, or -EINVAL after one line on stderr (bad syntax, an
 * unknown point, or BLITZ_FAIL set in a build without fault injection).
 */
int fault_setup(void);

/* fault_name - @p's name in BLITZ_FAIL; NULL past the last point. */
const char *fault_name(unsigned p);

/* fault_injected - faults injected at @p so far (0 without CONFIG_FAULT_INJECTION). */
uint64_t fault_injected(enum fault_point p);

#if CONFIG_FAULT_INJECTION
/* Set once by fault_setup() when any point is configured. */
extern bool fault_armed;

bool fault_should_fail(enum fault_point p);
uint64_t fault_pick(enum fault_point p, uint64_t n);

/* fault_fail - should this call of @p fail?  Counts it if so. */
static inline bool fault_fail(enum fault_point p)
{
	/*
	 * A plain read: written once, before the first runtime (and so
	 * before any thread that reaches a hook) exists.
	 */
	return __builtin_expect(fault_armed, 0) && fault_should_fail(p);
}
#else
static inline bool fault_fail(enum fault_point p)
{
	(void)p;
	return false;
}

static inline uint64_t fault_pick(enum fault_point p, uint64_t n)
{
	(void)p;
	(void)n;
	return 0;
}
#endif

/*
 * fault_malloc - malloc(@size), or NULL with errno ENOMEM (as malloc
 * fails) when @p says so.
 */
static inline void *fault_malloc(enum fault_point p, size_t size)
{
	if (fault_fail(p)) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(size);
}

#endif /* BLITZ_CORE_FAULT_H */
