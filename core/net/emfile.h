/* SPDX-License-Identifier: MIT */
/*
 * core/net/emfile.h - inside the socket layer: accepts that ran out of
 * descriptors are counted, and may shed the listener's queue with the
 * process's reserve descriptor (core/net/emfile.c).
 */
#ifndef BLITZ_CORE_NET_EMFILE_H
#define BLITZ_CORE_NET_EMFILE_H

#include <stdbool.h>

/* emfile_reserve_open - keep one descriptor spare (blitz_listen() calls it). */
void emfile_reserve_open(void);

/*
 * emfile_accept_failed - an accept on @listen_fd failed with -@err (EMFILE
 * or ENFILE): count it, fire the probe and, if @shed, reset the queued
 * connections.  Return: how many were reset.
 */
unsigned emfile_accept_failed(int listen_fd, int err, bool shed);

#endif /* BLITZ_CORE_NET_EMFILE_H */
