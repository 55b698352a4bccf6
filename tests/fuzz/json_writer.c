// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/json_writer.c - tools/json_writer.c, the JSON every tool
 * prints with -j, written from any sequence of calls and values.
 *
 * The input is a program for the writer: each byte picks a call (begin or
 * end an object or array, an integer, an unsigned, a double, a string,
 * null) and the bytes after it are its key (inside an object) and value.
 * Containers are opened and closed in balanced pairs within the nesting
 * the writer supports (its callers' contract); any key, string (any bytes
 * but NUL) and number may be given.  Property: the text written is one
 * valid JSON value (json_check.h).
 */
#include <string.h>
#include "fuzz.h"
#include "json_check.h"
#include "../../tools/json_writer.c"

#define MAX_CALLS	512

struct prog {
	const uint8_t *p, *end;
	char str[2][256];		/* the key and the string value of one call */
};

static uint8_t byte(struct prog *g)
{
	return g->p < g->end ? *g->p++ : 0;
}

static void bytes(struct prog *g, void *out, size_t n)
{
	memset(out, 0, n);
	for (size_t i = 0; i < n && g->p < g->end; i++)
		((uint8_t *)out)[i] = *g->p++;
}

/* text - a string from the program: a length byte, then up to that many bytes (a NUL ends it). */
static const char *text(struct prog *g, int which)
{
	size_t n = byte(g), i;
	char *s = g->str[which];

	for (i = 0; i < n && g->p < g->end && *g->p; i++)
		s[i] = (char)*g->p++;
	s[i] = '\0';
	return s;
}

/* run - the program's calls on @j; @open holds '{' or '[' per open container. */
static void run(struct prog *g, struct json *j)
{
	char open[JSON_MAX_DEPTH + 1];
	int depth = 0;

	json_obj_begin(j, NULL);
	open[depth++] = '{';
	for (int calls = 0; calls < MAX_CALLS && g->p < g->end; calls++) {
		uint8_t op = byte(g) % 8;
		const char *key = open[depth - 1] == '{' ? text(g, 0) : NULL;
		long long i;
		double d;

		switch (op) {
		case 0:
		case 1:
			if (depth >= JSON_MAX_DEPTH)
				break;
			if (op == 0)
				json_obj_begin(j, key);
			else
				json_arr_begin(j, key);
			open[depth++] = op == 0 ? '{' : '[';
			break;
		case 2:
			if (depth == 1)
				break;
			if (open[--depth] == '{')
				json_obj_end(j);
			else
				json_arr_end(j);
			break;
		case 3:
			bytes(g, &i, sizeof(i));
			json_int(j, key, i);
			break;
		case 4:
			bytes(g, &i, sizeof(i));
			json_uint(j, key, (unsigned long long)i);
			break;
		case 5:
			bytes(g, &d, sizeof(d));
			json_double(j, key, d, byte(g) % 12);
			break;
		case 6:
			json_str(j, key, text(g, 1));
			break;
		default:
			json_null(j, key);
		}
	}
	while (depth--)
		if (open[depth] == '{')
			json_obj_end(j);
		else
			json_arr_end(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prog g = { .p = data, .end = data + size };
	struct json j = { 0 };
	char *out = NULL;
	size_t len = 0, at;
	const char *why;

	j.f = open_memstream(&out, &len);
	if (!j.f)
		abort();
	run(&g, &j);
	fclose(j.f);
	why = json_check(out, len, &at);
	if (why)
		fprintf(stderr, "json_writer wrote invalid JSON (%s at byte %zu):\n%s\n", why, at, out);
	FUZZ_CHECK(!why);
	free(out);
	return 0;
}
