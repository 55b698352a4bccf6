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
 * static executable) of the -p process, else the default ($BLITZ_LIB, the
 * libblitz.so of the build tree or install prefix beside the tool,
 * /usr/local/lib/libblitz.so); and check that it carries blitz USDT probes.
 * On any problem prints one line and exits 1.
 */
void tool_find_binary(struct tool_env *env);

/*
 * tool_attach - attach every autoloaded program of @obj to the blitz probe of
 * the same name in env->binary (of env->pid, or of every process).  Exits 1
 * with one line on failure.
 */
void tool_attach(struct tool_env *env, struct bpf_object *obj);
void tool_detach(struct tool_env *env);

/* tool_banner - "Tracing <what> in <binary>... Hit Ctrl-C to end." on stderr. */
void tool_banner(const struct tool_env *env, const char *what);

#endif /* BLITZ_TOOLS_USDT_TARGET_H */
