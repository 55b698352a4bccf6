// SPDX-License-Identifier: MIT
/*
 * test_channel.c - channels and combinators: the try_ forms single-threaded
 * and from plain threads, interleaving stress on two workers (no message
 * lost or duplicated, per-producer FIFO, every wait ends in exactly one
 * wake or take-back, close wakes everyone after receivers drain),
 * cancellation of waiting tasks (their drop takes the waiter back; ASan
 * checks nothing leaks), broadcast lag counts, watch generations, select,
 * join and race.
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

/*
 * Check's ck_assert records a checkpoint (a write to a pipe) even when it
 * passes; in loops run a million times that would be most of the run time
 * (and hide the interleavings under system calls).  verify() calls Check
 * only when the condition fails.
 */
#define verify(cond) do { if (__builtin_expect(!(cond), 0)) ck_assert(cond); } while (0)
#define verify_msg(cond, ...)						\
	do {								\
		if (__builtin_expect(!(cond), 0))			\
			ck_assert_msg(cond, __VA_ARGS__);		\
	} while (0)

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct blitz_chan_stats stats_of(struct blitz_chan_waitlist *wl)
{
	struct blitz_chan_stats st;

	blitz_chan_waitlist_stats(wl, &st);
	return st;
}

/* Wait (up to 10 s, scaled) until @wl has @n waiters queued. */
static void wait_queued(struct blitz_chan_waitlist *wl, uint32_t n)
{
	double end = now_s() + 10 * test_timeout_scale();

	while (stats_of(wl).queued != n) {
		ck_assert_msg(now_s() < end, "waiters never queued: %u of %u",
			      stats_of(wl).queued, n);
		usleep(200);
	}
}

static void wait_done(struct blitz_task *t)
{
	double end = now_s() + 10 * test_timeout_scale();

	while (!blitz_task_done(t)) {
		ck_assert_msg(now_s() < end, "task never finished (a lost wakeup?)");
		usleep(200);
	}
}

/* Every wait ended in exactly one wake or one take-back, and none is left. */
static void check_waits(struct blitz_chan_waitlist *wl, const char *what)
{
	struct blitz_chan_stats st = stats_of(wl);

	ck_assert_msg(st.queued == 0, "%s: %u waiters left", what, st.queued);
	ck_assert_msg(st.waits == st.wakes + st.cancels,
		      "%s: %llu waits, %llu wakes + %llu take-backs", what,
		      (unsigned long long)st.waits, (unsigned long long)st.wakes,
		      (unsigned long long)st.cancels);
}

/* ---------------------------------------------------------------------- */
/* The try_ forms, one thread                                             */

struct odd { uint32_t a, b, c; };	/* 12 bytes: not a multiple of 8 */

START_TEST(channel_try_single_thread)
{
	struct blitz_channel ch;
	struct odd v;
	uint64_t storage[4 * 3];

	ck_assert_int_eq(blitz_channel_init(&ch, 0, 4), -EINVAL);
	ck_assert_int_eq(blitz_channel_init(&ch, 3, 4), -EINVAL);
	ck_assert_int_eq(blitz_channel_init(&ch, 4, 0), -EINVAL);

	ck_assert_int_eq(blitz_channel_init(&ch, 4, sizeof(struct odd)), 0);
	ck_assert_uint_eq(blitz_channel_capacity(&ch), 4);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), -EAGAIN);
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ i, ~i, i * 3 }), 0);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ 9, 9, 9 }), -EAGAIN);
	ck_assert_uint_eq(blitz_channel_len(&ch), 4);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), 0);
		ck_assert(v.a == i && v.b == ~i && v.c == i * 3);
	}
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), -EAGAIN);
	/* Many laps of the ring, the fill level varying. */
	for (uint32_t i = 0, next = 0; i < 10000; i++) {
		ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ i, ~i, 0 }), 0);
		if (i % 3 != 1 || blitz_channel_len(&ch) == 4) {
			ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), 0);
			ck_assert_uint_eq(v.a, next);
			next++;
		}
	}
	/* Close: senders fail at once, receivers drain first. */
	ck_assert(!blitz_channel_is_closed(&ch));
	while (blitz_channel_try_recv(&ch, &v) == 0)
		;
	ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ 1, 1, 1 }), 0);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ 2, 2, 2 }), 0);
	blitz_channel_close(&ch);
	blitz_channel_close(&ch);	/* idempotent */
	ck_assert(blitz_channel_is_closed(&ch));
	ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ 3, 3, 3 }), -EPIPE);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), 0);
	ck_assert_uint_eq(v.a, 1);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), 0);
	ck_assert_uint_eq(v.a, 2);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), -EPIPE);
	blitz_channel_destroy(&ch);

	/* Caller storage, capacity 1. */
	ck_assert_uint_eq(blitz_channel_storage_size(1, 12), 24);
	ck_assert_int_eq(blitz_channel_init_storage(&ch, storage, 1, 12), 0);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ 5, 6, 7 }), 0);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &(struct odd){ 5, 6, 7 }), -EAGAIN);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &v), 0);
	ck_assert(v.a == 5 && v.b == 6 && v.c == 7);
	blitz_channel_destroy(&ch);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Messages, and the exactly-once / FIFO bookkeeping shared by the tests  */

#define MAXP 16

struct msg { uint32_t producer, seq; };

struct ledger {
	int producers;
	long per_producer;
	_Atomic unsigned char *got;	/* producers * per_producer */
	_Atomic long received;
};

static void ledger_init(struct ledger *l, int producers, long per_producer)
{
	l->producers = producers;
	l->per_producer = per_producer;
	l->got = calloc((size_t)producers * (size_t)per_producer, 1);
	ck_assert_ptr_nonnull(l->got);
	atomic_store(&l->received, 0);
}

/* One message received: checked at once (never twice; FIFO per producer). */
static void ledger_record(struct ledger *l, const struct msg *m, int64_t *last)
{
	unsigned char prev;
	long i;

	verify_msg(m->producer < (uint32_t)l->producers && m->seq < l->per_producer,
		      "garbage message %u/%u", m->producer, m->seq);
	i = (long)m->producer * l->per_producer + m->seq;
	prev = atomic_fetch_add(&l->got[i], 1);
	verify_msg(prev == 0, "message %u/%u received twice", m->producer, m->seq);
	verify_msg((int64_t)m->seq > last[m->producer],
		      "producer %u out of order: %u after %lld", m->producer, m->seq,
		      (long long)last[m->producer]);
	last[m->producer] = m->seq;
	atomic_fetch_add(&l->received, 1);
}

static void ledger_check_all(struct ledger *l)
{
	long n = l->producers * l->per_producer;

	verify((atomic_load(&l->received)) == (n));
	for (long i = 0; i < n; i++)
		verify_msg(atomic_load(&l->got[i]) == 1, "message %ld received %d times",
			      i, l->got[i]);
	free((void *)l->got);
}

/* ---------------------------------------------------------------------- */
/* try_ from plain threads                                                */

struct thread_arg {
	struct blitz_channel *ch;
	struct ledger *l;
	uint32_t id;
};

static void *try_producer(void *arg)
{
	struct thread_arg *a = arg;

	for (uint32_t i = 0; i < a->l->per_producer; i++) {
		struct msg m = { a->id, i };
		int r;

		while ((r = blitz_channel_try_send(a->ch, &m)) == -EAGAIN)
			sched_yield();
		verify((r) == (0));
	}
	return NULL;
}

static void *try_consumer(void *arg)
{
	struct thread_arg *a = arg;
	int64_t last[MAXP];
	struct msg m;
	int r;

	for (int p = 0; p < MAXP; p++)
		last[p] = -1;
	while ((r = blitz_channel_try_recv(a->ch, &m)) != -EPIPE) {
		if (r == -EAGAIN) {
			sched_yield();
			continue;
		}
		verify((r) == (0));
		ledger_record(a->l, &m, last);
	}
	return NULL;
}

