// SPDX-License-Identifier: MIT
/*
 * test_timer.c - the timer wheel (core/time/wheel.c) as a data structure, with a
 * fake clock: firing order and the exact firing bound at every level,
 * cancel (also of entries being cascaded and of entries already due),
 * cascading across every level boundary, the overflow list beyond 2^30 ms,
 * next_deadline.
 *
 * The bound the wheel guarantees, at every level (cascading re-files an
 * entry by its exact tick, so no level loses precision): an entry with
 * deadline d fires during the first timer_wheel_poll/advance(now) with
 * now >= ceil(d / 1 ms) * 1 ms.  So with advances at t0 < t1 < ...:
 *     t(i-1) < ceil_ms(d) <= t(i)      (t(i) is when it fires)
 * hence never early (t(i) >= d), less than 1 ms late when the wheel is
 * advanced at every millisecond boundary, and less than 1 ms + P late when
 * it is advanced every P ns at any phase.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/time/timer.h"
#include "suites.h"

#define MS TIMER_TICK_NS

/*
 * REQUIRE - an assertion for hot loops: Check's ck_assert records every
 * passing check (a write to its log), which dominates a loop of millions.
 */
#define REQUIRE(cond) do {						\
		if (!(cond))						\
			ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond); \
	} while (0)

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd_range(uint64_t lo, uint64_t hi)	/* [lo, hi) */
{
	return lo + rnd() % (hi - lo);
}

static uint64_t ceil_ms(uint64_t d)
{
	return (d / MS + (d % MS != 0)) * MS;
}

/* ---------------------------------------------------------------------- */
/* A population of callback entries and what happened to each             */

struct pop {
	size_t n;
	struct blitz_timer_entry *e;
	uint64_t *fired_at;	/* fake time of the advance that fired it; 0: not yet */
	int *fires;
	int *cancelled;
	uint8_t *level0;	/* level it was first filed on */
};

static struct timer_wheel wheel;
static uint64_t fake_now;	/* the time passed to the advance in progress */
static uint64_t prev_now;	/* the previous advance's time */
static struct pop P;
static uint64_t last_when;	/* order check: ticks fire in order */
static long order_violations, bound_violations;

static void fire_cb(void *arg)
{
	size_t i = (size_t)(uintptr_t)arg;
	uint64_t due = ceil_ms(P.e[i].deadline_ns);

	P.fires[i]++;
	P.fired_at[i] = fake_now;
	if (P.e[i].when < last_when)
		order_violations++;
	last_when = P.e[i].when;
	if (!(prev_now < due && due <= fake_now))
		bound_violations++;
}

static void pop_alloc(size_t n)
{
	P.n = n;
	P.e = calloc(n, sizeof(*P.e));
	P.fired_at = calloc(n, sizeof(*P.fired_at));
	P.fires = calloc(n, sizeof(*P.fires));
	P.cancelled = calloc(n, sizeof(*P.cancelled));
	P.level0 = calloc(n, 1);
	ck_assert(P.e && P.fired_at && P.fires && P.cancelled && P.level0);
	last_when = 0;
	order_violations = bound_violations = 0;
}

static void pop_free(void)
{
	free(P.e);
	free(P.fired_at);
	free(P.fires);
	free(P.cancelled);
	free(P.level0);
	memset(&P, 0, sizeof(P));
}

static void wheel_start(uint64_t now)
{
	timer_wheel_init(&wheel, now);
	fake_now = prev_now = now;
}

static void insert(size_t i, uint64_t deadline)
{
	timer_entry_init_callback(&P.e[i], deadline, fire_cb, (void *)(uintptr_t)i);
	if (!timer_wheel_insert(&wheel, &P.e[i]))
		ck_abort_msg("entry %zu (deadline %llu) refused", i, (unsigned long long)deadline);
	P.level0[i] = P.e[i].level;
}

