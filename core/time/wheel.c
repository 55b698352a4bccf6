// SPDX-License-Identifier: MIT
/*
 * core/time/wheel.c - the hierarchical timer wheel: a data structure with an
 * injected clock (core/time/timer.h states its invariants I1-I6, referred to
 * below), and its entries.  The runtime's use of it is core/time/driver.c;
 * sleep, timeout and interval are core/time/sleep.c.
 *
 * The shape of the wheel follows Tokio's (tokio/src/runtime/time/wheel):
 * find the next expiration from the occupancy bitmaps, lowest level first;
 * at a level-0 slot everything in it is due; at a higher level's slot its
 * entries are re-filed ("cascaded") relative to that slot's start, landing
 * on lower levels (or due at once).  Unlike Tokio the top level is followed
 * by an overflow list, not a clamp of far deadlines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../clock.h"
#include "../fault.h"
#include "../probes.h"
#include "../sched/runtime.h"
#include "../sched/task.h"
#include "timer.h"

#define SLOT_MASK ((uint64_t)TIMER_SLOTS - 1)
#define TOP_SLOT (1ull << ((TIMER_LEVELS - 1) * TIMER_SLOT_BITS))	/* ticks */

/* ceil(deadline / 1 ms), without overflow near UINT64_MAX. */
static uint64_t tick_of(uint64_t deadline_ns)
{
	return deadline_ns / TIMER_TICK_NS + (deadline_ns % TIMER_TICK_NS != 0);
}

/* ---------------------------------------------------------------------- */
/* Entries                                                                 */

/*
 * The lists are hlists: next, and pprev pointing at whatever points at us
 * (the list head or the previous entry's next), so an entry unlinks itself
 * in O(1) without knowing its list.
 */
static void list_push(struct blitz_timer_entry **head, struct blitz_timer_entry *e)
{
	e->next = *head;
	if (e->next)
		e->next->pprev = &e->next;
	*head = e;
	e->pprev = head;
}

static void list_del(struct blitz_timer_entry *e)
{
	*e->pprev = e->next;
	if (e->next)
		e->next->pprev = e->pprev;
	e->next = NULL;
	e->pprev = NULL;
}

/* Relaxed: state changes are made under the wheel owner's lock; only FIRED
 * is read without it, and that one is a release store (timer_entry_take). */
static void set_state(struct blitz_timer_entry *e, uint32_t s)
{
	atomic_store_explicit(TIMER_ENTRY_STATE(e), s, memory_order_relaxed);
}

void timer_entry_set_deadline(struct blitz_timer_entry *e, uint64_t deadline_ns)
{
	e->deadline_ns = deadline_ns;
	e->when = tick_of(deadline_ns);
}

static void entry_init(struct blitz_timer_entry *e, uint64_t deadline_ns, uint8_t kind)
{
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	timer_entry_set_deadline(e, deadline_ns);
}

/* timer_entry_init_waker - @waker is woken (consumed) when the entry fires. */
void timer_entry_init_waker(struct blitz_timer_entry *e, uint64_t deadline_ns,
			    struct blitz_waker waker)
{
	entry_init(e, deadline_ns, TIMER_KIND_WAKER);
	e->u.waker = waker;
}

/* timer_entry_init_callback - @fn(@arg) runs, outside any lock, when it fires. */
void timer_entry_init_callback(struct blitz_timer_entry *e, uint64_t deadline_ns,
			       void (*fn)(void *arg), void *arg)
{
	entry_init(e, deadline_ns, TIMER_KIND_CALLBACK);
	e->u.cb.fn = fn;
	e->u.cb.arg = arg;
}

/*
 * timer_entry_new_waker / timer_entry_new_callback - an entry owned by the
 * wheel (TIMER_F_HEAP): once inserted it is fire-and-forget (no cancel: the
 * caller keeps no pointer to it); the wheel frees it after firing it, or
 * when the wheel is destroyed.  NULL when out of memory.
 */
struct blitz_timer_entry *timer_entry_new_waker(uint64_t deadline_ns, struct blitz_waker waker)
{
	struct blitz_timer_entry *e = fault_malloc(FAULT_TIMER_ALLOC, sizeof(*e));

	if (e) {
		timer_entry_init_waker(e, deadline_ns, waker);
		e->flags = TIMER_F_HEAP;
	}
	return e;
}

