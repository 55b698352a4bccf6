// SPDX-License-Identifier: MIT
/*
 * mix.c - the soak's other parts, each a driver task that does rounds until
 * the run ends.  A round spawns short-lived children, joins every one and
 * checks what each reports:
 *  - chan:     a bounded channel (capacity 1-64), 1-4 producers of 500
 *              numbered values each, 1-3 consumers; every value arrives
 *              once, in order per producer;
 *  - bcast:    a broadcast channel, 1-3 receivers of 1,000 values; each
 *              value arrives in order or is counted as missed (lag);
 *  - timers:   32 sleepers of 0-19 ms (one in five re-armed, one in three
 *              cancelled before it fires: none may wake early), then 8
 *              receives under a 1-8 ms timeout racing a sender that sleeps
 *              1-8 ms: the value is received, or left in the oneshot;
 *  - fanout:   48 children that yield 0-2 times and hash their input, one
 *              in eight cancelled;
 *  - fs:       2 files of 1 B-64 KiB written, read back, stat'ed, read at an
 *              offset, renamed and unlinked;
 *  - blocking: 4 jobs on the blocking pool (a hash chain, some with a
 *              100 us sleep).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "soak.h"

#define MAX_KIDS	64

/* The children of a round: spawned, then joined in order, then released. */
struct kids {
	struct blitz_task *h[MAX_KIDS];
	unsigned n, i;
};

static struct blitz_task *kid(struct kids *k, enum soak_kind kind,
			      const struct blitz_task_vtable *vt, const void *state, size_t size)
{
	struct blitz_task *h = soak_spawn(kind, vt, state, size);

	if (!h)
		soak_wrong("spawn: %s", strerror(errno));
	else
		k->h[k->n++] = h;
	return h;
}

static void kids_release(struct kids *k)
{
	for (unsigned i = 0; i < k->n; i++)
		blitz_task_release(k->h[i]);
	k->n = 0;
}

/* JOIN_KIDS - await every child of @k, from @first on (a poll function's statement). */
#define JOIN_KIDS(co, k, first, cx)						\
	for ((k)->i = (first); (k)->i < (k)->n; (k)->i++)			\
		BLITZ_AWAIT(co, blitz_join_poll((k)->h[(k)->i], cx))

/*
 * Every driver's state starts with this: driver_drop() reads it.  Between
 * two rounds a driver pauses (PAUSE, a sleep): the soak is meant to run
 * for long on a shared machine, not to take every cycle it can get.
 */
struct driver_head {
	struct blitz_co co;
	struct kids k;
	struct blitz_sleep pause;
};

#define PAUSE(d, ms, cx)							\
	do {									\
		blitz_sleep_init(&(d)->h.pause, (ms) * BLITZ_NSEC_PER_MSEC);	\
		BLITZ_AWAIT(&(d)->h.co, blitz_sleep_poll(&(d)->h.pause, cx));	\
	} while (0)

static void *kid_state(struct kids *k, unsigned i)
{
	return blitz_task_state(k->h[i]);
}

/* ---------------------------------------------------------------------- */
/* chan                                                                   */

#define CHAN_MSGS	500
#define CHAN_MAX_PROD	4

struct producer {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct blitz_chan_waiter w;
	uint32_t id, seq;
	uint64_t v;
	int err;
};

static enum blitz_poll producer_poll(void *arg, struct blitz_cx *cx)
{
	struct producer *p = arg;

	BLITZ_CO_BEGIN(&p->co);
	for (p->seq = 0; p->seq < CHAN_MSGS; p->seq++) {
		p->v = (uint64_t)p->id << 32 | p->seq;
		BLITZ_AWAIT(&p->co, blitz_channel_send_poll(p->ch, &p->w, cx, &p->v, &p->err));
		if (p->err) {
			soak_wrong("chan: send %u of producer %u: %s", p->seq, p->id, strerror(-p->err));
			break;
		}
	}
	BLITZ_CO_END(&p->co);
}

