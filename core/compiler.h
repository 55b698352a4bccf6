/* SPDX-License-Identifier: MIT */
/*
 * core/compiler.h - what the core asks of the compiler and the CPU: the
 * line size that data written by different threads is kept apart by, and
 * the hint a spin-wait gives the CPU.  The runtime targets x86_64.
 */
#ifndef BLITZ_CORE_COMPILER_H
#define BLITZ_CORE_COMPILER_H

#include <stdalign.h>

/*
 * CACHE_LINE - alignment that keeps two fields off each other's lines:
 * 128 rather than 64 because x86_64's adjacent-line prefetcher fetches
 * 64-byte lines in pairs, so neighbours 64 bytes apart still false-share.
 */
#define CACHE_LINE	128

/* cpu_relax - one spin-wait iteration: PAUSE yields the core to its sibling. */
static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

#endif /* BLITZ_CORE_COMPILER_H */
