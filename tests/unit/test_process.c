// SPDX-License-Identifier: MIT
/*
 * test_process.c - child processes on each backend: large stdout and
 * stderr read while waiting (no pipe deadlock), stdin to stdout, exit
 * codes, kill, environment and working directory, a missing program,
 * process groups killed whole, rlimits set in the child, and no zombie
 * left behind.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

#define SKIP_UNLESS_BACKEND(rt, i) do {					\
		if (strcmp(blitz_io_backend_name(rt), test_backend_name(i))) {	\
			blitz_runtime_free(rt);				\
			SKIP("%s unavailable here", test_backend_name(i));		\
		}							\
	} while (0)

/* No child of ours is left, not even a zombie. */
static void assert_no_children(void)
{
	errno = 0;
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}

static struct blitz_process *spawn_ok(const struct blitz_command *cmd)
{
	struct blitz_process *p;
	char err[256] = "";
	int rc = blitz_process_spawn(cmd, &p, err, sizeof(err));

	ck_assert_msg(rc == 0, "spawn %s: %d %s", cmd->program, rc, err);
	return p;
}

/* Reads a pipe to its end, counting (and keeping up to sizeof(keep)) bytes. */
struct drain {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	long total;
	long error;
	char buf[65536];
	char keep[256];
};

static enum blitz_poll drain_poll(void *arg, struct blitz_cx *cx)
{
	struct drain *d = arg;

	BLITZ_CO_BEGIN(&d->co);
	for (;;) {
		BLITZ_AWAIT(&d->co, blitz_pipe_read_poll(&d->x, d->fd, d->buf, sizeof(d->buf), cx));
		if (d->x.result <= 0)
			break;
		if (d->total < (long)sizeof(d->keep) - 1) {
			long n = d->x.result;

			if (n > (long)sizeof(d->keep) - 1 - d->total)
				n = (long)sizeof(d->keep) - 1 - d->total;
			memcpy(d->keep + d->total, d->buf, (size_t)n);
		}
		d->total += d->x.result;
	}
	d->error = d->x.result;
	BLITZ_CO_END(&d->co);
}

static void drain_drop(void *arg)
{
	struct drain *d = arg;

	blitz_net_cancel(&d->x);
}
static const struct blitz_task_vtable drain_vt = BLITZ_TASK_VTABLE(drain_poll, drain_drop);

/* Waits for a process to exit. */
struct waiter {
	struct blitz_co co;
	struct blitz_process *p;
	struct blitz_process_wait w;
	int kill_with;			/* send this signal first (0: none) */
	int kill_rc;
};

static enum blitz_poll waiter_poll(void *arg, struct blitz_cx *cx)
{
	struct waiter *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	if (s->kill_with)
		s->kill_rc = blitz_process_kill(s->p, s->kill_with);
	BLITZ_AWAIT(&s->co, blitz_process_wait_poll(s->p, &s->w, cx));
	BLITZ_CO_END(&s->co);
}

static void waiter_drop(void *arg)
{
	struct waiter *s = arg;

	blitz_process_wait_cancel(&s->w);
}
static const struct blitz_task_vtable waiter_vt = BLITZ_TASK_VTABLE(waiter_poll, waiter_drop);

static struct blitz_exit_status wait_exit(struct blitz_runtime *rt, struct blitz_process *p,
					  int kill_with)
{
	struct waiter s = { .p = p, .kill_with = kill_with };
	struct blitz_exit_status st;

	ck_assert_int_eq(blitz_block_on(rt, &waiter_vt, &s, sizeof(s)), 0);
	ck_assert_int_eq(s.w.result, 0);
	ck_assert_int_eq(s.kill_rc, 0);
	ck_assert_int_eq(blitz_process_status(p, &st), 0);
	return st;
}

