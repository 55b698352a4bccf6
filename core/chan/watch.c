// SPDX-License-Identifier: MIT
/*
 * core/chan/watch.c - the watch: one value, replaced by each send, with a
 * generation that counts the sends; receivers wait for a generation newer
 * than the one they have seen.
 *
 * The value is guarded by a seqlock (the choice documented in
 * docs/channels.md): version is even when the value is stable and odd while
 * a send writes it; generation = version / 2.
 *  - Senders (and close) serialise on the version itself: a CAS from an
 *    even v to v + 1 is the writer's lock, the store of v + 2 (or v, for
 *    close) its unlock.  A send holds it for one copy of the value.
 *  - Readers take no lock and never delay a sender: read version (spin
 *    while it is odd), copy, read it again; retry if it changed.
 * A small lock would make readers wait for each other; the seqlock lets any
 * number of readers copy at once, which suits a value read much more often
 * than it is written.  The value is copied in relaxed atomic words (words.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../fault.h"
#include "../spinlock.h"
#include "waitlist.h"
#include "words.h"

#define MAX_ELEM (1ull << 20)

#define VERSION(wt) WL_U64(&(wt)->version)
#define CLOSED(wt) WL_U32(&(wt)->closed)

size_t blitz_watch_storage_size(size_t elem_size)
{
	return elem_size && elem_size <= MAX_ELEM ? words_size(elem_size) : 0;
}

int blitz_watch_init_storage(struct blitz_watch *wt, void *storage, size_t elem_size,
			     const void *initial)
{
	if (!blitz_watch_storage_size(elem_size) || !storage || ((uintptr_t)storage & 7))
		return -EINVAL;
	memset(wt, 0, sizeof(*wt));
	wt->value = storage;
	wt->elem_size = (uint32_t)elem_size;
	atomic_init(VERSION(wt), 0);
	atomic_init(CLOSED(wt), 0);
	memset(storage, 0, words_size(elem_size));
	if (initial)
		words_store((_Atomic uint64_t *)wt->value, initial, elem_size);
	cwl_init(&wt->receivers, true);
	return 0;
}

int blitz_watch_init(struct blitz_watch *wt, size_t elem_size, const void *initial)
{
	size_t size = blitz_watch_storage_size(elem_size);
	void *buf;

	if (!size)
		return -EINVAL;
	buf = fault_malloc(FAULT_BUF_ALLOC, size);
	if (!buf)
		return -ENOMEM;
	blitz_watch_init_storage(wt, buf, elem_size, initial);
	wt->owns_value = 1;
	return 0;
}

void blitz_watch_destroy(struct blitz_watch *wt)
{
	if (wt->owns_value)
		free(wt->value);
	wt->value = NULL;
	wt->owns_value = 0;
}

/* write_lock - version v (even) -> v + 1; returns v. */
static uint64_t write_lock(struct blitz_watch *wt)
{
	unsigned spins = 0;
	/* Relaxed: a guess; the CAS below decides and orders. */
	uint64_t v = atomic_load_explicit(VERSION(wt), memory_order_relaxed);

	for (;;) {
		if (v & 1) {
			spin_backoff(&spins);
			/* Relaxed: a guess, as above. */
			v = atomic_load_explicit(VERSION(wt), memory_order_relaxed);
			continue;
		}
		/*
		 * Acquire: we come after the previous writer's release store
		 * of v (its value words, its closed flag).
		 */
		if (atomic_compare_exchange_weak_explicit(VERSION(wt), &v, v + 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return v;
	}
}

int blitz_watch_send(struct blitz_watch *wt, const void *value)
{
	uint64_t v = write_lock(wt);

	/* Relaxed: closed is written only under the write lock. */
	if (atomic_load_explicit(CLOSED(wt), memory_order_relaxed)) {
		/* Release: unlock; nothing was written. */
		atomic_store_explicit(VERSION(wt), v, memory_order_release);
		return -EPIPE;
	}
	/*
	 * Release fence: the odd version (our CAS) is ordered before the
	 * word stores, so a reader whose copy saw one of them reads an odd or
	 * newer version after its acquire fence.
	 */
	atomic_thread_fence(memory_order_release);
	words_store((_Atomic uint64_t *)wt->value, value, wt->elem_size);
	/* Release: a reader that loads v + 2 with acquire sees the whole value. */
	atomic_store_explicit(VERSION(wt), v + 2, memory_order_release);
	cwl_notify_all(&wt->receivers);
	return 0;
}

void blitz_watch_close(struct blitz_watch *wt)
{
	uint64_t v = write_lock(wt);

	/*
	 * Release: a receiver that loads closed with acquire sees our
	 * write_lock's CAS, hence every send before it: its version load
	 * then gives the final generation.
	 */
	atomic_store_explicit(CLOSED(wt), 1, memory_order_release);
	/* Release: unlock, the value unchanged (same generation). */
	atomic_store_explicit(VERSION(wt), v, memory_order_release);
	cwl_notify_all(&wt->receivers);
}

uint64_t blitz_watch_read(const struct blitz_watch *wt, void *out)
{
	unsigned spins = 0;

	for (;;) {
		/* Acquire: pairs with the sender's release store of an even version. */
		uint64_t v1 = atomic_load_explicit(VERSION(wt), memory_order_acquire), v2;

		if (!out)
			return v1 / 2;		/* the last complete generation */
		if (v1 & 1) {
			spin_backoff(&spins);	/* a send is copying: a few words */
			continue;
		}
		words_load(out, (_Atomic uint64_t *)wt->value, wt->elem_size);
		/* Acquire fence, then relaxed: a copy that saw a newer word sees a newer version. */
		atomic_thread_fence(memory_order_acquire);
		v2 = atomic_load_explicit(VERSION(wt), memory_order_relaxed);
		if (v1 == v2)
			return v1 / 2;
	}
}

void blitz_watch_subscribe(struct blitz_watch *wt, struct blitz_watch_rx *rx)
{
	rx->wt = wt;
	rx->seen = blitz_watch_read(wt, NULL);
}

int blitz_watch_try_changed(struct blitz_watch_rx *rx, void *out)
{
	struct blitz_watch *wt = rx->wt;
	/* Acquire: if closed, the version below is final (see blitz_watch_close). */
	uint32_t closed = atomic_load_explicit(CLOSED(wt), memory_order_acquire);

	if (blitz_watch_read(wt, NULL) > rx->seen) {
		rx->seen = blitz_watch_read(wt, out);
		return 0;
	}
	return closed ? -EPIPE : -EAGAIN;
}

enum blitz_poll blitz_watch_changed_poll(struct blitz_watch_rx *rx, struct blitz_chan_waiter *w,
					 struct blitz_cx *cx, void *out, int *err)
{
	bool woken;
	int r;

	for (int attempt = 0; attempt < 2; attempt++) {
		r = blitz_watch_try_changed(rx, out);
		if (r != -EAGAIN) {
			cwl_finish(w);
			*err = r;
			return BLITZ_READY;
		}
		if (attempt || cwl_still_queued(w, &woken))
			return BLITZ_PENDING;
		cwl_register(&rx->wt->receivers, w, cx, SYNC_WATCH, rx->wt, false, true);
	}
	return BLITZ_PENDING;
}
