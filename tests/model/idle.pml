/*
 * idle.pml -- Promela model of blitz's idle protocol: searching workers,
 * "the last searcher must notify", the parked bitmap, the park sequence
 * with transitioning_to_park, and the futex park state.  Checked by spin;
 * tests/model/run runs it in several configurations, README.md explains.
 *
 * C code it follows (names as in core/):
 *   core/idle.c    num_searching, num_parked, the parked bitmap;
 *                  idle_try_become_searcher, idle_transition_from_searching,
 *                  idle_notify_parked
 *   core/worker.c  the run loop: LIFO slot, own ring, inject queue, steal
 *                  (searchers only), final inject check, park sequence
 *   core/park.c    futex word UNPARKED=0 / PARKED=1 / NOTIFIED=2
 *   core/inject.c  the injection queue (mutex + list + atomic len)
 *   core/queue.c   the rings; here a ring is a task count and a steal
 *                  takes ceil(half) in two steps (claim, copy + release);
 *                  ring.pml checks the ring itself
 *
 * Tasks are counted, not named (spawned, executed).  Each C atomic
 * operation (load, store, fetch_add, fetch_or, fetch_and, CAS, swap,
 * futex_wait's check-and-sleep) is one Promela step, and a worker's own
 * LIFO slot and transitioning_to_park flag are its local variables (only
 * its own thread touches them).  Sequential consistency is assumed.
 *
 * Who enqueues:
 *   producer   code outside any worker: inject_push + idle_notify_parked
 *   a worker   a wake that runs on worker W (a task W runs wakes another,
 *              or a timer / I/O poll in W's park sequence): into W's LIFO
 *              slot, evicting the old task to W's ring -- unless W's
 *              transitioning_to_park is set: then inject + notify.
 *
 * Knobs (spin -DNAME=VALUE -a idle.pml); defaults are the main check:
 *   NW=3              workers (at most 8: the bitmap is a byte)
 *   START_PARKED=2    workers NW-START_PARKED..NW-1 start asleep in
 *                     futex_wait (an idle runtime); the others start at
 *                     the top of the run loop
 *   INIT_RING=2       tasks already in worker 0's ring at the start (a
 *                     backlog that searchers can steal)
 *   NEXT=1            tasks the outside producer enqueues
 *   NLOCAL=1          wakes that run on worker threads
 *   MAX_TIMEOUTS=0    10 ms park timeouts that may fire in one run: 0 for
 *                     the lost-wakeup check (it must not rely on them),
 *                     1 to let one timeout perturb the protocol first,
 *                     255 for unlimited (safety checks only)
 *   RECHECK_ALWAYS=0  1: every parking worker re-checks the queues, not
 *                     only the last searcher
 *   TRY_CAS=0         idle_try_become_searcher is load, check, fetch_add
 *                     (seed 000); 1: a CAS loop (one atomic step)
 *   SEARCH_MAX=255    assert num_searching (+ claims in flight) <= this
 *   HANG=0            1: one task may run forever (a long poll): its worker
 *                     never comes back.  The no-lost-wakeup check then
 *                     demands that the other workers run every queued task
 *                     (except one sitting in the hung worker's LIFO slot):
 *                     no task waits behind a busy worker while others sleep
 *   RECHECK_NOTIFY=0  1: when the last searcher's re-check finds work, it
 *                     calls idle_notify_parked and parks (Tokio) instead of
 *                     clearing its own bit and running the work itself
 *   EVICT_NOTIFY=0    1: evicting the LIFO slot's old task to the ring
 *                     calls idle_notify_parked (Tokio)
 *   LIVENESS          drop the quiescence checker, add the LTL formula
 *                     all_run (check with pan -a -f: weak fairness)
 *
 * Bug variants and checks that must fail:
 *   BUG_IGNORE_TRANSITIONING  a wake on W goes to W's LIFO slot even while
 *                             W is parking
 *   BUG_NO_FINAL_CHECK        the last searcher parks without re-checking
 *   BUG_RESERVE_FIRST         idle_notify_parked counts the new searcher
 *                             (num_searching++) before it claims a bit, and
 *                             takes it back if nobody is parked
 *   BUG_BIT_BEFORE_COUNT      the parking worker sets its bit before
 *                             num_parked++ (a notifier's num_parked-- can
 *                             come first: num_parked underflows)
 *   CHECK_NO_UNDERFLOW        asserts num_searching never drops below the
 *                             true count -- false for the protocol as
 *                             specified (see README.md)
 *   HANG=1 (alone), HANG=1 + RECHECK_NOTIFY=1 + NLOCAL=2: the protocol as
 *                             specified lets a queued task wait behind a
 *                             busy worker (README.md, findings 1 and 2)
 *
 * Properties:
 *   - no lost wakeup: once nothing in the system can move (every worker
 *     asleep in futex_wait, the producer done, no timeout left), every task
 *     created has been taken by a worker, and the idle state is back to
 *     "all parked, nobody searching" (the checker process, which uses
 *     Promela's timeout); with LIVENESS: <>[] (spawned == executed) under
 *     weak fairness, which also excludes livelocks;
 *   - a worker only gives back a searcher unit it holds, and num_searching
 *     only lags the true count while a notifier is between its claim and
 *     its num_searching++ (ghost units[], owed);
 *   - a worker is counted as a searcher twice only inside its parking
 *     window (parked bit set, own searcher unit not yet dropped);
 *   - num_parked never underflows;
 *   - a worker never runs a task with transitioning_to_park set.
 */

