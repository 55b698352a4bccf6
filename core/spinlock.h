/* SPDX-License-Identifier: MIT */
/*
 * core/spinlock.h - a test-and-test-and-set lock for critical sections of a
 * few instructions (list links), where a pthread mutex's call overhead is
 * most of the cost.  Yields after spinning so that a preempted holder can run.
 */
#ifndef BLITZ_CORE_SPINLOCK_H
#define BLITZ_CORE_SPINLOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "compiler.h"

struct spinlock {
	_Atomic bool locked;
};

static inline void spin_init(struct spinlock *l)
{
	atomic_init(&l->locked, false);
}

/*
 * spin_backoff - one step of a wait on another thread: PAUSE for the first
 * 64 steps, then yield the CPU (a preempted holder or writer needs it).
 */
static inline void spin_backoff(unsigned *spins)
{
	if (++*spins < 64)
		cpu_relax();
	else
		sched_yield();
}

static inline void spin_lock(struct spinlock *l)
{
	unsigned spins = 0;

	/* Acquire: the critical section sees the previous holder's writes. */
	while (atomic_exchange_explicit(&l->locked, true, memory_order_acquire)) {
		/* Relaxed: only waits for the holder's release; the exchange acquires. */
		while (atomic_load_explicit(&l->locked, memory_order_relaxed))
			spin_backoff(&spins);
	}
}

static inline void spin_unlock(struct spinlock *l)
{
	/* Release: publish the critical section to the next holder. */
	atomic_store_explicit(&l->locked, false, memory_order_release);
}

#endif
