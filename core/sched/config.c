// SPDX-License-Identifier: MIT
/* core/sched/config.c - the runtime configuration and the BLITZ_* policy knobs. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <blitz/config.h>

unsigned blitz_max_workers(void)
{
	return CONFIG_MAX_WORKERS;
}

void blitz_config_default(struct blitz_config *cfg)
{
	cfg->workers = 0;
	cfg->lifo = true;
	cfg->global_interval = 0;
	cfg->steal = BLITZ_STEAL_HALF;
	cfg->budget = BLITZ_BUDGET_PER_TICK;
	cfg->backend = BLITZ_BACKEND_AUTO;
	cfg->trace_sample = 1;
	cfg->max_blocking_threads = CONFIG_MAX_BLOCKING_THREADS;
	cfg->blocking_idle_ms = BLITZ_BLOCKING_IDLE_MS;
	cfg->wake = BLITZ_WAKE_BACKLOG;
	cfg->wake_min_backlog_ns = BLITZ_WAKE_MIN_BACKLOG_NS;
	cfg->wake_backlog_ns = BLITZ_WAKE_BACKLOG_NS;
	cfg->wake_busy_ns = BLITZ_WAKE_BUSY_NS;
	cfg->hist_sample = BLITZ_HIST_SAMPLE_AUTO;
	cfg->park_timeout_ns = BLITZ_PARK_TIMEOUT_NS;
	cfg->event_ring_kb = 0;
	cfg->flight_kb = 0;
	cfg->flight_signal = 0;
	cfg->io_uring_rings = BLITZ_IO_URING_RINGS_WORKER;
}

static bool power_of_two(unsigned n)
{
	return n && !(n & (n - 1));
}

/* parse_uint - a whole decimal number in [lo, hi], nothing else. */
static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* ring_kb_ok - a ring's size in KiB: 0 (the default or off) or within the bounds. */
static bool ring_kb_ok(unsigned kb)
{
	return kb == 0 || (kb >= BLITZ_EVENT_RING_KB_MIN && kb <= BLITZ_EVENT_RING_KB_MAX);
}

/*
 * env_signal - BLITZ_FLIGHT_SIGNAL: USR1, USR2 (SIG optional) or a number
 * of a signal a program may catch (not KILL or STOP).
 */
static int env_signal(int *out, char *err, size_t errlen)
{
	const char *v = getenv("BLITZ_FLIGHT_SIGNAL");
	unsigned n;

	if (!v)
		return 0;
	if (!strncmp(v, "SIG", 3))
		v += 3;
	if (!strcmp(v, "USR1"))
		n = SIGUSR1;
	else if (!strcmp(v, "USR2"))
		n = SIGUSR2;
	else if (parse_uint(v, 1, (unsigned long)SIGRTMAX, &n) || n == SIGKILL || n == SIGSTOP) {
		snprintf(err, errlen, "BLITZ_FLIGHT_SIGNAL=%s: expected USR1, USR2 or a signal number "
			 "from 1 to %d (not KILL or STOP)", getenv("BLITZ_FLIGHT_SIGNAL"), SIGRTMAX);
		return -EINVAL;
	}
	*out = (int)n;
	return 0;
}

/* env_us - @name, if set, as microseconds (1 .. @limit) into *@ns; -1 with @err filled if bad. */
static int env_us(const char *name, const char *what, unsigned limit, unsigned long long *ns,
		  char *err, size_t errlen)
{
	const char *v = getenv(name);
	unsigned us;

	if (!v)
		return 0;
	if (parse_uint(v, 1, limit, &us)) {
		snprintf(err, errlen, "%s=%s: expected %s in microseconds from 1 to %u",
			 name, v, what, limit);
		return -1;
	}
	*ns = us * 1000ull;
	return 0;
}

/* One accepted value of a choice knob and what it sets. */
struct env_choice {
	const char *name;
	int value;
};

/*
 * env_choice - @var, if set, must be one of @choices (@n of them): its
 * value into *@out.  -1 with "VAR=value: expected @expected" in @err if it
 * is none of them; 0 (and *@out untouched) if unset.
 */
static int env_choice(const char *var, const struct env_choice *choices, size_t n,
		      const char *expected, int *out, char *err, size_t errlen)
{
	const char *v = getenv(var);

	if (!v)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v, choices[i].name)) {
			*out = choices[i].value;
			return 0;
		}
	}
	snprintf(err, errlen, "%s=%s: expected %s", var, v, expected);
	return -1;
}

