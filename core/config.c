// SPDX-License-Identifier: MIT
/* core/config.c - the runtime configuration and the BLITZ_* policy knobs. */
#include <errno.h>
#include <limits.h>
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
	cfg->wake = BLITZ_WAKE_EAGER;
	cfg->wake_backlog_ns = BLITZ_WAKE_BACKLOG_NS;
	cfg->wake_busy_ns = BLITZ_WAKE_BUSY_NS;
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

/* env_us - @name, if set, as microseconds (1 .. 1 s) into *@ns; -1 with @err filled if bad. */
static int env_us(const char *name, const char *what, unsigned long long *ns,
		  char *err, size_t errlen)
{
	const char *v = getenv(name);
	unsigned us;

	if (!v)
		return 0;
	if (parse_uint(v, 1, BLITZ_WAKE_LIMIT_US, &us)) {
		snprintf(err, errlen, "%s=%s: expected %s in microseconds from 1 to %u",
			 name, v, what, BLITZ_WAKE_LIMIT_US);
		return -1;
	}
	*ns = us * 1000ull;
	return 0;
}

int blitz_config_from_env(struct blitz_config *cfg, char *err, size_t errlen)
{
	struct blitz_config c = *cfg;
	const char *v;

	if ((v = getenv("BLITZ_WORKERS")) &&
	    parse_uint(v, 1, CONFIG_MAX_WORKERS, &c.workers)) {
		snprintf(err, errlen, "BLITZ_WORKERS=%s: expected a number of workers from 1 to %u",
			 v, CONFIG_MAX_WORKERS);
		return -EINVAL;
	}
	if ((v = getenv("BLITZ_LIFO"))) {
		if (!strcmp(v, "0"))
			c.lifo = false;
		else if (!strcmp(v, "1"))
			c.lifo = true;
		else {
			snprintf(err, errlen, "BLITZ_LIFO=%s: expected 0 (LIFO slot off) or 1 (on)", v);
			return -EINVAL;
		}
	}
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
	if ((v = getenv("BLITZ_STEAL"))) {
		if (!strcmp(v, "half"))
			c.steal = BLITZ_STEAL_HALF;
		else if (!strcmp(v, "one"))
			c.steal = BLITZ_STEAL_ONE;
		else {
			snprintf(err, errlen, "BLITZ_STEAL=%s: expected 'half' or 'one'", v);
			return -EINVAL;
		}
	}
	if ((v = getenv("BLITZ_BUDGET")) && parse_uint(v, 1, 1u << 20, &c.budget)) {
		snprintf(err, errlen, "BLITZ_BUDGET=%s: expected a number of polls per tick from 1 to %u",
			 v, 1u << 20);
		return -EINVAL;
	}
	if ((v = getenv("BLITZ_TRACE_SAMPLE")) && parse_uint(v, 1, 1000000, &c.trace_sample)) {
		snprintf(err, errlen, "BLITZ_TRACE_SAMPLE=%s: expected N from 1 to 1000000 (trace one task in N)", v);
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
	if ((v = getenv("BLITZ_WAKE"))) {
		if (!strcmp(v, "eager"))
			c.wake = BLITZ_WAKE_EAGER;
		else if (!strcmp(v, "bounded"))
			c.wake = BLITZ_WAKE_BOUNDED;
		else {
			snprintf(err, errlen, "BLITZ_WAKE=%s: expected 'eager' or 'bounded'", v);
			return -EINVAL;
		}
	}
	if (env_us("BLITZ_WAKE_BACKLOG_US", "a backlog", &c.wake_backlog_ns, err, errlen) ||
	    env_us("BLITZ_WAKE_BUSY_US", "a time awake", &c.wake_busy_ns, err, errlen))
		return -EINVAL;
	if ((v = getenv("BLITZ_BACKEND"))) {
		if (!strcmp(v, "io_uring"))
			c.backend = BLITZ_BACKEND_IO_URING;
		else if (!strcmp(v, "epoll"))
			c.backend = BLITZ_BACKEND_EPOLL;
		else if (!strcmp(v, "poll"))
			c.backend = BLITZ_BACKEND_POLL;
		else if (!strcmp(v, "auto"))
			c.backend = BLITZ_BACKEND_AUTO;
		else {
			snprintf(err, errlen, "BLITZ_BACKEND=%s: expected io_uring, epoll, poll or auto", v);
			return -EINVAL;
		}
	}
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
	if (cfg->backend > BLITZ_BACKEND_POLL) {
		snprintf(err, errlen, "backend=%d: BLITZ_BACKEND_AUTO, _IO_URING, _EPOLL or _POLL", cfg->backend);
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
	if (cfg->wake != BLITZ_WAKE_EAGER && cfg->wake != BLITZ_WAKE_BOUNDED) {
		snprintf(err, errlen, "wake=%d: BLITZ_WAKE_EAGER or BLITZ_WAKE_BOUNDED", cfg->wake);
		return -EINVAL;
	}
	if (cfg->budget == 0) {
		snprintf(err, errlen, "budget=0: at least 1 poll per tick");
		return -EINVAL;
	}
	return 0;
}
