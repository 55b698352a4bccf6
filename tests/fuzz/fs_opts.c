// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fs_opts.c - fs-bench's options (parse_opts() of
 * experiments/workloads/fs_bench.c: comma-separated lists of backends,
 * block sizes and task counts), from any arguments.
 *
 * The input is an argument list, one word per NUL- or newline-separated
 * piece.  A bad option exits 2 (returning here, bench_exit.h).
 * Properties: only --help exits 0 and nothing else but 2; a parse that
 * returns leaves one or more distinct named backends (no more than the
 * library names: blitz_backend_name() counted up to NULL), one to MAX_LIST
 * block sizes (multiples of MIN_BLOCK up to MAX_BLOCK) and task counts
 * (1 to MAX_TASKS), and a size, iteration and warm-up count in range.
 */
#include "bench_exit.h"

int fs_bench_main(int argc, char **argv);
#define main fs_bench_main
#include "../../experiments/workloads/fs_bench.c"
#undef main

static int nr_backends(void)
{
	int n = 0;

	while (blitz_backend_name((enum blitz_io_backend)(BLITZ_BACKEND_AUTO + 1 + n)))
		n++;
	return n;
}

static void check(const struct opts *o)
{
	FUZZ_CHECK(o->nbackends >= 1 && o->nbackends <= nr_backends());
	for (int i = 0; i < o->nbackends; i++) {
		FUZZ_CHECK(o->backend[i] != BLITZ_BACKEND_AUTO && blitz_backend_name(o->backend[i]));
		for (int k = 0; k < i; k++)
			FUZZ_CHECK(o->backend[k] != o->backend[i]);
	}
	FUZZ_CHECK(o->nblocks >= 1 && o->nblocks <= MAX_LIST);
	for (int i = 0; i < o->nblocks; i++)
		FUZZ_CHECK(o->block[i] >= MIN_BLOCK && o->block[i] <= MAX_BLOCK &&
			   o->block[i] % MIN_BLOCK == 0);
	FUZZ_CHECK(o->ntasks >= 1 && o->ntasks <= MAX_LIST);
	for (int i = 0; i < o->ntasks; i++)
		FUZZ_CHECK(o->tasks[i] >= 1 && o->tasks[i] <= MAX_TASKS);
	FUZZ_CHECK(o->size >= 1 && o->size <= 1l << 40);
	FUZZ_CHECK(o->iters >= 1 && o->warmup >= 0 && o->dir);
	FUZZ_CHECK(o->cfg.workers >= 1 && o->cfg.workers <= blitz_max_workers());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FUZZ_PARSE_OPTS(data, size, check);
	return 0;
}
