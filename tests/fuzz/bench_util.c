// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/bench_util.c - the option parsing every bench shares
 * (experiments/workloads/bench_util.c), from any arguments.
 *
 * The input is an argument list, one word per NUL- or newline-separated
 * piece.  The first four words go through bench_parse_num(), bench_parse_size() and
 * bench_parse_backend() over wide and narrow ranges; the list goes through
 * bench_take_opt() (a value option and a flag, as blocking-bench takes
 * --sleep-us and --stats) and then bench_parse_args() with three benchmark
 * names.  A bad value exits 2 (returning here, bench_exit.h).
 * Properties: a value that is accepted is in its range (and a size is the
 * number times its suffix); a backend is a named one, never "auto"; only
 * --list and --help exit 0; the argument list stays NULL-terminated; what
 * bench_parse_args() accepts is in range and names only known benchmarks.
 */
#include "bench_exit.h"
#include "../../experiments/workloads/bench_util.h"

static const char *const names[] = { "spawn", "yield", "ping" };

static const char *name(size_t i)
{
	return names[i];
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fuzz [--workers N] [--iters K] [--warmup W] [--ops N] [--bench LIST]\n");
}

static const long ranges[][2] = {
	{ 1, 1000 }, { 0, 1000000 }, { 1, 1l << 40 }, { LONG_MIN, LONG_MAX }, { -5, 5 },
};

/* The checks run in their own frames: nothing of the caller's is live across the setjmp. */
static void num(const char *w, long lo, long hi)
{
	long v = 0;
	char *end;

	if (FUZZ_RUN(v = bench_parse_num("--n", w, lo, hi)) != FUZZ_RETURNED)
		return;
	FUZZ_CHECK(v >= lo && v <= hi);
	FUZZ_CHECK(strtol(w, &end, 10) == v && !*end);
}

static void size(const char *w, long lo, long hi)
{
	long v = 0, n, unit;
	char *end;

	if (FUZZ_RUN(v = bench_parse_size("--size", w, lo, hi)) != FUZZ_RETURNED)
		return;
	n = strtol(w, &end, 10);
	unit = !*end ? 1 : *end == 'K' ? 1l << 10 : *end == 'M' ? 1l << 20 : 1l << 30;
	FUZZ_CHECK(v >= lo && v <= hi);
	FUZZ_CHECK(n * unit == v);
}

static void backend(const char *w)
{
	enum blitz_io_backend b = BLITZ_BACKEND_AUTO;

	if (FUZZ_RUN(b = bench_parse_backend("--backend", w)) != FUZZ_RETURNED)
		return;
	FUZZ_CHECK(b != BLITZ_BACKEND_AUTO && blitz_backend_name(b));
	FUZZ_CHECK(!strcmp(blitz_backend_name(b), w));
}

static void values(const char *w)
{
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		num(w, ranges[i][0], ranges[i][1]);
		size(w, ranges[i][0], ranges[i][1]);
	}
	backend(w);
}

/* known - every comma-separated piece of @which is "all" or a name. */
static bool known(const char *which)
{
	for (const char *p = which; *p; ) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < 3 && (strlen(names[i]) != n || strncmp(p, names[i], n)); i++)
			;
		if (i == 3 && (n != 3 || strncmp(p, "all", 3)))
			return false;
		p += n + (p[n] == ',');
	}
	return true;
}

/* take - --sleep-us VALUE and --stats out of @a's list: false if --sleep-us has no value (exit 2). */
static bool take(struct fuzz_argv *a, int *argc)
{
	const char *stats;

	*argc = a->argc;
	if (FUZZ_RUN(bench_take_opt(argc, a->argv, "sleep-us", true)) != FUZZ_RETURNED)
		return false;
	FUZZ_CHECK(*argc >= 1 && *argc <= a->argc && !a->argv[*argc]);
	stats = bench_take_opt(argc, a->argv, "stats", false);
	FUZZ_CHECK(*argc >= 1 && !a->argv[*argc]);
	FUZZ_CHECK(!stats || !*stats);
	return true;
}

static void args(struct fuzz_argv *a)
{
	struct bench_args ba = { .which = "all", .iters = 5, .warmup = 1 };
	int argc, st;

	if (!take(a, &argc))
		return;
	ba.cfg.workers = 2;
	optind = 0;		/* GNU getopt: start over */
	st = FUZZ_RUN(bench_parse_args(argc, a->argv, &ba, 3, name, usage));
	FUZZ_CHECK(st == FUZZ_RETURNED || st == 0 || st == 2);
	if (st != FUZZ_RETURNED)
		return;
	FUZZ_CHECK(ba.iters >= 1 && ba.warmup >= 0 && ba.ops >= 0);
	FUZZ_CHECK(ba.cfg.workers >= 1 && ba.cfg.workers <= blitz_max_workers());
	FUZZ_CHECK(known(ba.which));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_argv a;

	fuzz_argv_init(&a, "fuzz", data, size);
	/* The first few words as values: more would slow the run, not reach new code. */
	for (int i = 1; i < a.argc && i <= 4; i++)
		values(a.argv[i]);
	if (a.argc > 2)
		(void)bench_selected(a.argv[1], a.argv[2]);
	args(&a);
	fuzz_argv_free(&a);
	return 0;
}
