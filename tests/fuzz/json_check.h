/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/json_check.h - a strict JSON (RFC 8259) checker for the fuzz
 * target of tools/json_writer.c: the text must be one value, strings valid
 * UTF-8 without raw control characters, numbers in JSON's grammar (no nan,
 * no inf, no leading zeros).
 */
#ifndef BLITZ_TESTS_FUZZ_JSON_CHECK_H
#define BLITZ_TESTS_FUZZ_JSON_CHECK_H

#include <stddef.h>

/*
 * json_check - NULL if the @n bytes at @s are one JSON value (with
 * whitespace around it); else what is wrong, and *@at its offset.
 */
const char *json_check(const char *s, size_t n, size_t *at);

#endif
