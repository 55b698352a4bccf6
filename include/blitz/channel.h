/* SPDX-License-Identifier: MIT */
/*
 * blitz/channel.h - async channels and combinators (docs/channels.md): a
 * bounded MPMC channel on a Vyukov ring, a broadcast channel
 * with lagging receivers, a watch (latest value + generation), select over
 * several receives, and join/race over several awaitables.
 *
 * Every wait is async: a task that cannot proceed queues a waiter node and
 * returns BLITZ_PENDING; it is woken when it may proceed.  Nothing is
 * allocated per wait: the node (struct blitz_chan_waiter) lives in the
 * waiting task's state, zero-initialised, and belongs to that task.  A task
 * that may be cancelled while it waits calls blitz_chan_waiter_cancel() on
 * each of its nodes from its drop function.  Every operation also has a
 * non-blocking try_ form usable from any thread.
 *
 * Results: 0; -EAGAIN (would wait); -EPIPE (closed, and for receivers
 * nothing is left); -EOVERFLOW (broadcast: the receiver was lapped, *missed
 * says by how many messages); -EINVAL, -ENOMEM (init).
 *
 * The structs are public so that they can be embedded without allocation;
 * their fields are private (atomics are accessed through casts in core/chan/).
 * docs/channels.md describes the protocols and guarantees.
 */
#ifndef BLITZ_CHANNEL_H
#define BLITZ_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <blitz/oneshot.h>
#include <blitz/task.h>

/* ---------------------------------------------------------------------- */
/* Waiter nodes                                                           */

struct blitz_chan_waitlist;

/* A waiter's state (the state field; read it only for diagnostics). */
enum blitz_chan_waiter_state {
	BLITZ_WAITER_IDLE = 0,		/* on no list */
	BLITZ_WAITER_QUEUED = 1,	/* on a list, holding its task's waker */
	BLITZ_WAITER_WOKEN = 2,		/* taken off the list by a notification */
};

/*
 * struct blitz_chan_waiter - one wait, embedded in the waiting task's state.
 * Zero-initialised ({0}) is a valid idle node.  64 bytes.
 */
struct blitz_chan_waiter {
	struct blitz_chan_waiter *next, *prev;	/* under the list's lock */
	struct blitz_chan_waitlist *list;	/* the list it was last queued on */
	const void *prim;			/* what it waits on (probes) */
	struct blitz_waker waker;		/* while QUEUED */
	uint64_t since_ns;			/* when queued, if traced; else 0 */
	uint32_t state;				/* enum blitz_chan_waiter_state; atomic */
	uint32_t kind;				/* probe kind (docs/channels.md) */
};

/* An intrusive FIFO of waiters behind a small lock (core/chan/waitlist.c). */
struct blitz_chan_waitlist {
	struct blitz_chan_waiter *head, *tail;
	uint32_t lock;				/* atomic */
	uint32_t len;				/* atomic: queued waiters */
	uint32_t wake_all;			/* every notification wakes everyone */
	uint32_t reserved;
	uint64_t waits, wakes, cancels;		/* statistics, under the lock */
};

/* Statistics of one waiter list: every wait ends in exactly one wake or cancel. */
struct blitz_chan_stats {
	uint64_t waits;		/* waiters queued */
	uint64_t wakes;		/* taken off by a notification (send, recv, close) */
	uint64_t cancels;	/* taken back by their task (done, or cancelled) */
	uint32_t queued;	/* on the list now */
};

/**
 * blitz_chan_waiter_init - make @w an idle node (same as zero-initialising it).
 * @w: the node.
 */
void blitz_chan_waiter_init(struct blitz_chan_waiter *w);

/**
 * blitz_chan_waiter_cancel - the waiting task gives up its wait.
 * @w: a node of the calling task's state (idle, queued or woken).
 *
 * Takes @w off its list and drops its waker.  If @w had already been woken
 * by a notification meant for one waiter (a channel send or receive), the
 * notification is passed on to the next waiter, so that nothing is left
 * unclaimed in the channel.  Call it from the task's drop function for every
 * node it may have queued (a no-op on an idle node).  The primitive must
 * still exist.
 */
void blitz_chan_waiter_cancel(struct blitz_chan_waiter *w);

/**
 * blitz_chan_waitlist_stats - read the statistics of a waiter list.
 * @wl: e.g. &ch->receivers, &ch->senders, &bc->receivers, &wt->receivers.
 * @st: filled in.
 */
