// SPDX-License-Identifier: MIT
/*
 * tools/trace_helpers.c - the common code of the blitz tools (see
 * trace_helpers.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "trace_helpers.h"

volatile sig_atomic_t tool_exiting;

const char *argp_program_version = "blitz-tools 0.1.0";

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

void tool_die(const struct tool_env *env, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "blitz-%s: ", env->def->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

enum {
	OPT_PID = 'p',
	OPT_BINARY = 'b',
	OPT_MS = 'm',
	OPT_US = 'u',
	OPT_NS = 'n',
	OPT_WORKER = 'W',
	OPT_JSON = 'j',
	OPT_VERBOSE = 'v',
	OPT_HELP = 'h',
};

static const struct argp_option common_opts[] = {
	{ "pid", OPT_PID, "PID", 0, "Trace this process only", 0 },
	{ "binary", OPT_BINARY, "PATH", 0,
	  "The libblitz.so (or static program) to attach to; default: $BLITZ_LIB, "
	  "then the libblitz.so of the build tree or install prefix beside the tool, "
	  "then /usr/local/lib/libblitz.so", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per interval (for tools/plot)", 0 },
	{ "verbose", OPT_VERBOSE, NULL, 0, "Verbose debug output (libbpf's log)", 0 },
	{ NULL, OPT_HELP, NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{ 0 },
};

static const struct argp_option unit_opts[] = {
	{ "milliseconds", OPT_MS, NULL, 0, "Histogram in milliseconds", 0 },
	{ "microseconds", OPT_US, NULL, 0, "Histogram in microseconds", 0 },
	{ "nanoseconds", OPT_NS, NULL, 0, "Histogram in nanoseconds", 0 },
	{ 0 },
};

static const struct argp_option worker_opts[] = {
	{ "per-worker", OPT_WORKER, NULL, 0, "One histogram per worker", 0 },
	{ 0 },
};

static long parse_long(struct argp_state *state, const char *what, const char *arg,
		       long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < lo || v > hi)
		argp_error(state, "invalid %s: %s", what, arg);
	return v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct tool_env *env = state->input;
	char *end;

	switch (key) {
	case OPT_PID:
		env->pid = (pid_t)parse_long(state, "PID", arg, 1, INT_MAX);
		break;
	case OPT_BINARY:
		env->binary_arg = arg;
		break;
	case OPT_MS:
		env->unit = UNIT_MS;
		break;
	case OPT_US:
		env->unit = UNIT_US;
		break;
	case OPT_NS:
		env->unit = UNIT_NS;
		break;
	case OPT_WORKER:
		env->per_worker = true;
		break;
	case OPT_JSON:
		env->json = true;
		break;
	case OPT_VERBOSE:
		env->verbose = true;
		break;
	case OPT_HELP:
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num == 0) {
			errno = 0;
			env->interval = strtod(arg, &end);
			if (errno || *end || end == arg || !(env->interval > 0) ||
			    env->interval > 86400)
				argp_error(state, "invalid interval: %s", arg);
		} else if (state->arg_num == 1) {
			env->count = parse_long(state, "count", arg, 1, LONG_MAX);
		} else {
			argp_error(state, "unrecognized positional argument: %s", arg);
		}
		break;
	default:
		for (const struct tool_flag *f = env->def->flags; f && f->name; f++) {
			if (f->key == key) {
				*f->var = true;
				return 0;
			}
		}
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static size_t nr_opts(const struct argp_option *o)
{
	size_t n = 0;

	while (o && (o[n].name || o[n].key))
		n++;
	return n;
}

/* flag_opts - the argp options of @flags (a calloc'ed array, ended by a zero entry). */
static struct argp_option *flag_opts(const struct tool_env *env, const struct tool_flag *flags)
{
	size_t n = 0;
	struct argp_option *o;

	while (flags && flags[n].name)
		n++;
	o = calloc(n + 1, sizeof(*o));
	if (!o)
		tool_die(env, "out of memory");
	for (size_t i = 0; i < n; i++)
		o[i] = (struct argp_option){ flags[i].name, flags[i].key, NULL, 0, flags[i].doc, 0 };
	return o;
}

