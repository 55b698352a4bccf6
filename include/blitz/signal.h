/* SPDX-License-Identifier: MIT */
/*
 * blitz/signal.h - signals as an async stream (signalfd).
 *
 *	sigset_t set;
 *	sigemptyset(&set);
 *	sigaddset(&set, SIGTERM);
 *	blitz_signals_block(&set);		// in main(), before any thread exists
 *	struct blitz_signals *sig = blitz_signals_open(&set);
 *	...
 *	BLITZ_AWAIT(&s->co, blitz_signals_recv_poll(sig, &s->r, cx));
 *	if (s->r.result == SIGTERM) ... s->r.info.ssi_pid sent it
 *
 * The mask rule.  A process-directed signal goes to any thread that does not
 * block it; signalfd only sees signals that stay pending, so every thread of
 * the process must block the signals of a stream:
 *  - the runtime's threads (workers and the blocking pool) block every
 *    asynchronous signal from birth (blitz_signals_runtime_set(): all but
 *    SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGPROF,
 *    SIGKILL, SIGSTOP): no signal handler ever runs on a worker, and a
 *    write to a broken pipe in a worker is -EPIPE, never a fatal SIGPIPE;
 *  - the program's own threads are its business: block the stream's signals
 *    in main() with blitz_signals_block() BEFORE creating any other thread
 *    (threads inherit the mask of their creator).  A thread that does not
 *    block SIGTERM takes it with its default action: the process dies.
 *    blitz_signals_open() blocks the set in the calling thread, too late
 *    for threads that already exist.
 *
 * Standard signals do not queue: two SIGTERMs sent before the stream reads
 * the first are received once.  Real-time signals (SIGRTMIN..) queue.
 * Several streams may watch the same signal: each delivery goes to one of
 * them.  A child process starts with an empty mask (blitz/process.h).
 */
#ifndef BLITZ_SIGNAL_H
#define BLITZ_SIGNAL_H

#include <signal.h>
#include <sys/signalfd.h>
#include <blitz/net.h>

struct blitz_signals;

/**
 * blitz_signals_runtime_set - the asynchronous signals that the runtime's
 * threads block: every signal but the synchronous ones (faults, SIGABRT),
 * SIGPROF (profilers) and the unblockable SIGKILL and SIGSTOP.
 * @set: filled in.
 */
void blitz_signals_runtime_set(sigset_t *set);

/**
 * blitz_signals_block - block @set in the calling thread (pthread_sigmask).
 * @set: the signals, or NULL for blitz_signals_runtime_set().
 *
 * Call it in main() before creating any thread, so that every thread
 * inherits the mask.
 * Return: 0 or -errno.
 */
int blitz_signals_block(const sigset_t *set);

/**
 * blitz_signals_open - a stream receiving the signals of @set.
 * @set: the signals; NULL and synchronous ones (see above) are refused
 *       (EINVAL); an empty set makes a stream that never receives.
 *
 * Blocks @set in the calling thread and opens a non-blocking, close-on-exec
 * signalfd.  The stream works on every backend; it may be opened from any
 * thread, and read from a task of any runtime.
 * Return: the stream, or NULL with errno set.
 */
struct blitz_signals *blitz_signals_open(const sigset_t *set);

/**
 * blitz_signals_close - close @s.  No receive may be pending on it (cancel
 * and await it first).  The signals stay blocked.
 */
void blitz_signals_close(struct blitz_signals *s);

/** blitz_signals_fd - the stream's signalfd (for inspection). */
int blitz_signals_fd(const struct blitz_signals *s);

/* A receive: in the task's state, zeroed before its first poll. */
struct blitz_signal_recv {
	struct blitz_xfer x;
	int result;			/* the signal number, or -errno */
	struct signalfd_siginfo info;	/* sender (ssi_pid, ssi_uid), code, value */
};

/**
 * blitz_signals_recv_poll - await the next signal of @s.
 * @s: the stream.
 * @r: the receive, in the task's state; ready for the next call once this
 *     one returned BLITZ_READY.
 * @cx: the poll context.
 * Return: BLITZ_READY when r->result is the signal (and r->info filled), or
 * -errno (-ECANCELED after blitz_signals_recv_cancel()).
 */
enum blitz_poll blitz_signals_recv_poll(struct blitz_signals *s, struct blitz_signal_recv *r,
					struct blitz_cx *cx);

/**
 * blitz_signals_recv_cancel - cancel a pending receive (from a drop function
 * or a task that stops waiting); it completes with -ECANCELED, or with the
 * signal if one won the race: await it, or let the task end.
 */
void blitz_signals_recv_cancel(struct blitz_signal_recv *r);

#endif /* BLITZ_SIGNAL_H */
