// SPDX-License-Identifier: MIT
/*
 * core/process/process.c - child processes: posix_spawn with close-on-exec pipes
 * (fork and exec when rlimits ask for code before the exec), a pidfd to
 * wait on through the driver, waitid(P_PIDFD) to reap, pidfd_send_signal
 * to kill, kill(-pgid) for a process group.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <blitz/process.h>
#include "../clock.h"
#include "../probes.h"

#ifndef P_PIDFD
#define P_PIDFD 3			/* <linux/wait.h>; glibc < 2.36 lacks it */
#endif

extern char **environ;

struct blitz_process {
	pid_t pid;
	int pidfd;
	int fd[3];			/* the parent's ends of the pipes, or -1 */
	bool leader;			/* it leads its own process group */
	uint64_t start_ns;
	pthread_mutex_t reap_lock;	/* one waitid at a time; guards status */
	_Atomic bool reaped;		/* set once, under reap_lock, after status */
	struct blitz_exit_status status;
};

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* The message of a failed spawn: "@prefix '@what': strerror(@e)". */
static void set_err(char *err, size_t errlen, const char *prefix, const char *what, int e)
{
	if (err && errlen)
		snprintf(err, errlen, "%s '%s': %s", prefix, what, strerror(e));
}

/*
 * A close-on-exec pipe whose child end is above 2, so that the child's
 * dup2 to 0, 1 or 2 always makes a new descriptor (dup2 of a descriptor
 * onto itself would keep its close-on-exec flag).  0 or -errno.
 */
static int make_pipe(int which, int *parent_end, int *child_end)
{
	int p[2], child, parent;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	child = which == 0 ? p[0] : p[1];
	parent = which == 0 ? p[1] : p[0];
	if (child <= 2) {
		int moved = fcntl(child, F_DUPFD_CLOEXEC, 3);

		if (moved < 0) {
			int e = errno;

			close(p[0]);
			close(p[1]);
			return -e;
		}
		close(child);
		child = moved;
	}
	if (fcntl(parent, F_SETFL, O_NONBLOCK)) {
		int e = errno;

		close(child);
		close(parent);
		return -e;
	}
	*parent_end = parent;
	*child_end = child;
	return 0;
}

/*
 * struct spawn - what both ways of starting the child need, prepared in the
 * parent: the arguments, the environment, and the child's ends of the pipes.
 */
struct spawn {
	const struct blitz_command *cmd;
	char *const *argv;
	char *const *envp;
	int parent_end[3], child_end[3];	/* -1 where there is no pipe */
};