void tool_parse_args(struct tool_env *env, const struct tool_def *def, int argc, char **argv)
{
	struct argp_option *own = flag_opts(env, def->flags);
	const struct argp_option *parts[4] = { common_opts };
	size_t n = 0, k = 0;
	struct argp_option *opts;
	char *doc;
	struct argp argp = { 0 };

	env->def = def;
	env->unit = def->unit;
	if (def->opts & TOOL_OPT_UNITS)
		parts[1] = unit_opts;
	if (def->opts & TOOL_OPT_WORKER)
		parts[2] = worker_opts;
	parts[3] = own;
	for (int i = 0; i < 4; i++)
		n += nr_opts(parts[i]);
	opts = calloc(n + 1, sizeof(*opts));
	if (!opts)
		tool_die(env, "out of memory");
	for (int i = 0; i < 4; i++)
		for (size_t m = 0; m < nr_opts(parts[i]); m++)
			opts[k++] = parts[i][m];
	if (asprintf(&doc, "%s\v"
		     "EXAMPLES:\n%s", def->summary, def->examples) < 0)
		tool_die(env, "out of memory");
	argp.options = opts;
	argp.parser = parse_arg;
	argp.args_doc = "[interval [count]]";
	argp.doc = doc;
	if (argp_parse(&argp, argc, argv, 0, NULL, env))
		exit(2);
	free(opts);
	free(own);
	free(doc);
}

/* ------------------------------------------------------------------------ */
/* The binary and its probes                                                 */

/*
 * elf_count_probes - how many USDT notes of @provider @path has: >= 0, or
 * -errno (-ENOEXEC: not an ELF file).
 */
static int elf_count_probes(const char *path, const char *provider)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int fd, count = 0;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
		if (e)
			elf_end(e);
		close(fd);
		return -ENOEXEC;
	}
	/* A note's descriptor: pc, base, semaphore (addresses), then strings. */
	size_t addr = gelf_getclass(e) == ELFCLASS32 ? 4 : 8;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;
		size_t off = 0, next, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *d = (const char *)data->d_buf + desc_off;

			if (nh.n_type == 3 && nh.n_namesz == 8 &&
			    !memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) &&
			    nh.n_descsz > 3 * addr &&
			    strnlen(d + 3 * addr, nh.n_descsz - 3 * addr) < nh.n_descsz - 3 * addr &&
			    !strcmp(d + 3 * addr, provider))
				count++;
			off = next;
		}
	}
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

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void on_signal(int sig)
{
	tool_exiting = 1;
}

void tool_setup(struct tool_env *env)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct sigaction sa = { .sa_handler = on_signal };
	char tried[4 * PATH_MAX];
	int r;

	if (geteuid() != 0)
		tool_die(env, "must be run as root (needs CAP_BPF/CAP_PERFMON)");

	if (env->pid && kill(env->pid, 0) && errno == ESRCH)
		tool_die(env, "no such process: %d", env->pid);

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

	/* Kernels since 5.11 charge BPF memory to the cgroup; older need this. */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	libbpf_set_print(env->verbose ? libbpf_print : libbpf_quiet);

	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL);
	if (r <= 0)
		tool_die(env, "BPF unavailable: cannot load a kprobe/uprobe program (%s)",
			 r < 0 ? strerror(-r) : "not supported by this kernel");

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ------------------------------------------------------------------------ */
/* Attaching                                                                 */

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

/* ------------------------------------------------------------------------ */
/* The print loop                                                            */

