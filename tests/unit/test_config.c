// SPDX-License-Identifier: MIT
/* test_config.c - the BLITZ_* knobs: accepted values, clear errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <blitz.h>
#include "suites.h"

static void clear_env(void)
{
	unsetenv("BLITZ_WORKERS");
	unsetenv("BLITZ_LIFO");
	unsetenv("BLITZ_GLOBAL_INTERVAL");
	unsetenv("BLITZ_STEAL");
	unsetenv("BLITZ_BUDGET");
	unsetenv("BLITZ_BACKEND");
	unsetenv("BLITZ_TRACE_SAMPLE");
	unsetenv("BLITZ_HIST_SAMPLE");
	unsetenv("BLITZ_BLOCKING_THREADS");
	unsetenv("BLITZ_BLOCKING_IDLE_MS");
	unsetenv("BLITZ_WAKE");
	unsetenv("BLITZ_WAKE_MIN_BACKLOG_US");
	unsetenv("BLITZ_WAKE_BACKLOG_US");
	unsetenv("BLITZ_WAKE_BUSY_US");
	unsetenv("BLITZ_PARK_TIMEOUT_US");
	unsetenv("BLITZ_EVENT_RING_KB");
	unsetenv("BLITZ_FLIGHT");
	unsetenv("BLITZ_FLIGHT_SIGNAL");
	unsetenv("BLITZ_IO_URING_RINGS");
}

START_TEST(defaults_are_the_seeds)
{
	struct blitz_config c;
	char err[256];

	clear_env();
	blitz_config_default(&c);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert(c.lifo);
	ck_assert_uint_eq(c.global_interval, 0);
	ck_assert_int_eq(c.steal, BLITZ_STEAL_HALF);
	ck_assert_uint_eq(c.budget, 128);
	ck_assert_uint_ge(blitz_max_workers(), 256);
	ck_assert_uint_eq(c.max_blocking_threads, 512);
	ck_assert_uint_eq(c.blocking_idle_ms, 10000);
	ck_assert_int_eq(c.wake, BLITZ_WAKE_BACKLOG);
	ck_assert_uint_eq(c.wake_min_backlog_ns, 5000);
	ck_assert_uint_eq(c.wake_backlog_ns, BLITZ_WAKE_BACKLOG_NS);
	ck_assert_uint_eq(c.wake_busy_ns, BLITZ_WAKE_BUSY_NS);
	ck_assert_uint_eq(c.hist_sample, BLITZ_HIST_SAMPLE_AUTO);
	ck_assert_uint_eq(c.park_timeout_ns, 10000000);
	ck_assert_int_eq(c.io_uring_rings, BLITZ_IO_URING_RINGS_WORKER);
}
END_TEST

START_TEST(env_values_apply)
{
	struct blitz_config c;
	char err[256];

	clear_env();
	setenv("BLITZ_WORKERS", "7", 1);
	setenv("BLITZ_LIFO", "0", 1);
	setenv("BLITZ_GLOBAL_INTERVAL", "31", 1);
	setenv("BLITZ_STEAL", "one", 1);
	setenv("BLITZ_BUDGET", "16", 1);
	setenv("BLITZ_BLOCKING_THREADS", "9", 1);
	setenv("BLITZ_BLOCKING_IDLE_MS", "250", 1);
	setenv("BLITZ_WAKE", "bounded", 1);
	setenv("BLITZ_WAKE_MIN_BACKLOG_US", "20", 1);
	setenv("BLITZ_WAKE_BACKLOG_US", "200", 1);
	setenv("BLITZ_WAKE_BUSY_US", "3000", 1);
	setenv("BLITZ_PARK_TIMEOUT_US", "3600000000", 1);
	blitz_config_default(&c);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.workers, 7);
	ck_assert(!c.lifo);
	ck_assert_uint_eq(c.global_interval, 31);
	ck_assert_int_eq(c.steal, BLITZ_STEAL_ONE);
	ck_assert_uint_eq(c.budget, 16);
	ck_assert_uint_eq(c.max_blocking_threads, 9);
	ck_assert_uint_eq(c.blocking_idle_ms, 250);
	ck_assert_int_eq(c.wake, BLITZ_WAKE_BOUNDED);
	ck_assert_uint_eq(c.wake_min_backlog_ns, 20000);
	ck_assert_uint_eq(c.wake_backlog_ns, 200000);
	ck_assert_uint_eq(c.wake_busy_ns, 3000000);
	ck_assert_uint_eq(c.park_timeout_ns, 3600000000000ull);
	setenv("BLITZ_GLOBAL_INTERVAL", "adaptive", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.global_interval, 0);
	setenv("BLITZ_HIST_SAMPLE", "64", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.hist_sample, 64);
	setenv("BLITZ_HIST_SAMPLE", "auto", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.hist_sample, BLITZ_HIST_SAMPLE_AUTO);
	setenv("BLITZ_WAKE", "eager", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.wake, BLITZ_WAKE_EAGER);
	setenv("BLITZ_WAKE", "backlog", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.wake, BLITZ_WAKE_BACKLOG);
	setenv("BLITZ_IO_URING_RINGS", "shared", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.io_uring_rings, BLITZ_IO_URING_RINGS_SHARED);
	setenv("BLITZ_IO_URING_RINGS", "worker", 1);
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.io_uring_rings, BLITZ_IO_URING_RINGS_WORKER);
	clear_env();
}
END_TEST

static const struct { const char *var, *val, *must_say; } bad[] = {
	{ "BLITZ_WORKERS", "0", "1 to" },
	{ "BLITZ_WORKERS", "-3", "1 to" },
	{ "BLITZ_WORKERS", "4x", "1 to" },
	{ "BLITZ_WORKERS", "100000", "1 to" },
	{ "BLITZ_LIFO", "yes", "0 (LIFO slot off) or 1" },
	{ "BLITZ_GLOBAL_INTERVAL", "256", "'adaptive'" },
	{ "BLITZ_GLOBAL_INTERVAL", "fast", "'adaptive'" },
	{ "BLITZ_STEAL", "all", "'half' or 'one'" },
	{ "BLITZ_BUDGET", "0", "polls per tick" },
	{ "BLITZ_BUDGET", "", "polls per tick" },
	{ "BLITZ_BACKEND", "kqueue", "expected auto, io_uring," },
	{ "BLITZ_TRACE_SAMPLE", "0", "one task in N" },
	{ "BLITZ_HIST_SAMPLE", "0", "auto or a power of two" },
	{ "BLITZ_HIST_SAMPLE", "12", "auto or a power of two" },
	{ "BLITZ_HIST_SAMPLE", "131072", "auto or a power of two" },
	{ "BLITZ_HIST_SAMPLE", "automatic", "auto or a power of two" },
	{ "BLITZ_BLOCKING_THREADS", "0", "thread cap from 1 to" },
	{ "BLITZ_BLOCKING_THREADS", "many", "thread cap from 1 to" },
	{ "BLITZ_BLOCKING_THREADS", "40000", "thread cap from 1 to" },
	{ "BLITZ_BLOCKING_IDLE_MS", "0", "in milliseconds" },
	{ "BLITZ_BLOCKING_IDLE_MS", "10s", "in milliseconds" },
	{ "BLITZ_WAKE", "lazy", "'backlog', 'eager' or 'bounded'" },
	{ "BLITZ_WAKE_MIN_BACKLOG_US", "0", "backlog in microseconds" },
	{ "BLITZ_WAKE_MIN_BACKLOG_US", "5us", "backlog in microseconds" },
	{ "BLITZ_WAKE_BACKLOG_US", "0", "backlog in microseconds" },
	{ "BLITZ_WAKE_BUSY_US", "2000000", "awake in microseconds" },
	{ "BLITZ_PARK_TIMEOUT_US", "0", "longest sleep in microseconds from 1 to 3600000000" },
	{ "BLITZ_PARK_TIMEOUT_US", "3600000001", "longest sleep in microseconds" },
	{ "BLITZ_PARK_TIMEOUT_US", "10ms", "longest sleep in microseconds" },
	{ "BLITZ_EVENT_RING_KB", "0", "ring per worker in KiB, from 64 to 1048576" },
	{ "BLITZ_EVENT_RING_KB", "4M", "ring per worker in KiB" },
	{ "BLITZ_FLIGHT", "63", "0 (off) or the flight recorder's ring per worker in KiB" },
	{ "BLITZ_FLIGHT", "1048577", "flight recorder's ring" },
	{ "BLITZ_FLIGHT_SIGNAL", "SIGKILL", "USR1, USR2 or a signal number" },
	{ "BLITZ_FLIGHT_SIGNAL", "19", "not KILL or STOP" },
	{ "BLITZ_FLIGHT_SIGNAL", "HUP", "USR1, USR2 or a signal number" },
	{ "BLITZ_FLIGHT_SIGNAL", "0", "from 1 to" },
	{ "BLITZ_IO_URING_RINGS", "one", "'worker' (a ring per worker) or 'shared'" },
};

START_TEST(bad_values_are_rejected_by_name)
{
	struct blitz_config c, before;
	char err[256];

	clear_env();
	setenv(bad[_i].var, bad[_i].val, 1);
	blitz_config_default(&c);
	before = c;
	ck_assert_int_eq(blitz_config_from_env(&c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, bad[_i].var), "message '%s' does not name %s", err, bad[_i].var);
	ck_assert_msg(strstr(err, bad[_i].must_say), "message '%s' lacks '%s'", err, bad[_i].must_say);
	ck_assert(memcmp(&c, &before, sizeof(c)) == 0);	/* nothing half-applied */
	/* The runtime refuses to start on it, with errno EINVAL. */
	ck_assert_ptr_null(blitz_runtime_new(NULL));
	ck_assert_int_eq(errno, EINVAL);
	clear_env();
}
END_TEST