#define ENV_CHOICE(var, choices, expected, out, err, errlen) \
	env_choice(var, choices, sizeof(choices) / sizeof((choices)[0]), expected, out, err, errlen)

static const struct env_choice lifo_choices[] = { { "0", false }, { "1", true } };
static const struct env_choice steal_choices[] = {
	{ "half", BLITZ_STEAL_HALF }, { "one", BLITZ_STEAL_ONE },
};
static const struct env_choice wake_choices[] = {
	{ "backlog", BLITZ_WAKE_BACKLOG }, { "eager", BLITZ_WAKE_EAGER },
	{ "bounded", BLITZ_WAKE_BOUNDED },
};
static const struct env_choice rings_choices[] = {
	{ "worker", BLITZ_IO_URING_RINGS_WORKER }, { "shared", BLITZ_IO_URING_RINGS_SHARED },
};

/*
 * env_backend - BLITZ_BACKEND, if set, must name a backend (the names are
 * blitz_backend_name()'s): that one into *@out.  -1 with "BLITZ_BACKEND=value:
 * expected auto, io_uring, ..." (every name) in @err if it names none.
 */
static int env_backend(enum blitz_io_backend *out, char *err, size_t errlen)
{
	const char *v = getenv("BLITZ_BACKEND"), *name;
	size_t n;

	if (!v || !blitz_backend_parse(v, out))
		return 0;
	n = (size_t)snprintf(err, errlen, "BLITZ_BACKEND=%s: expected", v);
	for (int b = 0; (name = blitz_backend_name(b)) && n < errlen; b++)
		n += (size_t)snprintf(err + n, errlen - n, "%s %s",
				      !b ? "" : blitz_backend_name(b + 1) ? "," : " or", name);
	return -1;
}

