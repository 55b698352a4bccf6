/* SPDX-License-Identifier: MIT */
/*
 * blitz/sync.h - async synchronization primitives: Semaphore, Mutex, RwLock,
 * Barrier, Notify, OnceCell and CancelToken (docs/sync.md).
 *
 * Every primitive is async-aware: a contended task registers a waiter and
 * returns BLITZ_PENDING to the scheduler; it never blocks its worker thread.
 * Nothing is allocated per wait: the waiter node (struct blitz_waiter) is
 * embedded in the waiting task's state struct, and the primitive links it
 * into its queue.  Every primitive also has a non-blocking form (try_*,
 * is_*, get) usable from any thread, and the releasing operations (release,
 * unlock, notify, cancel) may be called from any thread.
 *
 * The waiter protocol, the same for every primitive:
 *
 *  - A waiter starts zeroed (a zero-initialized state struct, or
 *    BLITZ_WAITER_INIT / blitz_waiter_init()) and is passed to the same
 *    *_poll function on every poll until that returns BLITZ_READY; after
 *    that it is idle again and may be reused for the next wait.
 *  - A task that stops waiting before BLITZ_READY (it is cancelled, or it
 *    gives up) calls the primitive's *_waiter_cancel() with the waiter,
 *    usually from its drop function.  That unlinks the node and hands back
 *    whatever was granted to it and not yet consumed (permits, a Notify
 *    permit, the OnceCell initialization), so nothing is lost.  On an idle
 *    waiter it does nothing and does not touch the primitive.
 *  - What a BLITZ_READY acquire gives (permits, a lock) belongs to the task
 *    until it releases it; the waiter no longer tracks it.  A task that can
 *    be cancelled while holding a lock must release it in its drop function.
 *  - The primitive must outlive every waiter linked into it.
 *
 *	struct worker { struct blitz_co co; struct blitz_mutex *m;
 *			struct blitz_waiter w; bool locked; };
 *
 *	static enum blitz_poll worker_poll(void *arg, struct blitz_cx *cx)
 *	{
 *		struct worker *s = arg;
 *
 *		BLITZ_CO_BEGIN(&s->co);
 *		BLITZ_AWAIT(&s->co, blitz_mutex_lock_poll(s->m, &s->w, cx));
 *		s->locked = true;
 *		... the critical section, which may await ...
 *		s->locked = false;
 *		blitz_mutex_unlock(s->m);
 *		BLITZ_CO_END(&s->co);
 *	}
 *
 *	static void worker_drop(void *arg)
 *	{
 *		struct worker *s = arg;
 *
 *		blitz_mutex_waiter_cancel(s->m, &s->w);
 *		if (s->locked)
 *			blitz_mutex_unlock(s->m);
 *	}
 *
 * The structs below are public only so that they can be embedded; their
 * fields belong to the implementation (core/sync/).
 */
#ifndef BLITZ_SYNC_H
#define BLITZ_SYNC_H

#include <stdbool.h>
#include <stdint.h>
#include <blitz/task.h>

/* The waiter node: embed one in the task's state for each concurrent wait. */
struct blitz_waiter {
	struct blitz_waiter *next, *prev;	/* the primitive's queue */
	struct blitz_waker waker;		/* while queued */
	uint64_t since_ns;	/* when it queued (only while sync_wake is traced) */
	uint32_t state;		/* atomic: idle, waiting, granted, initializing */
	uint32_t want;		/* permits still missing, or what the grant carried */
	uint32_t asked;		/* permits asked for, or the barrier generation */
	uint32_t seq;		/* arrival ticket in the primitive's queue */
};

#define BLITZ_WAITER_INIT { 0 }

/** blitz_waiter_init - make @w idle (the same as zeroing it). */
static inline void blitz_waiter_init(struct blitz_waiter *w)
{
	*w = (struct blitz_waiter)BLITZ_WAITER_INIT;
}