#ifndef NW
#define NW 3
#endif
#ifndef NEXT
#define NEXT 1
#endif
#ifndef NLOCAL
#define NLOCAL 1
#endif
#ifndef MAX_TIMEOUTS
#define MAX_TIMEOUTS 0
#endif
#ifndef RECHECK_ALWAYS
#define RECHECK_ALWAYS 0
#endif
#ifndef TRY_CAS
#define TRY_CAS 0
#endif
#ifdef BUG_BIT_BEFORE_COUNT
#define COUNT_FIRST 0
#else
#define COUNT_FIRST 1
#endif
#ifdef CHECK_NO_UNDERFLOW
#define SLACK 0                 /* num_searching itself must stay > 0 */
#else
#define SLACK (owed > 0)        /* it may lag while a notifier is in between */
#endif
#ifndef INIT_RING
#define INIT_RING 2
#endif
#ifndef HANG
#define HANG 0
#endif
#ifndef RECHECK_NOTIFY
#define RECHECK_NOTIFY 0
#endif
#ifndef EVICT_NOTIFY
#define EVICT_NOTIFY 0
#endif
#ifndef START_PARKED
#define START_PARKED 2
#endif
#ifndef SEARCH_MAX
#define SEARCH_MAX 255
#endif

#define UNPARKED 0
#define PARKED   1
#define NOTIFIED 2
#define BIT(w)   (1 << (w))
#define ALL      (BIT(NW) - 1)

#ifdef BUG_IGNORE_TRANSITIONING
#define USE_LIFO 1
#else
#define USE_LIFO (!transitioning)
#endif

/* shared state of the runtime */
byte inject_len;             /* inject.c: atomic len of the injection queue */
byte ring[NW];               /* queue.c: tasks in each worker's ring */
bool stealing[NW];           /* a steal from ring[w] is between claim and release */
byte futex[NW];              /* park.c: UNPARKED / PARKED / NOTIFIED */
bool sleeping[NW];           /* blocked in futex_wait (kernel side) */
byte num_searching;          /* idle.c */
byte num_parked;             /* idle.c */
byte parked_bits;            /* idle.c: bit w set = worker w parked */

/* ghost state */
byte units[NW];              /* searcher units held by (or for) worker w */
byte owed;                   /* notifiers between claim and num_searching++ */
bool pwin[NW];               /* w set its parked bit while still a searcher
                                and has not dropped that unit yet */