START_TEST(channel_try_from_threads)
{
	struct blitz_channel ch;
	struct ledger l;
	struct thread_arg pa[3], ca[3];
	pthread_t pt[3], ct[3];

	ck_assert_int_eq(blitz_channel_init(&ch, 8, sizeof(struct msg)), 0);
	ledger_init(&l, 3, test_scaled(50000));
	for (int i = 0; i < 3; i++) {
		ca[i] = (struct thread_arg){ &ch, &l, (uint32_t)i };
		pthread_create(&ct[i], NULL, try_consumer, &ca[i]);
	}
	for (int i = 0; i < 3; i++) {
		pa[i] = (struct thread_arg){ &ch, &l, (uint32_t)i };
		pthread_create(&pt[i], NULL, try_producer, &pa[i]);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(pt[i], NULL);
	blitz_channel_close(&ch);
	for (int i = 0; i < 3; i++)
		pthread_join(ct[i], NULL);
	ledger_check_all(&l);
	blitz_channel_destroy(&ch);
}
END_TEST

/*
 * What a thread did before blitz_channel_close happens before a receive or
 * send that returns -EPIPE, and before is_closed answers true (as Go's
 * memory model has for close).  The payload is a plain int: under
 * ThreadSanitizer (make check SANITIZE=thread) a missing edge is a race
 * report, which fails the test; a plain build checks the value only.
 */
struct close_order {
	struct blitz_channel ch;
	int payload;		/* plain: written by the closer only */
};

static void *close_after_write(void *arg)
{
	struct close_order *c = arg;

	c->payload = 42;
	blitz_channel_close(&c->ch);
	return NULL;
}

START_TEST(channel_close_happens_before_epipe)
{
	for (int round = 0; round < 100; round++) {
		struct close_order c = { .payload = 0 };
		uint64_t v = 0;
		pthread_t t;
		int r;

		ck_assert_int_eq(blitz_channel_init(&c.ch, 4, sizeof(v)), 0);
		pthread_create(&t, NULL, close_after_write, &c);
		if (round % 3 == 0) {
			while (!blitz_channel_is_closed(&c.ch))
				sched_yield();
		} else {
			bool send = round % 3 == 2;

			while ((r = send ? blitz_channel_try_send(&c.ch, &v) :
					   blitz_channel_try_recv(&c.ch, &v)) != -EPIPE) {
				ck_assert_int_eq(r, send ? 0 : -EAGAIN);
				if (send)	/* keep it from filling: drain what we sent */
					ck_assert_int_eq(blitz_channel_try_recv(&c.ch, &v), 0);
				sched_yield();
			}
		}
		ck_assert_int_eq(c.payload, 42);	/* read before the join */
		pthread_join(t, NULL);
		blitz_channel_destroy(&c.ch);
	}
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Interleaving stress: producer and consumer tasks on two workers        */

struct producer {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct ledger *l;
	uint32_t id, i;
	uint64_t rng;
	struct msg m;
	int err;
	struct blitz_chan_waiter w;
};

static enum blitz_poll producer_poll(void *arg, struct blitz_cx *cx)
{
	struct producer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->l->per_producer; s->i++) {
		if (rnd(&s->rng) % 4 == 0)
			BLITZ_YIELD(&s->co, cx);
		s->m = (struct msg){ s->id, s->i };
		BLITZ_AWAIT(&s->co, blitz_channel_send_poll(s->ch, &s->w, cx, &s->m, &s->err));
		verify((s->err) == (0));
		verify((s->w.state) == (BLITZ_WAITER_IDLE));
	}
	BLITZ_CO_END(&s->co);
}

static void producer_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct producer *)arg)->w);
}
static const struct blitz_task_vtable producer_vt = BLITZ_TASK_VTABLE(producer_poll, producer_drop);

struct consumer {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct ledger *l;
	uint64_t rng;
	struct msg m;
	int err;
	long count;
	int64_t last[MAXP];
	struct blitz_chan_waiter w;
};

static enum blitz_poll consumer_poll(void *arg, struct blitz_cx *cx)
{
	struct consumer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		if (rnd(&s->rng) % 4 == 0)
			BLITZ_YIELD(&s->co, cx);
		BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(s->ch, &s->w, cx, &s->m, &s->err));
		verify((s->w.state) == (BLITZ_WAITER_IDLE));
		if (s->err == -EPIPE)
			break;
		verify((s->err) == (0));
		ledger_record(s->l, &s->m, s->last);
		s->count++;
	}
	BLITZ_CO_END(&s->co);
}

static void consumer_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct consumer *)arg)->w);
}
static const struct blitz_task_vtable consumer_vt = BLITZ_TASK_VTABLE(consumer_poll, consumer_drop);

static struct blitz_task *spawn_consumer(struct blitz_runtime *rt, struct blitz_channel *ch,
					 struct ledger *l, uint64_t seed)
{
	struct consumer c = { .ch = ch, .l = l, .rng = seed };
	struct blitz_task *t;

	for (int p = 0; p < MAXP; p++)
		c.last[p] = -1;
	t = blitz_spawn(rt, &consumer_vt, &c, sizeof(c));
	ck_assert_ptr_nonnull(t);
	return t;
}

static struct blitz_task *spawn_producer(struct blitz_runtime *rt, struct blitz_channel *ch,
					 struct ledger *l, uint32_t id)
{
	struct producer p = { .ch = ch, .l = l, .id = id, .rng = 0x9e3779b97f4a7c15ull * (id + 1) };
	struct blitz_task *t = blitz_spawn(rt, &producer_vt, &p, sizeof(p));

	ck_assert_ptr_nonnull(t);
	return t;
}

static void run_stress(size_t capacity, int producers, int consumers, long per_producer)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *pt[MAXP], *ct[MAXP];
	struct blitz_channel ch;
	struct ledger l;
	struct msg m;
	long total = 0;
	double t0 = now_s();

	ck_assert_int_eq(blitz_channel_init(&ch, capacity, sizeof(struct msg)), 0);
	ledger_init(&l, producers, per_producer);
	for (int c = 0; c < consumers; c++)
		ct[c] = spawn_consumer(rt, &ch, &l, 0x2545f4914f6cdd1dull * (c + 1));
	for (int p = 0; p < producers; p++)
		pt[p] = spawn_producer(rt, &ch, &l, (uint32_t)p);
	for (int p = 0; p < producers; p++) {
		ck_assert_int_eq(blitz_join(pt[p]), 0);
		blitz_task_release(pt[p]);
	}
	/* Close with values possibly still queued: consumers must drain them. */
	blitz_channel_close(&ch);
	for (int c = 0; c < consumers; c++) {
		ck_assert_int_eq(blitz_join(ct[c]), 0);
		total += ((struct consumer *)blitz_task_state(ct[c]))->count;
		blitz_task_release(ct[c]);
	}
	ck_assert_int_eq(total, producers * per_producer);
	ledger_check_all(&l);
	ck_assert_int_eq(blitz_channel_try_recv(&ch, &m), -EPIPE);
	check_waits(&ch.senders, "senders");
	check_waits(&ch.receivers, "receivers");
	printf("channel stress: capacity %zu, %d producers x %ld, %d consumers: %.2f s, "
	       "%llu sender waits, %llu receiver waits\n", capacity, producers, per_producer,
	       consumers, now_s() - t0, (unsigned long long)stats_of(&ch.senders).waits,
	       (unsigned long long)stats_of(&ch.receivers).waits);
	blitz_runtime_free(rt);
	blitz_channel_destroy(&ch);
}

START_TEST(channel_stress_capacity_1)
{
	run_stress(1, 6, 6, test_scaled(500000));
}
END_TEST

START_TEST(channel_stress_capacity_2)
{
	run_stress(2, 8, 3, test_scaled(300000));
}
END_TEST

START_TEST(channel_stress_capacity_4)
{
	run_stress(4, 3, 8, test_scaled(1000000));
}
END_TEST

/* Plain threads send with try_send while tasks receive with recv_poll. */
START_TEST(channel_threads_to_tasks)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_task *ct[4];
	struct thread_arg pa[2];
	pthread_t pt[2];
	struct blitz_channel ch;
	struct ledger l;

	ck_assert_int_eq(blitz_channel_init(&ch, 2, sizeof(struct msg)), 0);
	ledger_init(&l, 2, test_scaled(10000));
	for (int c = 0; c < 4; c++)
		ct[c] = spawn_consumer(rt, &ch, &l, 77 + c);
	for (int i = 0; i < 2; i++) {
		pa[i] = (struct thread_arg){ &ch, &l, (uint32_t)i };
		pthread_create(&pt[i], NULL, try_producer, &pa[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(pt[i], NULL);
	blitz_channel_close(&ch);
	for (int c = 0; c < 4; c++) {
		ck_assert_int_eq(blitz_join(ct[c]), 0);
		blitz_task_release(ct[c]);
	}
	ledger_check_all(&l);
	check_waits(&ch.receivers, "receivers");
	blitz_runtime_free(rt);
	blitz_channel_destroy(&ch);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Close wakes every waiter; receivers drain first                        */

static _Atomic long drops;

struct one_op {
	struct blitz_co co;
	struct blitz_channel *ch;
	int send;
	uint64_t v;
	int err;
	struct blitz_chan_waiter w;
};

static enum blitz_poll one_op_poll(void *arg, struct blitz_cx *cx)
{
	struct one_op *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	if (s->send)
		BLITZ_AWAIT(&s->co, blitz_channel_send_poll(s->ch, &s->w, cx, &s->v, &s->err));
	else
		BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(s->ch, &s->w, cx, &s->v, &s->err));
	BLITZ_CO_END(&s->co);
}

static void one_op_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct one_op *)arg)->w);
	atomic_fetch_add(&drops, 1);
}
static const struct blitz_task_vtable one_op_vt = BLITZ_TASK_VTABLE(one_op_poll, one_op_drop);

static struct blitz_task *spawn_op(struct blitz_runtime *rt, struct blitz_channel *ch,
				   int send, uint64_t v)
{
	struct one_op o = { .ch = ch, .send = send, .v = v };
	struct blitz_task *t = blitz_spawn(rt, &one_op_vt, &o, sizeof(o));

	ck_assert_ptr_nonnull(t);
	return t;
}

static int op_err(struct blitz_task *t)
{
	return ((struct one_op *)blitz_task_state(t))->err;
}