/* make_stdio - the pipes of @sp->cmd->stdio; 0 or -errno (an unknown kind: -EINVAL). */
static int make_stdio(struct spawn *sp)
{
	for (int i = 0; i < 3; i++) {
		switch (sp->cmd->stdio[i]) {
		case BLITZ_STDIO_INHERIT:
		case BLITZ_STDIO_NULL:
			break;
		case BLITZ_STDIO_PIPE: {
			int r = make_pipe(i, &sp->parent_end[i], &sp->child_end[i]);

			if (r)
				return r;
			break;
		}
		default:
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * spawn_posix - the child through posix_spawn: its file actions for stdio
 * and cwd, its attributes for the signal mask (empty), SIGPIPE (default)
 * and the process group.  0 or an errno (@what says which step).
 */
static int spawn_posix(struct spawn *sp, pid_t *pid, const char **what)
{
	const struct blitz_command *cmd = sp->cmd;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
	sigset_t none, dfl;
	int r = 0;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	for (int i = 0; i < 3 && !r; i++) {
		if (cmd->stdio[i] == BLITZ_STDIO_NULL)
			r = posix_spawn_file_actions_addopen(&fa, i, "/dev/null",
							     i == 0 ? O_RDONLY : O_WRONLY, 0);
		else if (sp->child_end[i] >= 0)
			r = posix_spawn_file_actions_adddup2(&fa, sp->child_end[i], i);
	}
	if (!r && cmd->cwd)
		r = posix_spawn_file_actions_addchdir_np(&fa, cmd->cwd);
	/* Whatever the spawning thread blocks (a worker: everything), the child starts clean. */
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	if (!r)
		r = posix_spawnattr_setsigmask(&attr, &none);
	if (!r)
		r = posix_spawnattr_setsigdefault(&attr, &dfl);
	if (!r && cmd->pgroup) {
		r = posix_spawnattr_setpgroup(&attr, cmd->pgroup == BLITZ_PGROUP_NEW ? 0 : cmd->pgroup);
		flags |= POSIX_SPAWN_SETPGROUP;
	}
	if (!r)
		r = posix_spawnattr_setflags(&attr, flags);
	/* glibc's posix_spawn reports the exec's errno and reaps a child that failed. */
	if (!r && strchr(cmd->program, '/'))
		r = posix_spawn(pid, cmd->program, &fa, &attr, sp->argv, sp->envp);
	else if (!r)
		r = posix_spawnp(pid, cmd->program, &fa, &attr, sp->argv, sp->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	*what = "cannot run";
	return r;
}

/*
 * exec_candidates - the paths the child tries, as posix_spawnp does: the
 * program itself if it has a '/', else each directory of the parent's PATH
 * (default "/bin:/usr/bin"; an empty entry is the working directory).  A
 * NULL-terminated array in one allocation, or NULL.
 */
static char **exec_candidates(const char *program)
{
	const char *path = strchr(program, '/') ? "" : getenv("PATH");
	size_t n = 2, len = strlen(program), bytes;
	char **c, *q;

	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path; *p; p++)
		n += *p == ':';
	bytes = n * sizeof(char *) + n * (len + 2) + strlen(path) + 1;
	c = malloc(bytes);
	if (!c)
		return NULL;
	q = (char *)(c + n);
	n = 0;
	if (strchr(program, '/')) {
		c[n++] = memcpy(q, program, len + 1);
	} else {
		for (const char *p = path;; ) {
			size_t d = strcspn(p, ":");

			c[n++] = q;
			if (d) {
				memcpy(q, p, d);
				q[d] = '/';
				q += d + 1;
			}
			memcpy(q, program, len + 1);
			q += len + 1;
			if (!p[d])
				break;
			p += d + 1;
		}
	}
	c[n] = NULL;
	return c;
}

/* What the forked child reports on its error pipe when a step fails. */
struct child_error {
	int step;			/* enum child_step */
	int err;			/* errno */
};

enum child_step { STEP_PGROUP, STEP_STDIO, STEP_CWD, STEP_RLIMIT, STEP_SIGNALS, STEP_EXEC };

static const char *const step_what[] = {
	[STEP_PGROUP] = "process group for", [STEP_STDIO] = "stdio for",
	[STEP_CWD] = "working directory for", [STEP_RLIMIT] = "rlimit for",
	[STEP_SIGNALS] = "signal mask for", [STEP_EXEC] = "cannot run",
};

/* child_fail - in the child: report @step and errno on @fd, and exit. */
static __attribute__((noreturn)) void child_fail(int fd, int step)
{
	struct child_error ce = { step, errno };
	ssize_t n = write(fd, &ce, sizeof(ce));

	(void)n;	/* nothing to do if the parent cannot hear it: it sees the exit */
	_exit(127);
}

/* child_stdio - in the child: stdin, stdout, stderr as asked; 0 or -1 (errno). */
static int child_stdio(const struct spawn *sp)
{
	for (int i = 0; i < 3; i++) {
		int fd = sp->child_end[i];

		if (sp->cmd->stdio[i] == BLITZ_STDIO_NULL) {
			fd = open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
			if (fd < 0)
				return -1;
		}
		if (fd < 0)
			continue;
		/* dup2 makes an inheritable copy; /dev/null opened as @i itself stays. */
		if (fd == i ? fcntl(fd, F_SETFD, 0) : dup2(fd, i) < 0)
			return -1;
	}
	return 0;
}

/*
 * child_signals - in the child: every caught signal back to its default
 * action (a handler of the parent must not run here once signals are
 * unblocked), SIGPIPE too, then the empty mask posix_spawn would set.
 */
static int child_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL }, old;
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &old))
			continue;
		if (sig == SIGPIPE || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
			sigaction(sig, &sa, NULL);
	}
	sigemptyset(&none);
	return sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * child_exec - in the child: each candidate in turn, as posix_spawnp does:
 * go on past ENOENT, ENOTDIR, EACCES (which wins over a later ENOENT), stop
 * at any other error.  Returns only on failure, with errno set.
 */
static void child_exec(const struct spawn *sp, char *const *cand)
{
	bool denied = false;

	for (; *cand; cand++) {
		execve(*cand, sp->argv, sp->envp);
		if (errno == EACCES)
			denied = true;
		else if (errno != ENOENT && errno != ENOTDIR)
			return;
	}
	if (denied)
		errno = EACCES;
}

/*
 * child_run - in the forked child, between fork and exec: only
 * async-signal-safe calls (the parent has other threads; their locks may be
 * held forever here).  Every signal is blocked on entry (spawn_fork).
 */
