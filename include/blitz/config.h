/* SPDX-License-Identifier: MIT */
/*
 * blitz/config.h - runtime configuration and the policy knobs.
 *
 * Every knob can be set in the struct or from the environment, so that a
 * researcher can switch a mechanism off without recompiling:
 *
 *   BLITZ_WORKERS=N                     worker threads (1..max)
 *   BLITZ_LIFO=0|1                      the per-worker LIFO slot
 *   BLITZ_GLOBAL_INTERVAL=adaptive|N    global-queue check interval (polls)
 *   BLITZ_STEAL=half|one                steal half of a victim's ring or one task
 *   BLITZ_BUDGET=N                      polls per tick (cooperative budget)
 *   BLITZ_BACKEND=io_uring|epoll|poll   the I/O backend (default: the first that works)
 *   BLITZ_TRACE_SAMPLE=N                task_* probes fire for one task in N (default 1: all)
 *   BLITZ_HIST_SAMPLE=auto|N            summary histograms time one tick in N, a power of two (default auto)
 *   BLITZ_BLOCKING_THREADS=N            blocking-pool thread cap (default 512)
 *   BLITZ_BLOCKING_IDLE_MS=N            a pool thread idle this long exits (default 10000)
 *   BLITZ_WAKE=backlog|eager|bounded    when a local push wakes a parked worker (below)
 *   BLITZ_WAKE_MIN_BACKLOG_US=N         backlog: the backlog (tasks x EWMA poll time) that wakes one (default 5)
 *   BLITZ_WAKE_BACKLOG_US=N             bounded: the backlog (tasks x EWMA poll time) that wakes one
 *   BLITZ_WAKE_BUSY_US=N                bounded: time awake without parking after which any backlog does
 *   BLITZ_PARK_TIMEOUT_US=N             a parked worker's longest sleep (default 10000; below)
 *   BLITZ_EVENT_RING_KB=N               the event log's ring per worker, KiB (default 4096)
 *   BLITZ_FLIGHT=N                      the flight recorder: each worker keeps its last N KiB of
 *                                       records (default 0: off; blitz/trace.h)
 *   BLITZ_FLIGHT_SIGNAL=USR1|USR2|N     the signal that dumps it to blitz-flight.PID (default none)
 *   BLITZ_IO_URING_RINGS=worker|shared  io_uring: a ring per worker (default) or one for all
 */
#ifndef BLITZ_CONFIG_H
#define BLITZ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The knobs' defaults and bounds (the scheduler's own constants are
 * core/sched/constants.h; docs/scheduler.md, "Constants").
 */
#define BLITZ_BUDGET_PER_TICK        128		/* cfg.budget's default */
#define BLITZ_MAX_GLOBAL_INTERVAL    255		/* cfg.global_interval's bound */
#define BLITZ_PARK_TIMEOUT_NS        10000000ull	/* the default; cfg.park_timeout_ns */
#define BLITZ_PARK_TIMEOUT_LIMIT_US  3600000000u	/* BLITZ_PARK_TIMEOUT_US's cap: 1 hour */
#define BLITZ_JOIN_STACK_RESERVE     (128u << 10)	/* a join with less left does not help */
#define BLITZ_EVENT_RING_KB_MIN      64		/* event_ring_kb, flight_kb: bounds */
#define BLITZ_EVENT_RING_KB_MAX      (1u << 20)

/* The blocking pool (docs/blocking.md). */
#define BLITZ_BLOCKING_THREADS_LIMIT 32768	/* most threads a cap may allow */
#define BLITZ_BLOCKING_IDLE_MS       10000	/* 10 s idle timeout */
#define BLITZ_BLOCKING_IDLE_MS_LIMIT 86400000	/* one day */

/*
 * io_uring's rings (docs/io.md): one per worker, each submitted to and
 * reaped by its own thread (SINGLE_ISSUER | DEFER_TASKRUN), the default;
 * or one that every thread shares, which is also the fallback where the
 * kernel refuses those flags.
 */
enum blitz_io_uring_rings {
	BLITZ_IO_URING_RINGS_WORKER = 0,
	BLITZ_IO_URING_RINGS_SHARED = 1,
};

enum blitz_steal_policy {
	BLITZ_STEAL_HALF = 0,	/* ceil(n/2), capped at capacity/2 (default) */
	BLITZ_STEAL_ONE  = 1,	/* one task per steal (ablation) */
};

/*
 * When a push to a worker's own queue wakes a parked worker
 * (BLITZ_WAKE=backlog|eager|bounded; docs/scheduler.md, "Waking another
 * worker").  eager: whenever the LIFO slot and the ring hold more than one
 * task (Tokio's rule).  backlog (the default): eager's rule, and only when
 * that many tasks times the worker's EWMA poll time reaches
 * wake_min_backlog_ns, or the ring overflowed: a backlog the worker runs
 * before a woken one could start is left to it.  bounded: only when the
 * backlog reaches wake_backlog_ns, when the worker has been awake without
 * parking for wake_busy_ns, or when the ring overflowed, and more (the
 * docs); otherwise the worker is keeping up and runs the backlog itself.
 */
