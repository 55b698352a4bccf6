/* SPDX-License-Identifier: MIT */
/*
 * core/sched/park.h - a worker's futex sleep (docs/scheduler.md):
 * UNPARKED -> PARKED (the sleeper) -> NOTIFIED (a waker) -> UNPARKED.
 */
#ifndef BLITZ_CORE_PARK_H
#define BLITZ_CORE_PARK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * PARK_PARKED_IO: parked in the worker's own I/O queue rather than on the
 * futex (core/sched/worker.c, sleep_in_own_ring); park_unpark() then leaves the
 * wake to its caller, which wakes that queue.
 */
enum { PARK_UNPARKED = 0, PARK_PARKED = 1, PARK_NOTIFIED = 2, PARK_PARKED_IO = 3 };

struct blitz_park {
	_Atomic uint32_t futex;
};

void park_init(struct blitz_park *p);
bool park_wait(struct blitz_park *p, uint64_t timeout_ns);
uint32_t park_unpark(struct blitz_park *p);

#endif