void blitz_chan_waitlist_stats(struct blitz_chan_waitlist *wl, struct blitz_chan_stats *st);

/* ---------------------------------------------------------------------- */
/* Channel: bounded MPMC                                                  */

/*
 * Producers and consumers work on separate cache lines; the padding keeps
 * them apart whatever the struct's alignment.
 */
struct blitz_channel {
	uint64_t tail;			/* next send position | CLOSED bit; atomic */
	char pad0[120];
	uint64_t head;			/* next receive position; atomic */
	char pad1[120];
	unsigned char *slots;		/* capacity slots of stride bytes */
	uint64_t mask;			/* capacity - 1 */
	uint32_t elem_size;
	uint32_t stride;		/* 8 (sequence) + elem_size rounded up to 8 */
	uint32_t owns_slots;
	uint32_t reserved;
	struct blitz_chan_waitlist senders;	/* waiting while full */
	struct blitz_chan_waitlist receivers;	/* waiting while empty */
};

/**
 * blitz_channel_storage_size - bytes of storage a channel needs.
 * @capacity: slots (a power of two).
 * @elem_size: bytes per value.
 *
 * Return: the size to pass to blitz_channel_init_storage() (8-byte aligned
 * storage), or 0 if it would overflow.
 */
size_t blitz_channel_storage_size(size_t capacity, size_t elem_size);

/**
 * blitz_channel_init - create a channel of @capacity values of @elem_size bytes.
 * @ch: the channel.
 * @capacity: a power of two, 1 to 2^31.
 * @elem_size: bytes per value, 1 to 2^20.
 *
 * The ring is allocated here, once.
 * Return: 0, -EINVAL (bad capacity or size) or -ENOMEM.
 */
int blitz_channel_init(struct blitz_channel *ch, size_t capacity, size_t elem_size);

/**
 * blitz_channel_init_storage - create a channel in storage the caller provides.
 * @ch: the channel.
 * @storage: blitz_channel_storage_size(@capacity, @elem_size) bytes, 8-byte
 *           aligned, that outlive the channel.
 * @capacity: a power of two, 1 to 2^31.
 * @elem_size: bytes per value, 1 to 2^20.
 *
 * Return: 0 or -EINVAL.
 */
int blitz_channel_init_storage(struct blitz_channel *ch, void *storage,
			       size_t capacity, size_t elem_size);

/**
 * blitz_channel_destroy - free the ring (if blitz_channel_init() allocated it).
 * @ch: the channel; no task may still wait on it.
 *
 * Values still in the channel are discarded.
 */
void blitz_channel_destroy(struct blitz_channel *ch);

/**
 * blitz_channel_try_send - send without waiting, from any thread.
 * @ch: the channel.
 * @elem: elem_size bytes, copied in.
 *
 * Lock-free.  Wakes one waiting receiver.
 * Return: 0, -EAGAIN (full) or -EPIPE (closed).
 */
int blitz_channel_try_send(struct blitz_channel *ch, const void *elem);

/**
 * blitz_channel_try_recv - receive without waiting, from any thread.
 * @ch: the channel.
 * @elem: elem_size bytes, copied out.
 *
 * Lock-free.  Wakes one waiting sender.
 * Return: 0, -EAGAIN (empty, or a sender is still writing the next value)
 * or -EPIPE (closed and empty).
 */
int blitz_channel_try_recv(struct blitz_channel *ch, void *elem);

/**
 * blitz_channel_send_poll - send from a task, waiting while the channel is full.
 * @ch: the channel.
 * @w: the waiter node, in the task's state.
 * @cx: the poll context.
 * @elem: elem_size bytes, copied in when the send happens.
 * @err: when ready: 0 (sent) or -EPIPE (closed; not sent).
 *
 * Return: BLITZ_READY, or BLITZ_PENDING with @w queued (the task is woken
 * when a slot frees or the channel closes; poll again with the same @w).
 */
enum blitz_poll blitz_channel_send_poll(struct blitz_channel *ch, struct blitz_chan_waiter *w,
					struct blitz_cx *cx, const void *elem, int *err);

/**
 * blitz_channel_recv_poll - receive from a task, waiting while the channel is empty.
 * @ch: the channel.
 * @w: the waiter node, in the task's state.
 * @cx: the poll context.
 * @elem: elem_size bytes, copied out.
 * @err: when ready: 0 (received) or -EPIPE (closed and drained).
 *
 * Return: BLITZ_READY, or BLITZ_PENDING with @w queued.
 */
