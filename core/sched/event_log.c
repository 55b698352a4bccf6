// SPDX-License-Identifier: MIT
/*
 * core/sched/event_log.c - the event log's slow paths (event_log.h):
 * starting and stopping a window, and the flush probe.
 */
#include <string.h>
#include "../clock.h"
#include "event_log.h"

void worker_events_init(struct worker_events *e, unsigned worker, unsigned workers,
			uint64_t runtime)
{
	memset(&e->log.head, 0, sizeof(e->log.head));
	e->len = 0;
	e->last_flush = 0;
	e->log.head.size = sizeof(struct blitz_event);
	e->log.head.capacity = BLITZ_EVENT_LOG_RECORDS;
	e->log.head.worker = (int)worker;
	e->log.head.workers = workers;
	e->log.head.runtime = runtime;
}

/*
 * events_switch - a tracer attached (@on) or detached.  A window starts
 * empty, with the clock calibrated and its factor in the header, and the
 * log's pages touched (a tracer's read does not fault them in: an
 * untouched page past the records would fail its copy); records
 * left when the last tracer went are dropped (nobody would read them).
 */
void events_switch(struct worker_events *e, bool on)
{
	e->len = 0;
	if (!on)
		return;
	memset(e->log.rec, 0, sizeof(e->log.rec));
	tick_clock_calibrate();
	e->log.head.ticks_mult = atomic_load_explicit(&tick_clock_mult, memory_order_relaxed);
	e->log.head.seq = 0;
	e->last_flush = clock_now_ns();
}

/*
 * events_flush - hand the tracer the log's records.  The clock read is
 * nothing next to the probe's trap.
 */
void events_flush(struct worker_events *e)
{
	e->log.head.seq++;
	e->log.head.flushed = tick_clock_now();
	BLITZ_EVENT_FLUSH(e->log.head.worker, (uint64_t)(uintptr_t)&e->log, e->len, e->log.head.seq);
	e->len = 0;
	e->last_flush = clock_now_ns();
}

void events_park(struct worker_events *e, uint64_t timeout_ns)
{
	events_log(e, BLITZ_EVENT_PARK, 0, timeout_ns, -1);
	if (clock_now_ns() - e->last_flush >= BLITZ_EVENT_PARK_FLUSH_NS)
		events_flush(e);
}
