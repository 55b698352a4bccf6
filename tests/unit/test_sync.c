// SPDX-License-Identifier: MIT
/*
 * test_sync.c - the async sync primitives (include/blitz/sync.h): the
 * non-blocking forms from plain threads, FIFO and anti-barging on fixed
 * interleavings, interleaving stress on two workers with random yields
 * (invariants checked at every step), and cancellation of waiting tasks
 * (nothing leaks, no permit is lost).
 *
 * "Woken exactly once": a task counts the polls of its wait that return
 * pending; a queued waiter must see exactly one (it queued, then the one
 * wake found it granted).  A second pending poll would be a spurious wake;
 * a lost wake hangs the test until Check's timeout.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

#define new_rt test_runtime

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Yield to the scheduler one time in four (a resume point: one per line). */
#define MAYBE_YIELD(s, cx)						\
	do {								\
		if (rnd(&(s)->rng) % 4 == 0)				\
			BLITZ_YIELD(&(s)->co, cx);			\
	} while (0)

static inline enum blitz_poll counted(int *pend, enum blitz_poll r)
{
	if (r == BLITZ_PENDING)
		(*pend)++;
	return r;
}

#define WAIT_UNTIL(cond) do { while (!(cond)) usleep(100); } while (0)

static void join_all(struct blitz_task **t, int n)
{
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(blitz_join(t[i]), 0);
		blitz_task_release(t[i]);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ====================================================================== */
/* A generic waiter task: waits once on one primitive, records the order  */
/* in which waiters got through, releases (unless told to keep), ends.    */
/* Its drop cancels the wait and releases what it still holds.            */

enum prim { P_SEM, P_MUTEX, P_READ, P_WRITE, P_BARRIER, P_NOTIFY, P_ONCE, P_TOKEN };

static _Atomic int order_n;
static _Atomic int order[256];
static _Atomic int init_started, init_done;
static _Atomic int done_n;

struct wt {
	struct blitz_co co;
	struct blitz_waiter w;
	int prim;
	void *p;
	uint32_t n;		/* semaphore permits */
	int id;
	int pend;
	bool keep;		/* leave the permits/lock to the test thread */
	bool holding;
	bool done;
	bool leader;
	bool hold_forever;	/* after acquiring, wait forever holding it */
	int init_mode;		/* OnceCell: 0 quick, 1 never ready */
	void *value;
};

static enum blitz_poll wt_init(void *arg, struct blitz_cx *cx, void **value)
{
	struct wt *s = arg;

	if (!s->done) {		/* first call for this task */
		s->done = true;
		atomic_fetch_add(&init_started, 1);
	}
	if (s->init_mode == 1)
		return BLITZ_PENDING;	/* never: the test cancels this task */
	atomic_fetch_add(&init_done, 1);
	*value = s;
	return BLITZ_READY;
}

static enum blitz_poll wt_wait(struct wt *s, struct blitz_cx *cx)
{
	switch (s->prim) {
	case P_SEM: return blitz_semaphore_acquire_poll(s->p, &s->w, s->n, cx);
	case P_MUTEX: return blitz_mutex_lock_poll(s->p, &s->w, cx);
	case P_READ: return blitz_rwlock_read_poll(s->p, &s->w, cx);
	case P_WRITE: return blitz_rwlock_write_poll(s->p, &s->w, cx);
	case P_BARRIER: return blitz_barrier_wait_poll(s->p, &s->w, cx, &s->leader);
	case P_NOTIFY: return blitz_notify_notified_poll(s->p, &s->w, cx);
	case P_ONCE: return blitz_oncecell_get_or_init_poll(s->p, &s->w, cx, wt_init, s,
							   &s->value);
	case P_TOKEN: return blitz_cancel_token_cancelled_poll(s->p, &s->w, cx);
	}
	return BLITZ_READY;
}

static void wt_release(struct wt *s)
{
	switch (s->prim) {
	case P_SEM: blitz_semaphore_release(s->p, s->n); break;
	case P_MUTEX: blitz_mutex_unlock(s->p); break;
	case P_READ: blitz_rwlock_read_unlock(s->p); break;
	case P_WRITE: blitz_rwlock_write_unlock(s->p); break;
	}
}

static void wt_cancel(struct wt *s)
{
	switch (s->prim) {
	case P_SEM: blitz_semaphore_waiter_cancel(s->p, &s->w); break;
	case P_MUTEX: blitz_mutex_waiter_cancel(s->p, &s->w); break;
	case P_READ:
	case P_WRITE: blitz_rwlock_waiter_cancel(s->p, &s->w); break;
	case P_BARRIER: blitz_barrier_waiter_cancel(s->p, &s->w); break;
	case P_NOTIFY: blitz_notify_waiter_cancel(s->p, &s->w); break;
	case P_ONCE: blitz_oncecell_waiter_cancel(s->p, &s->w); break;
	case P_TOKEN: blitz_cancel_token_waiter_cancel(s->p, &s->w); break;
	}
}

static enum blitz_poll wt_poll(void *arg, struct blitz_cx *cx)
{
	struct wt *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, counted(&s->pend, wt_wait(s, cx)));
	/* Woken once; a OnceCell takeover wakes all, the losers queue again. */
	if (s->prim != P_ONCE)
		ck_assert_int_le(s->pend, 1);
	atomic_store(&order[atomic_fetch_add(&order_n, 1)], s->id);
	s->holding = !s->keep;
	s->done = true;
	BLITZ_AWAIT(&s->co, s->hold_forever ? BLITZ_PENDING : BLITZ_READY);
	if (s->holding) {
		wt_release(s);
		s->holding = false;
	}
	atomic_fetch_add(&done_n, 1);
	BLITZ_CO_END(&s->co);
}

static void wt_drop(void *arg)
{
	struct wt *s = arg;

	wt_cancel(s);
	if (s->holding)
		wt_release(s);
}
static const struct blitz_task_vtable wt_vt = BLITZ_TASK_VTABLE(wt_poll, wt_drop);

static struct blitz_task *spawn_wt(struct blitz_runtime *rt, int prim, void *p, uint32_t n,
				   int id, bool keep)
{
	struct wt s = { .prim = prim, .p = p, .n = n, .id = id, .keep = keep };
	struct blitz_task *t = blitz_spawn(rt, &wt_vt, &s, sizeof(s));

	ck_assert_ptr_nonnull(t);
	return t;
}

static void reset_order(void)
{
	atomic_store(&order_n, 0);
	atomic_store(&done_n, 0);
	atomic_store(&init_started, 0);
	atomic_store(&init_done, 0);
}

/* ====================================================================== */
/* The non-blocking forms, from the test thread (no runtime at all).      */

