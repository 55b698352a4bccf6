// SPDX-License-Identifier: MIT
/* bench_util.c - see bench_util.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_util.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void bench_json_result(const char *name, unsigned workers, const char *backend, long ops,
		       uint64_t *t, int iters)
{
	uint64_t median;

	qsort(t, (size_t)iters, sizeof(*t), bench_cmp_u64);
	median = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
	printf("{\"runtime\":\"blitz\",\"bench\":\"%s\",\"workers\":%u,\"backend\":\"%s\","
	       "\"ops\":%ld,\"iters\":%d,\"median_ns\":%llu,\"min_ns\":%llu,\"ns_per_op\":%.2f",
	       name, workers, backend, ops, iters, (unsigned long long)median,
	       (unsigned long long)t[0], (double)median / (double)ops);
}

long bench_parse_num(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || !*v || n < lo || n > hi) {
		fprintf(stderr, "%s: %s %s: expected a number from %ld to %ld\n",
			program_invocation_short_name, opt, v, lo, hi);
		exit(2);
	}
	return n;
}

bool bench_selected(const char *which, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = which; *p; ) {
		size_t n = strcspn(p, ",");

		if ((n == 3 && !strncmp(p, "all", 3)) || (n == len && !strncmp(p, name, n)))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* check_names - every name in @cli->which is a benchmark (or "all"). */
static bool check_names(const struct bench_cli *cli)
{
	for (const char *p = cli->which; *p; ) {
		size_t n = strcspn(p, ",");
		bool ok = n == 3 && !strncmp(p, "all", 3);

		for (size_t i = 0; i < cli->nr_benches && !ok; i++)
			ok = strlen(cli->bench_name(i)) == n && !strncmp(p, cli->bench_name(i), n);
		if (!ok) {
			fprintf(stderr, "%s: --bench %.*s: no such benchmark (try --list)\n",
				cli->prog, (int)n, p);
			return false;
		}
		p += n + (p[n] == ',');
	}
	return true;
}

static const struct option common_opts[] = {
	{ "workers", required_argument, NULL, 'w' },
	{ "iters", required_argument, NULL, 'i' },
	{ "warmup", required_argument, NULL, 'W' },
	{ "bench", required_argument, NULL, 'b' },
	{ "list", no_argument, NULL, 'l' },
	{ "help", no_argument, NULL, 'h' },
};
#define NR_COMMON (sizeof(common_opts) / sizeof(common_opts[0]))

/* all_opts - the common options, then @extra's, then the terminator. */
static struct option *all_opts(const struct option *extra)
{
	size_t n = 0;
	struct option *o;

	while (extra && extra[n].name)
		n++;
	o = calloc(NR_COMMON + n + 1, sizeof(*o));
	if (!o) {
		perror(program_invocation_short_name);
		exit(1);
	}
	memcpy(o, common_opts, sizeof(common_opts));
	if (n)
		memcpy(o + NR_COMMON, extra, n * sizeof(*o));
	return o;
}

void bench_parse_cli(struct bench_cli *cli, unsigned workers, int argc, char **argv)
{
	struct option *opts = all_opts(cli->extra);
	char err[256];
	int c;

	blitz_config_default(&cli->cfg);
	cli->cfg.workers = workers;
	if (blitz_config_from_env(&cli->cfg, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", cli->prog, err);
		exit(2);
	}
	if (!cli->which)
		cli->which = "all";
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			cli->cfg.workers = (unsigned)bench_parse_num("--workers", optarg, 1,
								     blitz_max_workers());
			break;
		case 'i': cli->iters = (int)bench_parse_num("--iters", optarg, 1, 1000000); break;
		case 'W': cli->warmup = (int)bench_parse_num("--warmup", optarg, 0, 1000000); break;
		case 'b': cli->which = optarg; break;
		case 'l':
			for (size_t i = 0; i < cli->nr_benches; i++)
				puts(cli->bench_name(i));
			exit(0);
		case 'h': cli->usage(stdout); exit(0);
		case '?': cli->usage(stderr); exit(2);
		default: cli->parse(c, optarg); break;
		}
	}
	free(opts);
	if (optind < argc || !check_names(cli)) {
		cli->usage(stderr);
		exit(2);
	}
}

void bench_run_defs(const struct bench_cli *cli, struct blitz_runtime *rt,
		    const struct bench_def *defs, size_t n, const char *tail)
{
	uint64_t *t = calloc((size_t)cli->iters, sizeof(*t));

	if (!t) {
		perror(cli->prog);
		exit(1);
	}
	for (const struct bench_def *b = defs; b < defs + n; b++) {
		if (!bench_selected(cli->which, b->name))
			continue;
		for (int i = 0; i < cli->warmup; i++)
			b->run();
		for (int i = 0; i < cli->iters; i++) {
			uint64_t start = bench_now_ns();

			b->run();
			t[i] = bench_now_ns() - start;
		}
		bench_json_result(b->name, cli->cfg.workers, blitz_io_backend_name(rt), b->ops,
				  t, cli->iters);
		printf("%s}\n", tail);
		fflush(stdout);
	}
	free(t);
}
