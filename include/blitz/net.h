/* SPDX-License-Identifier: MIT */
/*
 * blitz/net.h - TCP, UDP and Unix-domain sockets over the I/O driver.
 *
 * Socket creation, bind and listen do not wait and are plain calls that
 * return a non-blocking descriptor or -errno.  Everything that waits is an
 * awaitable: a struct the caller keeps in its task state, polled until
 * BLITZ_READY, after which its `result` is a descriptor, a byte count, or
 * -errno.  Descriptors are closed with close(2) once no operation on them is
 * pending, or with blitz_net_close() at any time (it ends what waits on
 * them first); a socket accepted with BLITZ_ACCEPT_OWNED only with
 * blitz_net_close().
 *
 *	struct conn { struct blitz_co co; struct blitz_connect c; struct blitz_xfer x; ... };
 *	BLITZ_AWAIT(&s->co, blitz_tcp_connect_poll(&s->c, &addr, cx));
 *	if (s->c.result < 0) ... (e.g. -ECONNREFUSED)
 *	BLITZ_AWAIT(&s->co, blitz_write_all_poll(&s->x, s->c.result, buf, len, cx));
 */
#ifndef BLITZ_NET_H
#define BLITZ_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <blitz/io.h>
#include <blitz/time.h>

struct blitz_addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/**
 * blitz_addr_parse - "1.2.3.4:80", "[::1]:80", "localhost:80", ":80" (any
 * IPv4 address), "unix:/path/to/socket".  Host names other than localhost
 * are not resolved (resolution blocks; use getaddrinfo on the blocking pool).
 * Return: 0, or -EINVAL with @err saying what is wrong with @s.
 */
int blitz_addr_parse(const char *s, struct blitz_addr *out, char *err, size_t errlen);

/**
 * blitz_addr_format - "1.2.3.4:80", "[::1]:80" or "unix:/path" into @buf
 * (truncated to @len - 1 characters; "(family N)" for another family).
 */
const char *blitz_addr_format(const struct blitz_addr *a, char *buf, size_t len);

/** blitz_addr_local - the address @fd is bound to (e.g. to learn port 0's port). */
int blitz_addr_local(int fd, struct blitz_addr *out);

/**
 * blitz_listen - a listening stream socket (TCP or Unix) on @a, with
 * SO_REUSEADDR for TCP.  A @backlog out of the kernel's range is clamped
 * to it (somaxconn).  Return: the descriptor, or -errno (-EINVAL: @a is
 * NULL).
 */
int blitz_listen(const struct blitz_addr *a, int backlog);

/** blitz_udp_bind - a UDP socket bound to @a.  Return: descriptor or -errno (-EINVAL: NULL @a). */
int blitz_udp_bind(const struct blitz_addr *a);

/*
 * accept: result = the new connection's descriptor (non-blocking) or -errno.
 * Out of descriptors (-EMFILE, -ENFILE) the connection stays queued and
 * its client waits; the failure is counted (blitz_net_stats()) and fires
 * the accept_emfile probe.  With BLITZ_ACCEPT_SHED in flags, the queued
 * connections are also reset at once, using a descriptor the process keeps
 * spare from its first blitz_listen() (a listener that is non-blocking, as
 * blitz_listen() makes them); the result is still -EMFILE or -ENFILE.
 */
#define BLITZ_ACCEPT_SHED 1u
/*
 * With BLITZ_ACCEPT_OWNED in flags, the accepted socket is closed with
 * blitz_net_close() and never with close(2): blitz may then keep a receive
 * armed on it between reads (io_uring with a ring per worker: a multishot
 * receive into buffers of the worker's ring, so that a read takes data
 * already received, with no submission of its own; epoll: added to the
 * epoll set at its first wait only).  Its reads
 * (blitz_read_poll, blitz_io_prep_recv with no flags, streams) work as on
 * any socket; read it with those only, one read at a time for the speed-up.
 */
#define BLITZ_ACCEPT_OWNED 2u
struct blitz_accept {
	struct blitz_io_op op;
	struct blitz_addr peer;
	int started;
	int result;
	unsigned flags;		/* BLITZ_ACCEPT_SHED, _OWNED or 0; set before the first poll */
};
enum blitz_poll blitz_accept_poll(struct blitz_accept *a, int listen_fd, struct blitz_cx *cx);

/* Counters of the socket layer, for the whole process (every runtime). */
struct blitz_net_stats {
	uint64_t accept_emfile;	/* accepts that failed with EMFILE or ENFILE */
	uint64_t accept_shed;	/* queued connections those failures reset (BLITZ_ACCEPT_SHED) */
};

/** blitz_net_stats - read the socket layer's counters into @out. */
void blitz_net_stats(struct blitz_net_stats *out);

