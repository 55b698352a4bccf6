// SPDX-License-Identifier: MIT
/*
 * tools/usdt_target.c - the USDT probes a tool traces: which binary holds
 * them (-b, the -p process's libblitz.so or executable, or the default),
 * checking that it carries blitz probes, attaching a skeleton's programs to
 * them and detaching, the banner that says the tool is ready, and the
 * watch for a process that maps the binary.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <bpf/libbpf.h>
#include "elf_notes.h"
#include "print_loop.h"
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

/*
 * The default binary: $BLITZ_LIB, the installed library beside the tool,
 * the build tree's, /usr/local/lib.  The installed one comes before the
 * build tree's: PREFIX/../lib may hold another libblitz.so (an install
 * under the build tree, /usr/bin/../../lib), which the installed programs
 * do not map.
 */
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

		/* Installed: PREFIX/bin/blitz-x -> PREFIX/lib/libblitz.so */
		snprintf(cand[nc++], sizeof(cand[0]), "%s/../lib/libblitz.so", dir);
		/* Build tree: $(O)/tools/bin/blitz-x -> $(O)/lib/libblitz.so */
		snprintf(cand[nc++], sizeof(cand[0]), "%s/../../lib/libblitz.so", dir);
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

		/* Ctrl-C already: the wait that follows ends at once. */
		if (tool_exiting)
			return;
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

	/* Not ready: Ctrl-C came before every probe was attached. */
	if (tool_exiting)
		return;
	if (env->pid)
		snprintf(pid, sizeof(pid), " of PID %d", env->pid);
	fprintf(stderr, "Tracing %s in %s%s... Hit Ctrl-C to end.\n", what, env->binary, pid);
	fflush(stderr);
}

/* A process that maps a libblitz.so other than the traced binary (the warning's hint). */
struct other_lib {
	pid_t pid;
	char comm[32];
	char path[PATH_MAX];
};

/* comm_of - the command name of @pid into @buf ("?" if it is gone). */
static void comm_of(pid_t pid, char *buf, size_t len)
{
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/comm", pid);
	snprintf(buf, len, "?");
	f = fopen(name, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/*
 * maps_file - the device, inode and path of a file mapped on @line of a
 * /proc/PID/maps ("addr perms offset major:minor inode path"); false for
 * an anonymous mapping.  Cuts @line's newline.
 */
static bool maps_file(char *line, dev_t *dev, ino_t *ino, char **path)
{
	unsigned int maj, min;
	unsigned long long inode;
	int off = 0;
	char *nl;

	if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &inode, &off) < 3 ||
	    !off || line[off] != '/')
		return false;
	nl = strchr(line + off, '\n');
	if (nl)
		*nl = '\0';
	*dev = makedev(maj, min);
	*ino = (ino_t)inode;
	*path = line + off;
	return true;
}

/*
 * pid_maps - does process @pid map @st (the binary, by device and inode:
 * the same file under another path or mount namespace) or @binary (by
 * path)?  Notes in @other the first libblitz.so of another file it maps,
 * if @other has none yet.
 */
static bool pid_maps(pid_t pid, const struct stat *st, const char *binary,
		     struct other_lib *other)
{
	char name[64], line[PATH_MAX + 256];
	bool found = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "re");
	if (!f)
		return false;	/* gone, or a kernel thread's */
	while (!found && fgets(line, sizeof(line), f)) {
		const char *base;
		dev_t dev;
		ino_t ino;
		char *path;

		if (!maps_file(line, &dev, &ino, &path))
			continue;
		if ((dev == st->st_dev && ino == st->st_ino) || !strcmp(path, binary)) {
			found = true;
		} else if (!other->pid) {
			base = strrchr(path, '/') + 1;
			if (strstr(base, "libblitz.so")) {
				other->pid = pid;
				snprintf(other->path, sizeof(other->path), "%s", path);
			}
		}
	}
	fclose(f);
	return found;
}

/* any_maps - does a process other than this one map env->binary?  Fills @other. */
static bool any_maps(const struct tool_env *env, struct other_lib *other)
{
	pid_t self = getpid();
	struct dirent *de;
	struct stat st;
	bool found = false;
	DIR *d;

	if (stat(env->binary, &st))
		return true;	/* nothing to compare with: say nothing */
	d = opendir("/proc");
	if (!d)
		return true;
	/* Ctrl-C cuts the scan short (and says nothing): a host may have many processes. */
	while (!found && !tool_exiting && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		found = pid_maps((pid_t)pid, &st, env->binary, other);
	}
	closedir(d);
	return found || tool_exiting;
}

static void warn_unmapped(const struct tool_env *env, const struct other_lib *other)
{
	char hint[PATH_MAX + 96] = "";

	if (other->pid)
		snprintf(hint, sizeof(hint), " (process %d, %s, maps %s)", other->pid,
			 other->comm, other->path);
	fprintf(stderr, "blitz-%s: no process maps %s yet (still waiting: a program is traced "
		"once it maps it); to trace a running program, -p PID; for another "
		"libblitz.so, -b PATH%s\n", env->def->name, env->binary, hint);
	fflush(stderr);
}

/* How often the processes' maps are read, and how long before the warning. */
#define WATCH_EVERY_S	1.0
#define WATCH_WARN_S	2.0

/* watch_scan - one look at the processes' maps, due at @now; the warning if its time has come. */
static void watch_scan(struct tool_env *env, double now)
{
	struct other_lib other = { 0 };

	if (any_maps(env, &other)) {
		env->watch_done = true;
		return;
	}
	if (now - env->ready_at < WATCH_WARN_S) {
		env->next_scan = now + WATCH_EVERY_S;
		return;
	}
	if (other.pid)
		comm_of(other.pid, other.comm, sizeof(other.comm));
	warn_unmapped(env, &other);
	env->watch_done = true;
}

void tool_watch_mapped(struct tool_env *env, double now)
{
	if (env->pid)
		env->watch_done = true;	/* its own binary, mapped or to be: nothing to say */
	if (env->watch_done)
		return;
	if (env->ready_at == 0)
		env->ready_at = now;
	if (now >= env->next_scan)
		watch_scan(env, now);
}