START_TEST(try_forms_single_thread)
{
	struct blitz_semaphore s = BLITZ_SEMAPHORE_INIT(3);
	struct blitz_mutex m;
	struct blitz_rwlock l;
	struct blitz_barrier b;
	struct blitz_notify n;
	struct blitz_oncecell c;
	struct blitz_cancel_token root, child, late;
	void *v = NULL;
	int x;

	ck_assert(blitz_semaphore_try_acquire(&s, 2));
	ck_assert(!blitz_semaphore_try_acquire(&s, 2));
	ck_assert(blitz_semaphore_try_acquire(&s, 1));
	ck_assert(!blitz_semaphore_try_acquire(&s, 1));
	ck_assert(blitz_semaphore_try_acquire(&s, 0));
	blitz_semaphore_release(&s, 3);
	ck_assert_uint_eq(blitz_semaphore_available(&s), 3);
	ck_assert_uint_eq(blitz_semaphore_queued(&s), 0);

	blitz_mutex_init(&m);
	ck_assert(!blitz_mutex_is_locked(&m));
	ck_assert(blitz_mutex_try_lock(&m));
	ck_assert(blitz_mutex_is_locked(&m));
	ck_assert(!blitz_mutex_try_lock(&m));
	blitz_mutex_unlock(&m);
	ck_assert(blitz_mutex_try_lock(&m));
	blitz_mutex_unlock(&m);

	blitz_rwlock_init(&l);
	ck_assert(blitz_rwlock_try_read(&l));
	ck_assert(blitz_rwlock_try_read(&l));
	ck_assert(!blitz_rwlock_try_write(&l));
	blitz_rwlock_read_unlock(&l);
	blitz_rwlock_read_unlock(&l);
	ck_assert(blitz_rwlock_try_write(&l));
	ck_assert(!blitz_rwlock_try_read(&l));
	ck_assert(!blitz_rwlock_try_write(&l));
	blitz_rwlock_write_unlock(&l);
	ck_assert(blitz_rwlock_try_read(&l));
	blitz_rwlock_read_unlock(&l);

	blitz_barrier_init(&b, 1);
	ck_assert(blitz_barrier_try_wait(&b));	/* one party: always the leader */
	ck_assert(blitz_barrier_try_wait(&b));
	ck_assert_uint_eq(blitz_barrier_generation(&b), 2);
	blitz_barrier_init(&b, 2);
	ck_assert(!blitz_barrier_try_wait(&b));	/* would have to wait: no arrival */
	ck_assert_uint_eq(blitz_barrier_generation(&b), 0);

	blitz_notify_init(&n);
	ck_assert(!blitz_notify_try_notified(&n));
	blitz_notify_waiters(&n);		/* nobody waits: stores nothing */
	ck_assert(!blitz_notify_try_notified(&n));
	blitz_notify_one(&n);
	blitz_notify_one(&n);			/* coalesces: one permit stored */
	ck_assert(blitz_notify_try_notified(&n));
	ck_assert(!blitz_notify_try_notified(&n));

	blitz_oncecell_init(&c);
	ck_assert(!blitz_oncecell_get(&c, &v));
	ck_assert_int_eq(blitz_oncecell_state(&c), BLITZ_ONCECELL_UNINITIALIZED);
	ck_assert_int_eq(blitz_oncecell_try_set(&c, &x), 0);
	ck_assert_int_eq(blitz_oncecell_try_set(&c, &v), -EEXIST);
	ck_assert(blitz_oncecell_get(&c, &v));
	ck_assert_ptr_eq(v, &x);

	blitz_cancel_token_init(&root);
	blitz_cancel_token_init_child(&child, &root);
	ck_assert(!blitz_cancel_token_is_cancelled(&child));
	blitz_cancel_token_cancel(&root);
	blitz_cancel_token_cancel(&root);	/* idempotent */
	ck_assert(blitz_cancel_token_is_cancelled(&root));
	ck_assert(blitz_cancel_token_is_cancelled(&child));
	blitz_cancel_token_init_child(&late, &root);	/* born cancelled */
	ck_assert(blitz_cancel_token_is_cancelled(&late));
	blitz_cancel_token_destroy(&late);
	blitz_cancel_token_destroy(&child);
	blitz_cancel_token_destroy(&root);
}
END_TEST

/* A destroyed child is unregistered: cancelling the parent does not touch it. */
START_TEST(cancel_token_child_unregisters)
{
	struct blitz_cancel_token root, *kids[16], *chain[64];
	struct blitz_cancel_token top;

	blitz_cancel_token_init(&root);
	for (int i = 0; i < 16; i++) {
		kids[i] = malloc(sizeof(*kids[i]));
		blitz_cancel_token_init_child(kids[i], &root);
	}
	for (int i = 0; i < 16; i += 2) {	/* ASan: a use after free if still linked */
		blitz_cancel_token_destroy(kids[i]);
		free(kids[i]);
	}
	blitz_cancel_token_cancel(&root);
	for (int i = 1; i < 16; i += 2) {
		ck_assert(blitz_cancel_token_is_cancelled(kids[i]));
		blitz_cancel_token_destroy(kids[i]);
		free(kids[i]);
	}
	blitz_cancel_token_destroy(&root);

	/* A chain 64 deep: cancelling the top reaches the bottom. */
	blitz_cancel_token_init(&top);
	for (int i = 0; i < 64; i++) {
		chain[i] = malloc(sizeof(*chain[i]));
		blitz_cancel_token_init_child(chain[i], i ? chain[i - 1] : &top);
	}
	blitz_cancel_token_cancel(&top);
	for (int i = 63; i >= 0; i--) {
		ck_assert(blitz_cancel_token_is_cancelled(chain[i]));
		blitz_cancel_token_destroy(chain[i]);
		free(chain[i]);
	}
	blitz_cancel_token_destroy(&top);
}
END_TEST

/* ====================================================================== */
/* Fixed interleavings: FIFO, no barging, partial assignment.             */

START_TEST(semaphore_fifo_no_barging)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_semaphore s;
	static const uint32_t want[] = { 3, 1, 2, 1 };
	struct blitz_task *t[4];

	reset_order();
	blitz_semaphore_init(&s, 5);
	ck_assert(blitz_semaphore_try_acquire(&s, 5));	/* the test holds all 5 */
	for (int i = 0; i < 4; i++) {
		t[i] = spawn_wt(rt, P_SEM, &s, want[i], i, true);
		WAIT_UNTIL(blitz_semaphore_queued(&s) == (uint32_t)i + 1);
	}
	blitz_semaphore_release(&s, 2);		/* A (3) takes 2, waits for 1 */
	ck_assert_uint_eq(blitz_semaphore_available(&s), 0);
	ck_assert(!blitz_semaphore_try_acquire(&s, 1));	/* no barging past A */
	usleep(2000);
	ck_assert_int_eq(atomic_load(&done_n), 0);	/* B (1) did not overtake A */
	blitz_semaphore_release(&s, 1);		/* A complete */
	WAIT_UNTIL(atomic_load(&done_n) == 1);
	blitz_semaphore_release(&s, 1);		/* B */
	WAIT_UNTIL(atomic_load(&done_n) == 2);
	blitz_semaphore_release(&s, 1);		/* C (2) takes 1: partial */
	usleep(2000);
	ck_assert_int_eq(atomic_load(&done_n), 2);	/* D (1) waits behind C */
	ck_assert(!blitz_semaphore_try_acquire(&s, 1));
	blitz_semaphore_release(&s, 1);		/* (A gives one back) C complete */
	WAIT_UNTIL(atomic_load(&done_n) == 3);
	blitz_semaphore_release(&s, 1);		/* (B gives back) D */
	join_all(t, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(atomic_load(&order[i]), i);
	/* A, C, D still hold 2 + 2 + 1: give them back; all 5 are there. */
	blitz_semaphore_release(&s, 5);
	ck_assert_uint_eq(blitz_semaphore_available(&s), 5);
	ck_assert_uint_eq(blitz_semaphore_queued(&s), 0);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(mutex_fifo_handoff)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_mutex m;
	struct blitz_task *t[16];

	reset_order();
	blitz_mutex_init(&m);
	ck_assert(blitz_mutex_try_lock(&m));
	for (int i = 0; i < 16; i++) {
		t[i] = spawn_wt(rt, P_MUTEX, &m, 1, i, false);
		WAIT_UNTIL(blitz_mutex_queued(&m) == (uint32_t)i + 1);
	}
	ck_assert(!blitz_mutex_try_lock(&m));
	blitz_mutex_unlock(&m);			/* hands off along the queue */
	join_all(t, 16);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(atomic_load(&order[i]), i);
	ck_assert(!blitz_mutex_is_locked(&m));
	ck_assert_uint_eq(blitz_mutex_queued(&m), 0);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(rwlock_queued_writer_blocks_readers)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_rwlock l;
	struct blitz_task *t[4];

	reset_order();
	blitz_rwlock_init(&l);
	ck_assert(blitz_rwlock_try_read(&l));		/* the test reads */
	t[0] = spawn_wt(rt, P_WRITE, &l, 0, 0, false);
	WAIT_UNTIL(blitz_rwlock_queued(&l) == 1);
	ck_assert(!blitz_rwlock_try_read(&l));		/* the queued writer blocks readers */
	t[1] = spawn_wt(rt, P_READ, &l, 0, 1, false);
	WAIT_UNTIL(blitz_rwlock_queued(&l) == 2);
	t[2] = spawn_wt(rt, P_READ, &l, 0, 2, false);
	WAIT_UNTIL(blitz_rwlock_queued(&l) == 3);
	t[3] = spawn_wt(rt, P_WRITE, &l, 0, 3, false);
	WAIT_UNTIL(blitz_rwlock_queued(&l) == 4);
	usleep(2000);
	ck_assert_int_eq(atomic_load(&done_n), 0);
	blitz_rwlock_read_unlock(&l);
	join_all(t, 4);
	/* The writer, then both readers (in either order), then the writer. */
	ck_assert_int_eq(atomic_load(&order[0]), 0);
	ck_assert_int_eq(atomic_load(&order[1]) + atomic_load(&order[2]), 3);
	ck_assert_int_eq(atomic_load(&order[3]), 3);
	ck_assert(blitz_rwlock_try_write(&l));
	blitz_rwlock_write_unlock(&l);
	blitz_runtime_free(rt);
}
END_TEST

