// SPDX-License-Identifier: MIT
/*
 * core/sync/oncecell.c - OnceCell (docs/sync.md): lazy one-time initialization.
 *
 *   UNINITIALIZED --CAS--> INITIALIZING --store--> INITIALIZED
 *         ^                     |
 *         +-- the initializer --+   (its task was cancelled mid-init)
 *
 * The task that wins the CAS marks its waiter W_INIT and polls the
 * initializer (an awaitable poll function) on each of its own polls until
 * it is ready; everyone else queues.  Publishing is: store the value, store
 * INITIALIZED (release), then take the lock and grant every queued waiter.
 * A caller queues only after seeing INITIALIZING under the lock, so either
 * its look comes after the publisher's store (the lock orders them: the
 * publisher locks after storing) or the publisher's grant finds it queued.
 * The same holds for the takeover (store UNINITIALIZED, then wake all): a
 * woken waiter retries the CAS; one wins and initializes, the others queue
 * again.  Waking all rather than one means a takeover never depends on the
 * one woken task still being alive.
 */
#include <errno.h>
#include "waitlist.h"

#define CSTATE(c) ((_Atomic uint32_t *)&(c)->state)

void blitz_oncecell_init(struct blitz_oncecell *c)
{
	wq_init(&c->q, SYNC_ONCECELL);
	atomic_init(CSTATE(c), BLITZ_ONCECELL_UNINITIALIZED);
	c->value = NULL;
}

enum blitz_oncecell_state blitz_oncecell_state(const struct blitz_oncecell *c)
{
	/* Relaxed: a snapshot; blitz_oncecell_get() (sync.h) is the reader's acquire. */
	return atomic_load_explicit(CSTATE((struct blitz_oncecell *)c), memory_order_relaxed);
}

uint32_t blitz_oncecell_queued(const struct blitz_oncecell *c)
{
	return wq_len(&c->q);
}

/* wake_all - take the lock and grant every waiter queued now. */
static void wake_all(struct blitz_oncecell *c)
{
	struct wake_batch b;

	batch_init(&b, c);
	wq_lock(&c->q);
	wq_grant_before(&c->q, c->q.seq, &b);
	wq_unlock(&c->q);
	batch_wake(&b);
}

/* publish - the initializer (the CAS winner) sets the value. */
static void publish(struct blitz_oncecell *c, void *value)
{
	c->value = value;
	/* Release: the value (and what it points to) before INITIALIZED. */
	atomic_store_explicit(CSTATE(c), BLITZ_ONCECELL_INITIALIZED, memory_order_release);
	wake_all(c);
}

/* claim - UNINITIALIZED -> INITIALIZING; true if we won. */
static bool claim(struct blitz_oncecell *c)
{
	uint32_t s = BLITZ_ONCECELL_UNINITIALIZED;

	/*
	 * Relaxed would do for the claim itself (the winner only writes);
	 * acquire keeps a takeover ordered after the cancelled initializer's
	 * reset, which is release.
	 */
	return atomic_compare_exchange_strong_explicit(CSTATE(c), &s,
						       BLITZ_ONCECELL_INITIALIZING,
						       memory_order_acquire,
						       memory_order_relaxed);
}

int blitz_oncecell_try_set(struct blitz_oncecell *c, void *value)
{
	if (!claim(c))
		return blitz_oncecell_state(c) == BLITZ_ONCECELL_INITIALIZED ? -EEXIST : -EBUSY;
	publish(c, value);
	return 0;
}

enum blitz_poll blitz_oncecell_get_or_init_poll(struct blitz_oncecell *c,
						struct blitz_waiter *w,
						struct blitz_cx *cx,
						blitz_once_init_fn init, void *arg,
						void **out)
{
	for (;;) {
		uint32_t st = waiter_state(w);
		struct blitz_waker old;
		uint64_t since;
		void *v;

		if (st == W_INIT) {
			if (init(arg, cx, &v) != BLITZ_READY)
				return BLITZ_PENDING;
			waiter_set_state(w, W_IDLE);
			publish(c, v);
			*out = v;
			return BLITZ_READY;
		}
		if (st == W_GRANTED) {
			/* Woken: initialized, or a takeover; look again. */
			waiter_set_state(w, W_IDLE);
			continue;
		}
		if (st == W_WAITING) {
			wq_lock(&c->q);
			st = waiter_state(w);
			if (st == W_WAITING)
				wq_rearm(w, cx, &old);
			wq_unlock(&c->q);
			if (st != W_WAITING)
				continue;
			blitz_waker_drop(&old);
			return BLITZ_PENDING;
		}
		if (blitz_oncecell_get(c, out))
			return BLITZ_READY;
		if (claim(c)) {
			/* Owner-only until published. */
			waiter_set_state(w, W_INIT);
			continue;
		}
		since = wait_stamp();
		wq_lock(&c->q);
		/* Under the lock (see the top): acquire, for the value. */
		if (atomic_load_explicit(CSTATE(c), memory_order_acquire) !=
		    BLITZ_ONCECELL_INITIALIZING) {
			wq_unlock(&c->q);
			continue;
		}
		w->want = w->asked = 0;
		wq_enqueue(&c->q, w, cx, since);
		wq_unlock(&c->q);
		wq_probe_wait(&c->q, c, w, cx);
		return BLITZ_PENDING;
	}
}

void blitz_oncecell_waiter_cancel(struct blitz_oncecell *c, struct blitz_waiter *w)
{
	struct blitz_waker old = { 0 };
	uint32_t st = waiter_state(w);

	if (st == W_IDLE)
		return;
	if (st == W_INIT) {
		/* The initializer gave up: back to UNINITIALIZED, someone takes over. */
		waiter_set_state(w, W_IDLE);
		/* Release: orders the reset before the takeover's claim (acquire). */
		atomic_store_explicit(CSTATE(c), BLITZ_ONCECELL_UNINITIALIZED,
				      memory_order_release);
		wake_all(c);
		return;
	}
	wq_lock(&c->q);
	if (waiter_state(w) == W_WAITING) {
		old = w->waker;
		wq_remove(&c->q, w);
	}
	/* Granted: a wake-all; the others were woken too, nothing to pass on. */
	waiter_set_state(w, W_IDLE);
	wq_unlock(&c->q);
	blitz_waker_drop(&old);
}
