/* SPDX-License-Identifier: MIT */
/* core/runtime.h - the runtime object and what the core files share. */
#ifndef BLITZ_CORE_RUNTIME_H
#define BLITZ_CORE_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <blitz.h>
#include "idle.h"
#include "inject.h"
#include "owned.h"
#include "../backends/driver.h"
#include "worker.h"

struct blitz_runtime {
	struct blitz_config cfg;
	struct blitz_inject inject;
	struct blitz_idle idle;
	struct blitz_owned owned;
	_Atomic bool shutdown;
	_Atomic bool started;
	pthread_mutex_t start_lock;
	_Atomic uint64_t external_spawned;	/* spawns from non-worker threads */
	unsigned num_workers;
	struct blitz_worker *workers;		/* num_workers, cache-line aligned */
	struct blitz_io io;			/* the I/O driver (backends/) */
	_Atomic int io_parker;			/* worker sleeping in the driver, or -1 */
};

void runtime_start(struct blitz_runtime *rt);
void runtime_notify_parked(struct blitz_runtime *rt, int waker);
void runtime_notify_parked_local(struct blitz_runtime *rt, int waker);
bool runtime_has_work(struct blitz_runtime *rt);
void runtime_schedule(struct blitz_runtime *rt, struct blitz_task *t, bool yield);

#endif
