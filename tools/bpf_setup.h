/* SPDX-License-Identifier: MIT */
/*
 * tools/bpf_setup.h - getting a tool ready to load its BPF programs, and
 * checking that its skeleton opened and loaded.
 */
#ifndef BLITZ_TOOLS_BPF_SETUP_H
#define BLITZ_TOOLS_BPF_SETUP_H

struct tool_env;

/*
 * tool_setup - everything before opening the skeleton: the signal
 * handlers (first: Ctrl-C from then on ends the tool), the root check, the
 * target process, the binary and its probes, the memlock limit, BPF itself,
 * libbpf's log.  On any problem prints one line "blitz-NAME: why" on
 * stderr and exits 1.
 */
void tool_setup(struct tool_env *env);

/*
 * tool_opened - check NAME_bpf__open()'s @skel; tool_loaded - check
 * NAME_bpf__load()'s @err.  On failure: one line and exit 1.
 */
void *tool_opened(const struct tool_env *env, void *skel);
void tool_loaded(const struct tool_env *env, int err);

#endif /* BLITZ_TOOLS_BPF_SETUP_H */
