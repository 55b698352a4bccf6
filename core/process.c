// SPDX-License-Identifier: MIT
/*
 * core/process.c - child processes: posix_spawn with close-on-exec pipes,
 * a pidfd to wait on through the driver, waitid(P_PIDFD) to reap,
 * pidfd_send_signal to kill.
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
#include "clock.h"
#include "probes.h"

#ifndef P_PIDFD
#define P_PIDFD 3			/* <linux/wait.h>; glibc < 2.36 lacks it */
#endif

extern char **environ;

struct blitz_process {
	pid_t pid;
	int pidfd;
	int fd[3];			/* the parent's ends of the pipes, or -1 */
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

int blitz_process_spawn(const struct blitz_command *cmd, struct blitz_process **out,
			char *err, size_t errlen)
{
	const char *default_argv[2] = { cmd->program, NULL };
	int parent_end[3] = { -1, -1, -1 }, child_end[3] = { -1, -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	struct blitz_process *p;
	sigset_t none, dfl;
	pid_t pid;
	int r = 0;

	*out = NULL;
	if (!cmd->program || !*cmd->program) {
		set_err(err, errlen, "cannot run", "", EINVAL);
		return -EINVAL;
	}
	if (cmd->cwd) {
		struct stat st;

		if (stat(cmd->cwd, &st))
			r = errno;
		else if (!S_ISDIR(st.st_mode))
			r = ENOTDIR;
		if (r) {
			set_err(err, errlen, "working directory", cmd->cwd, r);
			return -r;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		set_err(err, errlen, "cannot run", cmd->program, ENOMEM);
		return -ENOMEM;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	for (int i = 0; i < 3 && !r; i++) {
		switch (cmd->stdio[i]) {
		case BLITZ_STDIO_INHERIT:
			break;
		case BLITZ_STDIO_NULL:
			r = posix_spawn_file_actions_addopen(&fa, i, "/dev/null",
							     i == 0 ? O_RDONLY : O_WRONLY, 0);
			break;
		case BLITZ_STDIO_PIPE:
			r = -make_pipe(i, &parent_end[i], &child_end[i]);
			if (!r)
				r = posix_spawn_file_actions_adddup2(&fa, child_end[i], i);
			break;
		default:
			r = EINVAL;
		}
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
	if (!r)
		r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!r) {
		char *const *argv = (char *const *)(cmd->argv ? cmd->argv : default_argv);
		char *const *envp = (char *const *)(cmd->envp ? (char **)cmd->envp : environ);

		/* glibc's posix_spawn reports the exec's errno and reaps a child that failed. */
		if (strchr(cmd->program, '/'))
			r = posix_spawn(&pid, cmd->program, &fa, &attr, argv, envp);
		else
			r = posix_spawnp(&pid, cmd->program, &fa, &attr, argv, envp);
		if (r)
			set_err(err, errlen, "cannot run", cmd->program, r);
	} else {
		set_err(err, errlen, "cannot run", cmd->program, r);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	for (int i = 0; i < 3; i++)
		if (child_end[i] >= 0)
			close(child_end[i]);
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
			if (parent_end[i] >= 0)
				close(parent_end[i]);
		free(p);
		return -r;
	}
	p->pid = pid;
	memcpy(p->fd, parent_end, sizeof(p->fd));
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
