// SPDX-License-Identifier: MIT
/* core/net/addr.c - socket address parsing and formatting. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <blitz/net.h>

static int fail(char *err, size_t errlen, const char *s, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "address '%s': %s", s, why);
	return -EINVAL;
}

static int parse_port(const char *p, in_port_t *out)
{
	char *end;
	long v;

	if (!*p)
		return -1;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || *end || v < 0 || v > 65535)
		return -1;
	*out = htons((uint16_t)v);
	return 0;
}

int blitz_addr_parse(const char *s, struct blitz_addr *out, char *err, size_t errlen)
{
	char host[256];
	const char *colon;
	in_port_t port;

	memset(out, 0, sizeof(*out));
	if (!s || !*s)
		return fail(err, errlen, s ? s : "(null)", "empty");
	if (!strncmp(s, "unix:", 5)) {
		struct sockaddr_un *un = (struct sockaddr_un *)&out->ss;
		size_t n = strlen(s + 5);

		if (n == 0)
			return fail(err, errlen, s, "no path after 'unix:'");
		if (n >= sizeof(un->sun_path))
			return fail(err, errlen, s, "Unix socket path longer than 107 bytes");
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, s + 5, n + 1);
		out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
		return 0;
	}
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&out->ss;

		if (!close)
			return fail(err, errlen, s, "missing ']' after an IPv6 address");
		if (close[1] != ':')
			return fail(err, errlen, s, "missing ':port' after ']'");
		if ((size_t)(close - s - 1) >= sizeof(host))
			return fail(err, errlen, s, "host too long");
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = 0;
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return fail(err, errlen, s, "not an IPv6 address");
		if (parse_port(close + 2, &port))
			return fail(err, errlen, s, "port must be a number from 0 to 65535");
		in6->sin6_family = AF_INET6;
		in6->sin6_port = port;
		out->len = sizeof(*in6);
		return 0;
	}
	colon = strrchr(s, ':');
	if (!colon)
		return fail(err, errlen, s, "expected host:port, [ipv6]:port or unix:/path");
	if (strchr(s, ':') != colon)
		return fail(err, errlen, s, "an IPv6 address needs brackets: [addr]:port");
	if ((size_t)(colon - s) >= sizeof(host))
		return fail(err, errlen, s, "host too long");
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	if (parse_port(colon + 1, &port))
		return fail(err, errlen, s, "port must be a number from 0 to 65535");

	struct sockaddr_in *in = (struct sockaddr_in *)&out->ss;

	in->sin_family = AF_INET;
	in->sin_port = port;
	out->len = sizeof(*in);
	if (!*host)
		in->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (!strcmp(host, "localhost"))
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
		return fail(err, errlen, s, "not an IPv4 address (host names other than localhost are not resolved)");
	return 0;
}

const char *blitz_addr_format(const struct blitz_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	switch (a->ss.ss_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&a->ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a->ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
		break;
	}
	case AF_UNIX: {
		/*
		 * The kernel need not end sun_path with a NUL (a 108-byte path
		 * fills it): only a->len bytes of the address are the path's.
		 */
		const struct sockaddr_un *un = (const struct sockaddr_un *)&a->ss;
		size_t off = offsetof(struct sockaddr_un, sun_path), n = 0;

		if (a->len > off)
			n = a->len - off < sizeof(un->sun_path) ? a->len - off : sizeof(un->sun_path);
		snprintf(buf, len, "unix:%.*s", (int)n, un->sun_path);
		break;
	}
	default:
		snprintf(buf, len, "(family %d)", a->ss.ss_family);
	}
	return buf;
}

int blitz_addr_local(int fd, struct blitz_addr *out)
{
	out->len = sizeof(out->ss);
	return getsockname(fd, (struct sockaddr *)&out->ss, &out->len) < 0 ? -errno : 0;
}
