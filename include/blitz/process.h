/* SPDX-License-Identifier: MIT */
/*
 * blitz/process.h - child processes: spawn, pipes, wait, kill.
 *
 *	const char *argv[] = { "sh", "-c", "echo hi; exit 3", NULL };
 *	struct blitz_command cmd = {
 *		.program = "sh", .argv = argv,
 *		.stdio = { BLITZ_STDIO_NULL, BLITZ_STDIO_PIPE, BLITZ_STDIO_INHERIT },
 *	};
 *	char err[256];
 *	struct blitz_process *p;
 *	int rc = blitz_process_spawn(&cmd, &p, err, sizeof(err));  // -ENOENT: err names it
 *	...in a task:
 *	BLITZ_AWAIT(&s->co, blitz_pipe_read_poll(&s->x, blitz_process_fd(p, 1), buf, n, cx));
 *	BLITZ_AWAIT(&s->co, blitz_process_wait_poll(p, &s->w, cx));
 *	blitz_process_status(p, &st);	// st.code == 3
 *	blitz_process_free(p);
 *
 * The child is started with posix_spawn (no fork of a threaded process),
 * an empty signal mask and SIGPIPE at its default action, whatever the
 * spawning thread had (a worker blocks every asynchronous signal).  With
 * rlimits, which posix_spawn cannot set, it is started with fork() instead
 * and runs only async-signal-safe calls before its exec; the result is the
 * same (docs/process.md says what that costs).  Every
 * descriptor blitz opens is close-on-exec, so a child inherits only its
 * stdin, stdout and stderr (and what the program itself left open without
 * O_CLOEXEC).  The parent's ends of the pipes are non-blocking: read and
 * write them with blitz/pipe.h.  The exit is awaited on a pidfd (readable
 * when the child exits, on every backend), the child is reaped with
 * waitid(P_PIDFD) and signalled with pidfd_send_signal (never a recycled pid).
 *
 * Do not reap children with waitpid(-1) elsewhere in the process, nor set
 * SIGCHLD to SIG_IGN (children would be reaped by the kernel); a SIGCHLD
 * signal stream is fine.
 */
#ifndef BLITZ_PROCESS_H
#define BLITZ_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <blitz/io.h>

enum blitz_stdio {
	BLITZ_STDIO_INHERIT = 0,	/* the parent's descriptor */
	BLITZ_STDIO_NULL,		/* /dev/null */
	BLITZ_STDIO_PIPE,		/* a pipe; the parent's end is blitz_process_fd() */
};

/* A resource limit for the child: setrlimit(resource, &limit) before exec. */
struct blitz_rlimit {
	int resource;			/* RLIMIT_NOFILE, RLIMIT_CORE, ... */
	struct rlimit limit;		/* soft (rlim_cur) and hard (rlim_max) */
};

/* blitz_command.pgroup: a new process group led by the child (pgid = its pid). */
#define BLITZ_PGROUP_NEW	((pid_t)-1)

struct blitz_command {
	const char *program;		/* a path, or a name looked up in PATH */
	const char *const *argv;	/* NULL-terminated, argv[0] included; NULL: { program } */
	const char *const *envp;	/* NULL-terminated "NAME=value"; NULL: the parent's */
	const char *cwd;		/* NULL: the parent's; a relative program is found from it */
	enum blitz_stdio stdio[3];	/* stdin, stdout, stderr */
	/*
	 * The child's process group: 0 the parent's; BLITZ_PGROUP_NEW a new
	 * group it leads (blitz_process_kill_group() signals all of it); > 0
	 * join that group (the pid of a child spawned with BLITZ_PGROUP_NEW).
	 */
	pid_t pgroup;
	/* Limits set in the child before exec (then it is forked: see below). */
	const struct blitz_rlimit *rlimits;
	size_t nr_rlimits;
};

struct blitz_exit_status {
	int code;			/* the exit code, or -1 if killed by a signal */
	int signal;			/* the signal that killed it, or 0 */
	bool core_dumped;
};

struct blitz_process;

