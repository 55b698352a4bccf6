/* SPDX-License-Identifier: MIT */
/*
 * soak.h - what the soak program's parts share (experiments/soak/README.md):
 * the options, the counters every part adds to, and the task accounting.
 *
 * Counters are _Atomic uint64_t added to relaxed: each is a statistic read
 * by the sampler (a snapshot is enough), and the final checks read them
 * only after every task has finished and every client thread has been
 * joined, which orders every addition before the read (see soak.c).
 */
#ifndef BLITZ_SOAK_H
#define BLITZ_SOAK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <blitz.h>

#define PROG "blitz-soak"

struct soak_opts {
	struct blitz_config cfg;
	double duration_s;		/* --duration */
	double warmup_s;		/* --warmup; < 0: derived from the duration */
	double interval_s;		/* --interval: between samples */
	long connections;		/* --connections: the client's, all open at once */
	long client_threads;		/* --client-threads */
	long msgs_per_conn;		/* --msgs-per-conn: mean round trips before a close */
	long max_msg;			/* --max-msg: largest message, bytes */
	const char *samples;		/* --samples FILE: one JSON line per sample */
	const char *tmpdir;		/* --tmpdir: where the fs part writes */
};

/* The kinds of task the soak spawns; each is counted on its own. */
enum soak_kind {
	K_DRIVER,	/* the long-lived loops, one per part */
	K_ACCEPT,	/* the echo server's acceptor */
	K_ECHO,		/* one per connection */
	K_CHAN,		/* channel producers and consumers */
	K_BCAST,	/* broadcast receivers */
	K_SLEEP,	/* sleepers, cancelled or not */
	K_TIMEOUT,	/* receives under a timeout, and their senders */
	K_FANOUT,	/* fan-out children */
	K_FS,		/* file round trips */
	K_BLOCKING,	/* blocking-pool round trips */
	K_NR
};

extern const char *const soak_kind_name[K_NR];

struct soak_counters {
	/* Tasks, per kind: every spawn ends in exactly one drop. */
	_Atomic uint64_t spawned[K_NR], completed[K_NR], cancelled[K_NR];
	/* Echo: the client's view (every byte checked) and the server's. */
	_Atomic uint64_t conns_opened, conns_closed, connect_retries;
	_Atomic uint64_t msgs, bytes_checked, bytes_wrong, client_errors;
	_Atomic uint64_t client_fds;		/* open now */
	_Atomic uint64_t accepted, server_fds;	/* server_fds: open now */
	/* The other parts: operations done, and results found wrong. */
	_Atomic uint64_t chan_msgs, bcast_msgs, bcast_missed, sleeps, sleeps_cancelled;
	_Atomic uint64_t timeouts_fired, timeouts_beaten, fanout_joins, fs_ops, blocking_jobs;
	_Atomic uint64_t wrong;			/* any result a part found wrong */
};

extern struct soak_counters soak;
extern atomic_bool soak_stopping;	/* the run is over: parts wind down */

/* soak_add - add @n to counter @c (relaxed: see the header comment). */
static inline void soak_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline void soak_sub(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_sub_explicit(c, n, memory_order_relaxed);
}

static inline uint64_t soak_get(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/*
 * stopping - has the run ended?  Relaxed: a part that misses the flag once
 * does one more round and sees it next time; main waits for them all.
 */
static inline bool stopping(void)
{
	return atomic_load_explicit(&soak_stopping, memory_order_relaxed);
}

/*
 * soak_wrong - a part found a wrong result: count it and say what (the
 * first few only, so that a systematic fault does not flood stderr).
 */
void soak_wrong(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Task accounting.  Every task's state starts with a struct blitz_co, and
 * every drop function calls soak_task_dropped(): BLITZ_CO_END leaves the
 * coroutine's line at -1, so a task dropped with any other line was
 * cancelled.  soak_spawn and soak_spawn_detached count the spawn.
 */
struct blitz_task *soak_spawn(enum soak_kind k, const struct blitz_task_vtable *vt,
			      const void *state, size_t size);
int soak_spawn_detached(enum soak_kind k, const struct blitz_task_vtable *vt,
			const void *state, size_t size);
void soak_task_dropped(enum soak_kind k, const struct blitz_co *co);

/* The parts (echo.c, mix.c).  Each start returns 0 or exits with a message. */
int echo_server_start(struct blitz_runtime *rt, struct blitz_addr *bound);
void echo_server_stop(void);
void echo_server_close(void);
void echo_client_start(const struct soak_opts *o, const struct blitz_addr *to);
void echo_client_join(void);
void mix_start(struct blitz_runtime *rt, const struct soak_opts *o);
bool mix_done(void);
void mix_join(void);

/* uint64 hash (splitmix64's finaliser): the payloads and the random choices. */
static inline uint64_t soak_hash(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#endif /* BLITZ_SOAK_H */
