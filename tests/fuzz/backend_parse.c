// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/backend_parse.c - blitz_backend_parse() (backends/driver.c),
 * the reader of BLITZ_BACKEND and of the benches' --backend, on any bytes.
 *
 * Properties: a name parses exactly when it is the name
 * blitz_backend_name() gives a backend, into that backend, and a failed
 * parse leaves *out alone; blitz_backend_name() of any number is NULL or
 * a name that parses back to that number.
 */
#include <errno.h>
#include <string.h>
#include <blitz/config.h>
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	enum blitz_io_backend b = (enum blitz_io_backend)-1, named = b;
	const char *name;
	int r = blitz_backend_parse(s, &b);
	int value = 0;

	for (int k = 0; (name = blitz_backend_name(k)); k++)
		if (!strcmp(name, s))
			named = (enum blitz_io_backend)k;
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK(b == named);
	FUZZ_CHECK(!r == (named != (enum blitz_io_backend)-1));

	/* The first four bytes as a number: any int, negative ones too. */
	memcpy(&value, data, size < sizeof(value) ? size : sizeof(value));
	name = blitz_backend_name((enum blitz_io_backend)value);
	if (name) {
		FUZZ_CHECK(blitz_backend_parse(name, &b) == 0);
		FUZZ_CHECK((int)b == value);
	}
	free(s);
	return 0;
}