START_TEST(large_stdout_and_stderr_while_waiting)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	const char *argv[] = { "sh", "-c",
		"head -c 10000000 /dev/zero; head -c 3000000 /dev/zero >&2; exit 7", NULL };
	struct blitz_command cmd = {
		.program = "sh", .argv = argv,
		.stdio = { BLITZ_STDIO_NULL, BLITZ_STDIO_PIPE, BLITZ_STDIO_PIPE },
	};
	struct blitz_process *p;
	struct blitz_task *out, *err, *w;
	struct waiter ws;
	struct drain d = { 0 };
	struct blitz_exit_status st;

	SKIP_UNLESS_BACKEND(rt, _i);
	p = spawn_ok(&cmd);
	ws = (struct waiter){ .p = p };
	/* The waiter first: it must not keep the readers from draining. */
	w = blitz_spawn(rt, &waiter_vt, &ws, sizeof(ws));
	d.fd = blitz_process_fd(p, 1);
	out = blitz_spawn(rt, &drain_vt, &d, sizeof(d));
	d.fd = blitz_process_fd(p, 2);
	err = blitz_spawn(rt, &drain_vt, &d, sizeof(d));
	ck_assert_int_eq(blitz_join(w), 0);
	ck_assert_int_eq(blitz_join(out), 0);
	ck_assert_int_eq(blitz_join(err), 0);
	ck_assert_int_eq(((struct drain *)blitz_task_state(out))->total, 10000000);
	ck_assert_int_eq(((struct drain *)blitz_task_state(out))->error, 0);
	ck_assert_int_eq(((struct drain *)blitz_task_state(err))->total, 3000000);
	ck_assert_int_eq(((struct waiter *)blitz_task_state(w))->w.result, 0);
	ck_assert_int_eq(blitz_process_status(p, &st), 0);
	ck_assert_int_eq(st.code, 7);
	ck_assert_int_eq(st.signal, 0);
	blitz_task_release(w);
	blitz_task_release(out);
	blitz_task_release(err);
	blitz_process_free(p);
	blitz_runtime_free(rt);
	assert_no_children();
}
END_TEST

/* Writes 4 MB to the child's stdin, then closes it. */
struct feeder {
	struct blitz_co co;
	struct blitz_xfer x;
	struct blitz_process *p;
	char *data;
	size_t len;
};

static enum blitz_poll feeder_poll(void *arg, struct blitz_cx *cx)
{
	struct feeder *f = arg;

	BLITZ_CO_BEGIN(&f->co);
	BLITZ_AWAIT(&f->co, blitz_pipe_write_all_poll(&f->x, blitz_process_fd(f->p, 0),
						      f->data, f->len, cx));
	ck_assert_int_eq(f->x.result, (long)f->len);
	blitz_process_close_fd(f->p, 0);	/* end of file for cat */
	BLITZ_CO_END(&f->co);
}
static const struct blitz_task_vtable feeder_vt = BLITZ_TASK_VTABLE(feeder_poll, NULL);

/* Checks what comes back against the pattern. */
struct checker {
	struct blitz_co co;
	struct blitz_xfer x;
	int fd;
	size_t got;
	bool same;
	const char *want;
	char buf[32768];
};

static enum blitz_poll checker_poll(void *arg, struct blitz_cx *cx)
{
	struct checker *c = arg;

	BLITZ_CO_BEGIN(&c->co);
	c->same = true;
	for (;;) {
		BLITZ_AWAIT(&c->co, blitz_pipe_read_poll(&c->x, c->fd, c->buf, sizeof(c->buf), cx));
		if (c->x.result <= 0)
			break;
		if (memcmp(c->buf, c->want + c->got, (size_t)c->x.result))
			c->same = false;
		c->got += (size_t)c->x.result;
	}
	BLITZ_CO_END(&c->co);
}
static const struct blitz_task_vtable checker_vt = BLITZ_TASK_VTABLE(checker_poll, NULL);

