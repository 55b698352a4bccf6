/*
 * idle.pml -- Promela model of blitz's idle protocol as core/ implements
 * it: searching workers, "the last searcher must notify", the parked
 * bitmap, the park sequence with transitioning_to_park and its final
 * check, the futex park word.  Checked by spin; tests/model/run runs it in
 * several configurations, README.md maps it onto the C code.
 *
 * Names follow the C code:
 *   core/sched/idle.c     num_searching, num_parked, parked_bits (parked[0]);
 *                   idle_try_become_searcher, idle_transition_from_searching,
 *                   idle_set_parked, idle_unset_parked, idle_claim_parked
 *   core/sched/runtime.c  runtime_notify_parked, runtime_local_wake_wanted,
 *                   runtime_has_work (the final check)
 *   core/sched/worker.c   find_work (LIFO slot, ring, inject, steal_work, inject),
 *                   end_searching, worker_schedule_local with
 *                   should_notify_others, worker_park
 *   core/sched/park.c     futex word UNPARKED=0 / PARKED=1 / NOTIFIED=2
 *   core/sched/queue.c    a ring is a task count here; a steal takes ceil(half)
 *                   in two steps (claim; copy + release); ring.pml checks
 *                   the ring itself
 *
 * Tasks are counted, not named (spawned, executed).  Each C atomic
 * operation (load, store, fetch_add, fetch_or, fetch_and, CAS, exchange,
 * futex_wait's check-and-sleep) is one Promela step; a worker's LIFO slot
 * and transitioning_to_park are its locals (only its own thread touches
 * them).  Sequential consistency is assumed (README.md).
 *
 * Who enqueues:
 *   producer   a thread outside the runtime: runtime_schedule, i.e.
 *              inject_push + runtime_notify_parked
 *   a worker   worker_schedule_local, a wake that runs on worker W: while
 *              W runs a task, at the start of W's tick (timers, I/O reap:
 *              W may be a searcher then), or in W's sleep (sleep_in_io: an
 *              I/O completion ends the sleep).  Into W's LIFO slot,
 *              evicting the old task to W's ring and then notifying if
 *              should_notify_others -- unless transitioning_to_park is
 *              set: then inject_push + runtime_notify_parked.
 *
 * Knobs (spin -DNAME=VALUE -a idle.pml); the defaults model core/:
 *   NW=3              workers (2..8: the bitmap is a byte)
 *   START_PARKED=2    workers NW-START_PARKED..NW-1 start asleep in
 *                     futex_wait; the others at the top of the run loop
 *   INIT_RING=2       tasks in worker 0's ring at the start (stealable)
 *   NEXT=1            tasks the outside producers enqueue
 *   NPROD=1           outside producer threads (they share the NEXT tasks)
 *   NLOCAL=1          wakes that run on worker threads
 *   MAX_TIMEOUTS=0    10 ms park timeouts that may fire (255: unlimited).
 *                     The lost-wakeup check never relies on them: it
 *                     fires as soon as everybody sleeps, timeouts left or not
 *   SEARCH_MAX        bound asserted on num_searching; default (NW+1)/2,
 *                     what idle_try_become_searcher's 2*n >= NW test gives
 *   JOIN_HELP         (with HANG=N) a searcher that found nothing may
 *                     be a join's helper whose target completes: it
 *                     leaves the searching state (worker_help_leave)
 *                     and runs on in the joiner's poll, one of the N
 *   HANG=0            N: N tasks may run forever (a long poll): their
 *                     workers never come back.  Then the no-lost-wakeup
 *                     check demands that the others run every queued task
 *                     except those in the hung workers' LIFO slots
 *
 * The protocol as first designed, where core/ differs (docs/scheduler.md):
 *   SPEC_END_ANY      the last searcher notifies whenever it finds a task
 *                     (core/: only when found_more sees more work after
 *                     leaving the searchers: its slot, any ring, the
 *                     inject queue)
 *   FOUND_MORE_OWN    found_more only for a task from its own LIFO slot or
 *                     ring (its I/O completions, reaped as a searcher at
 *                     the start of a tick); a stolen or inject task always
 *                     notifies (core/ until a pool thread's wake of one
 *                     task, found in the inject queue, woke a second
 *                     worker for nothing on every spawn_blocking)
 *   SPEC_CLAIM        notify claims a bit first, then num_searching++
 *                     (core/: CAS num_searching 0 -> 1 first, then claim,
 *                     give the unit back if no bit; and num_parked == 0 is
 *                     an early exit)
 *   SPEC_RECHECK      only the last searcher re-checks before sleeping
 *                     (core/: every parker, runtime_has_work)
 *   SPEC_TRY          idle_try_become_searcher is load, test, fetch_add
 *                     (core/: a CAS loop)
 *   SPEC_EVICT        evicting the LIFO slot notifies nobody (core/:
 *                     should_notify_others + runtime_local_wake)
 *   SPEC_COUNT_FIRST  idle_set_parked does num_parked++ before setting
 *                     the bit (core/: bit first)
 *   WAKE_BEFORE_SLEEP a wake may run on a parking worker after its final
 *                     check and before its futex_wait, with no sleep
 *                     ending after it (core/ has no such wake today:
 *                     only sleep_in_io's reap, which ends the sleep)
 * The wake policy (core/sched/wake.h, wake.c; docs/scheduler.md, "Waking
 * another worker"): the default model is eager, Tokio's rule.
 *   BOUNDED           BLITZ_WAKE=bounded: a local push notifies only when
 *                     the pusher is behind; found_more and the park's
 *                     final check count the inject queue and only the
 *                     rings whose owner is behind; a lower-numbered victim
 *                     is stolen from only when behind; a worker above 0
 *                     whose lower workers keep up defers for a tick (no
 *                     global fetch, its reaped wakes go to the inject
 *                     queue, its final check leaves the inject queue to an
 *                     awake lower worker).  "Behind" (wake_worker_behind:
 *                     backlog x EWMA, or awake_too_long) and "keeps up"
 *                     (lower_keep_up) are free guesses, except that a
 *                     worker hung in a long poll is awake too long once a
 *                     park timeout has fired since it hung (overdue[];
 *                     one timeout, EARLY_TIMEOUT, may come within the busy
 *                     bound and set nothing).  With HANG, timeouts fire
 *                     only once a worker hangs, and the checker waits for
 *                     all MAX_TIMEOUTS of them: bounded may leave a task
 *                     behind a long poll until the second timeout after
 *                     the hang, never longer and never for ever.  Do not
 *                     start worker 0 asleep with INIT_RING > 0 under
 *                     BOUNDED: core/ never sleeps with tasks in its own
 *                     ring (tests/model/README.md)
 *   BUG_BOUNDED_DEFER_ASLEEP   the final check leaves the inject queue to
 *                     the lower workers whether they are awake or not
 *   BUG_BOUNDED_LATE_ASLEEP    wake_park_begin's clearing of awake_since
 *                     comes after the final check, not before our bit
 *   BUG_BOUNDED_NO_OVERDUE     a hung worker never counts as awake too
 *                     long: a task in its ring waits for ever
 *   BACKLOG           BLITZ_WAKE=backlog (the default since 2026-11-29):
 *                     eager, except that a local push that leaves more
 *                     than one task may skip its notify (the backlog
 *                     x EWMA test, a free guess here); nothing else
 *                     differs.  With HANG, timeouts fire only once a
 *                     worker hangs and the checker waits for all
 *                     MAX_TIMEOUTS of them, as under BOUNDED: a task the
 *                     skip left in a hung worker's ring waits for a park
 *                     timeout, never longer and never for ever
 * Proposed fixes:
 *   FIX_RELEASE       idle_claim_parked, giving back a unit it reserved
 *                     but could not use, does what any last searcher does:
 *                     if it was the last, it looks at every queue and, if
 *                     it finds work, notifies again (README.md, finding 5)
 *   RECHECK_NOTIFY    a parker whose final check finds work notifies (as
 *                     Tokio, and core/ since finding 1) instead of running
 *                     the work itself; 0 restores finding 1
 * Deliberate bugs (each check must find a counterexample):
 *   BUG_IGNORE_TRANSITIONING  a wake on a parking worker uses the LIFO slot
 *   BUG_NO_FINAL_CHECK        nobody re-checks the queues before sleeping
 *   BUG_NO_GIVE_BACK          idle_claim_parked keeps its unit when it
 *                             finds no bit (num_searching leaks)
 *   BUG_FOUND_MORE_NO_RINGS   found_more looks at its slot and the inject
 *                             queue only
 *   BUG_FOUND_MORE_NO_OWN_RING  found_more skips its own ring (where a
 *                             steal leaves the rest of its half)
 *   BUG_HELP_LEAVE_NO_LOOK    with JOIN_HELP: the last searcher leaving a
 *                             join's help does not look at the queues
 * Assertions that the spec variants break (findings, README.md):
 *   CHECK_NO_UNDERFLOW  num_searching never lags the units handed out
 *   CHECK_NUM_PARKED    num_parked never wraps below zero
 *
 * Properties:
 *   - no lost wakeup: whenever every (non-hung) worker sleeps in
 *     futex_wait and the producer is done, every task created has been
 *     taken by a worker and the idle state reads "all parked, nobody
 *     searching" (checker process); with LIVENESS: <>[] all tasks taken,
 *     under weak fairness;
 *   - num_searching counts exactly the units handed out (searchers, plus
 *     a notifier's reservation) and never underflows; a worker holds two
 *     units only inside its parking window; num_searching <= SEARCH_MAX;
 *   - a worker never runs a task with transitioning_to_park set, and its
 *     LIFO slot is empty when it starts to park.
 */