/*
 * A server's accept loop, as a task of its own (core/net/serve.c).  Each
 * connection it accepts becomes a task running conn_vt over a copy of
 * conn_state, with the connection's descriptor stored in the copy at
 * fd_offset (an int).  That task owns the descriptor and closes it (with
 * blitz_net_close() if accept_flags has BLITZ_ACCEPT_OWNED).
 *
 *	struct conn { struct blitz_co co; struct blitz_xfer x; int fd; char buf[4096]; };
 *	struct conn proto = { .fd = -1 };
 *	struct blitz_serve_conf conf = {
 *		.conn_vt = &conn_vt, .conn_state = &proto, .conn_size = sizeof(proto),
 *		.fd_offset = offsetof(struct conn, fd),
 *	};
 *	struct blitz_task *server = blitz_serve(rt, listen_fd, &conf);
 *	...
 *	blitz_cancel_token_cancel(conf.stop);	(or the runtime's drain)
 *	blitz_join(server);
 *	blitz_task_release(server);
 *	close(listen_fd);
 *
 * The loop backs off 1 ms when accept runs out of descriptors or memory
 * (EMFILE, ENFILE, ENOBUFS, ENOMEM) and goes on past a connection that
 * failed before it was accepted (ECONNABORTED, a reset, ...).  It yields
 * its worker after 64 accepts in a row.  It ends (its task completes) when:
 *  - the stop token is cancelled (result 0): the accept in flight is
 *    cancelled and collected, so the listener may then be closed with
 *    close(2);
 *  - the listener is closed with blitz_net_close() (result -ECANCELED), or
 *    accept fails otherwise (-EBADF, -EINVAL: closed or not listening).
 *    A close is safe only while the loop waits in its accept: between two
 *    accepts (a back-off, a yield) the freed number may be reused by then,
 *    and the loop would accept on that descriptor.  End it with the token,
 *    join it, then close the listener;
 *  - the runtime shuts down (-ESHUTDOWN: no task can be spawned).
 * A cancel of its task (blitz_task_cancel()) also ends it; the accept in
 * flight is then cancelled, and a descriptor it made is closed.
 */
struct blitz_cancel_token;
struct blitz_serve_conf {
	const struct blitz_task_vtable *conn_vt;	/* each connection's task */
	const void *conn_state;		/* its initial state, copied by blitz_serve() */
	size_t conn_size;		/* bytes of conn_state */
	size_t fd_offset;		/* where the descriptor goes: offsetof(..., fd) */
	unsigned accept_flags;		/* BLITZ_ACCEPT_SHED, BLITZ_ACCEPT_OWNED or 0 */
	struct blitz_cancel_token *stop;	/* NULL: the runtime's shutdown token */
};

/**
 * blitz_serve - start an accept loop on @listen_fd (a non-blocking
 * listener, as blitz_listen() makes them) that spawns one task per
 * connection, as @conf says.
 * @rt: the runtime, or NULL for the calling task's.
 * @listen_fd: the listener; it stays the caller's: close it once the loop
 *             has ended, or with blitz_net_close() to end it.
 * @conf: read here only (conn_state is copied); a token it names must
 *        outlive the loop.
 *
 * Return: a join handle, or NULL with errno set: EINVAL (a NULL @conf or
 * conn_vt, a NULL conn_state, no int at fd_offset inside conn_size, no
 * runtime), EBADF (@listen_fd negative), or what blitz_spawn() sets.
 */
struct blitz_task *blitz_serve(struct blitz_runtime *rt, int listen_fd,
			       const struct blitz_serve_conf *conf);

/* What an accept loop did (blitz_serve_stats()). */
struct blitz_serve_stats {
	uint64_t accepted;	/* connections handed to a task */
	uint64_t dropped;	/* connections closed because no task could be spawned */
	uint64_t emfile;	/* accepts that failed with EMFILE or ENFILE */
	int result;		/* once done: 0 (stopped by the token) or the error that ended it */
	bool done;		/* the loop has ended by itself (not by a cancel of its task) */
};

/**
 * blitz_serve_stats - read the counters of the loop @server (a handle
 * from blitz_serve(), still held) into @out; from any thread, at any time.
 */
void blitz_serve_stats(struct blitz_task *server, struct blitz_serve_stats *out);

/*
 * connect: result = the connected descriptor or -errno (-ECONNREFUSED, ...;
 * -EINVAL for a NULL address, -EAFNOSUPPORT for an unknown family).
 */
struct blitz_connect {
	struct blitz_io_op op;
	struct blitz_addr addr;
	int fd;
	int started;
	int result;
};
enum blitz_poll blitz_connect_poll(struct blitz_connect *c, const struct blitz_addr *to,
				   struct blitz_cx *cx);

