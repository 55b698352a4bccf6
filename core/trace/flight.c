// SPDX-License-Identifier: MIT
/*
 * core/trace/flight.c - the flight recorder's dumps (<blitz/trace.h>):
 * the public call and the signal.  The rings themselves are the event
 * log's (event_ring.c), in BLITZ_RING_OVERWRITE while no tracer reads
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <blitz/trace.h>
#include "event_ring.h"
#include "flight.h"

/*
 * blitz_trace_dump - the rings to @path, which appears whole or not at
 * all: they go to "@path.part" first, renamed once written (a reader
 * that waits for the file never sees half of it).  Only system calls and
 * the stack: the signal handler calls it.
 */
int blitz_trace_dump(const char *path)
{
	static const char suffix[] = ".part";
	char part[PATH_MAX];
	size_t len = path ? strlen(path) : 0;
	int fd, n, err;

	if (!len)
		return -EINVAL;
	if (len + sizeof(suffix) > sizeof(part))
		return -ENAMETOOLONG;
	memcpy(part, path, len);
	memcpy(part + len, suffix, sizeof(suffix));
	fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = event_ring_dump_fd(fd);
	err = close(fd) ? -errno : 0;
	if (n >= 0 && !err && rename(part, path))
		err = -errno;
	if (n < 0 || err)
		unlink(part);
	return n < 0 ? n : err ? err : n;
}

/*
 * flight_path - "blitz-flight.PID" into @buf (at least 32 bytes), without
 * stdio: a signal handler builds it.
 */
static void flight_path(char *buf)
{
	static const char pre[] = "blitz-flight.";
	char digits[16];
	unsigned pid = (unsigned)getpid();
	int n = 0;

	do {
		digits[n++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid);
	memcpy(buf, pre, sizeof(pre) - 1);
	buf += sizeof(pre) - 1;
	while (n)
		*buf++ = digits[--n];
	*buf = 0;
}

/* on_signal - BLITZ_FLIGHT_SIGNAL: the dump, to blitz-flight.PID; errno kept for the program. */
static void on_signal(int sig)
{
	char path[32];
	int saved = errno;

	(void)sig;
	flight_path(path);
	blitz_trace_dump(path);
	errno = saved;
}

/*
 * flight_signal_install - @sig dumps the flight recorder from now on (a
 * runtime made with it: the process's handler, the last one's wins).
 * SA_RESTART: the program's system calls go on after the dump.  0, or
 * sigaction's -errno.
 */
int flight_signal_install(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) ? -errno : 0;
}