static void producer_drop(void *arg)
{
	struct producer *p = arg;

	blitz_chan_waiter_cancel(&p->w);
	soak_task_dropped(K_CHAN, &p->co);
}
static const struct blitz_task_vtable producer_vt = BLITZ_TASK_VTABLE(producer_poll, producer_drop);

struct consumer {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct blitz_chan_waiter w;
	uint64_t v, got, sum;
	int64_t last[CHAN_MAX_PROD];	/* the last seq seen per producer, -1 none */
	int err;
};

static enum blitz_poll consumer_poll(void *arg, struct blitz_cx *cx)
{
	struct consumer *c = arg;
	uint32_t id, seq;

	BLITZ_CO_BEGIN(&c->co);
	for (;;) {
		BLITZ_AWAIT(&c->co, blitz_channel_recv_poll(c->ch, &c->w, cx, &c->v, &c->err));
		if (c->err == -EPIPE)
			break;
		if (c->err) {
			soak_wrong("chan: recv: %s", strerror(-c->err));
			break;
		}
		id = (uint32_t)(c->v >> 32);
		seq = (uint32_t)c->v;
		if (id >= CHAN_MAX_PROD || seq >= CHAN_MSGS || (int64_t)seq <= c->last[id])
			soak_wrong("chan: value %u of producer %u after %lld", seq, id,
				   id < CHAN_MAX_PROD ? (long long)c->last[id] : -2ll);
		else
			c->last[id] = seq;
		c->got++;
		c->sum += c->v;
	}
	BLITZ_CO_END(&c->co);
}

static void consumer_drop(void *arg)
{
	struct consumer *c = arg;

	blitz_chan_waiter_cancel(&c->w);
	soak_task_dropped(K_CHAN, &c->co);
}
static const struct blitz_task_vtable consumer_vt = BLITZ_TASK_VTABLE(consumer_poll, consumer_drop);

struct chan_driver {
	struct driver_head h;
	struct blitz_channel ch;
	uint64_t round;
	unsigned prod, cons;
};

/* Every value once: the count, and the sum of (id << 32 | seq). */
static void chan_check(struct chan_driver *d)
{
	uint64_t got = 0, sum = 0, want = 0;

	for (unsigned i = 0; i < d->cons; i++) {
		struct consumer *c = kid_state(&d->h.k, i);

		got += c->got;
		sum += c->sum;
	}
	for (uint64_t id = 0; id < d->prod; id++)
		want += (id << 32) * CHAN_MSGS + (uint64_t)CHAN_MSGS * (CHAN_MSGS - 1) / 2;
	if (got != (uint64_t)d->prod * CHAN_MSGS || sum != want)
		soak_wrong("chan: round %llu: %llu values of %u, sum %llu of %llu",
			   (unsigned long long)d->round, (unsigned long long)got,
			   d->prod * CHAN_MSGS, (unsigned long long)sum, (unsigned long long)want);
	soak_add(&soak.chan_msgs, got);
}

static enum blitz_poll chan_poll(void *arg, struct blitz_cx *cx)
{
	struct chan_driver *d = arg;

	BLITZ_CO_BEGIN(&d->h.co);
	for (d->round = 0; !stopping(); d->round++) {
		d->prod = 1 + d->round % CHAN_MAX_PROD;
		d->cons = 1 + (unsigned)(d->round / CHAN_MAX_PROD % 3);
		if (blitz_channel_init(&d->ch, 1u << d->round % 7, sizeof(uint64_t))) {
			soak_wrong("chan: init failed");
			break;
		}
		for (unsigned i = 0; i < d->cons; i++) {
			struct consumer c = { .ch = &d->ch };

			memset(c.last, 0xff, sizeof(c.last));	/* -1: none yet */
			kid(&d->h.k, K_CHAN, &consumer_vt, &c, sizeof(c));
		}
		for (unsigned i = 0; i < d->prod; i++) {
			struct producer p = { .ch = &d->ch, .id = i };

			kid(&d->h.k, K_CHAN, &producer_vt, &p, sizeof(p));
		}
		JOIN_KIDS(&d->h.co, &d->h.k, d->cons, cx);	/* the producers */
		blitz_channel_close(&d->ch);
		JOIN_KIDS(&d->h.co, &d->h.k, 0, cx);	/* the consumers (and again the producers) */
		if (d->h.k.n == d->cons + d->prod)
			chan_check(d);
		kids_release(&d->h.k);
		blitz_channel_destroy(&d->ch);
		PAUSE(d, 1, cx);
	}
	BLITZ_CO_END(&d->h.co);
}

