// SPDX-License-Identifier: MIT
/*
 * test_time.c - <blitz/time.h> end to end on the runtime: sleeps are never
 * early and not absurdly late (the lateness distribution is printed, not
 * asserted: the machine is shared and noisy; the tick a timer fires in is
 * checked exactly, on a virtual clock, in test_timer.c), many sleepers on two
 * workers, intervals and their skip policy, timeouts, cancelling a sleeping
 * task, shutdown with sleepers, and the wake-worker-0 logic: a timer
 * registered from a non-worker thread, or from worker 1, while worker 0 is
 * parked fires on time.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <blitz.h>
#include "../../core/sched/park.h"
#include "../../core/sched/runtime.h"
#include "../../core/time/timer.h"
#include "suites.h"

#define MS BLITZ_NSEC_PER_MSEC

/*
 * "Not absurdly late": a hang guard, not a precision check.  A lost wake of
 * worker 0 costs at most its 10 ms park timeout, so no lateness bound
 * catches one; the wake is checked by counting unparks below.  The bound
 * only catches a timer left behind for seconds (10 s: 2 s was passed by a
 * 20 ms timeout at load 50, 2.17 s); it is scaled like Check's timeouts,
 * so a slow or busy machine never trips it.
 */
static uint64_t late_limit(void)
{
	return (uint64_t)((double)(10000 * MS) * test_timeout_scale());
}
#define LATE_LIMIT late_limit()

#define new_rt test_runtime

static bool sanitized(void)
{
	return test_timeout_scale() > 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Print min / p50 / p90 / p99 / max of @n lateness samples (sorts them). */
static void report(const char *what, uint64_t *late, size_t n)
{
	qsort(late, n, sizeof(*late), cmp_u64);
	printf("time: %s: %zu samples, late (us): min %llu p50 %llu p90 %llu p99 %llu max %llu\n",
	       what, n, (unsigned long long)late[0] / 1000,
	       (unsigned long long)late[n / 2] / 1000,
	       (unsigned long long)late[n * 9 / 10] / 1000,
	       (unsigned long long)late[n * 99 / 100] / 1000,
	       (unsigned long long)late[n - 1] / 1000);
	fflush(stdout);
}

/* A hang guard's bound, scaled like Check's timeouts. */
static uint64_t scaled_ns(uint64_t ns)
{
	return (uint64_t)((double)ns * test_timeout_scale());
}

/* Poll until *@c reaches @n; @limit_ns (scaled) only guards a hang. */
static void wait_count(_Atomic long *c, long n, uint64_t limit_ns)
{
	uint64_t end = blitz_now_ns() + scaled_ns(limit_ns);

	while (atomic_load(c) < n) {
		ck_assert_msg(blitz_now_ns() < end, "only %ld of %ld done", atomic_load(c), n);
		usleep(1000);
	}
}

/* ---------------------------------------------------------------------- */
/* Sleepers                                                                */

static uint64_t *lates;
static _Atomic long nlate, early, done;

struct sleeper {
	struct blitz_co co;
	struct blitz_sleep nap;
	uint64_t ms;		/* sleep length */
	int rounds, i;
};

static void record(const struct blitz_sleep *s)
{
	uint64_t now = blitz_now_ns(), d = blitz_sleep_deadline(s);

	if (now < d)
		atomic_fetch_add(&early, 1);
	else
		lates[atomic_fetch_add(&nlate, 1)] = now - d;
}

static enum blitz_poll sleeper_poll(void *arg, struct blitz_cx *cx)
{
	struct sleeper *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->rounds; s->i++) {
		blitz_sleep_init(&s->nap, s->ms * MS);
		BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
		record(&s->nap);
	}
	atomic_fetch_add(&done, 1);
	BLITZ_CO_END(&s->co);
}

static void sleeper_drop(void *arg)
{
	blitz_sleep_cancel(&((struct sleeper *)arg)->nap);
}
static const struct blitz_task_vtable sleeper_vt = BLITZ_TASK_VTABLE(sleeper_poll, sleeper_drop);

static void reset_samples(size_t n)
{
	free(lates);
	lates = calloc(n, sizeof(*lates));
	ck_assert_ptr_nonnull(lates);
	atomic_store(&nlate, 0);
	atomic_store(&early, 0);
	atomic_store(&done, 0);
}

