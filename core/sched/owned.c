// SPDX-License-Identifier: MIT
/* core/sched/owned.c - the list of live tasks (see owned.h). */
#include "owned.h"
#include "task.h"

void owned_init(struct blitz_owned *o)
{
	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		spin_init(&o->shard[i].lock);
		o->shard[i].head = NULL;
		atomic_init(&o->shard[i].done, NULL);
	}
	o->closed = false;
}

void owned_destroy(struct blitz_owned *o)
{
	(void)o;	/* spinlocks need no teardown */
}

/*
 * owned_insert - @t onto the shard its state names (task_alloc's, from
 * owned_shard_of its spawner); false once the runtime is shutting down
 * (closed).
 */
bool owned_insert(struct blitz_owned *o, struct blitz_task *t)
{
	struct owned_shard *s = &o->shard[task_owned_shard(t)];

	_Static_assert(OWNED_SHARDS - 1 <= TASK_SHARD_MASK >> TASK_SHARD_SHIFT,
		       "a shard fits the state's bits");
	spin_lock(&s->lock);
	if (o->closed) {
		spin_unlock(&s->lock);
		return false;
	}
	t->owned_prev = NULL;
	t->owned_next = s->head;
	if (s->head)
		s->head->owned_prev = t;
	s->head = t;
	spin_unlock(&s->lock);
	return true;
}

static void unlink_locked(struct owned_shard *s, struct blitz_task *t)
{
	if (t->owned_prev)
		t->owned_prev->owned_next = t->owned_next;
	else
		s->head = t->owned_next;
	if (t->owned_next)
		t->owned_next->owned_prev = t->owned_prev;
}

/*
 * owned_remove - @t is completing on @worker (-1: not a worker): unlink
 * it now if the completer is of the class that inserts into its shard
 * (@worker's own shard; a thread that is not a worker for the outside
 * one) and return false; else return true, and task_finish ends with
 * owned_defer.  A task owned_pop_any took (TASK_OWNED_OFF) is off the
 * list already: false.  Called right after the task's drop, before
 * COMPLETE, so a task unlinked at once is off the list before its joiner
 * wakes, as a completion has always been.
 */
bool owned_remove(struct blitz_owned *o, struct blitz_task *t, int worker)
{
	/* Relaxed: the shard is fixed at spawn; OWNED_OFF is set by this thread (shutdown). */
	uint64_t st = atomic_load_explicit(&t->state, memory_order_relaxed);
	uint64_t mine = (uint64_t)owned_shard_of(worker) << TASK_SHARD_SHIFT;
	struct owned_shard *s;

	if ((st & (TASK_SHARD_MASK | TASK_OWNED_OFF)) != mine)
		return !(st & TASK_OWNED_OFF);
	s = &o->shard[mine >> TASK_SHARD_SHIFT];
	spin_lock(&s->lock);
	unlink_locked(s, t);
	spin_unlock(&s->lock);
	return false;
}

/*
 * owned_defer - @t, which owned_remove left on its list, is COMPLETE:
 * hand it with the scheduler's reference to whoever unlinks it (owned.h): for a task of the outside shard, @local, the completing
 * worker's own list (owned_remove defers an outside task only on a
 * worker, so @local is set then); else its shard's done stack.  The last
 * thing task_finish does with @t.
 */
void owned_defer(struct blitz_owned *o, struct blitz_task *t, struct owned_local *local)
{
	unsigned shard = task_owned_shard(t);
	struct owned_shard *s = &o->shard[shard];
	struct blitz_task *head;

	/*
	 * t->next, the global queue's link, is free: a task that completes
	 * on a worker or a helping thread was taken off its queue to run (a
	 * task that blitz_runtime_free's loop finishes may still be linked in
	 * the forgotten global queue, but it is OWNED_OFF and never comes
	 * here).
	 */
	if (shard == OWNED_OUTSIDE) {
		t->next = local->done;
		local->done = t;
		return;
	}
	/*
	 * Release: our writes to @t (COMPLETE, its link) before the drain's
	 * acquire exchange; relaxed on failure: we only retry with the head
	 * it read.
	 */
	head = atomic_load_explicit(&s->done, memory_order_relaxed);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak_explicit(&s->done, &head, t, memory_order_release,
						      memory_order_relaxed));
}

