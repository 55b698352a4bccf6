// SPDX-License-Identifier: MIT
/*
 * tools/json_writer.c - a minimal streaming JSON writer: it places the
 * commas and tracks the nesting; the caller says what comes next.
 */
#include <stdio.h>
#include "json_writer.h"

static void json_sep(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key)
		fprintf(j->f, "\"%s\":", key);
}

static void json_open(struct json *j, const char *key, char c)
{
	json_sep(j, key);
	fputc(c, j->f);
	if (j->depth < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])) - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
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
	fprintf(j->f, "%.*f", decimals, v);
}

void json_null(struct json *j, const char *key)
{
	json_sep(j, key);
	fputs("null", j->f);
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_sep(j, key);
	fputc('"', j->f);
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->f, "\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			fprintf(j->f, "\\u%04x", *p);
		else
			fputc(*p, j->f);
	}
	fputc('"', j->f);
}
