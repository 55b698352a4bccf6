// SPDX-License-Identifier: MIT
/*
 * tools/bpf_setup.c - getting a tool ready to load its BPF programs: root,
 * the target process and binary, the memlock limit, libbpf's log, the
 * kernel's support for uprobe programs; and the one-line checks of a
 * skeleton's open and load.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpf_setup.h"
#include "print_loop.h"
#include "tool_args.h"
#include "usdt_target.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

void tool_setup(struct tool_env *env)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	int r;

	/*
	 * First: a tool started in the background of a script inherits
	 * SIGINT ignored, and a Ctrl-C before the handler is in place is lost.
	 */
	tool_catch_signals();

	if (geteuid() != 0)
		tool_die(env, "must be run as root (needs CAP_BPF/CAP_PERFMON)");

	if (env->pid && kill(env->pid, 0) && errno == ESRCH)
		tool_die(env, "no such process: %d", env->pid);

	tool_find_binary(env);

	/* Kernels since 5.11 charge BPF memory to the cgroup; older need this. */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	libbpf_set_print(env->verbose ? libbpf_print : libbpf_quiet);

	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL);
	if (r <= 0)
		tool_die(env, "BPF unavailable: cannot load a kprobe/uprobe program (%s)",
			 r < 0 ? strerror(-r) : "not supported by this kernel");
}

void *tool_opened(const struct tool_env *env, void *skel)
{
	if (!skel)
		tool_die(env, "cannot open the BPF object: %s", strerror(errno));
	return skel;
}

void tool_loaded(const struct tool_env *env, int err)
{
	if (err)
		tool_die(env, "cannot load the BPF programs: %s (run with -v for libbpf's log)",
			 strerror(-err));
}

