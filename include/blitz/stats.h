/* SPDX-License-Identifier: MIT */
/*
 * blitz/stats.h - scheduler statistics, readable at any time without
 * stopping the workers (each counter has one writer and is read relaxed, so
 * a snapshot is a set of recent values, not one instant).
 */
#ifndef BLITZ_STATS_H
#define BLITZ_STATS_H

#include <stdint.h>

struct blitz_runtime;

struct blitz_worker_stats {
	uint64_t polls;		/* tasks polled */
	uint64_t steals;	/* successful steal operations (as thief) */
	uint64_t stolen;	/* tasks taken by those steals */
	uint64_t steal_fails;	/* steal attempts that took nothing */
	uint64_t parks;		/* times parked */
	uint64_t lifo_hits;	/* tasks taken from the LIFO slot */
	uint64_t global_batches; /* batch fetches from the global queue */
	uint64_t global_tasks;	/* tasks those fetches took */
	uint64_t overflows;	/* ring overflows to the global queue */
	uint64_t overflowed;	/* tasks moved by those overflows */
	uint64_t spawned;	/* tasks spawned on this worker */
	uint64_t budget_exhausted; /* ticks that used up the whole budget */
	uint64_t ewma_poll_ns;	/* current average poll time */
	uint64_t global_interval; /* current global-queue interval (polls) */
	uint64_t task_cache_hits; /* task blocks this worker reused from its cache */
	uint64_t task_cache_misses; /* its spawns (of a cached size) that needed a new block */
};

struct blitz_stats {
	uint64_t total_spawned;
	uint64_t total_polled;
	uint64_t total_stolen;	/* tasks moved by steals */
	uint64_t total_parked;
	unsigned num_workers;
};

/** blitz_stats - totals over all workers (plus spawns from outside); zeroes without a runtime. */
void blitz_stats(const struct blitz_runtime *rt, struct blitz_stats *out);

/** blitz_worker_stats - the counters of worker @index; -EINVAL if out of range or no runtime. */
int blitz_worker_stats(const struct blitz_runtime *rt, unsigned index,
		       struct blitz_worker_stats *out);

#endif /* BLITZ_STATS_H */
