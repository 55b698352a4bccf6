// SPDX-License-Identifier: MIT
/*
 * core/timer.c - the hierarchical timer wheel (seed 001, "Timer Wheel"), the
 * runtime's use of it, and the time API of <blitz/time.h>.
 *
 * Three parts:
 *  1. the wheel: a data structure with an injected clock (core/timer.h
 *     states its invariants I1-I6, referred to below);
 *  2. the runtime's wheel: one per runtime, under a spinlock; any thread
 *     inserts and cancels, worker 0 advances it at the start of every tick
 *     and sleeps no longer than its next expiry (core/worker.c);
 *  3. sleep, timeout and interval over wheel entries embedded in the
 *     caller's state.
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
#include "clock.h"
#include "probes.h"
#include "runtime.h"
#include "task.h"
#include "timer.h"

#define SLOT_MASK ((uint64_t)TIMER_SLOTS - 1)
#define TOP_SLOT (1ull << ((TIMER_LEVELS - 1) * TIMER_SLOT_BITS))	/* ticks */

/* ceil(deadline / 1 ms), without overflow near UINT64_MAX. */
static uint64_t tick_of(uint64_t deadline_ns)
{
	return deadline_ns / TIMER_TICK_NS + (deadline_ns % TIMER_TICK_NS != 0);
}

/* tick * 1 ms, saturating: the first time an entry of that tick may fire. */
static uint64_t ns_of(uint64_t tick)
{
	return tick > UINT64_MAX / TIMER_TICK_NS ? UINT64_MAX : tick * TIMER_TICK_NS;
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
	struct blitz_timer_entry *e = malloc(sizeof(*e));

	if (e) {
		timer_entry_init_waker(e, deadline_ns, waker);
		e->flags = TIMER_F_HEAP;
	}
	return e;
}

struct blitz_timer_entry *timer_entry_new_callback(uint64_t deadline_ns,
						   void (*fn)(void *arg), void *arg)
{
	struct blitz_timer_entry *e = malloc(sizeof(*e));

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
 * level; seed 001's clz formula), capped at the top level, which is a ring
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
		return ns_of(w->elapsed);
	if (!next_expiration(w, &x))
		return UINT64_MAX;
	return ns_of(x.deadline);
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
 * take_all - unlink every entry and copy its action out, all before any is
 * dropped: dropping a waker may free a task whose state holds other entries
 * still on the wheel.  NULL (with *n = 0) if the wheel is empty.
 */
static struct timer_fire *take_all(struct timer_wheel *w, size_t *n)
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
	struct timer_fire *all = take_all(w, &n);

	for (size_t i = 0; i < n; i++)
		timer_fire_drop(&all[i]);
	free(all);
}

/* ---------------------------------------------------------------------- */
/* The runtime's wheel                                                     */

/*
 * Shared state (struct blitz_runtime):
 *   timer_lock     guards timers (the wheel) and the entries' links and
 *                  state.  Held for a few list operations at a time; no
 *                  wake, drop or callback ever runs under it (a wake takes
 *                  the global queue's lock and may notify a worker).
 *   timer_next     ns, a lower bound of the wheel's next expiry
 *                  (UINT64_MAX: empty); written under timer_lock, read
 *                  without it by worker 0.
 *   timer_wake_at  ns: when worker 0, parked, will look at the wheel again
 *                  by itself; 0 while it runs (it looks at every tick).
 *
 * The race between worker 0 choosing how long to sleep and another thread
 * inserting an earlier timer is closed by a Dekker pattern (seq_cst on both
 * sides, as the idle protocol in core/idle.h):
 *   inserter:  insert; store timer_next = min(timer_next, due);
 *              load timer_wake_at; if due < it, unpark worker 0.
 *   worker 0:  store timer_wake_at = now + 10 ms;
 *              load timer_next; sleep until min(it, now + 10 ms).
 * Either worker 0's load sees the new timer_next (and sleeps no longer than
 * the new deadline), or the inserter's load sees timer_wake_at (and unparks
 * worker 0).  An unpark that comes before worker 0 is asleep is not lost:
 * it leaves the park state NOTIFIED and park_wait() returns at once
 * (core/park.c).  Worker 0 stores timer_wake_at = 0 when it wakes; an
 * inserter that sees 0 leaves it alone, and worker 0 polls the wheel at the
 * start of its next tick, before it can park again.
 */

