/*
 * io_watch.pml -- Promela model of who submits and who watches an I/O
 * operation that a thread outside the runtime submits (core/io/io.c,
 * submitted_outside; core/sched/runtime.c, runtime_unpark_for_io;
 * backends/io_uring.c, "The pending list"; docs/io.md, "Who waits for
 * completions").  Checked by spin; tests/model/run runs it, README.md maps
 * it onto the C code.
 *
 * The submitter does not hand its operation to the kernel (io_uring would
 * cancel it when the thread exits): it leaves it on the pending list, and
 * a worker submits the list at the end of a tick that ran tasks (maybe) or
 * when it parks, after its parked bit (worker_park's io_driver_flush).
 *
 * A worker's completion is seen by a worker only if one is awake (its tick
 * reaps) or sleeps in the driver; a worker decides where to sleep after
 * setting its parked bit, by the count of operations in flight: none,
 * the futex, where only an unpark ends the sleep.  There are no park
 * timeouts here: a completion that nobody watches is lost for good.
 *
 * Processes:
 *   worker(w)    NW of them: a tick (reaps a completion, if any), maybe a
 *                search (idle_try_become_searcher: refused when
 *                2 * num_searching >= NW), the park (idle_set_parked: bit,
 *                num_parked, the searcher unit dropped), where to sleep
 *                (sleep_in_io's in_flight test), the sleep (the futex
 *                word's check-and-sleep), the wake (idle_unset_parked:
 *                a claim made it a searcher, an unpark did not)
 *   submitter    NSUB outside threads, one operation each: in_flight++,
 *                onto the pending list, then the watch (below)
 *   kernel       completes each submitted operation, at any time
 *   reserver     with NOTIFY: a producer's notify that reserves the
 *                searcher slot (CAS num_searching 0 -> 1) and, finding no
 *                bit, gives it back (idle_claim_parked; its task was taken
 *                meanwhile, so the last one to give back finds nothing)
 *
 * The watch (knobs; the default models core/):
 *   (default)    runtime_unpark_for_io: load the parked bits; a bit set ->
 *                unpark that worker (futex NOTIFIED), claiming nothing
 *   NOTIFY       runtime_notify_parked, the first version (36c8c5e):
 *                return if num_searching != 0, else claim a bit (CAS
 *                num_searching 0 -> 1, clear the lowest bit, the woken
 *                worker searches) or give the slot back
 *   BUG_NO_WATCH nothing (before 36c8c5e): the completion waited for a
 *                park timeout
 * Who submits (knobs; the default models core/):
 *   (default)    a worker: at a tick (maybe) and at every park
 *   OUTSIDE_FLUSH the submitter itself, at once (before the pending
 *                list: what 36c8c5e and efd195b were checked with)
 *   BUG_NO_PARK_FLUSH a worker, at a tick only: a worker that an unpark
 *                woke runs no task, so no tick submits
 *
 * Property: no lost completion: when no process can move, every
 * submitted operation's completion was reaped (a pan "timeout" state
 * with one unreaped fails the checker's assertion).  Sequential
 * consistency is assumed: the C code's seq_cst fence and loads (README.md).
 */

#ifndef NW
#define NW 2
#endif
#ifndef NSUB
#define NSUB 1
#endif

#define UNPARKED 0
#define PARKED   1
#define NOTIFIED 2
#define BIT(w)   (1 << (w))

byte in_flight;			/* driver.h: operations submitted, not reaped */
byte pending;			/* io_uring.c: on the pending list */
byte submitted;			/* ghost: in the kernel, not completed */
byte completed;			/* ghost: completions the kernel posted, not reaped */
byte reaped;			/* ghost */
byte num_searching;		/* idle.c */
byte parked_bits;		/* idle.c: parked[0] */
byte futex[NW];			/* park.c */
bool in_io[NW];			/* asleep in the driver (sleep_in_io, or io_uring's
				   own ring with the shared ring watched) */
byte subs_done;

/* a tick's reap, or the driver waking a sleeper in it: one completion */
inline reap_one()
{
	atomic {
		completed > 0 ->
		completed--; in_flight--; reaped++
	}
}

/* io_driver_flush: the pending list into the kernel */
inline flush()
{
	d_step { submitted = submitted + pending; pending = 0 }
}

/* lowest set bit of b into v (NW if none) */
inline lowest(b)
{
	v = 0;
	do
	:: v < NW && !(b & BIT(v)) -> v++
	:: else -> break
	od
}

