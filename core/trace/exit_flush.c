// SPDX-License-Identifier: MIT
/*
 * core/trace/exit_flush.c - the hand-over at the process's exit
 * (exit_flush.h): the list of live runtimes, the destructor that asks
 * them, and a worker's answer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include "../clock.h"
#include "event_log.h"
#include "event_ring.h"
#include "exit_flush.h"
#include "histogram.h"
#include "../sched/runtime.h"

/* The runtimes made and not yet freed, in this process (live_next, live_prev). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct blitz_runtime *live;

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/*
 * A forked child has one thread: a lock copied held would stay held.  Its
 * copy of the list stays (a copied runtime may still be freed), but the
 * parent's runtimes have no workers in it: the destructor skips them.
 */
static void live_lock_child(void)
{
	pthread_mutex_init(&live_lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, live_lock_child);
}

/* exit_flush_register - @rt is made (blitz_runtime_new): live. */
void exit_flush_register(struct blitz_runtime *rt)
{
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&live_lock);
	rt->live_pid = getpid();
	rt->live_prev = NULL;
	rt->live_next = live;
	if (live)
		live->live_prev = rt;
	live = rt;
	pthread_mutex_unlock(&live_lock);
}

/*
 * exit_flush_unregister - @rt is being freed (blitz_runtime_free, before
 * its workers stop; they hand over at their own exit): no longer live.
 * A runtime that was never registered (a half-built one) is left alone.
 */
void exit_flush_unregister(struct blitz_runtime *rt)
{
	pthread_mutex_lock(&live_lock);
	if (rt->live_pid) {
		if (rt->live_prev)
			rt->live_prev->live_next = rt->live_next;
		else
			live = rt->live_next;
		if (rt->live_next)
			rt->live_next->live_prev = rt->live_prev;
		rt->live_pid = 0;
	}
	pthread_mutex_unlock(&live_lock);
}

/*
 * exit_flush_worker - @w's answer, once, on its own thread: what it holds
 * to the tracer, as at its own exit (worker_hand_over; the probes' copies
 * are made in the trap, so they are the tracer's when this returns), then
 * counted.  Relaxed: the count publishes nothing; it only ends the
 * destructor's wait.
 */
void exit_flush_worker(struct blitz_worker *w, uint64_t now_ns)
{
	w->exit_flushed = true;
	worker_hand_over(w, now_ns);
	atomic_fetch_add_explicit(&w->rt->exit_flushed, 1, memory_order_relaxed);
}

static bool tracer_listens(void)
{
	return hist_enabled() || BLITZ_EVENT_FLUSH_ENABLED() || BLITZ_EVENT_RING_ENABLED();
}

/* nap_before - sleep 1 ms, unless @deadline (ns) has passed: false then. */
static bool nap_before(uint64_t deadline)
{
	struct timespec ms = { 0, 1000000 };

	if (clock_now_ns() >= deadline)
		return false;
	nanosleep(&ms, NULL);
	return true;
}

/*
 * wait_for - @rt's workers' answers, until every one has answered, the
 * deadline (ns) passes, or the tracers are gone; meanwhile the rings no
 * reader has claimed are announced at every look (a worker that does not
 * answer, held in a poll, announces nothing, and the deadline is shared
 * with the wait for their readers).
 */
static void wait_for(struct blitz_runtime *rt, uint64_t deadline)
{
	/* Relaxed: see exit_flush_worker. */
	while (atomic_load_explicit(&rt->exit_flushed, memory_order_relaxed) < rt->num_workers &&
	       tracer_listens() && nap_before(deadline))
		event_ring_announce_unclaimed();
}

/* exit_flush_lock - @lock, tried until @deadline (ns); false if not had. */
bool exit_flush_lock(pthread_mutex_t *lock, uint64_t deadline)
{
	while (pthread_mutex_trylock(lock))
		if (!nap_before(deadline))
			return false;
	return true;
}

/* asked - is @rt one this process's exit asks (its own, started)?  Under live_lock. */
static bool asked(struct blitz_runtime *rt, pid_t pid)
{
	return rt->live_pid == pid && atomic_load(&rt->started);
}

/*
 * The process exits: ask every live, started runtime of this process
 * (not one copied by a fork) to hand over, then wait for them; first,
 * hand over the logs of the threads that are not workers.  The threads
 * run on meanwhile (exit() stops them only at its end).
 */
__attribute__((destructor)) static void exit_flush_process(void)
{
	struct blitz_worker *self = current_worker;
	struct blitz_runtime *rt;
	pid_t pid = getpid();
	uint64_t deadline;

	if (!tracer_listens())
		return;
	deadline = clock_now_ns() + EXIT_FLUSH_WAIT_NS;
	events_outside_exit(deadline);
	if (!exit_flush_lock(&live_lock, deadline))
		return;
	/* Relaxed: a hint the workers test at each traced tick; see exit_flush_worker. */
	for (rt = live; rt; rt = rt->live_next)
		if (asked(rt, pid))
			atomic_store_explicit(&rt->exit_flush, true, memory_order_relaxed);
	if (self && asked(self->rt, pid) && !self->exit_flushed)
		exit_flush_worker(self, clock_now_ns());
	for (rt = live; rt; rt = rt->live_next)
		if (asked(rt, pid))
			wait_for(rt, deadline);
	pthread_mutex_unlock(&live_lock);
	event_ring_wait_readers(deadline);	/* the rings go with the process */
}
