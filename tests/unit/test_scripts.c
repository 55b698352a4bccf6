// SPDX-License-Identifier: MIT
/*
 * test_scripts.c - runs each tests/scripts/NAME.sh as one Check test.
 *
 * A script exits 0 (pass), 77 (skip: its last output line says why) or
 * anything else (fail).  It gets BLITZ_SRCTREE and BLITZ_OBJTREE.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "suites.h"

static glob_t scripts;

static const char *srctree(void)
{
	const char *s = getenv("BLITZ_SRCTREE");

	return s ? s : ".";
}

START_TEST(script)
{
	const char *path = scripts.gl_pathv[_i];
	char cmd[4096];
	int status;

	/* The log goes next to the test objects, named after the script. */
	snprintf(cmd, sizeof(cmd), "log=\"${BLITZ_OBJTREE:-/tmp}/tests/$(basename '%s' .sh).log\"; "
		 "bash '%s' > \"$log\" 2>&1; rc=$?; "
		 "if [ $rc -eq 77 ]; then printf 'SKIP %%s: %%s\\n' \"$(basename '%s')\" \"$(tail -n 1 \"$log\")\"; "
		 "elif [ $rc -ne 0 ]; then echo \"--- $log\"; tail -n 30 \"$log\"; fi; exit $rc",
		 path, path, path);
	fflush(stdout);
	status = system(cmd);
	ck_assert_msg(WIFEXITED(status), "%s: killed", path);
	ck_assert_msg(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77,
		      "%s failed (exit %d)", path, WEXITSTATUS(status));
}
END_TEST

static Suite *scripts_suite(void)
{
	Suite *s = suite_create("scripts");
	TCase *tc = TCASE("scripts", 600);
	char pattern[4096];

	snprintf(pattern, sizeof(pattern), "%s/tests/scripts/*.sh", srctree());
	if (glob(pattern, 0, NULL, &scripts) != 0)
		scripts.gl_pathc = 0;
	tcase_add_loop_test(tc, script, 0, (int)scripts.gl_pathc);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("scripts", scripts_suite)
