// SPDX-License-Identifier: MIT
/*
 * core/trace/event_log.c - the event log's slow paths (event_log.h):
 * starting and stopping a window, and the flush probe.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../clock.h"
#include "event_log.h"
#include "exit_flush.h"

void worker_events_init(struct worker_events *e, unsigned worker, unsigned workers,
			uint64_t runtime)
{
	memset(&e->log.head, 0, sizeof(e->log.head));
	e->len = 0;
	atomic_store_explicit(&e->whole, 0, memory_order_relaxed);	/* before any reader */
	e->last_flush = 0;
	e->buf = &e->log;
	memset(&e->ring, 0, sizeof(e->ring));
	e->ring_on = false;
	e->log.head.size = sizeof(struct blitz_event);
	e->log.head.version = BLITZ_EVENTS_VERSION;
	e->log.head.capacity = BLITZ_EVENT_LOG_RECORDS;
	e->log.head.worker = (int)worker;
	e->log.head.workers = workers;
	e->log.head.runtime = runtime;
}

/*
 * events_closed_at - the tick clock at the last close of the log's window
 * that a worker saw (event_flush's semaphore back at 0: every tracer
 * gone), 0 before any.  An outside log's records older than it belong to
 * a window nobody reads any more; a tracer attached since would take
 * them for its own (a spawn whose poll it never saw), so the log drops
 * them (outside_drop_stale).  A worker's own log drops its records when
 * it sees the close (events_switch).
 */
static _Atomic uint64_t events_closed_at;

/*
 * window_closed - a worker saw the semaphore at 0 at its tick's latch:
 * stamp the close, unless a tracer is back already.  The semaphore is
 * read again after the stamp (the lfence orders the rdtsc before that
 * load), so that no tracer listened at the stamp: a record stamped
 * before it is a closed window's, unless its own stamp came nanoseconds
 * after its semaphore test (rdtsc is not ordered with the load; TSCs
 * differ by a few ns between CPUs), where an attach takes milliseconds.
 * Relaxed, and only ever raised: a hint the outside logs compare their
 * records with; a late or missed update lets a closed window's records
 * through to a new tracer, as before there was a stamp.  A close is seen
 * only by a worker that was logging, at its next tick: within a park
 * timeout (10 ms) of an idle one, later if every logging worker is
 * inside a long poll, never in a process without a running runtime; a
 * window reopened before it is seen gets the old window's last records.
 */
static void window_closed(void)
{
	uint64_t now = tick_clock_now(), seen;

#if defined(__x86_64__)
	_mm_lfence();
#endif
	atomic_signal_fence(memory_order_seq_cst);
	if (BLITZ_EVENT_FLUSH_ENABLED())
		return;
	seen = atomic_load_explicit(&events_closed_at, memory_order_relaxed);
	while (seen < now && !atomic_compare_exchange_weak_explicit(&events_closed_at, &seen, now,
								    memory_order_relaxed,
								    memory_order_relaxed))
		;
}

/* worker_events_free - @e's ring, if it made one, goes (its worker is freed). */
void worker_events_free(struct worker_events *e)
{
	event_ring_destroy(&e->ring);
	e->ring_on = false;
	e->buf = &e->log;
}

/*
 * ring_failed - the ring could not be made (@err): the window goes
 * through event_flush instead, and the process says so once.
 */
static void ring_failed(int err)
{
	static atomic_bool said;

	if (!atomic_exchange_explicit(&said, true, memory_order_relaxed))
		fprintf(stderr, "blitz: the event log's ring: %s; logging through event_flush "
			"instead\n", strerror(-err));
}

/*
 * ring_start - the window logs into @e's ring (made at the first window
 * that wants one, @bytes): opened empty, its first slot handed out, then
 * announced.  @flight: the flight recorder's (BLITZ_RING_OVERWRITE).
 */
