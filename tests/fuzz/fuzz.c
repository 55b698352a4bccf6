// SPDX-License-Identifier: MIT
/* tests/fuzz/fuzz.c - see fuzz.h. */
#include <string.h>
#include "fuzz.h"

jmp_buf fuzz_exit_jmp;

void fuzz_exit(int status)
{
	/* setjmp's 0 means "first return": status 0-255 travels as 1-256. */
	longjmp(fuzz_exit_jmp, (status & 0xff) + 1);
}

char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_argv_init(struct fuzz_argv *a, const char *prog, const uint8_t *data, size_t size)
{
	char *p, *end;

	a->buf = fuzz_cstr(data, size);
	a->argc = 0;
	a->argv[a->argc++] = (char *)prog;
	if (!size) {
		a->argv[a->argc] = NULL;
		return;
	}
	/* Each NUL or newline ends a word: "--a\n1" is { "--a", "1" }. */
	for (p = a->buf, end = a->buf + size; a->argc <= FUZZ_MAX_ARGS; p++) {
		char *w = p;

		while (p < end && *p && *p != '\n')
			p++;
		a->argv[a->argc++] = w;
		if (p >= end)
			break;
		*p = '\0';
	}
	a->argv[a->argc] = NULL;
}

void fuzz_argv_free(struct fuzz_argv *a)
{
	free(a->buf);
	a->buf = NULL;
}
