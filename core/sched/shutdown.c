// SPDX-License-Identifier: MIT
/*
 * core/sched/shutdown.c - graceful shutdown: the runtime's shutdown token, and a
 * drain that cancels it and waits, up to a deadline, for the live-task list
 * (core/sched/owned.c) to empty.
 */
#include <errno.h>
#include <time.h>
#include <blitz/shutdown.h>
#include "../clock.h"
#include "runtime.h"
#include "worker.h"

struct blitz_cancel_token *blitz_runtime_shutdown_token(struct blitz_runtime *rt)
{
	rt = runtime_or_current(rt);
	return rt ? &rt->shutdown_token : NULL;
}

size_t blitz_runtime_live_tasks(struct blitz_runtime *rt)
{
	rt = runtime_or_current(rt);
	return rt ? owned_count(&rt->owned) : 0;
}

int blitz_runtime_drain(struct blitz_runtime *rt, uint64_t timeout_ns)
{
	uint64_t now = clock_now_ns();
	uint64_t deadline = clock_after(now, timeout_ns);
	long nap_ns = 100000;

	if (!rt)
		return -EINVAL;
	if (current_worker)
		return -EDEADLK;	/* the tasks we wait for may need this worker */
	blitz_cancel_token_cancel(&rt->shutdown_token);
	/*
	 * Poll the list: a drain happens once, and a waker on every task's
	 * completion would cost every task.  Naps grow from 0.1 to 5 ms.
	 */
	while (!owned_empty(&rt->owned)) {
		struct timespec ts = { 0, nap_ns };

		now = clock_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if ((uint64_t)nap_ns > deadline - now)
			ts.tv_nsec = (long)(deadline - now);
		nanosleep(&ts, NULL);
		if (nap_ns < 5000000)
			nap_ns *= 2;
	}
	return 0;
}

int blitz_runtime_shutdown(struct blitz_runtime *rt, uint64_t timeout_ns)
{
	int ret = blitz_runtime_drain(rt, timeout_ns);

	if (ret != -EDEADLK && ret != -EINVAL)
		blitz_runtime_free(rt);
	return ret;
}
