/* SPDX-License-Identifier: MIT */
/*
 * core/time/timer.h - the hierarchical timer wheel (docs/time.md).
 *
 * The wheel (struct timer_wheel, timer_wheel_*) is a plain data structure:
 * no locks, no clock, no runtime.  Its user passes the time in (`now`), so
 * the unit tests drive it with a fake clock.  The runtime wraps it with a
 * spinlock and the real clock (runtime_timer_*, at the end of this header;
 * the code is core/time/driver.c; sleep, timeout and interval are
 * core/time/sleep.c).
 *
 * Time is counted in ticks of TIMER_TICK_NS (1 ms).  An entry's deadline in
 * ns becomes its tick `when` = ceil(deadline / 1 ms); the entry fires at the
 * first timer_wheel_poll(now) with floor(now / 1 ms) >= when, i.e. with
 * now >= when * 1 ms >= deadline.  So an entry never fires early, and fires
 * less than 1 ms after its deadline if the wheel is advanced every
 * millisecond.  That bound is the same at every level: cascading re-files
 * entries by their exact tick before they are due (docs/time.md).
 *
 * Levels (64 slots each; level L slot = 64^L ticks):
 *   level 0: 1 ms slots,        64 ms range
 *   level 1: 64 ms slots,       4.1 s range    (2^12 ms)
 *   level 2: 4.1 s slots,       4.4 min range  (2^18 ms)
 *   level 3: 4.4 min slots,     4.7 h range    (2^24 ms)
 *   level 4: 4.7 h slots,       12.4 d range   (2^30 ms)
 *   overflow list: deadlines 2^30 ms or more ahead of the wheel's time.
 *
 * Invariants (elapsed = the last tick processed; all under the owner's lock):
 *  I1  every registered entry has when > elapsed, except those on the
 *      pending list (when == the tick being processed, due now);
 *  I2  an entry on level L < 4 agrees with elapsed on every bit above level
 *      L's six and is filed in slot digit_L(when) > digit_L(elapsed); so
 *      slot digit_L(elapsed) of levels 0..3 is always empty;
 *  I3  level 4 is a ring: an entry there has when - elapsed < 2^30 and is
 *      filed in slot digit_4(when); slots after the current one (circularly)
 *      come first, the current slot's entries are one rotation ahead;
 *  I4  overflow entries had when - elapsed >= 2^30 when filed;
 *      overflow_min <= the smallest when on the list (it may be stale-low
 *      after a cancel: that costs one early, empty re-scan, never a miss).
 *      The list is re-scanned at the first top-level slot start (a
 *      multiple of 2^24 ticks) from which overflow_min is within 2^30
 *      ticks, and every entry then within range moves onto the wheel: a
 *      scan per 4.7 h of wheel time that has overflow entries coming due,
 *      O(list length) each;
 *  I5  bit s of occupied[L] is set iff slots[L][s] is not empty;
 *  I6  every entry due at or before a slot's start lives in a lower level
 *      than that slot or is pending: elapsed only moves forward to the
 *      start of the earliest non-empty slot (processing it) or to a time
 *      before it.
 * From I2-I4, the earliest expiry is at the lowest non-empty level (every
 * entry of level L is inside the current level-(L+1) slot, every entry of
 * level L+1 outside it), which is what makes next-expiry O(levels).
 */
#ifndef BLITZ_CORE_TIMER_H
#define BLITZ_CORE_TIMER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <blitz/time.h>

#define TIMER_TICK_NS		1000000ull	/* level-0 slot: 1 ms */
#define TIMER_LEVELS		5
#define TIMER_SLOT_BITS		6
#define TIMER_SLOTS		(1u << TIMER_SLOT_BITS)
#define TIMER_RANGE		(1ull << (TIMER_LEVELS * TIMER_SLOT_BITS))	/* 2^30 ticks */

/* entry->level beyond the wheel's levels */
#define TIMER_LEVEL_OVERFLOW	TIMER_LEVELS
#define TIMER_LEVEL_PENDING	(TIMER_LEVELS + 1)

/*
 * entry->state (atomic; written only under the wheel owner's lock):
 *   IDLE -> REGISTERED (insert) -> IDLE (cancel)
 *   REGISTERED -> FIRING (timer_wheel_poll returned it) -> FIRED
 *                 (timer_entry_take copied its action out)
 * A reader without the lock (the sleeping task) sees FIRED only after the
 * wheel has stopped touching the entry (release store, acquire load).
 */
enum timer_state {
	TIMER_IDLE = 0,
	TIMER_REGISTERED = 1,
	TIMER_FIRING = 2,
	TIMER_FIRED = 3,
};

