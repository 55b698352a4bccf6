// SPDX-License-Identifier: MIT
/*
 * core/net/emfile.c - running out of descriptors on the accept side.
 *
 * An accept that fails with EMFILE or ENFILE leaves the connection in the
 * listener's queue: its client waits, for as long as the server has no
 * descriptor to spare, with nothing said on either side.  Two things here:
 *
 *  - counters (blitz_net_stats()) and the accept_emfile probe, so that the
 *    condition is visible;
 *  - the reserve descriptor, for accepts that ask for it
 *    (BLITZ_ACCEPT_SHED): the process keeps one descriptor open on
 *    /dev/null from its first blitz_listen() (none if /dev/null cannot be
 *    opened: then nothing is shed); on EMFILE or ENFILE it closes
 *    it, accepts each queued connection and closes it at once with a reset
 *    (SO_LINGER 0), then opens the reserve again.  Clients the server
 *    cannot take learn so at once instead of timing out.
 *
 * The reserve is one per process, taken by exchange: a thread that finds
 * it gone (another is shedding with it) sheds nothing and returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>
#include <blitz/net.h>
#include "../probes.h"
#include "emfile.h"

/* At most this many connections reset per failed accept: a flood of new
 * ones cannot keep one task here; the next failed accept sheds more. */
#define SHED_MAX 4096

static _Atomic int reserve = -1;
static _Atomic uint64_t accept_emfile, accept_shed;

void emfile_reserve_open(void)
{
	int none = -1, fd;

	/* Relaxed: a hint; the exchange below settles a race. */
	if (atomic_load_explicit(&reserve, memory_order_relaxed) >= 0)
		return;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* Relaxed: the descriptor number is all that is shared. */
	if (!atomic_compare_exchange_strong_explicit(&reserve, &none, fd, memory_order_relaxed,
						     memory_order_relaxed))
		close(fd);
}

/* Reset every connection queued on non-blocking @listen_fd, up to SHED_MAX. */
static unsigned shed_queue(int listen_fd)
{
	const struct linger reset = { .l_onoff = 1, .l_linger = 0 };
	unsigned n = 0;
	int c;

	while (n < SHED_MAX && (c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		setsockopt(c, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
		close(c);
		n++;
	}
	return n;
}

/* Only a non-blocking listener: shedding's accept4() must not wait for a client. */
static bool nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

unsigned emfile_accept_failed(int listen_fd, int err, bool shed)
{
	unsigned n = 0;
	int fd;

	/* Relaxed: statistics. */
	atomic_fetch_add_explicit(&accept_emfile, 1, memory_order_relaxed);
	if (shed && nonblocking(listen_fd)) {
		/* Relaxed: only the number is taken; no other data travels with it. */
		fd = atomic_exchange_explicit(&reserve, -1, memory_order_relaxed);
		if (fd >= 0) {
			close(fd);
			n = shed_queue(listen_fd);
			emfile_reserve_open();
			atomic_fetch_add_explicit(&accept_shed, n, memory_order_relaxed);
		}
	}
	BLITZ_ACCEPT_EMFILE(listen_fd, err, n);
	return n;
}

void blitz_net_stats(struct blitz_net_stats *out)
{
	/* Relaxed: each counter on its own; no pair is read as consistent. */
	out->accept_emfile = atomic_load_explicit(&accept_emfile, memory_order_relaxed);
	out->accept_shed = atomic_load_explicit(&accept_shed, memory_order_relaxed);
}