enum blitz_poll blitz_channel_recv_poll(struct blitz_channel *ch, struct blitz_chan_waiter *w,
					struct blitz_cx *cx, void *elem, int *err);

/**
 * blitz_channel_close - close the channel, from any thread (idempotent).
 * @ch: the channel.
 *
 * Senders see -EPIPE at once; receivers receive what is left, then -EPIPE.
 * Every waiting sender and receiver is woken.
 */
void blitz_channel_close(struct blitz_channel *ch);

/**
 * blitz_channel_is_closed - has blitz_channel_close() been called?
 * @ch: the channel.
 */
bool blitz_channel_is_closed(const struct blitz_channel *ch);

/**
 * blitz_channel_len - values in the channel (a snapshot; racy by nature).
 * @ch: the channel.
 */
size_t blitz_channel_len(const struct blitz_channel *ch);

/**
 * blitz_channel_capacity - the capacity fixed at init.
 * @ch: the channel.
 */
size_t blitz_channel_capacity(const struct blitz_channel *ch);

/* ---------------------------------------------------------------------- */
/* Broadcast: every receiver gets every message                          */

struct blitz_broadcast {
	uint64_t tail;			/* next position to write; atomic */
	unsigned char *slots;		/* capacity slots: seqlock word + value words */
	uint64_t mask;
	uint32_t elem_size;
	uint32_t stride;
	uint32_t send_lock;		/* atomic: serialises senders only */
	uint32_t closed;		/* atomic */
	uint32_t nreceivers;		/* atomic */
	uint32_t owns_slots;
	struct blitz_chan_waitlist receivers;
};

/* A subscription: the next position it reads. */
struct blitz_broadcast_rx {
	struct blitz_broadcast *bc;
	uint64_t pos;
};

/**
 * blitz_broadcast_storage_size - bytes of storage a broadcast channel needs.
 * @capacity: retained messages (a power of two).
 * @elem_size: bytes per message.
 *
 * Return: the size for blitz_broadcast_init_storage(), or 0 on overflow.
 */
size_t blitz_broadcast_storage_size(size_t capacity, size_t elem_size);

/**
 * blitz_broadcast_init - create a broadcast channel retaining @capacity messages.
 * @bc: the channel.
 * @capacity: a power of two, 1 to 2^31.
 * @elem_size: bytes per message, 1 to 2^20.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int blitz_broadcast_init(struct blitz_broadcast *bc, size_t capacity, size_t elem_size);

/**
 * blitz_broadcast_init_storage - blitz_broadcast_init() in caller storage.
 * @bc: the channel.
 * @storage: blitz_broadcast_storage_size() bytes, 8-byte aligned.
 * @capacity: a power of two, 1 to 2^31.
 * @elem_size: bytes per message, 1 to 2^20.
 *
 * Return: 0 or -EINVAL.
 */
int blitz_broadcast_init_storage(struct blitz_broadcast *bc, void *storage,
				 size_t capacity, size_t elem_size);

/**
 * blitz_broadcast_destroy - free the ring; no task may still wait on it.
 * @bc: the channel.
 */
void blitz_broadcast_destroy(struct blitz_broadcast *bc);

/**
 * blitz_broadcast_send - publish a message to every receiver, from any thread.
 * @bc: the channel.
 * @elem: elem_size bytes, copied in.
 *
 * Never waits: when the ring is full the oldest message is overwritten and
 * receivers that had not read it are told they lagged.  Wakes every
 * waiting receiver.
 * Return: 0 or -EPIPE (closed).
 */
int blitz_broadcast_send(struct blitz_broadcast *bc, const void *elem);

/**
 * blitz_broadcast_close - close, from any thread; receivers drain, then see -EPIPE.
 * @bc: the channel.
 */
void blitz_broadcast_close(struct blitz_broadcast *bc);

/**
 * blitz_broadcast_subscribe - start receiving every message sent from now on.
 * @bc: the channel.
 * @rx: the subscription (usually in the receiving task's state).
 */
void blitz_broadcast_subscribe(struct blitz_broadcast *bc, struct blitz_broadcast_rx *rx);

/**
 * blitz_broadcast_unsubscribe - end a subscription.
 * @rx: the subscription; the task's waiter nodes on it must be idle or
 *      cancelled first.
 */
