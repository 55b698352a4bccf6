/* SPDX-License-Identifier: MIT */
/* tests/unit/suites.h - the Check suites of blitz-tests. */
#ifndef BLITZ_TEST_SUITES_H
#define BLITZ_TEST_SUITES_H

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <blitz.h>

/*
 * Each test file registers its suite: BLITZ_SUITE(name, make_fn) at file
 * scope.  blitz-tests runs them in order of name.
 */
void blitz_register_suite(const char *name, Suite *(*make)(void));
#define BLITZ_SUITE(name, make)						\
	__attribute__((constructor)) static void register_##make(void)	\
	{ blitz_register_suite(name, make); }

/* A test that cannot run here says why in one line and passes as skipped. */
#define SKIP(...) do {							\
		printf("SKIP %s: ", __func__);				\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fflush(stdout);						\
		return;							\
	} while (0)

/* Long-running tcases get a generous timeout (Check's default is 4 s). */
#define TCASE(name, timeout) ({ TCase *tc_ = tcase_create(name);	\
		tcase_set_timeout(tc_, (timeout) * test_timeout_scale());	\
		tc_; })

double test_timeout_scale(void);
/* @n, or a tenth of it (at least 1) in sanitizer runs (BLITZ_TEST_TIMEOUT_SCALE > 1). */
long test_scaled(long n);

/*
 * The I/O backends, from the library: the values after BLITZ_BACKEND_AUTO
 * that blitz_backend_name() names (so a new backend needs no edit here),
 * indexed like the loop tests that run once on each
 * (tcase_add_loop_test(tc, fn, 0, TEST_BACKENDS)).
 */
int test_backend_count(void);
#define TEST_BACKENDS test_backend_count()
static inline enum blitz_io_backend test_backend_kind(int i)
{
	return (enum blitz_io_backend)(BLITZ_BACKEND_AUTO + 1 + i);
}
static inline const char *test_backend_name(int i)
{
	return blitz_backend_name(test_backend_kind(i));
}

/* A 2-worker runtime on backend @i (it may fall back: NEED_BACKEND). */
struct blitz_runtime *test_runtime_on(int i);

/* The same with io_uring's one shared ring (cfg.io_uring_rings), not a ring per worker. */
struct blitz_runtime *test_runtime_one_ring(int i);

/* A task that does nothing: its poll returns ready. */
extern const struct blitz_task_vtable test_nothing_vt;

/* A runtime of @workers with the default configuration otherwise. */
struct blitz_runtime *test_runtime(unsigned workers);

/*
 * test_worker_asleep - worker @w of @rt is blocked in its sleep: its futex
 * word says parked (it chose where to sleep: on the futex, or in its ring
 * and whether to watch the shared one) and its thread ("blitz-worker<w>";
 * one runtime in the process) sleeps in the kernel ('S' in /proc).
 * test_wait_until_asleep - until then, or fail after 10 s (scaled).
 */
bool test_worker_asleep(struct blitz_runtime *rt, unsigned w);
void test_wait_until_asleep(struct blitz_runtime *rt, unsigned w);

/*
 * A park timeout of an hour: no safety net under a wake, so that a test
 * of one hangs (and fails by its tcase's timeout) if the wake is lost,
 * instead of passing 10 ms late.
 */
#define TEST_PARK_TIMEOUT_NS (3600ull * 1000 * 1000 * 1000)
/* Poll @fn(@arg, cx) in a task of @rt until it returns BLITZ_READY. */
void test_run_poll(struct blitz_runtime *rt, blitz_poll_fn fn, void *arg);
/* Descriptors this process has open (/proc/self/fd, counted). */
int test_open_fds(void);

/* Skip, freeing @rt, when backend @i is not what @rt got here. */
#define NEED_BACKEND(rt, i) do {					\
		if (strcmp(blitz_io_backend_name(rt), test_backend_name(i))) { \
			blitz_runtime_free(rt);				\
			SKIP("%s unavailable here", test_backend_name(i)); \
		}							\
	} while (0)

#endif
