/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/bench_exit.h - include before a bench's source: every system
 * header it uses, then exit() turned into fuzz_exit() (fuzz.h), so that a
 * bad option returns to the fuzz target instead of ending it.
 */
#ifndef BLITZ_TESTS_FUZZ_BENCH_EXIT_H
#define BLITZ_TESTS_FUZZ_BENCH_EXIT_H

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <blitz.h>
#include "fuzz.h"

#define exit(status)	fuzz_exit(status)

/*
 * FUZZ_PARSE_OPTS - run the included bench's parse_opts() on the input as
 * its argument list: only --help (0) and bad input (2) may exit; when it
 * returns, @check(struct opts *) tests what it set.
 */
#define FUZZ_PARSE_OPTS(data, size, check)					\
	do {									\
		struct fuzz_argv _a;						\
		struct opts *_o = calloc(1, sizeof(*_o));			\
		int _status;							\
										\
		if (!_o)							\
			abort();						\
		fuzz_argv_init(&_a, PROG, data, size);				\
		optind = 0;		/* GNU getopt: start over */		\
		_status = FUZZ_RUN(parse_opts(_a.argc, _a.argv, _o));		\
		FUZZ_CHECK(_status == FUZZ_RETURNED || _status == 0 || _status == 2);	\
		if (_status == FUZZ_RETURNED)					\
			check(_o);						\
		fuzz_argv_free(&_a);						\
		free(_o);							\
	} while (0)

#endif
