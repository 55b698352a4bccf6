// SPDX-License-Identifier: MIT
/*
 * test_bench_util.c - the spread and the two-mode rule of the benches
 * (bench_spread, experiments/workloads/bench_util.h) on constructed
 * samples: two clusters are two modes with the right counts and medians;
 * unimodal noise (evenly spread, uniform, normal-ish), one outlier, fewer
 * than four samples and all-equal samples are not; the quantiles are the
 * nearest-rank ones and in order; the JSON fields and the warning are
 * printed as docs/design.md's bench JSON says.  bench_util.c is built into this file,
 * as tests/fuzz/bench_util_exit.c builds it into its fuzz target: the
 * unit tests link the library only.
 */
#include <stdlib.h>
#include <unistd.h>
#include "../../experiments/workloads/bench_util.c"
#include "suites.h"

#define MAXN 200

/* spread - bench_spread() of @n samples @x, sorted here first. */
static struct bench_spread spread(uint64_t *x, size_t n)
{
	struct bench_spread s;

	qsort(x, n, sizeof(*x), bench_cmp_u64);
	bench_spread(x, n, &s);
	ck_assert(s.min <= s.p25 && s.p25 <= s.median && s.median <= s.p75 && s.p75 <= s.max);
	ck_assert_uint_eq(s.min, x[0]);
	ck_assert_uint_eq(s.max, x[n - 1]);
	if (s.modes == 2) {
		ck_assert_uint_eq(s.mode[0].n + s.mode[1].n, n);
		ck_assert(s.mode[0].ns < s.mode[1].ns);
	} else {
		ck_assert_int_eq(s.modes, 1);
		ck_assert(!s.mode[0].n && !s.mode[1].n);
	}
	return s;
}

/* A fixed-seed generator: the same samples on every run. */
static uint64_t rng_state;

