// SPDX-License-Identifier: MIT
/*
 * core/sched/park.c - futex park/unpark with a timeout.
 *
 * A notification that arrives before the sleeper parks is not lost: the
 * sleeper's CAS UNPARKED -> PARKED fails on NOTIFIED and it returns at once.
 * Spurious returns are harmless: the caller decides from the idle bitmap
 * whether it was claimed (core/sched/idle.c).
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "park.h"

static void futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ull),
		.tv_nsec = (long)(timeout_ns % 1000000000ull),
	};

	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void park_init(struct blitz_park *p)
{
	atomic_init(&p->futex, PARK_UNPARKED);
}

/* park_wait - sleep until unparked or @timeout_ns; true if notified. */
bool park_wait(struct blitz_park *p, uint64_t timeout_ns)
{
	uint32_t expect = PARK_UNPARKED;

	/* acquire on failure: a NOTIFIED seen here pairs with the waker's swap. */
	if (atomic_compare_exchange_strong_explicit(&p->futex, &expect, PARK_PARKED,
						    memory_order_acq_rel,
						    memory_order_acquire))
		futex_wait(&p->futex, PARK_PARKED, timeout_ns);
	/* acq_rel: consume a notification and see what the waker wrote before it. */
	return atomic_exchange_explicit(&p->futex, PARK_UNPARKED,
					memory_order_acq_rel) == PARK_NOTIFIED;
}

/* park_unpark - notify; returns the state it found (PARK_PARKED_IO: wake the queue). */
uint32_t park_unpark(struct blitz_park *p)
{
	/*
	 * seq_cst: publishes the waker's writes (woken_by) to the sleeper, and
	 * is ordered before the caller's later load of the runtime's io_parker
	 * (worker_unpark: a worker may sleep in the I/O driver instead).
	 */
	uint32_t prev = atomic_exchange(&p->futex, PARK_NOTIFIED);

	if (prev == PARK_PARKED)
		futex_wake(&p->futex);
	return prev;
}
