// SPDX-License-Identifier: MIT
/*
 * core/process/signal.c - signals as a stream (a signalfd read through the driver),
 * and the mask rule: the runtime's threads block every asynchronous signal
 * from birth (runtime_block_signals() around their pthread_create).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <blitz/pipe.h>
#include <blitz/signal.h>
#include "../probes.h"
#include "../sched/runtime.h"

struct blitz_signals {
	int fd;
	sigset_t set;
};

/* Signals a thread must keep receiving: faults, abort, profilers, the unblockable. */
static bool signal_is_synchronous(int sig)
{
	switch (sig) {
	case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGTRAP: case SIGSYS:
	case SIGABRT: case SIGPROF: case SIGKILL: case SIGSTOP:
		return true;
	default:
		return false;
	}
}

void blitz_signals_runtime_set(sigset_t *set)
{
	sigfillset(set);
	for (int sig = 1; sig < NSIG; sig++)
		if (signal_is_synchronous(sig))
			sigdelset(set, sig);
}

int blitz_signals_block(const sigset_t *set)
{
	sigset_t all;

	if (!set) {
		blitz_signals_runtime_set(&all);
		set = &all;
	}
	return -pthread_sigmask(SIG_BLOCK, set, NULL);
}

/*
 * runtime_block_signals - block the runtime's set in the calling thread
 * before it creates a runtime thread, which inherits the mask from its
 * first instruction (blocking at the thread's start would leave a window);
 * runtime_restore_signals() gives the creator its mask back.  glibc
 * silently keeps its internal signals (cancellation, setxid) unblocked.
 */
void runtime_block_signals(sigset_t *old)
{
	sigset_t set;

	blitz_signals_runtime_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void runtime_restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

struct blitz_signals *blitz_signals_open(const sigset_t *set)
{
	struct blitz_signals *s;
	int err;

	if (!set) {
		errno = EINVAL;
		return NULL;
	}
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigismember(set, sig) == 1 && signal_is_synchronous(sig)) {
			errno = EINVAL;
			return NULL;
		}
	}
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	s->set = *set;
	err = pthread_sigmask(SIG_BLOCK, set, NULL);
	if (err) {
		free(s);
		errno = err;
		return NULL;
	}
	s->fd = signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->fd < 0) {
		err = errno;
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

void blitz_signals_close(struct blitz_signals *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s);
}

int blitz_signals_fd(const struct blitz_signals *s)
{
	return s->fd;
}

enum blitz_poll blitz_signals_recv_poll(struct blitz_signals *s, struct blitz_signal_recv *r,
					struct blitz_cx *cx)
{
	if (blitz_pipe_read_poll(&r->x, s->fd, &r->info, sizeof(r->info), cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	if (r->x.result == (long)sizeof(r->info)) {
		r->result = (int)r->info.ssi_signo;
		BLITZ_SIGNAL_RECV(r->result, (int)r->info.ssi_pid, s->fd);
	} else {
		r->result = r->x.result < 0 ? (int)r->x.result : -EIO;
	}
	return BLITZ_READY;
}

void blitz_signals_recv_cancel(struct blitz_signal_recv *r)
{
	blitz_net_cancel(&r->x);
}