/* ---------------------------------------------------------------------- */
/* bcast                                                                  */

#define BCAST_MSGS	1000

struct bcast_rx {
	struct blitz_co co;
	struct blitz_broadcast_rx rx;
	struct blitz_chan_waiter w;
	uint64_t v, missed, expect, got, lost;
	int err;
};

static enum blitz_poll bcast_rx_poll(void *arg, struct blitz_cx *cx)
{
	struct bcast_rx *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	for (;;) {
		BLITZ_AWAIT(&r->co, blitz_broadcast_recv_poll(&r->rx, &r->w, cx, &r->v,
							      &r->missed, &r->err));
		if (r->err == -EPIPE)
			break;
		if (r->err == -EOVERFLOW) {
			r->lost += r->missed;
			r->expect += r->missed;
			continue;
		}
		if (r->err) {
			soak_wrong("bcast: recv: %s", strerror(-r->err));
			break;
		}
		if (r->v != r->expect)
			soak_wrong("bcast: got %llu, expected %llu", (unsigned long long)r->v,
				   (unsigned long long)r->expect);
		r->expect = r->v + 1;
		r->got++;
	}
	blitz_broadcast_unsubscribe(&r->rx);
	BLITZ_CO_END(&r->co);
}

static void bcast_rx_drop(void *arg)
{
	struct bcast_rx *r = arg;

	blitz_chan_waiter_cancel(&r->w);
	blitz_broadcast_unsubscribe(&r->rx);
	soak_task_dropped(K_BCAST, &r->co);
}
static const struct blitz_task_vtable bcast_rx_vt = BLITZ_TASK_VTABLE(bcast_rx_poll, bcast_rx_drop);

struct bcast_driver {
	struct driver_head h;
	struct blitz_broadcast bc;
	uint64_t round, i;
};

static void bcast_check(struct bcast_driver *d)
{
	for (unsigned i = 0; i < d->h.k.n; i++) {
		struct bcast_rx *r = kid_state(&d->h.k, i);

		if (r->expect != BCAST_MSGS || r->got + r->lost != BCAST_MSGS)
			soak_wrong("bcast: a receiver ended at %llu with %llu received, %llu missed",
				   (unsigned long long)r->expect, (unsigned long long)r->got,
				   (unsigned long long)r->lost);
		soak_add(&soak.bcast_msgs, r->got);
		soak_add(&soak.bcast_missed, r->lost);
	}
}

static enum blitz_poll bcast_poll(void *arg, struct blitz_cx *cx)
{
	struct bcast_driver *d = arg;

	BLITZ_CO_BEGIN(&d->h.co);
	for (d->round = 0; !stopping(); d->round++) {
		if (blitz_broadcast_init(&d->bc, 2u << d->round % 5, sizeof(uint64_t))) {
			soak_wrong("bcast: init failed");
			break;
		}
		for (unsigned i = 0; i < 1 + d->round % 3; i++) {
			struct bcast_rx r = { 0 };

			blitz_broadcast_subscribe(&d->bc, &r.rx);
			if (!kid(&d->h.k, K_BCAST, &bcast_rx_vt, &r, sizeof(r)))
				blitz_broadcast_unsubscribe(&r.rx);
		}
		for (d->i = 0; d->i < BCAST_MSGS; d->i++) {
			if (blitz_broadcast_send(&d->bc, &d->i))
				soak_wrong("bcast: send failed");
			if (d->i % 8 == 7)
				BLITZ_YIELD(&d->h.co, cx);
		}
		blitz_broadcast_close(&d->bc);
		JOIN_KIDS(&d->h.co, &d->h.k, 0, cx);
		bcast_check(d);
		kids_release(&d->h.k);
		blitz_broadcast_destroy(&d->bc);
		PAUSE(d, 1, cx);
	}
	BLITZ_CO_END(&d->h.co);
}