START_TEST(channel_close_wakes_everyone)
{
	enum { N = 16 };
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_channel empty, full, some;
	struct blitz_task *rx[N], *tx[N], *dr[N];
	uint64_t v = 1;
	long got = 0;

	ck_assert_int_eq(blitz_channel_init(&empty, 2, 8), 0);
	ck_assert_int_eq(blitz_channel_init(&full, 1, 8), 0);
	ck_assert_int_eq(blitz_channel_init(&some, 4, 8), 0);
	ck_assert_int_eq(blitz_channel_try_send(&full, &v), 0);
	for (int i = 0; i < N; i++) {
		rx[i] = spawn_op(rt, &empty, 0, 0);
		tx[i] = spawn_op(rt, &full, 1, 100 + i);
	}
	wait_queued(&empty.receivers, N);
	wait_queued(&full.senders, N);
	blitz_channel_close(&empty);
	blitz_channel_close(&full);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(blitz_join(rx[i]), 0);
		ck_assert_int_eq(op_err(rx[i]), -EPIPE);
		ck_assert_int_eq(blitz_join(tx[i]), 0);
		ck_assert_int_eq(op_err(tx[i]), -EPIPE);
		blitz_task_release(rx[i]);
		blitz_task_release(tx[i]);
	}
	ck_assert_uint_eq(stats_of(&empty.receivers).wakes, N);
	ck_assert_uint_eq(stats_of(&full.senders).wakes, N);
	check_waits(&empty.receivers, "empty");
	check_waits(&full.senders, "full");
	/* The value sent before close is still there, then closed. */
	ck_assert_int_eq(blitz_channel_try_recv(&full, &v), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(blitz_channel_try_recv(&full, &v), -EPIPE);

	/* Three values, N receivers, closed: exactly three get a value. */
	for (v = 1; v <= 3; v++)
		ck_assert_int_eq(blitz_channel_try_send(&some, &v), 0);
	blitz_channel_close(&some);
	for (int i = 0; i < N; i++)
		dr[i] = spawn_op(rt, &some, 0, 0);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(blitz_join(dr[i]), 0);
		if (op_err(dr[i]) == 0)
			got++;
		else
			ck_assert_int_eq(op_err(dr[i]), -EPIPE);
		blitz_task_release(dr[i]);
	}
	ck_assert_int_eq(got, 3);
	blitz_runtime_free(rt);
	blitz_channel_destroy(&empty);
	blitz_channel_destroy(&full);
	blitz_channel_destroy(&some);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Cancelling waiting tasks: drop takes the waiter back, nothing leaks    */

START_TEST(channel_cancel_waiting_tasks)
{
	enum { N = 20, LEFT = 10 };
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_channel empty, full;
	struct blitz_task *rx[N], *tx[N];
	uint64_t v = 5;

	atomic_store(&drops, 0);
	ck_assert_int_eq(blitz_channel_init(&empty, 4, 8), 0);
	ck_assert_int_eq(blitz_channel_init(&full, 2, 8), 0);
	ck_assert_int_eq(blitz_channel_try_send(&full, &v), 0);
	ck_assert_int_eq(blitz_channel_try_send(&full, &v), 0);
	for (int i = 0; i < N; i++) {
		rx[i] = spawn_op(rt, &empty, 0, 0);
		tx[i] = spawn_op(rt, &full, 1, i);
	}
	wait_queued(&empty.receivers, N);
	wait_queued(&full.senders, N);
	for (int i = 0; i < N; i++) {
		blitz_task_cancel(rx[i]);
		blitz_task_cancel(tx[i]);
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(blitz_join(rx[i]), -ECANCELED);
		ck_assert_int_eq(blitz_join(tx[i]), -ECANCELED);
		blitz_task_release(rx[i]);
		blitz_task_release(tx[i]);
	}
	ck_assert_int_eq(atomic_load(&drops), 2 * N);
	ck_assert_uint_eq(stats_of(&empty.receivers).cancels, N);
	ck_assert_uint_eq(stats_of(&full.senders).cancels, N);
	check_waits(&empty.receivers, "receivers");
	check_waits(&full.senders, "senders");
	/* The channels still work: the full one has its two values. */
	ck_assert_int_eq(blitz_channel_try_recv(&full, &v), 0);
	ck_assert_int_eq(blitz_channel_try_send(&empty, &v), 0);

	/* Waiters left to the shutdown: their drops run there. */
	for (int i = 0; i < LEFT; i++)
		ck_assert_int_eq(blitz_spawn_detached(rt, &one_op_vt,
			&(struct one_op){ .ch = &full, .send = 1 }, sizeof(struct one_op)), 0);
	wait_queued(&full.senders, LEFT - 1);	/* one fits in the freed slot */
	blitz_runtime_free(rt);
	ck_assert_int_eq(atomic_load(&drops), 2 * N + LEFT);
	check_waits(&full.senders, "senders at shutdown");
	blitz_channel_destroy(&empty);
	blitz_channel_destroy(&full);
	/* Under ASan, LeakSanitizer fails the test if a waker kept a task alive. */
}
END_TEST

/*
 * A woken waiter that is cancelled before it runs passes its wake on: one
 * worker, kept busy by a blocker while the wake lands and the cancel
 * follows; without the hand-over the second receiver would sleep for ever
 * beside a value.
 */
static _Atomic int blocker_running, blocker_release;

static enum blitz_poll blocker_poll(void *arg, struct blitz_cx *cx)
{
	atomic_store(&blocker_running, 1);
	while (!atomic_load(&blocker_release))
		sched_yield();
	return BLITZ_READY;
}
static const struct blitz_task_vtable blocker_vt = BLITZ_TASK_VTABLE(blocker_poll, NULL);

static void block_worker(struct blitz_runtime *rt)
{
	atomic_store(&blocker_running, 0);
	atomic_store(&blocker_release, 0);
	ck_assert_int_eq(blitz_spawn_detached(rt, &blocker_vt, NULL, 0), 0);
	while (!atomic_load(&blocker_running))
		usleep(100);
}

START_TEST(channel_cancelled_wake_is_passed_on)
{
	struct blitz_runtime *rt = new_rt(1);
	struct blitz_channel ch;
	struct blitz_task *r1, *r2;
	uint64_t v = 42;

	atomic_store(&drops, 0);
	ck_assert_int_eq(blitz_channel_init(&ch, 2, 8), 0);
	r1 = spawn_op(rt, &ch, 0, 0);
	wait_queued(&ch.receivers, 1);
	r2 = spawn_op(rt, &ch, 0, 0);
	wait_queued(&ch.receivers, 2);
	block_worker(rt);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &v), 0);	/* wakes r1 */
	ck_assert_uint_eq(stats_of(&ch.receivers).queued, 1);
	blitz_task_cancel(r1);
	atomic_store(&blocker_release, 1);
	wait_done(r2);
	ck_assert(blitz_task_cancelled(r1));
	ck_assert_int_eq(op_err(r2), 0);
	ck_assert_int_eq(((struct one_op *)blitz_task_state(r2))->v, 42);
	ck_assert_int_eq(atomic_load(&drops), 2);
	ck_assert_uint_eq(stats_of(&ch.receivers).wakes, 2);
	check_waits(&ch.receivers, "receivers");
	blitz_task_release(r1);
	blitz_task_release(r2);
	blitz_runtime_free(rt);
	blitz_channel_destroy(&ch);
}
END_TEST

/*
 * A value published while an earlier position's send is still copying its
 * value: a receiver woken by that publish finds the earlier slot empty
 * ("a send in progress") and queues again, its wake spent.  Whoever takes
 * the earlier value must pass a wake on, or the later value waits beside
 * queued receivers until the next send.  Receivers that each take one
 * value, all queued before four threads send one value each: every
 * receiver gets one, and every value is received.  The 64 KiB values keep
 * a sender between its claim and its publish long enough for the race to
 * come up: before the pass-on (2026-11-28) 9 of 10 runs of 150 rounds
 * left receivers asleep beside values.
 */
enum { BIG_ELEM = 65536, BIG_CAPACITY = 64, BIG_RX = 48, BIG_TX = 4 };
/*
 * The second run (_i = 1) adds threads that take BIG_TRIED of the values
 * with try_recv, which passes no wake on: every value still reaches one
 * receiver or one taker, and no receiver sleeps beside a value.  (The
 * case that made the pass-on test the head, not the position after the
 * waiter's own (cc5dfa2), needs a take inside a window of a few
 * instructions: 8 runs of this against that first form, 795c968, all
 * passed, so this run does not show that case; it shows the mix.)
 */
enum { BIG_TAKERS = 2, BIG_TRIED = 16 };
static int big_sent;			/* BIG_RX, plus BIG_TRIED with takers */

struct big_rx {
	struct blitz_co co;
	struct blitz_channel *ch;
	unsigned char *buf;
	int err;
	struct blitz_chan_waiter w;
};

static enum blitz_poll big_rx_poll(void *arg, struct blitz_cx *cx)
{
	struct big_rx *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(s->ch, &s->w, cx, s->buf, &s->err));
	BLITZ_CO_END(&s->co);
}

static void big_rx_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct big_rx *)arg)->w);
}
static const struct blitz_task_vtable big_rx_vt = BLITZ_TASK_VTABLE(big_rx_poll, big_rx_drop);

struct big_tx {
	struct blitz_channel *ch;
	uint64_t first;
	int err;
	unsigned char buf[BIG_ELEM];
};

/*
 * A taker: try_recv until the takers hold BIG_TRIED values; a place is
 * reserved before each try (and given back if it found nothing), so the
 * receivers are left exactly BIG_RX.
 */
struct big_taker {
	struct blitz_channel *ch;
	_Atomic int *taken;
	uint64_t seen;			/* the ids it took */
	int err;
	unsigned char buf[BIG_ELEM];
};

