// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/echo_opts.c - echo-bench's options (parse_opts() of
 * experiments/workloads/echo_bench.c), from any arguments.
 *
 * The input is an argument list, one word per NUL- or newline-separated
 * piece.  A bad option exits 2 (returning here, bench_exit.h).
 * Properties: only --help exits 0 and nothing else but 2; a parse that
 * returns leaves every count, size and duration in its documented range,
 * one mode, an address to serve or reach (which blitz_addr_parse() then
 * accepts or rejects with a message), and no more client threads than
 * connections.
 */
#include "bench_exit.h"

int echo_bench_main(int argc, char **argv);
#define main echo_bench_main
#include "../../experiments/workloads/echo_bench.c"
#undef main

static void check(const struct opts *o)
{
	struct blitz_addr addr;
	char err[256];

	FUZZ_CHECK(o->connections >= 1 && o->connections <= MAX_CONNS);
	FUZZ_CHECK(o->size >= 1 && o->size <= MAX_SIZE);
	FUZZ_CHECK(o->duration >= 1e-3 && o->duration <= 86400);
	FUZZ_CHECK(o->warmup >= 0 && o->warmup <= 86400);
	FUZZ_CHECK(o->client_threads >= 1 && o->client_threads <= o->connections);
	FUZZ_CHECK(o->cfg.workers >= 1 && o->cfg.workers <= blitz_max_workers());
	FUZZ_CHECK(o->mode == MODE_BOTH || o->mode == MODE_SERVER || o->mode == MODE_CLIENT);
	FUZZ_CHECK(o->addr && o->label);
	if (blitz_addr_parse(o->addr, &addr, err, sizeof(err)))
		FUZZ_CHECK(err[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FUZZ_PARSE_OPTS(data, size, check);
	return 0;
}