void blitz_broadcast_unsubscribe(struct blitz_broadcast_rx *rx);

/**
 * blitz_broadcast_receivers - the number of subscriptions.
 * @bc: the channel.
 */
unsigned blitz_broadcast_receivers(const struct blitz_broadcast *bc);

/**
 * blitz_broadcast_try_recv - the next message for @rx, without waiting.
 * @rx: the subscription (one reader at a time).
 * @elem: elem_size bytes, copied out.
 * @missed: set on -EOVERFLOW: messages skipped.
 *
 * Return: 0; -EAGAIN (nothing new); -EPIPE (closed and read to the end);
 * -EOVERFLOW: @rx was lapped, it now points at the oldest retained message
 * and the next call returns it.
 */
int blitz_broadcast_try_recv(struct blitz_broadcast_rx *rx, void *elem, uint64_t *missed);

/**
 * blitz_broadcast_recv_poll - the next message for @rx, waiting while there is none.
 * @rx: the subscription.
 * @w: the waiter node, in the task's state.
 * @cx: the poll context.
 * @elem: elem_size bytes, copied out.
 * @missed: set when @err is -EOVERFLOW.
 * @err: when ready: 0, -EOVERFLOW or -EPIPE (see blitz_broadcast_try_recv()).
 *
 * Return: BLITZ_READY, or BLITZ_PENDING with @w queued.
 */
enum blitz_poll blitz_broadcast_recv_poll(struct blitz_broadcast_rx *rx,
					  struct blitz_chan_waiter *w, struct blitz_cx *cx,
					  void *elem, uint64_t *missed, int *err);

/* ---------------------------------------------------------------------- */
/* Watch: the latest value and its generation                             */

struct blitz_watch {
	uint64_t version;		/* seqlock: odd while a send writes; generation = version / 2 */
	uint64_t *value;		/* elem_size bytes, as 64-bit words */
	uint32_t elem_size;
	uint32_t closed;		/* atomic */
	uint32_t owns_value;
	uint32_t reserved;
	struct blitz_chan_waitlist receivers;
};

/* A receiver: the generation it has seen. */
struct blitz_watch_rx {
	struct blitz_watch *wt;
	uint64_t seen;
};

/**
 * blitz_watch_storage_size - bytes of storage a watch of @elem_size needs.
 * @elem_size: bytes of the value.
 */
size_t blitz_watch_storage_size(size_t elem_size);

/**
 * blitz_watch_init - create a watch holding @initial (generation 0).
 * @wt: the watch.
 * @elem_size: bytes of the value, 1 to 2^20.
 * @initial: elem_size bytes, or NULL for zeroes.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int blitz_watch_init(struct blitz_watch *wt, size_t elem_size, const void *initial);

/**
 * blitz_watch_init_storage - blitz_watch_init() in caller storage.
 * @wt: the watch.
 * @storage: blitz_watch_storage_size() bytes, 8-byte aligned.
 * @elem_size: bytes of the value, 1 to 2^20.
 * @initial: elem_size bytes, or NULL for zeroes.
 *
 * Return: 0 or -EINVAL.
 */
int blitz_watch_init_storage(struct blitz_watch *wt, void *storage, size_t elem_size,
			     const void *initial);

/**
 * blitz_watch_destroy - free the value; no task may still wait on it.
 * @wt: the watch.
 */
void blitz_watch_destroy(struct blitz_watch *wt);

/**
 * blitz_watch_send - replace the value (generation + 1), from any thread.
 * @wt: the watch.
 * @value: elem_size bytes, copied in.
 *
 * Wakes every waiting receiver.  Concurrent senders are serialised.
 * Return: 0 or -EPIPE (closed).
 */
int blitz_watch_send(struct blitz_watch *wt, const void *value);

/**
 * blitz_watch_close - close, from any thread: receivers that have seen the
 * last value get -EPIPE from changed.
 * @wt: the watch.
 */
void blitz_watch_close(struct blitz_watch *wt);

/**
 * blitz_watch_read - copy the latest value, from any thread.
 * @wt: the watch.
 * @out: elem_size bytes, or NULL to read only the generation.
 *
 * Lock-free for readers (a seqlock: retried if a send overlapped the copy).
 * Return: the value's generation.
 */
uint64_t blitz_watch_read(const struct blitz_watch *wt, void *out);

