/* SPDX-License-Identifier: MIT */
/* tests/unit/suites.h - the Check suites of blitz-tests. */
#ifndef BLITZ_TEST_SUITES_H
#define BLITZ_TEST_SUITES_H

#include <check.h>
#include <stdio.h>

Suite *queue_suite(void);
Suite *task_suite(void);
Suite *runtime_suite(void);
Suite *config_suite(void);
Suite *scripts_suite(void);

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

#endif