/* ---------------------------------------------------------------------- */
/* timers                                                                 */

#define SLEEPERS	32
#define TIMEOUTS	8

struct sleeper {
	struct blitz_co co;
	struct blitz_sleep s;
	uint64_t dur;
};

static enum blitz_poll sleeper_poll(void *arg, struct blitz_cx *cx)
{
	struct sleeper *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	blitz_sleep_init(&s->s, s->dur);
	if (s->dur % 5 == 0)	/* re-armed before it fires */
		blitz_sleep_reset(&s->s, blitz_sleep_deadline(&s->s) + BLITZ_NSEC_PER_MSEC);
	BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->s, cx));
	if (blitz_now_ns() < blitz_sleep_deadline(&s->s))
		soak_wrong("timers: a sleep woke before its deadline");
	BLITZ_CO_END(&s->co);
}

static void sleeper_drop(void *arg)
{
	struct sleeper *s = arg;

	blitz_sleep_cancel(&s->s);
	soak_task_dropped(K_SLEEP, &s->co);
}
static const struct blitz_task_vtable sleeper_vt = BLITZ_TASK_VTABLE(sleeper_poll, sleeper_drop);

struct to_recv {
	struct blitz_co co;
	struct blitz_oneshot *os;
	struct blitz_timeout to;
	uint64_t limit, v;
	int err, timed_out;
};

static enum blitz_poll to_recv_inner(void *arg, struct blitz_cx *cx)
{
	struct to_recv *r = arg;

	return blitz_oneshot_recv_poll(r->os, cx, &r->v, &r->err);
}

static enum blitz_poll to_recv_poll(void *arg, struct blitz_cx *cx)
{
	struct to_recv *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	blitz_timeout_init(&r->to, r->limit);
	BLITZ_AWAIT(&r->co, blitz_timeout_poll(&r->to, to_recv_inner, r, cx));
	r->timed_out = r->to.timed_out;
	if (r->timed_out)	/* the receive is ours to withdraw */
		blitz_oneshot_recv_cancel(r->os);
	BLITZ_CO_END(&r->co);
}

static void to_recv_drop(void *arg)
{
	struct to_recv *r = arg;

	blitz_timeout_cancel(&r->to);
	if (r->co.line != -1)
		blitz_oneshot_recv_cancel(r->os);
	soak_task_dropped(K_TIMEOUT, &r->co);
}
static const struct blitz_task_vtable to_recv_vt = BLITZ_TASK_VTABLE(to_recv_poll, to_recv_drop);

struct to_send {
	struct blitz_co co;
	struct blitz_oneshot *os;
	struct blitz_sleep s;
	uint64_t delay, v;
};

static enum blitz_poll to_send_poll(void *arg, struct blitz_cx *cx)
{
	struct to_send *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	blitz_sleep_init(&s->s, s->delay);
	BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->s, cx));
	if (blitz_oneshot_send(s->os, s->v))
		soak_wrong("timers: oneshot send refused");
	BLITZ_CO_END(&s->co);
}

static void to_send_drop(void *arg)
{
	struct to_send *s = arg;

	blitz_sleep_cancel(&s->s);
	soak_task_dropped(K_TIMEOUT, &s->co);
}
static const struct blitz_task_vtable to_send_vt = BLITZ_TASK_VTABLE(to_send_poll, to_send_drop);

struct timer_driver {
	struct driver_head h;
	struct blitz_oneshot os[TIMEOUTS];
	uint64_t want[TIMEOUTS];
	uint64_t round;
};

static void sleepers_start(struct timer_driver *d)
{
	for (unsigned i = 0; i < SLEEPERS; i++) {
		struct sleeper s = { .dur = soak_hash(d->round << 8 | i) % (20 * BLITZ_NSEC_PER_MSEC) };

		kid(&d->h.k, K_SLEEP, &sleeper_vt, &s, sizeof(s));
	}
	for (unsigned i = 0; i < d->h.k.n; i += 3)
		blitz_task_cancel(d->h.k.h[i]);
}