void runtime_timers_init(struct blitz_runtime *rt)
{
	spin_init(&rt->timer_lock);
	timer_wheel_init(&rt->timers, clock_now_ns());
	atomic_init(&rt->timer_next, UINT64_MAX);
	atomic_init(&rt->timer_wake_at, 0);
	atomic_init(&rt->timer_unparks, 0);
}

/*
 * runtime_timers_free - at shutdown, after the tasks were dropped (their
 * drop functions may cancel sleeps): entries still registered are dropped,
 * not fired; their wakers are released.
 */
void runtime_timers_free(struct blitz_runtime *rt)
{
	size_t n;
	struct timer_fire *all;

	spin_lock(&rt->timer_lock);
	all = take_all(&rt->timers, &n);
	/* Relaxed: under the lock; no worker is left to read it. */
	atomic_store_explicit(&rt->timer_next, UINT64_MAX, memory_order_relaxed);
	spin_unlock(&rt->timer_lock);
	for (size_t i = 0; i < n; i++)
		timer_fire_drop(&all[i]);
	free(all);
}

/*
 * runtime_timer_start - register @e (IDLE, deadline and action set) from
 * any thread.  Return: true if registered; false if it is already due (not
 * registered: the caller fires it or treats it as done).
 */
bool runtime_timer_start(struct blitz_runtime *rt, struct blitz_timer_entry *e)
{
	uint64_t due = ns_of(e->when);
	bool ok;

	runtime_start(rt);		/* nothing advances the wheel without workers */
	spin_lock(&rt->timer_lock);
	ok = timer_wheel_insert(&rt->timers, e);
	if (ok) {
		/* Relaxed: under timer_lock, which every store of timer_next holds. */
		uint64_t next = atomic_load_explicit(&rt->timer_next, memory_order_relaxed);

		/* seq_cst, and always a store: the inserter's half of the Dekker above. */
		atomic_store(&rt->timer_next, due < next ? due : next);
	}
	spin_unlock(&rt->timer_lock);
	if (!ok)
		return false;
	/* seq_cst: ordered after our store to timer_next. */
	if (due < atomic_load(&rt->timer_wake_at)) {
		/* Relaxed: a statistic. */
		atomic_fetch_add_explicit(&rt->timer_unparks, 1, memory_order_relaxed);
		worker_unpark(&rt->workers[0]);	/* futex or I/O driver sleep */
	}
	return true;
}

/*
 * runtime_timer_cancel - unregister @e, which the caller owns (no insert or
 * cancel of it runs concurrently), and drop its waker.  Afterwards the
 * wheel does not touch @e.  Return: true if it was still registered.
 */
bool runtime_timer_cancel(struct blitz_runtime *rt, struct blitz_timer_entry *e)
{
	struct timer_fire f;
	bool ok;

	/*
	 * Without the lock: IDLE (never registered, or cancelled by us) and
	 * FIRED (acquire: the firing thread is done with @e) are final while
	 * we own @e; REGISTERED or FIRING need the lock to decide.
	 */
	uint32_t s = timer_entry_state(e);

	if (s == TIMER_IDLE || s == TIMER_FIRED)
		return false;
	spin_lock(&rt->timer_lock);
	ok = timer_wheel_cancel(&rt->timers, e);
	if (ok) {
		f.heap = NULL;		/* wheel-owned entries are never cancelled */
		f.kind = e->kind;
		if (e->kind == TIMER_KIND_WAKER) {
			f.u.waker = e->u.waker;
			e->u.waker.vtable = NULL;	/* the reference moved to f */
		}
		/* Relaxed: raising it is fine, see timer_next above. */
		atomic_store_explicit(&rt->timer_next, timer_wheel_next_deadline(&rt->timers),
				      memory_order_relaxed);
	}
	spin_unlock(&rt->timer_lock);
	if (ok)
		timer_fire_drop(&f);
	return ok;
}

/*
 * runtime_timer_wake_at - wake @waker (consuming it) at @deadline_ns, with
 * an entry the wheel allocates and frees: fire-and-forget, no cancel.
 * Return: 0, or -ENOMEM (the waker is dropped).
 */
int runtime_timer_wake_at(struct blitz_runtime *rt, uint64_t deadline_ns,
			  struct blitz_waker waker)
{
	struct blitz_timer_entry *e = timer_entry_new_waker(deadline_ns, waker);

