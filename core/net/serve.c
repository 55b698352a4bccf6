// SPDX-License-Identifier: MIT
/*
 * core/net/serve.c - blitz_serve(): a server's accept loop as a task of its
 * own, spawning one task per connection, until a cancel token, the close
 * of the listener or a cancel of the task stops it.
 *
 * The loop's task state is a struct serve followed by a copy of the
 * connection template; each accepted descriptor is written into that copy
 * at fd_offset, and the copy is spawned (blitz_spawn copies it again).
 * The state machine is written out with a phase rather than the
 * BLITZ_CO_* macros, as the other awaitables of the socket layer are.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <blitz/net.h>
#include <blitz/shutdown.h>
#include <blitz/sync.h>
#include <blitz/runtime.h>

/* Accepts in a row before the loop yields its worker to the connections. */
#define SERVE_BURST		64
/* How long it waits after running out of descriptors or memory. */
#define SERVE_BACKOFF_NS	BLITZ_NSEC_PER_MSEC

enum serve_phase {
	SERVE_ACCEPT = 0,	/* an accept in flight (or about to be) */
	SERVE_BACKOFF,		/* out of descriptors: sleeping before the next */
	SERVE_COLLECT,		/* stopping: the cancelled accept's completion */
	SERVE_DONE,
};

struct serve {
	struct blitz_accept a;
	struct blitz_sleep nap;
	struct blitz_waiter w;			/* on the stop token */
	struct blitz_cancel_token *stop;
	const struct blitz_task_vtable *conn_vt;
	size_t conn_size, fd_offset;
	int lfd;
	int phase;				/* enum serve_phase */
	unsigned burst;				/* accepts since the last yield */
	/* Read by blitz_serve_stats() from any thread: relaxed atomics. */
	_Atomic uint64_t accepted, dropped, emfile;
	_Atomic int result;
	_Atomic bool done;
	unsigned char conn[];			/* the connection template */
};

/* accept_error_is_transient - the accept failed for that connection only. */
static bool accept_error_is_transient(int err)
{
	switch (-err) {
	case ECONNABORTED: case ECONNRESET: case EPROTO: case EPERM:
	case ENETDOWN: case ENETUNREACH: case EHOSTDOWN: case EHOSTUNREACH:
	case ENONET: case ENOPROTOOPT: case ETIMEDOUT: case EINTR: case EAGAIN:
		return true;
	default:
		return false;
	}
}

/* accept_error_is_scarcity - out of descriptors or memory: wait a little. */
static bool accept_error_is_scarcity(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOBUFS || err == -ENOMEM;
}

/* serve_stop - end the loop with @result, collecting an accept in flight. */
static void serve_stop(struct serve *s, int result)
{
	atomic_store_explicit(&s->result, result, memory_order_relaxed);
	blitz_sleep_cancel(&s->nap);
	if (s->a.started) {
		blitz_net_cancel(&s->a);
		s->phase = SERVE_COLLECT;
	} else {
		s->phase = SERVE_DONE;
	}
}

/* serve_backoff - wait SERVE_BACKOFF_NS before the next accept. */
static void serve_backoff(struct serve *s)
{
	blitz_sleep_init(&s->nap, SERVE_BACKOFF_NS);
	s->phase = SERVE_BACKOFF;
}

/*
 * spawn_conn - hand @fd to a new connection task.  A connection no task
 * can be spawned for is closed (its client sees the end of the stream);
 * out of memory the loop backs off, and once the runtime shuts down it ends.
 */
