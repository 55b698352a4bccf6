/* SPDX-License-Identifier: MIT */
/*
 * tools/json_writer.h - a minimal streaming JSON writer: commas and nesting
 * handled for you.  Whatever the keys, strings and numbers, the text is
 * valid JSON (RFC 8259): keys and strings are escaped, a byte that is not
 * part of valid UTF-8 becomes U+FFFD, a NaN or infinite double is null.
 * Begin and end calls must pair, at most JSON_MAX_DEPTH deep (deeper is a
 * bug in the caller: the writer aborts).
 */
#ifndef BLITZ_TOOLS_JSON_WRITER_H
#define BLITZ_TOOLS_JSON_WRITER_H

#include <stdbool.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	15

struct json {
	FILE *f;
	int depth;
	bool need_comma[JSON_MAX_DEPTH + 1];
};

void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_int(struct json *j, const char *key, long long v);
void json_uint(struct json *j, const char *key, unsigned long long v);
void json_double(struct json *j, const char *key, double v, int decimals);
void json_str(struct json *j, const char *key, const char *v);
void json_null(struct json *j, const char *key);

#endif /* BLITZ_TOOLS_JSON_WRITER_H */
