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
 * Sets env->elapsed to the seconds this print covers.
 */
bool tool_wait(struct tool_env *env, int (*poll)(void *ctx, int timeout_ms), void *ctx);

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