/* ====================================================================== */
/* Interleaving stress.                                                    */

#define STRESS_TASKS 32

/* --- Semaphore: never more than PERMITS held; all permits come back. --- */

#define SEM_PERMITS 4
static struct blitz_semaphore g_sem;
static _Atomic int sem_held;
static _Atomic long sem_waits;

struct sem_task {
	struct blitz_co co;
	struct blitz_waiter w;
	uint64_t rng;
	long i, iters;
	int pend;
	uint32_t n;
	bool got;
};

static enum blitz_poll sem_task_poll(void *arg, struct blitz_cx *cx)
{
	struct sem_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->iters; s->i++) {
		s->n = 1 + (uint32_t)(rnd(&s->rng) % SEM_PERMITS);
		s->pend = 0;
		s->got = rnd(&s->rng) % 8 == 0 && blitz_semaphore_try_acquire(&g_sem, s->n);
		if (!s->got)
			BLITZ_AWAIT(&s->co, counted(&s->pend,
				blitz_semaphore_acquire_poll(&g_sem, &s->w, s->n, cx)));
		ck_assert_int_le(s->pend, 1);
		if (s->pend)
			atomic_fetch_add(&sem_waits, 1);
		ck_assert_int_le(atomic_fetch_add(&sem_held, (int)s->n) + (int)s->n, SEM_PERMITS);
		MAYBE_YIELD(s, cx);
		ck_assert_int_le(atomic_load(&sem_held), SEM_PERMITS);
		atomic_fetch_sub(&sem_held, (int)s->n);
		blitz_semaphore_release(&g_sem, s->n);
		MAYBE_YIELD(s, cx);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable sem_task_vt = BLITZ_TASK_VTABLE(sem_task_poll, NULL);

START_TEST(semaphore_stress)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[STRESS_TASKS];
	double t0 = now_s();

	blitz_semaphore_init(&g_sem, SEM_PERMITS);
	for (int i = 0; i < STRESS_TASKS; i++) {
		struct sem_task s = { .rng = 0x9e3779b97f4a7c15ull * (i + 1), .iters = test_scaled(3000) };

		t[i] = blitz_spawn(rt, &sem_task_vt, &s, sizeof(s));
	}
	join_all(t, STRESS_TASKS);
	ck_assert_uint_eq(blitz_semaphore_available(&g_sem), SEM_PERMITS);	/* none lost */
	ck_assert_uint_eq(blitz_semaphore_queued(&g_sem), 0);
	ck_assert_int_eq(atomic_load(&sem_held), 0);
	ck_assert_int_gt(atomic_load(&sem_waits), 0);
	printf("semaphore_stress: %ld acquisitions, %ld queued, %.2f s\n",
	       STRESS_TASKS * test_scaled(3000), atomic_load(&sem_waits), now_s() - t0);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * --- Mutex: one holder at a time (plain variables guarded by the mutex,
 * so ThreadSanitizer checks the hand-off's memory ordering too); queued
 * waiters get the lock in arrival order (their tickets increase). ---
 */

static struct blitz_mutex g_mtx;
static int mtx_holders;		/* under g_mtx */
static long mtx_count;		/* under g_mtx */
static uint32_t mtx_last_seq;	/* under g_mtx: ticket + 1 of the last queued entry */
static long mtx_queued;		/* under g_mtx */

struct mtx_task {
	struct blitz_co co;
	struct blitz_waiter w;
	uint64_t rng;
	long i, iters;
	int pend;
	bool got;
};

static enum blitz_poll mtx_task_poll(void *arg, struct blitz_cx *cx)
{
	struct mtx_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->iters; s->i++) {
		s->pend = 0;
		s->got = rnd(&s->rng) % 8 == 0 && blitz_mutex_try_lock(&g_mtx);
		if (!s->got)
			BLITZ_AWAIT(&s->co, counted(&s->pend, blitz_mutex_lock_poll(&g_mtx, &s->w, cx)));
		ck_assert_int_le(s->pend, 1);
		ck_assert_int_eq(mtx_holders, 0);
		mtx_holders = 1;
		if (s->pend) {
			/* FIFO: queued entries come in ticket order. */
			ck_assert_msg(mtx_last_seq == 0 || s->w.seq + 1 > mtx_last_seq,
				      "ticket %u entered after %u", s->w.seq, mtx_last_seq - 1);
			mtx_last_seq = s->w.seq + 1;
			mtx_queued++;
		}
		mtx_count++;
		MAYBE_YIELD(s, cx);	/* hold the lock across a yield */
		ck_assert_int_eq(mtx_holders, 1);
		mtx_holders = 0;
		blitz_mutex_unlock(&g_mtx);
		MAYBE_YIELD(s, cx);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable mtx_task_vt = BLITZ_TASK_VTABLE(mtx_task_poll, NULL);

START_TEST(mutex_stress)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[STRESS_TASKS];
	long iters = test_scaled(3000);
	double t0 = now_s();

	blitz_mutex_init(&g_mtx);
	for (int i = 0; i < STRESS_TASKS; i++) {
		struct mtx_task s = { .rng = 0x2545f4914f6cdd1dull * (i + 1), .iters = iters };

		t[i] = blitz_spawn(rt, &mtx_task_vt, &s, sizeof(s));
	}
	join_all(t, STRESS_TASKS);
	ck_assert_int_eq(mtx_count, STRESS_TASKS * iters);
	ck_assert(!blitz_mutex_is_locked(&g_mtx));
	ck_assert_uint_eq(blitz_mutex_queued(&g_mtx), 0);
	ck_assert_int_gt(mtx_queued, 0);
	printf("mutex_stress: %ld locks, %ld queued (FIFO checked), %.2f s\n",
	       mtx_count, mtx_queued, now_s() - t0);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * --- RwLock: writers alone, readers never beside a writer; the data a
 * writer changes is stable while read; FIFO between readers and writers:
 * a queued writer enters after every earlier queued entry, a queued reader
 * after every earlier queued writer. ---
 */

static struct blitz_rwlock g_rw;
static _Atomic int rw_readers, rw_writers;
static _Atomic uint32_t rw_max_seq;	/* ticket + 1 of the latest queued entry */
static _Atomic uint32_t rw_last_wseq;	/* ticket + 1 of the last queued writer entry */
static long rw_data;			/* written by writers, read by readers */
static _Atomic long rw_reads, rw_writes, rw_waits;

struct rw_task {
	struct blitz_co co;
	struct blitz_waiter w;
	uint64_t rng;
	long i, iters, snap;
	int pend;
	bool writer, got;
};

static void atomic_max(_Atomic uint32_t *a, uint32_t v)
{
	uint32_t cur = atomic_load(a);

	while (cur < v && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

static enum blitz_poll rw_task_poll(void *arg, struct blitz_cx *cx)
{
	struct rw_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->iters; s->i++) {
		s->writer = rnd(&s->rng) % 4 == 0;
		s->pend = 0;
		if (s->writer) {
			s->got = rnd(&s->rng) % 8 == 0 && blitz_rwlock_try_write(&g_rw);
			if (!s->got)
				BLITZ_AWAIT(&s->co, counted(&s->pend,
					blitz_rwlock_write_poll(&g_rw, &s->w, cx)));
			ck_assert_int_le(s->pend, 1);
			ck_assert_int_eq(atomic_fetch_add(&rw_writers, 1), 0);
			ck_assert_int_eq(atomic_load(&rw_readers), 0);
			if (s->pend) {
				ck_assert_uint_gt(s->w.seq + 1, atomic_load(&rw_max_seq));
				atomic_store(&rw_last_wseq, s->w.seq + 1);
				atomic_max(&rw_max_seq, s->w.seq + 1);
				atomic_fetch_add(&rw_waits, 1);
			}
			rw_data++;
			atomic_fetch_add(&rw_writes, 1);
			MAYBE_YIELD(s, cx);
			ck_assert_int_eq(atomic_load(&rw_readers), 0);
			atomic_fetch_sub(&rw_writers, 1);
			blitz_rwlock_write_unlock(&g_rw);
		} else {
			s->got = rnd(&s->rng) % 8 == 0 && blitz_rwlock_try_read(&g_rw);
			if (!s->got)
				BLITZ_AWAIT(&s->co, counted(&s->pend,
					blitz_rwlock_read_poll(&g_rw, &s->w, cx)));
			ck_assert_int_le(s->pend, 1);
			atomic_fetch_add(&rw_readers, 1);
			ck_assert_int_eq(atomic_load(&rw_writers), 0);
			if (s->pend) {
				ck_assert_uint_gt(s->w.seq + 1, atomic_load(&rw_last_wseq));
				atomic_max(&rw_max_seq, s->w.seq + 1);
				atomic_fetch_add(&rw_waits, 1);
			}
			s->snap = rw_data;
			atomic_fetch_add(&rw_reads, 1);
			MAYBE_YIELD(s, cx);
			ck_assert_int_eq(rw_data, s->snap);
			ck_assert_int_eq(atomic_load(&rw_writers), 0);
			atomic_fetch_sub(&rw_readers, 1);
			blitz_rwlock_read_unlock(&g_rw);
		}
		MAYBE_YIELD(s, cx);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable rw_task_vt = BLITZ_TASK_VTABLE(rw_task_poll, NULL);

START_TEST(rwlock_stress)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[STRESS_TASKS];
	long iters = test_scaled(3000);
	double t0 = now_s();

	blitz_rwlock_init(&g_rw);
	for (int i = 0; i < STRESS_TASKS; i++) {
		struct rw_task s = { .rng = 0xda942042e4dd58b5ull * (i + 1), .iters = iters };

		t[i] = blitz_spawn(rt, &rw_task_vt, &s, sizeof(s));
	}
	join_all(t, STRESS_TASKS);
	ck_assert_int_eq(atomic_load(&rw_reads) + atomic_load(&rw_writes), STRESS_TASKS * iters);
	ck_assert_int_eq(rw_data, atomic_load(&rw_writes));
	ck_assert_uint_eq(blitz_rwlock_queued(&g_rw), 0);
	ck_assert(blitz_rwlock_try_write(&g_rw));	/* every permit came back */
	blitz_rwlock_write_unlock(&g_rw);
	ck_assert_int_gt(atomic_load(&rw_waits), 0);
	printf("rwlock_stress: %ld reads, %ld writes, %ld queued, %.2f s\n",
	       atomic_load(&rw_reads), atomic_load(&rw_writes), atomic_load(&rw_waits),
	       now_s() - t0);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * --- Barrier: each generation releases exactly N (all N arrived before
 * any left; one leader; N departures), over many generations. ---
 */

#define BAR_N 8
static struct blitz_barrier g_bar;
static _Atomic int *bar_arrived, *bar_left, *bar_leaders;

struct bar_task {
	struct blitz_co co;
	struct blitz_waiter w;
	uint64_t rng;
	long g, gens;
	int pend;
	bool leader;
};

static enum blitz_poll bar_task_poll(void *arg, struct blitz_cx *cx)
{
	struct bar_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->g = 0; s->g < s->gens; s->g++) {
		MAYBE_YIELD(s, cx);
		ck_assert_int_le(atomic_fetch_add(&bar_arrived[s->g], 1), BAR_N - 1);
		s->pend = 0;
		BLITZ_AWAIT(&s->co, counted(&s->pend,
			blitz_barrier_wait_poll(&g_bar, &s->w, cx, &s->leader)));
		ck_assert_int_le(s->pend, 1);
		ck_assert_int_eq(s->pend, !s->leader);	/* the leader never waits */
		ck_assert_int_eq(atomic_load(&bar_arrived[s->g]), BAR_N);
		ck_assert_uint_ge(blitz_barrier_generation(&g_bar), s->g + 1);
		if (s->leader)
			atomic_fetch_add(&bar_leaders[s->g], 1);
		atomic_fetch_add(&bar_left[s->g], 1);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable bar_task_vt = BLITZ_TASK_VTABLE(bar_task_poll, NULL);

START_TEST(barrier_stress)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[BAR_N];
	long gens = test_scaled(4000);
	double t0 = now_s();

	bar_arrived = calloc(gens, sizeof(*bar_arrived));
	bar_left = calloc(gens, sizeof(*bar_left));
	bar_leaders = calloc(gens, sizeof(*bar_leaders));
	blitz_barrier_init(&g_bar, BAR_N);
	for (int i = 0; i < BAR_N; i++) {
		struct bar_task s = { .rng = 0x9e3779b97f4a7c15ull * (i + 7), .gens = gens };

		t[i] = blitz_spawn(rt, &bar_task_vt, &s, sizeof(s));
	}
	join_all(t, BAR_N);
	for (long g = 0; g < gens; g++) {
		ck_assert_int_eq(atomic_load(&bar_leaders[g]), 1);
		ck_assert_int_eq(atomic_load(&bar_left[g]), BAR_N);
	}
	ck_assert_uint_eq(blitz_barrier_generation(&g_bar), gens);
	ck_assert_uint_eq(blitz_barrier_queued(&g_bar), 0);
	printf("barrier_stress: %ld generations of %d, %.2f s\n", gens, BAR_N, now_s() - t0);
	free(bar_arrived);
	free(bar_left);
	free(bar_leaders);
	blitz_runtime_free(rt);
}
END_TEST

/* A thread takes part through try_wait: it is the leader of every generation. */
static struct blitz_barrier th_bar;

static void *barrier_thread(void *arg)
{
	long gens = *(long *)arg;

	for (long g = 0; g < gens; g++)
		while (!blitz_barrier_try_wait(&th_bar))
			sched_yield();
	return NULL;
}

struct th_bar_task {
	struct blitz_co co;
	struct blitz_waiter w;
	long g, gens;
	bool leader;
};

static enum blitz_poll th_bar_task_poll(void *arg, struct blitz_cx *cx)
{
	struct th_bar_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->g = 0; s->g < s->gens; s->g++) {
		BLITZ_AWAIT(&s->co, blitz_barrier_wait_poll(&th_bar, &s->w, cx, &s->leader));
		ck_assert(!s->leader);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable th_bar_task_vt = BLITZ_TASK_VTABLE(th_bar_task_poll, NULL);

START_TEST(barrier_thread_leads_with_try_wait)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[3];
	long gens = test_scaled(2000);
	pthread_t th;

	blitz_barrier_init(&th_bar, 4);
	for (int i = 0; i < 3; i++) {
		struct th_bar_task s = { .gens = gens };

		t[i] = blitz_spawn(rt, &th_bar_task_vt, &s, sizeof(s));
	}
	pthread_create(&th, NULL, barrier_thread, &gens);
	join_all(t, 3);
	pthread_join(th, NULL);
	ck_assert_uint_eq(blitz_barrier_generation(&th_bar), gens);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * --- Notify, notify_one: never loses a permit.  The producer notifies
 * again only once the previous notification was consumed, so none may
 * coalesce: each must be consumed exactly once, whether a consumer was
 * queued (handed over) or not yet (stored). ---
 */

#define NOTIFY_CONSUMERS 4
static struct blitz_notify g_ntf;
static _Atomic long ntf_consumed;
static _Atomic int ntf_stop, ntf_exited;
static _Atomic long ntf_queued_hits;

struct ntf_consumer {
	struct blitz_co co;
	struct blitz_waiter w;
	uint64_t rng;
	int pend;
};

static enum blitz_poll ntf_consumer_poll(void *arg, struct blitz_cx *cx)
{
	struct ntf_consumer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		MAYBE_YIELD(s, cx);
		s->pend = 0;
		BLITZ_AWAIT(&s->co, counted(&s->pend, blitz_notify_notified_poll(&g_ntf, &s->w, cx)));
		ck_assert_int_le(s->pend, 1);
		if (atomic_load(&ntf_stop))
			break;
		if (s->pend)
			atomic_fetch_add(&ntf_queued_hits, 1);
		atomic_fetch_add(&ntf_consumed, 1);
		MAYBE_YIELD(s, cx);
		MAYBE_YIELD(s, cx);
	}
	atomic_fetch_add(&ntf_exited, 1);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable ntf_consumer_vt = BLITZ_TASK_VTABLE(ntf_consumer_poll, NULL);

struct ntf_producer {
	struct blitz_co co;
	uint64_t rng;
	long i, n;
	int k, consumers;
};

static enum blitz_poll ntf_producer_poll(void *arg, struct blitz_cx *cx)
{
	struct ntf_producer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		while (atomic_load(&ntf_consumed) < s->i)
			BLITZ_YIELD(&s->co, cx);
		ck_assert_int_eq(atomic_load(&ntf_consumed), s->i);	/* never two for one */
		MAYBE_YIELD(s, cx);
		blitz_notify_one(&g_ntf);
	}
	while (atomic_load(&ntf_consumed) < s->n)
		BLITZ_YIELD(&s->co, cx);
	atomic_store(&ntf_stop, 1);
	for (s->k = 0; s->k < s->consumers; s->k++) {
		blitz_notify_one(&g_ntf);
		while (atomic_load(&ntf_exited) <= s->k)
			BLITZ_YIELD(&s->co, cx);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable ntf_producer_vt = BLITZ_TASK_VTABLE(ntf_producer_poll, NULL);

/* consumers: 1 (the permit is often stored: nobody waits) or 4 (handed over). */
static void run_notify_one(int consumers, long n)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[NOTIFY_CONSUMERS + 1];
	struct ntf_producer p = { .rng = 77, .n = n, .consumers = consumers };
	double t0 = now_s();

	blitz_notify_init(&g_ntf);
	atomic_store(&ntf_consumed, 0);
	atomic_store(&ntf_stop, 0);
	atomic_store(&ntf_exited, 0);
	atomic_store(&ntf_queued_hits, 0);
	for (int i = 0; i < consumers; i++) {
		struct ntf_consumer s = { .rng = 0x9e3779b97f4a7c15ull * (i + 3) };

		t[i] = blitz_spawn(rt, &ntf_consumer_vt, &s, sizeof(s));
	}
	t[consumers] = blitz_spawn(rt, &ntf_producer_vt, &p, sizeof(p));
	join_all(t, consumers + 1);
	ck_assert_int_eq(atomic_load(&ntf_consumed), p.n);
	ck_assert(!blitz_notify_try_notified(&g_ntf));
	ck_assert_uint_eq(blitz_notify_queued(&g_ntf), 0);
	printf("notify_one: %d consumers, %ld notifications, %ld to queued waiters "
	       "(the rest stored), %.2f s\n",
	       consumers, p.n, atomic_load(&ntf_queued_hits), now_s() - t0);
	blitz_runtime_free(rt);
}

START_TEST(notify_one_never_loses_a_permit)
{
	run_notify_one(1, test_scaled(10000));
	run_notify_one(NOTIFY_CONSUMERS, test_scaled(10000));
}
END_TEST

/*
 * --- Notify, notify_waiters: wakes exactly the tasks waiting at the call.
 * 48 waiters (more than one wake batch, so the lock is dropped mid-way and
 * woken tasks queue again meanwhile); each must be woken once per round. ---
 */

#define NW_WAITERS 48
static struct blitz_notify nw;
static _Atomic long nw_round, nw_woken;

struct nw_task {
	struct blitz_co co;
	struct blitz_waiter w;
	uint64_t rng;
	long r, rounds;
	int pend;
};

static enum blitz_poll nw_task_poll(void *arg, struct blitz_cx *cx)
{
	struct nw_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->r = 1; s->r <= s->rounds; s->r++) {
		s->pend = 0;
		BLITZ_AWAIT(&s->co, counted(&s->pend, blitz_notify_notified_poll(&nw, &s->w, cx)));
		ck_assert_int_eq(s->pend, 1);
		/* Woken by the r-th call, not by an earlier call a second time. */
		ck_assert_int_eq(atomic_load(&nw_round), s->r);
		atomic_fetch_add(&nw_woken, 1);
		MAYBE_YIELD(s, cx);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable nw_task_vt = BLITZ_TASK_VTABLE(nw_task_poll, NULL);

START_TEST(notify_waiters_wakes_exactly_the_waiting)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[NW_WAITERS + 1];
	long rounds = test_scaled(300);
	double t0 = now_s();

	reset_order();
	blitz_notify_init(&nw);
	for (int i = 0; i < NW_WAITERS; i++) {
		struct nw_task s = { .rng = 0x9e3779b97f4a7c15ull * (i + 5), .rounds = rounds };

		t[i] = blitz_spawn(rt, &nw_task_vt, &s, sizeof(s));
	}
	for (long r = 1; r <= rounds; r++) {
		WAIT_UNTIL(blitz_notify_queued(&nw) == NW_WAITERS);
		atomic_store(&nw_round, r);
		blitz_notify_waiters(&nw);
		WAIT_UNTIL(atomic_load(&nw_woken) >= r * NW_WAITERS);
		ck_assert(!blitz_notify_try_notified(&nw));	/* stores nothing */
	}
	join_all(t, NW_WAITERS);
	ck_assert_int_eq(atomic_load(&nw_woken), rounds * NW_WAITERS);
	/* One arriving after the last call stays queued until notified. */
	t[0] = spawn_wt(rt, P_NOTIFY, &nw, 0, 0, false);
	WAIT_UNTIL(blitz_notify_queued(&nw) == 1);
	usleep(2000);
	ck_assert_int_eq(atomic_load(&done_n), 0);
	blitz_notify_one(&nw);
	join_all(t, 1);
	ck_assert(!blitz_notify_try_notified(&nw));
	printf("notify_waiters: %ld rounds of %d, %.2f s\n", rounds, NW_WAITERS, now_s() - t0);
	blitz_runtime_free(rt);
}
END_TEST

/* --- OnceCell: initialized exactly once under contention; all see it. --- */

#define ONCE_TASKS 16
static struct blitz_oncecell g_once;
static _Atomic int once_inits;
static long once_target;

struct once_task {
	struct blitz_co co;
	struct blitz_co ico;	/* the initializer's own coroutine */
	struct blitz_waiter w;
	uint64_t rng;
	int k, pend;
	void *v;
};

/* An async initializer: yields a few times before producing the value. */
static enum blitz_poll once_init(void *arg, struct blitz_cx *cx, void **value)
{
	struct once_task *s = arg;

	BLITZ_CO_BEGIN(&s->ico);
	atomic_fetch_add(&once_inits, 1);
	for (s->k = 0; s->k < 3; s->k++)
		BLITZ_YIELD(&s->ico, cx);
	*value = &once_target;
	BLITZ_CO_END(&s->ico);
}

static enum blitz_poll once_task_poll(void *arg, struct blitz_cx *cx)
{
	struct once_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	MAYBE_YIELD(s, cx);
	BLITZ_AWAIT(&s->co, counted(&s->pend, blitz_oncecell_get_or_init_poll(&g_once, &s->w, cx,
								    once_init, s, &s->v)));
	ck_assert_ptr_eq(s->v, &once_target);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable once_task_vt = BLITZ_TASK_VTABLE(once_task_poll, NULL);

START_TEST(oncecell_initializes_once)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[ONCE_TASKS];
	long rounds = test_scaled(500);
	double t0 = now_s();

	for (long r = 0; r < rounds; r++) {
		void *v;

		blitz_oncecell_init(&g_once);
		atomic_store(&once_inits, 0);
		for (int i = 0; i < ONCE_TASKS; i++) {
			struct once_task s = { .rng = 0x9e3779b97f4a7c15ull * (r * ONCE_TASKS + i + 1) };

			t[i] = blitz_spawn(rt, &once_task_vt, &s, sizeof(s));
		}
		join_all(t, ONCE_TASKS);
		ck_assert_int_eq(atomic_load(&once_inits), 1);
		ck_assert(blitz_oncecell_get(&g_once, &v));
		ck_assert_ptr_eq(v, &once_target);
		ck_assert_uint_eq(blitz_oncecell_queued(&g_once), 0);
	}
	printf("oncecell: %ld rounds of %d, %.2f s\n", rounds, ONCE_TASKS, now_s() - t0);
	blitz_runtime_free(rt);
}
END_TEST

/* The initializer is cancelled mid-init: a waiter takes over. */
START_TEST(oncecell_takeover_after_cancelled_init)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_oncecell c;
	struct blitz_task *first, *t[3];
	struct wt s = { .prim = P_ONCE, .p = &c, .id = 9, .init_mode = 1 };
	void *v;

	reset_order();
	blitz_oncecell_init(&c);
	first = blitz_spawn(rt, &wt_vt, &s, sizeof(s));
	WAIT_UNTIL(atomic_load(&init_started) == 1);
	ck_assert_int_eq(blitz_oncecell_state(&c), BLITZ_ONCECELL_INITIALIZING);
	for (int i = 0; i < 3; i++) {
		t[i] = spawn_wt(rt, P_ONCE, &c, 0, i, false);
		WAIT_UNTIL(blitz_oncecell_queued(&c) == (uint32_t)i + 1);
	}
	ck_assert_int_eq(blitz_oncecell_try_set(&c, NULL), -EBUSY);
	blitz_task_cancel(first);
	ck_assert_int_eq(blitz_join(first), -ECANCELED);
	blitz_task_release(first);
	join_all(t, 3);
	ck_assert_int_eq(atomic_load(&init_started), 2);	/* the first, one taker */
	ck_assert_int_eq(atomic_load(&init_done), 1);
	ck_assert(blitz_oncecell_get(&c, &v));
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(blitz_oncecell_queued(&c), 0);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * --- CancelToken: cancelling the root wakes every waiter on it and on its
 * children and grandchildren, each once, while other tasks keep creating
 * and destroying child tokens under the same parents. ---
 */

#define TOK_KIDS 4
#define TOK_WAITERS 64
#define TOK_CHURN 4
static struct blitz_cancel_token tok_root, tok_kids[TOK_KIDS], tok_grand[TOK_KIDS][2];
static _Atomic int tok_woken;
static _Atomic long tok_churns;

static struct blitz_cancel_token *tok_pick(int i)
{
	switch (i % 3) {
	case 0: return &tok_root;
	case 1: return &tok_kids[i % TOK_KIDS];
	default: return &tok_grand[i % TOK_KIDS][i & 1];
	}
}

static uint32_t tok_queued(void)
{
	uint32_t n = blitz_cancel_token_queued(&tok_root);

	for (int i = 0; i < TOK_KIDS; i++)
		n += blitz_cancel_token_queued(&tok_kids[i]) +
		     blitz_cancel_token_queued(&tok_grand[i][0]) +
		     blitz_cancel_token_queued(&tok_grand[i][1]);
	return n;
}

struct tok_waiter {
	struct blitz_co co;
	struct blitz_waiter w;
	struct blitz_cancel_token *t;
	int pend;
};

static enum blitz_poll tok_waiter_poll(void *arg, struct blitz_cx *cx)
{
	struct tok_waiter *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, counted(&s->pend, blitz_cancel_token_cancelled_poll(s->t, &s->w, cx)));
	ck_assert_int_eq(s->pend, 1);
	ck_assert(blitz_cancel_token_is_cancelled(s->t));
	atomic_fetch_add(&tok_woken, 1);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable tok_waiter_vt = BLITZ_TASK_VTABLE(tok_waiter_poll, NULL);

struct tok_churn {
	struct blitz_co co;
	struct blitz_cancel_token mine;
	struct blitz_cancel_token *parent;
	uint64_t rng;
	bool last;
};

static enum blitz_poll tok_churn_poll(void *arg, struct blitz_cx *cx)
{
	struct tok_churn *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	do {
		blitz_cancel_token_init_child(&s->mine, s->parent);
		/* Cancelled at birth once the parent is: then we are done. */
		s->last = blitz_cancel_token_is_cancelled(&s->mine);
		MAYBE_YIELD(s, cx);
		blitz_cancel_token_destroy(&s->mine);
		atomic_fetch_add(&tok_churns, 1);
		MAYBE_YIELD(s, cx);
	} while (!s->last);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable tok_churn_vt = BLITZ_TASK_VTABLE(tok_churn_poll, NULL);

START_TEST(cancel_token_tree_wakes_everyone)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *w[TOK_WAITERS], *c[TOK_CHURN];
	struct blitz_cancel_token late;
	long rounds = test_scaled(40);
	double t0 = now_s();

	for (long r = 0; r < rounds; r++) {
		atomic_store(&tok_woken, 0);
		blitz_cancel_token_init(&tok_root);
		for (int i = 0; i < TOK_KIDS; i++) {
			blitz_cancel_token_init_child(&tok_kids[i], &tok_root);
			blitz_cancel_token_init_child(&tok_grand[i][0], &tok_kids[i]);
			blitz_cancel_token_init_child(&tok_grand[i][1], &tok_kids[i]);
		}
		for (int i = 0; i < TOK_CHURN; i++) {
			struct tok_churn s = { .parent = i ? &tok_kids[i % TOK_KIDS] : &tok_root,
					       .rng = 0x9e3779b97f4a7c15ull * (r * 8 + i + 1) };

			c[i] = blitz_spawn(rt, &tok_churn_vt, &s, sizeof(s));
		}
		for (int i = 0; i < TOK_WAITERS; i++) {
			struct tok_waiter s = { .t = tok_pick(i) };

			w[i] = blitz_spawn(rt, &tok_waiter_vt, &s, sizeof(s));
		}
		WAIT_UNTIL(tok_queued() == TOK_WAITERS);
		blitz_cancel_token_cancel(&tok_root);
		join_all(w, TOK_WAITERS);
		join_all(c, TOK_CHURN);
		ck_assert_int_eq(atomic_load(&tok_woken), TOK_WAITERS);
		ck_assert_uint_eq(tok_queued(), 0);
		for (int i = 0; i < TOK_KIDS; i++) {
			ck_assert(blitz_cancel_token_is_cancelled(&tok_kids[i]));
			ck_assert(blitz_cancel_token_is_cancelled(&tok_grand[i][0]));
			ck_assert(blitz_cancel_token_is_cancelled(&tok_grand[i][1]));
		}
		blitz_cancel_token_init_child(&late, &tok_kids[0]);
		ck_assert(blitz_cancel_token_is_cancelled(&late));
		blitz_cancel_token_destroy(&late);
		for (int i = 0; i < TOK_KIDS; i++) {
			blitz_cancel_token_destroy(&tok_grand[i][0]);
			blitz_cancel_token_destroy(&tok_grand[i][1]);
			blitz_cancel_token_destroy(&tok_kids[i]);
		}
		blitz_cancel_token_destroy(&tok_root);
	}
	printf("cancel_token: %ld rounds, %ld child tokens churned, %.2f s\n",
	       rounds, atomic_load(&tok_churns), now_s() - t0);
	blitz_runtime_free(rt);
}
END_TEST

/* ====================================================================== */
/* The non-blocking forms from plain threads, against tasks.               */

#define TH_THREADS 2
static struct blitz_mutex th_mtx;
static int th_holders;		/* under th_mtx */
static long th_count;		/* under th_mtx */
static struct blitz_rwlock th_rw;
static _Atomic int th_readers, th_writers;

static void *try_thread(void *arg)
{
	long want = *(long *)arg, got = 0;

	while (got < want) {
		if (blitz_mutex_try_lock(&th_mtx)) {
			ck_assert_int_eq(th_holders, 0);
			th_holders = 1;
			th_count++;
			th_holders = 0;
			blitz_mutex_unlock(&th_mtx);
			got++;
		}
		if (blitz_rwlock_try_read(&th_rw)) {
			atomic_fetch_add(&th_readers, 1);
			ck_assert_int_eq(atomic_load(&th_writers), 0);
			atomic_fetch_sub(&th_readers, 1);
			blitz_rwlock_read_unlock(&th_rw);
		}
		if (blitz_rwlock_try_write(&th_rw)) {
			ck_assert_int_eq(atomic_fetch_add(&th_writers, 1), 0);
			ck_assert_int_eq(atomic_load(&th_readers), 0);
			atomic_fetch_sub(&th_writers, 1);
			blitz_rwlock_write_unlock(&th_rw);
		}
		sched_yield();
	}
	return NULL;
}

struct th_task {
	struct blitz_co co;
	struct blitz_waiter w;
	uint64_t rng;
	long i, iters;
};

static enum blitz_poll th_task_poll(void *arg, struct blitz_cx *cx)
{
	struct th_task *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->iters; s->i++) {
		BLITZ_AWAIT(&s->co, blitz_mutex_lock_poll(&th_mtx, &s->w, cx));
		ck_assert_int_eq(th_holders, 0);
		th_holders = 1;
		th_count++;
		MAYBE_YIELD(s, cx);
		th_holders = 0;
		blitz_mutex_unlock(&th_mtx);
		if (s->i & 1) {
			BLITZ_AWAIT(&s->co, blitz_rwlock_write_poll(&th_rw, &s->w, cx));
			ck_assert_int_eq(atomic_fetch_add(&th_writers, 1), 0);
			ck_assert_int_eq(atomic_load(&th_readers), 0);
			MAYBE_YIELD(s, cx);
			atomic_fetch_sub(&th_writers, 1);
			blitz_rwlock_write_unlock(&th_rw);
		} else {
			BLITZ_AWAIT(&s->co, blitz_rwlock_read_poll(&th_rw, &s->w, cx));
			atomic_fetch_add(&th_readers, 1);
			ck_assert_int_eq(atomic_load(&th_writers), 0);
			MAYBE_YIELD(s, cx);
			atomic_fetch_sub(&th_readers, 1);
			blitz_rwlock_read_unlock(&th_rw);
		}
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable th_task_vt = BLITZ_TASK_VTABLE(th_task_poll, NULL);

START_TEST(try_forms_from_threads_against_tasks)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t[8];
	pthread_t th[TH_THREADS];
	long per_thread = test_scaled(2000), iters = test_scaled(2000);

	blitz_mutex_init(&th_mtx);
	blitz_rwlock_init(&th_rw);
	for (int i = 0; i < TH_THREADS; i++)
		pthread_create(&th[i], NULL, try_thread, &per_thread);
	for (int i = 0; i < 8; i++) {
		struct th_task s = { .rng = 0x9e3779b97f4a7c15ull * (i + 11), .iters = iters };

		t[i] = blitz_spawn(rt, &th_task_vt, &s, sizeof(s));
	}
	join_all(t, 8);
	for (int i = 0; i < TH_THREADS; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(th_count, 8 * iters + TH_THREADS * per_thread);
	ck_assert(!blitz_mutex_is_locked(&th_mtx));
	ck_assert(blitz_rwlock_try_write(&th_rw));
	blitz_rwlock_write_unlock(&th_rw);
	blitz_runtime_free(rt);
}
END_TEST

/* ====================================================================== */
/* Cancelling waiting tasks: nothing leaks, no permit is lost.            */

/* Cancel every other queued waiter; the rest still get through. */
static void cancel_half(struct blitz_task **t, int n)
{
	for (int i = 1; i < n; i += 2)
		blitz_task_cancel(t[i]);
	for (int i = 1; i < n; i += 2) {
		ck_assert_int_eq(blitz_join(t[i]), -ECANCELED);
		blitz_task_release(t[i]);
	}
}

static void join_even(struct blitz_task **t, int n)
{
	for (int i = 0; i < n; i += 2) {
		ck_assert_int_eq(blitz_join(t[i]), 0);
		blitz_task_release(t[i]);
	}
}

START_TEST(cancelled_waiters_leak_nothing)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_semaphore s;
	struct blitz_mutex m;
	struct blitz_rwlock l;
	struct blitz_barrier b;
	struct blitz_notify n;
	struct blitz_cancel_token tok;
	struct blitz_task *t[16];

	/* Semaphore: queued waiters, some holding a partial assignment. */
	reset_order();
	blitz_semaphore_init(&s, 4);
	ck_assert(blitz_semaphore_try_acquire(&s, 4));
	for (int i = 0; i < 16; i++) {
		t[i] = spawn_wt(rt, P_SEM, &s, 1 + i % 3, i, false);
		WAIT_UNTIL(blitz_semaphore_queued(&s) == (uint32_t)i + 1);
	}
	/* The head (wants 1) goes; the permit it gives back waits with t[1]
	 * (wants 2) as a partial assignment. */
	blitz_semaphore_release(&s, 1);
	WAIT_UNTIL(atomic_load(&done_n) == 1);
	ck_assert_uint_eq(blitz_semaphore_available(&s), 0);
	ck_assert_uint_eq(blitz_semaphore_queued(&s), 15);
	cancel_half(t, 16);			/* t[1] hands its permit on to t[2] */
	ck_assert_uint_eq(blitz_semaphore_queued(&s), 7);
	ck_assert_uint_eq(blitz_semaphore_available(&s), 0);
	blitz_semaphore_release(&s, 3);		/* the test's other 3 */
	join_even(t, 16);
	ck_assert_uint_eq(blitz_semaphore_available(&s), 4);
	ck_assert_uint_eq(blitz_semaphore_queued(&s), 0);

	/* Mutex. */
	reset_order();
	blitz_mutex_init(&m);
	ck_assert(blitz_mutex_try_lock(&m));
	for (int i = 0; i < 16; i++) {
		t[i] = spawn_wt(rt, P_MUTEX, &m, 1, i, false);
		WAIT_UNTIL(blitz_mutex_queued(&m) == (uint32_t)i + 1);
	}
	cancel_half(t, 16);
	ck_assert_uint_eq(blitz_mutex_queued(&m), 8);
	blitz_mutex_unlock(&m);
	join_even(t, 16);
	ck_assert(!blitz_mutex_is_locked(&m));

	/* RwLock: the queued writer (holding the other permits) is cancelled:
	 * the reader queued behind it gets in while the test still reads. */
	reset_order();
	blitz_rwlock_init(&l);
	ck_assert(blitz_rwlock_try_read(&l));
	t[0] = spawn_wt(rt, P_READ, &l, 0, 0, false);	/* not queued: reads at once */
	ck_assert_int_eq(blitz_join(t[0]), 0);
	blitz_task_release(t[0]);
	t[1] = spawn_wt(rt, P_WRITE, &l, 0, 1, false);
	WAIT_UNTIL(blitz_rwlock_queued(&l) == 1);
	t[2] = spawn_wt(rt, P_READ, &l, 0, 2, false);
	WAIT_UNTIL(blitz_rwlock_queued(&l) == 2);
	blitz_task_cancel(t[1]);
	ck_assert_int_eq(blitz_join(t[1]), -ECANCELED);
	blitz_task_release(t[1]);
	ck_assert_int_eq(blitz_join(t[2]), 0);	/* while the test still holds its read */
	blitz_task_release(t[2]);
	blitz_rwlock_read_unlock(&l);
	ck_assert(blitz_rwlock_try_write(&l));
	blitz_rwlock_write_unlock(&l);
	ck_assert_uint_eq(blitz_rwlock_queued(&l), 0);

	/* Barrier of 4: a cancelled arrival no longer counts. */
	reset_order();
	blitz_barrier_init(&b, 4);
	for (int i = 0; i < 3; i++) {
		t[i] = spawn_wt(rt, P_BARRIER, &b, 0, i, false);
		WAIT_UNTIL(blitz_barrier_queued(&b) == (uint32_t)i + 1);
	}
	blitz_task_cancel(t[1]);
	ck_assert_int_eq(blitz_join(t[1]), -ECANCELED);
	blitz_task_release(t[1]);
	ck_assert(!blitz_barrier_try_wait(&b));		/* 2 arrived, not 3 */
	t[1] = spawn_wt(rt, P_BARRIER, &b, 0, 1, false);
	WAIT_UNTIL(blitz_barrier_queued(&b) == 3);
	ck_assert_uint_eq(blitz_barrier_generation(&b), 0);
	ck_assert(blitz_barrier_try_wait(&b));		/* the 4th: leader */
	join_all(t, 3);
	ck_assert_uint_eq(blitz_barrier_generation(&b), 1);

	/* Notify. */
	blitz_notify_init(&n);
	for (int i = 0; i < 4; i++) {
		t[i] = spawn_wt(rt, P_NOTIFY, &n, 0, i, false);
		WAIT_UNTIL(blitz_notify_queued(&n) == (uint32_t)i + 1);
	}
	cancel_half(t, 4);
	ck_assert_uint_eq(blitz_notify_queued(&n), 2);
	blitz_notify_waiters(&n);
	join_even(t, 4);
	ck_assert(!blitz_notify_try_notified(&n));

	/* CancelToken. */
	blitz_cancel_token_init(&tok);
	for (int i = 0; i < 4; i++) {
		t[i] = spawn_wt(rt, P_TOKEN, &tok, 0, i, false);
		WAIT_UNTIL(blitz_cancel_token_queued(&tok) == (uint32_t)i + 1);
	}
	cancel_half(t, 4);
	ck_assert_uint_eq(blitz_cancel_token_queued(&tok), 2);
	blitz_cancel_token_cancel(&tok);
	join_even(t, 4);
	blitz_cancel_token_destroy(&tok);

	blitz_runtime_free(rt);
}
END_TEST

/*
 * The race the cancel protocol is for: a grant lands, and the task is
 * cancelled before it polls again.  Whatever the interleaving, the permits
 * (the lock, the notification) must come back.
 */
START_TEST(cancel_racing_grant_loses_nothing)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_semaphore s;
	struct blitz_mutex m;
	struct blitz_notify n;
	struct blitz_task *t[8];
	long rounds = test_scaled(300);
	int granted_then_cancelled = 0;

	for (long r = 0; r < rounds; r++) {
		reset_order();
		blitz_semaphore_init(&s, 2);
		ck_assert(blitz_semaphore_try_acquire(&s, 2));
		for (int i = 0; i < 8; i++)
			t[i] = spawn_wt(rt, P_SEM, &s, 1 + (i & 1), i, false);
		WAIT_UNTIL(blitz_semaphore_queued(&s) == 8);
		blitz_semaphore_release(&s, 2);
		for (int i = (int)(r % 3); i < 8; i += 2)
			blitz_task_cancel(t[i]);
		for (int i = 0; i < 8; i++) {
			blitz_join(t[i]);
			blitz_task_release(t[i]);
		}
		ck_assert_uint_eq(blitz_semaphore_available(&s), 2);
		ck_assert_uint_eq(blitz_semaphore_queued(&s), 0);

		blitz_mutex_init(&m);
		ck_assert(blitz_mutex_try_lock(&m));
		for (int i = 0; i < 4; i++)
			t[i] = spawn_wt(rt, P_MUTEX, &m, 1, i, false);
		WAIT_UNTIL(blitz_mutex_queued(&m) == 4);
		blitz_mutex_unlock(&m);
		for (int i = (int)(r & 1); i < 4; i++)
			blitz_task_cancel(t[i]);
		for (int i = 0; i < 4; i++) {
			blitz_join(t[i]);
			blitz_task_release(t[i]);
		}
		ck_assert(!blitz_mutex_is_locked(&m));
		ck_assert_uint_eq(blitz_mutex_queued(&m), 0);

		/* Consumed by the waiter, or handed back and stored: one of the two. */
		blitz_notify_init(&n);
		t[0] = spawn_wt(rt, P_NOTIFY, &n, 0, 0, false);
		WAIT_UNTIL(blitz_notify_queued(&n) == 1);
		blitz_notify_one(&n);
		blitz_task_cancel(t[0]);
		blitz_join(t[0]);
		{
			bool consumed = ((struct wt *)blitz_task_state(t[0]))->done;
			bool stored = blitz_notify_try_notified(&n);

			ck_assert_int_ne(consumed, stored);
			granted_then_cancelled += stored;
		}
		blitz_task_release(t[0]);
	}
	printf("cancel vs grant: %ld rounds; a granted notification was handed back %d times\n",
	       rounds, granted_then_cancelled);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * Shutdown drops tasks queued on primitives, and their holders: a holder's
 * drop releases, which grants and wakes a queued task in the middle of the
 * shutdown; that task's drop hands the grant back.  Nothing stays queued,
 * no permit is lost, ASan/LSan see every task and waker freed.
 */
START_TEST(shutdown_with_holders_and_waiters)
{
	struct blitz_runtime *rt = new_rt(2);
	static struct blitz_semaphore s;
	static struct blitz_mutex m;
	static struct blitz_rwlock l;
	static struct blitz_notify n;
	struct wt hs = { .prim = P_SEM, .p = &s, .n = 2, .hold_forever = true };
	struct wt hm = { .prim = P_MUTEX, .p = &m, .hold_forever = true };
	struct wt hl = { .prim = P_READ, .p = &l, .hold_forever = true };

	reset_order();
	blitz_semaphore_init(&s, 2);
	blitz_mutex_init(&m);
	blitz_rwlock_init(&l);
	blitz_notify_init(&n);
	ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &hs, sizeof(hs)), 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &hm, sizeof(hm)), 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &hl, sizeof(hl)), 0);
	WAIT_UNTIL(atomic_load(&order_n) == 3);		/* the three hold */
	for (int i = 0; i < 8; i++) {
		struct wt a = { .prim = P_SEM, .p = &s, .n = 1 + (i & 1) };
		struct wt b = { .prim = P_MUTEX, .p = &m };
		struct wt c = { .prim = P_WRITE, .p = &l };
		struct wt d = { .prim = P_NOTIFY, .p = &n };

		ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &a, sizeof(a)), 0);
		ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &b, sizeof(b)), 0);
		ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &c, sizeof(c)), 0);
		ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &d, sizeof(d)), 0);
	}
	WAIT_UNTIL(blitz_rwlock_queued(&l) == 8);
	for (int i = 0; i < 4; i++) {	/* readers queue behind the writers */
		struct wt c = { .prim = P_READ, .p = &l };

		ck_assert_int_eq(blitz_spawn_detached(rt, &wt_vt, &c, sizeof(c)), 0);
	}
	WAIT_UNTIL(blitz_semaphore_queued(&s) == 8 && blitz_mutex_queued(&m) == 8 &&
		   blitz_rwlock_queued(&l) == 12 && blitz_notify_queued(&n) == 8);
	blitz_runtime_free(rt);
	ck_assert_uint_eq(blitz_semaphore_queued(&s), 0);
	ck_assert_uint_eq(blitz_semaphore_available(&s), 2);
	ck_assert_uint_eq(blitz_mutex_queued(&m), 0);
	ck_assert(!blitz_mutex_is_locked(&m));
	ck_assert_uint_eq(blitz_rwlock_queued(&l), 0);
	ck_assert(blitz_rwlock_try_write(&l));
	ck_assert_uint_eq(blitz_notify_queued(&n), 0);
	ck_assert(!blitz_notify_try_notified(&n));
}
END_TEST

