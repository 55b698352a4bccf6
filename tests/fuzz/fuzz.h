/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz.h - what the fuzz targets share: the libFuzzer entry
 * points, turning the input into a C string or an argv, and the check that
 * a property holds (a failed one aborts, which the fuzzer reports as a crash).
 */
#ifndef BLITZ_TESTS_FUZZ_H
#define BLITZ_TESTS_FUZZ_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* FUZZ_CHECK - @cond must hold for every input; else say which and abort. */
#define FUZZ_CHECK(cond)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: property failed: %s\n",		\
				__FILE__, __LINE__, #cond);			\
			abort();						\
		}								\
	} while (0)

/* fuzz_cstr - the input as a malloc'ed C string (it ends at its first NUL, if any). */
char *fuzz_cstr(const uint8_t *data, size_t size);

#define FUZZ_MAX_ARGS	64

/* struct fuzz_argv - a command line cut from an input: argv[0] is @prog. */
struct fuzz_argv {
	int argc;
	char *argv[FUZZ_MAX_ARGS + 2];
	char *buf;
};

/*
 * fuzz_argv_init - the input's NUL- or newline-separated words as argv[1..]
 * (at most FUZZ_MAX_ARGS), NULL-terminated.  fuzz_argv_free() releases it.
 */
void fuzz_argv_init(struct fuzz_argv *a, const char *prog, const uint8_t *data, size_t size);
void fuzz_argv_free(struct fuzz_argv *a);

/*
 * The programs under test call exit() on bad input.  A target compiles
 * their source with exit defined to fuzz_exit, which jumps back to the
 * FUZZ_RUN() that called them instead: the status is what FUZZ_RUN() gives.
 * Not a status a program can exit with: the call returned normally.
 */
#define FUZZ_RETURNED	(-1)
extern jmp_buf fuzz_exit_jmp;
void fuzz_exit(int status) __attribute__((noreturn));

/* FUZZ_RUN - run @call: FUZZ_RETURNED, or the status it exited with (0-255). */
#define FUZZ_RUN(call)								\
	({									\
		int _st = setjmp(fuzz_exit_jmp);				\
		if (!_st)							\
			call;							\
		_st ? _st - 1 : FUZZ_RETURNED;					\
	})

#endif /* BLITZ_TESTS_FUZZ_H */