static void ring_start(struct worker_events *e, bool flight, size_t bytes)
{
	int err;

	if (!e->ring.shm) {
		err = event_ring_create(&e->ring, bytes, e->log.head.worker, e->log.head.workers,
					e->log.head.runtime);
		if (err) {
			ring_failed(err);
			return;
		}
	}
	event_ring_open(&e->ring, flight ? BLITZ_RING_OVERWRITE : BLITZ_RING_BLOCK);
	e->ring_on = true;
	e->buf = event_ring_commit(&e->ring, NULL, &e->log, 0);
	e->len = e->buf->head.count;
	event_ring_announce(&e->ring, 0);
}

/*
 * events_switch - a tracer attached (@on) or detached.  A window starts
 * empty, with the clock calibrated and its factor in the header, and the
 * log's pages touched (a tracer's read does not fault them in: an
 * untouched page past the records would fail its copy); records
 * left when the last tracer went are dropped (nobody would read them).
 * The window logs into the worker's ring (of @ring_bytes) while a tracer
 * holds event_ring's semaphore or the flight recorder is on (@flight),
 * else through event_flush.
 */
void events_switch(struct worker_events *e, bool on, bool flight, size_t ring_bytes)
{
	e->len = 0;
	e->ring_on = false;
	e->buf = &e->log;
	if (!on) {
		window_closed();
		return;
	}
	memset(e->log.rec, 0, sizeof(e->log.rec));
	tick_clock_calibrate();
	e->log.head.ticks_mult = atomic_load_explicit(&tick_clock_mult, memory_order_relaxed);
	e->log.head.thread = (unsigned)gettid();
	e->log.head.pid = (unsigned)getpid();
	e->log.head.seq = 0;
	e->log.head.count = 0;
	e->log.head.flushed = tick_clock_now();	/* outside_tick's start */
	e->last_flush = clock_now_ns();
	/* A thread that is not a worker always logs through event_flush. */
	if (e->log.head.worker >= 0 && (flight || BLITZ_EVENT_RING_ENABLED()))
		ring_start(e, flight, ring_bytes);
}

/*
 * flush_now - hand the tracer the log's records.  The clock read is
 * nothing next to the probe's trap.
 */
static void flush_now(struct worker_events *e)
{
	if (e->ring_on) {
		e->buf = event_ring_commit(&e->ring, e->buf, &e->log, tick_clock_now());
		e->len = e->buf->head.count;	/* a reader_wait record, or none */
		e->last_flush = clock_now_ns();
		return;
	}
	e->log.head.count = e->len;
	e->log.head.seq++;
	e->log.head.flushed = tick_clock_now();
	BLITZ_EVENT_FLUSH(e->log.head.worker, (uint64_t)(uintptr_t)&e->log, e->len, e->log.head.seq);
	e->len = 0;
	e->last_flush = clock_now_ns();
}

static void outside_flush_locked(struct worker_events *e);

/* events_flush - flush_now; a thread's outside log under its lock (outside_flush_locked). */
void events_flush(struct worker_events *e)
{
	if (e->log.head.worker < 0)
		outside_flush_locked(e);
	else
		flush_now(e);
}

/*
 * events_finish - the worker exits: its records to the tracer, and with a
 * ring, the records it dropped since its last log said (event_ring_settle).
 */
void events_finish(struct worker_events *e)
{
	if (e->len)
		events_flush(e);
	if (e->ring_on) {
		e->buf = event_ring_settle(&e->ring, e->buf, &e->log, tick_clock_now());
		e->len = e->buf->head.count;
	}
}

void events_park(struct worker_events *e, uint64_t timeout_ns)
{
	events_log(e, BLITZ_EVENT_PARK, 0, timeout_ns, 0, -1);
	if (clock_now_ns() - e->last_flush >= BLITZ_EVENT_PARK_FLUSH_NS &&
	    !(e->ring_on && event_ring_unread(&e->ring)))
		events_flush(e);
}

/* ---------------------------------------------------------------------- */
/* Task ids                                                                */

__thread uint64_t events_id_next __attribute__((tls_model("initial-exec")));
__thread uint64_t events_id_end __attribute__((tls_model("initial-exec")));

/* Ids a thread takes at a time: one shared add per this many tasks logged. */
#define EVENTS_ID_BLOCK	4096

/* The next block's first id (ids start at 1: 0 is "none yet"). */
static _Atomic uint64_t events_id_blocks = 1;

