// SPDX-License-Identifier: MIT
/*
 * core/sched/worker.c - the worker run loop, work finding, and parking (docs/scheduler.md).
 *
 * Work-finding order (find_work):
 *   0. the global queue first when a global check is due (every
 *      global_interval polls: fairness for tasks queued from outside);
 *   1. the global batch buffer (tasks already fetched, no lock);
 *   2. the LIFO slot (at most BLITZ_MAX_LIFO_POLLS per tick, then the slot
 *      is flushed to the ring; with the ring empty its task is taken as
 *      the ring's, see lifo_take);
 *   3. the local ring (FIFO);
 *   4. the global queue (a batch of min(64, max(4, len / workers)));
 *   5. steal from a random victim (xorshift64+), as a searcher;
 *   6. the global queue once more;
 *   7. nothing: the run loop parks.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../clock.h"
#include "../probes.h"
#include "../trace/exit_flush.h"
#include "../trace/hook.h"
#include "runtime.h"
#include "help.h"
#include "task.h"
#include "wake.h"
#include "worker.h"

/*
 * initial-exec: libblitz is linked, not dlopen()ed late, so its TLS is in
 * the static block and an access is one %fs-relative load instead of a
 * __tls_get_addr() call (which showed in chained_spawn's profile).
 */
__thread struct blitz_worker *current_worker __attribute__((tls_model("initial-exec")));
__thread struct blitz_task *current_task __attribute__((tls_model("initial-exec")));

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xorshift64+ (Vigna): the victim picker. */
static uint64_t worker_rand(struct blitz_worker *w)
{
	uint64_t s1 = w->rng[0];
	const uint64_t s0 = w->rng[1];

	w->rng[0] = s0;
	s1 ^= s1 << 23;
	w->rng[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
	return w->rng[1] + s0;
}

void worker_init(struct blitz_worker *w, struct blitz_runtime *rt, unsigned index)
{
	uint64_t seed = (uint64_t)index * 0x2545f4914f6cdd1dull + 1;

	queue_init(&w->queue);
	atomic_init(&w->lifo, NULL);
	atomic_init(&w->transitioning_to_park, false);
	w->searching = false;
	w->draining = false;
	wake_init(w);
	w->traced = 0;
	w->logging = false;
	w->trace_always = rt->cfg.flight_kb ? TRACED_EVENTS : 0;
	w->exit_flushed = false;
	w->index = index;
	w->rt = rt;
	w->tick = 0;
	w->budget = rt->cfg.budget;
	w->lifo_polls = 0;
	w->polls_since_global = 0;
	w->ewma_poll_ns = 50000;	/* initial average: interval 20 */
	w->global_interval = rt->cfg.global_interval ? rt->cfg.global_interval
		: (uint32_t)(BLITZ_TARGET_GLOBAL_LATENCY_NS / w->ewma_poll_ns);
	w->rng[0] = splitmix64(&seed);
	w->rng[1] = splitmix64(&seed);
	w->batch_head = w->batch_len = 0;
	w->owned_local.done = NULL;
	task_cache_init(&w->task_cache);
	task_outbox_init(&w->task_outbox);
	w->help = NULL;
	atomic_init(&w->join_sleeper, NULL);
	w->stack_limit = 0;
	w->helped_ns = 0;
	w->inline_polls = 0;
	park_init(&w->park);
	atomic_init(&w->woken_by, -1);
	memset(&w->stats, 0, sizeof(w->stats));
	/* Relaxed: statistics (one writer, see stat_inc). */
	atomic_store_explicit(&w->stats.ewma_poll_ns, w->ewma_poll_ns, memory_order_relaxed);
	atomic_store_explicit(&w->stats.global_interval, w->global_interval, memory_order_relaxed);
	worker_hist_init(&w->hist, index, rt->cfg.hist_sample, rt->hist_id);
	worker_events_init(&w->events, index, rt->num_workers, rt->hist_id);
}

/* ---------------------------------------------------------------------- */
/* Scheduling onto this worker                                             */

/*
 * should_notify_others - is there more work here than this worker is about
 * to run?  (Tokio's rule: the LIFO task plus the ring hold more than one.)
 * Not while we search: the last searcher notifies if work is left when it
 * stops (found_more).
 * A single task is left for this worker: waking a sleeper for it costs a
 * futex round trip and usually loses the race anyway.  With more, the wake
 * policy decides (wake_should_notify_local_push; @overflowed: the ring
 * spilled to the global queue).  What a skipped wake can cost is the same
 * as for any local push (runtime_local_wake_wanted): parallelism until
 * the owner parks or a sleeper's 10 ms timeout, never a task.
 */
static bool should_notify_others(struct blitz_worker *w, bool overflowed)
{
	size_t n;

	if (w->searching)
		return false;
	/* Relaxed: owner-only slot (see worker_schedule_local). */
	n = (atomic_load_explicit(&w->lifo, memory_order_relaxed) != NULL) +
	    queue_len(&w->queue);
	if (n <= 1)
		return false;
	/*
	 * Nobody to wake: the policy's test is not worth running.  On a busy
	 * runtime, and always with one worker, this is where a push stops.
	 */
	if (!runtime_local_wake_wanted(w->rt))
		return false;
	return wake_should_notify_local_push(w, n, overflowed);
}

/*
 * ring_overflowed - a push moved tasks to the global queue (@r): counted,
 * overflow fires, and a burst of wakes or spawns (@evicted: the push was
 * the LIFO slot's occupant, pushed out by the task now there) may have
 * that task stamped while collecting (hist_burst).  Out of line, so that
 * the push path keeps no more registers than it did without it (inline,
 * it added instructions to every yield).
 */
static __attribute__((noinline, cold)) void
ring_overflowed(struct blitz_worker *w, enum queue_push_result r, bool evicted)
{
	stat_inc(w, overflows);
	stat_add(w, overflowed, r == QUEUE_OVERFLOWED ? QUEUE_HALF : 1);
	if (evicted && w->hist.on)	/* a burst (histogram.h, "Bursts") */
		hist_burst(w);
	BLITZ_OVERFLOW((int)w->index, r == QUEUE_OVERFLOWED ? QUEUE_HALF : 1);
}

/*
 * push_ring_on - returns whether the ring overflowed to the global queue.
 * @evicted: @t was pushed out of the LIFO slot (ring_overflowed).
 */
static inline __attribute__((always_inline)) bool
push_ring_on(struct blitz_worker *w, struct blitz_task *t, bool evicted, bool traced, bool hist)
{
	enum queue_push_result r = queue_push(&w->queue, t, &w->rt->inject);

	if (hist && (w->traced & TRACED_HIST))	/* a timed tick's push */
		hist_record_pushed(&w->hist, queue_len(&w->queue));
	if (r == QUEUE_PUSHED) {
		if (traced)
			BLITZ_LOCAL_PUSH((int)w->index, (uint64_t)(uintptr_t)t,
					 queue_len(&w->queue));
		return false;
	}
	ring_overflowed(w, r, evicted);
	if (traced && r == QUEUE_OVERFLOWED)
		BLITZ_LOCAL_PUSH((int)w->index, (uint64_t)(uintptr_t)t,
				 queue_len(&w->queue));
	return true;
}

/*
 * ring_room - how many wakes on this thread @w's ring takes before it
 * overflows (a wake puts the task in the LIFO slot and its previous
 * occupant in the ring): what an I/O reap here may wake.  A reap bounded
 * by it (epoll) leaves the other events in the kernel, in their order,
 * where an overflow would send the ring's oldest half to the back of the
 * global queue (backends/epoll.c).
 */
static inline unsigned ring_room(const struct blitz_worker *w)
{
	return QUEUE_CAPACITY - queue_len(&w->queue);
}

/* push_ring_traced - local_push fires (TRACED_PUSH), or only the histograms count. */
static __attribute__((noinline, cold)) bool
push_ring_traced(struct blitz_worker *w, struct blitz_task *t, bool evicted)
{
	if (w->traced & TRACED_PUSH)
		return push_ring_on(w, t, evicted, true, true);
	return push_ring_on(w, t, evicted, false, true);
}

/* push_ring - @t to the back of @w's ring; local_push fires, and the ring
 * length is counted, only in the traced copy (the same split as worker_run_task). */
static inline __attribute__((always_inline)) bool
push_ring(struct blitz_worker *w, struct blitz_task *t, bool evicted)
{
	/* The histograms count the pushes of a timed tick (TRACED_HIST). */
	if (__builtin_expect(w->traced & (TRACED_PUSH | TRACED_HIST), 0))
		return push_ring_traced(w, t, evicted);
	return push_ring_on(w, t, evicted, false, false);
}

/*
 * worker_schedule_local - queue @t on the calling worker @w: the LIFO slot
 * for a wake or a spawn (evicting the old occupant to the ring), the back of
 * the ring for a yield or when the LIFO slot is switched off.  While @w is
 * on its way to park the task goes to the global queue instead, so that it
 * is not left in a slot that is about to be flushed.
 */
void worker_schedule_local(struct blitz_worker *w, struct blitz_task *t, bool yield)
{
	struct blitz_runtime *rt = w->rt;
	bool overflowed;

	/*
	 * Relaxed: transitioning_to_park is written only by this same thread
	 * (the owner); wakes from other threads never use this path.  So is
	 * draining (BLITZ_WAKE=bounded: see worker_tick).
	 */
	if (atomic_load_explicit(&w->transitioning_to_park, memory_order_relaxed) || w->draining) {
		inject_push(&rt->inject, t);
		runtime_notify_parked(rt, (int)w->index);
		return;
	}
	if (yield || !rt->cfg.lifo) {
		overflowed = push_ring(w, t, false);
	} else {
		/* Relaxed: only this thread reads or writes its LIFO slot. */
		struct blitz_task *prev = atomic_load_explicit(&w->lifo, memory_order_relaxed);

		atomic_store_explicit(&w->lifo, t, memory_order_relaxed);
		if (!prev)
			return;		/* nothing new for others to steal */
		overflowed = push_ring(w, prev, true);
	}
	if (should_notify_others(w, overflowed))
		runtime_notify_parked(rt, (int)w->index);
}

/* ---------------------------------------------------------------------- */
/* Finding work                                                            */

static struct blitz_task *batch_pop(struct blitz_worker *w)
{
	if (w->batch_head == w->batch_len)
		return NULL;
	return w->batch[w->batch_head++];
}

/*
 * global_fetch - take min(64, max(4, len / workers)) tasks (at most the 32
 * the batch buffer holds besides the one returned) from the global queue.
 */
static struct blitz_task *global_fetch(struct blitz_worker *w)
{
	struct blitz_runtime *rt = w->rt;
	size_t len = inject_len(&rt->inject);
	size_t n, got;
	struct blitz_task *tmp[BLITZ_BATCH_BUFFER + 1];

	w->polls_since_global = 0;
	if (len == 0 || wake_defer_global(w))
		return NULL;
	n = len / rt->num_workers;
	if (n < BLITZ_MIN_GLOBAL_BATCH)
		n = BLITZ_MIN_GLOBAL_BATCH;
	if (n > BLITZ_MAX_GLOBAL_BATCH)
		n = BLITZ_MAX_GLOBAL_BATCH;
	if (n > BLITZ_BATCH_BUFFER + 1)
		n = BLITZ_BATCH_BUFFER + 1;
	/* The batch buffer is empty here: find_work drains it first. */
	got = inject_pop_batch(&rt->inject, tmp, n);
	if (got == 0)
		return NULL;
	for (size_t i = 1; i < got; i++)
		w->batch[i - 1] = tmp[i];
	w->batch_head = 0;
	w->batch_len = (uint32_t)(got - 1);
	stat_inc(w, global_batches);
	stat_add(w, global_tasks, got);
	hist_count(&w->hist, BLITZ_HIST_GLOBAL_BATCH, got);
	BLITZ_GLOBAL_BATCH((int)w->index, (uint32_t)got,
			   BLITZ_GLOBAL_BATCH_ENABLED() ? inject_len(&rt->inject) : 0);
	return tmp[0];
}

static void lifo_flush(struct blitz_worker *w, int reason)
{
	/* Relaxed: owner-only slot (see worker_schedule_local). */
	struct blitz_task *t = atomic_load_explicit(&w->lifo, memory_order_relaxed);

	if (!t)
		return;
	atomic_store_explicit(&w->lifo, NULL, memory_order_relaxed);
	BLITZ_LIFO_FLUSH((int)w->index, (uint64_t)(uintptr_t)t, reason);
	push_ring(w, t, false);
}

/*
 * lifo_take - the LIFO slot's task, while the tick has LIFO polls left
 * (*@src = SRC_LIFO).  At the cap the slot is flushed behind the ring's
 * tasks, unless the ring is empty: then the flush and the ring pop that
 * find_work would do next hand back this same task, so it is taken here
 * as that ring poll (*@src = SRC_RING), without the push, the pop's CAS
 * and the moment in which a thief could carry it to another CPU.  Two
 * tasks that wake each other (a contended lock's hand-offs) go that way
 * on all but three polls a tick: on one worker, 74 of the 475
 * instructions of a mutex hand-off were the flush and the pop.  Only
 * this thread adds to its ring, so an empty ring stays empty until the
 * task is taken.  Inlined, as find_work (below), into both copies of
 * tick().
 */
static inline __attribute__((always_inline)) struct blitz_task *
lifo_take(struct blitz_worker *w, int *src)
{
	struct blitz_task *t;
	bool capped;

	if (!w->rt->cfg.lifo)
		return NULL;
	capped = w->lifo_polls >= BLITZ_MAX_LIFO_POLLS;
	if (capped && queue_len(&w->queue) != 0) {
		lifo_flush(w, LIFO_FLUSH_CAP);
		return NULL;
	}
	/* Relaxed: owner-only slot (see worker_schedule_local). */
	t = atomic_load_explicit(&w->lifo, memory_order_relaxed);
	if (!t)
		return NULL;
	atomic_store_explicit(&w->lifo, NULL, memory_order_relaxed);
	if (capped) {
		*src = SRC_RING;
		return t;
	}
	*src = SRC_LIFO;
	w->lifo_polls++;
	stat_inc(w, lifo_hits);
	BLITZ_LIFO_HIT((int)w->index, (uint64_t)(uintptr_t)t);
	return t;
}

/*
 * found_more - the last searcher found a task: is there
 * more work that another worker could take?  Producers that saw us
 * searching woke nobody, so their tasks, if any are left, are in a ring
 * or the global queue; a steal leaves the rest of its half in our ring.
 * Look at our slot, every ring and the global queue: what we found
 * ourselves (our I/O completions reaped at the start of the tick, the
 * one task a pool thread or a timer woke) says nothing about the rest.
 * The fence argument covers producers that notify through
 * runtime_notify_parked.  A push to a worker's own ring is checked with
 * relaxed loads (runtime_local_wake_wanted): its tail store may still
 * be in the pusher's store buffer when we look, and then nobody wakes a
 * sleeper for it; the pusher runs it itself, so that costs parallelism,
 * bounded by the park timeout, as documented there (tests/model: the
 * store buffer is not modelled).
 * Waking a worker for nothing costs it a futex or ring round trip, and on
 * a busy machine it preempts someone.
 */
static bool found_more(struct blitz_worker *w)
{
	/*
	 * seq_cst fence: our searching -> not searching RMW before these
	 * loads, against the producers' push; fence; load of num_searching
	 * (runtime_notify_parked): either they saw us gone or we see them.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	return wake_work_for_others(w);
}

/*
 * Leave the searching state.  The last searcher, if it is to @look (it
 * goes on running: a task it found, or a joiner's poll), wakes another
 * if there is more work (found_more); a worker that exits does not.
 * @source: where the task it found came from, -1: none (for the probe).
 */
static void end_searching(struct blitz_worker *w, int source, bool look)
{
	if (!w->searching)
		return;
	w->searching = false;
	bool last = idle_transition_from_searching(&w->rt->idle);

	/* Relaxed: a snapshot for the probe. */
	BLITZ_SEARCHING_END((int)w->index, atomic_load_explicit(&w->rt->idle.num_searching,
								memory_order_relaxed), source >= 0);
	if (last && look && found_more(w))
		runtime_notify_parked(w->rt, (int)w->index);
}

static struct blitz_task *steal_work(struct blitz_worker *w)
{
	struct blitz_runtime *rt = w->rt;
	unsigned n = rt->num_workers;
	uint32_t max = rt->cfg.steal == BLITZ_STEAL_ONE ? 1 : QUEUE_HALF;

	if (n < 2)
		return NULL;
	if (!w->searching) {
		if (!idle_try_become_searcher(&rt->idle))
			return NULL;
		w->searching = true;
		/* Relaxed: a snapshot for the probe. */
		BLITZ_SEARCHING_START((int)w->index,
				      atomic_load_explicit(&rt->idle.num_searching,
							   memory_order_relaxed));
	}
	unsigned start = (unsigned)(worker_rand(w) % n);
	uint64_t now = wake_steal_clock(w);

	for (unsigned i = 0; i < n; i++) {
		unsigned v = (start + i) % n;
		uint32_t taken;
		int fail;
		struct blitz_task *t;

		if (v == w->index || !wake_may_steal_from(w, v, now))
			continue;
		t = queue_steal_into(&rt->workers[v].queue, &w->queue, max, &taken, &fail);
		if (t) {
			stat_inc(w, steals);
			stat_add(w, stolen, taken);
			trace_steal(w, v, taken);
			return t;
		}
		stat_inc(w, steal_fails);
		BLITZ_STEAL_FAIL((int)w->index, (int)v, fail);
	}
	return NULL;
}

/*
 * found - @t comes from @src: *@source (the worker's run_source) says so
 * for run_task, and the poll is counted under it here, with a constant
 * index (run_task takes it back if the task turns out cancelled and is
 * dropped, reading run_source from the worker it holds anyway: no
 * register is kept across run_task's calls for it).
 */
static inline struct blitz_task *found(struct blitz_worker *w, struct blitz_task *t, int *source,
				       int src)
{
	*source = src;
	stat_inc(w, polls_by_source[src]);
	return t;
}

/*
 * find_work - the next task for @w, in the order above; NULL if none.
 * *@search_ns grows by the time spent stealing (the other workers' rings
 * and the last global check): not poll time, so not part of the EWMA
 * sample (Tokio stops its poll-time clock around the steal phase too).
 * Inlined into both copies of tick(), as lifo_take: with two callers gcc
 * kept both out of line, which cost the run loop instructions on every
 * poll (tools/measure-instructions shows it).
 */
static inline __attribute__((always_inline)) struct blitz_task *find_work(struct blitz_worker *w, int *source, uint64_t *search_ns)
{
	uint64_t search_start;
	int src;
	struct blitz_task *t;

	if (w->polls_since_global >= w->global_interval &&
	    w->batch_head == w->batch_len &&
	    (t = global_fetch(w))) {
		return found(w, t, source, SRC_GLOBAL);
	}
	if ((t = batch_pop(w))) {
		return found(w, t, source, SRC_BATCH);
	}
	if ((t = lifo_take(w, &src))) {
		return found(w, t, source, src);
	}
	if ((t = queue_pop(&w->queue))) {
		return found(w, t, source, SRC_RING);
	}
	if ((t = global_fetch(w))) {
		return found(w, t, source, SRC_GLOBAL);
	}
	search_start = clock_now_ns();
	if ((t = steal_work(w)))
		found(w, t, source, SRC_STEAL);
	else if ((t = global_fetch(w)))
		found(w, t, source, SRC_GLOBAL);
	*search_ns += clock_now_ns() - search_start;
	return t;
}

/* ---------------------------------------------------------------------- */
/* Running tasks                                                           */

/*
 * run_task - poll @t once on @w (NULL: a helping non-worker thread).
 * @traced, @hist, @logged: the channels this copy reports the poll to
 * (trace_poll_start), constants in each copy below.  A stamped task
 * (TASK_STAMPED, which the transition to running clears) has its wait
 * read in every copy, behind the test for a cancelled task that the poll
 * path makes anyway.  A ready poll is counted by task_finish, behind the
 * semaphore test its probe already makes, so that no copy keeps a
 * register live across the poll for it.
 */
static inline __attribute__((always_inline)) void
run_task(struct blitz_worker *w, struct blitz_task *t, bool traced, bool hist, bool logged)
{
	int widx = w ? (int)w->index : -1;
	struct blitz_cx cx = { .task = t, .worker = w, .yielded = 0 };
	uint64_t prev = task_transition_to_running(t);
	struct trace_poll tp;

	if (__builtin_expect(prev & (TASK_CANCELLED | TASK_STAMPED), 0)) {
		if ((prev & TASK_CANCELLED) && task_shield(prev) == 0) {
			if (w)	/* counted as a poll by find_work(): take it back */
				stat_add(w, polls_by_source[w->run_source], (uint64_t)-1);
			task_finish(t, widx, 1);	/* dropped, not polled */
			return;
		}
		if (prev & TASK_STAMPED)
			hist_stamp_read(w, t);
	}
	current_task = t;
	trace_poll_start(&tp, w, t, traced, hist, logged);
	enum blitz_poll r = t->vtable->poll(task_user(t), &cx);
	trace_poll_end(&tp, w, t, traced, r);
	current_task = NULL;

	if (r == BLITZ_READY) {
		task_finish(t, widx, 0);
		return;
	}
	if (task_transition_after_poll(t, cx.yielded) == TASK_RESCHEDULE)
		t->vtable->reschedule(t);
}

/*
 * run_task_traced - the copy with the probes (TRACED_POLL, or a helping
 * thread while they are enabled).  Out of line, so that the plain copy
 * keeps no frame for them.
 */
static __attribute__((noinline, cold)) void
run_task_traced(struct blitz_worker *w, struct blitz_task *t)
{
	run_task(w, t, true, true, true);
}

/*
 * run_task_timed - a poll in a timed tick of the summary histograms:
 * timed, and its pushes counted.  Out of line like run_task_traced.
 */
static TRACE_COPY void
run_task_timed(struct blitz_worker *w, struct blitz_task *t)
{
	run_task(w, t, false, true, false);
}

/*
 * run_task_logged - a poll while the event log is on (TRACED_EVENTS):
 * its start and end logged, and timed too if the tick is a timed one.
 */
static TRACE_COPY void
run_task_logged(struct blitz_worker *w, struct blitz_task *t)
{
	run_task(w, t, false, true, true);
}

/*
 * worker_run_task - poll @t once.  While a tracer holds task_poll_start's
 * or task_poll_end's semaphore the copy with the probes runs; otherwise one
 * without them, so that the probes' arguments (source, the worker index)
 * are not kept live across the poll (docs/probes.md, "What an unattached
 * probe costs").  A worker reads its tick's latch (TRACED_POLL: either
 * probe's semaphore); a helping thread the semaphores themselves.  With
 * the summary histograms alone, a timed tick's polls (TRACED_HIST) take
 * the timed copy, and an untimed tick's latch is zero: its polls cost
 * what they cost untraced.
 */
void worker_run_task(struct blitz_worker *w, struct blitz_task *t)
{
	if (__builtin_expect(w ? w->traced != 0 :
			     BLITZ_TASK_POLL_START_ENABLED() | BLITZ_TASK_POLL_END_ENABLED() |
			     BLITZ_EVENT_FLUSH_ENABLED(), 0)) {
		/*
		 * The latch read again (relaxed: owner-only; it only keeps the
		 * compiler from holding the first load in a register, which
		 * cost the untraced path an instruction).
		 */
		uint8_t traced = w ? __atomic_load_n(&w->traced, __ATOMIC_RELAXED) : 0;

		if (!w || (traced & TRACED_POLL)) {
			run_task_traced(w, t);
			return;
		}
		if (traced & TRACED_EVENTS) {
			run_task_logged(w, t);
			return;
		}
		if (traced & TRACED_HIST) {
			run_task_timed(w, t);
			return;
		}
	}
	run_task(w, t, false, false, false);
}

/* EWMA (alpha 0.1) of the poll time; interval = clamp(1 ms / avg, 8, 255). */
static void update_interval(struct blitz_worker *w, uint32_t tasks_run, uint64_t elapsed)
{
	uint64_t avg, interval;

	if (tasks_run == 0)
		return;
	avg = elapsed / tasks_run;
	w->ewma_poll_ns = (avg + 9 * w->ewma_poll_ns) / 10;
	if (w->ewma_poll_ns == 0)
		w->ewma_poll_ns = 1;
	if (w->rt->cfg.global_interval) {
		interval = w->rt->cfg.global_interval;
	} else {
		interval = BLITZ_TARGET_GLOBAL_LATENCY_NS / w->ewma_poll_ns;
		if (interval < BLITZ_MIN_GLOBAL_INTERVAL)
			interval = BLITZ_MIN_GLOBAL_INTERVAL;
		if (interval > BLITZ_MAX_GLOBAL_INTERVAL)
			interval = BLITZ_MAX_GLOBAL_INTERVAL;
	}
	w->global_interval = (uint32_t)interval;
	/* Relaxed: statistics for worker_read_stats (one writer). */
	atomic_store_explicit(&w->stats.ewma_poll_ns, w->ewma_poll_ns, memory_order_relaxed);
	atomic_store_explicit(&w->stats.global_interval, interval, memory_order_relaxed);
	BLITZ_EWMA_UPDATE((int)w->index, w->ewma_poll_ns, (uint32_t)interval);
	hist_ewma(w, w->ewma_poll_ns, avg);
}

/* ---------------------------------------------------------------------- */
/* Parking                                                                 */

/*
 * sleep_in_io - sleep in the I/O driver instead of the futex, so that an I/O
 * completion wakes this worker.  One worker at a time (the driver's reap
 * lock).  Against worker_unpark, a Dekker pattern (seq_cst on both sides):
 *   here:      futex UNPARKED -> PARKED;  io_parker = me;  recheck futex
 *   unparker:  futex := NOTIFIED;         load io_parker;  if me: driver wake
 * Either the recheck sees NOTIFIED (and we do not block), or the unparker
 * sees io_parker and the driver wake makes the blocking reap return.
 * Returns false if it could not sleep there (caller uses the futex);
 * *@completions counts what its blocking reap completed.
 */
static bool sleep_in_io(struct blitz_worker *w, uint64_t timeout_ns, bool *notified,
			int *completions)
{
	struct blitz_runtime *rt = w->rt;
	struct blitz_io *io = &rt->io;
	uint32_t expect = PARK_UNPARKED;

	/*
	 * Nothing to wait for means the futex will do.  seq_cst: after our
	 * parked bit (idle_set_parked), against an outside submitter's
	 * in_flight++, fence and load of the bits (runtime_unpark_for_io):
	 * either we see its operation here, or it sees our bit and unparks
	 * us.  A worker's own submissions need no such order: it reaps at
	 * its next tick.
	 */
	if (atomic_load(&io->in_flight) == 0 ||
	    pthread_mutex_trylock(&io->reap_lock))
		return false;
	if (atomic_compare_exchange_strong(&w->park.futex, &expect, PARK_PARKED)) {
		atomic_store(&rt->io_parker, (int)w->index);
		if (atomic_load(&w->park.futex) == PARK_PARKED) {
			w->reaping_asleep = true;	/* runtime_notify_parked: no self-wake */
			*completions = io->backend->reap(io, timeout_ns, ring_room(w));
			w->reaping_asleep = false;
			w->reaped_asleep = true;	/* the next tick's reap would find nothing new */
		}
		/*
		 * seq_cst as above, though any order would do: an unparker
		 * that still sees us only wakes the driver for nothing.
		 */
		atomic_store(&rt->io_parker, -1);
	}
	pthread_mutex_unlock(&io->reap_lock);
	/*
	 * seq_cst (acq_rel would do, as in park_wait): consume a notification
	 * and see what the waker wrote before it.
	 */
	*notified = atomic_exchange(&w->park.futex, PARK_UNPARKED) == PARK_NOTIFIED;
	return true;
}

/*
 * sleep_in_own_ring - a worker with an I/O queue of its own (io_uring: a
 * ring per worker) parks there, so that its completions wake it.  As
 * park_wait(), with PARK_PARKED_IO in the futex word: an unparker that
 * finds it there wakes the queue instead (worker_unpark); one atomic
 * word decides, so no wake is lost (the queue's wake is remembered if it
 * comes before the sleep: backends/io_uring.c, uring_wait_own).
 */
static bool sleep_in_own_ring(struct blitz_worker *w, uint64_t timeout_ns, int *completions)
{
	uint32_t expect = PARK_UNPARKED;

	/* acquire on failure: a NOTIFIED seen here pairs with the waker's swap. */
	if (atomic_compare_exchange_strong_explicit(&w->park.futex, &expect, PARK_PARKED_IO,
						    memory_order_acq_rel, memory_order_acquire))
		*completions = io_driver_wait_own(&w->rt->io, timeout_ns);
	/* acq_rel: consume a notification and see what the waker wrote before it. */
	return atomic_exchange_explicit(&w->park.futex, PARK_UNPARKED,
					memory_order_acq_rel) == PARK_NOTIFIED;
}

/*
 * worker_sleep - park for at most @timeout_ns.  Returns true if notified;
 * *@io_completions > 0 if it slept in the I/O driver and completions woke it.
 */
static bool worker_sleep(struct blitz_worker *w, uint64_t timeout_ns, int *io_completions)
{
	bool notified;

	*io_completions = 0;
	if (io_driver_has_own(&w->rt->io))
		return sleep_in_own_ring(w, timeout_ns, io_completions);
	if (sleep_in_io(w, timeout_ns, &notified, io_completions))
		return notified;
	return park_wait(&w->park, timeout_ns);
}

/* worker_unpark - wake @w wherever it sleeps (futex or I/O driver). */
void worker_unpark(struct blitz_worker *w)
{
	struct blitz_runtime *rt = w->rt;

	if (park_unpark(&w->park) == PARK_PARKED_IO) {
		io_driver_wake_worker(&rt->io, w->index);
		return;
	}
	/* seq_cst: the unparker's half of the pattern in sleep_in_io(). */
	if (atomic_load(&rt->io_parker) == (int)w->index)
		rt->io.backend->wake(&rt->io);
}

void worker_park(struct blitz_worker *w)
{
	struct blitz_runtime *rt = w->rt;
	struct blitz_idle *idle = &rt->idle;
	int reason, io_completions;
	bool notified;
	uint64_t timeout = rt->cfg.park_timeout_ns, slept_from;

	/*
	 * From here on, wakes on this thread go to the global queue (seq_cst:
	 * ordered before the bitmap update below, for readers on this thread
	 * it only needs to be program-ordered).
	 */
	atomic_store(&w->transitioning_to_park, true);
	lifo_flush(w, LIFO_FLUSH_PARK);
	if (!queue_is_empty(&w->queue) || w->batch_head != w->batch_len)
		goto out;

	wake_park_begin(w);	/* before our bit: see there */
	idle_set_parked(idle, w->index, w->searching);
	if (w->searching) {
		w->searching = false;
		BLITZ_SEARCHING_END((int)w->index, idle_searching(idle), 0);
	}
	/*
	 * Submit what threads that are not workers left on the driver's
	 * pending list (io_uring: backends/io_uring.c, "The pending list"):
	 * they cannot, and a worker ending a tick may not come.  The flag's
	 * load is seq_cst, after our bit: the other half of the submitter's
	 * flag, fence and load of the bits (runtime_unpark_for_io).  Before
	 * the exits below: the one for a due timer keeps the bit it set.
	 */
	io_driver_flush(&rt->io);
	/*
	 * --- timers (core/time/driver.c): worker 0 sleeps at most until the next
	 * expiry, 0 if one is due (then it does not sleep).  This publishes
	 * its wake-up time, so that an earlier timer inserted from now on
	 * unparks it (the Dekker pattern in core/time/driver.c). ---
	 */
	if (w->index == 0)
		timeout = runtime_timer_park_timeout(rt, rt->cfg.park_timeout_ns);
	/*
	 * Final check, after our bit is visible (the parker's half of idle.h).
	 * shutdown: seq_cst, though a miss costs nothing: blitz_runtime_free()
	 * unparks every worker after its store, and the park state keeps it.
	 */
	if (atomic_load(&rt->shutdown) || timeout == 0) {
		if (!idle_unset_parked(idle, w->index))
			w->searching = true;	/* claimed meanwhile: we search */
		goto out;
	}
	/*
	 * Work appeared since we looked: wake a sleeper as a searcher (often
	 * ourselves: our futex is then NOTIFIED and the sleep below returns at
	 * once) instead of taking our bit back and running it unannounced.
	 * A searcher that finds work wakes the next one; a worker that just
	 * ran the task would not, and a second queued task could wait behind
	 * a long poll until a park timeout (model finding 1, RECHECK_NOTIFY in
	 * tests/model/idle.pml; Tokio does the same).
	 */
	if (wake_park_final_check(w))
		runtime_notify_parked(rt, (int)w->index);

	/* What completed elsewhere is not held across our sleep. */
	owned_drain(&rt->owned, w->index, &w->owned_local);
	stat_inc(w, parks);
	slept_from = trace_park(w, timeout);
	notified = worker_sleep(w, timeout, &io_completions);
	if (idle_unset_parked(idle, w->index)) {
		/* Only the probe's reason: any order would do. */
		if (atomic_load(&rt->shutdown))
			reason = UNPARK_SHUTDOWN;
		else
			reason = io_completions > 0 ? UNPARK_IO : UNPARK_TIMEOUT;
	} else {
		/* A waker cleared our bit and made us a searcher. */
		w->searching = true;
		reason = UNPARK_NOTIFIED;
	}
	trace_unpark(w, reason, notified, slept_from);
out:
	wake_park_end(w);
	if (w->index == 0)	/* --- timers: awake, polls the wheel every tick --- */
		runtime_timer_unparked(rt);
	/* Relaxed: owner-only flag (see worker_schedule_local). */
	atomic_store_explicit(&w->transitioning_to_park, false, memory_order_relaxed);
}

/* ---------------------------------------------------------------------- */
/* The run loop                                                            */

/*
 * ring_bytes - the size of a worker's ring: the flight recorder's, else
 * BLITZ_EVENT_RING_KB's, else the default.
 */
static size_t ring_bytes(const struct blitz_runtime *rt)
{
	unsigned kb = rt->cfg.flight_kb ? rt->cfg.flight_kb :
		      rt->cfg.event_ring_kb ? rt->cfg.event_ring_kb : EVENT_RING_DEFAULT_KB;

	return (size_t)kb << 10;
}

/* log_tick_traced - log_tick's work, while the log is on or its tracer came or went. */
static __attribute__((noinline, cold)) void log_tick_traced(struct blitz_worker *w, uint64_t now_ns)
{
	bool on = w->traced & TRACED_EVENTS;

	if (on != w->logging) {
		w->logging = on;
		events_switch(&w->events, on, w->rt->cfg.flight_kb != 0, ring_bytes(w->rt));
	}
	if (on)
		events_tick(&w->events, now_ns);
}

/*
 * exit_flush_tick - the process exits and asked for our histograms and
 * records (exit_flush.h): hand them over, once.  Tested only while they
 * are collected (the flags beside the latch); relaxed: a hint, which a
 * later tick sees if this one does not.
 */
static inline void exit_flush_tick(struct blitz_worker *w, uint64_t now_ns)
{
	if (__builtin_expect(w->logging | w->hist.on, 0) &&
	    atomic_load_explicit(&w->rt->exit_flush, memory_order_relaxed) && !w->exit_flushed)
		exit_flush_worker(w, now_ns);
}

/*
 * log_tick - the event log at a tick's start, after the latch: start or
 * stop logging as the tracer came or went, flush a log that has waited.
 * One test when nothing is attached.
 */
static inline void log_tick(struct blitz_worker *w, uint64_t now_ns)
{
	if (__builtin_expect((w->traced & TRACED_EVENTS) | w->logging, 0))
		log_tick_traced(w, now_ns);
}

/*
 * tick - one tick: maintenance (timers on worker 0, I/O), then up to a
 * budget of polls; returns how many ran.  @until: a join's target
 * (core/sched/help.c), after whose completion the tick ends at once; NULL
 * in the run loop, where the test compiles away (this is inlined into
 * both callers).
 *
 * The EWMA sample is the time of the polls alone, as its name says: the
 * timers fired and the I/O reaped before them (a second clock read, only
 * when a timer fired or operations are in flight) and the submissions
 * flushed after them (the closing clock read is taken before the flush)
 * are left out, and so are the search
 * (steals, the global queue) and the time spent inside joins during the
 * tick (helped_ns, which help.c keeps: those polls are sampled by the
 * nested ticks that ran them).  The polls a join's fast path ran
 * (inline_polls) stay in, and are counted.  With the reaping and the
 * submission in, an echo server's EWMA read many times its mean poll time
 * (docs/scheduler.md, "Decisions": EWMA), and every global-queue interval
 * and automatic histogram period derived from it was that much off.
 */
static inline __attribute__((always_inline)) uint32_t
tick(struct blitz_worker *w, const struct blitz_task *until)
{
	uint64_t start = clock_now_ns(), search_ns = 0, helped = w->helped_ns;
	uint64_t inlined = w->inline_polls, polls_start = start, polls_end;
	uint32_t tasks_run = 0;

	w->tick++;
	w->traced = worker_trace_latch() | w->trace_always;
	log_tick(w, start);
	hist_tick(w, &w->hist, start);
	exit_flush_tick(w, start);
	wake_tick_start(w, start);
	owned_drain(&w->rt->owned, w->index, &w->owned_local);	/* completed tasks: owned.h */
	w->budget = w->rt->cfg.budget;
	w->lifo_polls = 0;
	/* --- timers (core/time/driver.c): worker 0 drives the wheel. --- */
	if (w->index == 0 && runtime_poll_timers(w->rt))
		polls_start = clock_now_ns();	/* firing timers is not poll time */
	/*
	 * I/O: any worker may reap completions, without waiting (try-lock).
	 * Relaxed: a hint; a stale zero leaves them to the next tick.  Not in
	 * the tick right after a sleep in the backend that reaped (and
	 * dispatched) them: that wait returned microseconds ago, and a second
	 * look found nothing new in an echo server's every message (an
	 * epoll_wait per message); what arrived since waits for the next tick.
	 */
	if (atomic_load_explicit(&w->rt->io.in_flight, memory_order_relaxed) > 0 &&
	    !w->reaped_asleep) {
		/*
		 * bounded, deferring: hand the tasks our completions wake to the
		 * lower workers (the global queue; a notify wakes the
		 * lowest-numbered sleeper), so that their next I/O goes into
		 * those rings and ours empties.
		 */
		w->draining = wake_defer_global(w);
		io_driver_reap(&w->rt->io, 0, w->draining ? IO_REAP_ALL : ring_room(w));
		w->draining = false;
		polls_start = clock_now_ns();	/* the reaping is not poll time */
	}
	w->reaped_asleep = false;
	while (w->budget > 0) {
		struct blitz_task *t = find_work(w, &w->run_source, &search_ns);

		if (!t)
			break;
		end_searching(w, w->run_source, true);
		worker_run_task(w, t);
		w->budget--;
		w->polls_since_global++;
		tasks_run++;
		if (until && task_lifecycle(task_state_load(until)) == TASK_COMPLETE)
			break;
	}
	polls_end = clock_now_ns();
	/* I/O: start what the polls submitted, in one go. */
	if (tasks_run)
		io_driver_flush(&w->rt->io);
	if (w->budget == 0) {
		stat_inc(w, budget_exhausted);
		BLITZ_BUDGET_EXHAUSTED((int)w->index, w->tick);
	}
	update_interval(w, tasks_run + (uint32_t)(w->inline_polls - inlined),
			polls_end - polls_start - search_ns - (w->helped_ns - helped));
	return tasks_run;
}

static void worker_tick(struct blitz_worker *w)
{
	if (tick(w, NULL) == 0)
		worker_park(w);
}

/*
 * worker_help_tick - a tick inside a join (core/sched/help.c) that ends
 * as soon as @target completes; it does not park (the caller does, after
 * registering its waker).  Returns the polls it ran.
 */
uint32_t worker_help_tick(struct blitz_worker *w, const struct blitz_task *target)
{
	return tick(w, target);
}

/*
 * worker_poll_lifo - a join's fast path (core/sched/help.c): if @t sits in
 * @w's LIFO slot (spawned just before the join), take it and poll it here,
 * as find_work would have, without a tick around it; returns whether it
 * did.  A LIFO hit, but not held to BLITZ_MAX_LIFO_POLLS: that cap keeps
 * two tasks waking each other from starving the ring, where here one poll
 * (the joiner's) runs on; what bounds it is the budget, of which each
 * such poll takes one, leaving one for the joiner's.
 */
bool worker_poll_lifo(struct blitz_worker *w, struct blitz_task *t)
{
	/* Relaxed: owner-only slot (see worker_schedule_local). */
	if (w->budget <= 1 || atomic_load_explicit(&w->lifo, memory_order_relaxed) != t)
		return false;
	atomic_store_explicit(&w->lifo, NULL, memory_order_relaxed);
	stat_inc(w, lifo_hits);
	BLITZ_LIFO_HIT((int)w->index, (uint64_t)(uintptr_t)t);
	w->budget--;
	w->polls_since_global++;
	w->inline_polls++;
	worker_run_task(w, found(w, t, &w->run_source, SRC_LIFO));
	return true;
}

/*
 * worker_help_leave - a join is done helping: leave the searching state
 * its last tick may have left us in (a search that found nothing ends in
 * a park in the run loop; a join whose target completed does not park),
 * so that producers do not count on a searcher that is back in a poll.
 * The last searcher to leave looks at every queue as a parker would
 * (idle.h): a producer that saw us searching woke nobody, and without the
 * look its task would wait for our next tick or a sleeper's park timeout.
 */
void worker_help_leave(struct blitz_worker *w)
{
	end_searching(w, -1, true);
}

/*
 * wait_all_stopped_polling - shutdown: return once no worker polls tasks
 * any more.  A worker's io_driver_thread_stop cancels the operations in its
 * own ring, and each cancelled completion wakes its task: were another
 * worker still in its loop, it could poll that task, which would see
 * -ECANCELED from a shutdown it was meant never to observe (the task is to
 * be dropped by blitz_runtime_free instead).  So every worker leaves its
 * loop before any ring is cancelled.  seq_cst: one counter, no other data
 * is published through it; each worker is out of its loop before its own
 * increment, so a count of num_workers means all are.  The wait is short:
 * the others saw the flag when they were unparked and end their current
 * tick.
 */
static void wait_all_stopped_polling(struct blitz_runtime *rt)
{
	atomic_fetch_add(&rt->stopped_polling, 1);
	while (atomic_load(&rt->stopped_polling) < rt->num_workers)
		sched_yield();
}

/*
 * worker_hand_over - the tracer gets what @w holds: its histograms (if it
 * collects), its log's records, and what it logged as an outside thread
 * (another runtime's tasks).  At the worker's exit (worker_main) and the
 * process's (exit_flush.c); on @w's thread.
 */
void worker_hand_over(struct blitz_worker *w, uint64_t now_ns)
{
	if (w->hist.on)
		hist_fire(w, now_ns);
	if (w->logging)
		events_finish(&w->events);
	events_outside_wait();
}

void *worker_main(void *arg)
{
	struct blitz_worker *w = arg;
	char name[16];

	snprintf(name, sizeof(name), "blitz-worker%u", w->index);
	pthread_setname_np(pthread_self(), name);	/* top, gdb, /proc: which thread is whose */
	current_worker = w;
	hist_thread_start(w);
	w->stack_limit = help_stack_limit();
	io_driver_thread_start(&w->rt->io, w->index);	/* its own ring, if any */
	/* Acquire: pairs with the release store in blitz_runtime_free(). */
	while (!atomic_load_explicit(&w->rt->shutdown, memory_order_acquire))
		worker_tick(w);
	end_searching(w, -1, false);
	wait_all_stopped_polling(w->rt);
	worker_hand_over(w, 0);		/* the last snapshot and records */
	hist_exit(w);
	io_driver_thread_stop(&w->rt->io);
	owned_drain_local(&w->rt->owned, &w->owned_local);	/* before the blocks go back */
	task_cache_drain(w);
	current_worker = NULL;
	return NULL;
}

void worker_read_stats(const struct blitz_worker *w, struct blitz_worker_stats *o)
{
	const struct worker_stats *s = &w->stats;

	/* Relaxed: statistics, each a snapshot (one writer each, see stat_inc). */
#define RD(f) o->f = atomic_load_explicit(&s->f, memory_order_relaxed)
	o->polls = worker_polls(w);
	RD(steals); RD(stolen); RD(steal_fails); RD(parks);
	RD(lifo_hits); RD(global_batches); RD(global_tasks); RD(overflows);
	RD(overflowed); RD(spawned); RD(budget_exhausted); RD(ewma_poll_ns);
	RD(global_interval); RD(task_cache_hits); RD(task_cache_misses);
#undef RD
}