/*
 * connect with a time limit: result = the descriptor, -ETIMEDOUT, or -errno.
 * When the limit passes, the connect is cancelled and its completion
 * collected before READY, so nothing is left in flight.
 */
struct blitz_connect_timeout {
	struct blitz_connect c;
	struct blitz_timeout limit;
	const struct blitz_addr *to;
	int phase;
	int result;
};
enum blitz_poll blitz_connect_timeout_poll(struct blitz_connect_timeout *ct,
					   const struct blitz_addr *to, uint64_t timeout_ns,
					   struct blitz_cx *cx);
/** blitz_connect_timeout_cancel - for a drop function. */
void blitz_connect_timeout_cancel(struct blitz_connect_timeout *ct);

/* Transfers: read some, write all, read exactly. */
struct blitz_xfer {
	struct blitz_io_op op;
	size_t done;
	int started;
	long result;		/* bytes, 0 at end of stream (read), or -errno */
};
/** blitz_read_poll - read at most @len bytes (0: end of stream; @len 0: 0 at once). */
enum blitz_poll blitz_read_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				struct blitz_cx *cx);
/** blitz_write_poll - write at most @len bytes (one send; @len 0: 0 at once). */
enum blitz_poll blitz_write_poll(struct blitz_xfer *x, int fd, const void *buf, size_t len,
				 struct blitz_cx *cx);
/** blitz_write_all_poll - write all @len bytes; result = len or -errno. */
enum blitz_poll blitz_write_all_poll(struct blitz_xfer *x, int fd, const void *buf, size_t len,
				     struct blitz_cx *cx);
/** blitz_read_exact_poll - read exactly @len bytes; -EPIPE if the stream ends first. */
enum blitz_poll blitz_read_exact_poll(struct blitz_xfer *x, int fd, void *buf, size_t len,
				      struct blitz_cx *cx);

/**
 * blitz_xfer_cancel_poll - cancel what @x has in flight and await its end.
 * @x: a transfer (of the calls above, or of blitz/pipe.h's) that another
 *     awaitable gave up on (a blitz_timeout_poll() whose limit won, a race
 *     it lost), or an idle one.
 * @cx: the poll context.
 *
 * The cancel is asked for once; the operation then completes, and @x is
 * idle again, ready for its next transfer (no need to zero it): nothing of
 * it is left in the kernel or the driver, so its buffer may be reused and
 * the descriptor closed (with blitz_net_close() for a BLITZ_ACCEPT_OWNED
 * socket, close(2) otherwise).  Await it until READY before
 * starting anything else on @x.
 * Return: BLITZ_READY once nothing is in flight, with x->result -ECANCELED
 * (the cancel won, nothing was in flight, or a pipe's readiness wait ended
 * first: nothing moved), or the result of a transfer that finished first:
 * bytes it moved (for the *_all/_exact forms, those of its last piece
 * only), 0 for the end of the stream, or -errno.  BLITZ_PENDING until then.
 */
enum blitz_poll blitz_xfer_cancel_poll(struct blitz_xfer *x, struct blitz_cx *cx);

/* UDP datagrams. */
struct blitz_dgram {
	struct blitz_io_op op;
	struct blitz_addr peer;	/* send_to: destination; recv_from: source */
	struct msghdr msg;
	struct iovec iov;
	int started;
	long result;
};
enum blitz_poll blitz_send_to_poll(struct blitz_dgram *d, int fd, const void *buf, size_t len,
				   const struct blitz_addr *to, struct blitz_cx *cx);
enum blitz_poll blitz_recv_from_poll(struct blitz_dgram *d, int fd, void *buf, size_t len,
				     struct blitz_cx *cx);

/**
 * blitz_net_close - close socket @fd through @rt's I/O driver (NULL: the
 * calling task's runtime; off a runtime's threads with a NULL @rt it is
 * close(2)).  Whatever blitz holds armed on @fd ends first: an operation
 * waiting on it completes with -ECANCELED (or its result, if it finished
 * first), and so does a receive an owned socket keeps armed; then the
 * descriptor is closed, so the peer sees the end of the stream once nothing
 * holds the socket any more (on io_uring with a ring per worker, an
 * operation in another worker's ring ends at that worker's next tick).
 * The caller must not start operations on @fd any more.
 * Return: 0, or -errno: -EBADF for @fd negative or not open (nothing is
 * closed then), or what close(2) returned.
 */
int blitz_net_close(struct blitz_runtime *rt, int fd);

/** blitz_net_cancel - cancel the pending operation of any of the structs above. */
#define blitz_net_cancel(x) blitz_io_cancel(&(x)->op)

#endif /* BLITZ_NET_H */
