/* SPDX-License-Identifier: MIT */
/*
 * core/chan/words.h - values copied in and out as relaxed atomic 64-bit
 * words, for the seqlocks of broadcast.c and watch.c: a reader may race a
 * writer (the seqlock then detects it and discards the copy), and with
 * atomic words that race is not a data race in the C11 sense, nor for
 * ThreadSanitizer.  The seqlock's fences give the ordering; the words
 * themselves need none.
 */
#ifndef BLITZ_CORE_CHAN_WORDS_H
#define BLITZ_CORE_CHAN_WORDS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t words_size(size_t bytes)
{
	return (bytes + 7) & ~(size_t)7;
}

static __attribute__((noinline, unused)) void words_store_n(_Atomic uint64_t *dst, const void *src,
							    size_t size)
{
	const unsigned char *s = src;

	/* Relaxed: the seqlock's fences give the ordering (see the top). */
	for (; size >= 8; size -= 8, s += 8, dst++) {
		uint64_t v;

		memcpy(&v, s, 8);
		atomic_store_explicit(dst, v, memory_order_relaxed);
	}
	if (size) {
		uint64_t v = 0;

		memcpy(&v, s, size);
		atomic_store_explicit(dst, v, memory_order_relaxed);
	}
}

static __attribute__((noinline, unused)) void words_load_n(void *dst, _Atomic uint64_t *src, size_t size)
{
	unsigned char *d = dst;

	/* Relaxed: the seqlock's fences give the ordering (see the top). */
	for (; size >= 8; size -= 8, d += 8, src++) {
		uint64_t v = atomic_load_explicit(src, memory_order_relaxed);

		memcpy(d, &v, 8);
	}
	if (size) {
		uint64_t v = atomic_load_explicit(src, memory_order_relaxed);

		memcpy(d, &v, size);
	}
}

/*
 * words_store, words_load - copy @size bytes.  One word (a u64, a pointer:
 * what most channels carry) is a single access inline; other sizes loop
 * out of line, so that a caller's hot path does not save registers for
 * the loop (callgrind over sync-bench's broadcast_send_recv4: with the
 * loop inline, the copy was a large share of an 8-byte receive).
 */
static inline void words_store(_Atomic uint64_t *dst, const void *src, size_t size)
{
	if (__builtin_expect(size == 8, 1)) {
		uint64_t v;

		memcpy(&v, src, 8);
		/* Relaxed: the seqlock's fences give the ordering (see the top). */
		atomic_store_explicit(dst, v, memory_order_relaxed);
		return;
	}
	words_store_n(dst, src, size);
}

static inline void words_load(void *dst, _Atomic uint64_t *src, size_t size)
{
	if (__builtin_expect(size == 8, 1)) {
		/* Relaxed: the seqlock's fences give the ordering (see the top). */
		uint64_t v = atomic_load_explicit(src, memory_order_relaxed);

		memcpy(dst, &v, 8);
		return;
	}
	words_load_n(dst, src, size);
}

#endif