/*
 * events_id_refill - the calling thread's block is used up: the next one,
 * and its first id.  Relaxed: the add only has to hand each block out
 * once; nothing else is published through it.
 */
uint64_t events_id_refill(void)
{
	uint64_t first = atomic_fetch_add_explicit(&events_id_blocks, EVENTS_ID_BLOCK,
						   memory_order_relaxed);

	events_id_next = first + 1;
	events_id_end = first + EVENTS_ID_BLOCK;
	return first;
}

/* ---------------------------------------------------------------------- */
/* The log of a thread that is not a worker                                */

__thread struct worker_events *events_outside_cur __attribute__((tls_model("initial-exec")));

/*
 * struct outside_log - a thread's outside log, and what the process's exit
 * needs to hand its records over while the thread runs on ("The process's
 * exit", below).
 */
struct outside_log {
	struct worker_events e;		/* events_outside_cur points here */
	/*
	 * Held by the owner while it changes records it published (a flush,
	 * stale records dropped, another runtime's log) and by the exiting
	 * thread while it hands them over: not per record.
	 */
	pthread_mutex_t lock;
	uint32_t handed;		/* under lock: records [0, handed) handed over at the exit */
	pid_t pid;			/* the process that made it (a fork's child has a copy) */
	struct outside_log *next;	/* outside_logs, under outside_logs_lock */
};

/* Every outside log of the process, for its exit (outside_list, outside_unlist). */
static pthread_mutex_t outside_logs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct outside_log *outside_logs;

static pthread_key_t outside_key;
static pthread_once_t outside_once = PTHREAD_ONCE_INIT;
static bool outside_key_ok;

static struct outside_log *outside_of(struct worker_events *e)
{
	return (struct outside_log *)((char *)e - offsetof(struct outside_log, e));
}

/*
 * copy_since - the records of @src[0, @n) stamped at @closed or later, to
 * @dst in order (@dst may be @src or below it: each is read before the
 * slot it moves to is written); how many.
 */
static uint32_t copy_since(struct blitz_event *dst, const struct blitz_event *src, uint32_t n,
			   uint64_t closed)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < n; i++)
		if (src[i].ticks >= closed)
			dst[kept++] = src[i];
	return kept;
}

/*
 * outside_keep_since - @o's records from @closed on that were not handed
 * over (the process's exit handed over its first ones while the thread
 * ran on: they go, so that a tracer does not get them twice), moved to
 * the log's start.  Under @o->lock.
 */
static void outside_keep_since(struct outside_log *o, uint64_t closed)
{
	struct worker_events *e = &o->e;

	if (!o->handed && !closed)
		return;
	e->len = copy_since(e->log.rec, e->log.rec + o->handed, e->len - o->handed, closed);
	o->handed = 0;
}

/*
 * outside_drop_stale - drop @e's records from before the last window
 * close a worker saw (events_closed_at).  A thread tests the semaphore
 * before its records, but a record may still follow a close (a helping
 * poll's end, which its start's test covers; a thread preempted between
 * its test and its stamp), so every record older than the close goes,
 * not only a log whose newest is: a late one must not carry older ones
 * into the next window.  One comparison (the oldest record) when there
 * is nothing to drop.
 */
static void outside_drop_stale(struct worker_events *e)
{
	struct outside_log *o = outside_of(e);
	uint64_t closed;

	if (!e->len)
		return;
	closed = atomic_load_explicit(&events_closed_at, memory_order_relaxed);
	if (e->log.rec[0].ticks >= closed)
		return;
	pthread_mutex_lock(&o->lock);
	outside_keep_since(o, closed);
	events_outside_publish(e);
	pthread_mutex_unlock(&o->lock);
}

/*
 * outside_flush_held - the records of @o not handed over yet, if any, to
 * the tracer.  Under @o->lock.
 */
static void outside_flush_held(struct outside_log *o)
{
	outside_keep_since(o, 0);
	if (o->e.len)
		flush_now(&o->e);
	events_outside_publish(&o->e);
}