START_TEST(stdin_to_stdout_through_cat)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	struct blitz_command cmd = {
		.program = "cat",
		.stdio = { BLITZ_STDIO_PIPE, BLITZ_STDIO_PIPE, BLITZ_STDIO_INHERIT },
	};
	const size_t len = 4 << 20;
	char *data = malloc(len);
	struct blitz_process *p;
	struct feeder f = { .len = len, .data = data };
	struct checker c = { .want = data };
	struct blitz_task *ft, *ct;
	struct blitz_exit_status st;

	SKIP_UNLESS_BACKEND(rt, _i);
	for (size_t i = 0; i < len; i++)
		data[i] = (char)(i * 7 + i / 4096);
	p = spawn_ok(&cmd);
	f.p = p;
	c.fd = blitz_process_fd(p, 1);
	ft = blitz_spawn(rt, &feeder_vt, &f, sizeof(f));
	ct = blitz_spawn(rt, &checker_vt, &c, sizeof(c));
	ck_assert_int_eq(blitz_join(ft), 0);
	ck_assert_int_eq(blitz_join(ct), 0);
	ck_assert_uint_eq(((struct checker *)blitz_task_state(ct))->got, len);
	ck_assert(((struct checker *)blitz_task_state(ct))->same);
	st = wait_exit(rt, p, 0);
	ck_assert_int_eq(st.code, 0);
	blitz_task_release(ft);
	blitz_task_release(ct);
	blitz_process_free(p);
	blitz_runtime_free(rt);
	free(data);
	assert_no_children();
}
END_TEST

START_TEST(exit_codes_and_signals_decoded)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	const char *exit42[] = { "sh", "-c", "exit 42", NULL };
	const char *segv[] = { "sh", "-c", "kill -SEGV $$", NULL };
	struct blitz_command cmd = { .program = "sh" };
	struct blitz_process *p;
	struct blitz_exit_status st;

	SKIP_UNLESS_BACKEND(rt, _i);
	cmd.argv = exit42;
	p = spawn_ok(&cmd);
	st = wait_exit(rt, p, 0);
	ck_assert_int_eq(st.code, 42);
	ck_assert_int_eq(st.signal, 0);
	ck_assert_int_eq(blitz_process_kill(p, SIGTERM), -ESRCH);	/* reaped */
	blitz_process_free(p);

	cmd.program = "/bin/true";
	cmd.argv = NULL;
	p = spawn_ok(&cmd);
	st = wait_exit(rt, p, 0);
	ck_assert_int_eq(st.code, 0);
	blitz_process_free(p);

	cmd.program = "sh";
	cmd.argv = segv;
	p = spawn_ok(&cmd);
	st = wait_exit(rt, p, 0);
	ck_assert_int_eq(st.code, -1);
	ck_assert_int_eq(st.signal, SIGSEGV);
	blitz_process_free(p);
	blitz_runtime_free(rt);
	assert_no_children();
}
END_TEST

START_TEST(kill_a_sleeping_child)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	const char *argv[] = { "sleep", "100", NULL };
	struct blitz_command cmd = { .program = "sleep", .argv = argv };
	struct blitz_process *p;
	struct blitz_exit_status st;

	SKIP_UNLESS_BACKEND(rt, _i);
	p = spawn_ok(&cmd);
	ck_assert_int_eq(blitz_process_try_wait(p), 0);
	ck_assert_int_eq(blitz_process_status(p, &st), -EAGAIN);
	st = wait_exit(rt, p, SIGTERM);		/* the task kills, then waits */
	ck_assert_int_eq(st.code, -1);
	ck_assert_int_eq(st.signal, SIGTERM);
	blitz_process_free(p);

	/* Freed without a wait: killed and reaped, no zombie. */
	p = spawn_ok(&cmd);
	blitz_process_free(p);
	blitz_runtime_free(rt);
	assert_no_children();
}
END_TEST

/* A file that exists but is not executable is -EACCES; @cmd->program is then stale. */
static void assert_not_executable(struct blitz_command *cmd)
{
	char path[] = "/tmp/blitz-noexec-XXXXXX";
	struct blitz_process *p;
	char err[256];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	cmd->program = path;
	ck_assert_int_eq(blitz_process_spawn(cmd, &p, err, sizeof(err)), -EACCES);
	unlink(path);
}

