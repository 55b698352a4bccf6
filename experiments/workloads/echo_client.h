/* SPDX-License-Identifier: MIT */
/*
 * echo_client.h - what the two echo load generators share: echo-bench's
 * client and the neutral echo-loadgen (experiments/peers/loadgen).  Plain
 * C, no blitz: echo-loadgen is built without the library.
 */
#ifndef BLITZ_ECHO_CLIENT_H
#define BLITZ_ECHO_CLIENT_H

#include <stddef.h>

/* echo_raise_nofile - many connections need many descriptors: take the hard limit. */
void echo_raise_nofile(void);

/*
 * echo_prime - one 1-byte round trip on the connected socket @fd, blocking,
 * at most 10 s each way.  Once it is back the server has accepted the
 * connection and serves it: connection setup (how fast a server accepts)
 * stays out of the measurement.  0, or -1 with errno set.
 */
int echo_prime(int fd);

/* echo_fill - the message both clients send: @n letters in a fixed pattern. */
void echo_fill(unsigned char *msg, size_t n);

/*
 * echo_parse_seconds - option @opt's value @v as seconds, at least @lo
 * (above 0 when @lo > 0) and at most a day; anything else is a one-line
 * error naming @prog, and exit 2.
 */
double echo_parse_seconds(const char *prog, const char *opt, const char *v, double lo);

#endif
