// SPDX-License-Identifier: MIT
/* core/sched/owned.c - the list of live tasks (see owned.h). */
#include "owned.h"
#include "task.h"

void owned_init(struct blitz_owned *o)
{
	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		spin_init(&o->shard[i].lock);
		o->shard[i].head = NULL;
	}
	o->closed = false;
}

void owned_destroy(struct blitz_owned *o)
{
	(void)o;	/* spinlocks need no teardown */
}

/* owned_insert - false once the runtime is shutting down (closed). */
bool owned_insert(struct blitz_owned *o, struct blitz_task *t, unsigned hint)
{
	struct owned_shard *s = &o->shard[hint % OWNED_SHARDS];

	t->owned_shard = hint % OWNED_SHARDS;
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
	t->owned_prev = t->owned_next = t;	/* self-linked: off the list */
}

void owned_remove(struct blitz_owned *o, struct blitz_task *t)
{
	struct owned_shard *s = &o->shard[t->owned_shard];

	spin_lock(&s->lock);
	if (t->owned_next != t)		/* shutdown may have taken it already */
		unlink_locked(s, t);
	spin_unlock(&s->lock);
}

/* owned_count - live tasks now (a snapshot: each shard counted under its lock). */
size_t owned_count(struct blitz_owned *o)
{
	size_t n = 0;

	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		spin_lock(&o->shard[i].lock);
		for (struct blitz_task *t = o->shard[i].head; t; t = t->owned_next)
			n++;
		spin_unlock(&o->shard[i].lock);
	}
	return n;
}

/* owned_empty - no live task now (a snapshot). */
bool owned_empty(struct blitz_owned *o)
{
	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		bool empty;

		spin_lock(&o->shard[i].lock);
		empty = !o->shard[i].head;
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

/* owned_pop_any - unlink and return some live task, or NULL if none is left. */
struct blitz_task *owned_pop_any(struct blitz_owned *o)
{
	for (unsigned i = 0; i < OWNED_SHARDS; i++) {
		struct owned_shard *s = &o->shard[i];
		struct blitz_task *t;

		spin_lock(&s->lock);
		t = s->head;
		if (t)
			unlink_locked(s, t);
		spin_unlock(&s->lock);
		if (t)
			return t;
	}
	return NULL;
}
