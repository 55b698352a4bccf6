// SPDX-License-Identifier: MIT
/*
 * test_oneshot.c - the Oneshot: send/receive, close, try_recv, a receiver
 * that withdraws (recv_cancel) and a different task that polls next, and a
 * stress of withdraw/re-register racing the sender (no lost or stale wake).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

struct rx {
	struct blitz_co co;
	struct blitz_oneshot *ch;
	uint64_t v;
	int err;
	_Atomic int polls;
};

static enum blitz_poll rx_poll(void *arg, struct blitz_cx *cx)
{
	struct rx *r = arg;

	atomic_fetch_add(&r->polls, 1);
	BLITZ_CO_BEGIN(&r->co);
	BLITZ_AWAIT(&r->co, blitz_oneshot_recv_poll(r->ch, cx, &r->v, &r->err));
	BLITZ_CO_END(&r->co);
}

static void rx_drop(void *arg)
{
	blitz_oneshot_recv_cancel(((struct rx *)arg)->ch);
}
static const struct blitz_task_vtable rx_vt = BLITZ_TASK_VTABLE(rx_poll, rx_drop);

static struct blitz_runtime *rt2(void)
{
	struct blitz_config c;

	blitz_config_default(&c);
	c.workers = 2;
	return blitz_runtime_new(&c);
}

START_TEST(send_then_receive_and_close)
{
	struct blitz_oneshot ch;
	uint64_t v = 0;
	int err = 1;

	blitz_oneshot_init(&ch);
	ck_assert_int_eq(blitz_oneshot_try_recv(&ch, &v, &err), BLITZ_PENDING);
	ck_assert_int_eq(blitz_oneshot_send(&ch, 42), 0);
	ck_assert_int_eq(blitz_oneshot_send(&ch, 43), -EPIPE);	/* once */
	ck_assert_int_eq(blitz_oneshot_try_recv(&ch, &v, &err), BLITZ_READY);
	ck_assert_int_eq(v, 42);
	ck_assert_int_eq(err, 0);
	blitz_oneshot_init(&ch);
	blitz_oneshot_close(&ch);
	ck_assert_int_eq(blitz_oneshot_try_recv(&ch, &v, &err), BLITZ_READY);
	ck_assert_int_eq(err, -EPIPE);
	ck_assert_int_eq(blitz_oneshot_send(&ch, 1), -EPIPE);
}
END_TEST

START_TEST(cancelled_receiver_then_another_task)
{
	struct blitz_runtime *rt = rt2();
	struct blitz_oneshot ch;
	struct rx a = { .ch = &ch }, b = { .ch = &ch };
	struct blitz_task *ta, *tb;

	blitz_oneshot_init(&ch);
	ta = blitz_spawn(rt, &rx_vt, &a, sizeof(a));
	while (atomic_load(&((struct rx *)blitz_task_state(ta))->polls) == 0)
		usleep(100);
	/* The first receiver is cancelled: its drop takes its waker back. */
	blitz_task_cancel(ta);
	ck_assert_int_eq(blitz_join(ta), -ECANCELED);
	blitz_task_release(ta);
	/* A second task receives: it must be the one woken. */
	tb = blitz_spawn(rt, &rx_vt, &b, sizeof(b));
	while (atomic_load(&((struct rx *)blitz_task_state(tb))->polls) == 0)
		usleep(100);
	ck_assert_int_eq(blitz_oneshot_send(&ch, 7), 0);
	ck_assert_int_eq(blitz_join(tb), 0);
	ck_assert_int_eq(((struct rx *)blitz_task_state(tb))->v, 7);
	blitz_task_release(tb);
	blitz_runtime_free(rt);
}
END_TEST

/* A receiver that withdraws and re-registers on every poll, racing senders. */
struct fickle {
	struct blitz_oneshot *ch;
	uint64_t v;
	int err, done;
};

static enum blitz_poll fickle_poll(void *arg, struct blitz_cx *cx)
{
	struct fickle *f = arg;

	if (blitz_oneshot_recv_poll(f->ch, cx, &f->v, &f->err) == BLITZ_READY)
		return BLITZ_READY;
	blitz_oneshot_recv_cancel(f->ch);		/* change of mind... */
	if (blitz_oneshot_recv_poll(f->ch, cx, &f->v, &f->err) == BLITZ_READY)
		return BLITZ_READY;			/* ...and back */
	blitz_yield_now(cx);
	return BLITZ_PENDING;
}
static const struct blitz_task_vtable fickle_vt = BLITZ_TASK_VTABLE(fickle_poll, NULL);

START_TEST(withdraw_races_send)
{
	struct blitz_runtime *rt = rt2();
	int rounds = test_timeout_scale() > 1 ? 500 : 5000;

	for (int i = 0; i < rounds; i++) {
		struct blitz_oneshot ch;
		struct fickle f = { .ch = &ch };
		struct blitz_task *t;

		blitz_oneshot_init(&ch);
		t = blitz_spawn(rt, &fickle_vt, &f, sizeof(f));
		if (i % 3)
			sched_yield();
		ck_assert_int_eq(blitz_oneshot_send(&ch, (uint64_t)i), 0);
		ck_assert_int_eq(blitz_join(t), 0);
		if (((struct fickle *)blitz_task_state(t))->v != (uint64_t)i)
			ck_abort_msg("round %d: received %llu", i,
				     (unsigned long long)((struct fickle *)blitz_task_state(t))->v);
		blitz_task_release(t);
	}
	blitz_runtime_free(rt);
}
END_TEST

static Suite *oneshot_suite(void)
{
	Suite *s = suite_create("oneshot");
	TCase *tc = TCASE("oneshot", 60);

	tcase_add_test(tc, send_then_receive_and_close);
	tcase_add_test(tc, cancelled_receiver_then_another_task);
	tcase_add_test(tc, withdraw_races_send);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("oneshot", oneshot_suite)