/* outside_flush_locked - events_flush of a thread's outside log: outside_flush_held. */
static void outside_flush_locked(struct worker_events *e)
{
	struct outside_log *o = outside_of(e);

	pthread_mutex_lock(&o->lock);
	outside_flush_held(o);
	pthread_mutex_unlock(&o->lock);
}

/* outside_flush - @e's records of the current window, if any, to the tracer. */
static void outside_flush(struct worker_events *e)
{
	outside_drop_stale(e);
	if (e->len)
		events_flush(e);
}

/* outside_list - @o joins the process's outside logs. */
static void outside_list(struct outside_log *o)
{
	pthread_mutex_lock(&outside_logs_lock);
	o->next = outside_logs;
	outside_logs = o;
	pthread_mutex_unlock(&outside_logs_lock);
}

/*
 * outside_unlist - @o leaves them (its thread exits): the exit no longer
 * reads it.  A walk: threads exit rarely, and the list holds one log per
 * live thread that logged.
 */
static void outside_unlist(struct outside_log *o)
{
	pthread_mutex_lock(&outside_logs_lock);
	for (struct outside_log **at = &outside_logs; *at; at = &(*at)->next)
		if (*at == o) {
			*at = o->next;
			break;
		}
	pthread_mutex_unlock(&outside_logs_lock);
}

/*
 * outside_exit - the thread exits (the key's destructor, on that thread):
 * its last records go to the tracer, if one still listens (else nobody
 * would read them), and the log is freed.
 */
