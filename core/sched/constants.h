/* SPDX-License-Identifier: MIT */
/*
 * core/sched/constants.h - the scheduler's sizes and bounds that no knob
 * sets (docs/scheduler.md, "Constants"); the knobs' defaults and bounds
 * are include/blitz/config.h's.
 */
#ifndef BLITZ_CORE_SCHED_CONSTANTS_H
#define BLITZ_CORE_SCHED_CONSTANTS_H

#define BLITZ_MAX_LIFO_POLLS         3		/* LIFO polls per tick */
#define BLITZ_QUEUE_CAPACITY         256	/* a worker's ring */
#define BLITZ_BATCH_BUFFER           32		/* a global batch's buffer */
#define BLITZ_MIN_GLOBAL_BATCH       4
#define BLITZ_MAX_GLOBAL_BATCH       64
#define BLITZ_MIN_GLOBAL_INTERVAL    8		/* the adaptive interval's clamp, with the knob's bound */
#define BLITZ_TARGET_GLOBAL_LATENCY_NS 1000000ull	/* the adaptive interval's aim */
#define BLITZ_WORKER_STACK_SIZE      (16u << 20)	/* a worker thread's stack: joins nest on it */

#endif