static void *big_taker(void *arg)
{
	struct big_taker *s = arg;

	for (;;) {
		int n = atomic_load(s->taken);
		uint64_t id;

		if (n >= BIG_TRIED)
			return NULL;
		if (!atomic_compare_exchange_weak(s->taken, &n, n + 1))
			continue;
		s->err = blitz_channel_try_recv(s->ch, s->buf);
		if (s->err == -EAGAIN) {
			atomic_fetch_sub(s->taken, 1);
			s->err = 0;
			sched_yield();
			continue;
		}
		if (s->err)
			return NULL;
		memcpy(&id, s->buf, sizeof(id));
		s->seen |= 1ull << id;
	}
}

static void *big_sender(void *arg)
{
	struct big_tx *s = arg;

	for (uint64_t i = 0; i < (uint64_t)(big_sent / BIG_TX) && !s->err; i++) {
		uint64_t id = s->first + i;

		memcpy(s->buf, &id, sizeof(id));
		s->err = blitz_channel_try_send(s->ch, s->buf);	/* never full */
	}
	return NULL;
}

START_TEST(channel_wake_passed_on_past_a_send_in_progress)
{
	struct blitz_runtime *rt = new_rt(2);
	unsigned char *bufs = malloc((size_t)BIG_RX * BIG_ELEM);
	struct big_tx *tx = calloc(BIG_TX, sizeof(*tx));
	struct big_taker *tk = calloc(BIG_TAKERS, sizeof(*tk));
	int takers = _i ? BIG_TAKERS : 0;
	long rounds = test_scaled(_i ? 250 : 500);

	ck_assert_ptr_nonnull(bufs);
	ck_assert_ptr_nonnull(tx);
	ck_assert_ptr_nonnull(tk);
	big_sent = BIG_RX + (takers ? BIG_TRIED : 0);
	for (long r = 0; r < rounds; r++) {
		struct blitz_channel ch;
		struct blitz_task *t[BIG_RX];
		pthread_t th[BIG_TX], tth[BIG_TAKERS];
		_Atomic int taken = 0;
		uint64_t seen = 0;

		ck_assert_int_eq(blitz_channel_init(&ch, BIG_CAPACITY, BIG_ELEM), 0);
		for (int i = 0; i < BIG_RX; i++) {
			struct big_rx o = { .ch = &ch, .buf = bufs + (size_t)i * BIG_ELEM };

			t[i] = blitz_spawn(rt, &big_rx_vt, &o, sizeof(o));
			ck_assert_ptr_nonnull(t[i]);
		}
		wait_queued(&ch.receivers, BIG_RX);
		for (int i = 0; i < takers; i++) {
			tk[i] = (struct big_taker){ .ch = &ch, .taken = &taken };
			ck_assert_int_eq(pthread_create(&tth[i], NULL, big_taker, &tk[i]), 0);
		}
		for (int i = 0; i < BIG_TX; i++) {
			tx[i].ch = &ch;
			tx[i].first = (uint64_t)i * (uint64_t)(big_sent / BIG_TX);
			tx[i].err = 0;
			ck_assert_int_eq(pthread_create(&th[i], NULL, big_sender, &tx[i]), 0);
		}
		for (int i = 0; i < BIG_TX; i++) {
			pthread_join(th[i], NULL);
			ck_assert_int_eq(tx[i].err, 0);
		}
		for (int i = 0; i < takers; i++) {
			pthread_join(tth[i], NULL);
			ck_assert_int_eq(tk[i].err, 0);
			ck_assert_msg(!(seen & tk[i].seen), "a value taken twice");
			seen |= tk[i].seen;
		}
		for (int i = 0; i < BIG_RX; i++) {
			struct big_rx *o = blitz_task_state(t[i]);
			uint64_t id;

			wait_done(t[i]);	/* the lost wake: asleep beside a value */
			ck_assert_int_eq(blitz_join(t[i]), 0);
			ck_assert_int_eq(o->err, 0);
			memcpy(&id, o->buf, sizeof(id));
			ck_assert_uint_lt(id, (uint64_t)big_sent);
			ck_assert_msg(!(seen & (1ull << id)), "value %llu received twice",
				      (unsigned long long)id);
			seen |= 1ull << id;
			blitz_task_release(t[i]);
		}
		ck_assert_uint_eq(seen, big_sent == 64 ? ~0ull : (1ull << big_sent) - 1);
		ck_assert_uint_eq(blitz_channel_len(&ch), 0);
		check_waits(&ch.receivers, "receivers");
		blitz_channel_destroy(&ch);
	}
	free(tk);
	free(tx);
	free(bufs);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Broadcast                                                              */

struct bmsg { uint64_t seq, x, y; };

static struct bmsg bmsg(uint64_t i)
{
	return (struct bmsg){ i, i * 0x9e3779b97f4a7c15ull, ~i };
}

static void check_bmsg(const struct bmsg *m)
{
	verify_msg(m->x == m->seq * 0x9e3779b97f4a7c15ull && m->y == ~m->seq,
		      "torn broadcast message %llu", (unsigned long long)m->seq);
}

START_TEST(broadcast_lag_count_is_exact)
{
	struct blitz_broadcast bc;
	struct blitz_broadcast_rx a, b, c;
	struct bmsg m;
	uint64_t missed = 0;

	ck_assert_int_eq(blitz_broadcast_init(&bc, 3, 8), -EINVAL);
	ck_assert_int_eq(blitz_broadcast_init(&bc, 4, sizeof(struct bmsg)), 0);
	blitz_broadcast_subscribe(&bc, &a);
	blitz_broadcast_subscribe(&bc, &b);
	ck_assert_uint_eq(blitz_broadcast_receivers(&bc), 2);
	ck_assert_int_eq(blitz_broadcast_try_recv(&a, &m, &missed), -EAGAIN);
	blitz_broadcast_unsubscribe(&a);
	blitz_broadcast_unsubscribe(&b);
	blitz_broadcast_destroy(&bc);

	/* b keeps up, a falls 6 behind on a ring of 4. */
	ck_assert_int_eq(blitz_broadcast_init(&bc, 4, sizeof(struct bmsg)), 0);
	blitz_broadcast_subscribe(&bc, &a);
	blitz_broadcast_subscribe(&bc, &b);
	for (uint64_t i = 0; i < 10; i++) {
		struct bmsg s = bmsg(i);

		ck_assert_int_eq(blitz_broadcast_send(&bc, &s), 0);
		ck_assert_int_eq(blitz_broadcast_try_recv(&b, &m, &missed), 0);
		ck_assert_uint_eq(m.seq, i);
	}
	ck_assert_int_eq(blitz_broadcast_try_recv(&a, &m, &missed), -EOVERFLOW);
	ck_assert_uint_eq(missed, 6);
	for (uint64_t i = 6; i < 10; i++) {
		ck_assert_int_eq(blitz_broadcast_try_recv(&a, &m, &missed), 0);
		ck_assert_uint_eq(m.seq, i);
		check_bmsg(&m);
	}
	ck_assert_int_eq(blitz_broadcast_try_recv(&a, &m, &missed), -EAGAIN);
	/* A late subscriber sees only what is sent after it subscribed. */
	blitz_broadcast_subscribe(&bc, &c);
	ck_assert_int_eq(blitz_broadcast_try_recv(&c, &m, &missed), -EAGAIN);
	{
		struct bmsg s = bmsg(10);

		ck_assert_int_eq(blitz_broadcast_send(&bc, &s), 0);
	}
	ck_assert_int_eq(blitz_broadcast_try_recv(&c, &m, &missed), 0);
	ck_assert_uint_eq(m.seq, 10);
	/* Lapped by exactly one ring plus one. */
	for (uint64_t i = 11; i < 16; i++) {
		struct bmsg s = bmsg(i);

		ck_assert_int_eq(blitz_broadcast_send(&bc, &s), 0);
	}
	ck_assert_int_eq(blitz_broadcast_try_recv(&c, &m, &missed), -EOVERFLOW);
	ck_assert_uint_eq(missed, 1);
	ck_assert_int_eq(blitz_broadcast_try_recv(&c, &m, &missed), 0);
	ck_assert_uint_eq(m.seq, 12);
	/* Close: drain, then -EPIPE. */
	blitz_broadcast_close(&bc);
	ck_assert_int_eq(blitz_broadcast_send(&bc, &m), -EPIPE);
	for (uint64_t i = 13; i < 16; i++) {
		ck_assert_int_eq(blitz_broadcast_try_recv(&c, &m, &missed), 0);
		ck_assert_uint_eq(m.seq, i);
	}
	ck_assert_int_eq(blitz_broadcast_try_recv(&c, &m, &missed), -EPIPE);
	blitz_broadcast_unsubscribe(&a);
	blitz_broadcast_unsubscribe(&b);
	blitz_broadcast_unsubscribe(&c);
	ck_assert_uint_eq(blitz_broadcast_receivers(&bc), 0);
	blitz_broadcast_destroy(&bc);
}
END_TEST

struct bsender {
	struct blitz_co co;
	struct blitz_broadcast *bc;
	uint64_t i, n, rng;
	struct bmsg m;
};

static enum blitz_poll bsender_poll(void *arg, struct blitz_cx *cx)
{
	struct bsender *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->n; s->i++) {
		if (rnd(&s->rng) % 8 == 0)
			BLITZ_YIELD(&s->co, cx);
		s->m = bmsg(s->i);
		verify((blitz_broadcast_send(s->bc, &s->m)) == (0));
	}
	blitz_broadcast_close(s->bc);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable bsender_vt = BLITZ_TASK_VTABLE(bsender_poll, NULL);

struct breceiver {
	struct blitz_co co;
	struct blitz_broadcast_rx rx;
	uint64_t rng, expect, received, missed_total, missed, slow;
	struct bmsg m;
	int err;
	struct blitz_chan_waiter w;
};

static enum blitz_poll breceiver_poll(void *arg, struct blitz_cx *cx)
{
	struct breceiver *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		if (rnd(&s->rng) % (s->slow ? 2 : 16) == 0)
			BLITZ_YIELD(&s->co, cx);
		BLITZ_AWAIT(&s->co, blitz_broadcast_recv_poll(&s->rx, &s->w, cx, &s->m,
							      &s->missed, &s->err));
		if (s->err == -EPIPE)
			break;
		if (s->err == -EOVERFLOW) {
			verify((s->missed) > (0));
			s->expect += s->missed;
			s->missed_total += s->missed;
			continue;
		}
		verify((s->err) == (0));
		check_bmsg(&s->m);
		/* No gap that was not reported, no repeat, never backwards. */
		verify_msg(s->m.seq == s->expect, "got %llu, expected %llu",
			      (unsigned long long)s->m.seq, (unsigned long long)s->expect);
		s->expect++;
		s->received++;
	}
	BLITZ_CO_END(&s->co);
}