/* A primitive's queue of waiters and the small lock that protects it. */
struct blitz_waitq {
	bool lock;			/* core/spinlock.h */
	uint8_t kind;			/* the probes' kind argument */
	uint32_t len;			/* atomic: queued waiters */
	uint32_t seq;			/* next arrival ticket */
	struct blitz_waiter *head, *tail;
};

/* ---------------------------------------------------------------------- */
/* Semaphore                                                               */

/* The most permits a semaphore holds (2^31 - 1); counts saturate there. */
#define BLITZ_SEMAPHORE_MAX_PERMITS	0x7fffffffu

struct blitz_semaphore {
	struct blitz_waitq q;
	uint32_t permits;		/* atomic: available, 0 while anyone waits */
};

#define BLITZ_SEMAPHORE_INIT(n) { .q = { .kind = 0 }, .permits = (n) }

/**
 * blitz_semaphore_init - a counting semaphore with @permits permits.
 * @s: the semaphore (no destroy: it owns nothing once no task waits).
 * @permits: the initial permits; more than BLITZ_SEMAPHORE_MAX_PERMITS is
 *           taken as that.
 */
void blitz_semaphore_init(struct blitz_semaphore *s, uint32_t permits);

/**
 * blitz_semaphore_try_acquire - take @n permits if they are available now.
 * @s: the semaphore.
 * @n: permits to take (0: true at once; more than the maximum: false).
 *
 * Never barges: while any task is queued the available count is 0 (permits
 * released go straight to the queued waiters), so this fails.  Any thread.
 * Return: true if the @n permits were taken.
 */
bool blitz_semaphore_try_acquire(struct blitz_semaphore *s, uint32_t n);

/**
 * blitz_semaphore_acquire_poll - acquire @n permits from a task.
 * @s: the semaphore.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @n: permits wanted (the same on every poll until BLITZ_READY); at most the
 *     semaphore's total, or the wait never ends.
 * @cx: the poll context.
 *
 * Waiters are served in arrival order (FIFO).  A waiter at the head of the
 * queue that wants more than is available takes what there is and waits for
 * the rest, so a later, smaller request cannot overtake it.
 * Return: BLITZ_READY once the task holds the @n permits, else BLITZ_PENDING
 * (the task is queued and will be woken).
 */
enum blitz_poll blitz_semaphore_acquire_poll(struct blitz_semaphore *s,
					     struct blitz_waiter *w, uint32_t n,
					     struct blitz_cx *cx);

/**
 * blitz_semaphore_release - give back @n permits.
 * @s: the semaphore.
 * @n: permits released (0: nothing happens).  Permits beyond
 *     BLITZ_SEMAPHORE_MAX_PERMITS (more released than were ever acquired)
 *     are lost: the count saturates.
 *
 * Always checks for waiters (the permits word's waiters bit, set while any
 * task is queued): the permits go to the queued waiters in FIFO order,
 * which are woken; only what no waiter needs becomes available.  With
 * nobody queued it is one CAS, no lock.  Any thread.
 */
void blitz_semaphore_release(struct blitz_semaphore *s, uint32_t n);

/**
 * blitz_semaphore_waiter_cancel - stop waiting (the task's drop, or giving up).
 * @s: the semaphore @w waited on.
 * @w: the waiter.
 *
 * Unlinks @w and gives back every permit already assigned to it (a partial
 * assignment while queued, or the whole grant if it was granted and the
 * task has not yet seen it), so no permit is lost.  Idle @w: nothing, and
 * @s is not touched.
 */
void blitz_semaphore_waiter_cancel(struct blitz_semaphore *s, struct blitz_waiter *w);

/** blitz_semaphore_available - permits available now (a snapshot). */
uint32_t blitz_semaphore_available(const struct blitz_semaphore *s);

/** blitz_semaphore_queued - tasks queued now (a snapshot, for tests and diagnostics). */
uint32_t blitz_semaphore_queued(const struct blitz_semaphore *s);

/* ---------------------------------------------------------------------- */
/* Mutex: a semaphore of one permit                                        */

