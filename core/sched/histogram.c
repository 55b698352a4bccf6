// SPDX-License-Identifier: MIT
/*
 * core/sched/histogram.c - the workers' summary histograms (histogram.h):
 * what a hook records while hist_snapshot's semaphore is held, the clock
 * that times it, and the snapshot probe.
 *
 * Cost model (issue 16): a probe hit costs 550-1,700 ns, a scheduling event
 * 10-100 ns.  So every event is counted here, in the worker's memory, and
 * the tracer is called only at hist_snapshot (each park, every
 * HIST_SNAPSHOT_NS of running, exit).  The clock is rdtsc where the CPU
 * says its TSC is invariant (about half of clock_gettime here), converted
 * to ns with a factor measured once against CLOCK_MONOTONIC; else
 * clock_gettime.  Even rdtsc is about a yield's cost, so poll time and
 * schedule latency are timed for one event in BLITZ_HIST_SAMPLE (default
 * 8, Go's rate), and their histograms say how many they sampled.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif
#include "../clock.h"
#include "../probes.h"
#include "histogram.h"
#include "runtime.h"
#include "task.h"
#include "worker.h"

/* ---------------------------------------------------------------------- */
/* The clock                                                               */

/*
 * Decided once (clock_once) before the first runtime's workers start, so
 * every stamp in the process is in the same unit.  ticks_mult: ns per tick
 * << 32, measured at the first attach (calibrate_once); 0 until then (a
 * value recorded before is zeroed by that worker's hist_switch).  Relaxed:
 * each is written once and read as a plain value; nothing else is
 * published through them.
 */
static bool clock_tsc;
static _Atomic uint64_t ticks_mult;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;
static pthread_once_t calibrate_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t runtimes;

static void clock_detect(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every state. */
	clock_tsc = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#endif
}

static inline uint64_t hist_ticks(void)
{
#if defined(__x86_64__)
	if (clock_tsc)
		return __rdtsc();
#endif
	return clock_now_ns();
}

/* Ticks per ns against CLOCK_MONOTONIC over 2 ms (once, at the first attach). */
static void clock_calibrate(void)
{
	struct timespec pause = { 0, 2000000 };
	uint64_t t0, n0, t1, n1;

	if (!clock_tsc) {
		atomic_store_explicit(&ticks_mult, 1ull << 32, memory_order_relaxed);
		return;
	}
	t0 = hist_ticks();
	n0 = clock_now_ns();
	nanosleep(&pause, NULL);
	t1 = hist_ticks();
	n1 = clock_now_ns();
	atomic_store_explicit(&ticks_mult,
			      t1 > t0 ? (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0)) : 0,
			      memory_order_relaxed);
}

static inline uint64_t ticks_to_ns(uint64_t d)
{
	/* Relaxed: see ticks_mult. */
	return (uint64_t)(((unsigned __int128)d *
			   atomic_load_explicit(&ticks_mult, memory_order_relaxed)) >> 32);
}

/* hist_runtime_id - a new runtime's number (1, 2, ...); settles the clock first. */
uint64_t hist_runtime_id(void)
{
	pthread_once(&clock_once, clock_detect);
	/* Relaxed: a unique number is all that is asked. */
	return atomic_fetch_add_explicit(&runtimes, 1, memory_order_relaxed) + 1;
}

/* ---------------------------------------------------------------------- */
/* Recording                                                               */

/*
 * add - one writer (the owning worker): a relaxed load and store, no
 * read-modify-write, so that worker_read_hists() on another thread reads
 * each counter whole (see histogram.h).
 */