static void breceiver_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct breceiver *)arg)->w);
}
static const struct blitz_task_vtable breceiver_vt =
	BLITZ_TASK_VTABLE(breceiver_poll, breceiver_drop);

struct bthread { struct blitz_broadcast_rx rx; uint64_t received, missed; };

static void *broadcast_thread(void *arg)
{
	struct bthread *b = arg;
	uint64_t expect = 0, missed;
	struct bmsg m;
	int r;

	while ((r = blitz_broadcast_try_recv(&b->rx, &m, &missed)) != -EPIPE) {
		if (r == -EAGAIN) {
			sched_yield();
		} else if (r == -EOVERFLOW) {
			expect += missed;
			b->missed += missed;
		} else {
			verify((r) == (0));
			check_bmsg(&m);
			verify((m.seq) == (expect));
			expect++;
			b->received++;
		}
	}
	return NULL;
}

START_TEST(broadcast_stress_every_message_or_counted)
{
	enum { R = 4 };
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_broadcast bc;
	struct blitz_task *rt_[R], *st;
	struct bsender s = { .rng = 99 };
	struct bthread th = { 0 };
	pthread_t pth;
	uint64_t n = (uint64_t)test_scaled(3000000);

	ck_assert_int_eq(blitz_broadcast_init(&bc, 8, sizeof(struct bmsg)), 0);
	for (int i = 0; i < R; i++) {
		struct breceiver r = { .rng = 1234 + i, .slow = i % 2 };

		blitz_broadcast_subscribe(&bc, &r.rx);
		rt_[i] = blitz_spawn(rt, &breceiver_vt, &r, sizeof(r));
		ck_assert_ptr_nonnull(rt_[i]);
	}
	blitz_broadcast_subscribe(&bc, &th.rx);
	pthread_create(&pth, NULL, broadcast_thread, &th);
	s.bc = &bc;
	s.n = n;
	st = blitz_spawn(rt, &bsender_vt, &s, sizeof(s));
	ck_assert_int_eq(blitz_join(st), 0);
	blitz_task_release(st);
	for (int i = 0; i < R; i++) {
		struct breceiver *r;

		ck_assert_int_eq(blitz_join(rt_[i]), 0);
		r = blitz_task_state(rt_[i]);
		ck_assert_uint_eq(r->received + r->missed_total, n);
		printf("broadcast receiver %d (%s): %llu received, %llu missed\n", i,
		       r->slow ? "slow" : "fast", (unsigned long long)r->received,
		       (unsigned long long)r->missed_total);
		blitz_broadcast_unsubscribe(&r->rx);
		blitz_task_release(rt_[i]);
	}
	pthread_join(pth, NULL);
	ck_assert_uint_eq(th.received + th.missed, n);
	check_waits(&bc.receivers, "broadcast receivers");
	blitz_runtime_free(rt);
	blitz_broadcast_destroy(&bc);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Watch                                                                  */

struct wval { uint64_t gen, a, b; };

static struct wval wval(uint64_t g)
{
	return (struct wval){ g, g * 0x2545f4914f6cdd1dull, ~g };
}

static void check_wval(const struct wval *v)
{
	verify_msg(v->a == v->gen * 0x2545f4914f6cdd1dull && v->b == ~v->gen,
		      "torn watch value %llu", (unsigned long long)v->gen);
}

struct wsender {
	struct blitz_co co;
	struct blitz_watch *wt;
	uint64_t k, n, rng;
	struct wval v;
};

static enum blitz_poll wsender_poll(void *arg, struct blitz_cx *cx)
{
	struct wsender *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->k = 1; s->k <= s->n; s->k++) {
		if (rnd(&s->rng) % 2 == 0)
			BLITZ_YIELD(&s->co, cx);
		s->v = wval(s->k);
		verify((blitz_watch_send(s->wt, &s->v)) == (0));
	}
	blitz_watch_close(s->wt);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable wsender_vt = BLITZ_TASK_VTABLE(wsender_poll, NULL);

struct wreceiver {
	struct blitz_co co;
	struct blitz_watch_rx rx;
	uint64_t last, rng;
	_Atomic uint64_t changes;	/* read by the test thread */
	struct wval v;
	int err;
	struct blitz_chan_waiter w;
};

static enum blitz_poll wreceiver_poll(void *arg, struct blitz_cx *cx)
{
	struct wreceiver *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (;;) {
		if (rnd(&s->rng) % 3 == 0)
			BLITZ_YIELD(&s->co, cx);
		BLITZ_AWAIT(&s->co, blitz_watch_changed_poll(&s->rx, &s->w, cx, &s->v, &s->err));
		if (s->err == -EPIPE)
			break;
		verify((s->err) == (0));
		check_wval(&s->v);
		/* Newer than anything seen before, and the value of that generation. */
		verify((s->rx.seen) > (s->last));
		verify((s->v.gen) == (s->rx.seen));
		s->last = s->rx.seen;
		s->changes++;
	}
	BLITZ_CO_END(&s->co);
}

static void wreceiver_drop(void *arg)
{
	blitz_chan_waiter_cancel(&((struct wreceiver *)arg)->w);
}
static const struct blitz_task_vtable wreceiver_vt =
	BLITZ_TASK_VTABLE(wreceiver_poll, wreceiver_drop);

START_TEST(watch_changed_fires_for_newer)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_watch wt;
	struct blitz_watch_rx rx;
	struct wval v = wval(0);
	struct wreceiver r = { .rng = 5 };
	struct blitz_task *t;
	uint64_t storage[3];

	ck_assert_int_eq(blitz_watch_init(&wt, 0, NULL), -EINVAL);
	ck_assert_int_eq(blitz_watch_init_storage(&wt, storage, sizeof(v), &v), 0);
	blitz_watch_subscribe(&wt, &rx);
	ck_assert_uint_eq(rx.seen, 0);
	ck_assert_int_eq(blitz_watch_try_changed(&rx, &v), -EAGAIN);
	v = wval(1);
	ck_assert_int_eq(blitz_watch_send(&wt, &v), 0);
	v = wval(2);
	ck_assert_int_eq(blitz_watch_send(&wt, &v), 0);
	memset(&v, 0, sizeof(v));
	ck_assert_uint_eq(blitz_watch_read(&wt, NULL), 2);
	ck_assert_int_eq(blitz_watch_try_changed(&rx, &v), 0);	/* the newest only */
	ck_assert_uint_eq(rx.seen, 2);
	ck_assert_uint_eq(v.gen, 2);
	ck_assert_int_eq(blitz_watch_try_changed(&rx, &v), -EAGAIN);

	/* A task waiting in changed_poll is woken by a send from outside. */
	blitz_watch_subscribe(&wt, &r.rx);
	r.last = r.rx.seen;
	t = blitz_spawn(rt, &wreceiver_vt, &r, sizeof(r));
	wait_queued(&wt.receivers, 1);
	v = wval(3);
	ck_assert_int_eq(blitz_watch_send(&wt, &v), 0);
	while (((struct wreceiver *)blitz_task_state(t))->changes == 0)
		usleep(200);
	/* Closing wakes it again; it has seen the last value: -EPIPE. */
	wait_queued(&wt.receivers, 1);
	blitz_watch_close(&wt);
	ck_assert_int_eq(blitz_watch_send(&wt, &v), -EPIPE);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_uint_eq(((struct wreceiver *)blitz_task_state(t))->last, 3);
	ck_assert_int_eq(blitz_watch_try_changed(&rx, &v), 0);	/* 3 was not seen by rx */
	ck_assert_uint_eq(v.gen, 3);
	ck_assert_int_eq(blitz_watch_try_changed(&rx, &v), -EPIPE);
	check_waits(&wt.receivers, "watch receivers");
	blitz_task_release(t);
	blitz_runtime_free(rt);
	blitz_watch_destroy(&wt);
}
END_TEST

struct wthread { struct blitz_watch *wt; uint64_t n, reads; };

static void *watch_reader(void *arg)
{
	struct wthread *w = arg;
	uint64_t last = 0;
	struct wval v;

	do {
		uint64_t g = blitz_watch_read(w->wt, &v);

		check_wval(&v);
		verify((v.gen) == (g));
		verify((g) >= (last));	/* never backwards */
		last = g;
		w->reads++;
	} while (last < w->n);
	return NULL;
}