START_TEST(missing_program_is_a_clear_error)
{
	const char *argv[] = { "x", NULL };
	struct blitz_command cmd = { .program = "blitz-no-such-program", .argv = argv };
	struct blitz_process *p = (struct blitz_process *)1;
	char err[256] = "";

	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err, "blitz-no-such-program") && strstr(err, "No such file"),
		      "said: %s", err);
	cmd.program = "/nonexistent/dir/prog";
	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "/nonexistent/dir/prog"), "said: %s", err);
	assert_not_executable(&cmd);
	cmd.program = "sh";
	cmd.cwd = "/nonexistent-dir";
	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "working directory '/nonexistent-dir'"), "said: %s", err);
	assert_no_children();
}
END_TEST

/* Spawned from a task (a worker blocks every signal): env, cwd and a clean mask. */
struct runner {
	struct blitz_co co;
	const struct blitz_command *cmd;
	struct blitz_process *p;
	struct blitz_task *reader;
	struct drain d;
	int rc;
};

static enum blitz_poll runner_poll(void *arg, struct blitz_cx *cx)
{
	struct runner *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	r->rc = blitz_process_spawn(r->cmd, &r->p, NULL, 0);
	if (r->rc)
		goto out;
	r->d.fd = blitz_process_fd(r->p, 1);
	r->reader = blitz_spawn(NULL, &drain_vt, &r->d, sizeof(r->d));
	BLITZ_AWAIT(&r->co, blitz_join_poll(r->reader, cx));
	r->d = *(struct drain *)blitz_task_state(r->reader);
	blitz_task_release(r->reader);
out:
	BLITZ_CO_END(&r->co);
}
static const struct blitz_task_vtable runner_vt = BLITZ_TASK_VTABLE(runner_poll, NULL);

START_TEST(environment_cwd_and_mask_from_a_worker)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	const char *argv[] = { "sh", "-c",
		"printf '%s|%s|' \"$BLITZ_FOO\" \"$(pwd)\"; grep SigBlk /proc/self/status", NULL };
	const char *envp[] = { "BLITZ_FOO=bar baz", "PATH=/usr/bin:/bin", NULL };
	struct blitz_command cmd = {
		.program = "sh", .argv = argv, .envp = envp, .cwd = "/tmp",
		.stdio = { BLITZ_STDIO_NULL, BLITZ_STDIO_PIPE, BLITZ_STDIO_INHERIT },
	};
	struct runner r = { .cmd = &cmd };
	struct blitz_exit_status st;

	SKIP_UNLESS_BACKEND(rt, _i);
	ck_assert_int_eq(blitz_block_on(rt, &runner_vt, &r, sizeof(r)), 0);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_str_eq(r.d.keep, "bar baz|/tmp|SigBlk:\t0000000000000000\n");
	st = wait_exit(rt, r.p, 0);
	ck_assert_int_eq(st.code, 0);
	blitz_process_free(r.p);
	blitz_runtime_free(rt);
	assert_no_children();
}
END_TEST

/* Many children at once, each waited by its own task. */
START_TEST(many_children_at_once)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	const char *argv[] = { "sh", "-c", "exit $(( $$ % 100 ))", NULL };
	struct blitz_command cmd = { .program = "sh", .argv = argv };
	enum { N = 50 };
	struct blitz_process *p[N];
	struct blitz_task *t[N];

	SKIP_UNLESS_BACKEND(rt, _i);
	for (int i = 0; i < N; i++) {
		struct waiter s;

		p[i] = spawn_ok(&cmd);
		s = (struct waiter){ .p = p[i] };
		t[i] = blitz_spawn(rt, &waiter_vt, &s, sizeof(s));
	}
	for (int i = 0; i < N; i++) {
		struct blitz_exit_status st;

		ck_assert_int_eq(blitz_join(t[i]), 0);
		ck_assert_int_eq(blitz_process_status(p[i], &st), 0);
		ck_assert_int_eq(st.code, blitz_process_pid(p[i]) % 100);
		blitz_task_release(t[i]);
		blitz_process_free(p[i]);
	}
	blitz_runtime_free(rt);
	assert_no_children();
}
END_TEST

/* read_line - a line from the non-blocking @fd, from a thread outside the runtime. */
static void read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len && (n == 0 || buf[n - 1] != '\n')) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		ck_assert_int_eq(poll(&pfd, 1, 10000), 1);
		r = read(fd, buf + n, 1);
		ck_assert_int_eq(r, 1);
		n++;
	}
	buf[n] = '\0';
}