static void check_samples(const char *what)
{
	long n = atomic_load(&nlate);

	ck_assert_int_eq(atomic_load(&early), 0);
	report(what, lates, (size_t)n);
	ck_assert_msg(lates[n - 1] < LATE_LIMIT, "%s: a sleep was %llu ms late", what,
		      (unsigned long long)(lates[n - 1] / MS));
}

START_TEST(sleeps_1_to_50_ms_never_early)
{
	unsigned workers[] = { 1, 2 };

	for (int w = 0; w < 2; w++) {
		struct blitz_runtime *rt = new_rt(workers[w]);
		char what[64];

		/* 50 tasks at once, each sleeping d ms three times, d = 1..50. */
		reset_samples(150);
		for (int d = 1; d <= 50; d++) {
			struct sleeper s = { .ms = (uint64_t)d, .rounds = 3 };

			ck_assert_int_eq(blitz_spawn_detached(rt, &sleeper_vt, &s, sizeof(s)), 0);
		}
		wait_count(&done, 50, 10 * 1000 * MS);
		snprintf(what, sizeof(what), "sleeps 1..50 ms x3, %u worker%s", workers[w],
			 workers[w] > 1 ? "s" : "");
		check_samples(what);
		ck_assert_uint_eq(runtime_timer_count(rt), 0);
		blitz_runtime_free(rt);
	}
}
END_TEST

