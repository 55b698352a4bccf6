/* SPDX-License-Identifier: MIT */
/*
 * core/probes.h - the USDT probes of probes/blitz.d.
 *
 * BLITZ_<NAME>(args...) fires a probe; BLITZ_<NAME>_ENABLED() is true only
 * while a tracer is attached (a semaphore the kernel increments).  Guard any
 * argument that costs something to compute with the _ENABLED() check.
 * With CONFIG_PROBES=n both compile to nothing (scripts/gen-probes).
 */
#ifndef BLITZ_CORE_PROBES_H
#define BLITZ_CORE_PROBES_H

#include <generated/blitz_probes.h>
/* The codes the probes carry in their arguments (SRC_*, DEST_*, UNPARK_*, ...). */
#include "../probes/blitz_probe_codes.h"

/*
 * TASK_PROBE(t, NAME, args...) - a task_* probe, fired only for a traced
 * task (BLITZ_TRACE_SAMPLE=N traces one task in N, each traced whole, so
 * that spawn/schedule/poll/complete pairs stay intact).  The semaphore is
 * tested first: with nobody attached nothing else is looked at.
 */
#define TASK_PROBE(t, NAME, ...)					\
	do {								\
		if (BLITZ_##NAME##_ENABLED() && task_traced(t))		\
			BLITZ_##NAME(__VA_ARGS__);			\
	} while (0)

#endif
