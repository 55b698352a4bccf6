// SPDX-License-Identifier: MIT
/*
 * test_bad_input_io.c - the I/O headers' functions called with NULL, zero
 * and out-of-range arguments (include/blitz.h, "Bad input"): io, net,
 * pipe, signal, process, blocking, fs and stream.  The descriptor tests
 * run on every backend: a bad descriptor is -EBADF on each, never a wait
 * that does not end.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

/* ---------------------------------------------------------------------- */
/* io.h: every operation on descriptor -1                                  */

enum { NR_BAD_OPS = 16 };

struct bad_ops {
	struct blitz_io_op op[NR_BAD_OPS];
	bool done[NR_BAD_OPS];
	char buf[8];
	struct sockaddr_storage sa;
	socklen_t salen;
	struct msghdr msg;
	struct statx stx;
	bool started;
};

static void prep_bad_ops(struct bad_ops *s)
{
	struct blitz_io_op *op = s->op;

	s->salen = sizeof(s->sa);
	blitz_io_prep_read(op++, -1, s->buf, sizeof(s->buf), -1);
	blitz_io_prep_write(op++, -1, s->buf, sizeof(s->buf), 0);
	blitz_io_prep_recv(op++, -1, s->buf, sizeof(s->buf), 0);
	blitz_io_prep_send(op++, -1, s->buf, sizeof(s->buf), 0);
	blitz_io_prep_accept(op++, -1, (struct sockaddr *)&s->sa, &s->salen);
	blitz_io_prep_connect(op++, -1, (struct sockaddr *)&s->sa, sizeof(struct sockaddr_in));
	blitz_io_prep_recvmsg(op++, -1, &s->msg, 0);
	blitz_io_prep_sendmsg(op++, -1, &s->msg, 0);
	blitz_io_prep_poll(op++, -1, 0);
	blitz_io_prep_poll(op++, -1, 1);
	/* File operations (io_uring only; the others say -EOPNOTSUPP). */
	blitz_io_prep_fsync(op++, -1, 0);
	blitz_io_prep_openat(op++, -1, "x", O_RDONLY, 0);
	blitz_io_prep_statx(op++, -1, "x", 0, STATX_BASIC_STATS, &s->stx);
	blitz_io_prep_mkdirat(op++, -1, "x", 0700);
	blitz_io_prep_renameat(op++, -1, "x", "y", 0);
	blitz_io_prep_unlinkat(op++, -1, "x", 0);
	ck_assert_int_eq(op - s->op, NR_BAD_OPS);
}

static enum blitz_poll bad_ops_poll(void *arg, struct blitz_cx *cx)
{
	struct bad_ops *s = arg;
	enum blitz_poll all = BLITZ_READY;

	if (!s->started) {
		prep_bad_ops(s);
		s->started = true;
	}
	for (int i = 0; i < NR_BAD_OPS; i++) {
		if (s->done[i])
			continue;
		if (blitz_io_poll(&s->op[i], cx) == BLITZ_READY)
			s->done[i] = true;
		else
			all = BLITZ_PENDING;
	}
	return all;
}

START_TEST(io_ops_on_a_bad_descriptor_are_ebadf)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct bad_ops *s = calloc(1, sizeof(*s));
	bool uring;

	NEED_BACKEND(rt, _i);
	uring = !strcmp(blitz_io_backend_name(rt), "io_uring");
	test_run_poll(rt, bad_ops_poll, s);
	for (int i = 0; i < NR_BAD_OPS; i++) {
		int res = s->op[i].result;
		const char *name = blitz_io_opcode_name(s->op[i].opcode);

		if (blitz_io_opcode_is_file(s->op[i].opcode) && !uring)
			ck_assert_msg(res == -EOPNOTSUPP, "%s: %d", name, res);
		else
			ck_assert_msg(res == -EBADF, "%s on fd -1 (%s): %d", name,
				      test_backend_name(_i), res);
	}
	/* Cancelling an operation that is not pending: nothing. */
	blitz_io_cancel(&s->op[0]);
	free(s);
	blitz_runtime_free(rt);
}
END_TEST

/* Zero bytes: 0 at once, even on an empty pipe (no wait for readiness). */
struct zero_len {
	int rd, wr;
	struct blitz_io_op r, w;
	struct blitz_xfer pr, pw, pwa;
	int step;
};

static enum blitz_poll zero_len_poll(void *arg, struct blitz_cx *cx)
{
	struct zero_len *s = arg;