static void spawn_conn(struct serve *s, int fd)
{
	int err;

	memcpy(s->conn + s->fd_offset, &fd, sizeof(fd));
	err = blitz_spawn_detached(NULL, s->conn_vt, s->conn, s->conn_size);
	if (!err) {
		atomic_fetch_add_explicit(&s->accepted, 1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&s->dropped, 1, memory_order_relaxed);
	blitz_net_close(NULL, fd);
	if (err == -ESHUTDOWN)
		serve_stop(s, err);
	else
		serve_backoff(s);
}

/* serve_accepted - act on an accept's result: spawn, back off, or end. */
static void serve_accepted(struct serve *s)
{
	int res = s->a.result;

	if (res >= 0) {
		spawn_conn(s, res);
	} else if (accept_error_is_scarcity(res)) {
		if (res == -EMFILE || res == -ENFILE)
			atomic_fetch_add_explicit(&s->emfile, 1, memory_order_relaxed);
		serve_backoff(s);
	} else if (!accept_error_is_transient(res)) {
		serve_stop(s, res);		/* nothing is in flight: DONE */
	}
}

/* serve_step - one wait of the loop; BLITZ_READY when it moved on. */
static enum blitz_poll serve_step(struct serve *s, struct blitz_cx *cx)
{
	switch (s->phase) {
	case SERVE_ACCEPT:
		if (blitz_accept_poll(&s->a, s->lfd, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		serve_accepted(s);
		return BLITZ_READY;
	case SERVE_BACKOFF:
		if (blitz_sleep_poll(&s->nap, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		s->phase = SERVE_ACCEPT;
		return BLITZ_READY;
	case SERVE_COLLECT:
		/* The cancel closes a descriptor the accept made: -ECANCELED. */
		if (blitz_accept_poll(&s->a, s->lfd, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (s->a.result >= 0)
			blitz_net_close(NULL, s->a.result);
		s->phase = SERVE_DONE;
		return BLITZ_READY;
	default:
		return BLITZ_READY;
	}
}

static enum blitz_poll serve_poll(void *arg, struct blitz_cx *cx)
{
	struct serve *s = arg;

	while (s->phase != SERVE_DONE) {
		if (s->phase != SERVE_COLLECT &&
		    blitz_cancel_token_cancelled_poll(s->stop, &s->w, cx) == BLITZ_READY)
			serve_stop(s, 0);
		if (serve_step(s, cx) == BLITZ_PENDING)
			return BLITZ_PENDING;
		if (s->phase == SERVE_ACCEPT && ++s->burst == SERVE_BURST) {
			s->burst = 0;
			blitz_yield_now(cx);
			return BLITZ_PENDING;
		}
	}
	blitz_cancel_token_waiter_cancel(s->stop, &s->w);
	atomic_store_explicit(&s->done, true, memory_order_release);
	return BLITZ_READY;
}

/* serve_drop - runs at the end, and when the task is cancelled or dropped. */
static void serve_drop(void *arg)
{
	struct serve *s = arg;

	blitz_net_cancel(&s->a);
	blitz_sleep_cancel(&s->nap);
	blitz_cancel_token_waiter_cancel(s->stop, &s->w);
}

static const struct blitz_task_vtable serve_vt = BLITZ_TASK_VTABLE(serve_poll, serve_drop);

static bool conf_is_valid(const struct blitz_serve_conf *c)
{
	return c && c->conn_vt && c->conn_vt->poll &&
	       c->fd_offset <= c->conn_size && c->conn_size - c->fd_offset >= sizeof(int) &&
	       c->conn_size <= UINT32_MAX - sizeof(struct serve) && c->conn_state;
}

struct blitz_task *blitz_serve(struct blitz_runtime *rt, int listen_fd,
			       const struct blitz_serve_conf *conf)
{
	struct blitz_cancel_token *stop;
	struct blitz_task *t;
	struct serve *s;
	size_t size;

	if (!conf_is_valid(conf) || listen_fd < 0) {
		errno = listen_fd < 0 && conf_is_valid(conf) ? EBADF : EINVAL;
		return NULL;
	}
	stop = conf->stop ? conf->stop : blitz_runtime_shutdown_token(rt);
	if (!stop) {
		errno = EINVAL;			/* no runtime */
		return NULL;
	}
	size = sizeof(*s) + conf->conn_size;
	s = calloc(1, size);
	if (!s)
		return NULL;
	s->a.flags = conf->accept_flags;
	s->stop = stop;
	s->conn_vt = conf->conn_vt;
	s->conn_size = conf->conn_size;
	s->fd_offset = conf->fd_offset;
	s->lfd = listen_fd;
	memcpy(s->conn, conf->conn_state, conf->conn_size);
	t = blitz_spawn(rt, &serve_vt, s, size);
	free(s);
	return t;
}

void blitz_serve_stats(struct blitz_task *server, struct blitz_serve_stats *out)
{
	const struct serve *s = blitz_task_state(server);

	/*
	 * done first, acquire: it pairs with the loop's release store after
	 * its last count, so a reader that sees done reads the final counts.
	 * Before done the counts are a relaxed snapshot, each one a value
	 * the loop stored.
	 */
	out->done = atomic_load_explicit(&s->done, memory_order_acquire);
	out->accepted = atomic_load_explicit(&s->accepted, memory_order_relaxed);
	out->dropped = atomic_load_explicit(&s->dropped, memory_order_relaxed);
	out->emfile = atomic_load_explicit(&s->emfile, memory_order_relaxed);
	out->result = atomic_load_explicit(&s->result, memory_order_relaxed);
}
