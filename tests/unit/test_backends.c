// SPDX-License-Identifier: MIT
/*
 * test_backends.c - each I/O backend on its own (no runtime): operations
 * complete with the right results, wait when they must, wake the waiter
 * once, cancel, a blocked reap returns on wake(), and a bounded epoll or
 * poll reap leaves the rest in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "../../backends/driver.h"
#include "suites.h"

bool io_submit_op(struct blitz_io *io, struct blitz_io_op *op, struct blitz_waker waker);

/* A waker that counts its wakes and drops. */
struct counter { _Atomic int wakes, drops; };
static void c_wake(const void *d) { atomic_fetch_add(&((struct counter *)d)->wakes, 1); }
static void c_drop(const void *d) { atomic_fetch_add(&((struct counter *)d)->drops, 1); }
static struct blitz_waker c_clone(const void *d);
static const struct blitz_waker_vtable c_vt = { c_wake, c_wake, c_clone, c_drop };
static struct blitz_waker c_clone(const void *d) { return (struct blitz_waker){ d, &c_vt }; }

static struct blitz_io io;
static bool have;

/* driver_on - the driver without a runtime, on @kind (BLITZ_BACKEND_AUTO: the default order). */
static int driver_on(enum blitz_io_backend kind)
{
	struct blitz_config c;

	blitz_config_default(&c);
	c.backend = kind;
	return io_driver_init(&io, NULL, &c);
}

static void open_backend(int i)
{
	have = driver_on(test_backend_kind(i)) == 0 && io.backend->kind == test_backend_kind(i);
	if (!have && io.backend)
		io_driver_deinit(&io);
}

static void reap_until(struct counter *c, int wakes)
{
	for (int i = 0; i < 1000 && atomic_load(&c->wakes) < wakes; i++)
		io_driver_reap(&io, 10000000, IO_REAP_ALL);
	ck_assert_int_eq(atomic_load(&c->wakes), wakes);
}

START_TEST(read_waits_then_completes)
{
	int fds[2];
	char buf[16] = { 0 };
	struct blitz_io_op op;
	struct counter c = { 0 };

	open_backend(_i);
	if (!have)
		SKIP("%s unavailable here", test_backend_name(_i));
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	blitz_io_prep_read(&op, fds[0], buf, sizeof(buf), -1);
	ck_assert(!io_submit_op(&io, &op, c_clone(&c)));	/* nothing to read yet */
	io_driver_reap(&io, 0, IO_REAP_ALL);
	ck_assert_int_eq(atomic_load(&c.wakes), 0);
	ck_assert_int_eq(write(fds[1], "hello", 5), 5);
	reap_until(&c, 1);
	ck_assert_int_eq(op.result, 5);
	ck_assert_str_eq(buf, "hello");
	ck_assert_uint_eq(atomic_load(&op.state), IO_OP_DONE);
	ck_assert_int_eq(atomic_load(&io.in_flight), 0);
	close(fds[0]);
	close(fds[1]);
	io_driver_deinit(&io);
}
END_TEST

START_TEST(socket_ops_and_errors)
{
	int sv[2];
	char buf[8];
	struct blitz_io_op op;
	struct counter c = { 0 };
	bool now;

	open_backend(_i);
	if (!have)
		SKIP("%s unavailable here", test_backend_name(_i));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	blitz_io_prep_send(&op, sv[0], "abc", 3, 0);
	now = io_submit_op(&io, &op, c_clone(&c));
	if (!now)
		reap_until(&c, 1);
	ck_assert_int_eq(op.result, 3);
	/* Count from here: the send may have completed at once (no wake). */
	int before = atomic_load(&c.wakes);

	blitz_io_prep_recv(&op, sv[1], buf, sizeof(buf), 0);
	now = io_submit_op(&io, &op, c_clone(&c));
	if (!now)
		reap_until(&c, before + 1);
	ck_assert_int_eq(op.result, 3);
	ck_assert(memcmp(buf, "abc", 3) == 0);
	/* Peer gone: a send fails with EPIPE, without SIGPIPE. */
	close(sv[1]);
	blitz_io_prep_send(&op, sv[0], "x", 1, 0);
	before = atomic_load(&c.wakes);

	now = io_submit_op(&io, &op, c_clone(&c));
	if (!now)
		reap_until(&c, before + 1);
	ck_assert_int_eq(op.result, -EPIPE);
	/* A bad descriptor is an error result, not a crash. */
	blitz_io_prep_read(&op, 1000000, buf, 1, -1);
	before = atomic_load(&c.wakes);
	now = io_submit_op(&io, &op, c_clone(&c));
	if (!now)
		reap_until(&c, before + 1);
	ck_assert_int_eq(op.result, -EBADF);
	close(sv[0]);
	io_driver_deinit(&io);
}
END_TEST