static void outside_exit(void *log)
{
	struct worker_events *e = log;
	struct outside_log *o = outside_of(e);

	if (BLITZ_EVENT_FLUSH_ENABLED())
		outside_flush(e);
	events_outside_cur = NULL;
	outside_unlist(o);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

/*
 * The process exits: the exiting thread's last records (exit() runs no
 * key destructor), and its log freed.  The other threads' logs are
 * handed over by exit_flush.c (events_outside_exit).
 */
__attribute__((destructor)) static void outside_process_exit(void)
{
	if (events_outside_cur) {
		pthread_setspecific(outside_key, NULL);
		outside_exit(events_outside_cur);
	}
}

/* A fork's child has one thread: a list lock copied held would stay held. */
static void outside_logs_lock_child(void)
{
	pthread_mutex_init(&outside_logs_lock, NULL);
}

static void outside_key_create(void)
{
	outside_key_ok = pthread_key_create(&outside_key, outside_exit) == 0;
	pthread_atfork(NULL, NULL, outside_logs_lock_child);
}

/*
 * outside_new - the calling thread's log, made at its first record: the
 * key's destructor flushes and frees it.  NULL if there is no memory or no
 * key: the thread's records are not written (a tool counts the polls
 * whose queueing it did not see).
 */
static struct worker_events *outside_new(void)
{
	struct outside_log *o;
	struct worker_events *e;

	pthread_once(&outside_once, outside_key_create);
	if (!outside_key_ok)
		return NULL;
	o = malloc(sizeof(*o));
	if (!o)
		return NULL;
	e = &o->e;
	if (pthread_mutex_init(&o->lock, NULL)) {
		free(o);
		return NULL;
	}
	if (pthread_setspecific(outside_key, e)) {
		pthread_mutex_destroy(&o->lock);
		free(o);
		return NULL;
	}
	o->handed = 0;
	o->pid = getpid();
	worker_events_init(e, 0, 0, 0);
	e->log.head.worker = -1;
	events_switch(e, true, false, 0);
	outside_list(o);
	events_outside_cur = e;
	return e;
}

/*
 * outside_tick - flush @e if its newest record is BLITZ_EVENT_FLUSH_NS
 * after its last flush (head.flushed): a worker's tick test, but with no
 * clock read of its own (it would cost every record), so a record that
 * comes after a long quiet stretch flushes at the next one.  A stamp behind
 * the last flush's (another CPU's TSC, a few ns apart) is not late.
 */
static void outside_tick(struct worker_events *e)
{
	uint64_t newest, last = e->log.head.flushed;

	if (!e->len)
		return;
	newest = e->log.rec[e->len - 1].ticks;
	if (newest > last && tick_clock_to_ns(newest - last) >= BLITZ_EVENT_FLUSH_NS)
		events_flush(e);
}

/*
 * outside_switch_runtime - @e's records are another runtime's: they go
 * first (a log holds one runtime's), and the header names @runtime.
 * Under the log's lock: the exit reads the header.
 */
static void outside_switch_runtime(struct worker_events *e, uint64_t runtime, unsigned workers)
{
	struct outside_log *o = outside_of(e);

	pthread_mutex_lock(&o->lock);
	outside_flush_held(o);
	e->log.head.runtime = runtime;
	e->log.head.workers = workers;
	pthread_mutex_unlock(&o->lock);
}

/*
 * events_outside_log - the calling thread's log for a task of @runtime
 * (@workers workers), which the thread is not a worker of; NULL without
 * one (see outside_new).  The log holds one runtime's records: a record
 * for another flushes first.  A log whose newest record is
 * BLITZ_EVENT_FLUSH_NS after its last flush is flushed (outside_tick).
 * The caller publishes its record once written (events_outside_publish).
 */
struct worker_events *events_outside_log(uint64_t runtime, unsigned workers)
{
	struct worker_events *e = events_outside_cur;

	if (!e && !(e = outside_new()))
		return NULL;
	outside_drop_stale(e);
	if (e->log.head.runtime != runtime)
		outside_switch_runtime(e, runtime, workers);
	outside_tick(e);
	return e;
}

/* events_outside_flush - events_outside_wait's flush, of the current window's records only. */
void events_outside_flush(void)
{
	outside_flush(events_outside_cur);
}

/* ---------------------------------------------------------------------- */
/* The process's exit                                                      */

/*
 * The hand-over's copy of one log (one exiting thread at a time: under
 * outside_logs_lock).  Only its header and the records handed over are
 * written, and only those are read (a tracer's copy cannot fault a page
 * in).
 */
static struct blitz_event_log exit_copy;

/*
 * outside_hand_over - the records @o's thread published (whole) and has
 * not flushed, to the tracer, from a copy: the thread may run on and
 * write behind them meanwhile.  They count as handed over, and the
 * thread's next flush leaves them out.  A closed window's records are
 * left out as a flush leaves them out.  Under @o->lock.
 */
static void outside_hand_over(struct outside_log *o)
{
	struct worker_events *e = &o->e;
	/* Acquire: the records the release in events_outside_publish covers. */
	uint32_t whole = atomic_load_explicit(&e->whole, memory_order_acquire);
	uint64_t closed = atomic_load_explicit(&events_closed_at, memory_order_relaxed);
	/* handed <= whole: both move together under the lock (outside_keep_since, publish). */
	uint32_t n = copy_since(exit_copy.rec, e->log.rec + o->handed, whole - o->handed, closed);

	o->handed = whole;
	if (!n)
		return;
	exit_copy.head = e->log.head;
	exit_copy.head.seq = ++e->log.head.seq;
	exit_copy.head.count = n;
	exit_copy.head.flushed = tick_clock_now();
	BLITZ_EVENT_FLUSH(-1, (uint64_t)(uintptr_t)&exit_copy, n, exit_copy.head.seq);
}

/*
 * events_outside_exit - the process exits (exit_flush.c's destructor):
 * hand over what every other thread's outside log of this process holds
 * whole, as those threads are stopped wherever they are.  Each lock is
 * tried until @deadline (ns): a thread may hold its log's in a flush, or
 * be stopped by a sanitizer.
 */
void events_outside_exit(uint64_t deadline)
{
	pid_t pid = getpid();

	if (!BLITZ_EVENT_FLUSH_ENABLED() || !exit_flush_lock(&outside_logs_lock, deadline))
		return;
	for (struct outside_log *o = outside_logs; o; o = o->next) {
		if (o->pid != pid || &o->e == events_outside_cur || !exit_flush_lock(&o->lock, deadline))
			continue;
		outside_hand_over(o);
		pthread_mutex_unlock(&o->lock);
	}
	pthread_mutex_unlock(&outside_logs_lock);
}
