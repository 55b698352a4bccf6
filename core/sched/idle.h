/* SPDX-License-Identifier: MIT */
/*
 * core/sched/idle.h - idle coordination: who searches, who sleeps, whom to wake.
 *
 * num_searching: workers stealing; at most half the workers (a CAS keeps
 *   the bound exact).
 * parked bitmap: one bit per sleeping worker, CONFIG_MAX_WORKERS bits in
 *   64-bit words; a wake claims the lowest set bit with find-first-set.
 * num_parked: how many bits are set.
 *
 * The rule that prevents lost wakeups, from both sides (a Dekker pattern,
 * seq_cst on both sides):
 *   producer:  queue the task;  fence;  if num_searching == 0, wake a sleeper.
 *   parker:    set own bit (and leave searching); then look at every queue
 *              before sleeping; if it finds work, take its bit back.
 *   searcher:  leaving the searching state, the last searcher that found
 *              work looks at every queue after its decrement (found_more,
 *              core/sched/worker.c) and wakes a sleeper if work is left; if it
 *              found none it parks, and so looks at every queue too, or,
 *              leaving a join's help (worker_help_leave), looks as the
 *              last searcher that found work does.
 * Either the producer sees no searcher and a set bit (and wakes that
 * worker), or the parker/last searcher sees the task.
 */
#ifndef BLITZ_CORE_IDLE_H
#define BLITZ_CORE_IDLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "../compiler.h"

#define IDLE_WORDS ((CONFIG_MAX_WORKERS + 63) / 64)

struct blitz_idle {
	alignas(CACHE_LINE) _Atomic uint32_t num_searching;
	_Atomic uint32_t num_parked;
	uint32_t num_workers;
	uint32_t words;
	_Atomic uint64_t parked[IDLE_WORDS];
};

void idle_init(struct blitz_idle *idle, unsigned workers);
bool idle_try_become_searcher(struct blitz_idle *idle);
bool idle_transition_from_searching(struct blitz_idle *idle);
bool idle_set_parked(struct blitz_idle *idle, unsigned w, bool was_searching);
bool idle_unset_parked(struct blitz_idle *idle, unsigned w);
/* idle_claim_parked's "gave its reserved searcher slot back, and was the last". */
#define IDLE_CLAIM_LAST_GAVE_BACK (-2)
int idle_claim_parked(struct blitz_idle *idle);
int idle_any_parked(struct blitz_idle *idle);

static inline uint32_t idle_searching(struct blitz_idle *idle)
{
	/* seq_cst: the producer side of the rule above. */
	return atomic_load(&idle->num_searching);
}

#endif