START_TEST(bad_struct_values_are_rejected)
{
	struct blitz_config c;

	blitz_config_default(&c);
	c.budget = 0;
	ck_assert_ptr_null(blitz_runtime_new(&c));
	ck_assert_int_eq(errno, EINVAL);
	blitz_config_default(&c);
	c.workers = blitz_max_workers() + 1;
	ck_assert_ptr_null(blitz_runtime_new(&c));
	ck_assert_int_eq(errno, EINVAL);
	blitz_config_default(&c);
	c.max_blocking_threads = BLITZ_BLOCKING_THREADS_LIMIT + 1;
	ck_assert_ptr_null(blitz_runtime_new(&c));
	ck_assert_int_eq(errno, EINVAL);
	blitz_config_default(&c);
	c.park_timeout_ns = BLITZ_PARK_TIMEOUT_LIMIT_US * 1000ull + 1;
	ck_assert_ptr_null(blitz_runtime_new(&c));
	ck_assert_int_eq(errno, EINVAL);
	blitz_config_default(&c);
	c.io_uring_rings = (enum blitz_io_uring_rings)2;
	ck_assert_ptr_null(blitz_runtime_new(&c));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/*
 * Every name parses back to its backend, and the list ends at the enum's
 * end; the names BLITZ_BACKEND has always taken are still among them.
 */
START_TEST(backend_names_round_trip)
{
	static const char *const kept[] = { "auto", "io_uring", "epoll", "poll" };
	enum blitz_io_backend b, got;
	int n = 0;

	ck_assert_str_eq(blitz_backend_name(BLITZ_BACKEND_AUTO), "auto");
	for (b = BLITZ_BACKEND_AUTO; blitz_backend_name(b); b++, n++) {
		ck_assert_int_lt(n, 64);
		ck_assert_int_eq(blitz_backend_parse(blitz_backend_name(b), &got), 0);
		ck_assert_int_eq(got, b);
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		ck_assert_int_eq(blitz_backend_parse(kept[i], &got), 0);
	ck_assert_ptr_null(blitz_backend_name((enum blitz_io_backend)-1));
	got = BLITZ_BACKEND_POLL;
	ck_assert_int_eq(blitz_backend_parse("kqueue", &got), -EINVAL);
	ck_assert_int_eq(blitz_backend_parse("", &got), -EINVAL);
	ck_assert_int_eq(got, BLITZ_BACKEND_POLL);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = TCASE("env", 10);

	tcase_add_test(tc, defaults_are_the_seeds);
	tcase_add_test(tc, env_values_apply);
	tcase_add_loop_test(tc, bad_values_are_rejected_by_name, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, bad_struct_values_are_rejected);
	tcase_add_test(tc, backend_names_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("config", config_suite)
