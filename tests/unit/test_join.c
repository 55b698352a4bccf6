// SPDX-License-Identifier: MIT
/*
 * test_join.c - blitz_join from a worker (core/sched/help.c): the worker
 * runs other tasks until the target completes.  Deep chains on one worker
 * (no deadlock, no stack overflow, -EDEADLK past the stack's room), a
 * target running on another worker, cancellation of the target and of
 * the joiner, a join cycle, shutdown, block_on from a task, and the
 * bound on the nesting of a join from a thread that is not a worker.
 */
#include <alloca.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

#define new_rt test_runtime

/*
 * A hang guard: look at @cond(@arg) every millisecond until it holds or a
 * generous, scaled time has passed; returns its last answer.
 */
static bool wait_until(bool (*cond)(const void *), const void *arg)
{
	long left = (long)(60000 * test_timeout_scale());
	bool ok;

	while (!(ok = cond(arg)) && left-- > 0)
		usleep(1000);
	return ok;
}

static bool flag_set(const void *flag)
{
	return atomic_load((_Atomic int *)flag) != 0;
}

static bool task_done(const void *t)
{
	return blitz_task_done((struct blitz_task *)t);
}

/* wait_flag - until @flag is nonzero. */
static void wait_flag(_Atomic int *flag)
{
	ck_assert_msg(wait_until(flag_set, flag), "the flag never came");
}

/* wait_done - until @t is done, without running anything on this thread. */
static void wait_done(struct blitz_task *t)
{
	ck_assert_msg(wait_until(task_done, t), "the task never ended");
}

/* ---------------------------------------------------------------------- */
/* A chain: each task spawns the next and joins it from inside its poll.  */

static _Atomic long chain_ran, chain_ok, chain_deadlk, chain_other;
/* Called by every link first (NULL: none); returns bytes of stack the link holds across its join. */
static size_t (*link_hook)(void);

struct link {
	long left;		/* links still to spawn below this one */
	long depth;		/* out: links below that ran, this one included */
};

static enum blitz_poll link_poll(void *arg, struct blitz_cx *cx);
static const struct blitz_task_vtable link_vt = BLITZ_TASK_VTABLE(link_poll, NULL);

static enum blitz_poll link_poll(void *arg, struct blitz_cx *cx)
{
	struct link *s = arg;
	struct link next = { .left = s->left - 1 };
	struct blitz_task *t;
	size_t pad = link_hook ? link_hook() : 0;
	int ret;

	if (pad) {
		volatile char *held = alloca(pad);

		held[0] = held[pad - 1] = 1;	/* lives until this poll returns */
	}
	atomic_fetch_add(&chain_ran, 1);
	s->depth = 1;
	if (s->left == 0)
		return BLITZ_READY;
	t = blitz_spawn(NULL, &link_vt, &next, sizeof(next));
	ck_assert_ptr_nonnull(t);
	ret = blitz_join(t);
	if (ret == 0) {
		atomic_fetch_add(&chain_ok, 1);
		s->depth += ((struct link *)blitz_task_state(t))->depth;
	} else if (ret == -EDEADLK) {
		atomic_fetch_add(&chain_deadlk, 1);	/* the child runs on later, detached */
	} else {
		atomic_fetch_add(&chain_other, 1);
	}
	blitz_task_release(t);
	return BLITZ_READY;
}

static void chain_reset(void)
{
	atomic_store(&chain_ran, 0);
	atomic_store(&chain_ok, 0);
	atomic_store(&chain_deadlk, 0);
	atomic_store(&chain_other, 0);
	link_hook = NULL;
}

/*
 * 10,000 nested joins on one worker: each child is in the joiner's LIFO
 * slot, the join runs it on top of the joiner's stack.  With one worker a
 * join that blocked the thread could never end.
 */