/**
 * blitz_watch_subscribe - a receiver that has seen the current value.
 * @wt: the watch.
 * @rx: the receiver.
 */
void blitz_watch_subscribe(struct blitz_watch *wt, struct blitz_watch_rx *rx);

/**
 * blitz_watch_try_changed - a value newer than @rx has seen, without waiting.
 * @rx: the receiver.
 * @out: elem_size bytes for the newest value, or NULL.
 *
 * On success @rx has seen the value copied out (rx->seen is its generation).
 * Return: 0, -EAGAIN (nothing newer) or -EPIPE (closed, nothing newer).
 */
int blitz_watch_try_changed(struct blitz_watch_rx *rx, void *out);

/**
 * blitz_watch_changed_poll - wait for a value newer than @rx has seen.
 * @rx: the receiver.
 * @w: the waiter node, in the task's state.
 * @cx: the poll context.
 * @out: elem_size bytes for the newest value, or NULL.
 * @err: when ready: 0 or -EPIPE (see blitz_watch_try_changed()).
 *
 * Return: BLITZ_READY, or BLITZ_PENDING with @w queued.
 */
enum blitz_poll blitz_watch_changed_poll(struct blitz_watch_rx *rx, struct blitz_chan_waiter *w,
					 struct blitz_cx *cx, void *out, int *err);

/* ---------------------------------------------------------------------- */
/* Select: the first of several receives                                  */

enum blitz_select_kind {
	BLITZ_SELECT_CHANNEL = 0,	/* blitz_channel_try_recv */
	BLITZ_SELECT_BROADCAST = 1,	/* blitz_broadcast_try_recv */
	BLITZ_SELECT_WATCH = 2,		/* blitz_watch_try_changed */
	BLITZ_SELECT_ONESHOT = 3,	/* blitz_oneshot_recv_poll */
};

/*
 * struct blitz_select_branch - one receive of a select, in the task's state.
 * Set kind, the source and out (BLITZ_SELECT_* initialisers below); the
 * rest is the select's.  out receives the value (a uint64_t for a oneshot;
 * may be NULL for a watch).  err and missed are set on the winning branch.
 */
struct blitz_select_branch {
	int kind;			/* enum blitz_select_kind */
	int err;			/* the winner's result: 0, -EPIPE, -EOVERFLOW */
	union {
		struct blitz_channel *ch;
		struct blitz_broadcast_rx *brx;
		struct blitz_watch_rx *wrx;
		struct blitz_oneshot *os;
		void *src;
	};
	void *out;
	uint64_t missed;		/* broadcast, with -EOVERFLOW */
	struct blitz_chan_waiter waiter;
};

#define BLITZ_SELECT_CHANNEL_RECV(c, o)   { .kind = BLITZ_SELECT_CHANNEL, .ch = (c), .out = (o) }
#define BLITZ_SELECT_BROADCAST_RECV(r, o) { .kind = BLITZ_SELECT_BROADCAST, .brx = (r), .out = (o) }
#define BLITZ_SELECT_WATCH_CHANGED(r, o)  { .kind = BLITZ_SELECT_WATCH, .wrx = (r), .out = (o) }
#define BLITZ_SELECT_ONESHOT_RECV(c, o)   { .kind = BLITZ_SELECT_ONESHOT, .os = (c), .out = (o) }

/**
 * blitz_select_poll - complete the first ready receive among @n branches.
 * @br: the branches, in the task's state.
 * @n: how many; 0: ready at once, with *@index = 0 (no branch won).
 * @cx: the poll context.
 * @index: when ready: the winning branch (its err, out and missed are set).
 * A branch of no enum blitz_select_kind wins with err -EINVAL.
 *
 * Branches are tried in order (biased: put the branch that must not starve
 * first, or rotate the array).  Exactly one receive happens per ready
 * select: a value on a losing branch stays in its channel.  While pending,
 * one waiter per branch is queued; when the select completes the others
 * are taken back (passing on any notification they received).  A closed
 * branch is ready (err -EPIPE) on every poll: drop it from the array.
 * A losing oneshot branch withdraws its waker (blitz_oneshot_recv_cancel);
 * a value sent meanwhile stays in the oneshot.
 * Return: BLITZ_READY or BLITZ_PENDING.
 */
enum blitz_poll blitz_select_poll(struct blitz_select_branch *br, size_t n,
				  struct blitz_cx *cx, size_t *index);