byte spawned;                /* tasks created */
byte executed;               /* tasks taken by a worker to run */
byte local_left = NLOCAL;
byte ext_left = NEXT;
byte timeouts_left = MAX_TIMEOUTS;
#if HANG
byte hang_left = 1;
bool stuck;                  /* the hung worker's LIFO slot holds a task */
#define STUCK stuck
#else
#define STUCK 0
#endif

/*
 * Searchers, counting the ones a notifier has claimed but not yet added
 * to num_searching.  As a wrapping integer num_searching + owed equals the
 * number of searcher units handed out; num_searching alone can be one
 * below that, and even wrap below zero, while a notifier is in between.
 */
#define NSEARCH    ((num_searching + owed) & 255)
#define SEARCH_OK  (NSEARCH <= SEARCH_MAX)

/* ------------------------------------------------------------- idle.c */

/*
 * idle_notify_parked(): after a task was enqueued, and by the last
 * searcher when it finds work.  If nobody searches, claim one parked
 * worker (lowest set bit, CAS on the bitmap), num_parked--,
 * num_searching++, unpark it.  Uses the caller's locals bits, v, claimed.
 */
inline idle_notify_parked()
{
	if
	:: num_searching != 0 -> skip                   /* load: a searcher exists */
	:: else ->
#ifdef BUG_RESERVE_FIRST
		/* "fix" the underflow by counting the searcher before the claim */
		d_step { num_searching++; assert(SEARCH_OK) };
#endif
		do
		:: d_step {                             /* load(parked); ctz */
			bits = parked_bits;
			v = 0;
			do
			:: v < NW && !(bits & BIT(v)) -> v++
			:: else -> break
			od
		   };
		   if
		   :: bits == 0 -> break                /* nobody parked */
		   :: d_step {                          /* CAS(parked, bits, bits & ~BIT(v)) */
				bits != 0 && parked_bits == bits ->
				parked_bits = bits & ~BIT(v);
				units[v]++;             /* v searches from now on */
				/* counted twice only inside its parking window */
				assert(units[v] == 1 || (units[v] == 2 && pwin[v]));
#ifndef BUG_RESERVE_FIRST
				owed++;                 /* ... num_searching++ follows */
#endif
				assert(SEARCH_OK);
				claimed = 1;
				bits = 0
		      };
		      break
		   :: d_step { bits != 0 && parked_bits != bits -> bits = 0 }  /* CAS failed */
		   fi
		od;
		if
		:: d_step { claimed -> assert(num_parked > 0); num_parked-- };
#ifndef BUG_RESERVE_FIRST
			d_step { num_searching++; owed-- };
#endif
			/* park.c unpark(v): swap(futex, NOTIFIED); futex_wake if it was PARKED */
			if
			:: d_step { futex[v] == PARKED -> futex[v] = NOTIFIED; claimed = 0 };
			   d_step { sleeping[v] = 0; v = 0 }    /* futex_wake(1) */
			:: d_step { futex[v] != PARKED -> futex[v] = NOTIFIED; claimed = 0; v = 0 }
			fi
		:: d_step {
			!claimed -> bits = 0; v = 0
#ifdef BUG_RESERVE_FIRST
			/* nobody to wake: give the reserved unit back */
			; assert(num_searching > 0); num_searching--
#endif
		   }
		fi
	fi
}

/*
 * A wake that runs on worker `me' (a task it runs wakes another, or a
 * timer / I/O poll in its park sequence): into the LIFO slot, evicting
 * the old task to the ring -- unless `me' is parking, then into the
 * inject queue with a notification.  At most NLOCAL of these happen.
 */
inline maybe_wake_here()
{
#if NLOCAL > 0
	if
	:: d_step {
		local_left > 0 && USE_LIFO && !lifo ->
		local_left--;
		spawned++;
		lifo = 1
	   }
	:: d_step {
		local_left > 0 && USE_LIFO && lifo ->
		local_left--;
		spawned++;
		ring[me]++                              /* evict to the ring */
	   }
#if EVICT_NOTIFY
	   ; idle_notify_parked()                   /* stealable work appeared */
#endif
	:: d_step {
		local_left > 0 && !USE_LIFO ->
		local_left--;
		spawned++;
		inject_len++                            /* inject_push */
	   };
	   idle_notify_parked()
	:: true                                         /* no wake here */
	fi
#else
	skip
#endif
}