struct blitz_timer_entry *timer_entry_new_callback(uint64_t deadline_ns,
						   void (*fn)(void *arg), void *arg)
{
	struct blitz_timer_entry *e = fault_malloc(FAULT_TIMER_ALLOC, sizeof(*e));

	if (e) {
		timer_entry_init_callback(e, deadline_ns, fn, arg);
		e->flags = TIMER_F_HEAP;
	}
	return e;
}

/*
 * timer_entry_take - copy the action of an entry that timer_wheel_poll()
 * (or timer_wheel_pop_any()) returned, then mark it FIRED.  Called under the
 * wheel owner's lock; from the release store on, the wheel and its firing
 * thread do not touch @e again (only @f), so its owner may reuse or free it
 * as soon as it sees FIRED.
 */
void timer_entry_take(struct blitz_timer_entry *e, struct timer_fire *f)
{
	f->heap = (e->flags & TIMER_F_HEAP) ? e : NULL;
	f->deadline_ns = e->deadline_ns;
	f->kind = e->kind;
	if (e->kind == TIMER_KIND_WAKER) {
		f->u.waker = e->u.waker;
		e->u.waker.vtable = NULL;	/* the reference moved to @f */
	} else {
		f->u.cb.fn = e->u.cb.fn;
		f->u.cb.arg = e->u.cb.arg;
	}
	/* Release: our reads of @e above happen before its owner reuses it. */
	atomic_store_explicit(TIMER_ENTRY_STATE(e), TIMER_FIRED, memory_order_release);
}

/* timer_fire_run - fire a taken entry: wake (consuming the waker) or call. */
void timer_fire_run(struct timer_fire *f)
{
	if (f->kind == TIMER_KIND_WAKER)
		blitz_waker_wake(&f->u.waker);
	else
		f->u.cb.fn(f->u.cb.arg);
	free(f->heap);
}

/* timer_fire_drop - give up a taken entry without firing it (shutdown). */
void timer_fire_drop(struct timer_fire *f)
{
	if (f->kind == TIMER_KIND_WAKER)
		blitz_waker_drop(&f->u.waker);
	free(f->heap);
}

/* ---------------------------------------------------------------------- */
/* The wheel                                                               */

void timer_wheel_init(struct timer_wheel *w, uint64_t now_ns)
{
	memset(w, 0, sizeof(*w));
	w->elapsed = now_ns / TIMER_TICK_NS;
	w->overflow_min = UINT64_MAX;
}

/*
 * level_for - the level of a tick @when > @ref, for a wheel whose time is
 * @ref: the level of the highest bit in which they differ (six bits a
 * level, found with clz), capped at the top level, which is a ring
 * (I3).  Only for when - ref < TIMER_RANGE.
 */
static unsigned level_for(uint64_t ref, uint64_t when)
{
	uint64_t masked = (ref ^ when) | SLOT_MASK;
	unsigned level = (unsigned)(63 - __builtin_clzll(masked)) / TIMER_SLOT_BITS;

	return level < TIMER_LEVELS ? level : TIMER_LEVELS - 1;
}

/* file_entry - put @e (when > ref) where it belongs on a wheel whose time is @ref. */
static void file_entry(struct timer_wheel *w, struct blitz_timer_entry *e, uint64_t ref)
{
	unsigned level, slot;

	if (e->when - ref >= TIMER_RANGE) {		/* I4 */
		if (!w->overflow || e->when < w->overflow_min)
			w->overflow_min = e->when;
		list_push(&w->overflow, e);
		e->level = TIMER_LEVEL_OVERFLOW;
		return;
	}
	level = level_for(ref, e->when);
	slot = (unsigned)(e->when >> (level * TIMER_SLOT_BITS)) & SLOT_MASK;
	list_push(&w->slots[level][slot], e);
	w->occupied[level] |= 1ull << slot;		/* I5 */
	e->level = (uint8_t)level;
	e->slot = (uint8_t)slot;
}

/*
 * timer_wheel_insert - register @e (IDLE, deadline set).  O(1).
 * Return: true; false if @e is already due (when <= the wheel's time): it is
 * not registered, and the caller fires it (or treats it as done) itself.
 */
bool timer_wheel_insert(struct timer_wheel *w, struct blitz_timer_entry *e)
{
	if (e->when <= w->elapsed)
		return false;
	file_entry(w, e, w->elapsed);
	w->count++;
	set_state(e, TIMER_REGISTERED);
	return true;
}

/*
 * timer_wheel_cancel - unregister @e.  O(1).
 * Return: true if it was registered (now IDLE; its waker is still in it, the
 * caller drops it); false if it was not (IDLE, or already returned by poll).
 */