static void sleepers_count(struct timer_driver *d)
{
	for (unsigned i = 0; i < d->h.k.n; i++)
		soak_add(blitz_task_cancelled(d->h.k.h[i]) ? &soak.sleeps_cancelled : &soak.sleeps, 1);
}

static void timeouts_start(struct timer_driver *d)
{
	for (unsigned i = 0; i < TIMEOUTS; i++) {
		uint64_t h = soak_hash(d->round << 8 | i | 0x80);
		struct to_recv r = { .os = &d->os[i],
				     .limit = (1 + h % 8) * BLITZ_NSEC_PER_MSEC };
		struct to_send s = { .os = &d->os[i], .v = h,
				     .delay = (1 + (h >> 8) % 8) * BLITZ_NSEC_PER_MSEC };

		blitz_oneshot_init(&d->os[i]);
		d->want[i] = h;
		kid(&d->h.k, K_TIMEOUT, &to_recv_vt, &r, sizeof(r));
		kid(&d->h.k, K_TIMEOUT, &to_send_vt, &s, sizeof(s));
	}
}

/* Each value was received in time, or is still in its oneshot. */
static void timeouts_check(struct timer_driver *d)
{
	for (unsigned i = 0; i + 1 < d->h.k.n && i / 2 < TIMEOUTS; i += 2) {
		struct to_recv *r = kid_state(&d->h.k, i);
		uint64_t v = 0;
		int err = 0;

		if (!r->timed_out) {
			if (r->err || r->v != d->want[i / 2])
				soak_wrong("timers: received %llu (error %d), sent %llu",
					   (unsigned long long)r->v, r->err,
					   (unsigned long long)d->want[i / 2]);
			soak_add(&soak.timeouts_beaten, 1);
		} else {
			if (blitz_oneshot_try_recv(&d->os[i / 2], &v, &err) != BLITZ_READY ||
			    err || v != d->want[i / 2])
				soak_wrong("timers: after a timeout the value was not left in the oneshot");
			soak_add(&soak.timeouts_fired, 1);
		}
	}
}

static enum blitz_poll timer_poll(void *arg, struct blitz_cx *cx)
{
	struct timer_driver *d = arg;

	BLITZ_CO_BEGIN(&d->h.co);
	for (d->round = 0; !stopping(); d->round++) {
		sleepers_start(d);
		JOIN_KIDS(&d->h.co, &d->h.k, 0, cx);
		sleepers_count(d);
		kids_release(&d->h.k);
		timeouts_start(d);
		JOIN_KIDS(&d->h.co, &d->h.k, 0, cx);
		timeouts_check(d);
		kids_release(&d->h.k);
	}
	BLITZ_CO_END(&d->h.co);
}

/* ---------------------------------------------------------------------- */
/* fanout                                                                 */

#define FANOUT	48

struct child {
	struct blitz_co co;
	uint64_t in, out;
	unsigned yields, i;
};

static enum blitz_poll child_poll(void *arg, struct blitz_cx *cx)
{
	struct child *c = arg;

	BLITZ_CO_BEGIN(&c->co);
	for (c->i = 0; c->i < c->yields; c->i++)
		BLITZ_YIELD(&c->co, cx);
	c->out = soak_hash(c->in);
	BLITZ_CO_END(&c->co);
}

static void child_drop(void *arg)
{
	soak_task_dropped(K_FANOUT, &((struct child *)arg)->co);
}
static const struct blitz_task_vtable child_vt = BLITZ_TASK_VTABLE(child_poll, child_drop);

struct fanout_driver {
	struct driver_head h;
	uint64_t round;
};

static enum blitz_poll fanout_poll(void *arg, struct blitz_cx *cx)
{
	struct fanout_driver *d = arg;