enum timer_kind {
	TIMER_KIND_WAKER = 0,
	TIMER_KIND_CALLBACK = 1,
};

/* entry->flags */
#define TIMER_F_HEAP	0x1	/* from timer_entry_new_*(): the wheel frees it */

#define TIMER_ENTRY_STATE(e) ((_Atomic uint32_t *)&(e)->state)

static inline uint32_t timer_entry_state(const struct blitz_timer_entry *e)
{
	/* Acquire: pairs with the release store of FIRED in timer_entry_take(). */
	return atomic_load_explicit(TIMER_ENTRY_STATE((struct blitz_timer_entry *)e),
				    memory_order_acquire);
}

struct timer_wheel {
	uint64_t elapsed;			/* ticks: everything <= elapsed has fired */
	uint64_t occupied[TIMER_LEVELS];	/* bit s: slots[L][s] non-empty */
	struct blitz_timer_entry *slots[TIMER_LEVELS][TIMER_SLOTS];
	struct blitz_timer_entry *overflow;	/* beyond TIMER_RANGE */
	uint64_t overflow_min;			/* <= min when on overflow */
	struct blitz_timer_entry *pending;	/* due at elapsed, not yet returned */
	size_t count;				/* registered entries */
};

/* What to do for a fired entry, copied out of it under the lock. */
struct timer_fire {
	struct blitz_timer_entry *heap;		/* free this after firing (TIMER_F_HEAP) */
	uint64_t deadline_ns;
	uint8_t kind;
	union {
		struct blitz_waker waker;
		struct {
			void (*fn)(void *arg);
			void *arg;
		} cb;
	} u;
};

/* Entries. */
void timer_entry_init_waker(struct blitz_timer_entry *e, uint64_t deadline_ns,
			    struct blitz_waker waker);
void timer_entry_init_callback(struct blitz_timer_entry *e, uint64_t deadline_ns,
			       void (*fn)(void *arg), void *arg);
struct blitz_timer_entry *timer_entry_new_waker(uint64_t deadline_ns, struct blitz_waker waker);
struct blitz_timer_entry *timer_entry_new_callback(uint64_t deadline_ns,
						   void (*fn)(void *arg), void *arg);
void timer_entry_set_deadline(struct blitz_timer_entry *e, uint64_t deadline_ns);
void timer_entry_take(struct blitz_timer_entry *e, struct timer_fire *f);
void timer_fire_run(struct timer_fire *f);
void timer_fire_drop(struct timer_fire *f);

/* The wheel. */
void timer_wheel_init(struct timer_wheel *w, uint64_t now_ns);
bool timer_wheel_insert(struct timer_wheel *w, struct blitz_timer_entry *e);
bool timer_wheel_cancel(struct timer_wheel *w, struct blitz_timer_entry *e);
uint64_t timer_wheel_next_deadline(const struct timer_wheel *w);
struct blitz_timer_entry *timer_wheel_poll(struct timer_wheel *w, uint64_t now_ns);
size_t timer_wheel_advance(struct timer_wheel *w, uint64_t now_ns);
struct blitz_timer_entry *timer_wheel_pop_any(struct timer_wheel *w);
void timer_wheel_destroy(struct timer_wheel *w);
struct timer_fire *timer_wheel_take_all(struct timer_wheel *w, size_t *n);

/* tick * 1 ms, saturating: the first time an entry of that tick may fire. */
static inline uint64_t timer_tick_ns(uint64_t tick)
{
	return tick > UINT64_MAX / TIMER_TICK_NS ? UINT64_MAX : tick * TIMER_TICK_NS;
}

static inline uint64_t timer_wheel_now_tick(const struct timer_wheel *w)
{
	return w->elapsed;
}

/* ---------------------------------------------------------------------- */
/* The runtime's wheel (struct blitz_runtime: timers, timer_lock, ...)     */

struct blitz_runtime;

void runtime_timers_init(struct blitz_runtime *rt);
void runtime_timers_free(struct blitz_runtime *rt);
bool runtime_timer_start(struct blitz_runtime *rt, struct blitz_timer_entry *e);
bool runtime_timer_cancel(struct blitz_runtime *rt, struct blitz_timer_entry *e);
int runtime_timer_wake_at(struct blitz_runtime *rt, uint64_t deadline_ns,
			  struct blitz_waker waker);
bool runtime_poll_timers(struct blitz_runtime *rt);
uint64_t runtime_timer_park_timeout(struct blitz_runtime *rt, uint64_t max_ns);
void runtime_timer_unparked(struct blitz_runtime *rt);
size_t runtime_timer_count(struct blitz_runtime *rt);

#endif
