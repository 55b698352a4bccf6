// SPDX-License-Identifier: MIT
/*
 * core/combinator/join.c - join: await every one of several awaitables (poll
 * callbacks over sub-states) or tasks (join handles).
 *
 * Each sub-awaitable registers its own wakers with the task's cx; whichever
 * fires, the whole task is polled and join polls every unfinished one again
 * (so each must tolerate a poll when nothing changed for it).  A finished
 * one is never polled again.  Nothing here is shared between threads: the
 * array lives in the polling task's state.
 */
#include <blitz/channel.h>

enum { AW_PENDING = 0, AW_DONE = 1, AW_CANCELLED = 2 };

enum blitz_poll blitz_join_all_poll(struct blitz_awaitable *a, size_t n, struct blitz_cx *cx)
{
	enum blitz_poll all = BLITZ_READY;

	for (size_t i = 0; i < n; i++) {
		if (a[i].done != AW_PENDING)
			continue;
		if (a[i].poll(a[i].state, cx) == BLITZ_READY)
			a[i].done = AW_DONE;
		else
			all = BLITZ_PENDING;
	}
	return all;
}

void blitz_join_all_cancel(struct blitz_awaitable *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].done != AW_PENDING)
			continue;
		a[i].done = AW_CANCELLED;
		if (a[i].cancel)
			a[i].cancel(a[i].state);
	}
}

enum blitz_poll blitz_join_tasks_poll(struct blitz_task *const *t, size_t n, struct blitz_cx *cx)
{
	enum blitz_poll all = BLITZ_READY;

	/*
	 * blitz_join_poll registers the task's join waker on each unfinished
	 * task (once: it recognises its own waker on later polls).
	 */
	for (size_t i = 0; i < n; i++)
		if (t[i] && blitz_join_poll(t[i], cx) != BLITZ_READY)
			all = BLITZ_PENDING;
	return all;
}