static inline void add(unsigned long long *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline unsigned slot_of(uint64_t v)
{
	unsigned s = v < 2 ? 0 : 63 - (unsigned)__builtin_clzll(v);

	return s < BLITZ_HIST_SLOTS ? s : BLITZ_HIST_SLOTS - 1;
}

/* record_value - @v into histogram @k (not its event count). */
static void record_value(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	struct blitz_hist_log2 *l = &h->snap.hist[k];

	add(&l->slots[slot_of(v)], 1);
	add(&l->count, 1);
	add(&l->sum, v);
}

/* hist_record - one event of kind @k, value @v. */
void hist_record(struct worker_hist *h, enum blitz_hist_kind k, uint64_t v)
{
	add(&h->snap.events[k], 1);
	record_value(h, k, v);
}

void hist_init(struct worker_hist *h, unsigned worker, unsigned sample, uint64_t runtime)
{
	memset(h, 0, sizeof(*h));
	h->sample_mask = sample ? sample - 1 : 0;
	h->snap.size = sizeof(h->snap);
	h->snap.kinds = BLITZ_HIST_KINDS;
	h->snap.worker = (int)worker;
	h->snap.sample = sample ? sample : 1;
	h->snap.runtime = runtime;
}

/*
 * hist_switch - the semaphore changed since the last tick.  On: start a
 * fresh window (the counts of a previous tracer, and whatever was recorded
 * since the semaphore rose mid-tick, are dropped).  Off: stop; the
 * histograms stay as they were until the next attach.
 */
void hist_switch(struct blitz_worker *w, bool on, uint64_t now_ns)
{
	struct worker_hist *h = &w->hist;

	h->on = on;
	if (!on)
		return;
	pthread_once(&calibrate_once, clock_calibrate);
	/* Not atomic: a worker_read_hists() racing a re-attach may see a mix. */
	memset(h->snap.events, 0, sizeof(h->snap.events));
	memset(h->snap.hist, 0, sizeof(h->snap.hist));
	h->polls = 0;
	h->next_snapshot = now_ns + HIST_SNAPSHOT_NS;
}

/* hist_fire - hand the tracer this worker's histograms. */
void hist_fire(struct blitz_worker *w, uint64_t now_ns)
{
	struct worker_hist *h = &w->hist;

	add(&h->snap.seq, 1);
	h->next_snapshot = now_ns + HIST_SNAPSHOT_NS;
	BLITZ_HIST_SNAPSHOT((int)w->index, (uint64_t)(uintptr_t)&h->snap,
			    (uint32_t)sizeof(h->snap), h->snap.seq);
}

/* hist_park - a park (@timeout_ns its limit); the snapshot before the sleep. */
void hist_park(struct blitz_worker *w, uint64_t timeout_ns)
{
	hist_record(&w->hist, BLITZ_HIST_PARK, timeout_ns);
	if (w->hist.on)
		hist_fire(w, clock_now_ns());
}

/* hist_exit - the last snapshot, as the worker's thread ends. */
void hist_exit(struct blitz_worker *w)
{
	if (w->hist.on)
		hist_fire(w, 0);
}

/*
 * Per thread: the schedules this thread made while enabled, for sampling
 * (a waker may be any thread, so it cannot be a worker's field).
 */
static __thread uint32_t sched_nth __attribute__((tls_model("initial-exec")));

/*
 * hist_queued - @t is about to be queued: stamp one schedule in
 * BLITZ_HIST_SAMPLE with the clock, clear the others (a stamp left from an
 * earlier window must not be read as this one).  The stamp is never 0.
 */
void hist_queued(struct blitz_task *t)
{
	uint32_t mask = t->rt->cfg.hist_sample - 1;

	t->queued_at = (++sched_nth & mask) ? 0 : hist_ticks() | 1;
}

/*
 * hist_poll_start - @w is about to poll @t: count its wait in a queue and
 * record its length if it was stamped; returns the poll's start (ticks) if
 * this poll is the sampled one, else 0.  @w NULL (a helping thread): not a
 * worker's event, nothing recorded.
 */
uint64_t hist_poll_start(struct blitz_worker *w, struct blitz_task *t)
{
	uint64_t queued = t->queued_at, now = 0;
	struct worker_hist *h;
	bool timed;

	t->queued_at = 0;
	if (!w)
		return 0;
	h = &w->hist;
	add(&h->snap.events[BLITZ_HIST_SCHED], 1);
	timed = (h->polls++ & h->sample_mask) == 0;
	if (queued || timed)
		now = hist_ticks();
	if (queued && now >= queued)
		record_value(h, BLITZ_HIST_SCHED, ticks_to_ns(now - queued));
	return timed ? now | 1 : 0;
}

/* hist_poll_end - the poll begun at @start (0: not timed) returned @ready. */
void hist_poll_end(struct blitz_worker *w, uint64_t start, bool ready)
{
	enum blitz_hist_kind k = ready ? BLITZ_HIST_POLL_READY : BLITZ_HIST_POLL_PENDING;
	uint64_t now;

	if (!w)
		return;
	add(&w->hist.snap.events[k], 1);
	if (!start)
		return;
	now = hist_ticks();
	record_value(&w->hist, k, now > start ? ticks_to_ns(now - start) : 0);
}

/* hist_slept - a sleep that ended for @reason (the unpark probe's) lasted @ns. */
void hist_slept(struct blitz_worker *w, int reason, uint64_t ns)
{
	hist_record(&w->hist, BLITZ_HIST_SLEEP_NOTIFIED + reason, ns);
}

/* worker_read_hists - a copy of @w's histograms, each counter whole (tests). */
void worker_read_hists(const struct blitz_worker *w, struct blitz_hist_snapshot *out)
{
	const unsigned long long *src = (const unsigned long long *)&w->hist.snap;
	unsigned long long *dst = (unsigned long long *)out;

	_Static_assert(sizeof(*out) % sizeof(*src) == 0, "a snapshot is whole u64s");
	/* Relaxed: see add(). */
	for (size_t i = 0; i < sizeof(*out) / sizeof(*src); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