static size_t advance(uint64_t now)
{
	size_t n;

	fake_now = now;
	n = timer_wheel_advance(&wheel, now);
	prev_now = now;
	return n;
}

/* A random deadline ahead of @now, on level @l (TIMER_LEVELS: overflow). */
static uint64_t deadline_on_level(uint64_t now, unsigned l)
{
	uint64_t lo = l == 0 ? 1 : (1ull << (6 * l)) * MS;
	uint64_t hi = l < TIMER_LEVELS ? (1ull << (6 * (l + 1))) * MS : (1ull << 33) * MS;

	return now + rnd_range(lo, hi);
}

/*
 * Advance event by event: to each next_deadline, after checking that
 * nothing fires just before it.  Returns the number of steps.
 */
static long drive_to_empty(uint64_t stop_at)
{
	long steps = 0;

	for (;;) {
		uint64_t nd = timer_wheel_next_deadline(&wheel);

		if (nd == UINT64_MAX || nd > stop_at)
			break;
		REQUIRE((nd) >= (prev_now));
		if (nd > prev_now + 1)
			REQUIRE(advance(nd - 1) == 0);	/* nd is never too late */
		advance(nd);
		steps++;
	}
	return steps;
}

static void report_levels(const char *what)
{
	uint64_t worst[TIMER_LEVELS + 1] = { 0 };
	size_t count[TIMER_LEVELS + 1] = { 0 };

	for (size_t i = 0; i < P.n; i++) {
		if (!P.fires[i])
			continue;
		unsigned l = P.level0[i];
		uint64_t late = P.fired_at[i] - P.e[i].deadline_ns;

		count[l]++;
		if (late > worst[l])
			worst[l] = late;
	}
	printf("timer: %s: worst lateness by first level:", what);
	for (unsigned l = 0; l <= TIMER_LEVELS; l++) {
		if (l < TIMER_LEVELS)
			printf(" L%u", l);
		else
			printf(" overflow");
		printf(" %llu ns (%zu)", (unsigned long long)worst[l], count[l]);
	}
	printf("\n");
}

/* ---------------------------------------------------------------------- */

START_TEST(random_100k_fire_in_order_at_their_tick)
{
	size_t n = 100000;
	uint64_t start = 5 * 86400 * 1000 * MS + 123456789;	/* not tick-aligned */
	long steps;

	rng_state = 1;
	pop_alloc(n);
	wheel_start(start);
	for (size_t i = 0; i < n; i++)
		insert(i, deadline_on_level(start, (unsigned)(rnd() % (TIMER_LEVELS + 1))));
	ck_assert_uint_eq(wheel.count, n);
	steps = drive_to_empty(UINT64_MAX - 1);
	for (size_t i = 0; i < n; i++) {
		REQUIRE((P.fires[i]) == (1));
		/* Event by event, each fires exactly at its tick: d <= t < d + 1 ms. */
		REQUIRE((P.fired_at[i]) == (ceil_ms(P.e[i].deadline_ns)));
		REQUIRE((P.fired_at[i]) >= (P.e[i].deadline_ns));
		REQUIRE((P.fired_at[i]) < (P.e[i].deadline_ns + MS));
	}
	ck_assert_int_eq(order_violations, 0);
	ck_assert_int_eq(bound_violations, 0);
	ck_assert_uint_eq(wheel.count, 0);
	for (unsigned l = 0; l < TIMER_LEVELS; l++)
		REQUIRE((wheel.occupied[l]) == (0));
	printf("timer: 100000 random timers over 0..97 days fired in %ld advances\n", steps);
	report_levels("next_deadline stepping");
	pop_free();
}
END_TEST