struct blitz_mutex {
	struct blitz_semaphore sem;
};

#define BLITZ_MUTEX_INIT { .sem = { .q = { .kind = 1 }, .permits = 1 } }

/** blitz_mutex_init - an unlocked mutex. */
void blitz_mutex_init(struct blitz_mutex *m);

/** blitz_mutex_try_lock - lock @m if it is free and nobody is queued; any thread. */
bool blitz_mutex_try_lock(struct blitz_mutex *m);

/**
 * blitz_mutex_lock_poll - lock @m from a task; FIFO among the waiters.
 * @m: the mutex.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @cx: the poll context.
 * Return: BLITZ_READY once the task holds the lock, else BLITZ_PENDING.
 */
enum blitz_poll blitz_mutex_lock_poll(struct blitz_mutex *m, struct blitz_waiter *w,
				      struct blitz_cx *cx);

/**
 * blitz_mutex_unlock - unlock @m; the lock passes straight to the first
 * queued waiter, if any.  Any thread (the holder need not be a task).
 * An unlocked @m: nothing happens (a second permit would let two hold it).
 */
void blitz_mutex_unlock(struct blitz_mutex *m);

/**
 * blitz_mutex_waiter_cancel - stop waiting for @m; a lock granted to @w
 * that its task has not seen yet passes on, so the mutex is never left
 * locked by a task that is gone.  Idle @w: nothing.
 */
void blitz_mutex_waiter_cancel(struct blitz_mutex *m, struct blitz_waiter *w);

/** blitz_mutex_is_locked - is @m held (a snapshot)? */
bool blitz_mutex_is_locked(const struct blitz_mutex *m);

/** blitz_mutex_queued - tasks queued on @m now (a snapshot). */
uint32_t blitz_mutex_queued(const struct blitz_mutex *m);

/* ---------------------------------------------------------------------- */
/* RwLock: a semaphore of BLITZ_RWLOCK_MAX_READERS permits                 */

/* A reader takes one permit, a writer all of them. */
#define BLITZ_RWLOCK_MAX_READERS	(1u << 24)

struct blitz_rwlock {
	struct blitz_semaphore sem;
};

#define BLITZ_RWLOCK_INIT \
	{ .sem = { .q = { .kind = 2 }, .permits = BLITZ_RWLOCK_MAX_READERS } }

/** blitz_rwlock_init - an unlocked reader-writer lock. */
void blitz_rwlock_init(struct blitz_rwlock *l);

/** blitz_rwlock_try_read - take a read lock if no writer holds or waits; any thread. */
bool blitz_rwlock_try_read(struct blitz_rwlock *l);

/** blitz_rwlock_try_write - take the write lock if nobody holds or waits; any thread. */
bool blitz_rwlock_try_write(struct blitz_rwlock *l);

/**
 * blitz_rwlock_read_poll - take a read lock from a task.
 * @l: the lock.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @cx: the poll context.
 *
 * FIFO with the writers: a reader that arrives after a queued writer waits
 * behind it, so writers are never starved by a stream of readers.
 * Return: BLITZ_READY once the task holds a read lock, else BLITZ_PENDING.
 */
enum blitz_poll blitz_rwlock_read_poll(struct blitz_rwlock *l, struct blitz_waiter *w,
				       struct blitz_cx *cx);

/**
 * blitz_rwlock_write_poll - take the write lock from a task.
 * @l: the lock.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @cx: the poll context.
 *
 * FIFO: once at the head of the queue the writer collects the read permits
 * as the current readers leave; readers that come later queue behind it.
 * Return: BLITZ_READY once the task holds the write lock, else BLITZ_PENDING.
 */
enum blitz_poll blitz_rwlock_write_poll(struct blitz_rwlock *l, struct blitz_waiter *w,
					struct blitz_cx *cx);

/** blitz_rwlock_read_unlock - give back a read lock; any thread (@l not held: nothing). */
void blitz_rwlock_read_unlock(struct blitz_rwlock *l);