static __attribute__((noreturn)) void child_run(const struct spawn *sp, char *const *cand,
						 int errfd)
{
	const struct blitz_command *cmd = sp->cmd;

	if (cmd->pgroup && setpgid(0, cmd->pgroup == BLITZ_PGROUP_NEW ? 0 : cmd->pgroup))
		child_fail(errfd, STEP_PGROUP);
	if (child_stdio(sp))
		child_fail(errfd, STEP_STDIO);
	if (cmd->cwd && chdir(cmd->cwd))
		child_fail(errfd, STEP_CWD);
	for (size_t i = 0; i < cmd->nr_rlimits; i++)
		if (setrlimit((__rlimit_resource_t)cmd->rlimits[i].resource, &cmd->rlimits[i].limit))
			child_fail(errfd, STEP_RLIMIT);
	if (child_signals())
		child_fail(errfd, STEP_SIGNALS);
	child_exec(sp, cand);
	child_fail(errfd, STEP_EXEC);
}

/*
 * spawn_fork - the child through fork(), for what posix_spawn cannot do
 * (rlimits).  The child reports a failed step on a close-on-exec pipe: end
 * of file there means its exec succeeded.  A child that failed is reaped
 * here.  0 or an errno (@what says which step).
 */
static int spawn_fork(struct spawn *sp, pid_t *pid, const char **what)
{
	char **cand = exec_candidates(sp->cmd->program);
	struct child_error ce = { STEP_EXEC, 0 };
	sigset_t all, old;
	int errp[2];
	ssize_t n;

	*what = step_what[STEP_EXEC];
	if (!cand)
		return ENOMEM;
	if (pipe2(errp, O_CLOEXEC)) {
		free(cand);
		return errno;
	}
	/* No handler of ours may run in the child before it resets them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	*pid = fork();
	if (*pid == 0) {
		close(errp[0]);
		child_run(sp, cand, errp[1]);
	}
	ce.err = *pid < 0 ? errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(errp[1]);
	free(cand);
	if (*pid > 0) {
		do
			n = read(errp[0], &ce, sizeof(ce));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(ce))
			waitpid(*pid, NULL, 0);
		else
			ce.err = 0;	/* end of file: exec'd */
	}
	close(errp[0]);
	*what = step_what[ce.step];
	return ce.err;
}