/* Random advance steps: each entry fires at the first advance at or after its tick. */
START_TEST(random_steps_fire_at_first_advance_past_tick)
{
	size_t n = 100000;
	uint64_t now = 777 * MS + 3;
	long steps = 0;
	size_t fired = 0;

	rng_state = 2;
	pop_alloc(n);
	wheel_start(now);
	for (size_t i = 0; i < n; i++)
		insert(i, deadline_on_level(now, (unsigned)(rnd() % (TIMER_LEVELS + 1))));
	while (wheel.count) {
		/* Steps of 1 ns to 2^k ms, k uniform: dense and sparse stretches. */
		uint64_t step = 1 + rnd() % ((1ull << (rnd() % 23)) * MS);

		now += step;
		fired += advance(now);
		steps++;
	}
	ck_assert_uint_eq(fired, n);
	for (size_t i = 0; i < n; i++)
		REQUIRE((P.fires[i]) == (1));
	ck_assert_int_eq(order_violations, 0);
	ck_assert_int_eq(bound_violations, 0);
	printf("timer: 100000 timers, %ld random advances: every one fired at the first advance past its tick\n",
	       steps);
	pop_free();
}
END_TEST

/*
 * Advancing every millisecond: at the boundaries, lateness < 1 ms on every
 * level; at a random phase, < 2 ms (1 ms of rounding plus the 1 ms step).
 */