/* --------------------------------------------------------- worker.c */

proctype worker(byte me; bool parked)
{
	bool lifo;              /* LIFO slot: only its owner touches it */
	bool transitioning;     /* transitioning_to_park: read by its owner's wakes */
	bool searching, last, claimed;
	byte bits, v, i, hand;

	if
	:: parked -> transitioning = 1; goto end_sleep   /* asleep from the start */
	:: else
	fi;
top:
	/* 1, 2: LIFO slot, else queue_pop of the own ring */
	if
	:: lifo -> lifo = 0; d_step { executed++ }; goto run_task
	:: d_step { !lifo && ring[me] > 0 -> ring[me]--; executed++ }; goto run_task
	:: else
	fi;
	/* 3: inject queue */
	if
	:: d_step { inject_len > 0 -> inject_len--; executed++ }; goto run_task
	:: else
	fi;
	/* 4: idle_try_become_searcher: refuse if 2 * num_searching >= NW */
	if
	:: searching
#if TRY_CAS
	/* a CAS loop linearizes at its successful CAS: one atomic step */
	:: d_step { !searching && 2 * num_searching >= NW -> skip }
	:: d_step {
		!searching && 2 * num_searching < NW ->
		num_searching++; units[me]++; searching = 1; assert(SEARCH_OK)
	   }
#else
	:: !searching && 2 * num_searching >= NW -> skip   /* load: refused */
	:: !searching && 2 * num_searching < NW ->         /* load: admitted */
		d_step {                                    /* fetch_add */
			num_searching++; units[me]++; searching = 1; assert(SEARCH_OK)
		}
#endif
	fi;
	/* 5: searchers steal half of another worker's ring */
	if
	:: searching ->
		i = 1;
		do
		:: i < NW ->
			if
			:: d_step {             /* phase 1: claim ceil(half) */
				ring[(me + i) % NW] > 0 && !stealing[(me + i) % NW] ->
				v = (me + i) % NW;
				hand = ring[v] - ring[v] / 2;
				ring[v] = ring[v] - hand;
				stealing[v] = 1;
				i = 0
			   };
			   /* phases 2, 3: copy into own ring (run one), release */
			   d_step {
				ring[me] = ring[me] + hand - 1;
				hand = 0;
				executed++;
				stealing[v] = 0;
				v = 0
			   };
			   goto run_task
			:: else -> i++
			fi
		:: else -> i = 0; break
		od
	:: else
	fi;
	/* 6: final inject check */
	if
	:: d_step { inject_len > 0 -> inject_len--; executed++ }; goto run_task
	:: else
	fi;

	/* 7: park sequence: set transitioning_to_park, flush the LIFO slot */
	transitioning = 1;
	if
	:: lifo -> d_step { lifo = 0; ring[me]++ }
	:: else
	fi;
	maybe_wake_here();
#if COUNT_FIRST
	num_parked++;                                       /* fetch_add */
	d_step { parked_bits = parked_bits | BIT(me); pwin[me] = searching }  /* fetch_or */
#else
	d_step { parked_bits = parked_bits | BIT(me); pwin[me] = searching }  /* fetch_or */
	num_parked++;                                       /* fetch_add */
#endif
	if
	:: d_step {
		searching ->                                /* fetch_sub */
		assert(units[me] > 0 && (num_searching > 0 || SLACK));
		last = (num_searching == 1);
		num_searching--;
		units[me]--;
		pwin[me] = 0;
		searching = 0
	   }
	:: else
	fi;
#ifndef BUG_NO_FINAL_CHECK
	if
	:: last || RECHECK_ALWAYS ->
		/* re-check the inject queue and every ring before sleeping */
		last = 0;
		if
		:: inject_len > 0 -> goto found_work
		:: else
		fi;
		do
		:: i < NW ->
			if
			:: ring[i] > 0 -> i = 0; goto found_work
			:: else -> i++
			fi
		:: else -> i = 0; break
		od
	:: else
	fi;
#endif
	goto sleep;

found_work:
#if RECHECK_NOTIFY
	/*
	 * Tokio's way: wake a parked worker as a searcher (it may be this
	 * one: its bit is set), then park; a self-notification makes park()
	 * return at once.
	 */
	idle_notify_parked();
#else
	/* as specified: un-park ourselves (not as a searcher) and run it */
	goto unpark_self;
#endif

sleep:
	last = 0;
	maybe_wake_here();
	/* park.c park(): CAS(UNPARKED -> PARKED), futex_wait(PARKED, 10 ms) */
	if
	:: d_step { futex[me] == UNPARKED -> futex[me] = PARKED };
		d_step {                        /* futex_wait: sleep only if PARKED */
			if
			:: futex[me] == PARKED -> sleeping[me] = 1
			:: else
			fi
		};
end_sleep:
		if
		:: d_step { !sleeping[me] -> futex[me] = UNPARKED }   /* woken */
		:: d_step {                                           /* 10 ms timeout */
			sleeping[me] && timeouts_left > 0 ->
			sleeping[me] = 0;
			if
			:: timeouts_left < 255 -> timeouts_left--
			:: else
			fi
		   };
		   futex[me] = UNPARKED                               /* store */
		fi
	:: d_step { futex[me] != UNPARKED -> futex[me] = UNPARKED } /* NOTIFIED */
	fi;

unpark_self:
	/*
	 * Woken, timed out, or found work in the re-check: clear our bit if
	 * it is still set (fetch_and).  Already clear: a notifier claimed us
	 * and made us a searcher.
	 */
	atomic {
		bits = parked_bits;
		parked_bits = bits & ~BIT(me);
		searching = !(bits & BIT(me));
		bits = 0;
		transitioning = 0
	};
	if
	:: d_step { !searching -> assert(num_parked > 0); num_parked-- }
	:: searching
	fi;
	goto top;

run_task:
	/* idle_transition_from_searching: the last searcher notifies */
	if
	:: d_step {
		searching ->
		assert(units[me] > 0 && (num_searching > 0 || SLACK));
		assert(!transitioning);
		last = (num_searching == 1);
		num_searching--;
		units[me]--;
		searching = 0
	   };
	   if
	   :: last -> last = 0; idle_notify_parked()
	   :: else
	   fi
	:: else -> assert(!transitioning)
	fi;
	/* the task may wake other tasks: those wakes run on this worker */
	maybe_wake_here();
#if NLOCAL > 1
	maybe_wake_here();      /* a second one evicts the first to the ring */
#endif
#if HANG
	/* the task may run "forever" (a long poll): this worker is gone */
	if
	:: d_step { hang_left > 0 -> hang_left--; stuck = lifo };
end_hung:	false
	:: true
	fi;
#endif
	goto top
}

/* ------------------------------------------------------- outside world */

proctype producer()
{
	bool claimed;
	byte bits, v;

	do
	:: d_step { ext_left > 0 -> ext_left--; spawned++; inject_len++ };  /* inject_push */
	   idle_notify_parked()
	:: else -> break
	od
}

init
{
	byte w;

	/* workers NW - START_PARKED .. NW - 1 start asleep in futex_wait */
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
			run worker(w, 1);
			w++
		:: else -> w = 0; break
		od;
		run producer()
	}
}

/*
 * No lost wakeup: once nothing in the system can move any more (every
 * worker asleep in futex_wait, the producer done, no timeout left to
 * fire), every task that was created has been taken by a worker, and the
 * idle state is consistent.
 */
#ifndef LIVENESS
active proctype checker()
{
	timeout ->
	d_step {
		assert(spawned == executed + STUCK);
		assert(inject_len == 0);
		assert(HANG || (num_searching == 0 && owed == 0));
		assert(HANG || (num_parked == NW && parked_bits == ALL))
	}
}
#endif

#ifdef LIVENESS
/* every task created is eventually taken by a worker (weak fairness) */
ltl all_run { <> [] (spawned == executed) }
#endif
