// SPDX-License-Identifier: MIT
/*
 * echo_client.c - the pieces echo-bench's client and echo-loadgen share
 * (echo_client.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "echo_client.h"

void echo_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int echo_prime(int fd)
{
	struct timeval tv = { .tv_sec = 10 };
	char c = '!';

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1)
		return -1;
	switch (recv(fd, &c, 1, MSG_WAITALL)) {
	case 1:
		break;
	case 0:
		errno = ECONNRESET;	/* closed before the echo */
		return -1;
	default:
		if (errno == EAGAIN)
			errno = ETIMEDOUT;
		return -1;
	}
	return c == '!' ? 0 : (errno = EBADMSG, -1);
}

void echo_fill(unsigned char *msg, size_t n)
{
	for (size_t i = 0; i < n; i++)
		msg[i] = (unsigned char)('a' + (i * 7 + i / 26) % 26);
}

double echo_parse_seconds(const char *prog, const char *opt, const char *v, double lo)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || *end || end == v || !(d >= lo) || d > 86400) {
		fprintf(stderr, "%s: %s %s: expected %s\n", prog, opt, v,
			lo > 0 ? "seconds, more than 0" : "seconds, 0 or more");
		exit(2);
	}
	return d;
}