static double uniform01(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

START_TEST(two_clusters)
{
	/* 7 runs near 20 ns/op and 8 near 45 (of 10000 ops), shuffled. */
	uint64_t x[] = { 450000, 201000, 446000, 199000, 452000, 200000, 455000, 203000,
			 448000, 198000, 451000, 202000, 449000, 197000, 453000 };
	/* Five per-round medians, two low and three high. */
	uint64_t r[] = { 450, 200, 435, 210, 455 };
	/* The fewest samples that can be two modes: two on each side. */
	uint64_t q[] = { 100, 101, 200, 201 };
	struct bench_spread s = spread(x, 15);

	ck_assert_int_eq(s.modes, 2);
	ck_assert_uint_eq(s.mode[0].n, 7);
	ck_assert_uint_eq(s.mode[0].ns, 200000);
	ck_assert_uint_eq(s.mode[1].n, 8);
	ck_assert_uint_eq(s.mode[1].ns, (450000 + 451000) / 2);
	ck_assert_uint_eq(s.median, 446000);	/* the high mode's lowest run */

	s = spread(r, 5);
	ck_assert_int_eq(s.modes, 2);
	ck_assert_uint_eq(s.mode[0].n, 2);
	ck_assert_uint_eq(s.mode[0].ns, 205);
	ck_assert_uint_eq(s.mode[1].n, 3);
	ck_assert_uint_eq(s.mode[1].ns, 450);

	s = spread(q, 4);
	ck_assert_int_eq(s.modes, 2);
	ck_assert(s.mode[0].n == 2 && s.mode[1].n == 2);
}
END_TEST

START_TEST(side_too_small)
{
	/* A fifth of 20 is 4: three runs on one side are not a mode. */
	uint64_t x[20];

	for (int i = 0; i < 20; i++)
		x[i] = i < 3 ? 200 + (uint64_t)i : 450 + (uint64_t)i;
	ck_assert_int_eq(spread(x, 20).modes, 1);
	for (int i = 0; i < 20; i++)
		x[i] = i < 4 ? 200 + (uint64_t)i : 450 + (uint64_t)i;
	ck_assert_int_eq(spread(x, 20).modes, 2);
}
END_TEST

START_TEST(gap_too_small)
{
	/* Two tight clusters 1.2 apart: below the least gap. */
	uint64_t x[] = { 100, 100, 101, 100, 120, 121, 120, 120 };

	ck_assert_int_eq(spread(x, 8).modes, 1);
}
END_TEST

START_TEST(gap_within_side)
{
	/* The observed five runs of yield_many: 20.0 alone, 33.3 between. */
	uint64_t a[] = { 414, 435, 455, 333, 200 };
	/* The largest gap, 1.51, after two of 1.5: its low side is wider. */
	uint64_t b[] = { 100, 150, 225, 340, 345 };
	/* A gap of 1.30 beside a side 1.15 wide: more than it, not its square. */
	uint64_t c[] = { 100, 115, 150, 160, 170 };
	/* The same gap beside sides 1.10 and 1.13 wide: two modes. */
	uint64_t d[] = { 105, 115, 150, 160, 170 };

	ck_assert_int_eq(spread(a, 5).modes, 1);
	ck_assert_int_eq(spread(b, 5).modes, 1);
	ck_assert_int_eq(spread(c, 5).modes, 1);
	ck_assert_int_eq(spread(d, 5).modes, 2);
}
END_TEST

START_TEST(unimodal_even)
{
	/* Runs spread evenly over 100..130, at every count. */
	uint64_t x[MAXN];

	for (size_t n = 1; n <= 31; n++) {
		for (size_t i = 0; i < n; i++)
			x[i] = 100 + (n > 1 ? 30 * i / (n - 1) : 0);
		ck_assert_msg(spread(x, n).modes == 1, "n=%zu", n);
	}
}
END_TEST

START_TEST(unimodal_random)
{
	/* Uniform over 100..130 and normal-ish (a sum of 12 uniforms: mean
	 * 1000, sd 50), 200 draws of each count. */
	static const size_t counts[] = { 10, 15, 30, 100, MAXN };
	uint64_t x[MAXN];

	rng_state = 42;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t n = counts[c];

		for (int draw = 0; draw < 200; draw++) {
			for (size_t i = 0; i < n; i++)
				x[i] = 100000 + (uint64_t)(30000 * uniform01());
			ck_assert_msg(spread(x, n).modes == 1, "uniform n=%zu draw %d", n, draw);
			for (size_t i = 0; i < n; i++) {
				double sum = 0;

				for (int j = 0; j < 12; j++)
					sum += uniform01();
				x[i] = (uint64_t)(1000 + 50 * (sum - 6));
			}
			ck_assert_msg(spread(x, n).modes == 1, "normal n=%zu draw %d", n, draw);
		}
	}
}
END_TEST

START_TEST(outlier)
{
	/* 14 runs near 100 and one preempted at 1000: one mode and max_ns. */
	uint64_t x[15];

	for (int i = 0; i < 14; i++)
		x[i] = 100 + (uint64_t)(i % 5);
	x[14] = 1000;
	ck_assert_int_eq(spread(x, 15).modes, 1);
	ck_assert_uint_eq(spread(x, 15).max, 1000);
}
END_TEST