/**
 * blitz_process_spawn - start a child process.
 * @cmd: what to run.
 * @out: the process, on success.
 * @err: a message on failure (may be NULL), e.g. "cannot run 'nosuch':
 *       No such file or directory".
 * @errlen: its size.
 *
 * A program that does not exist (or cannot be executed, or a working
 * directory that does not exist) is an error code with a message; no child
 * is left behind.  Any thread, including a worker (it does not block: the
 * parent waits only for the child's exec, as posix_spawn does).
 * Return: 0, or -errno (-ENOENT, -EACCES, -ENOEXEC, -EMFILE, ...; -EINVAL:
 * a NULL @cmd or @out, no program, a stdio or pgroup out of range,
 * nr_rlimits without rlimits, a resource setrlimit refuses).
 */
int blitz_process_spawn(const struct blitz_command *cmd, struct blitz_process **out,
			char *err, size_t errlen);

/** blitz_process_pid - the child's pid. */
pid_t blitz_process_pid(const struct blitz_process *p);

/**
 * blitz_process_fd - the parent's end of the child's stdin (0), stdout (1)
 * or stderr (2), or -1 if it is not a pipe (or was closed).  Non-blocking.
 */
int blitz_process_fd(const struct blitz_process *p, int which);

/**
 * blitz_process_close_fd - close the parent's end of pipe @which: closing
 * stdin (0) gives the child end of file.  No operation may be pending on it.
 */
void blitz_process_close_fd(struct blitz_process *p, int which);

/* A wait: in the task's state, zeroed before its first poll. */
struct blitz_process_wait {
	struct blitz_io_op op;		/* POLL_IN on the pidfd */
	int started;
	int result;			/* 0: exited, status available; or -errno */
};

/**
 * blitz_process_wait_poll - await the child's exit and reap it.
 * @p: the process.
 * @w: the wait, in the task's state.
 * @cx: the poll context.
 *
 * Several tasks may wait for the same process.  Cancel a pending wait with
 * blitz_process_wait_cancel().
 * Return: BLITZ_READY when w->result is 0 (blitz_process_status() is valid)
 * or -errno (-ECANCELED).
 */
enum blitz_poll blitz_process_wait_poll(struct blitz_process *p, struct blitz_process_wait *w,
					struct blitz_cx *cx);

/** blitz_process_wait_cancel - cancel a pending wait (from a drop function). */
void blitz_process_wait_cancel(struct blitz_process_wait *w);

/**
 * blitz_process_try_wait - reap the child if it has exited, without waiting.
 * Return: 1 exited (status available), 0 still running, or -errno.
 */
int blitz_process_try_wait(struct blitz_process *p);

/**
 * blitz_process_status - the decoded exit status.
 * Return: 0, or -EAGAIN if the child has not been reaped yet.
 */
int blitz_process_status(struct blitz_process *p, struct blitz_exit_status *st);

/**
 * blitz_process_kill - send @sig to the child (pidfd_send_signal).
 * Return: 0, or -errno (-ESRCH once it has been reaped).
 */
int blitz_process_kill(struct blitz_process *p, int sig);

/**
 * blitz_process_kill_group - send @sig to every process of the group @p
 * leads (spawned with pgroup = BLITZ_PGROUP_NEW): its children and the
 * processes that joined it too.  Only until @p is reaped: from then on the
 * group's id may be reused.  So for a whole job, kill the group before
 * awaiting the leader's exit (a leader that has exited but is not reaped
 * still holds the id).
 * Return: 0, or -errno (-EINVAL: @p leads no group; -ESRCH: reaped, or no
 * process left in the group).
 */
int blitz_process_kill_group(struct blitz_process *p, int sig);

/**
 * blitz_process_free - close the pipes and the pidfd and free @p.  A child
 * that has not been reaped is killed (SIGKILL) and reaped first, so no
 * zombie is left: wait for it before if it should finish its work.  No
 * operation may be pending on @p or its pipes.
 */
void blitz_process_free(struct blitz_process *p);

#endif /* BLITZ_PROCESS_H */
