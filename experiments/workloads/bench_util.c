// SPDX-License-Identifier: MIT
/* bench_util.c - see bench_util.h. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
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

uint64_t bench_median(const uint64_t *sorted, size_t n)
{
	return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

uint64_t bench_quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n);

	if ((double)rank < q * (double)n)
		rank++;		/* ceil */
	if (rank < 1)
		rank = 1;
	return sorted[(rank > n ? n : rank) - 1];
}

/* gap - @hi / @lo (@lo <= @hi): infinite from 0 to a positive value, 1 from 0 to 0. */
static double gap(uint64_t lo, uint64_t hi)
{
	if (!lo)
		return hi ? HUGE_VAL : 1.0;
	return (double)hi / (double)lo;
}

void bench_spread(const uint64_t *sorted, size_t n, struct bench_spread *s)
{
	size_t k = 0, side = n / BENCH_MODES_SIDE_DIV;
	double widest = 1.0, lo, hi;

	memset(s, 0, sizeof(*s));
	s->min = sorted[0];
	s->p25 = bench_quantile(sorted, n, 0.25);
	s->median = bench_median(sorted, n);
	s->p75 = bench_quantile(sorted, n, 0.75);
	s->max = sorted[n - 1];
	s->modes = 1;
	/* The first largest ratio between neighbours (bench_util.h). */
	for (size_t i = 1; i < n; i++) {
		double g = gap(sorted[i - 1], sorted[i]);

		if (g > widest) {
			widest = g;
			k = i;
		}
	}
	if (side < BENCH_MODES_MIN_SIDE)
		side = BENCH_MODES_MIN_SIDE;
	if (!k || k < side || n - k < side || widest < BENCH_MODES_MIN_GAP)
		return;
	lo = gap(sorted[0], sorted[k - 1]);
	hi = gap(sorted[k], sorted[n - 1]);
	if (!(widest > lo * lo && widest > hi * hi))
		return;
	s->modes = 2;
	s->mode[0] = (struct bench_mode){ bench_median(sorted, k), k };
	s->mode[1] = (struct bench_mode){ bench_median(sorted + k, n - k), n - k };
}

void bench_print_spread(const char *bench, const uint64_t *sorted, size_t n, long ops)
{
	struct bench_spread s;

	bench_spread(sorted, n, &s);
	printf(",\"p25_ns\":%llu,\"p75_ns\":%llu,\"max_ns\":%llu", (unsigned long long)s.p25,
	       (unsigned long long)s.p75, (unsigned long long)s.max);
	if (s.modes != 2)
		return;
	printf(",\"modes\":[{\"ns\":%llu,\"n\":%zu},{\"ns\":%llu,\"n\":%zu}]",
	       (unsigned long long)s.mode[0].ns, s.mode[0].n,
	       (unsigned long long)s.mode[1].ns, s.mode[1].n);
	fprintf(stderr, "%s: %s: the %zu runs fall into two modes: %zu near %.2f ns/op, "
		"%zu near %.2f ns/op; the median hides it\n", program_invocation_short_name,
		bench, n, s.mode[0].n, (double)s.mode[0].ns / (double)ops,
		s.mode[1].n, (double)s.mode[1].ns / (double)ops);
}

static void bad_value(const char *opt, const char *v, const char *expected)
{
	fprintf(stderr, "%s: %s %s: expected %s\n", program_invocation_short_name, opt, v,
		expected);
	exit(2);
}

/* parse_scaled - @v as a number, with a suffix from @suffixes (may be ""). */
static long parse_scaled(const char *opt, const char *v, long lo, long hi, const char *suffixes)
{
	char *end, what[96];
	long n, unit = 1;

	errno = 0;
	n = strtol(v, &end, 10);
	if (*end && end != v && end[1] == '\0' && strchr(suffixes, *end)) {
		unit = *end == 'K' ? 1l << 10 : *end == 'M' ? 1l << 20 : 1l << 30;
		end++;
	}
	if (errno || *end || end == v || n > LONG_MAX / unit || n < LONG_MIN / unit ||
	    n * unit < lo || n * unit > hi) {
		snprintf(what, sizeof(what), "a number from %ld to %ld%s", lo, hi,
			 *suffixes ? " (suffix K, M or G allowed)" : "");
		bad_value(opt, v, what);
	}
	return n * unit;
}

long bench_parse_num(const char *opt, const char *v, long lo, long hi)
{
	return parse_scaled(opt, v, lo, hi, "");
}

long bench_parse_size(const char *opt, const char *v, long lo, long hi)
{
	return parse_scaled(opt, v, lo, hi, "KMG");
}

