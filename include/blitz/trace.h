/* SPDX-License-Identifier: MIT */
/*
 * blitz/trace.h - the flight recorder's dump (docs/probes.md, "The flight
 * recorder").
 *
 * With BLITZ_FLIGHT=N (cfg.flight_kb), each worker keeps its last N KiB
 * of event-log records in a ring in memory, overwriting the oldest, with
 * no tracer attached; a dump writes what the rings hold, as a trace file
 * (<blitz/trace/events.h>) that `blitz-events --read` reads.  Three ways to take
 * one: this call, the signal BLITZ_FLIGHT_SIGNAL names (to
 * blitz-flight.PID in the process's working directory), and
 * `blitz-events --dump PID` from outside, which reads the rings in place.
 * While a tracer reads the rings (blitz-events), a dump holds what it has
 * not yet taken.
 */
#ifndef BLITZ_TRACE_H
#define BLITZ_TRACE_H

/**
 * blitz_trace_dump - write every worker's ring of this process to the
 * file @path (created, or replaced), as a trace file.  The file appears
 * whole: it is written as "@path.part" and renamed when complete.
 *
 * Only memory reads and system calls: it may be called while the workers
 * run, and from a signal handler.
 *
 * Return: the number of logs written (each up to 512 records), or
 * -EINVAL (@path NULL or empty), -ENAMETOOLONG, -ENODATA (no ring: the
 * flight recorder is off and no tracer reads the event log; no file is
 * left), -EBUSY (another dump held the rings for 100 ms), or open(2)'s,
 * write(2)'s or rename(2)'s -errno.
 */
int blitz_trace_dump(const char *path);

#endif /* BLITZ_TRACE_H */