	if (s->step == 0) {
		blitz_io_prep_read(&s->r, s->rd, NULL, 0, -1);
		blitz_io_prep_write(&s->w, s->wr, NULL, 0, -1);
		s->step = 1;
	}
	if (blitz_io_poll(&s->r, cx) == BLITZ_PENDING || blitz_io_poll(&s->w, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	if (blitz_pipe_read_poll(&s->pr, s->rd, NULL, 0, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	if (blitz_pipe_write_poll(&s->pw, s->wr, NULL, 0, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	return blitz_pipe_write_all_poll(&s->pwa, s->wr, NULL, 0, cx);
}

START_TEST(zero_length_transfers_complete_at_once)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct zero_len s = { 0 };
	int p[2];

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	s.rd = p[0];
	s.wr = p[1];
	test_run_poll(rt, zero_len_poll, &s);
	ck_assert_int_eq(s.r.result, 0);
	ck_assert_int_eq(s.w.result, 0);
	ck_assert_int_eq(s.pr.result, 0);
	ck_assert_int_eq(s.pw.result, 0);
	ck_assert_int_eq(s.pwa.result, 0);
	close(p[0]);
	close(p[1]);
	blitz_runtime_free(rt);
}
END_TEST

START_TEST(io_names_out_of_range)
{
	ck_assert_str_eq(blitz_io_opcode_name(BLITZ_IO_NR_OPCODES), "?");
	ck_assert_str_eq(blitz_io_opcode_name(UINT32_MAX), "?");
	ck_assert_ptr_null(blitz_io_backend_name(NULL));	/* no current runtime */
}
END_TEST

/* ---------------------------------------------------------------------- */
/* net.h, pipe.h                                                           */

START_TEST(addr_parse_refuses_each_malformed_address)
{
	static const char *const bad[] = {
		"", "1.2.3.4", "1.2.3.4:", "1.2.3.4:70000", "1.2.3.4:-1", "1.2.3.4:80x",
		"1.2.3.400:80", "[::1", "[::1]80", "[::1]:", "[zz]:80", "unix:",
		"host.example:80", ":", "::::",
	};
	struct blitz_addr a;
	char err[128], tiny[1] = { 'x' }, longpath[300], longhost[400];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ck_assert_msg(blitz_addr_parse(bad[i], &a, err, sizeof(err)) == -EINVAL, "%s", bad[i]);
		ck_assert_msg(err[0], "no message for '%s'", bad[i]);
		ck_assert_int_eq(blitz_addr_parse(bad[i], &a, NULL, 0), -EINVAL);
		ck_assert_int_eq(blitz_addr_parse(bad[i], &a, tiny, 1), -EINVAL);
		ck_assert_int_eq(tiny[0], 0);
	}
	ck_assert_int_eq(blitz_addr_parse(NULL, &a, err, sizeof(err)), -EINVAL);
	/* Longer than a Unix socket path or a host name can be. */
	memset(longpath, 'p', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = 0;
	memcpy(longpath, "unix:/", 6);
	ck_assert_int_eq(blitz_addr_parse(longpath, &a, err, sizeof(err)), -EINVAL);
	memset(longhost, 'h', sizeof(longhost) - 1);
	strcpy(longhost + sizeof(longhost) - 4, ":80");
	ck_assert_int_eq(blitz_addr_parse(longhost, &a, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(addr_format_and_local_at_their_limits)
{
	struct blitz_addr a = { 0 };
	char buf[64], one[1] = { 'x' };
	int p[2];

	a.ss.ss_family = 12345;
	ck_assert_str_eq(blitz_addr_format(&a, buf, sizeof(buf)), "(family 12345)");
	ck_assert_ptr_eq(blitz_addr_format(&a, one, 1), one);
	ck_assert_int_eq(one[0], 0);
	ck_assert_ptr_null(blitz_addr_format(&a, NULL, 0));
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:80", &a, NULL, 0), 0);
	ck_assert_str_eq(blitz_addr_format(&a, buf, 6), "127.0");	/* truncated */
	ck_assert_int_eq(blitz_addr_local(-1, &a), -EBADF);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(blitz_addr_local(p[0], &a), -ENOTSOCK);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(listen_and_bind_refuse_bad_addresses)
{
	struct blitz_addr a = { 0 };
	struct blitz_net_stats st;
	int fd;

	ck_assert_int_eq(blitz_listen(NULL, 16), -EINVAL);
	ck_assert_int_eq(blitz_udp_bind(NULL), -EINVAL);
	a.ss.ss_family = 12345;			/* no such family */
	ck_assert_int_eq(blitz_listen(&a, 16), -EAFNOSUPPORT);
	ck_assert_int_eq(blitz_udp_bind(&a), -EAFNOSUPPORT);
	/* A backlog of 0 or below: the kernel's smallest; above: its largest. */
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &a, NULL, 0), 0);
	fd = blitz_listen(&a, -1);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = blitz_listen(&a, INT32_MAX);
	ck_assert_int_ge(fd, 0);
	close(fd);
	blitz_net_stats(&st);
	ck_assert_uint_ge(st.accept_emfile, st.accept_shed);
}
END_TEST

/*
 * blitz_net_close: a negative descriptor or one that is not open is
 * -EBADF on every backend, with the runtime given, NULL off the runtime's
 * threads (plain close(2)), and NULL inside a task (test_run_poll).
 */
static enum blitz_poll close_bad_fds(void *arg, struct blitz_cx *cx)
{
	(void)cx;
	*(int *)arg = blitz_net_close(NULL, -1) == -EBADF && blitz_net_close(NULL, 1 << 20) == -EBADF;
	return BLITZ_READY;
}

START_TEST(net_close_refuses_bad_descriptors)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	int ok = 0, fd;

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(blitz_net_close(rt, -1), -EBADF);
	ck_assert_int_eq(blitz_net_close(rt, INT32_MIN), -EBADF);
	ck_assert_int_eq(blitz_net_close(rt, 1 << 20), -EBADF);	/* not open */
	ck_assert_int_eq(blitz_net_close(NULL, -1), -EBADF);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(blitz_net_close(rt, fd), 0);
	ck_assert_int_eq(blitz_net_close(rt, fd), -EBADF);		/* closed already */
	test_run_poll(rt, close_bad_fds, &ok);
	ck_assert_int_eq(ok, 1);
	blitz_runtime_free(rt);
}
END_TEST

struct net_bad {
	struct blitz_accept acc;
	struct blitz_connect c_null, c_family;
	struct blitz_connect_timeout ct_null, ct_zero, ct_idle;
	struct blitz_xfer r, w, wa, re, r0, w0, wa0, re0;
	struct blitz_dgram to_null, from_bad;
	struct blitz_addr nofamily, listener;
	int sv[2];
	char buf[8];
	int step;
};

static enum blitz_poll net_bad_poll(void *arg, struct blitz_cx *cx)
{
	struct net_bad *s = arg;

	switch (s->step) {
	case 0:
		blitz_connect_timeout_cancel(&s->ct_idle);	/* never started */
		if (blitz_accept_poll(&s->acc, -1, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 1;
		/* fall through */
	case 1:
		if (blitz_connect_poll(&s->c_null, NULL, cx) == BLITZ_PENDING ||
		    blitz_connect_poll(&s->c_family, &s->nofamily, cx) == BLITZ_PENDING ||
		    blitz_connect_timeout_poll(&s->ct_null, NULL, BLITZ_NSEC_PER_SEC, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 2;
		/* fall through */
	case 2:
		/* A limit of 0: connected or timed out, both defined. */
		if (blitz_connect_timeout_poll(&s->ct_zero, &s->listener, 0, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 3;
		/* fall through */
	case 3:
		if (blitz_read_poll(&s->r, -1, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_write_poll(&s->w, -1, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_write_all_poll(&s->wa, -1, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_read_exact_poll(&s->re, -1, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 4;
		/* fall through */
	case 4:
		/* Zero bytes on a connected socket with nothing to read: 0 at once. */
		if (blitz_read_poll(&s->r0, s->sv[0], s->buf, 0, cx) == BLITZ_PENDING ||
		    blitz_write_poll(&s->w0, s->sv[0], s->buf, 0, cx) == BLITZ_PENDING ||
		    blitz_write_all_poll(&s->wa0, s->sv[0], s->buf, 0, cx) == BLITZ_PENDING ||
		    blitz_read_exact_poll(&s->re0, s->sv[0], s->buf, 0, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 5;
		/* fall through */
	case 5:
		if (blitz_send_to_poll(&s->to_null, s->sv[0], s->buf, 1, NULL, cx) == BLITZ_PENDING ||
		    blitz_recv_from_poll(&s->from_bad, -1, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
	}
	return BLITZ_READY;
}

START_TEST(net_awaitables_with_bad_arguments)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct net_bad *s = calloc(1, sizeof(*s));
	int lfd;

	NEED_BACKEND(rt, _i);
	s->nofamily.ss.ss_family = 12345;
	ck_assert_int_eq(blitz_addr_parse("127.0.0.1:0", &s->listener, NULL, 0), 0);
	lfd = blitz_listen(&s->listener, 16);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(blitz_addr_local(lfd, &s->listener), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s->sv), 0);
	test_run_poll(rt, net_bad_poll, s);
	ck_assert_int_eq(s->acc.result, -EBADF);
	ck_assert_int_eq(s->c_null.result, -EINVAL);
	ck_assert_int_eq(s->c_family.result, -EAFNOSUPPORT);
	ck_assert_int_eq(s->ct_null.result, -EINVAL);
	ck_assert(s->ct_zero.result >= 0 || s->ct_zero.result == -ETIMEDOUT);
	if (s->ct_zero.result >= 0)
		close(s->ct_zero.result);
	ck_assert_int_eq(s->r.result, -EBADF);
	ck_assert_int_eq(s->w.result, -EBADF);
	ck_assert_int_eq(s->wa.result, -EBADF);
	ck_assert_int_eq(s->re.result, -EBADF);
	ck_assert_int_eq(s->r0.result, 0);
	ck_assert_int_eq(s->w0.result, 0);
	ck_assert_int_eq(s->wa0.result, 0);
	ck_assert_int_eq(s->re0.result, 0);
	ck_assert_int_eq(s->to_null.result, -EINVAL);
	ck_assert_int_eq(s->from_bad.result, -EBADF);
	close(lfd);
	close(s->sv[0]);
	close(s->sv[1]);
	free(s);
	blitz_runtime_free(rt);
}
END_TEST

/*
 * blitz_serve: a NULL conf, a conf without a task or its state, no int at
 * fd_offset inside conn_size, a negative listener, no runtime.
 */
START_TEST(serve_refuses_bad_arguments)
{
	struct blitz_runtime *rt = test_runtime(1);
	struct { int pad, fd; } proto = { 0, -1 };
	struct blitz_serve_conf good = {
		.conn_vt = &test_nothing_vt, .conn_state = &proto, .conn_size = sizeof(proto),
		.fd_offset = sizeof(int),
	}, c;

	ck_assert_ptr_null(blitz_serve(rt, 3, NULL));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.conn_vt = NULL;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.conn_state = NULL;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.fd_offset = sizeof(proto) - 1;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	c = good, c.fd_offset = SIZE_MAX;
	ck_assert_ptr_null(blitz_serve(rt, 3, &c));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(blitz_serve(rt, -1, &good));
	ck_assert_int_eq(errno, EBADF);
	ck_assert_ptr_null(blitz_serve(NULL, 3, &good));	/* no runtime here */
	ck_assert_int_eq(errno, EINVAL);
	blitz_runtime_free(rt);
}
END_TEST

struct pipe_bad {
	struct blitz_xfer r, w, wa;
	char buf[4];
};

static enum blitz_poll pipe_bad_poll(void *arg, struct blitz_cx *cx)
{
	struct pipe_bad *s = arg;

	if (blitz_pipe_read_poll(&s->r, -1, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
	    blitz_pipe_write_poll(&s->w, -1, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	return blitz_pipe_write_all_poll(&s->wa, -1, s->buf, sizeof(s->buf), cx);
}

START_TEST(pipe_ops_on_a_bad_descriptor_are_ebadf)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct pipe_bad s = { 0 };

	NEED_BACKEND(rt, _i);
	test_run_poll(rt, pipe_bad_poll, &s);
	ck_assert_int_eq(s.r.result, -EBADF);
	ck_assert_int_eq(s.w.result, -EBADF);
	ck_assert_int_eq(s.wa.result, -EBADF);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* signal.h                                                                */

START_TEST(signals_refuse_null_and_synchronous_sets)
{
	struct blitz_signal_recv r = { 0 };
	struct blitz_signals *s;
	sigset_t set;

	blitz_signals_runtime_set(&set);
	ck_assert_int_eq(sigismember(&set, SIGSEGV), 0);
	ck_assert_int_eq(sigismember(&set, SIGTERM), 1);
	ck_assert_int_eq(blitz_signals_block(NULL), 0);		/* the runtime's set */
	errno = 0;
	ck_assert_ptr_null(blitz_signals_open(NULL));
	ck_assert_int_eq(errno, EINVAL);
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	errno = 0;
	ck_assert_ptr_null(blitz_signals_open(&set));
	ck_assert_int_eq(errno, EINVAL);
	sigemptyset(&set);				/* an empty set: a quiet stream */
	s = blitz_signals_open(&set);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_ge(blitz_signals_fd(s), 0);
	blitz_signals_recv_cancel(&r);			/* never started: nothing */
	blitz_signals_close(s);
	blitz_signals_close(NULL);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* process.h                                                               */

START_TEST(process_spawn_refuses_each_bad_command)
{
	const struct blitz_rlimit bad_limit = { .resource = 12345, .limit = { 1, 1 } };
	struct blitz_command cmd = { .program = "true" }, c;
	struct blitz_process *p = (void *)1;
	char err[128];

	ck_assert_int_eq(blitz_process_spawn(NULL, &p, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "cannot run '(no command)': Invalid argument");
	ck_assert_int_eq(blitz_process_spawn(&cmd, NULL, NULL, 0), -EINVAL);
#define BAD(field, value, rc) do {					\
		c = cmd;						\
		c.field = (value);					\
		err[0] = 0;						\
		ck_assert_int_eq(blitz_process_spawn(&c, &p, err, sizeof(err)), rc); \
		ck_assert_ptr_null(p);					\
		ck_assert(err[0]);					\
		ck_assert_int_eq(blitz_process_spawn(&c, &p, NULL, 0), rc); \
	} while (0)
	BAD(program, NULL, -EINVAL);
	BAD(program, "", -EINVAL);
	BAD(program, "/no/such/program", -ENOENT);
	BAD(cwd, "/no/such/dir", -ENOENT);
	BAD(cwd, "/dev/null", -ENOTDIR);
	BAD(pgroup, -2, -EINVAL);
	BAD(stdio[1], (enum blitz_stdio)7, -EINVAL);
	BAD(nr_rlimits, 1, -EINVAL);			/* rlimits NULL */
	c = cmd;
	c.rlimits = &bad_limit;
	c.nr_rlimits = 1;
	ck_assert_int_eq(blitz_process_spawn(&c, &p, err, sizeof(err)), -EINVAL);
#undef BAD
}
END_TEST

START_TEST(process_calls_out_of_range)
{
	struct blitz_command cmd = { .program = "true" };
	struct blitz_process_wait w = { 0 };
	struct blitz_exit_status st;
	struct blitz_process *p;

	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, NULL, 0), 0);
	ck_assert_int_gt(blitz_process_pid(p), 0);
	ck_assert_int_eq(blitz_process_fd(p, -1), -1);
	ck_assert_int_eq(blitz_process_fd(p, 3), -1);
	ck_assert_int_eq(blitz_process_fd(p, 1), -1);	/* inherited, not a pipe */
	blitz_process_close_fd(p, -1);
	blitz_process_close_fd(p, 3);
	blitz_process_close_fd(p, 0);
	blitz_process_wait_cancel(&w);			/* never started: nothing */
	ck_assert_int_eq(blitz_process_kill(p, -1), -EINVAL);
	ck_assert_int_eq(blitz_process_kill(p, 12345), -EINVAL);
	ck_assert_int_eq(blitz_process_kill_group(p, SIGTERM), -EINVAL);	/* leads none */
	while (blitz_process_try_wait(p) == 0)
		usleep(1000);
	ck_assert_int_eq(blitz_process_try_wait(p), 1);	/* again: still 1 */
	ck_assert_int_eq(blitz_process_status(p, &st), 0);
	ck_assert_int_eq(st.code, 0);
	ck_assert_int_eq(blitz_process_kill(p, SIGTERM), -ESRCH);
	blitz_process_free(p);
	blitz_process_free(NULL);
}
END_TEST

START_TEST(process_status_before_the_exit_is_eagain)
{
	const char *const argv[] = { "sleep", "100", NULL };
	struct blitz_command cmd = { .program = "sleep", .argv = argv };
	struct blitz_exit_status st;
	struct blitz_process *p;

	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, NULL, 0), 0);
	ck_assert_int_eq(blitz_process_status(p, &st), -EAGAIN);
	ck_assert_int_eq(blitz_process_kill(p, 0), 0);	/* 0: is it there? */
	blitz_process_free(p);				/* killed and reaped */
}
END_TEST

/* A wait on a child already reaped: ready at once. */
struct reaped {
	struct blitz_process *p;
	struct blitz_process_wait w;
};

static enum blitz_poll wait_reaped(void *arg, struct blitz_cx *cx)
{
	struct reaped *s = arg;

	return blitz_process_wait_poll(s->p, &s->w, cx);
}

START_TEST(process_wait_after_the_reap)
{
	struct blitz_runtime *rt = test_runtime_on(0);
	struct blitz_command cmd = { .program = "true" };
	struct reaped s = { 0 };

	ck_assert_int_eq(blitz_process_spawn(&cmd, &s.p, NULL, 0), 0);
	while (blitz_process_try_wait(s.p) == 0)
		usleep(1000);
	test_run_poll(rt, wait_reaped, &s);
	ck_assert_int_eq(s.w.result, 0);
	blitz_process_free(s.p);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* blocking.h                                                              */

struct no_fn {
	struct blitz_blocking job;
};

static enum blitz_poll poll_no_fn(void *arg, struct blitz_cx *cx)
{
	return blitz_blocking_poll(&((struct no_fn *)arg)->job, cx);
}

START_TEST(blocking_job_without_function)
{
	struct blitz_runtime *rt = test_runtime_on(0);
	struct blitz_blocking_stats st;
	struct no_fn s;

	blitz_blocking_init(&s.job, NULL, NULL);
	ck_assert(!blitz_blocking_done(&s.job));
	blitz_blocking_cancel(&s.job);			/* not queued: nothing */
	ck_assert_int_eq(blitz_blocking_wait(&s.job), -EINVAL);	/* never queued */
	ck_assert_int_eq(blitz_spawn_blocking(rt, &s.job), -EINVAL);
	ck_assert_int_eq(blitz_spawn_blocking(rt, NULL), -EINVAL);
	ck_assert_int_eq(blitz_spawn_blocking(NULL, &s.job), -EINVAL);
	test_run_poll(rt, poll_no_fn, &s);
	ck_assert_int_eq(s.job.result, -EINVAL);
	ck_assert(blitz_blocking_done(&s.job));
	memset(&st, 0xff, sizeof(st));
	blitz_blocking_stats(NULL, &st);
	ck_assert_uint_eq(st.threads + st.max_threads + st.jobs_done, 0);
	blitz_blocking_stats(rt, &st);
	ck_assert_uint_eq(st.threads_started, 0);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* fs.h                                                                    */

START_TEST(fs_open_flags_refuse_contradictions)
{
	const struct blitz_fs_open_options bad[] = {
		{ 0 }, { .truncate = true }, { .read = true, .create = true },
		{ .read = true, .create_new = true }, { .append = true, .truncate = true },
	};
	struct blitz_fs_dir dir = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(blitz_fs_open_flags(&bad[i]), -EINVAL);
	blitz_fs_dir_free(NULL);
	blitz_fs_dir_free(&dir);			/* empty: nothing */
	blitz_fs_dir_free(&dir);
}
END_TEST

enum { NR_FS_BAD = 15 };

struct fs_bad {
	struct blitz_fs_op op[NR_FS_BAD];
	bool done[NR_FS_BAD];
	int expect[NR_FS_BAD];
	struct statx stx;
	struct blitz_fs_dir dir;
	char buf[8];
	int fd;
	bool started;
};

static void prep_fs_bad(struct fs_bad *s)
{
	const struct blitz_fs_open_options none = { 0 };
	struct blitz_fs_op *op = s->op;
	int *e = s->expect;

	blitz_fs_prep_open(op++, "x", &none), *e++ = -EINVAL;
	blitz_fs_prep_open_flags(op++, "", O_RDONLY, 0), *e++ = -ENOENT;
	blitz_fs_prep_read(op++, -1, s->buf, sizeof(s->buf)), *e++ = -EBADF;
	blitz_fs_prep_write(op++, -1, s->buf, sizeof(s->buf)), *e++ = -EBADF;
	blitz_fs_prep_read_at(op++, s->fd, s->buf, sizeof(s->buf), -5), *e++ = -EINVAL;
	blitz_fs_prep_write_at(op++, s->fd, s->buf, sizeof(s->buf), -5), *e++ = -EINVAL;
	blitz_fs_prep_read(op++, s->fd, s->buf, 0), *e++ = 0;
	blitz_fs_prep_fsync(op++, -1, true), *e++ = -EBADF;
	blitz_fs_prep_stat(op++, "", &s->stx), *e++ = -ENOENT;
	blitz_fs_prep_mkdir(op++, "", 0700), *e++ = -ENOENT;
	blitz_fs_prep_readdir(op++, "/no/such/dir", &s->dir), *e++ = -ENOENT;
	blitz_fs_prep_rename(op++, "", ""), *e++ = -ENOENT;
	blitz_fs_prep_unlink(op++, ""), *e++ = -ENOENT;
	blitz_fs_prep_rmdir(op++, ""), *e++ = -ENOENT;
	blitz_fs_prep_read_file(op++, "/"), *e++ = -EISDIR;
	ck_assert_int_eq(op - s->op, NR_FS_BAD);
}

static enum blitz_poll fs_bad_poll(void *arg, struct blitz_cx *cx)
{
	struct fs_bad *s = arg;
	enum blitz_poll all = BLITZ_READY;

	if (!s->started) {
		prep_fs_bad(s);
		s->started = true;
	}
	for (int i = 0; i < NR_FS_BAD; i++) {
		if (s->done[i])
			continue;
		if (blitz_fs_poll(&s->op[i], cx) == BLITZ_READY)
			s->done[i] = true;
		else
			all = BLITZ_PENDING;
	}
	return all;
}

START_TEST(fs_ops_with_bad_arguments)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct fs_bad *s = calloc(1, sizeof(*s));
	char msg[256], one[1] = { 'x' };

	NEED_BACKEND(rt, _i);
	s->fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(s->fd, 0);
	test_run_poll(rt, fs_bad_poll, s);
	for (int i = 0; i < NR_FS_BAD; i++)
		ck_assert_msg(s->op[i].result == s->expect[i], "op %d on %s: %lld, expected %d (%s)",
			      i, test_backend_name(_i), (long long)s->op[i].result, s->expect[i],
			      blitz_fs_strerror(&s->op[i], msg, sizeof(msg)));
	/* Messages: no room, one byte. */
	ck_assert_ptr_null(blitz_fs_strerror(&s->op[2], NULL, 0));
	ck_assert_ptr_eq(blitz_fs_strerror(&s->op[2], one, 1), one);
	ck_assert_int_eq(one[0], 0);
	blitz_fs_cancel(&s->op[0]);			/* done: nothing */
	close(s->fd);
	free(s);
	blitz_runtime_free(rt);
}
END_TEST

/* Empty data written to a file: an empty file. */
struct empty_write {
	struct blitz_fs_op op;
	const char *path;
};

static enum blitz_poll empty_write_poll(void *arg, struct blitz_cx *cx)
{
	struct empty_write *s = arg;

	if (!s->op.kind)
		blitz_fs_prep_write_file(&s->op, s->path, NULL, 0);
	return blitz_fs_poll(&s->op, cx);
}

START_TEST(fs_write_file_of_nothing)
{
	struct blitz_runtime *rt = test_runtime_on(0);
	char path[] = "/tmp/blitz-bad-input-XXXXXX";
	struct empty_write s = { .path = path };
	struct stat st;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "old", 3), 3);
	close(fd);
	test_run_poll(rt, empty_write_poll, &s);
	ck_assert_int_eq(s.op.result, 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	unlink(path);
	blitz_runtime_free(rt);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* stream.h                                                                */

START_TEST(stream_inits_refuse_bad_sizes)
{
	struct blitz_stream st;
	struct blitz_bufreader r;
	struct blitz_bufwriter w;
	char buf[8];

	ck_assert_int_eq(blitz_stream_from_fd(&st, -1), -EBADF);
	blitz_stream_pipe(&st, -1);
	ck_assert_int_eq(blitz_bufreader_init(&r, &st, buf, 0), -EINVAL);
	ck_assert_int_eq(blitz_bufreader_init(&r, NULL, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(blitz_bufreader_init(&r, &st, NULL, SIZE_MAX), -ENOMEM);
	blitz_bufreader_destroy(&r);			/* after a failed init: nothing */
	ck_assert_int_eq(blitz_bufwriter_init(&w, &st, buf, 0), -EINVAL);
	ck_assert_int_eq(blitz_bufwriter_init(&w, NULL, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(blitz_bufwriter_init(&w, &st, NULL, SIZE_MAX), -ENOMEM);
	blitz_bufwriter_destroy(&w);
	/* Max line: 0 and above the buffer size are the buffer size. */
	ck_assert_int_eq(blitz_bufreader_init(&r, &st, buf, sizeof(buf)), 0);
	blitz_bufreader_set_max_line(&r, 0);
	ck_assert_uint_eq(r.max_line, sizeof(buf));
	blitz_bufreader_set_max_line(&r, SIZE_MAX);
	ck_assert_uint_eq(r.max_line, sizeof(buf));
	blitz_bufreader_consume(&r, SIZE_MAX);		/* more than buffered: all of it */
	ck_assert_uint_eq(blitz_bufreader_buffered(&r), 0);
	blitz_bufreader_cancel(&r);			/* nothing pending: nothing */
	blitz_bufreader_destroy(&r);
}
END_TEST

struct stream_bad {
	struct blitz_stream sock, pipe, file, good;
	struct blitz_stream_op rs, ws, rp, rf, r0;
	struct blitz_bufreader br, bre, brl, bru, bgood;
	struct blitz_bufwriter bw, bw0;
	struct blitz_copy cp;
	char buf[8], rbuf[8], wbuf[8];
	int step;
};

static enum blitz_poll stream_bad_poll(void *arg, struct blitz_cx *cx)
{
	struct stream_bad *s = arg;

	switch (s->step) {
	case 0:
		blitz_stream_cancel(&s->rs);		/* never started: nothing */
		if (blitz_stream_read_poll(&s->rs, &s->sock, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_stream_write_poll(&s->ws, &s->sock, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_stream_read_poll(&s->rp, &s->pipe, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_stream_read_poll(&s->rf, &s->file, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_stream_read_poll(&s->r0, &s->good, s->buf, 0, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 1;
		/* fall through */
	case 1:
		if (blitz_bufreader_fill_poll(&s->br, cx) == BLITZ_PENDING ||
		    blitz_bufreader_read_exact_poll(&s->bre, s->buf, sizeof(s->buf), cx) == BLITZ_PENDING ||
		    blitz_bufreader_read_line_poll(&s->brl, cx) == BLITZ_PENDING ||
		    blitz_bufreader_read_until_poll(&s->bru, 256 + '\n', cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 2;
		/* fall through */
	case 2:
		/* Zero bytes: 0 at once, from a stream that has nothing yet. */
		if (blitz_bufreader_read_poll(&s->bgood, s->buf, 0, cx) == BLITZ_PENDING ||
		    blitz_bufwriter_write_poll(&s->bw0, s->buf, 0, cx) == BLITZ_PENDING ||
		    blitz_bufwriter_flush_poll(&s->bw0, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 3;
		/* fall through */
	case 3:
		/* Buffered into a bad stream: accepted, then the flush fails. */
		if (blitz_bufwriter_write_poll(&s->bw, s->buf, 1, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		ck_assert_int_eq(s->bw.result, 1);
		s->step = 4;
		/* fall through */
	case 4:
		if (blitz_bufwriter_flush_poll(&s->bw, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->step = 5;
		/* fall through */
	case 5:
		blitz_copy_cancel(&s->cp, &s->br, &s->bw);	/* never started: nothing */
		return blitz_copy_poll(&s->cp, &s->br, &s->bw, cx);
	}
	return BLITZ_READY;
}

START_TEST(streams_on_bad_descriptors)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct stream_bad *s = calloc(1, sizeof(*s));
	int p[2];

	NEED_BACKEND(rt, _i);
	ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	blitz_stream_socket(&s->sock, -1);
	blitz_stream_pipe(&s->pipe, -1);
	blitz_stream_file(&s->file, -1);
	blitz_stream_pipe(&s->good, p[0]);
	ck_assert_int_eq(blitz_bufreader_init(&s->br, &s->pipe, s->rbuf, sizeof(s->rbuf)), 0);
	ck_assert_int_eq(blitz_bufreader_init(&s->bre, &s->pipe, NULL, 8), 0);
	ck_assert_int_eq(blitz_bufreader_init(&s->brl, &s->pipe, NULL, 8), 0);
	ck_assert_int_eq(blitz_bufreader_init(&s->bru, &s->pipe, NULL, 8), 0);
	ck_assert_int_eq(blitz_bufreader_init(&s->bgood, &s->good, NULL, 8), 0);
	ck_assert_int_eq(blitz_bufwriter_init(&s->bw, &s->pipe, s->wbuf, sizeof(s->wbuf)), 0);
	ck_assert_int_eq(blitz_bufwriter_init(&s->bw0, &s->good, NULL, 8), 0);
	test_run_poll(rt, stream_bad_poll, s);
	ck_assert_int_eq(s->rs.result, -EBADF);
	ck_assert_int_eq(s->ws.result, -EBADF);
	ck_assert_int_eq(s->rp.result, -EBADF);
	ck_assert_int_eq(s->rf.result, -EBADF);
	ck_assert_int_eq(s->r0.result, 0);
	ck_assert_int_eq(s->br.result, -EBADF);
	ck_assert_int_eq(s->bre.result, -EBADF);
	ck_assert_int_eq(s->brl.result, -EBADF);
	ck_assert_int_eq(s->bru.result, -EBADF);
	ck_assert_int_eq(s->bgood.result, 0);
	ck_assert_int_eq(s->bw0.result, 0);
	ck_assert_int_eq(s->bw.result, -EBADF);
	ck_assert_int_eq(s->cp.result, -EBADF);
	ck_assert_int_eq(s->cp.failed, BLITZ_COPY_READ);
	blitz_bufwriter_cancel(&s->bw);			/* nothing pending: nothing */
	blitz_bufreader_destroy(&s->br);
	blitz_bufreader_destroy(&s->bre);
	blitz_bufreader_destroy(&s->brl);
	blitz_bufreader_destroy(&s->bru);
	blitz_bufreader_destroy(&s->bgood);
	blitz_bufwriter_destroy(&s->bw);
	blitz_bufwriter_destroy(&s->bw0);
	close(p[0]);
	close(p[1]);
	free(s);
	blitz_runtime_free(rt);
}
END_TEST

Suite *bad_input_io_suite(void);
Suite *bad_input_io_suite(void)
{
	Suite *s = suite_create("bad_input_io");
	TCase *tc = TCASE("io", 30);

	tcase_add_loop_test(tc, io_ops_on_a_bad_descriptor_are_ebadf, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, zero_length_transfers_complete_at_once, 0, TEST_BACKENDS);
	tcase_add_test(tc, io_names_out_of_range);
	suite_add_tcase(s, tc);
	tc = TCASE("net", 30);
	tcase_add_test(tc, addr_parse_refuses_each_malformed_address);
	tcase_add_test(tc, addr_format_and_local_at_their_limits);
	tcase_add_test(tc, listen_and_bind_refuse_bad_addresses);
	tcase_add_loop_test(tc, net_awaitables_with_bad_arguments, 0, TEST_BACKENDS);
	tcase_add_loop_test(tc, net_close_refuses_bad_descriptors, 0, TEST_BACKENDS);
	tcase_add_test(tc, serve_refuses_bad_arguments);
	tcase_add_loop_test(tc, pipe_ops_on_a_bad_descriptor_are_ebadf, 0, TEST_BACKENDS);
	suite_add_tcase(s, tc);
	tc = TCASE("process", 30);
	tcase_add_test(tc, signals_refuse_null_and_synchronous_sets);
	tcase_add_test(tc, process_spawn_refuses_each_bad_command);
	tcase_add_test(tc, process_calls_out_of_range);
	tcase_add_test(tc, process_status_before_the_exit_is_eagain);
	tcase_add_test(tc, process_wait_after_the_reap);
	suite_add_tcase(s, tc);
	tc = TCASE("fs", 30);
	tcase_add_test(tc, blocking_job_without_function);
	tcase_add_test(tc, fs_open_flags_refuse_contradictions);
	tcase_add_loop_test(tc, fs_ops_with_bad_arguments, 0, TEST_BACKENDS);
	tcase_add_test(tc, fs_write_file_of_nothing);
	tcase_add_test(tc, stream_inits_refuse_bad_sizes);
	tcase_add_loop_test(tc, streams_on_bad_descriptors, 0, TEST_BACKENDS);
	suite_add_tcase(s, tc);
	return s;
}
BLITZ_SUITE("bad_input_io", bad_input_io_suite)