#ifndef NW
#define NW 3
#endif
#ifndef NEXT
#define NEXT 1
#endif
#ifndef NPROD
#define NPROD 1
#endif
#ifndef NLOCAL
#define NLOCAL 1
#endif
#ifndef MAX_TIMEOUTS
#define MAX_TIMEOUTS 0
#endif
#ifndef INIT_RING
#define INIT_RING 2
#endif
#ifndef START_PARKED
#define START_PARKED 2
#endif
#ifndef HANG
#define HANG 0
#endif
#ifndef RECHECK_NOTIFY
#define RECHECK_NOTIFY 1	/* core/ does (worker_park); 0 is finding 1 */
#endif
#ifndef SEARCH_MAX
#define SEARCH_MAX ((NW + 1) / 2)
#endif

#define UNPARKED 0
#define PARKED   1
#define NOTIFIED 2
#define BIT(w)   (1 << (w))
#define ALL      (BIT(NW) - 1)

#ifdef BUG_IGNORE_TRANSITIONING
#define USE_LIFO 1
#elif defined(BOUNDED)
#define USE_LIFO (!transitioning && !draining)  /* worker_local_dest */
#else
#define USE_LIFO (!transitioning)
#endif

#ifdef BOUNDED
#define MAY_STEAL bh            /* wake_may_steal_from, computed into bh */
#define NO_DEFER  (!defer)      /* global_fetch: wake_defer_global */
#else
#define MAY_STEAL 1
#define NO_DEFER  1
#endif