/** blitz_rwlock_write_unlock - give back the write lock; any thread (not held: nothing). */
void blitz_rwlock_write_unlock(struct blitz_rwlock *l);

/**
 * blitz_rwlock_waiter_cancel - stop waiting (read or write) for @l; what was
 * granted or partially assigned to @w goes back.  Idle @w: nothing.
 */
void blitz_rwlock_waiter_cancel(struct blitz_rwlock *l, struct blitz_waiter *w);

/** blitz_rwlock_queued - tasks queued on @l now (a snapshot). */
uint32_t blitz_rwlock_queued(const struct blitz_rwlock *l);

/* ---------------------------------------------------------------------- */
/* Barrier                                                                 */

struct blitz_barrier {
	struct blitz_waitq q;
	uint32_t n;			/* participants per generation */
	uint32_t arrived;		/* in this generation (under q.lock) */
	uint32_t generation;		/* atomic: completed generations */
};

#define BLITZ_BARRIER_INIT(parties) { .q = { .kind = 4 }, .n = (parties) }

/** blitz_barrier_init - a reusable barrier for @n participants (@n >= 1). */
void blitz_barrier_init(struct blitz_barrier *b, uint32_t n);

/**
 * blitz_barrier_wait_poll - arrive at @b and wait for the rest of the generation.
 * @b: the barrier.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @cx: the poll context.
 * @leader: set when BLITZ_READY: true for exactly one participant of each
 *          generation, the Nth to arrive, which wakes the other N-1.
 *
 * The barrier is reusable: the generation counter keeps a waiter of one
 * generation from being confused with an arrival of the next.
 * Return: BLITZ_READY once all @n have arrived, else BLITZ_PENDING.
 */
enum blitz_poll blitz_barrier_wait_poll(struct blitz_barrier *b, struct blitz_waiter *w,
					struct blitz_cx *cx, bool *leader);

/**
 * blitz_barrier_try_wait - arrive only if this arrival completes the
 * generation (then the caller is its leader and the others are woken);
 * otherwise do nothing.  Any thread.
 * Return: true if the caller arrived, as leader.
 */
bool blitz_barrier_try_wait(struct blitz_barrier *b);

/**
 * blitz_barrier_waiter_cancel - withdraw @w's arrival: a queued waiter of
 * the current generation no longer counts toward it.  A waiter whose
 * generation has completed (granted) has nothing to withdraw.  Idle: nothing.
 */
void blitz_barrier_waiter_cancel(struct blitz_barrier *b, struct blitz_waiter *w);

/** blitz_barrier_generation - generations completed so far (a snapshot). */
uint32_t blitz_barrier_generation(const struct blitz_barrier *b);

/** blitz_barrier_queued - tasks queued on @b now (a snapshot). */
uint32_t blitz_barrier_queued(const struct blitz_barrier *b);

/* ---------------------------------------------------------------------- */
/* Notify                                                                  */

struct blitz_notify {
	struct blitz_waitq q;
	uint32_t permit;		/* atomic: 0 or 1 stored notification */
};

#define BLITZ_NOTIFY_INIT { .q = { .kind = 5 } }

/** blitz_notify_init - a Notify with no stored permit. */
void blitz_notify_init(struct blitz_notify *n);

/**
 * blitz_notify_one - wake the first queued waiter; when nobody waits,
 * store one permit for the next notified_poll (at most one is stored:
 * notifications with nobody waiting coalesce).  Any thread.
 */
void blitz_notify_one(struct blitz_notify *n);

/**
 * blitz_notify_waiters - wake every task waiting now (those queued before
 * the call); stores no permit and leaves a stored one alone.  Any thread.
 */
void blitz_notify_waiters(struct blitz_notify *n);

/**
 * blitz_notify_notified_poll - wait to be notified.
 * @n: the Notify.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @cx: the poll context.
 *
 * Consumes a stored permit if there is one; otherwise queues (FIFO) until
 * a notify_one picks this waiter or a notify_waiters wakes everyone.
 * Return: BLITZ_READY once notified, else BLITZ_PENDING.
 */
