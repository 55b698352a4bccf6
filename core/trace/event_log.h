/* SPDX-License-Identifier: MIT */
/*
 * core/trace/event_log.h - each worker's event log (docs/probes.md, "The
 * event log"): the per-event mode without a trap per event.  While a
 * tracer holds event_ring's or event_flush's semaphore, or the flight
 * recorder is on (latched per tick: TRACED_EVENTS), a worker writes a
 * 32-byte record of each spawn and schedule it makes, each poll's start
 * and end, each steal, park and unpark into a log of 512 records, stamped
 * with the cheap clock (tick_clock.h; the layout is
 * include/blitz/trace/events.h), and hands the log over when it is full, before
 * a park once BLITZ_EVENT_PARK_FLUSH_NS have passed since the last, at a
 * tick once BLITZ_EVENT_FLUSH_NS have, and at the worker's exit.  Handing
 * over is committing a slot of the worker's ring (event_ring.h) while
 * event_ring listens or the flight recorder is on, else firing
 * event_flush with the log's address.  Nothing is lost on the runtime's
 * side through event_flush (a full log is flushed before the next
 * record); a ring whose reader fell behind drops records and counts
 * them (event_ring.h).
 *
 * Task events follow BLITZ_TRACE_SAMPLE as the task_* probes do (a task
 * is logged whole or not at all).
 *
 * A thread that is not one of a task's runtime's workers (the program's
 * thread spawning, a blocking-pool thread waking a task, a joiner that
 * runs queued tasks, a worker of another runtime) logs that task's
 * spawns, schedules and polls into a log of its own (events_outside_log:
 * worker -1 in the header, its thread id in `thread`), allocated at its
 * first record and flushed when full, before the thread waits
 * (events_outside_wait: a join, a blocking job, an idle pool thread, a
 * worker's park), at a record once its newest is BLITZ_EVENT_FLUSH_NS
 * after its last flush, and at the thread's exit.  The process's exit
 * hands over the exiting thread's log, and the records that the other
 * threads' logs hold whole (events_outside_publish), on the exiting
 * thread: those threads are stopped wherever they are.  Its records reach
 * a tracer later than the workers' (their pairs are made as they come:
 * tools/events_pair.c).
 *
 * A poll's start reserves room for its end, so that a flush never falls
 * between them unless the poll itself logs (spawns, schedules, a join's
 * nested polls) and fills the log; the end is stamped before any flush.
 * Only the owning worker writes its log, and the probe fires on its
 * thread.
 */
#ifndef BLITZ_CORE_EVENT_LOG_H
#define BLITZ_CORE_EVENT_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <blitz/trace/events.h>
#include "../probes.h"
#include "event_ring.h"
#include "tick_clock.h"

struct blitz_worker;

/*
 * struct worker_events - a worker's log and its state (owner-only; whether
 * it logs is the worker's `logging`, beside its latch).
 */
struct worker_events {
	uint32_t len;			/* records since the last flush */
	/*
	 * A thread that is not a worker's log only: its records [0, whole)
	 * are written, for the process's exit to hand over if it stops the
	 * thread (events_outside_publish; event_log.c, "The process's exit").
	 */
	_Atomic uint32_t whole;
	uint64_t last_flush;		/* ns (the tick's clock) */
	struct blitz_event_log *buf;	/* where records go: &log, or a slot of the ring */
	struct event_ring ring;		/* ring.shm NULL: none made */
	bool ring_on;			/* this window logs into the ring, not through event_flush */
	/*
	 * The probe transport's log; with a ring, where records go that find
	 * no free slot (counted lost), and the header a slot starts from.
	 */
	struct blitz_event_log log;
};

/* The calling thread's log for tasks of runtimes it is not a worker of (NULL: none yet). */
extern __thread struct worker_events *events_outside_cur __attribute__((tls_model("initial-exec")));

struct worker_events *events_outside_log(uint64_t runtime, unsigned workers);
void events_outside_flush(void);
void events_outside_exit(uint64_t deadline);

void worker_events_init(struct worker_events *e, unsigned worker, unsigned workers,
			uint64_t runtime);
void worker_events_free(struct worker_events *e);
void events_switch(struct worker_events *e, bool on, bool flight, size_t ring_bytes);
void events_flush(struct worker_events *e);
void events_finish(struct worker_events *e);

/*
 * Task ids: each thread hands out a block of them at a time
 * (events_id_refill), so that an id costs no shared write; from 1, never
 * reused in the process.
 */
extern __thread uint64_t events_id_next __attribute__((tls_model("initial-exec")));
extern __thread uint64_t events_id_end __attribute__((tls_model("initial-exec")));
uint64_t events_id_refill(void);