/* shared state of the runtime */
byte inject_len;             /* inject.c: atomic len of the injection queue */
byte ring[NW];               /* queue.c: tasks in each worker's ring */
bool stealing[NW];           /* steal != real: a steal is between claim and release */
byte futex[NW];              /* park.c: UNPARKED / PARKED / NOTIFIED */
bool sleeping[NW];           /* blocked in futex_wait (kernel side) */
byte num_searching;          /* idle.c */
byte num_parked;             /* idle.c (a u32 in C: both wrap) */
byte parked_bits;            /* idle.c: parked[0], bit w = worker w parked */

/* ghost state */
byte units[NW];              /* searcher units held by (or for) worker w */
byte reserved;               /* units a notifier holds, not yet given to a worker */
byte owed;                   /* SPEC_CLAIM: claimed, num_searching++ pending */
byte np_owed;                /* parkers between fetch_or(bit) and num_parked++ */
bool pwin[NW];               /* w set its bit while a searcher and has not
                                dropped that unit yet */
byte nsleep;                 /* workers with sleeping[] set */
byte spawned;                /* tasks created */
byte executed;               /* tasks taken by a worker to run */
byte local_left = NLOCAL;
byte ext_left = NEXT;
byte timeouts_left = MAX_TIMEOUTS;
byte prod_done;              /* producers finished */
#ifdef BOUNDED
#if HANG
bool early_left = 1;         /* ghost: the one timeout within the busy bound */
#endif
bool awake[NW];              /* wake.h: awake_since != 0 (set at a tick's
                                start, cleared by wake_park_begin/_end) */
bool hung[NW];               /* ghost: running a task for ever */
bool overdue[NW];            /* hung, and a park timeout has fired since:
                                awake_too_long() is true */
#endif
#if HANG
byte hang_left = HANG;
byte stuck;                  /* tasks left in the hung workers' LIFO slots */
#ifdef JOIN_HELP
byte helping;                /* ghost: helpers leaving, not yet hung */
#define HELPING helping
#else
#define HELPING 0
#endif
#define STUCK stuck
#define NHUNG (HANG - hang_left)
#else
#define STUCK 0
#define NHUNG 0
#endif

/*
 * BOUNDED with HANG: a park timeout (10 ms) fires only once a worker has
 * hung.  awake_too_long() counts from the hung worker's tick start, so a
 * timeout that comes within the busy bound (300 us) of it still finds the
 * worker keeping up: one timeout may leave overdue unset (EARLY_TIMEOUT);
 * any other makes every hung worker overdue (with the busy bound shorter
 * than the park timeout, the next timeout is that much later).  The
 * checker waits until MAX_TIMEOUTS have fired, or until it is clear
 * nobody hung.  Otherwise timeouts are free and the checker never waits
 * for them.
 */
