/* SPDX-License-Identifier: MIT */
/* core/net/owned.h - inside the socket layer: sockets blitz closes itself. */
#ifndef BLITZ_CORE_NET_OWNED_H
#define BLITZ_CORE_NET_OWNED_H

struct blitz_runtime;

/*
 * net_own - @fd, just accepted with BLITZ_ACCEPT_OWNED on @rt, will be
 * closed with blitz_net_close(): tell the backend, which may then keep a
 * receive armed on it between reads.
 */
void net_own(struct blitz_runtime *rt, int fd);

#endif /* BLITZ_CORE_NET_OWNED_H */