/* events_new_id - a task id never handed out before in the process. */
static inline uint64_t events_new_id(void)
{
	return events_id_next < events_id_end ? events_id_next++ : events_id_refill();
}

/*
 * events_tick - a tick of a logging worker begins (@now_ns: its clock):
 * flush a log that has waited BLITZ_EVENT_FLUSH_NS (a worker that neither
 * fills it nor parks), and announce a ring again as often (a reader that
 * attached after the window began finds it so).
 */
static inline void events_tick(struct worker_events *e, uint64_t now_ns)
{
	if (e->len && now_ns - e->last_flush >= BLITZ_EVENT_FLUSH_NS &&
	    !(e->ring_on && event_ring_unread(&e->ring)))
		events_flush(e);
	if (e->ring_on)
		event_ring_announce(&e->ring, now_ns);
}

/* events_room - flush unless @n more records fit. */
static inline void events_room(struct worker_events *e, uint32_t n)
{
	if (__builtin_expect(e->len + n > BLITZ_EVENT_LOG_RECORDS, 0))
		events_flush(e);
}

/*
 * events_put - one record stamped @ticks, in room the caller made
 * (events_room): a poll's end is stamped before the check that may flush,
 * every other record after it.
 */
/*
 * The record's count is kept in its log's header as it grows (release: a
 * plain store on x86), so that a flight recorder's dump reads the log the
 * worker is writing (event_ring.c).  @aux: the peer worker or the task's
 * queueing number, by type (<blitz/trace/events.h>).
 */
static inline __attribute__((always_inline)) void
events_put(struct worker_events *e, unsigned type, uint64_t ticks, uint64_t task, uint64_t arg,
	   unsigned code, int aux)
{
	struct blitz_event_log *b = e->buf;
	struct blitz_event *r = &b->rec[e->len++];

	r->ticks = ticks;
	r->task = task;
	r->arg = arg;
	r->type = (unsigned short)type;
	r->code = (unsigned short)code;
	r->peer = aux;
	__atomic_store_n(&b->head.count, e->len, __ATOMIC_RELEASE);
}

/*
 * events_park - a park (@timeout_ns its limit): its record, and a flush if
 * the last is BLITZ_EVENT_PARK_FLUSH_NS old, so that what a worker logged
 * before it slept reaches the tracer within a park timeout or so, not at
 * every park (a trap and a copy, microseconds, which a worker that parks
 * between short bursts would pay per burst).
 */
void events_park(struct worker_events *e, uint64_t timeout_ns);

/*
 * events_requeue_ticks - the stamp for a schedule of task @id: its poll's
 * end's, when that is the log's last record (the requeue that directly
 * follows a poll: a yield, or a wake during the poll), else now.  The
 * reuse saves a clock read (a third of a yielding task's) at the cost of
 * stamping the requeue a state transition early (a compare-and-swap and
 * a call, a few ns); the records keep their order, the log's.
 */
static inline __attribute__((always_inline)) uint64_t
events_requeue_ticks(const struct worker_events *e, uint64_t id)
{
	const struct blitz_event *last = e->len ? &e->buf->rec[e->len - 1] : NULL;

	if (last && last->type == BLITZ_EVENT_POLL_END && last->task == id)
		return last->ticks;
	return tick_clock_now();
}

/* events_log - one record stamped now, after any flush. */
static inline __attribute__((always_inline)) void
events_log(struct worker_events *e, unsigned type, uint64_t task, uint64_t arg, unsigned code,
	   int aux)
{
	events_room(e, 1);
	events_put(e, type, tick_clock_now(), task, arg, code, aux);
}

/*
 * events_outside_publish - @e, a thread's outside log, holds @e->len
 * whole records: the process's exit may hand them over if it stops the
 * thread before its next flush.  Release: the records are written before
 * the count that the exiting thread reads with acquire (a plain store on
 * x86).
 */
static inline void events_outside_publish(struct worker_events *e)
{
	atomic_store_explicit(&e->whole, e->len, memory_order_release);
}

/* events_outside_pending - does the calling thread's outside log hold records? */
static inline bool events_outside_pending(void)
{
	struct worker_events *e = events_outside_cur;

	return __builtin_expect(e && e->len, 0);
}

/*
 * events_outside_wait - the calling thread is about to wait (or park):
 * hand its outside log's records to the tracer first, so that they do not
 * wait with it.  A load and a test when it has none.
 */
static inline void events_outside_wait(void)
{
	if (events_outside_pending())
		events_outside_flush();
}

#endif
