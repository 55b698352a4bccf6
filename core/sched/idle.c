// SPDX-License-Identifier: MIT
/*
 * core/sched/idle.c - searching counter and parked bitmap (see idle.h for the
 * protocol).  All read-modify-writes here are seq_cst: they are the two
 * halves of the Dekker pattern against the queues, and they are on the slow
 * path (finding no work, parking, waking).
 */
#include "idle.h"

void idle_init(struct blitz_idle *idle, unsigned workers)
{
	atomic_init(&idle->num_searching, 0);
	atomic_init(&idle->num_parked, 0);
	idle->num_workers = workers;
	idle->words = (workers + 63) / 64;
	for (unsigned i = 0; i < IDLE_WORDS; i++)
		atomic_init(&idle->parked[i], 0);
}

/* At most half the workers search (rounded up for one worker). */
bool idle_try_become_searcher(struct blitz_idle *idle)
{
	/* seq_cst, as everything here; a first guess that the CAS confirms. */
	uint32_t n = atomic_load(&idle->num_searching);

	do {
		if (2 * n >= idle->num_workers && !(idle->num_workers == 1 && n == 0))
			return false;
	} while (!atomic_compare_exchange_weak(&idle->num_searching, &n, n + 1));
	return true;
}

/*
 * Leave the searching state; true if the caller was the last searcher.
 * seq_cst: see the top.
 */
bool idle_transition_from_searching(struct blitz_idle *idle)
{
	return atomic_fetch_sub(&idle->num_searching, 1) == 1;
}

/*
 * idle_set_parked - worker @w goes to sleep.  Returns true if it was the
 * last searcher (the caller must then look at every queue; it does anyway).
 * seq_cst: the parker's half of idle.h, before its final look at the queues.
 */
bool idle_set_parked(struct blitz_idle *idle, unsigned w, bool was_searching)
{
	bool last = false;

	atomic_fetch_or(&idle->parked[w / 64], 1ull << (w % 64));
	atomic_fetch_add(&idle->num_parked, 1);
	if (was_searching)
		last = idle_transition_from_searching(idle);
	return last;
}

/*
 * idle_unset_parked - worker @w is awake.  True if it took its own bit back
 * (timeout, or it found work before sleeping); false if a waker had claimed
 * it (the waker cleared the bit, fixed num_parked and made it a searcher).
 * seq_cst, as everything here; the fetch_and decides against a claim.
 */
bool idle_unset_parked(struct blitz_idle *idle, unsigned w)
{
	uint64_t bit = 1ull << (w % 64);

	if (!(atomic_fetch_and(&idle->parked[w / 64], ~bit) & bit))
		return false;
	atomic_fetch_sub(&idle->num_parked, 1);
	return true;
}

/*
 * idle_any_parked - the lowest worker whose parked bit is set, or -1;
 * nothing is claimed (the bit stays; see runtime_unpark_for_io).
 * seq_cst loads: the caller's fence orders what it published before.
 */
int idle_any_parked(struct blitz_idle *idle)
{
	for (uint32_t i = 0; i < idle->words; i++) {
		uint64_t word = atomic_load(&idle->parked[i]);

		if (word)
			return (int)(i * 64 + (unsigned)__builtin_ctzll(word));
	}
	return -1;
}

/*
 * idle_claim_parked - pick a sleeping worker to wake: become its searcher
 * slot (num_searching 0 -> 1, so that concurrent producers wake one worker,
 * not one each) and clear the lowest set bit.  Returns the worker index, or
 * -1 if somebody already searches or nobody sleeps, or
 * IDLE_CLAIM_LAST_GAVE_BACK if it reserved the slot, found no bit (a sleeper
 * woke by itself meanwhile) and gave the slot back as the last searcher:
 * a producer that saw the reservation woke nobody, so the caller must look
 * at the queues again (tests/model/README.md, finding 5).
 */
int idle_claim_parked(struct blitz_idle *idle)
{
	uint32_t zero = 0;

	/*
	 * seq_cst: the producer's half of idle.h, after runtime_notify_parked's
	 * fence: a parker's increment shows here, or its final check sees the task.
	 */
	if (atomic_load(&idle->num_parked) == 0)
		return -1;
	if (!atomic_compare_exchange_strong(&idle->num_searching, &zero, 1))
		return -1;
	for (uint32_t i = 0; i < idle->words; i++) {
		/* seq_cst, as everything here; a first guess that the CAS confirms. */
		uint64_t word = atomic_load(&idle->parked[i]);

		while (word) {
			uint64_t bit = word & -word;

			if (atomic_compare_exchange_weak(&idle->parked[i], &word, word & ~bit)) {
				atomic_fetch_sub(&idle->num_parked, 1);
				return (int)(i * 64 + (unsigned)__builtin_ctzll(bit));
			}
		}
	}
	/* Nobody to wake after all: give the searcher slot back (seq_cst: see the top). */
	if (atomic_fetch_sub(&idle->num_searching, 1) == 1)
		return IDLE_CLAIM_LAST_GAVE_BACK;
	return -1;
}