START_TEST(cancel_pending)
{
	int fds[2];
	char buf[4];
	struct blitz_io_op op;
	struct counter c = { 0 };

	open_backend(_i);
	if (!have)
		SKIP("%s unavailable here", test_backend_name(_i));
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	blitz_io_prep_read(&op, fds[0], buf, sizeof(buf), -1);
	ck_assert(!io_submit_op(&io, &op, c_clone(&c)));
	io_driver_reap(&io, 0, IO_REAP_ALL);
	io.backend->cancel(&io, &op);
	reap_until(&c, 1);
	ck_assert_int_eq(op.result, -ECANCELED);
	ck_assert_int_eq(atomic_load(&io.in_flight), 0);
	close(fds[0]);
	close(fds[1]);
	io_driver_deinit(&io);
}
END_TEST

/*
 * The pause only makes it likely that the reap is asleep when the wake
 * comes; a wake that comes first is not lost (an eventfd counts it), so
 * either order must end the reap.
 */
static void *waker_thread(void *arg)
{
	usleep(20000);
	io.backend->wake(&io);
	return arg;
}

START_TEST(wake_interrupts_blocking_reap)
{
	int fds[2];
	char buf[4];
	struct blitz_io_op op;
	struct counter c = { 0 };
	pthread_t th;

	open_backend(_i);
	if (!have)
		SKIP("%s unavailable here", test_backend_name(_i));
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	blitz_io_prep_read(&op, fds[0], buf, sizeof(buf), -1);	/* something to wait for */
	ck_assert(!io_submit_op(&io, &op, c_clone(&c)));
	pthread_create(&th, NULL, waker_thread, NULL);
	/*
	 * An hour: only the wake can end it, and a reap that misses the wake
	 * hangs until Check's timeout (scaled), with no duration to judge.
	 */
	io_driver_reap(&io, 3600ull * 1000000000ull, IO_REAP_ALL);
	pthread_join(th, NULL);
	ck_assert_int_eq(atomic_load(&c.wakes), 0);		/* woken, nothing completed */
	io.backend->cancel(&io, &op);
	reap_until(&c, 1);
	close(fds[0]);
	close(fds[1]);
	io_driver_deinit(&io);
}
END_TEST

START_TEST(many_waiters_fifo_and_exactly_once)
{
	enum { N = 64 };
	int sv[2];
	char bufs[N][1];
	struct blitz_io_op ops[N];
	struct counter c = { 0 };
	char data[N];

	open_backend(_i);
	if (!have)
		SKIP("%s unavailable here", test_backend_name(_i));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	for (int k = 0; k < N; k++) {
		blitz_io_prep_recv(&ops[k], sv[1], bufs[k], 1, 0);
		ck_assert(!io_submit_op(&io, &ops[k], c_clone(&c)));
	}
	for (int k = 0; k < N; k++) {
		data[k] = (char)k;
		ck_assert_int_eq(send(sv[0], &data[k], 1, 0), 1);
	}
	reap_until(&c, N);
	/* Every receive got exactly one message, and every message arrived once. */
	int seen[N] = { 0 };

	for (int k = 0; k < N; k++) {
		ck_assert_int_eq(ops[k].result, 1);
		seen[(int)bufs[k][0]]++;
	}
	for (int k = 0; k < N; k++)
		ck_assert_int_eq(seen[k], 1);
	/* The readiness backends deliver in submission order. */
	if (test_backend_kind(_i) != BLITZ_BACKEND_IO_URING)
		for (int k = 0; k < N; k++)
			ck_assert_int_eq(bufs[k][0], k);
	close(sv[0]);
	close(sv[1]);
	io_driver_deinit(&io);
}
END_TEST