enum blitz_poll blitz_notify_notified_poll(struct blitz_notify *n, struct blitz_waiter *w,
					   struct blitz_cx *cx);

/** blitz_notify_try_notified - consume the stored permit, if any; any thread. */
bool blitz_notify_try_notified(struct blitz_notify *n);

/**
 * blitz_notify_waiter_cancel - stop waiting; a notify_one that had already
 * picked @w (and that its task has not seen) passes to the next waiter, or
 * is stored, so it is not lost.  Idle @w: nothing.
 */
void blitz_notify_waiter_cancel(struct blitz_notify *n, struct blitz_waiter *w);

/** blitz_notify_queued - tasks queued on @n now (a snapshot). */
uint32_t blitz_notify_queued(const struct blitz_notify *n);

/* ---------------------------------------------------------------------- */
/* OnceCell                                                                */

enum blitz_oncecell_state {
	BLITZ_ONCECELL_UNINITIALIZED = 0,
	BLITZ_ONCECELL_INITIALIZING = 1,
	BLITZ_ONCECELL_INITIALIZED = 2,
};

struct blitz_oncecell {
	struct blitz_waitq q;
	uint32_t state;			/* atomic: enum blitz_oncecell_state */
	void *value;			/* written once, before INITIALIZED */
};

#define BLITZ_ONCECELL_INIT { .q = { .kind = 6 } }

/**
 * blitz_once_init_fn - an initializer: an awaitable poll function.
 * @arg: the caller's argument (typically its own state, so the
 *       initializer may keep a coroutine and await other things).
 * @cx: the poll context of the initializing task.
 * @value: out: the cell's value, when it returns BLITZ_READY.
 * Return: BLITZ_READY with *@value set, or BLITZ_PENDING after arranging a
 * wake (it is then polled again, by the same task, until ready).
 */
typedef enum blitz_poll (*blitz_once_init_fn)(void *arg, struct blitz_cx *cx, void **value);

/** blitz_oncecell_init - an empty (UNINITIALIZED) cell. */
void blitz_oncecell_init(struct blitz_oncecell *c);

/**
 * blitz_oncecell_get_or_init_poll - the cell's value, initializing it first
 * if nobody has.
 * @c: the cell.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @cx: the poll context.
 * @init: the initializer; only the task that wins UNINITIALIZED ->
 *        INITIALIZING (a CAS) runs it, across as many polls as it needs.
 * @arg: passed to @init.
 * @out: the value, when BLITZ_READY.
 *
 * The other callers wait (FIFO) and are woken once the value is set.  If the
 * initializing task is cancelled (its drop calls blitz_oncecell_waiter_cancel)
 * the cell goes back to UNINITIALIZED and the waiters are woken: one of them
 * takes over and runs its own @init.
 * Return: BLITZ_READY with *@out set, else BLITZ_PENDING.
 */
enum blitz_poll blitz_oncecell_get_or_init_poll(struct blitz_oncecell *c,
						struct blitz_waiter *w,
						struct blitz_cx *cx,
						blitz_once_init_fn init, void *arg,
						void **out);

/**
 * blitz_oncecell_get - the value if the cell is initialized; any thread.
 * Return: true with *@out set, or false (uninitialized or initializing).
 *
 * Inline: the hot path of a cell is this one load, and a call into the
 * shared library costs several times the load (sync-bench's oncecell_get:
 * docs/sync.md, "sync-bench: blitz against Tokio").  Acquire:
 * pairs with the release store of INITIALIZED in core/sync/oncecell.c, so
 * the value written before it is complete.  Expected initialized: a cell
 * is read far more often than it is empty, and without the hint gcc laid
 * a caller's loop out with the initialized case as a taken branch (two
 * taken branches per get instead of one).
 */
