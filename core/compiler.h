/* SPDX-License-Identifier: MIT */
/*
 * core/compiler.h - what the core asks of the compiler and the CPU: the
 * line size that data written by different threads is kept apart by, the
 * hint a spin-wait gives the CPU, and AddressSanitizer's poisoning of
 * memory the core keeps for reuse.  The runtime targets x86_64.
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

/*
 * mem_poison, mem_unpoison - under AddressSanitizer, mark memory the core
 * holds for reuse (a cached task block, a slab's part not carved yet) as
 * not to be touched, so that a use after free is still reported; no-ops
 * otherwise.
 */
#if defined(__SANITIZE_ADDRESS__)
#define BLITZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BLITZ_ASAN 1
#endif
#endif

#ifdef BLITZ_ASAN
#include <sanitizer/asan_interface.h>
#define mem_poison(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define mem_unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define mem_poison(p, n)	((void)(p), (void)(n))
#define mem_unpoison(p, n)	((void)(p), (void)(n))
#endif

#endif /* BLITZ_CORE_COMPILER_H */