/* gone - @pid has exited (reaped by whoever its parent now is, or a zombie). */
static bool gone(pid_t pid)
{
	char path[64], buf[256], *q;
	FILE *f;
	bool dead = true;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int i = 0; i < 500 * test_timeout_scale(); i++) {	/* hang guard: 5 s, scaled */
		f = fopen(path, "r");
		if (!f)
			return true;
		dead = fgets(buf, sizeof(buf), f) && (q = strrchr(buf, ')')) && q[2] == 'Z';
		fclose(f);
		if (dead)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * A new group: the shell leads it, its background sleep and a second child
 * that joined it are members; one kill_group ends all three.
 */
START_TEST(process_group_killed_whole)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; wait", NULL };
	const char *argv2[] = { "sleep", "100", NULL };
	struct blitz_command cmd = {
		.program = "sh", .argv = argv, .pgroup = BLITZ_PGROUP_NEW,
		.stdio = { BLITZ_STDIO_NULL, BLITZ_STDIO_PIPE, BLITZ_STDIO_INHERIT },
	};
	struct blitz_command cmd2 = { .program = "sleep", .argv = argv2 };
	struct blitz_process *p, *q;
	struct blitz_exit_status st;
	pid_t leader, grandchild;
	char line[32];

	SKIP_UNLESS_BACKEND(rt, _i);
	p = spawn_ok(&cmd);
	leader = blitz_process_pid(p);
	ck_assert_int_eq(getpgid(leader), leader);
	cmd2.pgroup = leader;
	q = spawn_ok(&cmd2);
	ck_assert_int_eq(getpgid(blitz_process_pid(q)), leader);
	read_line(blitz_process_fd(p, 1), line, sizeof(line));
	grandchild = atoi(line);
	ck_assert_int_gt(grandchild, 0);
	ck_assert_int_eq(getpgid(grandchild), leader);
	ck_assert_int_eq(blitz_process_kill_group(q, SIGTERM), -EINVAL);	/* not a leader */

	ck_assert_int_eq(blitz_process_kill_group(p, SIGTERM), 0);
	st = wait_exit(rt, p, 0);
	ck_assert_int_eq(st.signal, SIGTERM);
	st = wait_exit(rt, q, 0);
	ck_assert_int_eq(st.signal, SIGTERM);
	ck_assert_msg(gone(grandchild), "the shell's background sleep survived");
	ck_assert_int_eq(blitz_process_kill_group(p, SIGTERM), -ESRCH);	/* reaped */
	blitz_process_free(p);
	blitz_process_free(q);
	blitz_runtime_free(rt);
	assert_no_children();
}
END_TEST

START_TEST(process_group_default_and_errors)
{
	const char *argv[] = { "sleep", "100", NULL };
	struct blitz_command cmd = { .program = "sleep", .argv = argv };
	struct blitz_process *p, *q = (struct blitz_process *)1;
	char err[256] = "";

	p = spawn_ok(&cmd);
	ck_assert_int_eq(getpgid(blitz_process_pid(p)), getpgrp());	/* inherited */
	ck_assert_int_eq(blitz_process_kill_group(p, SIGKILL), -EINVAL);
	/* A pid that leads no group cannot be joined. */
	cmd.pgroup = blitz_process_pid(p);
	ck_assert_int_eq(blitz_process_spawn(&cmd, &q, err, sizeof(err)), -EPERM);
	ck_assert_ptr_null(q);
	ck_assert_msg(strstr(err, "'sleep'"), "said: %s", err);
	cmd.pgroup = -2;
	ck_assert_int_eq(blitz_process_spawn(&cmd, &q, err, sizeof(err)), -EINVAL);
	blitz_process_free(p);
	assert_no_children();
}
END_TEST

/*
 * rlimits (the forked path) with everything else: pipes, env, cwd, a new
 * group, spawned from a worker (every signal blocked there): the child has
 * the limits, a clean mask and its group; the parent's limits are its own.
 */