static inline bool blitz_oncecell_get(struct blitz_oncecell *c, void **out)
{
	if (__builtin_expect(__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) !=
			     BLITZ_ONCECELL_INITIALIZED, 0))
		return false;
	*out = c->value;
	return true;
}

/**
 * blitz_oncecell_try_set - initialize the cell with @value if nobody has
 * started to; waiters are woken.  Any thread.
 * Return: 0, -EBUSY while another caller is initializing, -EEXIST if set.
 */
int blitz_oncecell_try_set(struct blitz_oncecell *c, void *value);

/**
 * blitz_oncecell_waiter_cancel - stop waiting; if @w is the initializer
 * (its task was cancelled mid-init), the cell goes back to UNINITIALIZED
 * and the waiters are woken so that one takes over.  Idle @w: nothing.
 */
void blitz_oncecell_waiter_cancel(struct blitz_oncecell *c, struct blitz_waiter *w);

/** blitz_oncecell_state - the cell's state (a snapshot). */
enum blitz_oncecell_state blitz_oncecell_state(const struct blitz_oncecell *c);

/** blitz_oncecell_queued - tasks queued on @c now (a snapshot). */
uint32_t blitz_oncecell_queued(const struct blitz_oncecell *c);

/* ---------------------------------------------------------------------- */
/* CancelToken                                                             */

struct blitz_cancel_token {
	struct blitz_waitq q;		/* its lock also guards the child list */
	uint32_t cancelled;		/* atomic: 0, then 1 forever */
	uint32_t pins;			/* under the parent's lock: a cancel in progress */
	struct blitz_cancel_token *parent;	/* NULL: a root, or not linked */
	struct blitz_cancel_token *children;
	struct blitz_cancel_token *sib_prev, *sib_next;
};

#define BLITZ_CANCEL_TOKEN_INIT { .q = { .kind = 7 } }

/** blitz_cancel_token_init - a root token, not cancelled. */
void blitz_cancel_token_init(struct blitz_cancel_token *t);

/**
 * blitz_cancel_token_init_child - a token cancelled when @parent is.
 * @t: the child.
 * @parent: the parent; it must outlive @t (destroy children first).
 *
 * If @parent is already cancelled, @t starts cancelled.  Any thread.
 */
void blitz_cancel_token_init_child(struct blitz_cancel_token *t,
				   struct blitz_cancel_token *parent);

/**
 * blitz_cancel_token_destroy - unregister @t from its parent.  No task may
 * wait on @t any more.  If the parent is cancelling @t at that moment this
 * waits (yielding the thread) until that cancel is done with @t.  Children
 * still registered with @t are detached (they become roots).
 */
void blitz_cancel_token_destroy(struct blitz_cancel_token *t);

/**
 * blitz_cancel_token_cancel - cancel @t: wake every task waiting on it, then
 * cancel its children, recursively.  Idempotent; any thread.
 */
void blitz_cancel_token_cancel(struct blitz_cancel_token *t);

/** blitz_cancel_token_is_cancelled - has @t been cancelled?  Any thread. */
bool blitz_cancel_token_is_cancelled(const struct blitz_cancel_token *t);

/**
 * blitz_cancel_token_cancelled_poll - wait until @t is cancelled.
 * @t: the token.
 * @w: the waiter, in the task's state; idle on the first poll.
 * @cx: the poll context.
 * Return: BLITZ_READY once @t is cancelled, else BLITZ_PENDING.
 */
enum blitz_poll blitz_cancel_token_cancelled_poll(struct blitz_cancel_token *t,
						  struct blitz_waiter *w,
						  struct blitz_cx *cx);

/** blitz_cancel_token_waiter_cancel - stop waiting on @t.  Idle @w: nothing. */
void blitz_cancel_token_waiter_cancel(struct blitz_cancel_token *t, struct blitz_waiter *w);

/** blitz_cancel_token_queued - tasks waiting on @t now (a snapshot). */
uint32_t blitz_cancel_token_queued(const struct blitz_cancel_token *t);

#endif /* BLITZ_SYNC_H */