#if defined(BOUNDED) && HANG
#define TIMEOUT_OK     (NHUNG > 0)
#define MARK_HUNG      hung[me] = 1
#ifdef BUG_BOUNDED_NO_OVERDUE
#define MARK_OVERDUE   skip
#else
#define MARK_OVERDUE   v = 0; do :: v < NW -> overdue[v] = overdue[v] || hung[v]; v++ :: else -> v = 0; break od
#endif
#define TIMEOUTS_DONE  (timeouts_left == 0 || NHUNG == 0)
#define EARLY_TIMEOUT  1
#elif defined(BACKLOG) && HANG
#define TIMEOUT_OK     (NHUNG > 0)
#define MARK_HUNG      skip
#define MARK_OVERDUE   skip
#define TIMEOUTS_DONE  (timeouts_left == 0 || NHUNG == 0)
#else
#define TIMEOUT_OK     1
#define MARK_HUNG      skip
#define MARK_OVERDUE   skip
#define TIMEOUTS_DONE  1
#endif

/* units handed out == num_searching (+ SPEC_CLAIM's pending increments) */
#define NSEARCH    ((num_searching + owed) & 255)
#define SEARCH_OK  (NSEARCH <= SEARCH_MAX)
#ifdef CHECK_NO_UNDERFLOW
#define NS_SLACK 0
#else
#define NS_SLACK (owed > 0)  /* SPEC_CLAIM: num_searching may lag meanwhile */
#endif

/* a worker w receives a unit: counted twice only inside its parking window */
#define GIVE_UNIT(w) \
	units[w]++; \
	assert(units[w] == 1 || (units[w] == 2 && pwin[w]))

/* num_searching-- by a unit holder: never below the units handed out */
#define DROP_UNIT(w) \
	assert(units[w] > 0 && (num_searching > 0 || NS_SLACK)); \
	num_searching--; \
	units[w]--

/* ---------------------------------------------------------- idle.c */

/*
 * idle_claim_parked(): sets v to the claimed worker, NW if none.
 * core/: load(num_parked) == 0: none; CAS(num_searching, 0, 1) or none;
 * load(parked); CAS the lowest bit off, retrying on the value the failed
 * CAS returns; num_parked--; no bit left: give the unit back.
 */
inline idle_claim_parked()
{
	v = NW;
#ifdef SPEC_CLAIM
	/* claim a bit first; SPEC_CLAIM: num_searching++ after the claim */
	d_step { bits = parked_bits };                  /* load(parked) */
	do
	:: bits == 0 -> break
	:: d_step {                                     /* CAS(parked, bits, bits & ~lowest) */
		bits != 0 ->
		v = 0;
		do
		:: v < NW && !(bits & BIT(v)) -> v++
		:: else -> break
		od;
		if
		:: parked_bits == bits ->
			parked_bits = bits & ~BIT(v);
			GIVE_UNIT(v);
			owed++;                 /* num_searching++ follows */
			assert(SEARCH_OK);
			bits = 0
		:: else ->
			bits = parked_bits;
			v = NW
		fi
	   }
	od;
	if
	:: v < NW ->
		d_step {                                /* fetch_sub(num_parked) */
#ifdef CHECK_NUM_PARKED
			assert(num_parked > 0);
#endif
			num_parked--
		};
		d_step { num_searching++; owed-- }      /* fetch_add(num_searching) */
	:: else
	fi
#else
	if
	:: num_parked == 0 -> skip                      /* load(num_parked) */
	:: else ->
		if
		:: d_step {                             /* CAS(num_searching, 0, 1) */
			num_searching == 0 ->
			num_searching = 1;
			reserved++;
			assert(SEARCH_OK)
		   };
			d_step { bits = parked_bits };  /* load(parked[0]) */
			do
			:: bits == 0 -> break
			:: d_step {                     /* CAS(parked, word, word & ~bit) */
				bits != 0 ->
				v = 0;
				do
				:: v < NW && !(bits & BIT(v)) -> v++
				:: else -> break
				od;
				if
				:: parked_bits == bits ->
					parked_bits = bits & ~BIT(v);
					reserved--;
					GIVE_UNIT(v);
					bits = 0
				:: else ->
					bits = parked_bits;  /* CAS failure: word = actual */
					v = NW
				fi
			   }
			od;
			if
			:: v < NW ->
				d_step {                /* fetch_sub(num_parked) */
#ifdef CHECK_NUM_PARKED
					assert(num_parked > 0);
#endif
					num_parked--
				}
#ifndef BUG_NO_GIVE_BACK
			:: else ->                      /* nobody to wake: give it back */
				d_step {
					assert(reserved > 0 && num_searching > 0);
					old = (num_searching == 1);
					num_searching--;
					reserved--
				};
#ifdef FIX_RELEASE
				/*
				 * The unit was a searcher that producers relied on:
				 * the last one leaving looks at every queue
				 * (runtime_has_work) and notifies again if it finds work.
				 */
				if
				:: old ->
					if
					:: inject_len > 0 -> v = NW + 1
					:: else ->
						old = 0;
						do
						:: old < NW && ring[old] > 0 -> v = NW + 1; break
						:: old < NW && ring[old] == 0 -> old++
						:: old == NW -> break
						od
					fi
				:: else
				fi;
#endif
				old = 0
#else
			:: else
#endif
			fi
		:: num_searching != 0 -> skip           /* CAS failed: somebody searches */
		fi
	fi
#endif
}