int blitz_config_from_env(struct blitz_config *cfg, char *err, size_t errlen)
{
	struct blitz_config c = *cfg;
	const char *v;
	int lifo = c.lifo, steal = c.steal, wake = c.wake, rings = c.io_uring_rings;

	if ((v = getenv("BLITZ_WORKERS")) &&
	    parse_uint(v, 1, CONFIG_MAX_WORKERS, &c.workers)) {
		snprintf(err, errlen, "BLITZ_WORKERS=%s: expected a number of workers from 1 to %u",
			 v, CONFIG_MAX_WORKERS);
		return -EINVAL;
	}
	if (ENV_CHOICE("BLITZ_LIFO", lifo_choices, "0 (LIFO slot off) or 1 (on)", &lifo, err, errlen))
		return -EINVAL;
	if ((v = getenv("BLITZ_GLOBAL_INTERVAL"))) {
		if (!strcmp(v, "adaptive"))
			c.global_interval = 0;
		else if (parse_uint(v, 1, BLITZ_MAX_GLOBAL_INTERVAL, &c.global_interval)) {
			snprintf(err, errlen,
				 "BLITZ_GLOBAL_INTERVAL=%s: expected 'adaptive' or a number of polls from 1 to %u",
				 v, BLITZ_MAX_GLOBAL_INTERVAL);
			return -EINVAL;
		}
	}
	if (ENV_CHOICE("BLITZ_STEAL", steal_choices, "'half' or 'one'", &steal, err, errlen))
		return -EINVAL;
	if ((v = getenv("BLITZ_BUDGET")) && parse_uint(v, 1, 1u << 20, &c.budget)) {
		snprintf(err, errlen, "BLITZ_BUDGET=%s: expected a number of polls per tick from 1 to %u",
			 v, 1u << 20);
		return -EINVAL;
	}
	if ((v = getenv("BLITZ_TRACE_SAMPLE")) && parse_uint(v, 1, 1000000, &c.trace_sample)) {
		snprintf(err, errlen, "BLITZ_TRACE_SAMPLE=%s: expected N from 1 to 1000000 (trace one task in N)", v);
		return -EINVAL;
	}
	if ((v = getenv("BLITZ_HIST_SAMPLE")) && strcmp(v, "auto") == 0) {
		c.hist_sample = BLITZ_HIST_SAMPLE_AUTO;
	} else if (v && (parse_uint(v, 1, BLITZ_HIST_SAMPLE_MAX, &c.hist_sample) ||
			 !power_of_two(c.hist_sample))) {
		snprintf(err, errlen, "BLITZ_HIST_SAMPLE=%s: expected auto or a power of two from 1 to %u (time one tick in N)",
			 v, BLITZ_HIST_SAMPLE_MAX);
		return -EINVAL;
	}
	if ((v = getenv("BLITZ_BLOCKING_THREADS")) &&
	    parse_uint(v, 1, BLITZ_BLOCKING_THREADS_LIMIT, &c.max_blocking_threads)) {
		snprintf(err, errlen,
			 "BLITZ_BLOCKING_THREADS=%s: expected a blocking-pool thread cap from 1 to %u",
			 v, BLITZ_BLOCKING_THREADS_LIMIT);
		return -EINVAL;
	}
	if ((v = getenv("BLITZ_BLOCKING_IDLE_MS")) &&
	    parse_uint(v, 1, BLITZ_BLOCKING_IDLE_MS_LIMIT, &c.blocking_idle_ms)) {
		snprintf(err, errlen,
			 "BLITZ_BLOCKING_IDLE_MS=%s: expected an idle timeout in milliseconds from 1 to %u",
			 v, BLITZ_BLOCKING_IDLE_MS_LIMIT);
		return -EINVAL;
	}
	if (ENV_CHOICE("BLITZ_WAKE", wake_choices, "'backlog', 'eager' or 'bounded'", &wake, err,
		       errlen))
		return -EINVAL;
	if (env_us("BLITZ_WAKE_MIN_BACKLOG_US", "a backlog", BLITZ_WAKE_LIMIT_US,
		   &c.wake_min_backlog_ns, err, errlen) ||
	    env_us("BLITZ_WAKE_BACKLOG_US", "a backlog", BLITZ_WAKE_LIMIT_US,
		   &c.wake_backlog_ns, err, errlen) ||
	    env_us("BLITZ_WAKE_BUSY_US", "a time awake", BLITZ_WAKE_LIMIT_US,
		   &c.wake_busy_ns, err, errlen) ||
	    env_us("BLITZ_PARK_TIMEOUT_US", "a parked worker's longest sleep",
		   BLITZ_PARK_TIMEOUT_LIMIT_US, &c.park_timeout_ns, err, errlen))
		return -EINVAL;
	if (env_backend(&c.backend, err, errlen))
		return -EINVAL;
	if ((v = getenv("BLITZ_EVENT_RING_KB")) &&
	    parse_uint(v, BLITZ_EVENT_RING_KB_MIN, BLITZ_EVENT_RING_KB_MAX, &c.event_ring_kb)) {
		snprintf(err, errlen, "BLITZ_EVENT_RING_KB=%s: expected the event log's ring per worker "
			 "in KiB, from %u to %u", v, BLITZ_EVENT_RING_KB_MIN, BLITZ_EVENT_RING_KB_MAX);
		return -EINVAL;
	}
	if ((v = getenv("BLITZ_FLIGHT")) &&
	    (parse_uint(v, 0, BLITZ_EVENT_RING_KB_MAX, &c.flight_kb) || !ring_kb_ok(c.flight_kb))) {
		snprintf(err, errlen, "BLITZ_FLIGHT=%s: expected 0 (off) or the flight recorder's ring "
			 "per worker in KiB, from %u to %u", v, BLITZ_EVENT_RING_KB_MIN,
			 BLITZ_EVENT_RING_KB_MAX);
		return -EINVAL;
	}
	if (env_signal(&c.flight_signal, err, errlen))
		return -EINVAL;
	if (ENV_CHOICE("BLITZ_IO_URING_RINGS", rings_choices, "'worker' (a ring per worker) or 'shared'",
		       &rings, err, errlen))
		return -EINVAL;
	c.io_uring_rings = (enum blitz_io_uring_rings)rings;
	c.lifo = lifo;
	c.steal = (enum blitz_steal_policy)steal;
	c.wake = (enum blitz_wake_policy)wake;
	*cfg = c;
	return 0;
}