START_TEST(deep_chain_on_one_worker)
{
	struct blitz_runtime *rt = new_rt(1);
	struct link root = { .left = 9999 };

	chain_reset();
	/* block_on, not blitz_join: main would help, and run links itself. */
	ck_assert_int_eq(blitz_block_on(rt, &link_vt, &root, sizeof(root)), 0);
	ck_assert_int_eq(atomic_load(&chain_ran), 10000);
	ck_assert_int_eq(atomic_load(&chain_ok), 9999);
	ck_assert_int_eq(atomic_load(&chain_deadlk), 0);
	ck_assert_int_eq(root.depth, 10000);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * A chain deeper than a worker's stack holds: the join that finds less
 * than BLITZ_JOIN_STACK_RESERVE left returns -EDEADLK instead of
 * overflowing; its child, detached, starts a new chain from the bottom of
 * the stack, so every link still runs exactly once.
 */
START_TEST(chain_past_the_stack_gets_edeadlk)
{
#ifdef __SANITIZE_THREAD__
	/* Its stack depot aborts on a stack of 65,536 frames, short of the reserve. */
	SKIP("ThreadSanitizer cannot record stacks this deep");
#endif
	struct blitz_runtime *rt = new_rt(1);
	struct link root = { .left = 999999 };

	chain_reset();
	ck_assert_int_eq(blitz_block_on(rt, &link_vt, &root, sizeof(root)), 0);
	ck_assert_int_lt(root.depth, 1000000);	/* cut by an -EDEADLK */
	/* The detached rest of the chain: wait until the runtime is empty. */
	while (blitz_runtime_live_tasks(rt))
		usleep(1000);
	ck_assert_int_eq(atomic_load(&chain_ran), 1000000);
	ck_assert_int_gt(atomic_load(&chain_deadlk), 0);
	ck_assert_int_eq(atomic_load(&chain_other), 0);
	ck_assert_int_eq(atomic_load(&chain_ok) + atomic_load(&chain_deadlk), 999999);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* A target that runs on the other worker                                 */

static _Atomic int joining, target_running;
static _Atomic int joiner_worker = -1;

/*
 * Holds its worker until the joiner has parked inside its join (its
 * worker's park count moved past what it was when the join began), so
 * that the join can only end by the completion's wake.
 */
struct holder {
	struct blitz_runtime *rt;
	unsigned long long parks0;
	int worker;
};

static unsigned long long parks_of(struct blitz_runtime *rt, int w)
{
	struct blitz_worker_stats s;

	blitz_worker_stats(rt, (unsigned)w, &s);
	return s.parks;
}

/* joiner_parked - has the joiner's worker parked since the holder started? */
static bool joiner_parked(const void *arg)
{
	const struct holder *s = arg;

	return parks_of(s->rt, atomic_load(&joiner_worker)) != s->parks0;
}

static enum blitz_poll holder_poll(void *arg, struct blitz_cx *cx)
{
	struct holder *s = arg;

	s->worker = blitz_cx_worker(cx);
	atomic_store(&target_running, 1);
	while (!atomic_load(&joining))
		sched_yield();
	ck_assert_msg(wait_until(joiner_parked, s), "the joiner never slept");
	return BLITZ_READY;
}
static const struct blitz_task_vtable holder_vt = BLITZ_TASK_VTABLE(holder_poll, NULL);

struct joiner {
	struct blitz_task *target;
	int ret, worker;
};

static enum blitz_poll joiner_poll(void *arg, struct blitz_cx *cx)
{
	struct joiner *s = arg;
	struct holder *h = blitz_task_state(s->target);

	s->worker = blitz_cx_worker(cx);
	ck_assert_int_ge(s->worker, 0);		/* run by a worker (see the test) */
	h->parks0 = parks_of(blitz_cx_runtime(cx), s->worker);
	atomic_store(&joiner_worker, s->worker);
	atomic_store(&joining, 1);
	s->ret = blitz_join(s->target);
	return BLITZ_READY;
}
static const struct blitz_task_vtable joiner_vt = BLITZ_TASK_VTABLE(joiner_poll, NULL);

START_TEST(join_a_task_running_elsewhere)
{
	struct blitz_runtime *rt = new_rt(2);
	struct holder h = { .rt = rt };
	struct joiner j = { .ret = 1 };
	struct blitz_task *ht, *jt;

	atomic_store(&joining, 0);
	atomic_store(&target_running, 0);
	ht = blitz_spawn(rt, &holder_vt, &h, sizeof(h));
	ck_assert_ptr_nonnull(ht);
	wait_flag(&target_running);		/* it holds one worker now */
	j.target = ht;
	jt = blitz_spawn(rt, &joiner_vt, &j, sizeof(j));
	ck_assert_ptr_nonnull(jt);
	/*
	 * Wait without helping: a blitz_join from this thread may run the
	 * joiner here, off the workers (its worker -1 then), before the free
	 * worker takes it from the global queue: under AddressSanitizer on a
	 * quiet machine it always did, and the holder waited for the parks of
	 * worker -1.  Once it is done, the join below returns at once.
	 */
	wait_done(jt);
	ck_assert_int_eq(blitz_join(jt), 0);
	ck_assert_int_eq(((struct joiner *)blitz_task_state(jt))->ret, 0);
	ck_assert_int_ne(((struct joiner *)blitz_task_state(jt))->worker,
			 ((struct holder *)blitz_task_state(ht))->worker);
	ck_assert(blitz_task_done(ht));
	blitz_task_release(jt);
	blitz_task_release(ht);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Cancellation: of the target, of the joiner                             */

static _Atomic long drops;

/* Waits forever: pending, and nobody holds a waker. */
static enum blitz_poll forever_poll(void *arg, struct blitz_cx *cx)
{
	return BLITZ_PENDING;
}

static void count_drop(void *arg)
{
	atomic_fetch_add(&drops, 1);
}
static const struct blitz_task_vtable forever_vt = BLITZ_TASK_VTABLE(forever_poll, count_drop);

/* Spawns a task that never ends and joins it (the test cancels one of them). */
struct waiter {
	struct blitz_task *target;	/* out: the task it joins */
	_Atomic int in_join;
	int ret;
	int cancel_first;		/* cancel the target before the join */
	int shielded;			/* join under blitz_shield_enter */
	struct blitz_runtime *rt;
	unsigned long long parks_before; /* its worker's parks, just before the join */
};

static enum blitz_poll waiter_poll(void *arg, struct blitz_cx *cx)
{
	struct waiter *s = arg;
	struct blitz_task *t = blitz_spawn(NULL, &forever_vt, NULL, 0);

	ck_assert_ptr_nonnull(t);
	s->target = t;
	if (s->cancel_first)
		blitz_task_cancel(t);
	s->rt = blitz_cx_runtime(cx);
	s->parks_before = parks_of(s->rt, blitz_cx_worker(cx));
	if (s->shielded)
		blitz_shield_enter(cx);
	atomic_store(&s->in_join, 1);
	s->ret = blitz_join(t);
	if (s->shielded)
		blitz_shield_exit(cx);
	if (!blitz_task_done(t))
		blitz_task_cancel(t);	/* we stopped waiting: do not leave it behind */
	blitz_task_release(t);
	return BLITZ_READY;
}
static const struct blitz_task_vtable waiter_vt = BLITZ_TASK_VTABLE(waiter_poll, NULL);

/* parked_in_join - has the waiter's (only) worker parked since it began its join? */
static bool parked_in_join(const void *arg)
{
	const struct waiter *s = arg;

	return parks_of(s->rt, 0) != s->parks_before;
}

/* start_waiter - a waiter on @rt, once it is inside its join; *@t: its handle. */
static struct waiter *start_waiter(struct blitz_runtime *rt, struct blitz_task **t, int shielded)
{
	struct waiter w = { .ret = 1, .shielded = shielded };
	struct waiter *s;

	atomic_store(&drops, 0);
	*t = blitz_spawn(rt, &waiter_vt, &w, sizeof(w));
	ck_assert_ptr_nonnull(*t);
	s = blitz_task_state(*t);
	wait_flag(&s->in_join);
	return s;
}

/*
 * lone_sleeper_runtime - one worker and an hour's park timeout: a worker
 * asleep in a join wakes only for what should wake it.
 */
static struct blitz_runtime *lone_sleeper_runtime(void)
{
	struct blitz_config c;
	struct blitz_runtime *rt;

	blitz_config_default(&c);
	c.workers = 1;
	c.park_timeout_ns = TEST_PARK_TIMEOUT_NS;
	rt = blitz_runtime_new(&c);
	ck_assert_ptr_nonnull(rt);
	return rt;
}

/* start_sleeping_waiter - start_waiter, then until its worker sleeps in the join. */
static struct waiter *start_sleeping_waiter(struct blitz_runtime *rt, struct blitz_task **t,
					    int shielded)
{
	struct waiter *s = start_waiter(rt, t, shielded);

	ck_assert_msg(wait_until(parked_in_join, s), "the joiner's worker never slept");
	return s;
}

/* The target is cancelled before the join: the join drops it itself. */
START_TEST(join_a_cancelled_task)
{
	struct blitz_runtime *rt = new_rt(1);
	struct waiter w = { .cancel_first = 1, .ret = 1 };

	atomic_store(&drops, 0);
	ck_assert_int_eq(blitz_block_on(rt, &waiter_vt, &w, sizeof(w)), 0);
	ck_assert_int_eq(w.ret, -ECANCELED);
	ck_assert_int_eq(atomic_load(&drops), 1);
	blitz_runtime_free(rt);
}
END_TEST

/* The target is cancelled from outside while the worker waits in the join. */
START_TEST(target_cancelled_during_the_join)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *t;
	struct waiter *s = start_waiter(rt, &t, 0);

	blitz_task_cancel(s->target);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_int_eq(s->ret, -ECANCELED);
	ck_assert_int_eq(atomic_load(&drops), 1);
	blitz_task_release(t);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * The joining task is cancelled: its join stops waiting (-EINTR).  The
 * cancel comes once the worker sleeps in the join (its futex word says
 * parked: it looked at the cancel flag before), and the park timeout is
 * an hour: the cancel itself must wake it (it took a park timeout before
 * help.c's park_in_join).
 */
START_TEST(joiner_cancelled_during_the_join)
{
	struct blitz_runtime *rt = lone_sleeper_runtime();
	struct blitz_task *t;
	struct waiter *s = start_sleeping_waiter(rt, &t, 0);
	blitz_task_cancel(t);
	/* It ran to READY (the cancel came during its poll): a result, 0. */
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_int_eq(s->ret, -EINTR);
	while (atomic_load(&drops) == 0)	/* the target it cancelled on its way out */
		usleep(1000);
	blitz_task_release(t);
	blitz_runtime_free(rt);
	ck_assert_int_eq(atomic_load(&drops), 1);
}
END_TEST

/*
 * The joining task is cancelled while it holds a shield: the join goes
 * on, and its worker sleeps again (it spun in help() until the target
 * completed, when park_in_join skipped the park on any cancel).  The
 * cancel's unpark wakes the worker once; it must park once more, with
 * nothing else to wake it (one worker, an hour's park timeout).  Then
 * the target's cancel ends the join as usual.
 */
START_TEST(shielded_joiner_cancelled_sleeps_on)
{
	struct blitz_runtime *rt = lone_sleeper_runtime();
	struct blitz_task *t;
	struct waiter *s = start_sleeping_waiter(rt, &t, 1);
	s->parks_before = parks_of(rt, 0);
	blitz_task_cancel(t);
	ck_assert_msg(wait_until(parked_in_join, s),
		      "the worker never slept again: the shielded join spins");
	ck_assert(!blitz_task_done(t));
	blitz_task_cancel(s->target);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_int_eq(s->ret, -ECANCELED);
	ck_assert_int_eq(atomic_load(&drops), 1);
	blitz_task_release(t);
	blitz_runtime_free(rt);
}
END_TEST

/* Shutdown while a worker waits in a join: -ESHUTDOWN, nothing leaks. */
START_TEST(shutdown_ends_the_join)
{
	struct blitz_runtime *rt = new_rt(1);
	struct blitz_task *t;
	struct waiter *s = start_waiter(rt, &t, 0);

	blitz_runtime_free(rt);
	ck_assert_int_eq(s->ret, -ESHUTDOWN);
	ck_assert_int_eq(atomic_load(&drops), 1);
	blitz_task_release(t);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* A cycle: B, run inside A's join, joins A                               */

static _Atomic(struct blitz_task *) cycle_a;

struct cycle { int ret; };

static enum blitz_poll cycle_b_poll(void *arg, struct blitz_cx *cx)
{
	((struct cycle *)arg)->ret = blitz_join(atomic_load(&cycle_a));
	return BLITZ_READY;
}
static const struct blitz_task_vtable cycle_b_vt = BLITZ_TASK_VTABLE(cycle_b_poll, NULL);

static enum blitz_poll cycle_a_poll(void *arg, struct blitz_cx *cx)
{
	struct cycle *s = arg;
	struct blitz_task *b;

	if (!atomic_load(&cycle_a)) {		/* main has not stored our handle yet */
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	b = blitz_spawn(NULL, &cycle_b_vt, &(struct cycle){ 1 }, sizeof(struct cycle));
	ck_assert_ptr_nonnull(b);
	s->ret = blitz_join(b);
	ck_assert_int_eq(((struct cycle *)blitz_task_state(b))->ret, -EDEADLK);
	blitz_task_release(b);
	return BLITZ_READY;
}
static const struct blitz_task_vtable cycle_a_vt = BLITZ_TASK_VTABLE(cycle_a_poll, NULL);

START_TEST(join_cycle_is_edeadlk)
{
	struct blitz_runtime *rt = new_rt(1);
	struct cycle a = { 1 };
	struct blitz_task *t;

	atomic_store(&cycle_a, NULL);
	t = blitz_spawn(rt, &cycle_a_vt, &a, sizeof(a));
	ck_assert_ptr_nonnull(t);
	atomic_store(&cycle_a, t);
	/* Not blitz_join: main would help, run A itself, and make a real cycle. */
	while (!blitz_task_done(t))
		usleep(1000);
	ck_assert_int_eq(((struct cycle *)blitz_task_state(t))->ret, 0);
	blitz_task_release(t);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* block_on from a task, and a join of a task of another runtime          */

struct adder { int a, b, sum; };

static enum blitz_poll adder_poll(void *arg, struct blitz_cx *cx)
{
	struct adder *s = arg;

	s->sum = s->a + s->b;
	return BLITZ_READY;
}
static const struct blitz_task_vtable adder_vt = BLITZ_TASK_VTABLE(adder_poll, NULL);

struct nested { struct blitz_runtime *other; int ret, sum, foreign; };

static enum blitz_poll nested_poll(void *arg, struct blitz_cx *cx)
{
	struct nested *s = arg;
	struct adder a = { 2, 3, 0 };
	struct blitz_task *f;

	s->ret = blitz_block_on(NULL, &adder_vt, &a, sizeof(a));
	s->sum = a.sum;
	f = blitz_spawn(s->other, &adder_vt, &a, sizeof(a));
	ck_assert_ptr_nonnull(f);
	s->foreign = blitz_join(f);
	blitz_task_release(f);
	return BLITZ_READY;
}
static const struct blitz_task_vtable nested_vt = BLITZ_TASK_VTABLE(nested_poll, NULL);

START_TEST(block_on_from_a_task)
{
	struct blitz_runtime *rt = new_rt(1), *other = new_rt(1);
	struct nested n = { .other = other, .ret = 1 };

	ck_assert_int_eq(blitz_block_on(rt, &nested_vt, &n, sizeof(n)), 0);
	ck_assert_int_eq(n.ret, 0);
	ck_assert_int_eq(n.sum, 5);
	ck_assert_int_eq(n.foreign, -EDEADLK);	/* its workers are not ours */
	blitz_runtime_free(rt);
	blitz_runtime_free(other);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Joins from a thread that is not a worker                                */

/*
 * A thread outside the runtime that joins runs queued tasks meanwhile; a
 * task it runs that joins in turn nests on that thread's stack.  The
 * chain below runs on such a thread while the only worker is held by a
 * task that spins: every link is the outside thread's to run, until its
 * stack is down to BLITZ_JOIN_STACK_RESERVE; from there its join only
 * waits.  The holder lets the worker go once the outside thread sleeps
 * (its state in /proc) and has run no link for a while: without the bound
 * it would never sleep, and would overflow its stack first.  Each link on
 * the outside thread takes at least OUTSIDE_PAD bytes of its stack, so
 * that the chain cannot fit whatever a compiler makes of the frames.
 */
#define OUTSIDE_LINKS 5000
#define OUTSIDE_PAD 1024
/* ThreadSanitizer's thread state, in static TLS, takes ~800 KiB of a thread's stack. */
#ifdef __SANITIZE_THREAD__
#define OUTSIDE_STACK (2u << 20)
#else
#define OUTSIDE_STACK (1u << 20)
#endif

static struct blitz_runtime *outside_rt;
static pthread_t outside_thread, outside_self;	/* outside_self: set by the thread itself */
static _Atomic int outside_tid, outside_release, outside_holding, outside_joining;
static _Atomic long outside_links;		/* links the outside thread ran */
static _Atomic uintptr_t outside_min_room = UINTPTR_MAX;
static uintptr_t outside_stack_lo;

/* link_hook for these tests: how deep a link on the outside thread runs. */
static size_t outside_note(void)
{
	uintptr_t room, min;

	if (!pthread_equal(pthread_self(), outside_self))
		return 0;
	room = (uintptr_t)__builtin_frame_address(0) - outside_stack_lo;
	min = atomic_load(&outside_min_room);
	atomic_fetch_add(&outside_links, 1);
	while (room < min && !atomic_compare_exchange_weak(&outside_min_room, &min, room))
		;
	return OUTSIDE_PAD;
}

/* The worker's holder: spins until the test lets it go. */
static enum blitz_poll hold_poll(void *arg, struct blitz_cx *cx)
{
	(void)arg;
	(void)cx;
	atomic_store(&outside_holding, 1);
	while (!atomic_load(&outside_release))
		sched_yield();
	return BLITZ_READY;
}
static const struct blitz_task_vtable hold_vt = BLITZ_TASK_VTABLE(hold_poll, NULL);

static void *outside_main(void *arg)
{
	struct link root = { .left = OUTSIDE_LINKS - 1 };
	struct blitz_task *t;
	pthread_attr_t a;
	void *lo;
	size_t size;

	(void)arg;
	ck_assert_int_eq(pthread_getattr_np(pthread_self(), &a), 0);
	ck_assert_int_eq(pthread_attr_getstack(&a, &lo, &size), 0);
	pthread_attr_destroy(&a);
	outside_stack_lo = (uintptr_t)lo;
	outside_self = pthread_self();
	atomic_store(&outside_tid, (int)syscall(SYS_gettid));
	t = blitz_spawn(outside_rt, &link_vt, &root, sizeof(root));
	ck_assert_ptr_nonnull(t);
	atomic_store(&outside_joining, 1);
	ck_assert_int_eq(blitz_join(t), 0);
	blitz_task_release(t);
	return NULL;
}

/* thread_sleeping - is thread @tid of this process asleep ('S' in its stat)? */
static bool thread_sleeping(int tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the state follows the command's closing parenthesis */
	return p && p[1] == ' ' && p[2] == 'S';
}

/*
 * outside_waits - has the outside thread stopped helping: asleep, with
 * no new link, at three looks 1 ms apart?  (It may sleep for a moment on
 * a lock while it still helps.)
 */
static bool outside_waits(const void *unused)
{
	long links = atomic_load(&outside_links);

	(void)unused;
	for (int i = 0; i < 3; i++) {
		if (!atomic_load(&outside_joining) || !thread_sleeping(atomic_load(&outside_tid)))
			return false;
		usleep(1000);
	}
	return atomic_load(&outside_links) == links;
}

/*
 * run_outside_chain - the chain on a thread with a stack of @stack bytes
 * while the only worker is held; every link runs once and every join
 * succeeds.  Returns the links the outside thread ran.
 */
static long run_outside_chain(size_t stack)
{
	struct blitz_task *hold;
	pthread_attr_t a;

	outside_rt = new_rt(1);
	chain_reset();
	link_hook = outside_note;
	atomic_store(&outside_release, 0);
	atomic_store(&outside_holding, 0);
	atomic_store(&outside_joining, 0);
	atomic_store(&outside_links, 0);
	atomic_store(&outside_tid, 0);
	atomic_store(&outside_min_room, UINTPTR_MAX);
	hold = blitz_spawn(outside_rt, &hold_vt, NULL, 0);
	ck_assert_ptr_nonnull(hold);
	wait_flag(&outside_holding);
	ck_assert_int_eq(pthread_attr_init(&a), 0);
	ck_assert_int_eq(pthread_attr_setstacksize(&a, stack), 0);
	ck_assert_int_eq(pthread_create(&outside_thread, &a, outside_main, NULL), 0);
	pthread_attr_destroy(&a);
	/* Let the worker go once the outside thread waits without helping. */
	ck_assert_msg(wait_until(outside_waits, NULL), "the outside thread never stopped helping (%ld links run there, "
		      "%zu bytes of stack left at least)", atomic_load(&outside_links),
		      (size_t)atomic_load(&outside_min_room));
	atomic_store(&outside_release, 1);
	ck_assert_int_eq(pthread_join(outside_thread, NULL), 0);
	ck_assert_int_eq(blitz_join(hold), 0);
	blitz_task_release(hold);
	ck_assert_int_eq(atomic_load(&chain_ran), OUTSIDE_LINKS);
	ck_assert_int_eq(atomic_load(&chain_ok), OUTSIDE_LINKS - 1);
	ck_assert_int_eq(atomic_load(&chain_other), 0);
	if (getenv("BLITZ_TEST_VERBOSE"))
		fprintf(stderr, "outside, %zu-byte stack: %ld links, %zu bytes left at least\n", stack,
			atomic_load(&outside_links), (size_t)atomic_load(&outside_min_room));
	blitz_runtime_free(outside_rt);
	link_hook = NULL;
	return atomic_load(&outside_links);
}

/* It helps, stops short of the chain, and keeps half the reserve. */
START_TEST(outside_join_nesting_is_bounded)
{
	long links = run_outside_chain(OUTSIDE_STACK);

	ck_assert_int_gt(links, 0);
	ck_assert_int_lt(links, OUTSIDE_LINKS);
	ck_assert_msg(atomic_load(&outside_min_room) > BLITZ_JOIN_STACK_RESERVE / 2,
		      "a link ran with %zu bytes of stack left", (size_t)atomic_load(&outside_min_room));
}
END_TEST

/* A thread whose whole stack is within the reserve never helps. */
START_TEST(outside_join_small_stack_only_waits)
{
#ifdef __SANITIZE_THREAD__
	SKIP("ThreadSanitizer's thread state makes a thread's stack larger than asked");
#endif
	ck_assert_int_eq(run_outside_chain(BLITZ_JOIN_STACK_RESERVE), 0);
}
END_TEST

static Suite *join_suite(void)
{
	Suite *s = suite_create("join");
	TCase *tc = TCASE("from a worker", 120);

	tcase_add_test(tc, deep_chain_on_one_worker);
	tcase_add_test(tc, chain_past_the_stack_gets_edeadlk);
	tcase_add_test(tc, join_a_task_running_elsewhere);
	tcase_add_test(tc, join_a_cancelled_task);
	tcase_add_test(tc, target_cancelled_during_the_join);
	tcase_add_test(tc, joiner_cancelled_during_the_join);
	tcase_add_test(tc, shielded_joiner_cancelled_sleeps_on);
	tcase_add_test(tc, shutdown_ends_the_join);
	tcase_add_test(tc, join_cycle_is_edeadlk);
	tcase_add_test(tc, block_on_from_a_task);
	tcase_add_test(tc, outside_join_nesting_is_bounded);
	tcase_add_test(tc, outside_join_small_stack_only_waits);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("join", join_suite)
