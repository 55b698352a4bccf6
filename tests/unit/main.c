// SPDX-License-Identifier: MIT
/*
 * tests/unit/main.c - runs every suite and ends with Check's summary line.
 *
 *   blitz-tests            all suites
 *   blitz-tests NAME...    only these suites (queue, task, runtime, config, scripts)
 *
 * Exit status: 0 when every test passed (skips pass with a SKIP line).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"

double test_timeout_scale(void)
{
	/* Sanitizer builds run several times slower. */
	const char *s = getenv("BLITZ_TEST_TIMEOUT_SCALE");

	return s ? atof(s) : 1.0;
}

static const struct {
	const char *name;
	Suite *(*make)(void);
} suites[] = {
	{ "config", config_suite },
	{ "queue", queue_suite },
	{ "task", task_suite },
	{ "runtime", runtime_suite },
	{ "scripts", scripts_suite },
};

int main(int argc, char **argv)
{
	SRunner *sr = NULL;
	int failed;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		bool want = argc < 2;

		for (int a = 1; a < argc; a++)
			want |= !strcmp(argv[a], suites[i].name);
		if (!want)
			continue;
		if (!sr)
			sr = srunner_create(suites[i].make());
		else
			srunner_add_suite(sr, suites[i].make());
	}
	if (!sr) {
		fprintf(stderr, "blitz-tests: no such suite\n");
		return 2;
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
