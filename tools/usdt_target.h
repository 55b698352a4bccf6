/* SPDX-License-Identifier: MIT */
/*
 * tools/usdt_target.h - the USDT probes a tool traces: which binary holds
 * them, attaching a skeleton's programs to them, detaching.
 */
#ifndef BLITZ_TOOLS_USDT_TARGET_H
#define BLITZ_TOOLS_USDT_TARGET_H

struct bpf_object;
struct tool_env;

/*
 * tool_find_binary - set env->binary: -b as given, else the libblitz.so (or
 * static executable) of the -p process, else the default ($BLITZ_LIB,
 * PREFIX/lib/libblitz.so for a tool in PREFIX/bin, the build tree's
 * $(O)/lib/libblitz.so for one in $(O)/tools/bin, /usr/local/lib/libblitz.so);
 * and check that it carries blitz USDT probes.  On any problem prints one
 * line and exits 1.
 */
void tool_find_binary(struct tool_env *env);

/*
 * tool_attach - attach every autoloaded program of @obj to the blitz probe of
 * the same name in env->binary (of env->pid, or of every process).  Exits 1
 * with one line on failure; stops early after Ctrl-C.
 */
void tool_attach(struct tool_env *env, struct bpf_object *obj);
void tool_detach(struct tool_env *env);

/*
 * tool_banner - the ready line, once tool_attach() is done:
 * "Tracing <what> in <binary>[ of PID N]... Hit Ctrl-C to end." on stderr,
 * flushed.  Not printed after Ctrl-C (the probes may not all be attached).
 */
void tool_banner(const struct tool_env *env, const char *what);

/*
 * tool_watch_mapped - without -p, from the first call (at ready) on: once a
 * second, does any process map env->binary (by device and inode, or path)?
 * If none does 2 s after ready, one line on stderr says so and how to fix it
 * (start the program, -p PID, -b PATH naming a process's other libblitz.so
 * if one maps one); then, or once one maps it, it looks no more.  With -p
 * it says nothing.  Called by tool_wait() with CLOCK_MONOTONIC @now.
 */
void tool_watch_mapped(struct tool_env *env, double now);

#endif /* BLITZ_TOOLS_USDT_TARGET_H */
