// SPDX-License-Identifier: MIT
/*
 * core/combinator/race.c - race: the first of several awaitables (or tasks) to
 * finish wins; the others are cancelled before the race returns.
 *
 * Awaitables are polled in order on every poll of the task, so when two
 * are ready at once the earlier one wins.  A loser's cancel runs exactly
 * once (done records it), and must take back its waiters
 * (blitz_chan_waiter_cancel and the like) so that nothing keeps a waker of
 * this task.  Losing tasks are cancelled with blitz_task_cancel() and their
 * handles released (which also takes back this task's join waker); their
 * drop functions run on a worker soon after.
 */
#include <blitz/channel.h>

enum { AW_PENDING = 0, AW_DONE = 1, AW_CANCELLED = 2 };

static void cancel_others(struct blitz_awaitable *a, size_t n, size_t keep)
{
	for (size_t i = 0; i < n; i++) {
		if (i == keep || a[i].done != AW_PENDING)
			continue;
		a[i].done = AW_CANCELLED;
		if (a[i].cancel)
			a[i].cancel(a[i].state);
	}
}

enum blitz_poll blitz_race_poll(struct blitz_awaitable *a, size_t n, struct blitz_cx *cx,
				size_t *winner)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i].done != AW_PENDING)
			continue;
		if (a[i].poll(a[i].state, cx) == BLITZ_READY) {
			a[i].done = AW_DONE;
			cancel_others(a, n, i);
			*winner = i;
			return BLITZ_READY;
		}
	}
	if (!n) {
		*winner = n;		/* nobody races: no winner (channel.h) */
		return BLITZ_READY;
	}
	return BLITZ_PENDING;
}

void blitz_race_cancel(struct blitz_awaitable *a, size_t n)
{
	cancel_others(a, n, n);
}

static void cancel_tasks(struct blitz_task **t, size_t n, size_t keep)
{
	for (size_t i = 0; i < n; i++) {
		if (i == keep || !t[i])
			continue;
		blitz_task_cancel(t[i]);
		blitz_task_release(t[i]);
		t[i] = NULL;
	}
}

enum blitz_poll blitz_race_tasks_poll(struct blitz_task **t, size_t n, struct blitz_cx *cx,
				      size_t *winner)
{
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		if (!t[i])
			continue;
		any = true;
		if (blitz_join_poll(t[i], cx) == BLITZ_READY) {
			cancel_tasks(t, n, i);
			*winner = i;
			return BLITZ_READY;
		}
	}
	if (!any) {
		*winner = n;		/* no task: no winner (channel.h) */
		return BLITZ_READY;
	}
	return BLITZ_PENDING;
}

void blitz_race_tasks_cancel(struct blitz_task **t, size_t n)
{
	cancel_tasks(t, n, n);
}
