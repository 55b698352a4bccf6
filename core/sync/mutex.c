// SPDX-License-Identifier: MIT
/*
 * core/sync/mutex.c - the async Mutex (docs/sync.md): a semaphore of one
 * permit, so it inherits the semaphore's FIFO hand-off and its guarantee
 * that try_lock() never barges past queued tasks.  Unlock passes the lock
 * straight to the head waiter; the probes report kind SYNC_MUTEX.
 */
#include "semaphore.h"

void blitz_mutex_init(struct blitz_mutex *m)
{
	sem_init_kind(&m->sem, 1, SYNC_MUTEX);
}

bool blitz_mutex_try_lock(struct blitz_mutex *m)
{
	return sem_try_acquire(&m->sem, 1);
}

enum blitz_poll blitz_mutex_lock_poll(struct blitz_mutex *m, struct blitz_waiter *w,
				      struct blitz_cx *cx)
{
	return sem_acquire_poll(&m->sem, w, 1, cx);
}

void blitz_mutex_unlock(struct blitz_mutex *m)
{
	/*
	 * Unlocked (its permit available): a no-op, or a second permit
	 * would let two tasks hold it.  Only the holder releases, so a
	 * locked mutex reads 0 here whatever others do meanwhile.
	 */
	if (sem_available(&m->sem))
		return;
	sem_release(&m->sem, 1);
}

void blitz_mutex_waiter_cancel(struct blitz_mutex *m, struct blitz_waiter *w)
{
	blitz_semaphore_waiter_cancel(&m->sem, w);
}

bool blitz_mutex_is_locked(const struct blitz_mutex *m)
{
	return blitz_semaphore_available(&m->sem) == 0;
}

uint32_t blitz_mutex_queued(const struct blitz_mutex *m)
{
	return blitz_semaphore_queued(&m->sem);
}
