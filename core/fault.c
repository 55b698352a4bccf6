// SPDX-License-Identifier: MIT
/*
 * core/fault.c - the fault points' table and BLITZ_FAIL (docs/faults.md).
 *
 *   BLITZ_FAIL=POINT[:ATTR=VALUE[,ATTR=VALUE...]][;POINT...]
 *
 * with the kernel's fault attributes (Documentation/fault-injection):
 *   probability  percent of the eligible calls that fail, 0..100 (100)
 *   interval     only every interval-th call is eligible, >= 1 (1)
 *   times        at most this many failures, -1 for no limit (1)
 *   seed         the random stream, so that a run replays (1)
 *
 * Call n of a point (counted from 1, over all threads) fails when n is a
 * multiple of interval, a hash of (seed, n) falls below probability, and
 * times is not used up.  The decision depends on n alone, so a run whose
 * calls come in the same order (one worker, the same workload) fails at the
 * same calls again.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fault.h"

/* The one table of the points' names; the enum is in core/fault.h. */
static const char *const point_names[FAULT_NR_POINTS] = {
	[FAULT_TASK_ALLOC] = "task_alloc",
	[FAULT_BUF_ALLOC] = "buf_alloc",
	[FAULT_SQE_FULL] = "sqe_full",
	[FAULT_RING_ENTER] = "ring_enter",
	[FAULT_IO_SUBMIT] = "io_submit",
	[FAULT_IO_COMPLETE] = "io_complete",
	[FAULT_SHORT_RW] = "short_rw",
	[FAULT_ACCEPT] = "accept",
	[FAULT_POOL_THREAD] = "pool_thread",
	[FAULT_TIMER_ALLOC] = "timer_alloc",
};

const char *fault_name(unsigned p)
{
	return p < FAULT_NR_POINTS ? point_names[p] : NULL;
}

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static char setup_err[640];	/* empty: BLITZ_FAIL is good (or unset) */

#if CONFIG_FAULT_INJECTION

bool fault_armed;

struct fault_attr {
	bool on;
	unsigned probability;		/* percent */
	uint64_t interval;
	int64_t times;			/* -1: no limit */
	uint64_t seed;
	/*
	 * The counters are relaxed: each is a count on its own, ordered with
	 * nothing else; `times_left` is taken by compare-exchange, so no more
	 * than `times` calls fail.
	 */
	_Atomic uint64_t calls, picks, injected;
	_Atomic int64_t times_left;
};

static struct fault_attr attrs[FAULT_NR_POINTS];

/* mix - splitmix64's finalizer: a well-spread hash of @x. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* take_one - use up one of @a's times; false when none is left. */
static bool take_one(struct fault_attr *a)
{
	/* Relaxed: see struct fault_attr. */
	int64_t left = atomic_load_explicit(&a->times_left, memory_order_relaxed);

	do {
		if (left == 0)
			return false;
		if (left < 0)
			return true;
	} while (!atomic_compare_exchange_weak_explicit(&a->times_left, &left, left - 1,
							memory_order_relaxed, memory_order_relaxed));
	return true;
}

bool fault_should_fail(enum fault_point p)
{
	struct fault_attr *a = &attrs[p];
	uint64_t n;

	if (!a->on)
		return false;
	/* Relaxed: see struct fault_attr. */
	n = atomic_fetch_add_explicit(&a->calls, 1, memory_order_relaxed) + 1;
	if (n % a->interval)
		return false;
	if (a->probability < 100 && mix(a->seed ^ mix(n)) % 100 >= a->probability)
		return false;
	if (!take_one(a))
		return false;
	atomic_fetch_add_explicit(&a->injected, 1, memory_order_relaxed);
	return true;
}

/* fault_pick - a number below @n (> 0) from @p's own stream: which error, how short. */
uint64_t fault_pick(enum fault_point p, uint64_t n)
{
	struct fault_attr *a = &attrs[p];
	/* Relaxed: see struct fault_attr. */
	uint64_t k = atomic_fetch_add_explicit(&a->picks, 1, memory_order_relaxed);

	return mix(~a->seed ^ mix(k)) % n;
}

uint64_t fault_injected(enum fault_point p)
{
	/* Relaxed: see struct fault_attr. */
	return atomic_load_explicit(&attrs[p].injected, memory_order_relaxed);
}

/* report - at exit, one line per configured point: what it injected. */
static void report(void)
{
	for (unsigned p = 0; p < FAULT_NR_POINTS; p++) {
		if (!attrs[p].on)
			continue;
		/* Relaxed: see struct fault_attr. */
		fprintf(stderr, "blitz: BLITZ_FAIL %s: %" PRIu64 " injected in %" PRIu64 " calls\n",
			point_names[p], fault_injected(p),
			atomic_load_explicit(&attrs[p].calls, memory_order_relaxed));
	}
}