	if (!e) {
		blitz_waker_drop(&waker);
		return -ENOMEM;
	}
	if (!runtime_timer_start(rt, e)) {
		free(e);
		blitz_waker_wake(&waker);	/* due already */
	}
	return 0;
}

#define FIRE_BATCH 32

/*
 * runtime_poll_timers - worker 0, at the start of every tick: fire what is
 * due, in batches of FIRE_BATCH taken under the lock and woken after it is
 * released.  A woken task goes where any wake from worker 0 goes: its LIFO
 * slot (or the global queue while it is on its way to park).
 */
void runtime_poll_timers(struct blitz_runtime *rt)
{
	struct timer_fire batch[FIRE_BATCH];
	uint64_t now;
	size_t n;

	/*
	 * Relaxed: a stale (higher) value only delays a new timer to the next
	 * tick; before parking, worker 0 reads timer_next with seq_cst.
	 */
	if (atomic_load_explicit(&rt->timer_next, memory_order_relaxed) == UINT64_MAX)
		return;
	now = clock_now_ns();
	if (now < atomic_load_explicit(&rt->timer_next, memory_order_relaxed))
		return;
	do {
		struct blitz_timer_entry *e;

		n = 0;
		spin_lock(&rt->timer_lock);
		while (n < FIRE_BATCH && (e = timer_wheel_poll(&rt->timers, now)))
			timer_entry_take(e, &batch[n++]);
		/* Relaxed: under the lock; see timer_next above. */
		atomic_store_explicit(&rt->timer_next, timer_wheel_next_deadline(&rt->timers),
				      memory_order_relaxed);
		spin_unlock(&rt->timer_lock);
		for (size_t i = 0; i < n; i++) {
			struct timer_fire *f = &batch[i];

			BLITZ_TIMER_FIRE(f->kind == TIMER_KIND_WAKER &&
					 f->u.waker.vtable == &task_waker_vtable ?
					 (uint64_t)(uintptr_t)f->u.waker.data : 0,
					 f->deadline_ns, now - f->deadline_ns);
			timer_fire_run(f);
		}
	} while (n == FIRE_BATCH);
}

/*
 * runtime_timer_park_timeout - worker 0 is about to park for at most
 * @max_ns: publish when it will look at the wheel again and return how long
 * to sleep (0: a timer is due already, do not sleep).  Worker 0's half of
 * the Dekker above.
 */
uint64_t runtime_timer_park_timeout(struct blitz_runtime *rt, uint64_t max_ns)
{
	uint64_t now = clock_now_ns();
	uint64_t limit = now + max_ns;
	uint64_t next;

	atomic_store(&rt->timer_wake_at, limit);		/* seq_cst */
	next = atomic_load(&rt->timer_next);			/* seq_cst */
	if (next >= limit)
		return max_ns;
	if (next <= now)
		return 0;
	/*
	 * We will wake at next: inserters of deadlines in [next, limit) need
	 * not wake us.  Relaxed: a stale higher value costs a spurious unpark.
	 */
	atomic_store_explicit(&rt->timer_wake_at, next, memory_order_relaxed);
	return next - now;
}

/* runtime_timer_unparked - worker 0 is awake again and polls at every tick. */
void runtime_timer_unparked(struct blitz_runtime *rt)
{
	/* Relaxed: a stale nonzero value costs a spurious unpark, no more. */
	atomic_store_explicit(&rt->timer_wake_at, 0, memory_order_relaxed);
}

/* runtime_timer_count - entries registered (for tests and statistics). */
size_t runtime_timer_count(struct blitz_runtime *rt)
{
	size_t n;

	spin_lock(&rt->timer_lock);
	n = rt->timers.count;
	spin_unlock(&rt->timer_lock);
	return n;
}

/* ---------------------------------------------------------------------- */
/* <blitz/time.h>                                                          */

uint64_t blitz_now_ns(void)
{
	return clock_now_ns();
}

static uint64_t deadline_after(uint64_t duration_ns)
{
	uint64_t now = clock_now_ns();

	return duration_ns > UINT64_MAX - now ? UINT64_MAX : now + duration_ns;
}

void blitz_sleep_until_init(struct blitz_sleep *s, uint64_t deadline_ns)
{
	memset(&s->entry, 0, sizeof(s->entry));
	s->entry.kind = TIMER_KIND_WAKER;
	timer_entry_set_deadline(&s->entry, deadline_ns);
	s->rt = NULL;
}