/*
 * runtime_notify_parked(): after a task was queued (seq_cst fence), and by
 * the last searcher when it found work.  Uses the caller's bits, v, old.
 */
inline runtime_notify_parked()
{
	do
	:: num_searching != 0 -> break                  /* idle_searching() */
	:: else ->
		idle_claim_parked();
		if
		:: v > NW -> skip                       /* FIX_RELEASE: again */
		:: v == NW -> break
		:: v < NW ->
			/* park_unpark(v): exchange(futex, NOTIFIED); wake if PARKED */
			d_step { old = futex[v]; futex[v] = NOTIFIED };
			if
			:: old == PARKED ->
				d_step {                /* futex_wake(1) */
					if
					:: sleeping[v] -> sleeping[v] = 0; nsleep--
					:: else
					fi
				}
			:: else
			fi;
			break
		fi
	od;
	atomic { v = 0; bits = 0; old = 0 }
}

/* runtime_local_wake(): runtime_local_wake_wanted's relaxed loads, then runtime_notify_parked */
/* found_more: seq_cst fence, then these loads; last = 1 if there is more */
#ifdef BOUNDED
/*
 * worker_behind(x) - wake_worker_behind: bh = 1 if worker x's ring holds
 * tasks and x is behind (backlog x EWMA, or awake too long: a guess that
 * overdue makes true).  One step: relaxed loads, read as a hint.
 */
inline worker_behind(x)
{
	atomic {
		if
		:: ring[x] == 0 -> bh = 0
		:: ring[x] > 0 -> bh = 1
		:: ring[x] > 0 && !overdue[x] -> bh = 0
		fi
	}
}

/* rings_behind: bh = 1 if some ring's owner is behind; uses i */
inline rings_behind()
{
	i = 0;
	bh = 0;
	do
	:: i < NW && !bh -> worker_behind(i); i++
	:: else -> break
	od;
	i = 0
}
#endif

inline found_more()
{
#ifdef BOUNDED
	/* wake_bounded_has_work: the inject queue or a ring whose owner is
	 * behind; our LIFO slot is ours to run */
	if
	:: inject_len > 0 -> last = 1
	:: else -> rings_behind(); last = bh; bh = 0
	fi
#else
	if
	:: lifo || inject_len > 0 -> last = 1
	:: else ->
		i = 0;
		do
#if defined(BUG_FOUND_MORE_NO_RINGS)
		:: true -> break        /* the inject queue and our slot only */
#elif defined(BUG_FOUND_MORE_NO_OWN_RING)
		:: i < NW && i == me -> i++     /* a steal's rest not counted */
		:: i < NW && i != me && ring[i] > 0 -> last = 1; break
		:: i < NW && i != me && ring[i] == 0 -> i++
#else
		:: i < NW && ring[i] > 0 -> last = 1; break
		:: i < NW && ring[i] == 0 -> i++
#endif
		:: i == NW -> break
		od;
		i = 0
	fi
#endif
}

inline runtime_local_wake()
{
	if
	:: num_searching != 0 -> skip
	:: else ->
		if
		:: num_parked == 0 -> skip
		:: else -> runtime_notify_parked()
		fi
	fi
}

/* ------------------------------------------------------- worker.c */

/*
 * worker_schedule_local(): a wake running on worker `me' (at most NLOCAL
 * in all; `true' = none here).  With transitioning_to_park: inject_push +
 * runtime_notify_parked.  Else the LIFO slot; an evicted occupant goes to
 * the ring, and should_notify_others (not searching, LIFO + ring > 1)
 * calls runtime_local_wake.
 */
inline worker_schedule_local()
{
#if NLOCAL > 0
	if
	:: d_step {
		local_left > 0 && USE_LIFO && !lifo ->
		local_left--; spawned++; lifo = 1       /* no prev: nothing to notify */
	   }
	:: d_step {
		local_left > 0 && USE_LIFO && lifo ->
		local_left--; spawned++; ring[me]++     /* push_ring(prev) */
	   };
#ifndef SPEC_EVICT
	   if                                       /* should_notify_others */
#if defined(BOUNDED)
	   /* wake_bounded_local_push: only if we are behind (a guess) */
	   :: !searching && lifo + ring[me] > 1 -> runtime_local_wake()
	   :: !searching && lifo + ring[me] > 1 -> skip
#elif defined(BACKLOG)
	   /* backlog: only if the tasks x our EWMA reach the threshold (a guess) */
	   :: !searching && lifo + ring[me] > 1 -> runtime_local_wake()
	   :: !searching && lifo + ring[me] > 1 -> skip
#else
	   :: !searching && lifo + ring[me] > 1 -> runtime_local_wake()
#endif
	   :: else
	   fi
#endif
	:: d_step {
		local_left > 0 && !USE_LIFO ->
		local_left--; spawned++; inject_len++   /* inject_push */
	   };
	   runtime_notify_parked()
	:: true
	fi
#else
	skip
#endif
}