int blitz_config_validate(const struct blitz_config *cfg, char *err, size_t errlen)
{
	if (cfg->workers > CONFIG_MAX_WORKERS) {
		snprintf(err, errlen, "workers=%u: at most %u (CONFIG_MAX_WORKERS)",
			 cfg->workers, CONFIG_MAX_WORKERS);
		return -EINVAL;
	}
	if (cfg->global_interval > BLITZ_MAX_GLOBAL_INTERVAL) {
		snprintf(err, errlen, "global_interval=%u: 0 (adaptive) or 1 to %u",
			 cfg->global_interval, BLITZ_MAX_GLOBAL_INTERVAL);
		return -EINVAL;
	}
	if (cfg->steal != BLITZ_STEAL_HALF && cfg->steal != BLITZ_STEAL_ONE) {
		snprintf(err, errlen, "steal=%d: BLITZ_STEAL_HALF or BLITZ_STEAL_ONE", cfg->steal);
		return -EINVAL;
	}
	if (!blitz_backend_name(cfg->backend)) {
		snprintf(err, errlen, "backend=%d: not a value of enum blitz_io_backend", cfg->backend);
		return -EINVAL;
	}
	if (cfg->max_blocking_threads > BLITZ_BLOCKING_THREADS_LIMIT) {
		snprintf(err, errlen, "max_blocking_threads=%u: 0 (default %u) or 1 to %u",
			 cfg->max_blocking_threads, CONFIG_MAX_BLOCKING_THREADS,
			 BLITZ_BLOCKING_THREADS_LIMIT);
		return -EINVAL;
	}
	if (cfg->blocking_idle_ms > BLITZ_BLOCKING_IDLE_MS_LIMIT) {
		snprintf(err, errlen, "blocking_idle_ms=%u: 0 (default %u) or 1 to %u",
			 cfg->blocking_idle_ms, BLITZ_BLOCKING_IDLE_MS, BLITZ_BLOCKING_IDLE_MS_LIMIT);
		return -EINVAL;
	}
	if (cfg->wake != BLITZ_WAKE_BACKLOG && cfg->wake != BLITZ_WAKE_EAGER &&
	    cfg->wake != BLITZ_WAKE_BOUNDED) {
		snprintf(err, errlen, "wake=%d: BLITZ_WAKE_BACKLOG, BLITZ_WAKE_EAGER or BLITZ_WAKE_BOUNDED",
			 cfg->wake);
		return -EINVAL;
	}
	if (cfg->hist_sample && (!power_of_two(cfg->hist_sample) || cfg->hist_sample > BLITZ_HIST_SAMPLE_MAX)) {
		snprintf(err, errlen, "hist_sample=%u: 0 (auto) or a power of two up to %u",
			 cfg->hist_sample, BLITZ_HIST_SAMPLE_MAX);
		return -EINVAL;
	}
	if (cfg->park_timeout_ns > BLITZ_PARK_TIMEOUT_LIMIT_US * 1000ull) {
		snprintf(err, errlen, "park_timeout_ns=%llu: 0 (default %llu) or 1 to %llu",
			 cfg->park_timeout_ns, BLITZ_PARK_TIMEOUT_NS,
			 BLITZ_PARK_TIMEOUT_LIMIT_US * 1000ull);
		return -EINVAL;
	}
	if (!ring_kb_ok(cfg->event_ring_kb) || !ring_kb_ok(cfg->flight_kb)) {
		snprintf(err, errlen, "event_ring_kb=%u, flight_kb=%u: 0 (the default, off) or %u to %u KiB",
			 cfg->event_ring_kb, cfg->flight_kb, BLITZ_EVENT_RING_KB_MIN,
			 BLITZ_EVENT_RING_KB_MAX);
		return -EINVAL;
	}
	if (cfg->flight_signal < 0 || cfg->flight_signal > SIGRTMAX ||
	    cfg->flight_signal == SIGKILL || cfg->flight_signal == SIGSTOP) {
		snprintf(err, errlen, "flight_signal=%d: 0 (none) or a signal from 1 to %d, not KILL or STOP",
			 cfg->flight_signal, SIGRTMAX);
		return -EINVAL;
	}
	if (cfg->io_uring_rings != BLITZ_IO_URING_RINGS_WORKER &&
	    cfg->io_uring_rings != BLITZ_IO_URING_RINGS_SHARED) {
		snprintf(err, errlen, "io_uring_rings=%d: not a value of enum blitz_io_uring_rings",
			 cfg->io_uring_rings);
		return -EINVAL;
	}
	if (cfg->budget == 0) {
		snprintf(err, errlen, "budget=0: at least 1 poll per tick");
		return -EINVAL;
	}
	return 0;
}
