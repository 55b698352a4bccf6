// SPDX-License-Identifier: MIT
/*
 * tools/usdt_target.c - the USDT probes a tool traces: which binary holds
 * them (-b, the -p process's libblitz.so or executable, or the default),
 * checking that it carries blitz probes, attaching a skeleton's programs to
 * them and detaching.
 */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "elf_notes.h"
#include "tool_args.h"
#include "usdt_target.h"

/*
 * elf_count_probes - how many USDT notes of @provider @path has: >= 0, or
 * -errno (-ENOEXEC: not an ELF file).
 */
static int elf_count_probes(const char *path, const char *provider)
{
	int fd, count;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	count = e ? elf_count_notes(e, provider) : -ENOEXEC;
	if (e)
		elf_end(e);
	close(fd);
	return count;
}

/* Copy @path into env->binary; false if it does not fit. */
static bool set_binary(struct tool_env *env, const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(env->binary))
		return false;
	memcpy(env->binary, path, n + 1);
	return true;
}

static bool usable(const char *path)
{
	return access(path, R_OK) == 0 && elf_count_probes(path, "blitz") > 0;
}

/* The libblitz.so (or static program with blitz probes) mapped by @pid. */
static bool binary_of_pid(struct tool_env *env)
{
	char maps[64], line[PATH_MAX + 256], exe[PATH_MAX];
	bool found = false;
	FILE *f;
	ssize_t n;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", env->pid);
	f = fopen(maps, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/'), *nl;

		if (!path)
			continue;
		nl = strchr(path, '\n');
		if (nl)
			*nl = '\0';
		if (!strstr(basename(path), "libblitz.so"))
			continue;
		/* From another mount namespace the path resolves under its root. */
		if (usable(path)) {
			found = set_binary(env, path);
		} else {
			char alt[PATH_MAX + 64];

			snprintf(alt, sizeof(alt), "/proc/%d/root%s", env->pid, path);
			if (usable(alt))
				found = set_binary(env, alt);
		}
	}
	fclose(f);
	if (found)
		return true;
	/* Statically linked: the probes are in the executable. */
	snprintf(maps, sizeof(maps), "/proc/%d/exe", env->pid);
	n = readlink(maps, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (usable(exe))
			return set_binary(env, exe);
		if (usable(maps))
			return set_binary(env, maps);
	}
	return false;
}

/* The default binary: $BLITZ_LIB, beside the tool, /usr/local/lib. */
static bool default_binary(struct tool_env *env, char *tried, size_t len)
{
	char self[PATH_MAX], cand[4][PATH_MAX + 32];
	const char *lib = getenv("BLITZ_LIB");
	ssize_t n;
	int nc = 0;

	if (lib && *lib)
		snprintf(cand[nc++], sizeof(cand[0]), "%s", lib);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *dir = dirname(self);

		/* Build tree: $(O)/tools/bin/blitz-x -> $(O)/lib/libblitz.so */
		snprintf(cand[nc++], sizeof(cand[0]), "%s/../../lib/libblitz.so", dir);
		/* Installed: PREFIX/bin/blitz-x -> PREFIX/lib/libblitz.so */
		snprintf(cand[nc++], sizeof(cand[0]), "%s/../lib/libblitz.so", dir);
	}
	snprintf(cand[nc++], sizeof(cand[0]), "/usr/local/lib/libblitz.so");
	tried[0] = '\0';
	for (int i = 0; i < nc; i++) {
		if (access(cand[i], R_OK) == 0) {
			if (!realpath(cand[i], env->binary))
				return set_binary(env, cand[i]);
			return true;
		}
		if (strlen(tried) + strlen(cand[i]) + 3 < len) {
			if (i)
				strcat(tried, ", ");
			strcat(tried, cand[i]);
		}
	}
	return false;
}

void tool_find_binary(struct tool_env *env)
{
	char tried[4 * PATH_MAX];
	int r;

	if (env->binary_arg) {
		if (access(env->binary_arg, R_OK))
			tool_die(env, "%s: %s", env->binary_arg, strerror(errno));
		if (!realpath(env->binary_arg, env->binary) && !set_binary(env, env->binary_arg))
			tool_die(env, "%s: path too long", env->binary_arg);
	} else if (env->pid) {
		if (!binary_of_pid(env))
			tool_die(env, "process %d has no libblitz.so mapped and its executable "
				 "no blitz USDT probes; give the binary with -b PATH", env->pid);
	} else if (!default_binary(env, tried, sizeof(tried))) {
		tool_die(env, "no libblitz.so found (tried %s); give one with -b PATH", tried);
	}

	r = elf_count_probes(env->binary, "blitz");
	if (r == -ENOEXEC)
		tool_die(env, "%s is not an ELF file", env->binary);
	if (r < 0)
		tool_die(env, "%s: %s", env->binary, strerror(-r));
	if (r == 0)
		tool_die(env, "%s has no blitz USDT probes (built with CONFIG_PROBES=n?)",
			 env->binary);
}

void tool_attach(struct tool_env *env, struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		const char *probe = bpf_program__name(prog);
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;
		if (env->nr_links == TOOL_MAX_LINKS)
			tool_die(env, "too many probes");
		link = bpf_program__attach_usdt(prog, env->pid ? env->pid : -1, env->binary,
						"blitz", probe, NULL);
		if (!link) {
			int err = errno;

			if (err == ENOENT)
				tool_die(env, "%s has no probe blitz:%s (an older libblitz?)",
					 env->binary, probe);
			if (err == ESRCH)
				tool_die(env, "no such process: %d", env->pid);
			tool_die(env, "cannot attach blitz:%s in %s: %s", probe, env->binary,
				 strerror(err));
		}
		env->links[env->nr_links++] = link;
	}
}

void tool_detach(struct tool_env *env)
{
	while (env->nr_links > 0)
		bpf_link__destroy(env->links[--env->nr_links]);
}

void tool_banner(const struct tool_env *env, const char *what)
{
	char pid[32] = "";

	if (env->pid)
		snprintf(pid, sizeof(pid), " of PID %d", env->pid);
	fprintf(stderr, "Tracing %s in %s%s... Hit Ctrl-C to end.\n", what, env->binary, pid);
	fflush(stderr);
}