proctype worker(byte me; bool parked)
{
	bool lifo;              /* LIFO slot: only its owner touches it */
	bool transitioning;     /* transitioning_to_park: owner only */
	bool searching, last;
	bool own;               /* the task came from our LIFO slot or ring */
	byte bits, v, old, i, start, hand;
#ifdef BOUNDED
	bool defer, draining, bh;       /* defer_global, draining; a scratch answer */
#endif

	if
	:: parked -> transitioning = 1; goto end_sleep  /* asleep from the start */
	:: else
	fi;
top:
#ifdef BOUNDED
	/*
	 * wake_bounded_tick_start: awake; defer_global = me > 0 and the lower
	 * workers keep up (a guess; false once one of them is overdue)
	 */
	awake[me] = 1;
	atomic {
		defer = (me > 0);
		i = 0;
		do
		:: i < me && overdue[i] -> defer = 0; break
		:: i < me && !overdue[i] -> i++
		:: else -> break
		od;
		i = 0;
		if
		:: true
		:: defer -> defer = 0
		fi
	};
	/* worker_tick's reap: while deferring, its wakes go to the inject queue */
	if
	:: searching || defer ->
		draining = defer;
		worker_schedule_local();
		draining = 0
	:: else
	fi;
#else
	/* worker_tick: timers and a non-blocking I/O reap, maybe as a searcher */
	if
	:: searching -> worker_schedule_local()
	:: else
	fi;
#endif
	/* find_work: LIFO slot, own ring */
	if
	:: lifo -> lifo = 0; d_step { executed++; own = 1 }; goto run_task
	:: d_step { !lifo && ring[me] > 0 -> ring[me]--; executed++; own = 1 }; goto run_task
	:: else
	fi;
	/* global_fetch (the model takes one task of the batch) */
	if
	:: d_step { inject_len > 0 && NO_DEFER -> inject_len--; executed++ }; goto run_task
	:: else
	fi;
	/* steal_work: idle_try_become_searcher refuses if 2 * n >= NW */
	if
	:: searching
#ifdef SPEC_TRY
	:: !searching && 2 * num_searching >= NW -> skip    /* load: refused */
	:: !searching && 2 * num_searching < NW ->          /* load: admitted */
		d_step {                                    /* fetch_add */
			num_searching++; GIVE_UNIT(me); searching = 1; assert(SEARCH_OK)
		}
#else
	/* the CAS loop linearizes at its successful CAS: one step */
	:: d_step { !searching && 2 * num_searching >= NW -> skip }
	:: d_step {
		!searching && 2 * num_searching < NW ->
		num_searching++; GIVE_UNIT(me); searching = 1; assert(SEARCH_OK)
	   }
#endif
	fi;
	if
	:: searching ->
		/* victims from a random start, each once: claim ceil(half) */
		start = 1;
		do
		:: start < NW - 1 -> start++
		:: break
		od;
		i = 0;
		do
		:: i < NW - 1 ->
			v = (me + 1 + (start + i) % (NW - 1)) % NW;
#ifdef BOUNDED
			/* wake_may_steal_from: a higher victim always, a lower one if behind */
			if
			:: v > me -> bh = 1
			:: else -> worker_behind(v)
			fi;
#endif
			if
			:: d_step {             /* steal_claim: CAS {s, r} -> {s, r + n} */
				MAY_STEAL && ring[v] > 0 && !stealing[v] ->
				hand = ring[v] - ring[v] / 2;
				ring[v] = ring[v] - hand;
				stealing[v] = 1
			   };
			   d_step {             /* copy, steal_release, own tail */
				ring[me] = ring[me] + hand - 1;
				executed++;
				stealing[v] = 0;
				hand = 0; v = 0; i = 0; start = 0
#ifdef BOUNDED
				; bh = 0
#endif
			   };
			   goto run_task
			:: else ->              /* empty, STEAL_FAIL_BUSY, or not allowed */
#ifdef BOUNDED
				bh = 0;
#endif
				i++
			fi
		:: else -> d_step { i = 0; v = 0; start = 0 }; break
		od
	:: else
	fi;
	/* global_fetch once more */
	if
	:: d_step { inject_len > 0 && NO_DEFER -> inject_len--; executed++ }; goto run_task
	:: else
	fi;
#ifdef JOIN_HELP
	/*
	 * A join's help tick (core/sched/help.c) found nothing, and the
	 * join's target completes: worker_help_leave leaves the searching
	 * state, and the worker is back in the joiner's poll, which may run
	 * on (as HANG: this worker is gone).  The last searcher to leave so
	 * looks at the queues as found_more does (BUG_HELP_LEAVE_NO_LOOK:
	 * it did not, before 2026-11-28).
	 */
	if
	:: d_step {
		searching && hang_left > helping ->
		helping++;      /* one of the N, counted hung once it is back */
		last = (num_searching == 1); DROP_UNIT(me); searching = 0
	   };
#ifndef BUG_HELP_LEAVE_NO_LOOK
		if
		:: last ->
			last = 0;
			found_more();
			if
			:: last -> last = 0; runtime_notify_parked()
			:: else
			fi
		:: else
		fi;
#endif
		last = 0;
		d_step { helping--; hang_left--; stuck = stuck + lifo; MARK_HUNG };
end_help:	false
	:: else
	fi;
#endif

	/* worker_park: transitioning_to_park, lifo_flush (the slot is empty) */
	transitioning = 1;
	assert(!lifo && ring[me] == 0);
#if defined(BOUNDED) && !defined(BUG_BOUNDED_LATE_ASLEEP)
	awake[me] = 0;          /* wake_park_begin (seq_cst), before our bit */
#endif
#ifdef WAKE_BEFORE_SLEEP
	worker_schedule_local();
#endif
	/* idle_set_parked */
#ifdef SPEC_COUNT_FIRST
	num_parked++;                                       /* fetch_add */
	d_step { parked_bits = parked_bits | BIT(me); pwin[me] = searching }
#else
	d_step {                                            /* fetch_or */
		parked_bits = parked_bits | BIT(me); pwin[me] = searching; np_owed++
	};
	d_step { num_parked++; np_owed-- };                 /* fetch_add */
#endif
	if
	:: d_step {                                         /* fetch_sub */
		searching ->
		last = (num_searching == 1);
		DROP_UNIT(me);
		pwin[me] = 0;
		searching = 0
	   }
	:: else
	fi;
#if defined(BOUNDED) && !defined(BUG_NO_FINAL_CHECK)
	/*
	 * wake_bounded_final_check: the inject queue (seq_cst load), unless
	 * this tick deferred and a lower worker is awake (seq_cst loads of
	 * awake_since); then the rings whose owner is behind
	 */
	if
	:: inject_len > 0 ->
		bh = 1;
#ifdef BUG_BOUNDED_DEFER_ASLEEP
		if
		:: defer -> bh = 0
		:: else
		fi;
#else
		if
		:: defer ->
			i = 0;
			do
			:: i < me && awake[i] -> bh = 0; break
			:: i < me && !awake[i] -> i++
			:: else -> break
			od;
			i = 0
		:: else
		fi;
#endif
		if
		:: bh -> bh = 0; goto found_work
		:: else
		fi
	:: else
	fi;
	rings_behind();
	if
	:: bh -> bh = 0; goto found_work
	:: else
	fi;
#elif !defined(BUG_NO_FINAL_CHECK)
	/* runtime_has_work: the inject queue, then every ring */
#ifdef SPEC_RECHECK
	if
	:: last ->
#endif
		last = 0;
		if
		:: inject_len > 0 -> goto found_work
		:: else
		fi;
		i = 0;
		do
		:: i < NW ->
			if
			:: ring[i] > 0 -> i = 0; goto found_work
			:: else -> i++
			fi
		:: else -> i = 0; break
		od
#ifdef SPEC_RECHECK
	:: else
	fi;
#endif
#endif
	goto sleep;

found_work:
#if RECHECK_NOTIFY
	/* core/, Tokio: wake a parked worker as a searcher (maybe us), then park */
	runtime_notify_parked();
#else
	/* finding 1: idle_unset_parked and run it ourselves */
	goto unpark_self;
#endif

sleep:
	last = 0;
#if defined(BOUNDED) && defined(BUG_BOUNDED_LATE_ASLEEP)
	awake[me] = 0;          /* the bug: after the final check */
#endif
	/* park_wait: CAS(UNPARKED -> PARKED), futex_wait(PARKED, 10 ms) */
	if
	:: d_step { futex[me] == UNPARKED -> futex[me] = PARKED };
		d_step {
			if
			:: futex[me] == PARKED -> sleeping[me] = 1; nsleep++
			:: else
			fi
		};
end_sleep:
		if
		:: !sleeping[me]                                /* woken */
		:: d_step {                                     /* 10 ms timeout */
			sleeping[me] && timeouts_left > 0 && TIMEOUT_OK ->
			sleeping[me] = 0; nsleep--;
			MARK_OVERDUE;
			if
			:: timeouts_left < 255 -> timeouts_left--
			:: else
			fi
		   }
#ifdef EARLY_TIMEOUT
		:: d_step {                                     /* one within the busy bound */
			sleeping[me] && timeouts_left > 0 && TIMEOUT_OK && early_left ->
			sleeping[me] = 0; nsleep--;
			early_left = 0;
			if
			:: timeouts_left < 255 -> timeouts_left--
			:: else
			fi
		   }
#endif
#if NLOCAL > 0
		:: d_step {                                     /* sleep_in_io: a completion */
			sleeping[me] && local_left > 0 ->
			sleeping[me] = 0; nsleep--;
			local_left--; spawned++;
			if
			:: USE_LIFO -> lifo = 1
			:: else -> inject_len++                 /* inject_push */
			fi
		   };
		   if
		   :: !USE_LIFO -> runtime_notify_parked()
		   :: else
		   fi
#endif
		fi;
		futex[me] = UNPARKED                            /* exchange */
	:: d_step { futex[me] != UNPARKED -> futex[me] = UNPARKED }  /* NOTIFIED */
	fi;

unpark_self:
	/* idle_unset_parked: fetch_and; bit already clear: claimed, a searcher */
	atomic {
		bits = parked_bits;
		parked_bits = bits & ~BIT(me);
		searching = !(bits & BIT(me));
		bits = 0
	};
	if
	:: !searching ->
		d_step {                                        /* fetch_sub */
#ifdef CHECK_NUM_PARKED
			assert(num_parked > 0);
#endif
			num_parked--
		}
	:: else
	fi;
	transitioning = 0;
#ifdef BOUNDED
	awake[me] = 0;          /* wake_park_end (relaxed) */
#endif
	goto top;

run_task:
	/*
	 * end_searching(w, source, true): the last searcher notifies only when
	 * found_more sees more work after the decrement: our slot, any ring
	 * (a steal left the rest of its half in ours), the inject queue
	 * (SPEC_END_ANY: always, as first designed and core/ before found_more;
	 * FOUND_MORE_OWN: the loads only for a task of our own)
	 */
	assert(!transitioning);
	if
	:: d_step {
		searching ->
		last = (num_searching == 1);
		DROP_UNIT(me);
		searching = 0
	   };
	   if
	   :: last ->
		last = 0;
#ifndef SPEC_END_ANY
		if
#ifdef BUG_NO_FOUND_MORE
		:: own -> skip          /* a task of our own: never notify */
		:: else -> found_more()
#elif defined(FOUND_MORE_OWN)
		:: own -> found_more()
		:: else -> last = 1
#else
		:: true -> found_more()
#endif
		fi;
		if
		:: last -> last = 0; runtime_notify_parked()
		:: else
		fi
#else
		runtime_notify_parked()
#endif
	   :: else
	   fi
	:: else
	fi;
	own = 0;
	/* the task may wake others: those wakes run on this worker */
	worker_schedule_local();
#if NLOCAL > 1
	worker_schedule_local();        /* a second one evicts the first */
#endif
#if HANG
	/* the task may run "forever" (a long poll): this worker is gone */
	if
	:: d_step { hang_left > HELPING -> hang_left--; stuck = stuck + lifo; MARK_HUNG };
end_hung:	false
	:: true
	fi;
#endif
	goto top
}