/* One task, one sleep at a time: worker 0 parks until each deadline. */
START_TEST(sequential_sleeps_on_an_idle_runtime)
{
	struct blitz_runtime *rt = new_rt(2);

	reset_samples(100);
	for (int d = 1; d <= 20; d++) {
		struct sleeper s = { .ms = (uint64_t)d, .rounds = 5 };

		ck_assert_int_eq(blitz_block_on(rt, &sleeper_vt, &s, sizeof(s)), 0);
	}
	check_samples("sequential sleeps 1..20 ms x5, idle runtime");
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(many_concurrent_sleepers_on_two_workers)
{
	long n = sanitized() ? 1000 : 10000;
	struct blitz_runtime *rt = new_rt(2);
	uint64_t x = 12345;

	reset_samples((size_t)n);
	for (long i = 0; i < n; i++) {
		struct sleeper s = { .rounds = 1 };

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		s.ms = 1 + x % 100;
		ck_assert_int_eq(blitz_spawn_detached(rt, &sleeper_vt, &s, sizeof(s)), 0);
	}
	wait_count(&done, n, 60 * 1000 * MS);
	check_samples(sanitized() ? "1000 sleepers of 1..100 ms" : "10000 sleepers of 1..100 ms");
	ck_assert_uint_eq(runtime_timer_count(rt), 0);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(zero_and_past_sleeps_complete_at_once)
{
	struct blitz_runtime *rt = new_rt(1);
	struct sleeper s = { .ms = 0, .rounds = 3 };

	reset_samples(3);
	ck_assert_int_eq(blitz_block_on(rt, &sleeper_vt, &s, sizeof(s)), 0);
	ck_assert_int_eq(atomic_load(&nlate), 3);
	ck_assert_int_eq(atomic_load(&early), 0);
	ck_assert_uint_eq(runtime_timer_count(rt), 0);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Interval                                                                */

struct ticker {
	struct blitz_co co;
	struct blitz_interval iv;
	uint64_t period, start, stall_ns;
	int n, i;
	uint64_t at[32];	/* when each tick completed */
	uint64_t sched[32];	/* its scheduled time (last_tick_ns) */
	uint64_t missed[32];	/* grid points skipped up to it (iv.missed then) */
};

static enum blitz_poll ticker_poll(void *arg, struct blitz_cx *cx)
{
	struct ticker *t = arg;

	BLITZ_CO_BEGIN(&t->co);
	blitz_interval_init(&t->iv, t->period);
	t->start = blitz_sleep_deadline(&t->iv.sleep);
	for (t->i = 0; t->i < t->n; t->i++) {
		BLITZ_AWAIT(&t->co, blitz_interval_tick_poll(&t->iv, cx));
		t->at[t->i] = blitz_now_ns();
		t->sched[t->i] = t->iv.last_tick_ns;
		t->missed[t->i] = t->iv.missed;
		if (t->i == 0 && t->stall_ns) {
			/* Hog the worker past several ticks. */
			while (blitz_now_ns() < t->start + t->stall_ns)
				;
		}
	}
	BLITZ_CO_END(&t->co);
}

static void ticker_drop(void *arg)
{
	blitz_interval_cancel(&((struct ticker *)arg)->iv);
}
static const struct blitz_task_vtable ticker_vt = BLITZ_TASK_VTABLE(ticker_poll, ticker_drop);

START_TEST(interval_ticks_on_its_grid)
{
	struct blitz_runtime *rt = new_rt(2);
	struct ticker t = { .period = 5 * MS, .n = 20 };
	uint64_t late[20];

	ck_assert_int_eq(blitz_block_on(rt, &ticker_vt, &t, sizeof(t)), 0);
	ck_assert_uint_eq(t.iv.ticks, 20);
	for (int i = 0; i < 20; i++) {
		/* On the grid (skips allowed on a loaded machine), never early. */
		ck_assert_uint_eq((t.sched[i] - t.start) % t.period, 0);
		ck_assert_uint_ge(t.at[i], t.sched[i]);
		if (i)
			ck_assert_uint_gt(t.sched[i], t.sched[i - 1]);
		late[i] = t.at[i] - t.sched[i];
	}
	ck_assert_uint_eq(t.sched[0], t.start);		/* the first tick is immediate */
	printf("time: interval 5 ms x20: %llu grid points skipped\n",
	       (unsigned long long)t.iv.missed);
	report("interval 5 ms ticks", late, 20);
	ck_assert_uint_lt(late[19], LATE_LIMIT);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(interval_skips_missed_ticks)
{
	struct blitz_runtime *rt = new_rt(1);
	struct ticker t = { .period = 10 * MS, .n = 3, .stall_ns = 35 * MS };

	ck_assert_int_eq(blitz_block_on(rt, &ticker_vt, &t, sizeof(t)), 0);
	/*
	 * Tick 0 at start; the task stalls until start + 35 ms; the tick
	 * scheduled at +10 completes once, at once (no burst for +20, +30);
	 * the next is the first grid point after that: +40 (later if the
	 * machine delayed the poll past it).  The skips are those counted
	 * up to tick 1: a busy machine may also poll tick 2 a period late,
	 * which skips more after it.
	 */
	ck_assert_uint_eq(t.sched[0], t.start);
	ck_assert_uint_eq(t.sched[1], t.start + t.period);
	ck_assert_uint_ge(t.at[1], t.start + t.stall_ns);
	ck_assert_uint_ge(t.missed[1], 2);
	ck_assert_uint_eq(t.sched[2], t.start + (2 + t.missed[1]) * t.period);
	ck_assert_uint_ge(t.at[2], t.sched[2]);
	printf("time: interval 10 ms, stalled 35 ms: ticks at +%llu, +%llu, +%llu ms; %llu skipped\n",
	       (unsigned long long)(t.sched[0] - t.start) / MS,
	       (unsigned long long)(t.sched[1] - t.start) / MS,
	       (unsigned long long)(t.sched[2] - t.start) / MS,
	       (unsigned long long)t.iv.missed);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Timeout                                                                 */

static enum blitz_poll never_ready(void *arg, struct blitz_cx *cx)
{
	return BLITZ_PENDING;	/* and registers no waker: only the timer can help */
}

struct waiter {
	struct blitz_co co;
	struct blitz_timeout to;
	struct blitz_oneshot ch;
	uint64_t limit, value, start, end;
	int err;
	bool use_channel;
	struct blitz_task *sender;
};

static enum blitz_poll recv_adapter(void *arg, struct blitz_cx *cx)
{
	struct waiter *w = arg;

	return blitz_oneshot_recv_poll(&w->ch, cx, &w->value, &w->err);
}

struct sender {
	struct blitz_co co;
	struct blitz_sleep nap;
	struct blitz_oneshot *ch;
};

static enum blitz_poll sender_poll(void *arg, struct blitz_cx *cx)
{
	struct sender *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	blitz_sleep_init(&s->nap, 5 * MS);
	BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
	ck_assert_int_eq(blitz_oneshot_send(s->ch, 42), 0);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable sender_vt = BLITZ_TASK_VTABLE(sender_poll, NULL);

static enum blitz_poll waiter_poll(void *arg, struct blitz_cx *cx)
{
	struct waiter *w = arg;

	BLITZ_CO_BEGIN(&w->co);
	w->start = blitz_now_ns();
	blitz_timeout_init(&w->to, w->limit);
	if (w->use_channel) {
		/* The state was copied into the task: point the sender at our channel. */
		struct sender s = { .ch = &w->ch };

		blitz_oneshot_init(&w->ch);
		w->sender = blitz_spawn(NULL, &sender_vt, &s, sizeof(s));
		ck_assert_ptr_nonnull(w->sender);
		BLITZ_AWAIT(&w->co, blitz_timeout_poll(&w->to, recv_adapter, w, cx));
		BLITZ_AWAIT(&w->co, blitz_join_poll(w->sender, cx));
		blitz_task_release(w->sender);
	} else {
		BLITZ_AWAIT(&w->co, blitz_timeout_poll(&w->to, never_ready, NULL, cx));
	}
	w->end = blitz_now_ns();
	BLITZ_CO_END(&w->co);
}

static void waiter_drop(void *arg)
{
	blitz_timeout_cancel(&((struct waiter *)arg)->to);
}
static const struct blitz_task_vtable waiter_vt = BLITZ_TASK_VTABLE(waiter_poll, waiter_drop);

START_TEST(timeout_around_a_never_ready_awaitable)
{
	struct blitz_runtime *rt = new_rt(2);
	struct waiter w = { .limit = 20 * MS };

	ck_assert_int_eq(blitz_block_on(rt, &waiter_vt, &w, sizeof(w)), 0);
	ck_assert_int_eq(w.to.timed_out, 1);
	ck_assert_uint_ge(w.end - w.start, 20 * MS);
	ck_assert_uint_lt(w.end - w.start, 20 * MS + LATE_LIMIT);
	printf("time: 20 ms timeout fired after %llu us\n",
	       (unsigned long long)(w.end - w.start) / 1000);
	ck_assert_uint_eq(runtime_timer_count(rt), 0);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(timeout_around_an_awaitable_that_completes_in_time)
{
	struct blitz_runtime *rt = new_rt(2);
	/* 400 times the sender's sleep (scaled): it completes long before. */
	struct waiter w = { .limit = (uint64_t)(2000 * MS * test_timeout_scale()),
			    .use_channel = true };

	ck_assert_int_eq(blitz_block_on(rt, &waiter_vt, &w, sizeof(w)), 0);
	ck_assert_int_eq(w.to.timed_out, 0);
	ck_assert_int_eq(w.err, 0);
	ck_assert_uint_eq(w.value, 42);
	ck_assert_uint_ge(w.end - w.start, 5 * MS);	/* the sender slept 5 ms */
	ck_assert_uint_lt(w.end - w.start, w.limit);
	/* The 2 s limit was cancelled, not left in the wheel. */
	ck_assert_uint_eq(runtime_timer_count(rt), 0);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Cancel and shutdown                                                     */

static _Atomic long drops;

struct long_nap {
	struct blitz_co co;
	struct blitz_sleep nap;
	bool cancel_in_drop;
	_Atomic bool registered;
};

static enum blitz_poll long_nap_poll(void *arg, struct blitz_cx *cx)
{
	struct long_nap *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	blitz_sleep_init(&s->nap, 10 * 1000 * MS);
	atomic_store(&s->registered, true);
	BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
	ck_abort_msg("a 10 s sleep completed");
	BLITZ_CO_END(&s->co);
}

static void long_nap_drop(void *arg)
{
	struct long_nap *s = arg;

	if (s->cancel_in_drop)
		blitz_sleep_cancel(&s->nap);
	atomic_fetch_add(&drops, 1);
}
static const struct blitz_task_vtable long_nap_vt = BLITZ_TASK_VTABLE(long_nap_poll, long_nap_drop);

START_TEST(cancel_a_sleeping_task_leaks_nothing)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[16];
	struct long_nap s = { .cancel_in_drop = true };

	atomic_store(&drops, 0);
	for (int i = 0; i < 16; i++) {
		t[i] = blitz_spawn(rt, &long_nap_vt, &s, sizeof(s));
		ck_assert_ptr_nonnull(t[i]);
	}
	for (uint64_t end = blitz_now_ns() + scaled_ns(5000 * MS); runtime_timer_count(rt) < 16;) {
		ck_assert(blitz_now_ns() < end);
		usleep(1000);
	}
	for (int i = 0; i < 16; i++) {
		blitz_task_cancel(t[i]);
		ck_assert_int_eq(blitz_join(t[i]), -ECANCELED);
		blitz_task_release(t[i]);	/* the last reference: ASan sees a leak if the wheel kept one */
	}
	ck_assert_int_eq(atomic_load(&drops), 16);
	ck_assert_uint_eq(runtime_timer_count(rt), 0);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(shutdown_releases_sleepers)
{
	struct blitz_runtime *rt = new_rt(2);
	struct long_nap with = { .cancel_in_drop = true }, without = { .cancel_in_drop = false };

	atomic_store(&drops, 0);
	/* Some tasks cancel their sleep in drop, some forget: shutdown drops
	 * what is left in the wheel, releasing the tasks (ASan: no leak). */
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(blitz_spawn_detached(rt, &long_nap_vt, &with, sizeof(with)), 0);
		ck_assert_int_eq(blitz_spawn_detached(rt, &long_nap_vt, &without, sizeof(without)), 0);
	}
	for (uint64_t end = blitz_now_ns() + scaled_ns(5000 * MS); runtime_timer_count(rt) < 16;) {
		ck_assert(blitz_now_ns() < end);
		usleep(1000);
	}
	blitz_runtime_free(rt);
	ck_assert_int_eq(atomic_load(&drops), 16);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Waking worker 0: a timer registered while it is parked                  */

/* On its futex, or in its own io_uring ring (PARK_PARKED_IO). */
static bool worker_parked(struct blitz_runtime *rt, unsigned i)
{
	uint32_t s = atomic_load(&rt->workers[i].park.futex);

	return s == PARK_PARKED || s == PARK_PARKED_IO;
}

static bool wait_parked(struct blitz_runtime *rt, unsigned i, uint64_t limit_ns)
{
	uint64_t end = blitz_now_ns() + scaled_ns(limit_ns);

	while (!worker_parked(rt, i))
		if (blitz_now_ns() > end)
			return false;
	return true;
}

/*
 * A wake that the insert owed worker 0, told apart from one it did not owe
 * without assuming how fast anything runs.  The test reads timer_wake_at
 * (w) just before the insert and the clock (t) just after it.  Parked
 * worker 0 wakes by itself no earlier than w (its futex or ring timeout is
 * measured from before it published w, on the same monotonic clock); so
 * if t < w it was still parked when the inserter loaded timer_wake_at,
 * after our load and before our clock read, and the inserter read w (or a
 * later park's value, also later than the due time).  If w is also later
 * than the timer's due time, the insert must have unparked worker 0.  A
 * trial with w <= due (worker 0 awake, or about to wake anyway) or t >= w
 * (the test thread was descheduled past worker 0's timeout) proves nothing
 * and is not counted.
 */
struct insert_view {
	uint64_t wake_at, due, after;
};

static bool insert_owed_unpark(const struct insert_view *v)
{
	return v->wake_at > v->due && v->after < v->wake_at;
}

struct fired {
	_Atomic uint64_t at;
	_Atomic int worker;
};

static void fired_cb(void *arg)
{
	struct fired *f = arg;

	atomic_store(&f->worker, blitz_current_worker());
	atomic_store(&f->at, blitz_now_ns());
}

START_TEST(timer_from_outside_wakes_parked_worker0)
{
	struct blitz_runtime *rt = new_rt(2);
	int trials = 20, owed = 0, woke = 0, attempt;
	uint64_t late[20];
	uint64_t unparks0;

	ck_assert_int_eq(blitz_block_on(rt, &test_nothing_vt, NULL, 0), 0);	/* start the workers */
	unparks0 = atomic_load(&rt->timer_unparks);
	for (attempt = 0; owed < trials && attempt < 10 * trials; attempt++) {
		struct blitz_timer_entry e;
		struct fired f = { 0 };
		struct insert_view v;
		uint64_t before;
		bool unparked;

		atomic_store(&f.worker, -2);
		ck_assert(wait_parked(rt, 0, 2000 * MS) && wait_parked(rt, 1, 2000 * MS));
		/* 3 ms: well inside worker 0's 10 ms sleep. */
		timer_entry_init_callback(&e, blitz_now_ns() + 3 * MS, fired_cb, &f);
		v.due = timer_tick_ns(e.when);
		before = atomic_load(&rt->timer_unparks);
		v.wake_at = atomic_load(&rt->timer_wake_at);
		ck_assert(runtime_timer_start(rt, &e));
		v.after = blitz_now_ns();
		unparked = atomic_load(&rt->timer_unparks) > before;
		woke += unparked;
		while (!atomic_load(&f.at))
			usleep(100);
		ck_assert_int_eq(atomic_load(&f.worker), 0);	/* worker 0 drives the wheel */
		ck_assert_uint_ge(atomic_load(&f.at), e.deadline_ns);
		if (owed < trials)
			late[owed] = atomic_load(&f.at) - e.deadline_ns;
		ck_assert_uint_lt(atomic_load(&f.at) - e.deadline_ns, LATE_LIMIT);
		if (insert_owed_unpark(&v)) {
			ck_assert_msg(unparked, "worker 0 slept until %llu, a timer due at %llu did not wake it",
				      (unsigned long long)v.wake_at, (unsigned long long)v.due);
			owed++;
		}
	}
	printf("time: timer from a non-worker thread: worker 0 unparked by the insert in %d of %d trials (%d owed an unpark)\n",
	       woke, attempt, owed);
	/* Enough trials found worker 0 asleep across the insert to mean something. */
	ck_assert_int_eq(owed, trials);
	report("3 ms timers from outside, worker 0 parked", late, (size_t)owed);
	ck_assert_uint_ge(atomic_load(&rt->timer_unparks) - unparks0, (uint64_t)woke);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * From worker 1: a task that reaches worker 1 spins (without yielding, so
 * it stays there) until worker 0 is parked, then sleeps 3 ms.  To get a
 * task onto worker 1: if the first lands on worker 0, it occupies worker 0
 * while a second is spawned, which a parked worker 1 then takes.
 */
static struct blitz_runtime *w1_rt;
static _Atomic int w1_started_on = -1, w1_second_started;
static _Atomic uint64_t w1_fired_late;
static _Atomic int w1_reg_worker, w1_owed, w1_unparked;

struct w1_task {
	struct blitz_co co;
	struct blitz_sleep nap;
	bool second, registered;
};

/* The first poll registers the sleep: bracket it as the outside test does. */
static enum blitz_poll w1_sleep_poll(struct w1_task *s, struct blitz_cx *cx)
{
	struct insert_view v;
	uint64_t before;
	enum blitz_poll r;

	if (s->registered)
		return blitz_sleep_poll(&s->nap, cx);
	s->registered = true;
	v.due = timer_tick_ns(s->nap.entry.when);
	before = atomic_load(&w1_rt->timer_unparks);
	v.wake_at = atomic_load(&w1_rt->timer_wake_at);
	r = blitz_sleep_poll(&s->nap, cx);
	v.after = blitz_now_ns();
	atomic_store(&w1_unparked, atomic_load(&w1_rt->timer_unparks) > before);
	atomic_store(&w1_owed, insert_owed_unpark(&v));
	return r;
}

static enum blitz_poll w1_poll(void *arg, struct blitz_cx *cx)
{
	struct w1_task *s = arg;
	uint64_t end;

	BLITZ_CO_BEGIN(&s->co);
	if (!s->second)
		atomic_store(&w1_started_on, blitz_cx_worker(cx));
	else
		atomic_store(&w1_second_started, 1);
	if (blitz_cx_worker(cx) == 0) {
		/* Hold worker 0 until the second task runs elsewhere (or give up). */
		end = blitz_now_ns() + 2000 * MS;
		while (!s->second && !atomic_load(&w1_second_started) && blitz_now_ns() < end)
			;
		return BLITZ_READY;
	}
	end = blitz_now_ns() + 2000 * MS;
	while (!worker_parked(w1_rt, 0) && blitz_now_ns() < end)
		;
	atomic_store(&w1_reg_worker, blitz_cx_worker(cx));
	blitz_sleep_init(&s->nap, 3 * MS);
	BLITZ_AWAIT(&s->co, w1_sleep_poll(s, cx));
	atomic_store(&w1_fired_late, blitz_now_ns() - blitz_sleep_deadline(&s->nap));
	BLITZ_CO_END(&s->co);
}

static void w1_drop(void *arg)
{
	blitz_sleep_cancel(&((struct w1_task *)arg)->nap);
}
static const struct blitz_task_vtable w1_vt = BLITZ_TASK_VTABLE(w1_poll, w1_drop);

START_TEST(timer_from_worker1_wakes_parked_worker0)
{
	int trials = 10, samples = 0, owed = 0, woke = 0, attempt;
	uint64_t late[10];

	w1_rt = new_rt(2);
	ck_assert_int_eq(blitz_block_on(w1_rt, &test_nothing_vt, NULL, 0), 0);
	for (attempt = 0; owed < trials && attempt < 10 * trials; attempt++) {
		struct w1_task first = { .second = false }, second = { .second = true };
		struct blitz_task *a, *b = NULL;
		uint64_t fired_late;
		int on;

		ck_assert(wait_parked(w1_rt, 0, 2000 * MS) && wait_parked(w1_rt, 1, 2000 * MS));
		atomic_store(&w1_started_on, -1);
		atomic_store(&w1_second_started, 0);
		atomic_store(&w1_fired_late, UINT64_MAX);
		atomic_store(&w1_reg_worker, -2);
		atomic_store(&w1_owed, 0);
		atomic_store(&w1_unparked, 0);
		a = blitz_spawn(w1_rt, &w1_vt, &first, sizeof(first));
		ck_assert_ptr_nonnull(a);
		while ((on = atomic_load(&w1_started_on)) < 0)
			sched_yield();
		if (on == 0) {
			b = blitz_spawn(w1_rt, &w1_vt, &second, sizeof(second));
			ck_assert_ptr_nonnull(b);
		}
		/* Not blitz_join(): its helping would run b on this thread. */
		while (!blitz_task_done(a) || (b && !blitz_task_done(b)))
			usleep(1000);
		blitz_task_release(a);
		if (b)
			blitz_task_release(b);
		fired_late = atomic_load(&w1_fired_late);
		if (fired_late == UINT64_MAX)
			continue;	/* both ran on worker 0: no sample, try again */
		ck_assert_int_eq(atomic_load(&w1_reg_worker), 1);
		ck_assert_uint_lt(fired_late, LATE_LIMIT);
		samples++;
		woke += atomic_load(&w1_unparked);
		if (atomic_load(&w1_owed)) {
			ck_assert_msg(atomic_load(&w1_unparked),
				      "a sleep from worker 1 did not wake worker 0, parked past its deadline");
			late[owed++] = fired_late;
		}
	}
	printf("time: timer from worker 1: worker 0 unparked by the insert in %d of %d trials (%d owed an unpark, %d attempts)\n",
	       woke, samples, owed, attempt);
	ck_assert_int_eq(owed, trials);
	report("3 ms sleeps from worker 1, worker 0 parked", late, (size_t)owed);
	blitz_runtime_free(w1_rt);
}
END_TEST

static Suite *time_suite(void)
{
	Suite *s = suite_create("time");
	TCase *tc = TCASE("sleep", 120);

	tcase_add_test(tc, sleeps_1_to_50_ms_never_early);
	tcase_add_test(tc, sequential_sleeps_on_an_idle_runtime);
	tcase_add_test(tc, many_concurrent_sleepers_on_two_workers);
	tcase_add_test(tc, zero_and_past_sleeps_complete_at_once);
	suite_add_tcase(s, tc);

	tc = TCASE("interval-timeout", 60);
	tcase_add_test(tc, interval_ticks_on_its_grid);
	tcase_add_test(tc, interval_skips_missed_ticks);
	tcase_add_test(tc, timeout_around_a_never_ready_awaitable);
	tcase_add_test(tc, timeout_around_an_awaitable_that_completes_in_time);
	suite_add_tcase(s, tc);

	tc = TCASE("cancel", 60);
	tcase_add_test(tc, cancel_a_sleeping_task_leaks_nothing);
	tcase_add_test(tc, shutdown_releases_sleepers);
	suite_add_tcase(s, tc);

	tc = TCASE("wake-worker0", 60);
	tcase_add_test(tc, timer_from_outside_wakes_parked_worker0);
	tcase_add_test(tc, timer_from_worker1_wakes_parked_worker0);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("time", time_suite)