double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The -p process still runs: it exists and is not a zombie awaiting its parent. */
static bool target_alive(const struct tool_env *env)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	if (!env->pid)
		return true;
	if (kill(env->pid, 0) && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", env->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')'. */
	p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

bool tool_wait(struct tool_env *env, int (*poll)(void *ctx, int timeout_ms), void *ctx)
{
	double deadline, now;
	bool last = false;

	if (env->last_print == 0)
		env->last_print = now_mono();
	deadline = env->interval > 0 ? env->last_print + env->interval : 0;
	for (;;) {
		double slice = 0.2;

		now = now_mono();
		if (tool_exiting) {
			last = true;
			break;
		}
		if (!target_alive(env)) {
			env->target_gone = true;
			last = true;
			break;
		}
		if (deadline && now >= deadline)
			break;
		if (deadline && deadline - now < slice)
			slice = deadline - now;
		if (poll) {
			poll(ctx, (int)(slice * 1000) + 1);
		} else {
			struct timespec ts = {
				.tv_sec = (time_t)slice,
				.tv_nsec = (long)((slice - (double)(time_t)slice) * 1e9),
			};

			nanosleep(&ts, NULL);
		}
	}
	env->elapsed = now - env->last_print;
	env->last_print = now;
	env->prints++;
	if (env->count && env->prints >= env->count)
		last = true;
	return last;
}

/* ------------------------------------------------------------------------ */
/* Units                                                                     */

__u64 unit_div(enum tool_unit unit)
{
	switch (unit) {
	case UNIT_US: return 1000;
	case UNIT_MS: return 1000000;
	default: return 1;
	}
}

const char *unit_name(enum tool_unit unit)
{
	switch (unit) {
	case UNIT_NS: return "ns";
	case UNIT_US: return "us";
	case UNIT_MS: return "ms";
	default: return "tasks";
	}
}

const char *unit_header(enum tool_unit unit)
{
	switch (unit) {
	case UNIT_NS: return "nsecs";
	case UNIT_US: return "usecs";
	case UNIT_MS: return "msecs";
	default: return "tasks";
	}
}

/* ------------------------------------------------------------------------ */
/* Snapshots of maps                                                         */

void snap_init(struct snap *s, size_t key_size, size_t val_size)
{
	memset(s, 0, sizeof(*s));
	s->key_size = key_size;
	s->val_size = val_size;
}

void snap_free(struct snap *s)
{
	free(s->keys);
	free(s->vals);
	snap_init(s, s->key_size, s->val_size);
}

static int key_cmp(const void *a, const void *b, size_t size)
{
	const __s32 *x = a, *y = b;

	for (size_t i = 0; i < size / 4; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static size_t g_sort_key_size;

static int entry_cmp(const void *a, const void *b)
{
	return key_cmp(a, b, g_sort_key_size);
}

static int snap_grow(struct snap *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	char *k = realloc(s->keys, cap * s->key_size);

	if (!k)
		return -ENOMEM;
	s->keys = k;
	__u64 *v = realloc(s->vals, cap * s->val_size);

	if (!v)
		return -ENOMEM;
	s->vals = v;
	s->cap = cap;
	return 0;
}

int snap_read(int map_fd, struct snap *s)
{
	char key[64], next[64];
	void *prev = NULL;
	size_t ent = s->key_size + s->val_size;
	char *tmp;

	if (s->key_size > sizeof(key))
		return -EINVAL;
	s->n = 0;
	while (bpf_map_get_next_key(map_fd, prev, next) == 0) {
		if (s->n == s->cap && snap_grow(s))
			return -ENOMEM;
		memcpy(s->keys + s->n * s->key_size, next, s->key_size);
		if (bpf_map_lookup_elem(map_fd, next, snap_val(s, s->n)) == 0)
			s->n++;
		memcpy(key, next, s->key_size);
		prev = key;
	}
	if (s->n < 2)
		return 0;
	/* Sort key+value pairs together through a packed copy. */
	tmp = malloc(s->n * ent);
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		memcpy(tmp + i * ent, snap_key(s, i), s->key_size);
		memcpy(tmp + i * ent + s->key_size, snap_val(s, i), s->val_size);
	}
	g_sort_key_size = s->key_size;
	qsort(tmp, s->n, ent, entry_cmp);
	for (size_t i = 0; i < s->n; i++) {
		memcpy(s->keys + i * s->key_size, tmp + i * ent, s->key_size);
		memcpy(snap_val(s, i), tmp + i * ent + s->key_size, s->val_size);
	}
	free(tmp);
	return 0;
}

int snap_delta(int map_fd, struct snap *cur, struct snap *prev)
{
	size_t words = cur->val_size / 8, j = 0;
	int r = snap_read(map_fd, cur);

	if (r)
		return r;
	/* prev keeps this read; cur becomes the difference. */
	struct snap now;

	snap_init(&now, cur->key_size, cur->val_size);
	for (size_t i = 0; i < cur->n; i++) {
		if (now.n == now.cap && snap_grow(&now))
			return -ENOMEM;
		memcpy(now.keys + i * now.key_size, snap_key(cur, i), cur->key_size);
		memcpy(snap_val(&now, i), snap_val(cur, i), cur->val_size);
		now.n++;
	}
	/* Both sorted: walk them together. */
	for (size_t i = 0; i < cur->n; i++) {
		while (j < prev->n && key_cmp(snap_key(prev, j), snap_key(cur, i), cur->key_size) < 0)
			j++;
		if (j < prev->n && !key_cmp(snap_key(prev, j), snap_key(cur, i), cur->key_size))
			for (size_t w = 0; w < words; w++)
				snap_val(cur, i)[w] -= snap_val(prev, j)[w];
	}
	snap_free(prev);
	*prev = now;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Text output                                                               */

static void print_stars(__u64 val, __u64 val_max, int width)
{
	int stars = (int)((val < val_max ? val : val_max) * (__u64)width / val_max);

	for (int i = 0; i < width; i++)
		putchar(i < stars ? '*' : ' ');
	if (val > val_max)
		putchar('+');
}

void print_log2_hist(const __u64 *slots, int nr_slots, const char *header)
{
	int idx_max = -1, stars;
	__u64 val_max = 0;

	for (int i = 0; i < nr_slots; i++) {
		if (slots[i] > 0)
			idx_max = i;
		if (slots[i] > val_max)
			val_max = slots[i];
	}
	if (idx_max < 0)
		return;
	/* Wider columns once the bucket bounds pass 32 bits. */
	bool wide = idx_max > 32;

	stars = wide ? 20 : 40;
	printf("%*s%-*s : count    distribution\n", wide ? 15 : 5, "", wide ? 29 : 19, header);
	for (int i = 0; i <= idx_max; i++) {
		unsigned long long low = (1ULL << (i + 1)) >> 1;
		unsigned long long high = (1ULL << (i + 1)) - 1;

		if (low == high)
			low -= 1;
		printf("%*llu -> %-*llu : %-8llu |", wide ? 20 : 10, low, wide ? 20 : 10, high,
		       (unsigned long long)slots[i]);
		print_stars(slots[i], val_max, stars);
		printf("|\n");
	}
}

void tool_print_time(const struct tool_env *env)
{
	char buf[32];
	time_t t;
	struct tm tm;

	if (env->interval <= 0)
		return;
	t = time(NULL);
	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	printf("\n%s\n", buf);
}

/* ------------------------------------------------------------------------ */
/* JSON output                                                               */

static void json_sep(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key)
		fprintf(j->f, "\"%s\":", key);
}

static void json_open(struct json *j, const char *key, char c)
{
	json_sep(j, key);
	fputc(c, j->f);
	if (j->depth < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])) - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

void json_obj_begin(struct json *j, const char *key) { json_open(j, key, '{'); }
void json_arr_begin(struct json *j, const char *key) { json_open(j, key, '['); }
void json_obj_end(struct json *j) { j->depth--; fputc('}', j->f); }
void json_arr_end(struct json *j) { j->depth--; fputc(']', j->f); }

void json_int(struct json *j, const char *key, long long v)
{
	json_sep(j, key);
	fprintf(j->f, "%lld", v);
}

void json_uint(struct json *j, const char *key, unsigned long long v)
{
	json_sep(j, key);
	fprintf(j->f, "%llu", v);
}

void json_double(struct json *j, const char *key, double v, int decimals)
{
	json_sep(j, key);
	fprintf(j->f, "%.*f", decimals, v);
}

void json_null(struct json *j, const char *key)
{
	json_sep(j, key);
	fputs("null", j->f);
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_sep(j, key);
	fputc('"', j->f);
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->f, "\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			fprintf(j->f, "\\u%04x", *p);
		else
			fputc(*p, j->f);
	}
	fputc('"', j->f);
}