	BLITZ_CO_BEGIN(&d->h.co);
	for (d->round = 0; !stopping(); d->round++) {
		for (unsigned i = 0; i < FANOUT; i++) {
			struct child c = { .in = d->round << 8 | i, .yields = i % 3 };

			kid(&d->h.k, K_FANOUT, &child_vt, &c, sizeof(c));
		}
		for (unsigned i = 0; i < d->h.k.n; i += 8)
			blitz_task_cancel(d->h.k.h[i]);
		JOIN_KIDS(&d->h.co, &d->h.k, 0, cx);
		for (unsigned i = 0; i < d->h.k.n; i++) {
			struct child *c = kid_state(&d->h.k, i);

			if (!blitz_task_cancelled(d->h.k.h[i]) && c->out != soak_hash(c->in))
				soak_wrong("fanout: child %u returned a wrong result", i);
			soak_add(&soak.fanout_joins, 1);
		}
		kids_release(&d->h.k);
		PAUSE(d, 1, cx);
	}
	BLITZ_CO_END(&d->h.co);
}

/* ---------------------------------------------------------------------- */
/* fs                                                                     */

#define FS_FILES	2
#define FS_MAX		65536
#define FS_PATH		512		/* a file's path; the directory's is shorter */

static char fs_dir[FS_PATH - 32];

struct fs_task {
	struct blitz_co co;
	struct blitz_fs_op op;
	char path[FS_PATH], path2[FS_PATH];
	unsigned char *data, at[64];
	size_t len;
	uint64_t seed;
	int fd;
	struct statx stx;
};

static bool fs_failed(struct fs_task *t, const char *what)
{
	char msg[FS_PATH + 128];

	if (t->op.result >= 0)
		return false;
	soak_wrong("fs: %s: %s", what, blitz_fs_strerror(&t->op, msg, sizeof(msg)));
	return true;
}

static enum blitz_poll fs_task_poll(void *arg, struct blitz_cx *cx)
{
	struct fs_task *t = arg;