/* unlink_list - take every task of @list off @s's list, under its lock. */
static void unlink_list(struct owned_shard *s, struct blitz_task *list)
{
	spin_lock(&s->lock);
	for (struct blitz_task *t = list; t; t = t->next)
		unlink_locked(s, t);
	spin_unlock(&s->lock);
}

/* drop_list - the scheduler's references of @list, now off its shard (a drop frees the block). */
static void drop_list(struct blitz_task *list)
{
	while (list) {
		struct blitz_task *t = list;

		list = t->next;
		task_ref_dec(t);
	}
}

/*
 * owned_drain_shard - unlink every task of @s's done stack, then drop
 * their references (outside the lock).  Acquire: pairs with the pushers'
 * release, so their links and writes are seen.  Any thread may drain:
 * the exchange takes the stack whole.
 */
void owned_drain_shard(struct owned_shard *s)
{
	struct blitz_task *list = atomic_exchange_explicit(&s->done, NULL, memory_order_acquire);

	if (!list)
		return;
	unlink_list(s, list);
	drop_list(list);
}

/*
 * owned_drain_local - unlink the outside-shard tasks of @local (a
 * worker's, on that worker's thread), then drop their references: one
 * turn of the outside shard's lock for all of them.
 */
void owned_drain_local(struct blitz_owned *o, struct owned_local *local)
{
	struct blitz_task *list = local->done;

	local->done = NULL;
	if (!list)
		return;
	unlink_list(&o->shard[OWNED_OUTSIDE], list);
	drop_list(list);
}

/*
 * task_live - @t, on a list, has not completed.  Acquire: a task whose
 * COMPLETE we see has dropped its state (task_finish's CAS is acq_rel).
 */
static bool task_live(const struct blitz_task *t)
{
	return task_lifecycle(atomic_load_explicit(&((struct blitz_task *)t)->state,
						   memory_order_acquire)) != TASK_COMPLETE;
}

/*
 * owned_count - live tasks now (a snapshot: each shard counted under its
 * lock).  A completed task still on a list, waiting for a drain or for
 * its completer's unlink, does not count.
 */
size_t owned_count(struct blitz_owned *o)
{
	size_t n = 0;

	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		spin_lock(&o->shard[i].lock);
		for (struct blitz_task *t = o->shard[i].head; t; t = t->owned_next)
			n += task_live(t);
		spin_unlock(&o->shard[i].lock);
	}
	return n;
}

/* owned_empty - no live task now (a snapshot, as owned_count). */
bool owned_empty(struct blitz_owned *o)
{
	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		bool empty = true;

		spin_lock(&o->shard[i].lock);
		for (struct blitz_task *t = o->shard[i].head; t && empty; t = t->owned_next)
			empty = !task_live(t);
		spin_unlock(&o->shard[i].lock);
		if (!empty)
			return false;
	}
	return true;
}

/* owned_close - refuse new tasks from now on. */
void owned_close(struct blitz_owned *o)
{
	for (unsigned i = 0; i < OWNED_SHARDS; i++)
		spin_lock(&o->shard[i].lock);
	o->closed = true;
	for (unsigned i = OWNED_SHARDS; i-- > 0;)
		spin_unlock(&o->shard[i].lock);
}

/*
 * owned_pop_any - unlink and return some live task, or NULL if none is
 * left.  For blitz_runtime_free, once no other thread runs tasks: the
 * done stacks are drained first (each worker drained its own list as it
 * exited), so every task left on a list is live;
 * the one returned is marked TASK_OWNED_OFF, and its task_finish's
 * owned_remove leaves the list alone.
 */
struct blitz_task *owned_pop_any(struct blitz_owned *o)
{
	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		struct owned_shard *s = &o->shard[i];
		struct blitz_task *t;

		owned_drain_shard(s);
		spin_lock(&s->lock);
		t = s->head;
		if (t) {
			unlink_locked(s, t);
			/* Relaxed: read by this thread's task_finish of @t. */
			atomic_fetch_or_explicit(&t->state, TASK_OWNED_OFF, memory_order_relaxed);
		}
		spin_unlock(&s->lock);
		if (t)
			return t;
	}
	return NULL;
}
