/* SPDX-License-Identifier: MIT */
/*
 * tools/print_loop.h - when a tool prints and what heads each print: the
 * wait for the next interval or the end, the time line of a text print,
 * the envelope of a JSON print.
 */
#ifndef BLITZ_TOOLS_PRINT_LOOP_H
#define BLITZ_TOOLS_PRINT_LOOP_H

#include <signal.h>
#include <stdbool.h>

struct json;
struct tool_env;

/* Set by SIGINT / SIGTERM once tool_catch_signals() has run. */
extern volatile sig_atomic_t tool_exiting;

/* tool_catch_signals - SIGINT and SIGTERM end the loop after one last print. */
void tool_catch_signals(void);

/*
 * tool_wait - sleep until the next print is due (the interval has passed,
 * or, without an interval, until Ctrl-C / SIGTERM / the -p process exits).
 * @poll, if not NULL, is called instead of sleeping with a timeout in ms
 * (a ring buffer's poll).  Returns true when this print is the last one.
 * Sets env->elapsed to the seconds this print covers.  Meanwhile, without
 * -p, says once on stderr if no process maps the binary (tool_watch_mapped).
 * Ctrl-C ends the wait within one slice (200 ms) at most.
 */
bool tool_wait(struct tool_env *env, int (*poll)(void *ctx, int timeout_ms), void *ctx);

struct ring_buffer;

/*
 * tool_ring_take - take the samples @rb holds, waiting up to @timeout_ms
 * for them if it is > 0 (else only what is there), at most @max of them.
 * libbpf's poll and consume call the sample callback for as long as the
 * producer keeps ahead of it: bounded, a busy program cannot keep a tool
 * in there past Ctrl-C or its interval.  @print: the take before a print,
 * which Ctrl-C does not cut short (give @max as the ring's capacity: it
 * takes what the ring holds); otherwise Ctrl-C ends the take at once.
 * The ring's sample callback must return tool_sample_taken().
 * Return: ring_buffer__poll()'s or ring_buffer__consume()'s.
 */
int tool_ring_take(struct ring_buffer *rb, int timeout_ms, long max, bool print);

/* tool_sample_taken - 0, or -EINTR when the take in progress must stop there. */
int tool_sample_taken(void);

/* The header of a text print: the time, in interval mode. */
void tool_print_time(const struct tool_env *env);

/*
 * tool_json_begin - start one interval's object on stdout:
 * {"tool":..,"unit":..,"ts":..,"interval_s":..   (tool_json_end closes it).
 */
void tool_json_begin(struct json *j, const struct tool_env *env, const char *unit);
void tool_json_end(struct json *j);

/* Wall-clock seconds (CLOCK_REALTIME) and CLOCK_MONOTONIC seconds. */
double now_unix(void);
double now_mono(void);

#endif /* BLITZ_TOOLS_PRINT_LOOP_H */