void bench_list_backends(void)
{
	const char *name;

	for (int b = BLITZ_BACKEND_AUTO + 1; (name = blitz_backend_name((enum blitz_io_backend)b)); b++)
		puts(name);
}

enum blitz_io_backend bench_parse_backend(const char *opt, const char *v)
{
	enum blitz_io_backend b;
	char what[64];
	size_t n = 0;

	if (!blitz_backend_parse(v, &b) && b != BLITZ_BACKEND_AUTO)
		return b;
	/* The library's names but "auto": a benchmark row names one backend. */
	for (b = BLITZ_BACKEND_AUTO + 1; blitz_backend_name(b) && n < sizeof(what); b++)
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%s",
				      b == BLITZ_BACKEND_AUTO + 1 ? "" :
				      blitz_backend_name(b + 1) ? ", " : " or ",
				      blitz_backend_name(b));
	bad_value(opt, v, what);
	return BLITZ_BACKEND_AUTO;
}

void bench_config(struct blitz_config *cfg, unsigned workers)
{
	char err[256];

	blitz_config_default(cfg);
	cfg->workers = workers;
	if (blitz_config_from_env(cfg, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", program_invocation_short_name, err);
		exit(2);
	}
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

/*
 * check_names - every name in the comma-separated list @which is "all" or
 * one of the @n names @name(0..n-1); else it says which one is not.
 */
static bool check_names(const char *which, size_t n, const char *(*name)(size_t i))
{
	for (const char *p = which; *p; ) {
		size_t len = strcspn(p, ",");
		bool ok = len == 3 && !strncmp(p, "all", 3);

		for (size_t i = 0; i < n && !ok; i++)
			ok = strlen(name(i)) == len && !strncmp(p, name(i), len);
		if (!ok) {
			fprintf(stderr, "%s: --bench %.*s: no such benchmark (try --list)\n",
				program_invocation_short_name, (int)len, p);
			return false;
		}
		p += len + (p[len] == ',');
	}
	return true;
}

int bench_getopt(int argc, char **argv, const struct option *opts)
{
	int c;

	opterr = 0;		/* getopt's own message is two lines with the usage */
	c = getopt_long(argc, argv, ":", opts, NULL);
	if (c == '?' || c == ':') {
		fprintf(stderr, c == '?' ? "%s: unknown option '%s' (--help lists them)\n"
					 : "%s: option '%s' needs a value\n",
			program_invocation_short_name, argv[optind - 1]);
		exit(2);
	}
	if (c == -1 && optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (--help lists the options)\n",
			program_invocation_short_name, argv[optind]);
		exit(2);
	}
	return c;
}

void bench_parse_args(int argc, char **argv, struct bench_args *a, size_t n,
		      const char *(*name)(size_t i), void (*usage)(FILE *f))
{
	static const struct option opts[] = {
		{ "workers", required_argument, NULL, 'w' },
		{ "iters", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "ops", required_argument, NULL, 'o' },
		{ "bench", required_argument, NULL, 'b' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = bench_getopt(argc, argv, opts)) != -1) {
		switch (c) {
		case 'w': a->cfg.workers = (unsigned)bench_parse_num("--workers", optarg, 1, blitz_max_workers()); break;
		case 'i': a->iters = (int)bench_parse_num("--iters", optarg, 1, 1000000); break;
		case 'W': a->warmup = (int)bench_parse_num("--warmup", optarg, 0, 1000000); break;
		case 'o': a->ops = bench_parse_num("--ops", optarg, 1, 100000000); break;
		case 'b': a->which = optarg; break;
		case 'l':
			for (size_t i = 0; i < n; i++)
				puts(name(i));
			exit(0);
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!check_names(a->which, n, name))
		exit(2);
}

const char *bench_take_opt(int *argc, char **argv, const char *name, bool has_value)
{
	size_t len = strlen(name);

	for (int i = 1; i < *argc; i++) {
		const char *arg = argv[i], *value;
		int used = 1;

		if (strncmp(arg, "--", 2) || strncmp(arg + 2, name, len))
			continue;
		if (!has_value && arg[2 + len] == '\0') {
			value = "";
		} else if (has_value && arg[2 + len] == '=') {
			value = arg + 3 + len;
		} else if (has_value && arg[2 + len] == '\0') {
			if (i + 1 == *argc) {
				fprintf(stderr, "--%s needs a value\n", name);
				exit(2);
			}
			value = argv[i + 1];
			used = 2;
		} else {
			continue;
		}
		memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof(*argv));
		*argc -= used;
		return value;
	}
	return NULL;
}