/**
 * blitz_select_cancel - take back every waiter of a select that is abandoned
 * while pending (from the task's drop function).
 * @br: the branches.
 * @n: how many.
 */
void blitz_select_cancel(struct blitz_select_branch *br, size_t n);

/* ---------------------------------------------------------------------- */
/* Combinators: join and race                                             */

/*
 * struct blitz_awaitable - a sub-computation polled by a combinator: a poll
 * function over a sub-state, and what to do if it is abandoned unfinished.
 *  - poll(state, cx): as a task's poll; it must tolerate being polled when
 *    nothing changed for it (a sibling was woken).
 *  - cancel(state): remove its waiters and release what it holds; called at
 *    most once, only if it never returned BLITZ_READY (may be NULL).
 * The combinator owns done.
 */
struct blitz_awaitable {
	enum blitz_poll (*poll)(void *state, struct blitz_cx *cx);
	void (*cancel)(void *state);
	void *state;
	int done;		/* 0 pending, 1 completed, 2 cancelled */
};

#define BLITZ_AWAITABLE(poll_fn, cancel_fn, st) \
	((struct blitz_awaitable){ .poll = (poll_fn), .cancel = (cancel_fn), .state = (st), .done = 0 })

/**
 * blitz_join_all_poll - await every one of @n awaitables.
 * @a: the awaitables (in the task's state).
 * @n: how many (0: ready at once).
 * @cx: the poll context.
 *
 * Polls each unfinished one on every poll; a finished one is not polled again.
 * Return: BLITZ_READY once all have returned BLITZ_READY.
 */
enum blitz_poll blitz_join_all_poll(struct blitz_awaitable *a, size_t n, struct blitz_cx *cx);

/**
 * blitz_join_all_cancel - cancel the unfinished awaitables of an abandoned join.
 * @a: the awaitables.
 * @n: how many.
 */
void blitz_join_all_cancel(struct blitz_awaitable *a, size_t n);

/**
 * blitz_join_tasks_poll - await every one of @n tasks.
 * @t: join handles (NULL entries are skipped); they stay the caller's.
 * @n: how many.
 * @cx: the poll context.
 *
 * Return: BLITZ_READY once every task has completed or been cancelled.
 */
enum blitz_poll blitz_join_tasks_poll(struct blitz_task *const *t, size_t n, struct blitz_cx *cx);

/**
 * blitz_race_poll - the first of @n awaitables to finish wins.
 * @a: the awaitables (in the task's state).
 * @n: how many; 0: ready at once, with *@winner = 0 (no winner).
 * @cx: the poll context.
 * @winner: when ready: the index of the winner.
 *
 * Polled in order; when one returns BLITZ_READY, every other one is
 * cancelled (its cancel runs once) before this returns.
 * Return: BLITZ_READY or BLITZ_PENDING.
 */
enum blitz_poll blitz_race_poll(struct blitz_awaitable *a, size_t n, struct blitz_cx *cx,
				size_t *winner);

/**
 * blitz_race_cancel - cancel every unfinished awaitable of an abandoned race.
 * @a: the awaitables.
 * @n: how many.
 */
void blitz_race_cancel(struct blitz_awaitable *a, size_t n);

/**
 * blitz_race_tasks_poll - the first of @n tasks to complete wins.
 * @t: join handles, owned by the race from now on; NULL entries are skipped.
 * @n: how many.
 * @cx: the poll context.
 * @winner: when ready: the index of the winner; @n (no winner) when @n is 0
 *          or every entry is NULL.
 *
 * When one has completed, every other one is cancelled with
 * blitz_task_cancel() and released, and its entry set to NULL; the
 * winner's handle stays in t[*winner] for the caller to read and release
 * (set the entry to NULL then, if the task's drop function, which also
 * runs on completion, calls blitz_race_tasks_cancel()).
 * Return: BLITZ_READY or BLITZ_PENDING.
 */
enum blitz_poll blitz_race_tasks_poll(struct blitz_task **t, size_t n, struct blitz_cx *cx,
				      size_t *winner);

/**
 * blitz_race_tasks_cancel - cancel and release every task of an abandoned race.
 * @t: the handles (set to NULL).
 * @n: how many.
 */
void blitz_race_tasks_cancel(struct blitz_task **t, size_t n);

#endif /* BLITZ_CHANNEL_H */
