/* SPDX-License-Identifier: MIT */
/*
 * blitz/time.h - the monotonic clock, sleeps, timeouts and intervals.
 *
 * Timers live in the runtime's hierarchical timer wheel (core/time/,
 * docs/time.md): 1 ms resolution, driven by worker 0.  A timer never fires
 * before its deadline; it fires at the first wheel advance at or after the
 * deadline rounded up to the next millisecond, so typically less than 1 ms
 * plus a wake-up late.
 *
 * Nothing here allocates: a sleep, a timeout and an interval are values the
 * caller places in its task's state struct, and each holds its wheel entry.
 * Rules, as for any awaitable in a state struct:
 *  - poll it only from the task that owns the state;
 *  - if the task can end (or be cancelled) while a sleep is pending, its
 *    drop function calls blitz_sleep_cancel() (or blitz_timeout_cancel(),
 *    blitz_interval_cancel()): a registered entry holds a reference on the
 *    task and points into its state.
 *
 *	struct napper { struct blitz_co co; struct blitz_sleep nap; };
 *
 *	static enum blitz_poll napper_poll(void *arg, struct blitz_cx *cx)
 *	{
 *		struct napper *s = arg;
 *
 *		BLITZ_CO_BEGIN(&s->co);
 *		blitz_sleep_init(&s->nap, 5 * BLITZ_NSEC_PER_MSEC);
 *		BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
 *		BLITZ_CO_END(&s->co);
 *	}
 *	static void napper_drop(void *arg)
 *	{
 *		blitz_sleep_cancel(&((struct napper *)arg)->nap);
 *	}
 */
#ifndef BLITZ_TIME_H
#define BLITZ_TIME_H

#include <stdbool.h>
#include <stdint.h>
#include <blitz/task.h>

#define BLITZ_NSEC_PER_USEC	1000ull
#define BLITZ_NSEC_PER_MSEC	1000000ull
#define BLITZ_NSEC_PER_SEC	1000000000ull

/** blitz_now_ns - CLOCK_MONOTONIC in nanoseconds: the clock of every deadline. */
uint64_t blitz_now_ns(void);

/*
 * A timer wheel entry (intrusive).  The fields are private to the runtime
 * (core/time/timer.h documents them); the struct is public only so that it can
 * be embedded.  56 bytes.
 */
struct blitz_timer_entry {
	uint64_t deadline_ns;			/* monotonic, as asked */
	uint64_t when;				/* deadline in wheel ticks (ms), rounded up */
	struct blitz_timer_entry *next;		/* list links (an hlist) */
	struct blitz_timer_entry **pprev;
	union {
		struct blitz_waker waker;	/* kind WAKER: woken (consumed) on fire */
		struct {
			void (*fn)(void *arg);
			void *arg;
		} cb;				/* kind CALLBACK: fn(arg) on fire */
	} u;
	uint32_t state;				/* accessed atomically: core/time/timer.h */
	uint8_t kind;
	uint8_t flags;
	uint8_t level;				/* where it is filed, while registered */
	uint8_t slot;
};

/* ---------------------------------------------------------------------- */
/* Sleep                                                                   */

struct blitz_sleep {
	struct blitz_timer_entry entry;
	struct blitz_runtime *rt;		/* the wheel it was registered in */
};

/**
 * blitz_sleep_init - a sleep of @duration_ns from now (the deadline is
 * fixed here, not at the first poll).  Only on a sleep that is not
 * registered: a fresh one, or one that completed or was cancelled.
 * 0 (or a deadline in the past): ready on the first poll; a deadline past
 * the clock's range is UINT64_MAX, which never comes.
 */
void blitz_sleep_init(struct blitz_sleep *s, uint64_t duration_ns);

/** blitz_sleep_until_init - a sleep until the monotonic time @deadline_ns. */
void blitz_sleep_until_init(struct blitz_sleep *s, uint64_t deadline_ns);

/**
 * blitz_sleep_poll - await the deadline.
 * Return: BLITZ_READY once blitz_now_ns() >= the deadline; else
 * BLITZ_PENDING, with the task's waker registered in the runtime's wheel
 * (on the first pending poll; later polls keep that registration).
 */
enum blitz_poll blitz_sleep_poll(struct blitz_sleep *s, struct blitz_cx *cx);