static Suite *sync_suite(void)
{
	Suite *s = suite_create("sync");
	TCase *tc = TCASE("forms", 30);

	tcase_add_test(tc, try_forms_single_thread);
	tcase_add_test(tc, cancel_token_child_unregisters);
	tcase_add_test(tc, semaphore_fifo_no_barging);
	tcase_add_test(tc, mutex_fifo_handoff);
	tcase_add_test(tc, rwlock_queued_writer_blocks_readers);
	suite_add_tcase(s, tc);

	tc = TCASE("stress", 60);
	tcase_add_test(tc, semaphore_stress);
	tcase_add_test(tc, mutex_stress);
	tcase_add_test(tc, rwlock_stress);
	tcase_add_test(tc, barrier_stress);
	tcase_add_test(tc, barrier_thread_leads_with_try_wait);
	tcase_add_test(tc, notify_one_never_loses_a_permit);
	tcase_add_test(tc, notify_waiters_wakes_exactly_the_waiting);
	tcase_add_test(tc, oncecell_initializes_once);
	tcase_add_test(tc, oncecell_takeover_after_cancelled_init);
	tcase_add_test(tc, cancel_token_tree_wakes_everyone);
	tcase_add_test(tc, try_forms_from_threads_against_tasks);
	suite_add_tcase(s, tc);

	tc = TCASE("cancel", 60);
	tcase_add_test(tc, cancelled_waiters_leak_nothing);
	tcase_add_test(tc, cancel_racing_grant_loses_nothing);
	tcase_add_test(tc, shutdown_with_holders_and_waiters);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("sync", sync_suite)