bool timer_wheel_cancel(struct timer_wheel *w, struct blitz_timer_entry *e)
{
	/* Relaxed: under the wheel owner's lock, which every state change holds. */
	if (atomic_load_explicit(TIMER_ENTRY_STATE(e), memory_order_relaxed) != TIMER_REGISTERED)
		return false;
	list_del(e);
	if (e->level < TIMER_LEVELS && !w->slots[e->level][e->slot])
		w->occupied[e->level] &= ~(1ull << e->slot);	/* I5 */
	w->count--;
	set_state(e, TIMER_IDLE);
	return true;
}

/* An expiration: a slot to process (or the overflow list) and when. */
struct expiration {
	unsigned level;		/* 0..TIMER_LEVELS-1, or TIMER_LEVEL_OVERFLOW */
	unsigned slot;
	uint64_t deadline;	/* tick: the slot's start */
};

static uint64_t rotr64(uint64_t x, unsigned n)
{
	return n ? (x >> n) | (x << (64 - n)) : x;
}

/*
 * level_next - the first non-empty slot of @level after the current one,
 * circularly (I2: the current slot of levels 0..3 is empty; I3: on level 4
 * it holds the next rotation), by find-first-set on the rotated bitmap.
 */
static bool level_next(const struct timer_wheel *w, unsigned level, struct expiration *x)
{
	uint64_t occ = w->occupied[level];
	unsigned shift = level * TIMER_SLOT_BITS;
	uint64_t level_range = 1ull << (shift + TIMER_SLOT_BITS);
	unsigned from, slot;
	uint64_t start;

	if (!occ)
		return false;
	from = (unsigned)((w->elapsed >> shift) + 1) & SLOT_MASK;
	slot = (from + (unsigned)__builtin_ctzll(rotr64(occ, from))) & SLOT_MASK;
	start = (w->elapsed & ~(level_range - 1)) + ((uint64_t)slot << shift);
	if (start <= w->elapsed)
		start += level_range;	/* only on the top level: its next rotation */
	x->level = level;
	x->slot = slot;
	x->deadline = start;
	return true;
}

/*
 * next_expiration - the earliest thing to process: the lowest non-empty
 * level's next slot (nothing on a higher level can come before it: I2-I3),
 * or the overflow list when its first entry comes within range first.
 * O(levels).
 */
static bool next_expiration(const struct timer_wheel *w, struct expiration *x)
{
	bool found = false;

	for (unsigned l = 0; l < TIMER_LEVELS && !found; l++)
		found = level_next(w, l, x);
	if (w->overflow) {
		/*
		 * The first top-level slot start from which overflow_min is less
		 * than TIMER_RANGE ahead: there, every entry due within that
		 * slot's span one rotation later moves in, so the list is
		 * scanned at most once per 2^24 ticks (4.7 h) of wheel time, not
		 * once per entry.  (Such a start may equal elapsed after a tie.)
		 */
		uint64_t d = w->overflow_min - (TIMER_RANGE - 1);

		d = (d + TOP_SLOT - 1) & ~(TOP_SLOT - 1);
		/* Strictly earlier: elapsed must never land on an unprocessed slot (I6). */
		if (!found || d < x->deadline) {
			x->level = TIMER_LEVEL_OVERFLOW;
			x->slot = 0;
			x->deadline = d;
			found = true;
		}
	}
	return found;
}

/*
 * process - the wheel's time becomes x->deadline: entries of the slot due
 * then go to the pending list, the others are re-filed relative to it
 * (cascading: from level L they land on a level below L, I2).  For the
 * overflow list, entries now within range move into the wheel.
 */
static void process(struct timer_wheel *w, const struct expiration *x)
{
	struct blitz_timer_entry *e, *next;

	if (x->level == TIMER_LEVEL_OVERFLOW) {
		e = w->overflow;
		w->overflow = NULL;
		w->overflow_min = UINT64_MAX;
		for (; e; e = next) {
			next = e->next;
			file_entry(w, e, x->deadline);	/* back on overflow if still far */
		}
		return;
	}
	e = w->slots[x->level][x->slot];
	w->slots[x->level][x->slot] = NULL;
	w->occupied[x->level] &= ~(1ull << x->slot);
	for (; e; e = next) {
		next = e->next;
		if (e->when <= x->deadline) {		/* == : due at this tick */
			list_push(&w->pending, e);
			e->level = TIMER_LEVEL_PENDING;
		} else {
			file_entry(w, e, x->deadline);
		}
	}
}

