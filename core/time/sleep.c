// SPDX-License-Identifier: MIT
/*
 * core/time/sleep.c - the time API of <blitz/time.h>: sleep, timeout and
 * interval over wheel entries embedded in the caller's state, registered
 * with the runtime's wheel (core/time/driver.c).
 */
#include <string.h>
#include "../clock.h"
#include "../sched/runtime.h"
#include "../sched/task.h"
#include "timer.h"

uint64_t blitz_now_ns(void)
{
	return clock_now_ns();
}

static uint64_t deadline_after(uint64_t duration_ns)
{
	return clock_after(clock_now_ns(), duration_ns);
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
