// SPDX-License-Identifier: MIT
/*
 * core/combinator/select.c - the first ready receive among several branches
 * (channel, broadcast, watch, oneshot).
 *
 * A poll runs two passes:
 *  1. try every branch in order, queueing nothing: the common case when
 *     something is already there costs no lock;
 *  2. for each branch in order, queue its waiter (one per branch, in the
 *     branch itself, so nothing is allocated) and then try it again.
 * Queueing before the second try is the waiter handshake of waitlist.h, per
 * branch: a value that arrives after a branch's second try finds its waiter
 * and wakes the task.  A try consumes only when it succeeds, and the poll
 * stops at the first success, so a select receives at most one value; a
 * value on any other branch stays where it is.
 *
 * When a branch wins, every other branch's waiter is taken back with
 * cwl_cancel(): if a channel had already handed it a wake-one notification,
 * the notification passes to that channel's next waiter.
 *
 * Probes: one sync_wait(SYNC_SELECT, branches, task) when a poll queues
 * waiters, and a sync_wake(SYNC_SELECT, branches, task, wait_ns) from each
 * branch that fires.
 * A oneshot branch uses blitz_oneshot_recv_poll() (its waker lives in the
 * oneshot); it is not probed, and a losing one withdraws its waker with
 * blitz_oneshot_recv_cancel() (a value sent meanwhile stays in the oneshot).
 */
#include <errno.h>
#include "../chan/channel.h"
#include "../chan/waitlist.h"

static struct blitz_chan_waitlist *branch_list(struct blitz_select_branch *b)
{
	switch (b->kind) {
	case BLITZ_SELECT_CHANNEL:
		return &b->ch->receivers;
	case BLITZ_SELECT_BROADCAST:
		return &b->brx->bc->receivers;
	case BLITZ_SELECT_WATCH:
		return &b->wrx->wt->receivers;
	}
	return NULL;
}

/* Try one branch: 0, -EPIPE, -EOVERFLOW (done) or -EAGAIN. */
static int branch_try(struct blitz_select_branch *b, struct blitz_cx *cx)
{
	switch (b->kind) {
	case BLITZ_SELECT_CHANNEL:
		return blitz_channel_try_recv(b->ch, b->out);
	case BLITZ_SELECT_BROADCAST:
		return blitz_broadcast_try_recv(b->brx, b->out, &b->missed);
	case BLITZ_SELECT_WATCH:
		return blitz_watch_try_changed(b->wrx, b->out);
	case BLITZ_SELECT_ONESHOT: {
		/* Registers the task's waker in the oneshot when pending. */
		uint64_t v;
		int err;

		if (blitz_oneshot_recv_poll(b->os, cx, &v, &err) == BLITZ_PENDING)
			return -EAGAIN;
		if (!err && b->out)
			*(uint64_t *)b->out = v;
		return err;
	}
	}
	return -EINVAL;
}

static void branch_cancel(struct blitz_select_branch *b)
{
	if (b->kind == BLITZ_SELECT_ONESHOT)
		blitz_oneshot_recv_cancel(b->os);
	else
		cwl_cancel(&b->waiter);
}

static enum blitz_poll won(struct blitz_select_branch *br, size_t n, size_t i, int r,
			   size_t *index)
{
	for (size_t j = 0; j < n; j++)
		if (j != i)
			branch_cancel(&br[j]);
	if (br[i].kind != BLITZ_SELECT_ONESHOT)
		cwl_finish(&br[i].waiter);
	/* After the finish: our own node must not take the wake (channel.h). */
	if (br[i].kind == BLITZ_SELECT_CHANNEL && r == 0)
		chan_pass_on(br[i].ch, false);
	br[i].err = r;
	*index = i;
	return BLITZ_READY;
}

enum blitz_poll blitz_select_poll(struct blitz_select_branch *br, size_t n,
				  struct blitz_cx *cx, size_t *index)
{
	bool probe = true;
	int r;

	for (size_t i = 0; i < n; i++) {
		r = branch_try(&br[i], cx);
		if (r != -EAGAIN)
			return won(br, n, i, r, index);
	}
	for (size_t i = 0; i < n; i++) {
		struct blitz_select_branch *b = &br[i];
		bool woken;

		if (b->kind == BLITZ_SELECT_ONESHOT)
			continue;	/* pass 1 registered it */
		if (!cwl_still_queued(&b->waiter, &woken)) {
			cwl_register(branch_list(b), &b->waiter, cx, SYNC_SELECT, br,
				    woken, probe);
			probe = false;
			r = branch_try(b, cx);
			if (r != -EAGAIN)
				return won(br, n, i, r, index);
		}
	}
	if (!n) {
		*index = n;		/* no branch: nothing to wait for (channel.h) */
		return BLITZ_READY;
	}
	return BLITZ_PENDING;
}

void blitz_select_cancel(struct blitz_select_branch *br, size_t n)
{
	for (size_t i = 0; i < n; i++)
		branch_cancel(&br[i]);
}