START_TEST(tiny_n)
{
	uint64_t one[] = { 5 }, two[] = { 1, 1000 }, three[][3] = {
		{ 1, 1, 1000 }, { 1, 1000, 1000 }, { 0, 0, 7 },
	};
	struct bench_spread s = spread(one, 1);

	ck_assert(s.modes == 1 && s.min == 5 && s.p25 == 5 && s.median == 5 &&
		  s.p75 == 5 && s.max == 5);
	ck_assert_int_eq(spread(two, 2).modes, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(spread(three[i], 3).modes, 1);
}
END_TEST

START_TEST(all_equal)
{
	uint64_t x[15], z[6] = { 0 };
	struct bench_spread s;

	for (int i = 0; i < 15; i++)
		x[i] = 123456;
	s = spread(x, 15);
	ck_assert(s.modes == 1 && s.min == 123456 && s.max == 123456);
	ck_assert_int_eq(spread(z, 6).modes, 1);
}
END_TEST

START_TEST(zero_samples)
{
	/* From 0 to a positive time the gap is infinite: three zeros and
	 * three fives are two modes; one zero is a side of one sample. */
	uint64_t a[] = { 0, 0, 0, 5, 5, 5 }, b[] = { 0, 5, 5, 500, 500, 500 };
	struct bench_spread s = spread(a, 6);

	ck_assert(s.modes == 2 && s.mode[0].ns == 0 && s.mode[1].ns == 5);
	ck_assert_int_eq(spread(b, 6).modes, 1);
}
END_TEST

START_TEST(quantiles)
{
	uint64_t a[] = { 8, 3, 5, 1, 7, 2, 6, 4 }, b[] = { 50, 10, 40, 20, 30 };
	struct bench_spread s = spread(a, 8);

	/* Nearest rank: p25 the 2nd of 8, p75 the 6th; the median 4.5 truncated. */
	ck_assert(s.min == 1 && s.p25 == 2 && s.median == 4 && s.p75 == 6 && s.max == 8);
	s = spread(b, 5);
	ck_assert(s.min == 10 && s.p25 == 20 && s.median == 30 && s.p75 == 40 && s.max == 50);
}
END_TEST

/*
 * print - bench_print_spread() of @n sorted samples @x as sched-bench
 * prints it: what it wrote to stdout into @out, to stderr into @err.
 */
static void print(const uint64_t *x, size_t n, long ops, char *out, char *err, size_t len)
{
	FILE *o = tmpfile(), *e = tmpfile();
	int so = dup(1), se = dup(2);
	static char bench_name[] = "sched-bench";
	char *name = program_invocation_short_name;
	size_t k;

	ck_assert(o && e && so >= 0 && se >= 0);
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(o), 1);
	dup2(fileno(e), 2);
	program_invocation_short_name = bench_name;
	bench_print_spread("yield_many", x, n, ops);
	program_invocation_short_name = name;
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	rewind(o);
	rewind(e);
	k = fread(out, 1, len - 1, o);
	out[k] = 0;
	k = fread(err, 1, len - 1, e);
	err[k] = 0;
	fclose(o);
	fclose(e);
}

START_TEST(print_fields)
{
	/* 7 runs near 20 ns/op and 8 near 45 of 10000 ops; then 15 near 20. */
	uint64_t x[] = { 197000, 198000, 199000, 200000, 201000, 202000, 203000, 446000,
			 448000, 449000, 450000, 451000, 452000, 453000, 455000 };
	char out[512], err[512];

	print(x, 15, 10000, out, err, sizeof(out));
	ck_assert_str_eq(out, ",\"p25_ns\":200000,\"p75_ns\":451000,\"max_ns\":455000,"
			 "\"modes\":[{\"ns\":200000,\"n\":7},{\"ns\":450500,\"n\":8}]");
	ck_assert_str_eq(err, "sched-bench: yield_many: the 15 runs fall into two modes: "
			 "7 near 20.00 ns/op, 8 near 45.05 ns/op; the median hides it\n");
	for (int i = 7; i < 15; i++)
		x[i] = 204000 + (uint64_t)i * 100;
	print(x, 15, 10000, out, err, sizeof(out));
	ck_assert_str_eq(out, ",\"p25_ns\":200000,\"p75_ns\":205100,\"max_ns\":205400");
	ck_assert_str_eq(err, "");
}
END_TEST

static Suite *bench_util_suite(void)
{
	Suite *s = suite_create("bench_util");
	TCase *tc = tcase_create("spread");

	tcase_add_test(tc, two_clusters);
	tcase_add_test(tc, side_too_small);
	tcase_add_test(tc, gap_too_small);
	tcase_add_test(tc, gap_within_side);
	tcase_add_test(tc, unimodal_even);
	tcase_add_test(tc, unimodal_random);
	tcase_add_test(tc, outlier);
	tcase_add_test(tc, tiny_n);
	tcase_add_test(tc, all_equal);
	tcase_add_test(tc, zero_samples);
	tcase_add_test(tc, quantiles);
	tcase_add_test(tc, print_fields);
	suite_add_tcase(s, tc);
	return s;
}
BLITZ_SUITE("bench_util", bench_util_suite);