/* parse_num - all of [@s, @end) as a decimal in [@lo, @hi]. */
static int parse_num(const char *s, const char *end, int64_t lo, uint64_t hi, int64_t *out)
{
	bool neg = *s == '-';
	uint64_t v = 0;

	if (neg)
		s++;
	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (neg ? v > (uint64_t)-lo || lo >= 0 : v > hi)
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

static const char *const attr_hint =
	"probability=0..100, interval=N>=1, times=N or -1, seed=N";

/* parse_attr - one ATTR=VALUE of [@s, @end) into @a; 0, or -1 with @err filled. */
static int parse_attr(const char *s, const char *end, struct fault_attr *a,
		      char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', (size_t)(end - s));
	size_t klen = eq ? (size_t)(eq - s) : 0;
	int64_t v;

	if (!eq)
		goto bad;
	if (klen == 11 && !memcmp(s, "probability", 11) && !parse_num(eq + 1, end, 0, 100, &v))
		a->probability = (unsigned)v;
	else if (klen == 8 && !memcmp(s, "interval", 8) && !parse_num(eq + 1, end, 1, INT64_MAX, &v))
		a->interval = (uint64_t)v;
	else if (klen == 5 && !memcmp(s, "times", 5) && !parse_num(eq + 1, end, -1, INT64_MAX, &v))
		a->times = v;
	else if (klen == 4 && !memcmp(s, "seed", 4) && !parse_num(eq + 1, end, 0, INT64_MAX, &v))
		a->seed = (uint64_t)v;
	else
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "'%.*s': expected %s", (int)(end - s), s, attr_hint);
	return -1;
}

/* parse_point - POINT[:ATTRS] of [@s, @end); 0, or -1 with @err filled. */
static int parse_point(const char *s, const char *end, struct fault_attr *all,
		       char *err, size_t errlen)
{
	const char *colon = memchr(s, ':', (size_t)(end - s));
	const char *name_end = colon ? colon : end;
	struct fault_attr *a = NULL;
	size_t n;

	for (unsigned p = 0; p < FAULT_NR_POINTS; p++)
		if (strlen(point_names[p]) == (size_t)(name_end - s) &&
		    !memcmp(s, point_names[p], (size_t)(name_end - s)))
			a = &all[p];
	if (!a) {
		n = (size_t)snprintf(err, errlen, "unknown fault point '%.*s' (points:",
				     (int)(name_end - s), s);
		for (unsigned p = 0; p < FAULT_NR_POINTS && n < errlen; p++)
			n += (size_t)snprintf(err + n, errlen - n, " %s", point_names[p]);
		if (n < errlen)
			snprintf(err + n, errlen - n, ")");
		return -1;
	}
	a->on = true;
	a->probability = 100;
	a->interval = 1;
	a->times = 1;
	a->seed = 1;
	for (s = colon ? colon + 1 : end; s < end;) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *next = comma ? comma : end;

		if (parse_attr(s, next, a, err, errlen))
			return -1;
		s = comma ? comma + 1 : end;
	}
	return 0;
}

static void setup(void)
{
	const char *v = getenv("BLITZ_FAIL");
	struct fault_attr parsed[FAULT_NR_POINTS];
	char err[512];
	bool any = false;

	if (!v)
		return;
	memset(parsed, 0, sizeof(parsed));
	for (const char *s = v; *s;) {
		const char *semi = strchr(s, ';');
		const char *end = semi ? semi : s + strlen(s);

		if (end > s && parse_point(s, end, parsed, err, sizeof(err))) {
			snprintf(setup_err, sizeof(setup_err), "BLITZ_FAIL=%s: %s", v, err);
			return;
		}
		s = semi ? semi + 1 : end;
	}
	for (unsigned p = 0; p < FAULT_NR_POINTS; p++) {
		if (!parsed[p].on)
			continue;
		attrs[p].on = true;
		attrs[p].probability = parsed[p].probability;
		attrs[p].interval = parsed[p].interval;
		attrs[p].times = parsed[p].times;
		attrs[p].seed = parsed[p].seed;
		atomic_init(&attrs[p].times_left, parsed[p].times);
		any = true;
	}
	if (any) {
		fault_armed = true;
		atexit(report);
	}
}

#else /* !CONFIG_FAULT_INJECTION */

uint64_t fault_injected(enum fault_point p)
{
	(void)p;
	return 0;
}

static void setup(void)
{
	if (getenv("BLITZ_FAIL"))
		snprintf(setup_err, sizeof(setup_err),
			 "BLITZ_FAIL is set, but this build has no fault injection (CONFIG_FAULT_INJECTION)");
}

#endif

int fault_setup(void)
{
	pthread_once(&setup_once, setup);
	if (!setup_err[0])
		return 0;
	fprintf(stderr, "blitz: %s\n", setup_err);
	return -EINVAL;
}