/* check_command - what can be refused before anything starts; 0 or an errno. */
static int check_command(const struct blitz_command *cmd, const char **what, const char **name)
{
	struct stat st;

	*what = "cannot run";
	*name = cmd->program ? cmd->program : "";
	if (!cmd->program || !*cmd->program || cmd->pgroup < BLITZ_PGROUP_NEW ||
	    (cmd->nr_rlimits && !cmd->rlimits))
		return EINVAL;
	if (!cmd->cwd)
		return 0;
	*what = "working directory";
	*name = cmd->cwd;
	if (stat(cmd->cwd, &st))
		return errno;
	return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

int blitz_process_spawn(const struct blitz_command *cmd, struct blitz_process **out,
			char *err, size_t errlen)
{
	const char *default_argv[2] = { cmd ? cmd->program : NULL, NULL };
	struct spawn sp = {
		.cmd = cmd,
		.parent_end = { -1, -1, -1 }, .child_end = { -1, -1, -1 },
	};
	struct blitz_process *p;
	const char *what, *name;
	pid_t pid;
	int r;

	if (!cmd || !out) {
		set_err(err, errlen, "cannot run", cmd ? "(no place for the process)" : "(no command)", EINVAL);
		return -EINVAL;
	}
	sp.argv = (char *const *)(cmd->argv ? cmd->argv : default_argv);
	sp.envp = (char *const *)(cmd->envp ? (char **)cmd->envp : environ);
	*out = NULL;
	r = check_command(cmd, &what, &name);
	if (r) {
		set_err(err, errlen, what, name, r);
		return -r;
	}
	p = calloc(1, sizeof(*p));
	r = p ? -make_stdio(&sp) : ENOMEM;
	if (!r)
		r = cmd->nr_rlimits ? spawn_fork(&sp, &pid, &what) : spawn_posix(&sp, &pid, &what);
	if (r)
		set_err(err, errlen, what, cmd->program, r);
	for (int i = 0; i < 3; i++)
		if (sp.child_end[i] >= 0)
			close(sp.child_end[i]);
	if (!r) {
		p->pidfd = sys_pidfd_open(pid);
		if (p->pidfd < 0) {
			/* Still our unreaped child: the pid cannot have been recycled. */
			r = errno;
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			set_err(err, errlen, "pidfd_open for", cmd->program, r);
		}
	}
	if (r) {
		for (int i = 0; i < 3; i++)
			if (sp.parent_end[i] >= 0)
				close(sp.parent_end[i]);
		free(p);
		return -r;
	}
	p->pid = pid;
	p->leader = cmd->pgroup == BLITZ_PGROUP_NEW;
	memcpy(p->fd, sp.parent_end, sizeof(p->fd));
	p->start_ns = clock_now_ns();
	pthread_mutex_init(&p->reap_lock, NULL);
	atomic_init(&p->reaped, false);
	*out = p;
	return 0;
}

pid_t blitz_process_pid(const struct blitz_process *p)
{
	return p->pid;
}

int blitz_process_fd(const struct blitz_process *p, int which)
{
	return which >= 0 && which < 3 ? p->fd[which] : -1;
}

void blitz_process_close_fd(struct blitz_process *p, int which)
{
	if (which >= 0 && which < 3 && p->fd[which] >= 0) {
		close(p->fd[which]);
		p->fd[which] = -1;
	}
}

/*
 * process_reap - waitid(P_PIDFD) once, waiting for the exit if @block.
 * 1 reaped (now or earlier), 0 still running, or -errno.
 */
static int process_reap(struct blitz_process *p, bool block)
{
	siginfo_t si;
	int ret = 1;

	pthread_mutex_lock(&p->reap_lock);
	/* Relaxed: reaped is written under reap_lock, which we hold. */
	if (!atomic_load_explicit(&p->reaped, memory_order_relaxed)) {
		memset(&si, 0, sizeof(si));
		if (waitid((idtype_t)P_PIDFD, (id_t)p->pidfd, &si, WEXITED | (block ? 0 : WNOHANG))) {
			ret = -errno;
		} else if (si.si_pid == 0) {
			ret = 0;
		} else {
			p->status.code = si.si_code == CLD_EXITED ? si.si_status : -1;
			p->status.signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
			p->status.core_dumped = si.si_code == CLD_DUMPED;
			BLITZ_PROCESS_EXIT(p->pid, p->status.code, p->status.signal,
					   BLITZ_PROCESS_EXIT_ENABLED() ? clock_now_ns() - p->start_ns : 0);
			/* Release: a lock-free reader's acquire load sees the status. */
			atomic_store_explicit(&p->reaped, true, memory_order_release);
		}
	}
	pthread_mutex_unlock(&p->reap_lock);
	return ret;
}

enum blitz_poll blitz_process_wait_poll(struct blitz_process *p, struct blitz_process_wait *w,
					struct blitz_cx *cx)
{
	for (;;) {
		int r;

		/* Acquire: pairs with process_reap's release; the status is there. */
		if (!w->started && atomic_load_explicit(&p->reaped, memory_order_acquire)) {
			w->result = 0;
			return BLITZ_READY;
		}
		if (!w->started) {
			blitz_io_prep_poll(&w->op, p->pidfd, 0);
			w->started = 1;
		}
		if (blitz_io_poll(&w->op, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		w->started = 0;
		if (w->op.result < 0) {
			w->result = w->op.result;
			return BLITZ_READY;
		}
		r = process_reap(p, false);
		if (r < 0) {
			w->result = r;
			return BLITZ_READY;
		}
		/* r == 0: readable but not yet reapable (never seen); wait again. */
	}
}

void blitz_process_wait_cancel(struct blitz_process_wait *w)
{
	blitz_io_cancel(&w->op);
}

int blitz_process_try_wait(struct blitz_process *p)
{
	return process_reap(p, false);
}

int blitz_process_status(struct blitz_process *p, struct blitz_exit_status *st)
{
	/* Acquire: pairs with process_reap's release store. */
	if (!atomic_load_explicit(&p->reaped, memory_order_acquire))
		return -EAGAIN;
	*st = p->status;
	return 0;
}

int blitz_process_kill(struct blitz_process *p, int sig)
{
	/* Acquire: a reaped child is never signalled (the pidfd would say ESRCH anyway). */
	if (atomic_load_explicit(&p->reaped, memory_order_acquire))
		return -ESRCH;
	return sys_pidfd_send_signal(p->pidfd, sig) ? -errno : 0;
}

int blitz_process_kill_group(struct blitz_process *p, int sig)
{
	int r = 0;

	if (!p->leader)
		return -EINVAL;
	/*
	 * The group's id is the leader's pid, which cannot be reused while the
	 * leader is not reaped; reaping takes reap_lock, so holding it keeps
	 * the id ours until kill() has sent the signal.
	 */
	pthread_mutex_lock(&p->reap_lock);
	/* Relaxed: reaped is written under reap_lock, which we hold. */
	if (atomic_load_explicit(&p->reaped, memory_order_relaxed))
		r = -ESRCH;
	else if (kill(-p->pid, sig))
		r = -errno;
	pthread_mutex_unlock(&p->reap_lock);
	return r;
}

void blitz_process_free(struct blitz_process *p)
{
	if (!p)
		return;
	if (process_reap(p, false) == 0) {
		sys_pidfd_send_signal(p->pidfd, SIGKILL);
		process_reap(p, true);
	}
	for (int i = 0; i < 3; i++)
		blitz_process_close_fd(p, i);
	close(p->pidfd);
	pthread_mutex_destroy(&p->reap_lock);
	free(p);
}