/*
 * A reap bounded to @max descriptors (a worker's run-queue room)
 * completes the reads of @max pipes and leaves the others, still ready,
 * for the next reaps, in their order: epoll's is the kernel's ready list
 * (the writes' order), poll's the arming (the descriptors armed longest
 * ago first).  The pipes are armed in one order and written in the other.
 */
START_TEST(bounded_reap_leaves_the_rest_in_order)
{
	enum { N = 6 };
	static const enum blitz_io_backend kinds[] = { BLITZ_BACKEND_EPOLL, BLITZ_BACKEND_POLL };
	const enum blitz_io_backend kind = kinds[_i];
	/* served[j]: the pipe whose read the j-th completion is */
	int served[N], fds[N][2];
	char bufs[N][1];
	struct blitz_io_op ops[N];
	struct counter c = { 0 };

	for (int j = 0; j < N; j++)
		served[j] = kind == BLITZ_BACKEND_EPOLL ? N - 1 - j : j;
	have = driver_on(kind) == 0 && io.backend->kind == kind;
	if (!have) {
		if (io.backend)
			io_driver_deinit(&io);
		SKIP("%s unavailable here", kind == BLITZ_BACKEND_EPOLL ? "epoll" : "poll");
	}
	for (int k = 0; k < N; k++) {
		ck_assert_int_eq(pipe2(fds[k], O_NONBLOCK | O_CLOEXEC), 0);
		blitz_io_prep_read(&ops[k], fds[k][0], bufs[k], 1, -1);
		ck_assert(!io_submit_op(&io, &ops[k], c_clone(&c)));
	}
	for (int k = N - 1; k >= 0; k--)
		ck_assert_int_eq(write(fds[k][1], "x", 1), 1);
	ck_assert_int_eq(io_driver_reap(&io, 0, 0), 0);		/* no room: nothing taken */
	ck_assert_int_eq(atomic_load(&c.wakes), 0);
	ck_assert_int_eq(io_driver_reap(&io, 0, 2), 2);
	ck_assert_int_eq(atomic_load(&c.wakes), 2);
	ck_assert_int_eq(ops[served[0]].result, 1);
	ck_assert_int_eq(ops[served[1]].result, 1);
	ck_assert_int_eq(io_driver_reap(&io, 0, 3), 3);
	ck_assert_int_eq(atomic_load(&c.wakes), 5);
	for (int j = 2; j < 5; j++)
		ck_assert_int_eq(ops[served[j]].result, 1);
	ck_assert_int_eq(ops[served[N - 1]].state, IO_OP_PENDING);	/* the last one waits */
	ck_assert_int_eq(io_driver_reap(&io, 0, IO_REAP_ALL), 1);
	ck_assert_int_eq(atomic_load(&c.wakes), N);
	for (int k = 0; k < N; k++) {
		ck_assert_int_eq(ops[k].result, 1);
		close(fds[k][0]);
		close(fds[k][1]);
	}
	io_driver_deinit(&io);
}
END_TEST

START_TEST(selection_falls_back_and_says_so)
{
	enum blitz_io_backend k;

	ck_assert_int_eq(blitz_backend_parse("epoll", &k), 0);
	ck_assert_int_eq(k, BLITZ_BACKEND_EPOLL);
	ck_assert_int_eq(blitz_backend_parse("kqueue", &k), -EINVAL);
	ck_assert_int_eq(driver_on(BLITZ_BACKEND_AUTO), 0);
	ck_assert_ptr_nonnull(io.backend);
	io_driver_deinit(&io);
}
END_TEST

static Suite *backends_suite(void)
{
	Suite *s = suite_create("backends");
	TCase *tc = TCASE("ops", 30);

	tcase_add_loop_test(tc, read_waits_then_completes, 0, 3);
	tcase_add_loop_test(tc, socket_ops_and_errors, 0, 3);
	tcase_add_loop_test(tc, cancel_pending, 0, 3);
	tcase_add_loop_test(tc, wake_interrupts_blocking_reap, 0, 3);
	tcase_add_loop_test(tc, many_waiters_fifo_and_exactly_once, 0, 3);
	tcase_add_loop_test(tc, bounded_reap_leaves_the_rest_in_order, 0, 2);
	tcase_add_test(tc, selection_falls_back_and_says_so);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("backends", backends_suite)