static void *watch_writer(void *arg)
{
	struct wthread *w = arg;

	for (uint64_t k = 1; k <= w->n; k++) {
		struct wval v = wval(k);

		verify((blitz_watch_send(w->wt, &v)) == (0));
	}
	return NULL;
}

START_TEST(watch_generations_never_go_backwards)
{
	enum { R = 4 };
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_watch wt, wt2;
	struct blitz_task *t[R], *st;
	struct wsender s = { .rng = 3 };
	struct wthread th[3];
	pthread_t pt[3];
	struct wval v0 = wval(0);
	uint64_t n = (uint64_t)test_scaled(1000000);

	/* Tasks: one sender, receivers waiting in changed_poll. */
	ck_assert_int_eq(blitz_watch_init(&wt, sizeof(struct wval), &v0), 0);
	for (int i = 0; i < R; i++) {
		struct wreceiver r = { .rng = 11 + i };

		blitz_watch_subscribe(&wt, &r.rx);
		t[i] = blitz_spawn(rt, &wreceiver_vt, &r, sizeof(r));
	}
	s.wt = &wt;
	s.n = n;
	st = blitz_spawn(rt, &wsender_vt, &s, sizeof(s));
	ck_assert_int_eq(blitz_join(st), 0);
	blitz_task_release(st);
	for (int i = 0; i < R; i++) {
		struct wreceiver *r;

		ck_assert_int_eq(blitz_join(t[i]), 0);
		r = blitz_task_state(t[i]);
		ck_assert_uint_eq(r->last, n);		/* saw the final value */
		ck_assert_uint_gt(r->changes, 0);
		blitz_task_release(t[i]);
	}
	check_waits(&wt.receivers, "watch receivers");
	blitz_runtime_free(rt);
	blitz_watch_destroy(&wt);

	/* Plain threads: one writer, two readers copying under the seqlock. */
	ck_assert_int_eq(blitz_watch_init(&wt2, sizeof(struct wval), &v0), 0);
	for (int i = 0; i < 3; i++) {
		th[i] = (struct wthread){ &wt2, n * 4, 0 };
		pthread_create(&pt[i], NULL, i ? watch_reader : watch_writer, &th[i]);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(pt[i], NULL);
	ck_assert_uint_eq(blitz_watch_read(&wt2, NULL), n * 4);
	blitz_watch_destroy(&wt2);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Select                                                                 */

#define K 3

struct sel_consumer {
	struct blitz_co co;
	struct blitz_channel *chans;
	struct ledger *l;
	uint64_t rng;
	size_t n, idx;
	long count;
	int64_t last[MAXP];
	struct msg m[K];
	struct blitz_select_branch br[K];
};

static enum blitz_poll sel_consumer_poll(void *arg, struct blitz_cx *cx)
{
	struct sel_consumer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	/* Branches point into this state: set them up here, not before spawn. */
	for (int i = 0; i < K; i++)
		s->br[i] = (struct blitz_select_branch)BLITZ_SELECT_CHANNEL_RECV(&s->chans[i], &s->m[i]);
	s->n = K;
	while (s->n) {
		if (rnd(&s->rng) % 4 == 0)
			BLITZ_YIELD(&s->co, cx);
		BLITZ_AWAIT(&s->co, blitz_select_poll(s->br, s->n, cx, &s->idx));
		for (size_t i = 0; i < s->n; i++)
			verify((s->br[i].waiter.state) == (BLITZ_WAITER_IDLE));
		if (s->br[s->idx].err == -EPIPE) {
			s->br[s->idx] = s->br[--s->n];	/* idle waiters: movable */
			continue;
		}
		verify((s->br[s->idx].err) == (0));
		ledger_record(s->l, s->br[s->idx].out, s->last);
		s->count++;
	}
	BLITZ_CO_END(&s->co);
}

static void sel_consumer_drop(void *arg)
{
	struct sel_consumer *s = arg;

	blitz_select_cancel(s->br, s->n);
}
static const struct blitz_task_vtable sel_consumer_vt =
	BLITZ_TASK_VTABLE(sel_consumer_poll, sel_consumer_drop);

START_TEST(select_never_loses_a_message)
{
	enum { P = 6, C = 4 };
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_channel chans[K];
	struct blitz_task *pt[P], *ct[C];
	struct ledger l;
	long total = 0;

	for (int i = 0; i < K; i++)
		ck_assert_int_eq(blitz_channel_init(&chans[i], 1u << i, sizeof(struct msg)), 0);
	ledger_init(&l, P, test_scaled(500000));
	for (int c = 0; c < C; c++) {
		struct sel_consumer s = { .chans = chans, .l = &l, .rng = 31 + c };

		for (int p = 0; p < MAXP; p++)
			s.last[p] = -1;
		ct[c] = blitz_spawn(rt, &sel_consumer_vt, &s, sizeof(s));
	}
	/* Producer p sends on channel p % K: each producer's order is checkable. */
	for (int p = 0; p < P; p++)
		pt[p] = spawn_producer(rt, &chans[p % K], &l, (uint32_t)p);
	for (int p = 0; p < P; p++) {
		ck_assert_int_eq(blitz_join(pt[p]), 0);
		blitz_task_release(pt[p]);
	}
	for (int i = 0; i < K; i++)
		blitz_channel_close(&chans[i]);
	for (int c = 0; c < C; c++) {
		ck_assert_int_eq(blitz_join(ct[c]), 0);
		total += ((struct sel_consumer *)blitz_task_state(ct[c]))->count;
		blitz_task_release(ct[c]);
	}
	ck_assert_int_eq(total, P * l.per_producer);
	ledger_check_all(&l);
	for (int i = 0; i < K; i++) {
		check_waits(&chans[i].receivers, "select receivers");
		check_waits(&chans[i].senders, "select senders");
	}
	blitz_runtime_free(rt);
	for (int i = 0; i < K; i++)
		blitz_channel_destroy(&chans[i]);
}
END_TEST

/* One select over a channel, a broadcast, a watch and a oneshot. */
struct sel_mixed {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct blitz_broadcast_rx brx;
	struct blitz_watch_rx wrx;
	struct blitz_oneshot *os;
	uint64_t chv, bv, osv;
	struct wval wv;
	size_t idx;
	struct blitz_select_branch br[4];
};

static enum blitz_poll sel_mixed_poll(void *arg, struct blitz_cx *cx)
{
	struct sel_mixed *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	s->br[0] = (struct blitz_select_branch)BLITZ_SELECT_CHANNEL_RECV(s->ch, &s->chv);
	s->br[1] = (struct blitz_select_branch)BLITZ_SELECT_BROADCAST_RECV(&s->brx, &s->bv);
	s->br[2] = (struct blitz_select_branch)BLITZ_SELECT_WATCH_CHANGED(&s->wrx, &s->wv);
	s->br[3] = (struct blitz_select_branch)BLITZ_SELECT_ONESHOT_RECV(s->os, &s->osv);
	BLITZ_AWAIT(&s->co, blitz_select_poll(s->br, 4, cx, &s->idx));
	BLITZ_CO_END(&s->co);
}

static void sel_mixed_drop(void *arg)
{
	blitz_select_cancel(((struct sel_mixed *)arg)->br, 4);
}
static const struct blitz_task_vtable sel_mixed_vt = BLITZ_TASK_VTABLE(sel_mixed_poll, sel_mixed_drop);

struct mixed_env {
	struct blitz_channel ch;
	struct blitz_broadcast bc;
	struct blitz_watch wt;
	struct blitz_oneshot os;
};

static struct sel_mixed mixed_state(struct mixed_env *e)
{
	struct sel_mixed s = { .ch = &e->ch, .os = &e->os };

	blitz_broadcast_subscribe(&e->bc, &s.brx);
	blitz_watch_subscribe(&e->wt, &s.wrx);
	return s;
}

static void wait_mixed_queued(struct mixed_env *e)
{
	wait_queued(&e->ch.receivers, 1);
	wait_queued(&e->bc.receivers, 1);
	wait_queued(&e->wt.receivers, 1);
}

static void check_mixed_idle(struct mixed_env *e)
{
	check_waits(&e->ch.receivers, "select channel");
	check_waits(&e->bc.receivers, "select broadcast");
	check_waits(&e->wt.receivers, "select watch");
}

START_TEST(select_mixed_sources)
{
	struct blitz_runtime *rt = new_rt(2);
	struct mixed_env e;
	struct sel_mixed s;
	struct blitz_task *t;
	struct wval v = wval(7);
	uint64_t x = 5;

	ck_assert_int_eq(blitz_channel_init(&e.ch, 2, 8), 0);
	ck_assert_int_eq(blitz_broadcast_init(&e.bc, 4, 8), 0);
	ck_assert_int_eq(blitz_watch_init(&e.wt, sizeof(struct wval), NULL), 0);
	blitz_oneshot_init(&e.os);

	/* Ready at once: only the watch has news. */
	s = mixed_state(&e);
	ck_assert_int_eq(blitz_watch_send(&e.wt, &v), 0);
	ck_assert_int_eq(blitz_block_on(rt, &sel_mixed_vt, &s, sizeof(s)), 0);
	ck_assert_uint_eq(s.idx, 2);
	ck_assert_int_eq(s.br[2].err, 0);
	ck_assert_uint_eq(s.wv.gen, 7);

	/* Waiting on all four, woken by the broadcast; the others are taken back. */
	s = mixed_state(&e);
	t = blitz_spawn(rt, &sel_mixed_vt, &s, sizeof(s));
	wait_mixed_queued(&e);
	x = 99;
	ck_assert_int_eq(blitz_broadcast_send(&e.bc, &x), 0);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_uint_eq(((struct sel_mixed *)blitz_task_state(t))->idx, 1);
	ck_assert_uint_eq(((struct sel_mixed *)blitz_task_state(t))->bv, 99);
	blitz_task_release(t);
	check_mixed_idle(&e);
	/*
	 * The oneshot branch could not be taken back: the oneshot still holds
	 * that task's waker.  Close it (which drops the waker) and start anew.
	 */
	blitz_oneshot_close(&e.os);
	blitz_oneshot_init(&e.os);

	/* Waiting, woken by the oneshot. */
	s = mixed_state(&e);
	t = blitz_spawn(rt, &sel_mixed_vt, &s, sizeof(s));
	wait_mixed_queued(&e);
	ck_assert_int_eq(blitz_oneshot_send(&e.os, 4242), 0);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_uint_eq(((struct sel_mixed *)blitz_task_state(t))->idx, 3);
	ck_assert_uint_eq(((struct sel_mixed *)blitz_task_state(t))->osv, 4242);
	blitz_task_release(t);
	check_mixed_idle(&e);
	blitz_oneshot_init(&e.os);

	/* Two ready at once: the first wins, the other keeps its value. */
	s = mixed_state(&e);
	x = 1;
	ck_assert_int_eq(blitz_channel_try_send(&e.ch, &x), 0);
	x = 2;
	ck_assert_int_eq(blitz_broadcast_send(&e.bc, &x), 0);
	ck_assert_int_eq(blitz_block_on(rt, &sel_mixed_vt, &s, sizeof(s)), 0);
	ck_assert_uint_eq(s.idx, 0);
	ck_assert_uint_eq(s.chv, 1);
	{
		uint64_t missed, got;

		ck_assert_int_eq(blitz_broadcast_try_recv(&s.brx, &got, &missed), 0);
		ck_assert_uint_eq(got, 2);
	}

	/* A closed branch is ready with -EPIPE. */
	s = mixed_state(&e);
	blitz_channel_close(&e.ch);
	ck_assert_int_eq(blitz_block_on(rt, &sel_mixed_vt, &s, sizeof(s)), 0);
	ck_assert_uint_eq(s.idx, 0);
	ck_assert_int_eq(s.br[0].err, -EPIPE);
	check_mixed_idle(&e);

	blitz_runtime_free(rt);
	blitz_channel_destroy(&e.ch);
	blitz_broadcast_destroy(&e.bc);
	blitz_watch_destroy(&e.wt);
}
END_TEST

/*
 * A select woken on two branches, winning on one, passes the other's wake
 * on: one worker, busy while both wakes land.  Branch order [b, a]: the
 * select takes b's value; a's wake goes to the plain receiver queued
 * behind it on a, which would otherwise sleep beside a's value.
 */
struct sel_two {
	struct blitz_co co;
	struct blitz_channel *a, *b;
	uint64_t av, bv;
	size_t idx;
	struct blitz_select_branch br[2];
};

static enum blitz_poll sel_two_poll(void *arg, struct blitz_cx *cx)
{
	struct sel_two *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	s->br[0] = (struct blitz_select_branch)BLITZ_SELECT_CHANNEL_RECV(s->b, &s->bv);
	s->br[1] = (struct blitz_select_branch)BLITZ_SELECT_CHANNEL_RECV(s->a, &s->av);
	BLITZ_AWAIT(&s->co, blitz_select_poll(s->br, 2, cx, &s->idx));
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable sel_two_vt = BLITZ_TASK_VTABLE(sel_two_poll, NULL);

START_TEST(select_passes_on_an_unused_wake)
{
	struct blitz_runtime *rt = new_rt(1);
	struct blitz_channel a, b;
	struct sel_two s;
	struct blitz_task *st, *r;
	uint64_t x;

	ck_assert_int_eq(blitz_channel_init(&a, 2, 8), 0);
	ck_assert_int_eq(blitz_channel_init(&b, 2, 8), 0);
	s = (struct sel_two){ .a = &a, .b = &b };
	st = blitz_spawn(rt, &sel_two_vt, &s, sizeof(s));
	wait_queued(&a.receivers, 1);
	r = spawn_op(rt, &a, 0, 0);
	wait_queued(&a.receivers, 2);
	block_worker(rt);
	x = 1;
	ck_assert_int_eq(blitz_channel_try_send(&b, &x), 0);	/* wakes the select */
	x = 2;
	ck_assert_int_eq(blitz_channel_try_send(&a, &x), 0);	/* wakes its a-branch */
	ck_assert_uint_eq(stats_of(&a.receivers).queued, 1);	/* r still queued */
	atomic_store(&blocker_release, 1);
	wait_done(st);
	wait_done(r);
	ck_assert_uint_eq(((struct sel_two *)blitz_task_state(st))->idx, 0);
	ck_assert_uint_eq(((struct sel_two *)blitz_task_state(st))->bv, 1);
	ck_assert_int_eq(op_err(r), 0);
	ck_assert_uint_eq(((struct one_op *)blitz_task_state(r))->v, 2);
	check_waits(&a.receivers, "a");
	check_waits(&b.receivers, "b");
	blitz_task_release(st);
	blitz_task_release(r);
	blitz_runtime_free(rt);
	blitz_channel_destroy(&a);
	blitz_channel_destroy(&b);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Join and race                                                          */

struct sub_recv {
	struct blitz_channel *ch;
	uint64_t v;
	int err;
	int cancels;
	struct blitz_chan_waiter w;
};

static enum blitz_poll sub_recv_poll(void *arg, struct blitz_cx *cx)
{
	struct sub_recv *s = arg;

	return blitz_channel_recv_poll(s->ch, &s->w, cx, &s->v, &s->err);
}

static void sub_recv_cancel(void *arg)
{
	struct sub_recv *s = arg;

	blitz_chan_waiter_cancel(&s->w);
	s->cancels++;
}

struct sub_watch {
	struct blitz_watch_rx rx;
	int err;
	int cancels;
	struct blitz_chan_waiter w;
};

static enum blitz_poll sub_watch_poll(void *arg, struct blitz_cx *cx)
{
	struct sub_watch *s = arg;

	return blitz_watch_changed_poll(&s->rx, &s->w, cx, NULL, &s->err);
}

static void sub_watch_cancel(void *arg)
{
	struct sub_watch *s = arg;

	blitz_chan_waiter_cancel(&s->w);
	s->cancels++;
}

struct sub_yield { int left, polls, cancels; };

static enum blitz_poll sub_yield_poll(void *arg, struct blitz_cx *cx)
{
	struct sub_yield *s = arg;

	s->polls++;
	if (s->left-- > 0) {
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	return BLITZ_READY;
}

static void sub_yield_cancel(void *arg)
{
	((struct sub_yield *)arg)->cancels++;
}

struct joiner {
	struct blitz_co co;
	struct sub_yield y[3];
	struct sub_recv r;
	struct blitz_awaitable a[4];
};

static enum blitz_poll joiner_poll(void *arg, struct blitz_cx *cx)
{
	struct joiner *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = 0; i < 3; i++)
		s->a[i] = BLITZ_AWAITABLE(sub_yield_poll, sub_yield_cancel, &s->y[i]);
	s->a[3] = BLITZ_AWAITABLE(sub_recv_poll, sub_recv_cancel, &s->r);
	BLITZ_AWAIT(&s->co, blitz_join_all_poll(s->a, 4, cx));
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(s->a[i].done, 1);
	BLITZ_CO_END(&s->co);
}

static void joiner_drop(void *arg)
{
	blitz_join_all_cancel(((struct joiner *)arg)->a, 4);
}
static const struct blitz_task_vtable joiner_vt = BLITZ_TASK_VTABLE(joiner_poll, joiner_drop);

/* Spawns children that yield a while, and joins them all. */
struct child { int left; };

static enum blitz_poll child_poll(void *arg, struct blitz_cx *cx)
{
	struct child *c = arg;

	if (c->left-- > 0) {
		blitz_yield_now(cx);
		return BLITZ_PENDING;
	}
	return BLITZ_READY;
}
static const struct blitz_task_vtable child_vt = BLITZ_TASK_VTABLE(child_poll, NULL);

struct task_joiner {
	struct blitz_co co;
	struct blitz_task *t[8];
};

static enum blitz_poll task_joiner_poll(void *arg, struct blitz_cx *cx)
{
	struct task_joiner *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = 0; i < 8; i++) {
		struct child c = { (i * 37) % 50 };

		s->t[i] = blitz_spawn(NULL, &child_vt, &c, sizeof(c));
		ck_assert_ptr_nonnull(s->t[i]);
	}
	BLITZ_AWAIT(&s->co, blitz_join_tasks_poll(s->t, 8, cx));
	for (int i = 0; i < 8; i++) {
		ck_assert(blitz_task_done(s->t[i]));
		ck_assert_int_lt(((struct child *)blitz_task_state(s->t[i]))->left, 0);
		blitz_task_release(s->t[i]);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable task_joiner_vt = BLITZ_TASK_VTABLE(task_joiner_poll, NULL);

START_TEST(join_waits_for_all)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_channel ch;
	struct joiner j = { .y = { { 0 }, { 3 }, { 10 } } };
	struct task_joiner tj = { 0 };
	struct blitz_task *t;
	struct joiner *js;
	uint64_t v = 7;

	ck_assert_int_eq(blitz_channel_init(&ch, 2, 8), 0);
	j.r.ch = &ch;
	t = blitz_spawn(rt, &joiner_vt, &j, sizeof(j));
	wait_queued(&ch.receivers, 1);
	usleep(20000);		/* the yielding ones are long done */
	js = blitz_task_state(t);
	ck_assert(!blitz_task_done(t));
	ck_assert_int_eq(blitz_channel_try_send(&ch, &v), 0);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_uint_eq(js->r.v, 7);
	ck_assert_int_eq(js->y[2].polls, 11);	/* not polled again once done */
	ck_assert_int_eq(js->y[0].polls, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(js->y[i].cancels, 0);
	blitz_task_release(t);
	check_waits(&ch.receivers, "join");

	ck_assert_int_eq(blitz_block_on(rt, &task_joiner_vt, &tj, sizeof(tj)), 0);
	blitz_runtime_free(rt);
	blitz_channel_destroy(&ch);
}
END_TEST

struct racer {
	struct blitz_co co;
	struct sub_recv r;
	struct sub_watch wa;
	struct sub_yield y;
	size_t winner;
	struct blitz_awaitable a[3];
};

static enum blitz_poll racer_poll(void *arg, struct blitz_cx *cx)
{
	struct racer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	s->a[0] = BLITZ_AWAITABLE(sub_recv_poll, sub_recv_cancel, &s->r);
	s->a[1] = BLITZ_AWAITABLE(sub_watch_poll, sub_watch_cancel, &s->wa);
	s->a[2] = BLITZ_AWAITABLE(sub_yield_poll, sub_yield_cancel, &s->y);
	BLITZ_AWAIT(&s->co, blitz_race_poll(s->a, 3, cx, &s->winner));
	BLITZ_CO_END(&s->co);
}

static void racer_drop(void *arg)
{
	blitz_race_cancel(((struct racer *)arg)->a, 3);
}
static const struct blitz_task_vtable racer_vt = BLITZ_TASK_VTABLE(racer_poll, racer_drop);

/* Loser tasks wait on a channel for ever; their drops are counted each. */
static _Atomic int loser_drops[4];

struct loser {
	struct blitz_co co;
	struct blitz_channel *ch;
	int idx;
	uint64_t v;
	int err;
	struct blitz_chan_waiter w;
};

static enum blitz_poll loser_poll(void *arg, struct blitz_cx *cx)
{
	struct loser *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(s->ch, &s->w, cx, &s->v, &s->err));
	BLITZ_CO_END(&s->co);
}

static void loser_drop(void *arg)
{
	struct loser *s = arg;

	blitz_chan_waiter_cancel(&s->w);
	atomic_fetch_add(&loser_drops[s->idx], 1);
}
static const struct blitz_task_vtable loser_vt = BLITZ_TASK_VTABLE(loser_poll, loser_drop);

struct task_racer {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct blitz_task *t[4];
	size_t winner;
};

static enum blitz_poll task_racer_poll(void *arg, struct blitz_cx *cx)
{
	struct task_racer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = 0; i < 3; i++) {
		struct loser l = { .ch = s->ch, .idx = i };

		s->t[i] = blitz_spawn(NULL, &loser_vt, &l, sizeof(l));
	}
	s->t[3] = blitz_spawn(NULL, &child_vt, &(struct child){ 10 }, sizeof(struct child));
	BLITZ_AWAIT(&s->co, blitz_race_tasks_poll(s->t, 4, cx, &s->winner));
	ck_assert_uint_eq(s->winner, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_ptr_null(s->t[i]);
	blitz_task_release(s->t[3]);
	s->t[3] = NULL;		/* drop runs on completion too */
	BLITZ_CO_END(&s->co);
}

static void task_racer_drop(void *arg)
{
	blitz_race_tasks_cancel(((struct task_racer *)arg)->t, 4);
}
static const struct blitz_task_vtable task_racer_vt =
	BLITZ_TASK_VTABLE(task_racer_poll, task_racer_drop);

START_TEST(race_cancels_the_losers)
{
	struct blitz_runtime *rt = new_rt(2);
	struct blitz_channel ch;
	struct blitz_watch wt;
	struct racer r = { .y = { 5 } };
	struct task_racer tr = { 0 };
	struct blitz_task *t;
	double end;
	uint64_t v = 3;

	ck_assert_int_eq(blitz_channel_init(&ch, 2, 8), 0);
	ck_assert_int_eq(blitz_watch_init(&wt, 8, NULL), 0);

	/* The yielding one wins; the channel and watch waiters are taken back. */
	r.r.ch = &ch;
	blitz_watch_subscribe(&wt, &r.wa.rx);
	ck_assert_int_eq(blitz_block_on(rt, &racer_vt, &r, sizeof(r)), 0);
	ck_assert_uint_eq(r.winner, 2);
	ck_assert_int_eq(r.r.cancels, 1);
	ck_assert_int_eq(r.wa.cancels, 1);
	ck_assert_int_eq(r.y.cancels, 0);
	ck_assert_int_eq(r.a[2].done, 1);
	ck_assert_int_eq(r.a[0].done, 2);
	ck_assert_uint_ge(stats_of(&ch.receivers).waits, 1);	/* it did wait */
	check_waits(&ch.receivers, "race channel");
	check_waits(&wt.receivers, "race watch");

	/* The channel one wins when a value comes; the others are cancelled. */
	r = (struct racer){ .y = { 1 << 30 } };	/* a yielder that never finishes */
	r.r.ch = &ch;
	blitz_watch_subscribe(&wt, &r.wa.rx);
	t = blitz_spawn(rt, &racer_vt, &r, sizeof(r));
	wait_queued(&ch.receivers, 1);
	wait_queued(&wt.receivers, 1);
	ck_assert_int_eq(blitz_channel_try_send(&ch, &v), 0);
	ck_assert_int_eq(blitz_join(t), 0);
	ck_assert_uint_eq(((struct racer *)blitz_task_state(t))->winner, 0);
	ck_assert_uint_eq(((struct racer *)blitz_task_state(t))->r.v, 3);
	ck_assert_int_eq(((struct racer *)blitz_task_state(t))->wa.cancels, 1);
	ck_assert_int_eq(((struct racer *)blitz_task_state(t))->y.cancels, 1);
	ck_assert_int_eq(((struct racer *)blitz_task_state(t))->r.cancels, 0);
	blitz_task_release(t);
	check_waits(&ch.receivers, "race channel");
	check_waits(&wt.receivers, "race watch");

	/* Tasks: the quick one wins, the three waiting ones are cancelled and dropped once. */
	for (int i = 0; i < 4; i++)
		atomic_store(&loser_drops[i], 0);
	tr.ch = &ch;
	ck_assert_int_eq(blitz_block_on(rt, &task_racer_vt, &tr, sizeof(tr)), 0);
	end = now_s() + 10 * test_timeout_scale();
	while (atomic_load(&loser_drops[0]) + atomic_load(&loser_drops[1]) +
	       atomic_load(&loser_drops[2]) < 3) {
		ck_assert_msg(now_s() < end, "losers not dropped");
		usleep(200);
	}
	usleep(10000);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(atomic_load(&loser_drops[i]), 1);
	check_waits(&ch.receivers, "race tasks");
	blitz_runtime_free(rt);
	blitz_channel_destroy(&ch);
	blitz_watch_destroy(&wt);
}
END_TEST

static Suite *channel_suite(void)
{
	Suite *s = suite_create("channel");
	TCase *tc = TCASE("channel", 60);

	tcase_add_test(tc, channel_try_single_thread);
	tcase_add_test(tc, channel_try_from_threads);
	tcase_add_test(tc, channel_close_happens_before_epipe);
	tcase_add_test(tc, channel_stress_capacity_1);
	tcase_add_test(tc, channel_stress_capacity_2);
	tcase_add_test(tc, channel_stress_capacity_4);
	tcase_add_test(tc, channel_threads_to_tasks);
	tcase_add_test(tc, channel_close_wakes_everyone);
	tcase_add_test(tc, channel_cancel_waiting_tasks);
	tcase_add_test(tc, channel_cancelled_wake_is_passed_on);
	suite_add_tcase(s, tc);

	tc = TCASE("channel-pass-on", 60);
	tcase_add_loop_test(tc, channel_wake_passed_on_past_a_send_in_progress, 0, 2);
	suite_add_tcase(s, tc);

	tc = TCASE("broadcast-watch", 60);
	tcase_add_test(tc, broadcast_lag_count_is_exact);
	tcase_add_test(tc, broadcast_stress_every_message_or_counted);
	tcase_add_test(tc, watch_changed_fires_for_newer);
	tcase_add_test(tc, watch_generations_never_go_backwards);
	suite_add_tcase(s, tc);

	tc = TCASE("select-join-race", 60);
	tcase_add_test(tc, select_never_loses_a_message);
	tcase_add_test(tc, select_mixed_sources);
	tcase_add_test(tc, select_passes_on_an_unused_wake);
	tcase_add_test(tc, join_waits_for_all);
	tcase_add_test(tc, race_cancels_the_losers);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("channel", channel_suite)
