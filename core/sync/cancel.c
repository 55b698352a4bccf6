// SPDX-License-Identifier: MIT
/*
 * core/sync/cancel.c - CancelToken: cancel() wakes every waiter, then
 * cancels the token's children, recursively.
 *
 * A token's lock (its queue's) guards its waiter queue, its list of
 * children, and each child's pin count.  cancelled goes 0 -> 1 once, under
 * the lock (a child of a cancelled parent: before anyone knows it), so a
 * waiter that looks under the lock either sees it or is queued before it
 * and granted by the canceller; likewise a child being registered sees it
 * (and starts cancelled) or is on the list the canceller walks.
 *
 * Walking the children without holding the parent's lock while cancelling
 * one (which wakes, and wakes are never called under a lock): the parent
 * pins the child (pins++, under the parent's lock), unlocks, cancels it,
 * relocks, reads the next sibling and unpins.  A child being destroyed
 * meanwhile waits, under the parent's lock, until it is unpinned, so the
 * child and its sibling link stay valid.  No child is added to a cancelled
 * parent, so the walk ends.  Lock order: never two token locks at once.
 */
#include <sched.h>
#include "waitlist.h"

#define CANCELLED(t) ((_Atomic uint32_t *)&(t)->cancelled)

static void token_init(struct blitz_cancel_token *t)
{
	wq_init(&t->q, SYNC_CANCEL_TOKEN);
	atomic_init(CANCELLED(t), 0);
	t->pins = 0;
	t->parent = NULL;
	t->children = NULL;
	t->sib_prev = t->sib_next = NULL;
}

void blitz_cancel_token_init(struct blitz_cancel_token *t)
{
	token_init(t);
}

bool blitz_cancel_token_is_cancelled(const struct blitz_cancel_token *t)
{
	/*
	 * Acquire: pairs with the canceller's release store, so a task that
	 * sees the token cancelled sees what the canceller wrote before.
	 */
	return atomic_load_explicit(CANCELLED((struct blitz_cancel_token *)t),
				    memory_order_acquire) != 0;
}

uint32_t blitz_cancel_token_queued(const struct blitz_cancel_token *t)
{
	return wq_len(&t->q);
}

void blitz_cancel_token_init_child(struct blitz_cancel_token *t,
				   struct blitz_cancel_token *parent)
{
	token_init(t);
	wq_lock(&parent->q);
	/*
	 * Relaxed: cancelled is set under its token's lock, which we hold, or
	 * before anyone knew the token (init_child's early return).
	 */
	if (atomic_load_explicit(CANCELLED(parent), memory_order_relaxed)) {
		wq_unlock(&parent->q);
		/* Nobody else knows t yet: relaxed would do; as in cancel. */
		atomic_store_explicit(CANCELLED(t), 1, memory_order_release);
		return;
	}
	t->parent = parent;
	t->sib_prev = NULL;
	t->sib_next = parent->children;
	if (parent->children)
		parent->children->sib_prev = t;
	parent->children = t;
	wq_unlock(&parent->q);
}

void blitz_cancel_token_destroy(struct blitz_cancel_token *t)
{
	struct blitz_cancel_token *p = t->parent, *c;

	if (p) {
		wq_lock(&p->q);
		while (t->pins) {
			/* The parent is cancelling t right now: let it finish. */
			wq_unlock(&p->q);
			sched_yield();
			wq_lock(&p->q);
		}
		if (t->sib_prev)
			t->sib_prev->sib_next = t->sib_next;
		else
			p->children = t->sib_next;
		if (t->sib_next)
			t->sib_next->sib_prev = t->sib_prev;
		wq_unlock(&p->q);
		t->parent = NULL;
	}
	/* Children left: they become roots (their parent must outlive them). */
	wq_lock(&t->q);
	while ((c = t->children)) {
		t->children = c->sib_next;
		c->sib_prev = c->sib_next = NULL;
		c->parent = NULL;
	}
	wq_unlock(&t->q);
}

void blitz_cancel_token_cancel(struct blitz_cancel_token *t)
{
	struct blitz_cancel_token *c;
	struct wake_batch b;

	batch_init(&b, t);
	wq_lock(&t->q);
	/* Relaxed: as in init_child (set under this lock, or before t was known). */
	if (atomic_load_explicit(CANCELLED(t), memory_order_relaxed)) {
		wq_unlock(&t->q);
		return;		/* cancelled already (it did or does the rest) */
	}
	/* Release: pairs with is_cancelled()'s acquire. */
	atomic_store_explicit(CANCELLED(t), 1, memory_order_release);
	/* Nobody queues from now on: this empties the queue. */
	wq_grant_before(&t->q, t->q.seq, &b);
	wq_unlock(&t->q);
	batch_wake(&b);

	wq_lock(&t->q);
	c = t->children;
	while (c) {
		struct blitz_cancel_token *next;

		c->pins++;
		wq_unlock(&t->q);
		blitz_cancel_token_cancel(c);
		wq_lock(&t->q);
		next = c->sib_next;
		c->pins--;
		c = next;
	}
	wq_unlock(&t->q);
}

enum blitz_poll blitz_cancel_token_cancelled_poll(struct blitz_cancel_token *t,
						  struct blitz_waiter *w,
						  struct blitz_cx *cx)
{
	uint32_t st = waiter_state(w);
	struct blitz_waker old;
	uint64_t since;

	if (st == W_GRANTED) {
		waiter_set_state(w, W_IDLE);
		return BLITZ_READY;
	}
	if (st == W_WAITING) {
		wq_lock(&t->q);
		st = waiter_state(w);
		if (st == W_WAITING)
			wq_rearm(w, cx, &old);
		wq_unlock(&t->q);
		if (st == W_WAITING) {
			blitz_waker_drop(&old);
			return BLITZ_PENDING;
		}
		waiter_set_state(w, W_IDLE);
		return BLITZ_READY;
	}
	if (blitz_cancel_token_is_cancelled(t))
		return BLITZ_READY;
	since = wait_stamp();
	wq_lock(&t->q);
	if (blitz_cancel_token_is_cancelled(t)) {
		wq_unlock(&t->q);
		return BLITZ_READY;
	}
	w->want = w->asked = 0;
	wq_enqueue(&t->q, w, cx, since);
	wq_unlock(&t->q);
	wq_probe_wait(&t->q, t, w, cx);
	return BLITZ_PENDING;
}

void blitz_cancel_token_waiter_cancel(struct blitz_cancel_token *t, struct blitz_waiter *w)
{
	struct blitz_waker old = { 0 };

	if (waiter_state(w) == W_IDLE)
		return;
	wq_lock(&t->q);
	if (waiter_state(w) == W_WAITING) {
		old = w->waker;
		wq_remove(&t->q, w);
	}
	waiter_set_state(w, W_IDLE);
	wq_unlock(&t->q);
	blitz_waker_drop(&old);
}