void tool_json_begin(struct json *j, const struct tool_env *env, const char *unit)
{
	memset(j, 0, sizeof(*j));
	j->f = stdout;
	json_obj_begin(j, NULL);
	json_str(j, "tool", env->def->name);
	json_str(j, "unit", unit);
	json_double(j, "ts", now_unix(), 6);
	if (env->interval > 0)
		json_double(j, "interval_s", env->elapsed, 6);
	else
		json_null(j, "interval_s");
}

void tool_json_end(struct json *j)
{
	json_obj_end(j);
	fputc('\n', j->f);
	fflush(j->f);
}

void json_hist(struct json *j, const char *label, int worker, const struct hist *h,
	       __u64 sum_div)
{
	int idx_max = -1;

	for (int i = 0; i < MAX_SLOTS; i++)
		if (h->slots[i])
			idx_max = i;
	json_obj_begin(j, NULL);
	json_str(j, "label", label);
	json_int(j, "worker", worker);
	json_arr_begin(j, "buckets");
	for (int i = 0; i <= idx_max; i++) {
		json_obj_begin(j, NULL);
		json_uint(j, "low", i == 0 ? 0 : 1ULL << i);
		json_uint(j, "high", (1ULL << (i + 1)) - 1);
		json_uint(j, "count", h->slots[i]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_uint(j, "count", h->count);
	if (sum_div > 1)
		json_double(j, "sum", (double)h->sum / (double)sum_div, 3);
	else
		json_uint(j, "sum", h->sum);
	json_obj_end(j);
}

const char *worker_label(int worker, char *buf, size_t len)
{
	if (worker == HIST_ALL)
		return "all";
	if (worker < 0)
		return "outside";
	snprintf(buf, len, "worker %d", worker);
	return buf;
}

bool hist_empty(const struct hist *h)
{
	return h->count == 0;
}

static const char *default_label(const struct hist_key *k, char *buf, size_t len)
{
	return worker_label(k->worker, buf, len);
}

void print_hist_snap(const struct tool_env *env, const struct snap *s, hist_label_fn label)
{
	char buf[64];

	if (!label)
		label = default_label;
	for (size_t i = 0; i < s->n; i++) {
		const struct hist_key *k = snap_key(s, i);
		const struct hist *h = (const struct hist *)snap_val(s, i);
		const char *l = label(k, buf, sizeof(buf));

		if (hist_empty(h))
			continue;
		if (strcmp(l, "all"))
			printf("\n%s\n", l);
		else
			putchar('\n');
		print_log2_hist(h->slots, MAX_SLOTS, unit_header(env->unit));
	}
}

void json_hist_snap(struct json *j, const struct snap *s, hist_label_fn label, __u64 sum_div)
{
	char buf[64];

	if (!label)
		label = default_label;
	json_arr_begin(j, "histograms");
	for (size_t i = 0; i < s->n; i++) {
		const struct hist_key *k = snap_key(s, i);

		json_hist(j, label(k, buf, sizeof(buf)), json_worker(k->worker),
			  (const struct hist *)snap_val(s, i), sum_div);
	}
	json_arr_end(j);
}

/* ------------------------------------------------------------------------ */
/* Histogram tools                                                           */

static void hist_tool_print(struct hist_tool *t)
{
	struct tool_env *env = t->env;
	__u64 unpaired = *t->unpaired, dropped = *t->dropped;
	__u64 d_unpaired = unpaired - t->prev_unpaired, d_dropped = dropped - t->prev_dropped;
	int err;

	t->prev_unpaired = unpaired;
	t->prev_dropped = dropped;
	err = snap_delta(t->map_fd, &t->cur, &t->prev);
	if (err)
		tool_die(env, "reading the histograms: %s", strerror(-err));

	if (env->json) {
		struct json j;

		tool_json_begin(&j, env, unit_name(env->unit));
		json_hist_snap(&j, &t->cur, t->json_label, unit_div(env->unit));
		json_uint(&j, "unpaired", d_unpaired);
		json_uint(&j, "dropped", d_dropped);
		tool_json_end(&j);
		return;
	}
	tool_print_time(env);
	print_hist_snap(env, &t->cur, t->text_label ? t->text_label : t->json_label);
	if (d_unpaired || d_dropped)
		printf("\n%llu %s, %llu events dropped (map full)\n",
		       (unsigned long long)d_unpaired, t->unpaired_what,
		       (unsigned long long)d_dropped);
	fflush(stdout);
}

void hist_tool_run(struct hist_tool *t, struct bpf_object *obj, size_t key_size,
		   const char *what)
{
	bool last;

	snap_init(&t->cur, key_size, sizeof(struct hist));
	snap_init(&t->prev, key_size, sizeof(struct hist));
	tool_attach(t->env, obj);
	tool_banner(t->env, what);
	do {
		last = tool_wait(t->env, NULL, NULL);
		hist_tool_print(t);
	} while (!last);
	tool_detach(t->env);
	snap_free(&t->cur);
	snap_free(&t->prev);
}