/* ----------------------------------------------------- outside world */

proctype producer()
{
	byte bits, v, old;

	do
	:: d_step { ext_left > 0 -> ext_left--; spawned++; inject_len++ };  /* inject_push */
	   runtime_notify_parked()
	:: else -> break
	od;
	prod_done++
}

init
{
	byte w;

	atomic {
		ring[0] = INIT_RING;
		spawned = INIT_RING;
		w = 0;
		do
		:: w < NW - START_PARKED -> run worker(w, 0); w++
		:: w >= NW - START_PARKED && w < NW ->
			parked_bits = parked_bits | BIT(w);
			num_parked++;
			futex[w] = PARKED;
			sleeping[w] = 1;
			nsleep++;
			run worker(w, 1);
			w++
		:: else -> w = 0; break
		od;
		do
		:: w < NPROD -> run producer(); w++
		:: else -> w = 0; break
		od
	}
}

#ifndef LIVENESS
/*
 * No lost wakeup: as soon as every worker that is not hung sleeps and the
 * producer is done, every task created has been taken by a worker and the
 * idle state is at rest.  A timeout or an I/O completion might still come:
 * the check does not wait for it.
 */
active proctype checker()
{
	atomic {
		prod_done == NPROD && nsleep + NHUNG == NW && TIMEOUTS_DONE ->
		assert(spawned == executed + STUCK);
		assert(inject_len == 0);
		assert(HANG || (num_searching == 0 && reserved == 0 && owed == 0));
		assert(HANG || (num_parked == NW && parked_bits == ALL))
	}
}
#endif

#ifdef LIVENESS
/* every task created is eventually taken by a worker (weak fairness) */
ltl all_run { <> [] (spawned == executed) }
#endif
