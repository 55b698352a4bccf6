// SPDX-License-Identifier: MIT
/*
 * tools/json_writer.c - a minimal streaming JSON writer: it places the
 * commas and tracks the nesting; the caller says what comes next.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "json_writer.h"

/*
 * utf8_len - the length of the well-formed UTF-8 sequence at @p (2 to 4
 * bytes: no overlong form, no surrogate, nothing above U+10FFFF), or 0.
 * @p[0] is at least 0x80; the string's NUL ends any sequence early.
 */
static int utf8_len(const unsigned char *p)
{
	int n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	uint32_t cp = p[0] & (0x7f >> n);

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* json_quoted - @s as a JSON string: quotes, escapes, U+FFFD for bytes that are not UTF-8. */
static void json_quoted(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', j->f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fprintf(j->f, "\\%c", *p++);
		} else if (*p < 0x20) {
			fprintf(j->f, "\\u%04x", *p++);
		} else if (*p < 0x80) {
			fputc(*p++, j->f);
		} else if ((n = utf8_len(p))) {
			fwrite(p, 1, (size_t)n, j->f);
			p += n;
		} else {
			fputs("\\ufffd", j->f);
			p++;
		}
	}
	fputc('"', j->f);
}

static void json_sep(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key) {
		json_quoted(j, key);
		fputc(':', j->f);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	if (j->depth == JSON_MAX_DEPTH) {
		fputs("json_writer: nested deeper than JSON_MAX_DEPTH\n", stderr);
		abort();
	}
	json_sep(j, key);
	fputc(c, j->f);
	j->need_comma[++j->depth] = false;
}

void json_obj_begin(struct json *j, const char *key) { json_open(j, key, '{'); }
void json_arr_begin(struct json *j, const char *key) { json_open(j, key, '['); }
void json_obj_end(struct json *j) { j->depth--; fputc('}', j->f); }
void json_arr_end(struct json *j) { j->depth--; fputc(']', j->f); }

void json_int(struct json *j, const char *key, long long v)
{
	json_sep(j, key);
	fprintf(j->f, "%lld", v);
}

void json_uint(struct json *j, const char *key, unsigned long long v)
{
	json_sep(j, key);
	fprintf(j->f, "%llu", v);
}

void json_double(struct json *j, const char *key, double v, int decimals)
{
	json_sep(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.*f", decimals, v);
	else
		fputs("null", j->f);	/* JSON has no NaN or infinity */
}

void json_null(struct json *j, const char *key)
{
	json_sep(j, key);
	fputs("null", j->f);
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_sep(j, key);
	json_quoted(j, v);
}
