// SPDX-License-Identifier: MIT
/* tests/fuzz/json_check.c - see json_check.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "json_check.h"

#define MAX_NESTING	512

struct cur {
	const unsigned char *p, *end;
	const char *why;
};

static bool fail(struct cur *c, const char *why)
{
	if (!c->why)
		c->why = why;
	return false;
}

static void skip_ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static bool eat(struct cur *c, char ch)
{
	skip_ws(c);
	if (c->p < c->end && *c->p == (unsigned char)ch) {
		c->p++;
		return true;
	}
	return false;
}

static bool digits(struct cur *c)
{
	const unsigned char *s = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > s;
}

/* number - -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number(struct cur *c)
{
	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (c->p >= c->end || *c->p < '1' || *c->p > '9' || !digits(c))
		return fail(c, "not a number");
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!digits(c))
			return fail(c, "no digit after '.'");
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!digits(c))
			return fail(c, "no digit in the exponent");
	}
	return true;
}

/* utf8 - one well-formed UTF-8 sequence (no overlong form, no surrogate, <= U+10FFFF). */
static bool utf8(struct cur *c)
{
	unsigned char b = *c->p;
	int more = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : 1;
	uint32_t cp = b & (0x3f >> more);

	if (b < 0xc2 || b > 0xf4)
		return fail(c, "a byte that starts no UTF-8 sequence");
	if (c->end - c->p <= more)
		return fail(c, "a UTF-8 sequence cut short");
	for (int i = 1; i <= more; i++) {
		if ((c->p[i] & 0xc0) != 0x80)
			return fail(c, "a UTF-8 sequence cut short");
		cp = cp << 6 | (c->p[i] & 0x3f);
	}
	if ((more == 2 && cp < 0x800) || (more == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return fail(c, "an overlong, surrogate or out-of-range UTF-8 sequence");
	c->p += more + 1;
	return true;
}

static bool string(struct cur *c)
{
	c->p++;				/* the opening quote */
	while (c->p < c->end && *c->p != '"') {
		if (*c->p < 0x20)
			return fail(c, "a raw control character in a string");
		if (*c->p >= 0x80) {
			if (!utf8(c))
				return false;
			continue;
		}
		if (*c->p++ != '\\')
			continue;
		if (c->p >= c->end)
			break;
		if (*c->p == 'u') {
			if (c->end - c->p < 5)
				return fail(c, "\\u without four hex digits");
			for (int i = 1; i <= 4; i++)
				if (!strchr("0123456789abcdefABCDEF", c->p[i]) || !c->p[i])
					return fail(c, "\\u without four hex digits");
			c->p += 5;
		} else if (strchr("\"\\/bfnrt", *c->p) && *c->p) {
			c->p++;
		} else {
			return fail(c, "an unknown escape");
		}
	}
	if (c->p >= c->end)
		return fail(c, "an unterminated string");
	c->p++;
	return true;
}

static bool value(struct cur *c, int depth);

/* members - the rest of an object or array after its opening bracket. */
static bool members(struct cur *c, int depth, bool object)
{
	char close = object ? '}' : ']';

	if (eat(c, close))
		return true;
	do {
		skip_ws(c);
		if (object) {
			if (c->p >= c->end || *c->p != '"')
				return fail(c, "an object member without a string key");
			if (!string(c))
				return false;
			if (!eat(c, ':'))
				return fail(c, "no ':' after a key");
		}
		if (!value(c, depth + 1))
			return false;
	} while (eat(c, ','));
	if (!eat(c, close))
		return fail(c, object ? "no ',' or '}' after a member" : "no ',' or ']' after an element");
	return true;
}

static bool literal(struct cur *c, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n))
		return fail(c, "not a JSON value");
	c->p += n;
	return true;
}

static bool value(struct cur *c, int depth)
{
	if (depth > MAX_NESTING)
		return fail(c, "nested too deep for the checker");
	skip_ws(c);
	if (c->p >= c->end)
		return fail(c, "a value missing");
	switch (*c->p) {
	case '{': c->p++; return members(c, depth, true);
	case '[': c->p++; return members(c, depth, false);
	case '"': return string(c);
	case 't': return literal(c, "true");
	case 'f': return literal(c, "false");
	case 'n': return literal(c, "null");
	default: return number(c);
	}
}

const char *json_check(const char *s, size_t n, size_t *at)
{
	struct cur c = { (const unsigned char *)s, (const unsigned char *)s + n, NULL };

	if (value(&c, 0)) {
		skip_ws(&c);
		if (c.p < c.end)
			fail(&c, "text after the value");
	}
	*at = (size_t)(c.p - (const unsigned char *)s);
	return c.why;
}
