// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/addr.c - blitz_addr_parse() and blitz_addr_format()
 * (core/net/addr.c) on any bytes.
 *
 * The input is an address as a user types it (--listen, --client-only).
 * Properties: a parse fails with -EINVAL and a message, whatever the room
 * for the message; one that succeeds formats to a string that parses back
 * to the same address.  Then the input's bytes, as a struct blitz_addr
 * (what accept() or getsockname() may fill in), must format without
 * reading outside it.
 */
#include <errno.h>
#include <string.h>
#include <sys/un.h>
#include <blitz/net.h>
#include "fuzz.h"

static void parse_and_format(const char *s)
{
	struct blitz_addr a, b;
	char err[160], tiny[8], buf[256];
	int r;

	memset(err, 'x', sizeof(err));
	r = blitz_addr_parse(s, &a, err, sizeof(err));
	/* Whatever the room for the message, the answer is the same. */
	FUZZ_CHECK(blitz_addr_parse(s, &b, tiny, sizeof(tiny)) == r);
	FUZZ_CHECK(blitz_addr_parse(s, &b, NULL, 0) == r);
	if (r) {
		FUZZ_CHECK(r == -EINVAL);
		FUZZ_CHECK(err[0] && memchr(err, '\0', sizeof(err)));
		FUZZ_CHECK(memchr(tiny, '\0', sizeof(tiny)));
		return;
	}
	FUZZ_CHECK(a.len > 0 && a.len <= sizeof(a.ss));
	blitz_addr_format(&a, buf, sizeof(buf));
	FUZZ_CHECK(blitz_addr_parse(buf, &b, err, sizeof(err)) == 0);
	FUZZ_CHECK(a.len == b.len && !memcmp(&a.ss, &b.ss, a.len));
}

/* format_raw - @data as an address someone else filled in: format it in full and cut short. */
static void format_raw(const uint8_t *data, size_t size)
{
	struct blitz_addr *a = malloc(sizeof(*a));
	char buf[256], small[16];

	if (!a)
		abort();
	memset(a, 0, sizeof(*a));
	memcpy(a, data, size < sizeof(*a) ? size : sizeof(*a));
	blitz_addr_format(a, buf, sizeof(buf));
	FUZZ_CHECK(memchr(buf, '\0', sizeof(buf)));
	/* A Unix path is at most sun_path, even one without a NUL (seen without ASan too). */
	if (a->ss.ss_family == AF_UNIX)
		FUZZ_CHECK(strlen(buf) <= strlen("unix:") + sizeof(((struct sockaddr_un *)0)->sun_path));
	blitz_addr_format(a, small, sizeof(small));
	FUZZ_CHECK(memchr(small, '\0', sizeof(small)));
	free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	parse_and_format(s);
	format_raw(data, size);
	free(s);
	return 0;
}
