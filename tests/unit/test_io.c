// SPDX-License-Identifier: MIT
/*
 * test_io.c - I/O through the runtime on each backend: a task waiting on a
 * descriptor is woken by its completion even when every worker sleeps;
 * cancel and shutdown with operations in flight free everything.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

static bool backend_is(struct blitz_runtime *rt, int i)
{
	return !strcmp(blitz_io_backend_name(rt), test_backend_names[i]);
}

/* Reads `rounds` messages from a pipe, one at a time. */
struct reader {
	struct blitz_co co;
	struct blitz_io_op op;
	int fd, rounds;
	_Atomic int got;	/* read by the test thread */
	char buf[64];
};

static _Atomic int reader_drops;

static void reader_drop(void *arg)
{
	struct reader *r = arg;

	blitz_io_cancel(&r->op);
	atomic_fetch_add(&reader_drops, 1);
}

static enum blitz_poll reader_poll(void *arg, struct blitz_cx *cx)
{
	struct reader *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	for (atomic_store(&r->got, 0); atomic_load(&r->got) < r->rounds;
	     atomic_fetch_add(&r->got, 1)) {
		blitz_io_prep_read(&r->op, r->fd, r->buf, sizeof(r->buf), -1);
		BLITZ_AWAIT(&r->co, blitz_io_poll(&r->op, cx));
		ck_assert_int_gt(r->op.result, 0);
	}
	BLITZ_CO_END(&r->co);
}
static const struct blitz_task_vtable reader_vt = BLITZ_TASK_VTABLE(reader_poll, reader_drop);

START_TEST(completion_wakes_sleeping_runtime)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	int fds[2];
	struct reader r = { .rounds = 50 };
	struct blitz_task *t;

	if (!backend_is(rt, _i)) {
		blitz_runtime_free(rt);
		SKIP("%s unavailable here", test_backend_names[_i]);
	}
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	r.fd = fds[0];
	t = blitz_spawn(rt, &reader_vt, &r, sizeof(r));
	for (int i = 0; i < r.rounds; i++) {
		usleep(2000);		/* let every worker go to sleep */
		ck_assert_int_eq(write(fds[1], "x", 1), 1);
		/* Wait for this message to be consumed before the next. */
		while (atomic_load(&((struct reader *)blitz_task_state(t))->got) <= i &&
		       !blitz_task_done(t))
			usleep(100);
	}
	ck_assert_int_eq(blitz_join(t), 0);
	blitz_task_release(t);
	blitz_runtime_free(rt);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(cancel_and_shutdown_with_io_in_flight)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	int fds[2];
	struct reader r = { .rounds = 1 };
	struct blitz_task *a;

	if (!backend_is(rt, _i)) {
		blitz_runtime_free(rt);
		SKIP("%s unavailable here", test_backend_names[_i]);
	}
	atomic_store(&reader_drops, 0);
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	r.fd = fds[0];
	a = blitz_spawn(rt, &reader_vt, &r, sizeof(r));
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(blitz_spawn_detached(rt, &reader_vt, &r, sizeof(r)), 0);
	usleep(20000);
	blitz_task_cancel(a);
	ck_assert_int_eq(blitz_join(a), -ECANCELED);
	ck_assert_int_eq(atomic_load(&reader_drops), 1);
	blitz_task_release(a);
	/* 20 readers still wait on the pipe: shutdown cancels and frees them. */
	blitz_runtime_free(rt);
	ck_assert_int_eq(atomic_load(&reader_drops), 21);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(backend_env_is_honoured)
{
	struct blitz_runtime *rt;

	setenv("BLITZ_BACKEND", "poll", 1);
	rt = blitz_runtime_new(NULL);
	unsetenv("BLITZ_BACKEND");
	ck_assert_ptr_nonnull(rt);
	ck_assert_str_eq(blitz_io_backend_name(rt), "poll");
	blitz_runtime_free(rt);
}
END_TEST

/* In a child: io_uring_setup fails with EPERM, as under a seccomp policy. */
static void forbid_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(77);
}

START_TEST(io_uring_refused_falls_back_and_says_so)
{
	int out[2], status;
	char msg[512] = { 0 };
	pid_t child;

	ck_assert_int_eq(pipe(out), 0);
	child = fork();
	if (child == 0) {
		struct blitz_config c;
		struct blitz_runtime *rt;

		dup2(out[1], 2);	/* the runtime's message goes to stderr */
		forbid_io_uring();
		blitz_config_default(&c);
		c.workers = 1;
		rt = blitz_runtime_new(&c);
		if (!rt)
			_exit(1);
		fprintf(stderr, "backend=%s\n", blitz_io_backend_name(rt));
		blitz_runtime_free(rt);
		_exit(0);
	}
	close(out[1]);
	for (size_t got = 0; got < sizeof(msg) - 1;) {	/* to EOF: several writes */
		ssize_t r = read(out[0], msg + got, sizeof(msg) - 1 - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(out[0]);
	waitpid(child, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		SKIP("seccomp unavailable");
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(strstr(msg, "io_uring unavailable (Operation not permitted)"), "said: %s", msg);
	ck_assert_msg(strstr(msg, "using epoll"), "said: %s", msg);
	ck_assert_msg(strstr(msg, "backend=epoll"), "said: %s", msg);
}
END_TEST

static Suite *io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *tc = TCASE("runtime", 60);

	tcase_add_loop_test(tc, completion_wakes_sleeping_runtime, 0, 3);
	tcase_add_loop_test(tc, cancel_and_shutdown_with_io_in_flight, 0, 3);
	tcase_add_test(tc, backend_env_is_honoured);
	tcase_add_test(tc, io_uring_refused_falls_back_and_says_so);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("io", io_suite)