	BLITZ_CO_BEGIN(&t->co);
	t->len = 1 + soak_hash(t->seed) % FS_MAX;
	t->data = malloc(t->len);
	if (!t->data) {
		soak_wrong("fs: out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->len; i++)
		t->data[i] = (unsigned char)soak_hash(t->seed + i);
	blitz_fs_prep_write_file(&t->op, t->path, t->data, t->len);
	BLITZ_AWAIT(&t->co, blitz_fs_poll(&t->op, cx));
	if (fs_failed(t, "write_file"))
		goto out;
	blitz_fs_prep_read_file(&t->op, t->path);
	BLITZ_AWAIT(&t->co, blitz_fs_poll(&t->op, cx));
	if (fs_failed(t, "read_file"))
		goto out;
	if (t->op.size != t->len || memcmp(t->op.data, t->data, t->len))
		soak_wrong("fs: %s read back differs (%zu bytes, wrote %zu)", t->path, t->op.size, t->len);
	free(t->op.data);
	t->op.data = NULL;
	blitz_fs_prep_stat(&t->op, t->path, &t->stx);
	BLITZ_AWAIT(&t->co, blitz_fs_poll(&t->op, cx));
	if (fs_failed(t, "stat"))
		goto out;
	if (t->stx.stx_size != t->len)
		soak_wrong("fs: %s: stat says %llu bytes, wrote %zu", t->path,
			   (unsigned long long)t->stx.stx_size, t->len);
	blitz_fs_prep_open_flags(&t->op, t->path, O_RDONLY, 0);
	BLITZ_AWAIT(&t->co, blitz_fs_poll(&t->op, cx));
	if (fs_failed(t, "open"))
		goto out;
	t->fd = (int)t->op.result;
	blitz_fs_prep_read_at(&t->op, t->fd, t->at, sizeof(t->at), (off_t)(t->len / 2));
	BLITZ_AWAIT(&t->co, blitz_fs_poll(&t->op, cx));
	if (!fs_failed(t, "read_at") &&
	    ((size_t)t->op.result != (t->len - t->len / 2 < sizeof(t->at) ?
				      t->len - t->len / 2 : sizeof(t->at)) ||
	     memcmp(t->at, t->data + t->len / 2, (size_t)t->op.result)))
		soak_wrong("fs: %s: read_at differs", t->path);
	close(t->fd);
	t->fd = -1;
	blitz_fs_prep_rename(&t->op, t->path, t->path2);
	BLITZ_AWAIT(&t->co, blitz_fs_poll(&t->op, cx));
	if (fs_failed(t, "rename"))
		goto out;
	blitz_fs_prep_unlink(&t->op, t->path2);
	BLITZ_AWAIT(&t->co, blitz_fs_poll(&t->op, cx));
	fs_failed(t, "unlink");
	soak_add(&soak.fs_ops, 7);
out:
	free(t->data);
	t->data = NULL;
	BLITZ_CO_END(&t->co);
}

/* fs tasks are never cancelled (a write in flight may still read data). */
static void fs_task_drop(void *arg)
{
	struct fs_task *t = arg;

	blitz_fs_cancel(&t->op);
	if (t->fd >= 0)
		close(t->fd);
	soak_task_dropped(K_FS, &t->co);
}
static const struct blitz_task_vtable fs_task_vt = BLITZ_TASK_VTABLE(fs_task_poll, fs_task_drop);

/* ---------------------------------------------------------------------- */
/* blocking                                                               */

#define BLOCKING_JOBS	4

static uint64_t hash_chain(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = soak_hash(x);
	return x >> 1;
}

/* The job: a hash chain, after a 100 us sleep for one input in four. */
static int64_t chain_job(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg;

	if (x % 4 == 0)
		nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	return (int64_t)hash_chain(x);
}

struct blk_task {
	struct blitz_co co;
	struct blitz_blocking job;
	uint64_t in;
};

static enum blitz_poll blk_task_poll(void *arg, struct blitz_cx *cx)
{
	struct blk_task *t = arg;

	BLITZ_CO_BEGIN(&t->co);
	blitz_blocking_init(&t->job, chain_job, (void *)(uintptr_t)t->in);
	BLITZ_AWAIT(&t->co, blitz_blocking_poll(&t->job, cx));
	if (t->job.result != (int64_t)hash_chain(t->in))
		soak_wrong("blocking: job returned %lld", (long long)t->job.result);
	soak_add(&soak.blocking_jobs, 1);
	BLITZ_CO_END(&t->co);
}

static void blk_task_drop(void *arg)
{
	struct blk_task *t = arg;

	blitz_blocking_cancel(&t->job);
	soak_task_dropped(K_BLOCKING, &t->co);
}
static const struct blitz_task_vtable blk_task_vt = BLITZ_TASK_VTABLE(blk_task_poll, blk_task_drop);

/* ---------------------------------------------------------------------- */
/* The fs and blocking driver: one of each kind of round                */

struct paced_driver {
	struct driver_head h;
	uint64_t round;
	bool fs;			/* fs rounds, else blocking rounds */
};

static void fs_round(struct paced_driver *d)
{
	for (unsigned i = 0; i < FS_FILES; i++) {
		struct fs_task t = { .seed = soak_hash(d->round << 8 | i), .fd = -1 };

		snprintf(t.path, sizeof(t.path), "%s/f%u", fs_dir, i);
		snprintf(t.path2, sizeof(t.path2), "%s/f%u.moved", fs_dir, i);
		kid(&d->h.k, K_FS, &fs_task_vt, &t, sizeof(t));
	}
}

static void blocking_round(struct paced_driver *d)
{
	for (unsigned i = 0; i < BLOCKING_JOBS; i++) {
		struct blk_task t = { .in = d->round << 8 | i };

		kid(&d->h.k, K_BLOCKING, &blk_task_vt, &t, sizeof(t));
	}
}

static enum blitz_poll paced_poll(void *arg, struct blitz_cx *cx)
{
	struct paced_driver *d = arg;

	BLITZ_CO_BEGIN(&d->h.co);
	for (d->round = 0; !stopping(); d->round++) {
		if (d->fs)
			fs_round(d);
		else
			blocking_round(d);
		JOIN_KIDS(&d->h.co, &d->h.k, 0, cx);
		kids_release(&d->h.k);
		PAUSE(d, d->fs ? 2 : 1, cx);
	}
	BLITZ_CO_END(&d->h.co);
}

/* ---------------------------------------------------------------------- */
/* The drivers                                                            */

/* A driver is dropped once its loop has ended (never cancelled). */
static void driver_drop(void *arg)
{
	struct driver_head *h = arg;

	blitz_sleep_cancel(&h->pause);
	kids_release(&h->k);
	soak_task_dropped(K_DRIVER, &h->co);
}

static const struct blitz_task_vtable chan_vt = BLITZ_TASK_VTABLE(chan_poll, driver_drop);
static const struct blitz_task_vtable bcast_vt = BLITZ_TASK_VTABLE(bcast_poll, driver_drop);
static const struct blitz_task_vtable timer_vt = BLITZ_TASK_VTABLE(timer_poll, driver_drop);
static const struct blitz_task_vtable fanout_vt = BLITZ_TASK_VTABLE(fanout_poll, driver_drop);
static const struct blitz_task_vtable paced_vt = BLITZ_TASK_VTABLE(paced_poll, driver_drop);

#define DRIVERS 6
static struct blitz_task *drivers[DRIVERS];

void mix_start(struct blitz_runtime *rt, const struct soak_opts *o)
{
	struct chan_driver c = { 0 };
	struct bcast_driver b = { 0 };
	struct timer_driver t = { 0 };
	struct fanout_driver f = { 0 };
	struct paced_driver fs = { .fs = true }, blk = { .fs = false };

	if (strlen(o->tmpdir) + sizeof("/blitz-soak-XXXXXX") > sizeof(fs_dir)) {
		fprintf(stderr, PROG ": --tmpdir %s: a path shorter than %zu bytes, please\n",
			o->tmpdir, sizeof(fs_dir) - sizeof("/blitz-soak-XXXXXX"));
		exit(2);
	}
	snprintf(fs_dir, sizeof(fs_dir), "%s/blitz-soak-XXXXXX", o->tmpdir);
	if (!mkdtemp(fs_dir)) {
		fprintf(stderr, PROG ": mkdtemp %s: %s\n", fs_dir, strerror(errno));
		exit(1);
	}
	drivers[0] = soak_spawn(K_DRIVER, &chan_vt, &c, sizeof(c));
	drivers[1] = soak_spawn(K_DRIVER, &bcast_vt, &b, sizeof(b));
	drivers[2] = soak_spawn(K_DRIVER, &timer_vt, &t, sizeof(t));
	drivers[3] = soak_spawn(K_DRIVER, &fanout_vt, &f, sizeof(f));
	drivers[4] = soak_spawn(K_DRIVER, &paced_vt, &fs, sizeof(fs));
	drivers[5] = soak_spawn(K_DRIVER, &paced_vt, &blk, sizeof(blk));
	for (unsigned i = 0; i < DRIVERS; i++)
		if (!drivers[i]) {
			fprintf(stderr, PROG ": spawn: %s\n", strerror(errno));
			exit(1);
		}
	(void)rt;
}

/* mix_done - has every driver ended (after soak_stopping)? */
bool mix_done(void)
{
	for (unsigned i = 0; i < DRIVERS; i++)
		if (!blitz_task_done(drivers[i]))
			return false;
	return true;
}

/* mix_join - release the drivers (once done) and remove the fs directory. */
void mix_join(void)
{
	for (unsigned i = 0; i < DRIVERS; i++) {
		if (blitz_task_cancelled(drivers[i]))
			soak_wrong("driver %u ended cancelled", i);
		blitz_task_release(drivers[i]);
	}
	for (unsigned i = 0; i < FS_FILES; i++) {
		char p[FS_PATH];

		snprintf(p, sizeof(p), "%s/f%u", fs_dir, i);
		unlink(p);
		snprintf(p, sizeof(p), "%s/f%u.moved", fs_dir, i);
		unlink(p);
	}
	if (rmdir(fs_dir))
		soak_wrong("fs: rmdir %s: %s (a file left behind)", fs_dir, strerror(errno));
}
