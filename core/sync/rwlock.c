// SPDX-License-Identifier: MIT
/*
 * core/sync/rwlock.c - the async RwLock (docs/sync.md), built like Tokio's on a
 * semaphore of BLITZ_RWLOCK_MAX_READERS permits: a reader takes one, a
 * writer takes them all.  The semaphore's rules give the guarantees:
 *  - many readers or one writer (a writer holds every permit);
 *  - FIFO between readers and writers; no writer starvation: a writer at
 *    the head of the queue takes the permits the current readers return,
 *    and while it waits the available count is 0, so a reader arriving
 *    later (try_read included) queues behind it.
 * The probes report kind SYNC_RWLOCK_READ for a reader and SYNC_RWLOCK_WRITE
 * for a writer (the waiter's asked count tells them apart: waitlist.h,
 * wq_kind).
 */
#include "semaphore.h"

#define MAX BLITZ_RWLOCK_MAX_READERS

void blitz_rwlock_init(struct blitz_rwlock *l)
{
	sem_init_kind(&l->sem, MAX, SYNC_RWLOCK_READ);
}

bool blitz_rwlock_try_read(struct blitz_rwlock *l)
{
	return sem_try_acquire(&l->sem, 1);
}

bool blitz_rwlock_try_write(struct blitz_rwlock *l)
{
	return sem_try_acquire(&l->sem, MAX);
}

enum blitz_poll blitz_rwlock_read_poll(struct blitz_rwlock *l, struct blitz_waiter *w,
				       struct blitz_cx *cx)
{
	return sem_acquire_poll(&l->sem, w, 1, cx);
}

enum blitz_poll blitz_rwlock_write_poll(struct blitz_rwlock *l, struct blitz_waiter *w,
					struct blitz_cx *cx)
{
	return sem_acquire_poll(&l->sem, w, MAX, cx);
}

/*
 * The unlocks of a lock not held that way are no-ops (as blitz_mutex_unlock):
 * every permit available means nobody holds it, any available means no
 * writer does.  Only holders release, so a held lock cannot read otherwise.
 * (A read unlock while a writer holds it looks like the last of
 * BLITZ_RWLOCK_MAX_READERS readers leaving: not caught.)
 */
void blitz_rwlock_read_unlock(struct blitz_rwlock *l)
{
	if (sem_available(&l->sem) == MAX)
		return;
	sem_release(&l->sem, 1);
}

void blitz_rwlock_write_unlock(struct blitz_rwlock *l)
{
	if (sem_available(&l->sem))
		return;
	sem_release(&l->sem, MAX);
}

void blitz_rwlock_waiter_cancel(struct blitz_rwlock *l, struct blitz_waiter *w)
{
	blitz_semaphore_waiter_cancel(&l->sem, w);
}

uint32_t blitz_rwlock_queued(const struct blitz_rwlock *l)
{
	return blitz_semaphore_queued(&l->sem);
}
