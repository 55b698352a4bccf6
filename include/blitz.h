/* SPDX-License-Identifier: MIT */
/*
 * blitz.h - the public API of the blitz runtime.
 *
 * A work-stealing async runtime: tasks are stackless state machines (a poll
 * function over a state struct) run by a pool of worker threads.  Every
 * scheduling decision fires a USDT probe (docs/probes.md).
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

#endif /* BLITZ_H */
