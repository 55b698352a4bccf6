/* SPDX-License-Identifier: MIT */
/*
 * blitz.h - the public API of the blitz runtime.
 *
 * A work-stealing async runtime: tasks are stackless state machines (a poll
 * function over a state struct) run by a pool of worker threads.  Every
 * scheduling decision fires a USDT probe (docs/probes.md).
 *
 * Bad input (docs/design.md, "Bad input"): values (sizes, counts,
 * descriptors, names, addresses, configurations) are always checked and
 * a bad one is an error code (-EINVAL, -EBADF, ...), never a crash or an
 * endless wait; zero means what the function's comment says; a NULL
 * runtime is the calling task's; releases take NULL as a no-op; the
 * object a call acts on (the operation, lock, channel, waiter, cx) is
 * the caller's and is not checked.
 */
#ifndef BLITZ_H
#define BLITZ_H

#include <blitz/config.h>
#include <blitz/task.h>
#include <blitz/runtime.h>
#include <blitz/stats.h>
#include <blitz/oneshot.h>
#include <blitz/sync.h>
#include <blitz/channel.h>
#include <blitz/time.h>
#include <blitz/io.h>
#include <blitz/net.h>
#include <blitz/pipe.h>
#include <blitz/signal.h>
#include <blitz/process.h>
#include <blitz/shutdown.h>
#include <blitz/blocking.h>
#include <blitz/fs.h>
#include <blitz/stream.h>
#include <blitz/trace.h>

#endif /* BLITZ_H */