START_TEST(rlimits_set_in_the_child)
{
	struct blitz_runtime *rt = test_runtime_on(_i);
	const char *argv[] = { "sh", "-c",
		"printf '%s %s %s|%s|%s|' \"$(ulimit -n)\" \"$(ulimit -Hn)\" \"$(ulimit -c)\" "
		"\"$BLITZ_FOO\" \"$(pwd)\"; grep SigBlk /proc/self/status", NULL };
	const char *envp[] = { "BLITZ_FOO=bar", "PATH=/usr/bin:/bin", NULL };
	const struct blitz_rlimit lim[] = {
		{ RLIMIT_NOFILE, { 64, 128 } },
		{ RLIMIT_CORE, { 0, 0 } },
	};
	struct blitz_command cmd = {
		.program = "sh", .argv = argv, .envp = envp, .cwd = "/tmp",
		.stdio = { BLITZ_STDIO_NULL, BLITZ_STDIO_PIPE, BLITZ_STDIO_INHERIT },
		.pgroup = BLITZ_PGROUP_NEW, .rlimits = lim, .nr_rlimits = 2,
	};
	struct runner r = { .cmd = &cmd };
	struct rlimit before, after;
	struct blitz_exit_status st;

	SKIP_UNLESS_BACKEND(rt, _i);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &before), 0);
	ck_assert_int_eq(blitz_block_on(rt, &runner_vt, &r, sizeof(r)), 0);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_str_eq(r.d.keep, "64 128 0|bar|/tmp|SigBlk:\t0000000000000000\n");
	ck_assert_int_eq(getpgid(blitz_process_pid(r.p)), blitz_process_pid(r.p));
	st = wait_exit(rt, r.p, 0);
	ck_assert_int_eq(st.code, 0);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &after), 0);
	ck_assert(before.rlim_cur == after.rlim_cur && before.rlim_max == after.rlim_max);
	blitz_process_free(r.p);
	blitz_runtime_free(rt);
	assert_no_children();
}
END_TEST

/* The forked path's errors: each step named, no child left. */
START_TEST(rlimit_errors_are_clear)
{
	const char *argv[] = { "x", NULL };
	struct blitz_rlimit lim = { RLIMIT_NOFILE, { 64, 64 } };
	struct blitz_command cmd = {
		.program = "blitz-no-such-program", .argv = argv, .rlimits = &lim, .nr_rlimits = 1,
	};
	struct blitz_process *p = (struct blitz_process *)1;
	char err[256] = "";

	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err, "cannot run 'blitz-no-such-program'") &&
		      strstr(err, "No such file"), "said: %s", err);
	assert_not_executable(&cmd);
	cmd.program = "sh";
	lim.resource = 9999;
	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "rlimit for 'sh'"), "said: %s", err);
	lim.resource = RLIMIT_NOFILE;
	lim.limit.rlim_cur = 128;	/* soft above hard */
	ck_assert_int_eq(blitz_process_spawn(&cmd, &p, err, sizeof(err)), -EINVAL);
	assert_no_children();
}
END_TEST

static Suite *process_suite(void)
{
	Suite *s = suite_create("process");
	TCase *tc = TCASE("children", 120);

	tcase_add_loop_test(tc, large_stdout_and_stderr_while_waiting, 0, 3);
	tcase_add_loop_test(tc, stdin_to_stdout_through_cat, 0, 3);
	tcase_add_loop_test(tc, exit_codes_and_signals_decoded, 0, 3);
	tcase_add_loop_test(tc, kill_a_sleeping_child, 0, 3);
	tcase_add_test(tc, missing_program_is_a_clear_error);
	tcase_add_loop_test(tc, environment_cwd_and_mask_from_a_worker, 0, 3);
	tcase_add_loop_test(tc, many_children_at_once, 0, 3);
	tcase_add_loop_test(tc, process_group_killed_whole, 0, 3);
	tcase_add_test(tc, process_group_default_and_errors);
	tcase_add_loop_test(tc, rlimits_set_in_the_child, 0, 3);
	tcase_add_test(tc, rlimit_errors_are_clear);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("process", process_suite)
