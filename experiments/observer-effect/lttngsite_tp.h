/* SPDX-License-Identifier: MIT */
/*
 * lttngsite_tp.h - the tracepoint provider of lttngsite.c: one event of two
 * fields (a worker's index and a task's address), the shape of blitz's
 * per-event records (task_poll_start: worker, task), recorded by LTTng-UST
 * with its timestamp into a per-CPU ring buffer.  Read twice by the
 * compiler (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ): once for the
 * declarations, once, in lttngsite.c, to generate the probe.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER blitz_anchor

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttngsite_tp.h"

#if !defined(LTTNGSITE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define LTTNGSITE_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(blitz_anchor, poll,
	LTTNG_UST_TP_ARGS(int, worker, uint64_t, task),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, worker, worker)
		lttng_ust_field_integer_hex(uint64_t, task, task)
	)
)

#endif

#include <lttng/tracepoint-event.h>