/*
 * timer_wheel_poll - advance the wheel to @now_ns and return one entry that
 * is due (when <= floor(now / 1 ms)), unlinked and FIRING; NULL when none
 * is left.  Entries come out in order of their tick (entries of one tick in
 * no particular order).  Call it until it returns NULL; the caller may
 * insert and cancel between calls.  Each entry it returns must be passed
 * to timer_entry_take() before the wheel's lock is released.
 */
struct blitz_timer_entry *timer_wheel_poll(struct timer_wheel *w, uint64_t now_ns)
{
	uint64_t now = now_ns / TIMER_TICK_NS;
	struct expiration x;

	for (;;) {
		struct blitz_timer_entry *e = w->pending;

		if (e) {
			list_del(e);
			w->count--;
			set_state(e, TIMER_FIRING);
			return e;
		}
		if (!next_expiration(w, &x) || x.deadline > now)
			break;
		process(w, &x);
		w->elapsed = x.deadline;
	}
	/* Nothing is due before now + 1 tick: no slot is skipped (I6). */
	if (now > w->elapsed)
		w->elapsed = now;
	return NULL;
}

/*
 * timer_wheel_next_deadline - a lower bound (ns) of when timer_wheel_poll()
 * will next have something to do; UINT64_MAX if the wheel is empty.  Exact
 * (the earliest entry's tick * 1 ms) when the earliest entry is on level 0
 * or pending; otherwise the start of the slot whose cascade comes first, so
 * polling at successive next deadlines reaches the earliest entry in at
 * most TIMER_LEVELS steps.  O(levels), from the bitmaps.
 */
uint64_t timer_wheel_next_deadline(const struct timer_wheel *w)
{
	struct expiration x;

	if (w->pending)
		return timer_tick_ns(w->elapsed);
	if (!next_expiration(w, &x))
		return UINT64_MAX;
	return timer_tick_ns(x.deadline);
}

/*
 * timer_wheel_advance - poll and fire in place, for a single-threaded user
 * (the unit tests): every entry due at @now_ns fires, in tick order.  A
 * callback may insert or cancel entries.  Returns how many fired.
 */
size_t timer_wheel_advance(struct timer_wheel *w, uint64_t now_ns)
{
	struct blitz_timer_entry *e;
	struct timer_fire f;
	size_t n = 0;

	while ((e = timer_wheel_poll(w, now_ns))) {
		timer_entry_take(e, &f);
		timer_fire_run(&f);
		n++;
	}
	return n;
}

/* timer_wheel_pop_any - unlink some registered entry (FIRING), NULL if none. */
struct blitz_timer_entry *timer_wheel_pop_any(struct timer_wheel *w)
{
	struct blitz_timer_entry *e = w->pending ? w->pending : w->overflow;

	for (unsigned l = 0; !e && l < TIMER_LEVELS; l++) {
		if (w->occupied[l])
			e = w->slots[l][__builtin_ctzll(w->occupied[l])];
	}
	if (!e)
		return NULL;
	list_del(e);
	if (e->level < TIMER_LEVELS && !w->slots[e->level][e->slot])
		w->occupied[e->level] &= ~(1ull << e->slot);
	w->count--;
	set_state(e, TIMER_FIRING);
	return e;
}

/*
 * timer_wheel_take_all - unlink every entry and copy its action out, all before any is
 * dropped: dropping a waker may free a task whose state holds other entries
 * still on the wheel.  NULL (with *n = 0) if the wheel is empty.
 */
struct timer_fire *timer_wheel_take_all(struct timer_wheel *w, size_t *n)
{
	struct timer_fire *all;
	struct blitz_timer_entry *e;

	*n = 0;
	if (!w->count)
		return NULL;
	all = malloc(w->count * sizeof(*all));
	if (!all)
		abort();	/* nothing sane to do: entries would dangle */
	while ((e = timer_wheel_pop_any(w)))
		timer_entry_take(e, &all[(*n)++]);
	return all;
}

/*
 * timer_wheel_destroy - drop every entry still registered without firing
 * it: wakers are released, callbacks not called, wheel-owned entries freed.
 */
void timer_wheel_destroy(struct timer_wheel *w)
{
	size_t n;
	struct timer_fire *all = timer_wheel_take_all(w, &n);

	for (size_t i = 0; i < n; i++)
		timer_fire_drop(&all[i]);
	free(all);
}