enum blitz_wake_policy {
	BLITZ_WAKE_EAGER   = 0,
	BLITZ_WAKE_BOUNDED = 1,
	BLITZ_WAKE_BACKLOG = 2,
};
#define BLITZ_WAKE_MIN_BACKLOG_NS    5000ull	/* backlog: 5 us, under one wake's cost */
#define BLITZ_WAKE_BACKLOG_NS        50000ull	/* bounded: 50 us */
#define BLITZ_WAKE_BUSY_NS           300000ull	/* 300 us */
#define BLITZ_WAKE_LIMIT_US          1000000u	/* the env knobs' cap: 1 s */

/*
 * Summary histograms (docs/probes.md): the polls and schedules of one
 * tick in N timed (N on average, a power of two); by default
 * (BLITZ_HIST_SAMPLE_AUTO) each worker picks N from its average poll
 * time, so that the timed ticks add about 1% (at most
 * BLITZ_HIST_SAMPLE_AUTO_MAX).
 */
#define BLITZ_HIST_SAMPLE_AUTO       0
#define BLITZ_HIST_SAMPLE_AUTO_MAX   1024
#define BLITZ_HIST_SAMPLE_MAX        65536

/* The I/O backend (BLITZ_BACKEND=io_uring|epoll|poll|auto). */
enum blitz_io_backend {
	BLITZ_BACKEND_AUTO = 0,		/* io_uring, else epoll, else poll */
	BLITZ_BACKEND_IO_URING,
	BLITZ_BACKEND_EPOLL,
	BLITZ_BACKEND_POLL,
};

/**
 * blitz_backend_name - the name of backend @b: "auto", "io_uring", "epoll"
 * or "poll", the words BLITZ_BACKEND takes.
 *
 * Return: the name, or NULL if @b is no value of enum blitz_io_backend (so
 * counting @b up from BLITZ_BACKEND_AUTO until NULL lists them all).
 */
const char *blitz_backend_name(enum blitz_io_backend b);

/**
 * blitz_backend_parse - the backend called @name (as blitz_backend_name()
 * spells it) into *@out.
 *
 * Return: 0, or -EINVAL (and *@out untouched) if @name is NULL or no
 * backend's name.
 */
int blitz_backend_parse(const char *name, enum blitz_io_backend *out);

struct blitz_config {
	unsigned workers;		/* 0: the number of online CPUs */
	bool lifo;			/* LIFO slot on (default) or off */
	unsigned global_interval;	/* 0: adaptive (EWMA); else fixed, 1..255 */
	enum blitz_steal_policy steal;
	unsigned budget;		/* polls per tick, >= 1 */
	enum blitz_io_backend backend;	/* AUTO by default */
	unsigned trace_sample;		/* task_* probes for 1 task in N (0, 1: all) */
	unsigned max_blocking_threads;	/* blocking-pool cap; 0: CONFIG_MAX_BLOCKING_THREADS */
	unsigned blocking_idle_ms;	/* idle pool thread exits after; 0: 10 s */
	enum blitz_wake_policy wake;	/* BACKLOG by default */
	unsigned long long wake_backlog_ns;	/* bounded: backlog that wakes; 0: default */
	unsigned long long wake_busy_ns;	/* bounded: awake this long, any backlog wakes; 0: default */
	unsigned hist_sample;		/* summary histograms time 1 tick in N (a power of two); 0: auto */
	/*
	 * A parked worker wakes after this long even if nobody woke it: the
	 * bound on a wake the protocol leaves out by design (a local push
	 * seen late, backlog's skipped wake behind a poll longer than the
	 * EWMA, bounded's held work) and the pace of a few housekeeping
	 * checks (a tracer's attach and detach, the exit hand-over); 0:
	 * BLITZ_PARK_TIMEOUT_NS.  Raised far above the default, a wake that
	 * only the timeout delivers shows as a hang (docs/scheduler.md).
	 */
	unsigned long long park_timeout_ns;
	unsigned long long wake_min_backlog_ns;	/* backlog: backlog that wakes; 0: default */
	unsigned event_ring_kb;		/* the event log's ring per worker, KiB; 0: 4096 */
	unsigned flight_kb;		/* the flight recorder's ring per worker, KiB; 0: off */
	int flight_signal;		/* dumps the flight recorder (blitz/trace.h); 0: none */
	enum blitz_io_uring_rings io_uring_rings;	/* io_uring: a ring per worker or one */
};

/**
 * blitz_config_default - fill @cfg with the defaults (docs/scheduler.md).
 */
void blitz_config_default(struct blitz_config *cfg);

/**
 * blitz_config_from_env - apply the BLITZ_* environment variables to @cfg.
 * @err: receives a message naming the variable and its accepted values
 *       (cut to @errlen; NULL or 0: no message).
 *
 * Return: 0, or -EINVAL with @err filled (and @cfg unchanged) on a bad value.
 */
int blitz_config_from_env(struct blitz_config *cfg, char *err, size_t errlen);

/**
 * blitz_config_validate - check @cfg; -EINVAL with @err filled if it is bad.
 */
int blitz_config_validate(const struct blitz_config *cfg, char *err, size_t errlen);

/** blitz_max_workers - the most workers this build supports (CONFIG_MAX_WORKERS). */
unsigned blitz_max_workers(void);

#endif /* BLITZ_CONFIG_H */
