/* SPDX-License-Identifier: MIT */
/*
 * core/trace/exit_flush.h - the process exits while a tracer listens and
 * a runtime is still running (the program returned from main, or called
 * exit(), without blitz_runtime_free): each worker hands the tracer its
 * summary histograms and its event log's records before the process
 * goes, as it does at its own exit.  Without it a short program traced
 * from its start lost everything since its workers' last snapshot (up to
 * 200 ms: all of it, for a program shorter than that).
 *
 * A library destructor (exit_flush.c) asks each live runtime of this
 * process to hand over (rt->exit_flush) and waits, at most
 * EXIT_FLUSH_WAIT_NS, for every worker's answer: each does it at its next
 * tick (exit_flush_tick: within a park timeout, 10 ms, of an idle
 * worker; a worker inside a long poll answers after it, or not before
 * the wait ends).  A worker that is the exiting thread itself hands over
 * at once.  Untraced, the destructor returns at its first test, and a
 * tick tests only the worker's own collecting flags.  Before that, the
 * exiting thread hands over, from their copies, the records the other
 * threads' outside logs hold whole (event_log.c, events_outside_exit).
 *
 * The list's lock is taken with the same deadline (a thread may hold it
 * in blitz_runtime_new or _free, or a fork may have copied it held: a
 * child re-initializes it, and skips the parent's runtimes by pid).
 */
#ifndef BLITZ_CORE_SCHED_EXIT_FLUSH_H
#define BLITZ_CORE_SCHED_EXIT_FLUSH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The longest the exiting thread waits for the workers' hand-over: they
 * answer within a park timeout unless one is inside a long poll, or
 * starved of a CPU (a busy machine, a sanitizer's build).
 */
#define EXIT_FLUSH_WAIT_NS	(1000ull * 1000 * 1000)

struct blitz_runtime;
struct blitz_worker;

void exit_flush_register(struct blitz_runtime *rt);
void exit_flush_unregister(struct blitz_runtime *rt);
void exit_flush_worker(struct blitz_worker *w, uint64_t now_ns);
bool exit_flush_lock(pthread_mutex_t *lock, uint64_t deadline);

#endif