void blitz_sleep_init(struct blitz_sleep *s, uint64_t duration_ns)
{
	blitz_sleep_until_init(s, deadline_after(duration_ns));
}

/*
 * The sleep's entry goes IDLE -> REGISTERED (this task, under the lock) ->
 * FIRING -> FIRED (worker 0, under the lock), or back to IDLE (cancel).
 * Only FIRED is final for the wheel: then our waker has been taken and will
 * be woken, and the entry is ours again.
 */
enum blitz_poll blitz_sleep_poll(struct blitz_sleep *s, struct blitz_cx *cx)
{
	struct blitz_timer_entry *e = &s->entry;
	uint32_t st = timer_entry_state(e);

	if (st == TIMER_FIRED)
		return BLITZ_READY;
	if (clock_now_ns() >= e->deadline_ns) {
		/* Due, maybe before worker 0 noticed (or polled in another tick). */
		if (st != TIMER_IDLE)
			blitz_sleep_cancel(s);
		return BLITZ_READY;
	}
	if (st != TIMER_IDLE)
		return BLITZ_PENDING;	/* registered: our waker is in the wheel */
	s->rt = blitz_cx_runtime(cx);
	e->u.waker = blitz_cx_waker(cx);
	if (runtime_timer_start(s->rt, e))
		return BLITZ_PENDING;
	blitz_waker_drop(&e->u.waker);	/* the wheel's time is past it already */
	return BLITZ_READY;
}

void blitz_sleep_cancel(struct blitz_sleep *s)
{
	if (s->rt)
		runtime_timer_cancel(s->rt, &s->entry);
}

void blitz_sleep_reset(struct blitz_sleep *s, uint64_t deadline_ns)
{
	blitz_sleep_cancel(s);
	blitz_sleep_until_init(s, deadline_ns);
}

/* ---------------------------------------------------------------------- */

void blitz_timeout_init(struct blitz_timeout *t, uint64_t duration_ns)
{
	blitz_sleep_init(&t->sleep, duration_ns);
	t->timed_out = 0;
}

void blitz_timeout_until_init(struct blitz_timeout *t, uint64_t deadline_ns)
{
	blitz_sleep_until_init(&t->sleep, deadline_ns);
	t->timed_out = 0;
}

enum blitz_poll blitz_timeout_poll(struct blitz_timeout *t, blitz_poll_fn inner,
				   void *arg, struct blitz_cx *cx)
{
	if (inner(arg, cx) == BLITZ_READY) {
		blitz_sleep_cancel(&t->sleep);
		t->timed_out = 0;
		return BLITZ_READY;
	}
	if (blitz_sleep_poll(&t->sleep, cx) == BLITZ_READY) {
		t->timed_out = 1;
		return BLITZ_READY;
	}
	return BLITZ_PENDING;
}

void blitz_timeout_cancel(struct blitz_timeout *t)
{
	blitz_sleep_cancel(&t->sleep);
}

/* ---------------------------------------------------------------------- */

void blitz_interval_init(struct blitz_interval *iv, uint64_t period_ns)
{
	iv->period_ns = period_ns ? period_ns : 1;
	iv->last_tick_ns = 0;
	iv->ticks = 0;
	iv->missed = 0;
	blitz_sleep_until_init(&iv->sleep, clock_now_ns());	/* first tick: now */
}

enum blitz_poll blitz_interval_tick_poll(struct blitz_interval *iv, struct blitz_cx *cx)
{
	uint64_t d, now, p = iv->period_ns, next;

	if (blitz_sleep_poll(&iv->sleep, cx) != BLITZ_READY)
		return BLITZ_PENDING;
	d = blitz_sleep_deadline(&iv->sleep);
	now = clock_now_ns();
	/* Skip: the next tick is the first grid point d + k * p after now. */
	if (now - d >= p) {
		uint64_t k = (now - d) / p;	/* grid points in (d, now] */

		iv->missed += k;
		next = d + (k + 1) * p;
	} else {
		next = d + p;
	}
	if (next < d)
		next = UINT64_MAX;	/* wrapped: never again */
	iv->last_tick_ns = d;
	iv->ticks++;
	blitz_sleep_reset(&iv->sleep, next);
	return BLITZ_READY;
}

void blitz_interval_cancel(struct blitz_interval *iv)
{
	blitz_sleep_cancel(&iv->sleep);
}
