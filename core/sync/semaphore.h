/* SPDX-License-Identifier: MIT */
/* core/sync/semaphore.h - what Mutex and RwLock use of the semaphore. */
#ifndef BLITZ_CORE_SYNC_SEMAPHORE_H
#define BLITZ_CORE_SYNC_SEMAPHORE_H

#include "waitlist.h"

#define PERMITS(s) ((_Atomic uint32_t *)&(s)->permits)
#define WAITERS (1u << 31)	/* in the permits word: the queue is not empty */

void sem_init_kind(struct blitz_semaphore *s, uint32_t permits, enum probe_sync_kind kind);

/* blitz_semaphore_try_acquire, _acquire_poll and _release under their internal names. */
bool sem_try_acquire(struct blitz_semaphore *s, uint32_t n);
enum blitz_poll sem_acquire_poll(struct blitz_semaphore *s, struct blitz_waiter *w,
				 uint32_t n, struct blitz_cx *cx);
void sem_release(struct blitz_semaphore *s, uint32_t n);

/* sem_available - blitz_semaphore_available(), inline for Mutex and RwLock. */
static inline uint32_t sem_available(const struct blitz_semaphore *s)
{
	/*
	 * Relaxed: a snapshot.  Mutex and RwLock unlock decide on it, as the
	 * holder: their own acquisition is in the word's modification order
	 * before this load, so (read-read coherence) it reads that or a later
	 * value, never the permits from before they took them.
	 */
	return atomic_load_explicit(PERMITS((struct blitz_semaphore *)s), memory_order_relaxed) &
	       ~WAITERS;
}

#endif