proctype worker(byte me)
{
	byte v;
	bool searching = 0, io;

tick:
	skip;
	/* a tick: reap what has completed (the try-lock, modelled as won) */
	do
	:: reap_one()		/* its guard: a completion is there */
	:: else -> break
	od;
	/* the tick's end: a flush if it ran tasks (here: maybe) */
	if
	:: flush()
	:: skip
	fi;
	/* idle_try_become_searcher: one CAS */
	d_step {
		if
		:: !searching && 2 * num_searching < NW -> num_searching++; searching = 1
		:: else -> skip
		fi
	}
	/* nothing found: park.  idle_set_parked: the bit, then the unit back */
	parked_bits = parked_bits | BIT(me);
	if
	:: searching -> num_searching--; searching = 0
	:: else -> skip
	fi;
#ifndef BUG_NO_PARK_FLUSH
	/* worker_park's flush: the list's flag, seq_cst after the bit */
	flush();
#endif
	/* sleep_in_io: where to sleep, by the count (seq_cst after the bit) */
	io = (in_flight > 0);
	/* the futex word: sleep unless notified (one atomic step) */
	if
	:: d_step { futex[me] == NOTIFIED -> futex[me] = UNPARKED }
	:: d_step { futex[me] == UNPARKED -> futex[me] = PARKED; in_io[me] = io }
		/* asleep: an unpark ends it; in the driver, a completion too */
end_asleep:
		if
		:: d_step { futex[me] == NOTIFIED -> futex[me] = UNPARKED; in_io[me] = 0 }
		:: d_step {	/* the driver's wait returns with a completion */
			in_io[me] && completed > 0 ->
			completed--; in_flight--; reaped++; in_io[me] = 0; futex[me] = UNPARKED
		   }
		fi
	fi;
	skip;
	/* idle_unset_parked: our bit still set -> we take it back; else a
	   claim cleared it and made us the searcher */
	d_step {
		if
		:: parked_bits & BIT(me) -> parked_bits = parked_bits & ~BIT(me)
		:: else -> searching = 1
		fi
	}
	goto tick
}

/*
 * idle_claim_parked's three steps, for a notifier that reserved the slot:
 * the lowest bit off (the worker wakes as the searcher), or none, then the
 * slot given back.
 */
inline claim_or_give_back()
{
	d_step {
		lowest(parked_bits);
		if
		:: v < NW -> parked_bits = parked_bits & ~BIT(v); futex[v] = NOTIFIED
		:: else -> skip
		fi
	}
	if
	:: v == NW -> num_searching--
	:: else -> skip
	fi
}

proctype submitter()
{
	byte v;

	in_flight++;			/* io_submit_op */
#ifdef OUTSIDE_FLUSH
	submitted++;			/* and its own flush */
#else
	pending++;			/* uring_submit: the list and its flag */
#endif
#if defined(BUG_NO_WATCH)
	skip;
#elif defined(NOTIFY)
	/* runtime_notify_parked (fence, then): */
	if
	:: num_searching != 0 -> skip	/* a searcher will look */
	:: else ->
		if
		:: d_step { num_searching == 0 -> num_searching = 1 }
			claim_or_give_back()
		:: else -> skip			/* the CAS failed: someone searches */
		fi
	fi;
#else
	/* runtime_unpark_for_io (fence, then): the lowest bit, unclaimed */
	d_step {
		lowest(parked_bits);
		if
		:: v < NW -> futex[v] = NOTIFIED
		:: else -> skip
		fi
	}
#endif
	subs_done++
}

/* the kernel posts a submitted operation's completion */
proctype kernel()
{
	byte posted = 0;

end_kernel:
	do
	:: posted == NSUB -> break
	:: atomic { submitted > 0 -> submitted--; completed++; posted++ }
	od
}

#ifdef NOTIFY
/* a producer's notify whose task was taken meanwhile: reserve, no bit, give back */
proctype reserver()
{
	byte v;

	if
	:: d_step { num_searching == 0 -> num_searching = 1 }
		claim_or_give_back()
	:: else -> skip
	fi
}
#endif

/* nothing can move: every completion posted was reaped */
proctype checker()
{
	timeout ->
	assert(subs_done < NSUB || reaped == NSUB)
}

init
{
	byte i;

	atomic {
		for (i : 0 .. NW - 1) {
			run worker(i)
		}
		for (i : 1 .. NSUB) {
			run submitter()
		}
		run kernel();
#ifdef NOTIFY
		run reserver();
#endif
		run checker()
	}
}