START_TEST(ms_steps_lateness_bound)
{
	size_t n = 20000;

	for (int phase = 0; phase < 2; phase++) {
		uint64_t off = phase ? 1 + rnd() % (MS - 1) : 0;
		uint64_t now = 1000 * MS + off, bound = phase ? 2 * MS : MS;

		rng_state = 3 + (uint64_t)phase;
		pop_alloc(n);
		wheel_start(now);
		/* Levels 0..2 (up to 262 s) so that 1 ms steps reach them all. */
		for (size_t i = 0; i < n; i++)
			insert(i, deadline_on_level(now, (unsigned)(rnd() % 3)));
		while (wheel.count) {
			now += MS;
			advance(now);
		}
		for (size_t i = 0; i < n; i++) {
			REQUIRE((P.fires[i]) == (1));
			REQUIRE((P.fired_at[i]) >= (P.e[i].deadline_ns));
			REQUIRE((P.fired_at[i] - P.e[i].deadline_ns) < (bound));
		}
		REQUIRE((order_violations) == (0));
		REQUIRE((bound_violations) == (0));
		report_levels(phase ? "1 ms steps, random phase" : "1 ms steps at boundaries");
		pop_free();
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Cancel                                                                  */

static void cancel_i(size_t i)
{
	bool was = !P.cancelled[i] && !P.fires[i];

	REQUIRE(timer_wheel_cancel(&wheel, &P.e[i]) == was);
	if (was)
		P.cancelled[i] = 1;
	REQUIRE(timer_entry_state(&P.e[i]) == (was ? TIMER_IDLE :
					       P.fires[i] ? TIMER_FIRED : TIMER_IDLE));
}

/* A callback that cancels other entries: the next one (often due at the
 * same tick, so on the pending list) and a random one. */
static void cancelling_cb(void *arg)
{
	size_t i = (size_t)(uintptr_t)arg;

	fire_cb(arg);
	if (i + 1 < P.n)
		cancel_i(i + 1);
	cancel_i(rnd() % P.n);
}

START_TEST(cancelled_entries_never_fire)
{
	size_t n = 100000, ncancel = 0, cascaded_cancels = 0;
	uint64_t start = 42 * MS;
	uint64_t now;

	rng_state = 4;
	pop_alloc(n);
	wheel_start(start);
	for (size_t i = 0; i < n; i++) {
		/* Clusters of 4 entries on one tick, so that cancels hit the pending list. */
		uint64_t d = (i % 4) ? P.e[i - 1].deadline_ns
				     : deadline_on_level(start, (unsigned)(rnd() % (TIMER_LEVELS + 1)));

		insert(i, d);
		if (i % 16 == 0)
			P.e[i].u.cb.fn = cancelling_cb;
	}
	/* A quarter at once. */
	for (size_t i = 0; i < n; i += 4)
		cancel_i(i + 1);
	/* Then, while advancing in random steps, more cancels; some of entries
	 * that have cascaded down from the level they were filed on. */
	now = start;
	while (wheel.count) {
		now += 1 + rnd() % ((1ull << (rnd() % 23)) * MS);
		advance(now);
		for (int k = 0; k < 20; k++) {
			size_t i = rnd() % n;

			if (!P.cancelled[i] && !P.fires[i] && P.e[i].level < P.level0[i])
				cascaded_cancels++;
			cancel_i(i);
		}
	}
	for (size_t i = 0; i < n; i++) {
		ncancel += P.cancelled[i];
		REQUIRE(P.fires[i] + P.cancelled[i] == 1);	/* exactly one of the two */
	}
	ck_assert_int_eq(order_violations, 0);
	ck_assert_int_eq(bound_violations, 0);
	for (unsigned l = 0; l < TIMER_LEVELS; l++)
		REQUIRE((wheel.occupied[l]) == (0));
	ck_assert_ptr_null(wheel.overflow);
	ck_assert_ptr_null(wheel.pending);
	printf("timer: cancel: %zu of %zu cancelled (%zu after cascading down), none fired\n",
	       ncancel, n, cascaded_cancels);
	ck_assert_uint_gt(cascaded_cancels, 0);
	pop_free();
}
END_TEST

/* Cancel each entry of a slot in the middle of its cascade, level by level. */
START_TEST(cancel_during_cascade_every_level)
{
	rng_state = 5;
	for (unsigned l = 1; l < TIMER_LEVELS; l++) {
		uint64_t span = (1ull << (6 * l)) * MS;		/* level-l slot */
		uint64_t start = 3 * span * 64 + 17;		/* inside a level-(l+1) block */
		size_t n = 64;

		pop_alloc(n);
		wheel_start(start);
		/* All in one level-l slot, ticks spread over it. */
		uint64_t base = (start / span + 2) * span;

		for (size_t i = 0; i < n; i++) {
			insert(i, base + rnd_range(0, span));
			REQUIRE((P.e[i].level) == (l));
		}
		/* Process the cascade of that slot (advance to its start). */
		advance(base);
		for (size_t i = 0; i < n; i++)
			if (!P.fires[i])
				REQUIRE(P.e[i].level < l);	/* moved down */
		/* Cancel every other entry right after the cascade. */
		for (size_t i = 0; i < n; i += 2)
			cancel_i(i);
		drive_to_empty(UINT64_MAX - 1);
		for (size_t i = 0; i < n; i++) {
			REQUIRE((P.fires[i] + P.cancelled[i]) == (1));
			if (P.fires[i])
				REQUIRE((P.fired_at[i]) == (ceil_ms(P.e[i].deadline_ns)));
		}
		REQUIRE((wheel.count) == (0));
		pop_free();
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Cascading across every level boundary                                   */

START_TEST(cascade_across_every_level_boundary)
{
	/* Wheel times: aligned, just before boundaries, odd. */
	const uint64_t starts[] = {
		0, 1, 63 * MS, 64 * MS - 1, 4095 * MS + 5, (1ull << 18) * MS - 1,
		(1ull << 24) * MS - MS, (1ull << 30) * MS - 3 * MS, 12345678901234567ull,
	};
	size_t checked = 0;

	for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
		uint64_t start = starts[s];
		size_t n = 0;

		pop_alloc(6 * 8 * 2);
		wheel_start(start);
		for (unsigned l = 1; l <= TIMER_LEVELS; l++) {
			uint64_t span = (1ull << (6 * l)) * MS;
			/* The next two level-l boundaries after the wheel's tick. */
			for (int k = 1; k <= 2; k++) {
				uint64_t b = (start / MS / (span / MS) + (uint64_t)k) * span;
				const uint64_t ds[] = { b - MS, b - 1, b, b + 1, b + MS, b + MS + 1, b + span - 1, b + span };

				for (size_t j = 0; j < 8; j++) {
					if (ds[j] <= start + MS)
						continue;
					insert(n++, ds[j]);
				}
			}
		}
		P.n = n;
		drive_to_empty(UINT64_MAX - 1);
		for (size_t i = 0; i < n; i++) {
			ck_assert_msg(P.fires[i] == 1, "start %zu entry %zu fired %d times", s, i, P.fires[i]);
			REQUIRE((P.fired_at[i]) == (ceil_ms(P.e[i].deadline_ns)));
		}
		REQUIRE((order_violations) == (0));
		checked += n;
		pop_free();
	}
	printf("timer: %zu deadlines around level boundaries fired at their tick\n", checked);
}
END_TEST

/* The top level is a ring: deadlines that cross a 2^30 ms epoch. */
START_TEST(top_level_ring_across_epoch)
{
	uint64_t range = TIMER_RANGE * MS;
	uint64_t start = 7 * range - 5 * MS - 1;
	size_t n = 4096;

	rng_state = 6;
	pop_alloc(n);
	wheel_start(start);
	for (size_t i = 0; i < n; i++) {
		/* Up to just under one range ahead: level 4 or below, never overflow. */
		uint64_t d = start + rnd_range(2 * MS, range - 2 * MS);

		insert(i, d);
		REQUIRE((P.e[i].level) < (TIMER_LEVELS));
	}
	drive_to_empty(UINT64_MAX - 1);
	for (size_t i = 0; i < n; i++) {
		REQUIRE((P.fires[i]) == (1));
		REQUIRE((P.fired_at[i]) == (ceil_ms(P.e[i].deadline_ns)));
	}
	ck_assert_int_eq(order_violations, 0);
	pop_free();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Overflow                                                                */

START_TEST(overflow_list_beyond_the_wheel)
{
	uint64_t range = TIMER_RANGE * MS;	/* 12.4 days */
	uint64_t start = 1000 * MS;
	const uint64_t ahead[] = {
		range - MS - 1,			/* last on the wheel */
		range + MS,			/* first beyond */
		range + 1,
		30ull * 86400 * 1000 * MS,	/* 30 days */
		365ull * 86400 * 1000 * MS,	/* a year */
		3 * range + 12345,
		3 * range + 12345,		/* same tick twice */
	};
	size_t n = sizeof(ahead) / sizeof(ahead[0]);
	struct blitz_timer_entry never;

	pop_alloc(n);
	wheel_start(start);
	for (size_t i = 0; i < n; i++) {
		insert(i, start + ahead[i]);
		if (ahead[i] >= range + MS)
			REQUIRE((P.e[i].level) == (TIMER_LEVEL_OVERFLOW));
	}
	ck_assert_uint_eq(P.e[0].level, TIMER_LEVELS - 1);
	/* UINT64_MAX: on the overflow list for ever, never fires, cancels. */
	timer_entry_init_callback(&never, UINT64_MAX, fire_cb, (void *)(uintptr_t)0);
	ck_assert(timer_wheel_insert(&wheel, &never));
	ck_assert_uint_eq(never.level, TIMER_LEVEL_OVERFLOW);

	drive_to_empty(start + 2 * 365ull * 86400 * 1000 * MS);
	for (size_t i = 0; i < n; i++) {
		REQUIRE((P.fires[i]) == (1));
		REQUIRE((P.fired_at[i]) == (ceil_ms(P.e[i].deadline_ns)));
	}
	ck_assert_int_eq(order_violations, 0);
	ck_assert_uint_eq(wheel.count, 1);
	ck_assert_uint_eq(advance(UINT64_MAX), 0);
	ck_assert(timer_wheel_cancel(&wheel, &never));
	ck_assert_uint_eq(wheel.count, 0);
	ck_assert_uint_eq(timer_wheel_next_deadline(&wheel), UINT64_MAX);
	pop_free();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* next_deadline                                                           */

static uint64_t brute_min_due(void)
{
	uint64_t m = UINT64_MAX;

	for (size_t i = 0; i < P.n; i++)
		if (timer_entry_state(&P.e[i]) == TIMER_REGISTERED && ceil_ms(P.e[i].deadline_ns) < m)
			m = ceil_ms(P.e[i].deadline_ns);
	return m;
}

START_TEST(next_deadline_is_a_tight_lower_bound)
{
	size_t n = 2000;
	uint64_t now = 3 * MS;
	long exact = 0, bounds = 0;

	rng_state = 7;
	pop_alloc(n);
	wheel_start(now);
	ck_assert_uint_eq(timer_wheel_next_deadline(&wheel), UINT64_MAX);
	/* Levels 0..4: the overflow list adds steps of its own (one per entry
	 * coming within range); drive_to_empty() covers it elsewhere. */
	for (size_t i = 0; i < n; i++)
		insert(i, deadline_on_level(now, (unsigned)(rnd() % TIMER_LEVELS)));
	while (wheel.count) {
		uint64_t nd = timer_wheel_next_deadline(&wheel), m = brute_min_due();
		int steps = 0;
		size_t i = 0;

		/* A lower bound, exact when the earliest entry is on level 0. */
		REQUIRE((nd) <= (m));
		for (i = 0; i < n; i++)
			if (timer_entry_state(&P.e[i]) == TIMER_REGISTERED && ceil_ms(P.e[i].deadline_ns) == m)
				break;
		if (P.e[i].level == 0) {
			REQUIRE((nd) == (m));
			exact++;
		} else {
			bounds++;
		}
		/* Following next_deadline reaches the earliest entry in <= levels + 1 steps. */
		while (!advance(timer_wheel_next_deadline(&wheel)))
			steps++;
		REQUIRE((steps) <= (TIMER_LEVELS + 1));
		REQUIRE((fake_now) == (m));
		/* Cancel a few, so next_deadline sees emptied slots. */
		for (int k = 0; k < 3; k++) {
			size_t j = rnd() % n;

			if (timer_entry_state(&P.e[j]) == TIMER_REGISTERED)
				cancel_i(j);
		}
	}
	printf("timer: next_deadline exact %ld times (level 0), a lower bound %ld times\n",
	       exact, bounds);
	pop_free();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Entries: due on insert, wakers, wheel-owned entries, destroy            */

static int woken, dropped;
static void cw_wake(const void *d) { woken++; }
static void cw_drop(const void *d) { dropped++; }
static struct blitz_waker cw_clone(const void *d);
static const struct blitz_waker_vtable count_vt = {
	.wake = cw_wake, .wake_by_ref = cw_wake, .clone = cw_clone, .drop = cw_drop,
};
static struct blitz_waker cw_clone(const void *d)
{
	return (struct blitz_waker){ .data = d, .vtable = &count_vt };
}

static int heap_calls;
static void heap_cb(void *arg) { heap_calls++; }

START_TEST(entries_due_wakers_heap_and_destroy)
{
	struct blitz_timer_entry a, b, c;
	struct blitz_waker wk = { .data = NULL, .vtable = &count_vt };

	woken = dropped = heap_calls = 0;
	wheel_start(100 * MS + 5);
	/* Due on insert (the wheel's tick is past it): refused, not registered. */
	timer_entry_init_waker(&a, 100 * MS, wk);
	ck_assert(!timer_wheel_insert(&wheel, &a));
	ck_assert_uint_eq(timer_entry_state(&a), TIMER_IDLE);
	timer_entry_init_waker(&a, 100 * MS + 6, wk);	/* same tick as now, rounded up: 101 ms */
	ck_assert(timer_wheel_insert(&wheel, &a));
	ck_assert_uint_eq(timer_wheel_next_deadline(&wheel), 101 * MS);
	/* Wakers are consumed by the fire. */
	ck_assert_uint_eq(advance(101 * MS - 1), 0);
	ck_assert_uint_eq(advance(101 * MS), 1);
	ck_assert_int_eq(woken, 1);
	ck_assert_ptr_null(a.u.waker.vtable);
	ck_assert_uint_eq(timer_entry_state(&a), TIMER_FIRED);
	ck_assert(!timer_wheel_cancel(&wheel, &a));	/* fired: nothing to cancel */
	/* Cancel keeps the waker in the entry for the caller to drop. */
	timer_entry_init_waker(&b, 200 * MS, wk);
	ck_assert(timer_wheel_insert(&wheel, &b));
	ck_assert(timer_wheel_cancel(&wheel, &b));
	ck_assert_ptr_eq(b.u.waker.vtable, &count_vt);
	ck_assert(!timer_wheel_cancel(&wheel, &b));
	/* Wheel-owned entries: freed after firing, or by destroy (ASan checks). */
	for (int i = 0; i < 10; i++) {
		struct blitz_timer_entry *h = timer_entry_new_callback((uint64_t)(150 + i * 1000) * MS,
								       heap_cb, NULL);

		ck_assert_ptr_nonnull(h);
		REQUIRE(timer_wheel_insert(&wheel, h));
	}
	ck_assert_uint_eq(advance(160 * MS), 1);
	ck_assert_int_eq(heap_calls, 1);
	/* Destroy drops the rest without firing: wakers released, heap freed. */
	timer_entry_init_waker(&c, 10 * 86400 * 1000 * MS, wk);
	ck_assert(timer_wheel_insert(&wheel, &c));
	ck_assert_uint_eq(wheel.count, 10);
	timer_wheel_destroy(&wheel);
	ck_assert_uint_eq(wheel.count, 0);
	ck_assert_int_eq(heap_calls, 1);
	ck_assert_int_eq(dropped, 1);
	ck_assert_int_eq(woken, 1);
	ck_assert_uint_eq(timer_entry_state(&c), TIMER_FIRED);
}
END_TEST

/* A callback may insert (re-arm) entries while the wheel advances. */
static struct blitz_timer_entry rearm;
static int rearm_fires;
static void rearm_cb(void *arg)
{
	rearm_fires++;
	if (rearm_fires < 100) {
		uint64_t d = rearm.deadline_ns;	/* fired: ours to reuse */

		timer_entry_init_callback(&rearm, d + 7 * MS + 300, rearm_cb, NULL);
		REQUIRE(timer_wheel_insert(&wheel, &rearm));
	}
}

START_TEST(callbacks_may_rearm)
{
	rearm_fires = 0;
	wheel_start(0);
	timer_entry_init_callback(&rearm, 5 * MS, rearm_cb, NULL);
	ck_assert(timer_wheel_insert(&wheel, &rearm));
	/* One big advance: every re-armed entry that falls within it fires too. */
	advance(5 * MS + 99 * 8 * MS);
	ck_assert_int_eq(rearm_fires, 100);
	ck_assert_uint_eq(wheel.count, 0);
}
END_TEST

static Suite *timer_suite(void)
{
	Suite *s = suite_create("timer");
	TCase *tc = TCASE("wheel", 60);

	tcase_add_test(tc, random_100k_fire_in_order_at_their_tick);
	tcase_add_test(tc, random_steps_fire_at_first_advance_past_tick);
	tcase_add_test(tc, ms_steps_lateness_bound);
	tcase_add_test(tc, cancelled_entries_never_fire);
	tcase_add_test(tc, cancel_during_cascade_every_level);
	tcase_add_test(tc, cascade_across_every_level_boundary);
	tcase_add_test(tc, top_level_ring_across_epoch);
	tcase_add_test(tc, overflow_list_beyond_the_wheel);
	tcase_add_test(tc, next_deadline_is_a_tight_lower_bound);
	tcase_add_test(tc, entries_due_wakers_heap_and_destroy);
	tcase_add_test(tc, callbacks_may_rearm);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("timer", timer_suite)
