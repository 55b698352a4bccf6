/* SPDX-License-Identifier: MIT */
/*
 * core/sched/owned.h - the runtime's list of live (not yet completed) tasks, so
 * that shutdown can cancel and drop tasks that are waiting, not only those
 * queued.  Sharded by spawning worker to spread the lock.
 */
#ifndef BLITZ_CORE_OWNED_H
#define BLITZ_CORE_OWNED_H

#include <stdbool.h>
#include <stddef.h>
#include "../compiler.h"
#include "../spinlock.h"

#define OWNED_SHARDS 16

struct blitz_task;

struct owned_shard {
	alignas(CACHE_LINE) struct spinlock lock;
	struct blitz_task *head;
};

struct blitz_owned {
	struct owned_shard shard[OWNED_SHARDS];
	bool closed;			/* under every shard lock */
};

void owned_init(struct blitz_owned *o);
void owned_destroy(struct blitz_owned *o);
bool owned_insert(struct blitz_owned *o, struct blitz_task *t, unsigned hint);
void owned_remove(struct blitz_owned *o, struct blitz_task *t);
struct blitz_task *owned_pop_any(struct blitz_owned *o);
void owned_close(struct blitz_owned *o);
size_t owned_count(struct blitz_owned *o);
bool owned_empty(struct blitz_owned *o);

#endif
