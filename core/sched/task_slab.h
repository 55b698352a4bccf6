/* SPDX-License-Identifier: MIT */
/*
 * core/sched/task_slab.h - where the task cache's blocks come from: slabs
 * of TASK_SLAB_BYTES, aligned to their size, carved into blocks on cache
 * lines of their own (docs/scheduler.md, "Task memory").
 *
 * Why: blocks that share a cache line put two tasks in one line, and a
 * worker that polls one takes the line from the worker that polls the
 * other.  Plain malloc chunks (16-byte steps) share lines; once the free
 * lists have mixed them, neighbouring tasks run on different workers and
 * every poll moves a line (yield_many at two workers drifted from 14 to
 * 21 ns a poll within a run: experiments/modes/NOTEBOOK.md, "3 Dec 2026
 * 12:24").  aligned_alloc per block costs glibc's memalign path and
 * rounding by hand doubles the footprint; a slab costs a bump of an
 * offset per block and one aligned_alloc per TASK_SLAB_BYTES.
 *
 * Invariants:
 *  - A block starts on a TASK_BLOCK_ALIGN boundary, its size is a
 *    multiple of it, and it lies inside one slab, past the slab's header
 *    line: the slab of a block is its address rounded down to
 *    TASK_SLAB_BYTES.
 *  - A slab's @live counts the blocks carved from it and not given back,
 *    plus one while it is the slab being carved; the put that brings it
 *    to zero frees the slab.  A block is never carved twice: a slab is
 *    carved front to back, once.
 *  - Under AddressSanitizer the part of a slab not carved yet, every block
 *    given back, and each block's padding past what it was carved for
 *    (a redzone between two tasks) are poisoned.
 */
#ifndef BLITZ_CORE_TASK_SLAB_H
#define BLITZ_CORE_TASK_SLAB_H

#include <stddef.h>
#include <stdint.h>

#define TASK_SLAB_BYTES		16384	/* a slab, aligned to its size: the most one live block pins */
/*
 * A cache line, not compiler.h's CACHE_LINE (128, a prefetched pair):
 * 128-byte blocks did no better for yield_many and cost spawn_many_remote
 * 1.5x more (experiments/modes/NOTEBOOK.md, "3 Dec 2026 13:01").
 */
#define TASK_BLOCK_ALIGN	64

/* TASK_BLOCK_BYTES - the block that holds @bytes: rounded up to a line (a constant expression). */
#define TASK_BLOCK_BYTES(bytes)	(((bytes) + TASK_BLOCK_ALIGN - 1) / TASK_BLOCK_ALIGN * TASK_BLOCK_ALIGN)

void *task_slab_alloc(size_t bytes, size_t used);
void task_slab_free(void *block, size_t bytes);
uint32_t task_slab_count(void);

#endif