/**
 * blitz_sleep_cancel - take the sleep out of the wheel if it is there and
 * release its waker.  Safe on a sleep that never registered, already fired
 * or was cancelled.  Afterwards the wheel no longer touches @s, so its
 * memory may be freed or reused.  Call it from the task's drop function.
 */
void blitz_sleep_cancel(struct blitz_sleep *s);

/** blitz_sleep_reset - cancel, then re-arm for @deadline_ns (monotonic). */
void blitz_sleep_reset(struct blitz_sleep *s, uint64_t deadline_ns);

static inline uint64_t blitz_sleep_deadline(const struct blitz_sleep *s)
{
	return s->entry.deadline_ns;
}

/* ---------------------------------------------------------------------- */
/* Timeout around any awaitable                                            */

/*
 * The awaitable is given as a poll function over an argument, so that any
 * blitz_*_poll() can be wrapped with a two-line adapter:
 *
 *	static enum blitz_poll recv(void *arg, struct blitz_cx *cx)
 *	{
 *		struct st *s = arg;
 *		return blitz_oneshot_recv_poll(&s->ch, cx, &s->value, &s->err);
 *	}
 *	...
 *	blitz_timeout_init(&s->to, 100 * BLITZ_NSEC_PER_MSEC);
 *	BLITZ_AWAIT(&s->co, blitz_timeout_poll(&s->to, recv, s, cx));
 *	if (s->to.timed_out) ... the receive did not complete ...
 *
 * Each poll polls the inner awaitable first, then the deadline.  When the
 * deadline wins, the inner awaitable is left as it is, not completed: if it
 * registered a waker somewhere, that waker may still wake the task once
 * (harmless), and whatever the inner operation holds is the caller's to
 * close or cancel.
 */
struct blitz_timeout {
	struct blitz_sleep sleep;
	int timed_out;		/* after READY: 1 the deadline passed, 0 the inner completed */
};

typedef enum blitz_poll (*blitz_poll_fn)(void *arg, struct blitz_cx *cx);

/** blitz_timeout_init - a time limit of @duration_ns from now. */
void blitz_timeout_init(struct blitz_timeout *t, uint64_t duration_ns);

/** blitz_timeout_until_init - a time limit at the monotonic time @deadline_ns. */
void blitz_timeout_until_init(struct blitz_timeout *t, uint64_t deadline_ns);

/**
 * blitz_timeout_poll - await @inner(@arg, @cx) for at most the time limit.
 * Return: BLITZ_READY when the inner awaitable completed (timed_out = 0, the
 * timer is cancelled) or the deadline passed first (timed_out = 1);
 * BLITZ_PENDING otherwise.
 */
enum blitz_poll blitz_timeout_poll(struct blitz_timeout *t, blitz_poll_fn inner,
				   void *arg, struct blitz_cx *cx);

/** blitz_timeout_cancel - for the drop function: blitz_sleep_cancel() of the limit. */
void blitz_timeout_cancel(struct blitz_timeout *t);

/* ---------------------------------------------------------------------- */
/* Interval: a periodic ticker                                             */

/*
 * Ticks are scheduled at start, start + period, start + 2 * period, ...
 * The first tick completes at once (as Tokio's interval).
 *
 * Missed ticks are skipped (Tokio's MissedTickBehavior::Skip): when a tick
 * is polled late, past one or more later scheduled times, that tick
 * completes once, at once, and the next one is the first point of the
 * original grid strictly after now.  The ticks never burst to catch up and
 * never drift off the grid; `missed` counts the grid points skipped.
 */
struct blitz_interval {
	struct blitz_sleep sleep;	/* armed for the next tick */
	uint64_t period_ns;
	uint64_t last_tick_ns;		/* scheduled time of the tick that completed last */
	uint64_t ticks;			/* ticks completed */
	uint64_t missed;		/* grid points skipped */
};

/** blitz_interval_init - ticks every @period_ns (> 0; 0 is taken as 1 ns), from now. */
void blitz_interval_init(struct blitz_interval *iv, uint64_t period_ns);

/**
 * blitz_interval_tick_poll - await the next tick.
 * Return: BLITZ_READY once per tick (last_tick_ns says which), else PENDING.
 */
enum blitz_poll blitz_interval_tick_poll(struct blitz_interval *iv, struct blitz_cx *cx);

/** blitz_interval_cancel - for the drop function. */
void blitz_interval_cancel(struct blitz_interval *iv);

#endif /* BLITZ_TIME_H */
