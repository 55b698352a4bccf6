/* SPDX-License-Identifier: MIT */
/* core/sync/semaphore.h - what Mutex and RwLock use of the semaphore. */
#ifndef BLITZ_CORE_SYNC_SEMAPHORE_H
#define BLITZ_CORE_SYNC_SEMAPHORE_H

#include "waitlist.h"

void sem_init_kind(struct blitz_semaphore *s, uint32_t permits, enum probe_sync_kind kind);

#endif
