// SPDX-License-Identifier: MIT
/*
 * tests/faults/workloads.c - fault-workloads WORKLOAD: one workload of the
 * fault-injection suite (docs/faults.md), run under whatever BLITZ_FAIL
 * says, checking what must hold whatever fails:
 *
 *   - every task it spawned ends, with its work done or with the error it
 *     met (counted: spawned = ended well + ended with an error), and the
 *     runtime counted the same spawns (blitz_stats);
 *   - every byte an echo client got back is a byte it sent, in order;
 *   - a channel delivers each value of every producer that ran exactly
 *     once; a file read back after a write that succeeded is what was
 *     written; a blocking job's result is its own or the pool's error.
 *
 * With --libc the faults come from outside as well (tests/faults/libc-faults
 * runs it under libfiu's fiu-run, which fails libc calls in every thread):
 * then what the workload's own side meets (its clients' sockets, its
 * temporary directory) may fail in any way, and only the runtime's side is
 * held to the invariants above.
 *
 * Workloads: spawn, channel, fs, blocking, timer, echo, shutdown.  It prints one
 * JSON line (the workload, its counts, and per fault point the faults
 * injected) and exits 0, or 1 after one line per broken invariant.
 * No crash, leak or hang is the caller's to see (ASan, a time limit):
 * tests/faults/run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <blitz.h>
#include "../../core/fault.h"
#include "../../core/time/timer.h"

static const char *workload;
static int broken;
static bool libc_faults;	/* --libc: the workload's own calls may fail too */
static bool state_buffers;	/* shutdown: the readers' buffers in the tasks' state */

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "fault-workloads %s: ", workload);	\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			broken++;						\
		}								\
	} while (0)

/* CHECK_OWN - a check of the workload's own calls, waived under --libc. */
#define CHECK_OWN(cond, ...) CHECK((cond) || libc_faults, __VA_ARGS__)

/*
 * The task ledger.  Every task the workloads spawn is counted once when
 * spawned and once when it ends, well or with an error.  seq_cst
 * throughout: a handful of counts per task.
 */
static _Atomic long spawned, spawn_failed, ended_ok, ended_err, dropped, roots;
static _Atomic long errors_by_kind[4];	/* ENOMEM, EAGAIN, transfer errors, other */

static void count_error(long err)
{
	int k = err == -ENOMEM ? 0 : err == -EAGAIN ? 1 :
		(err == -ECONNRESET || err == -EPIPE || err == -EIO || err == -EMFILE ||
		 err == -ENFILE) ? 2 : 3;

	atomic_fetch_add(&errors_by_kind[k], 1);
}

/* task_end - a task's last act: @err 0 (done) or the error it stopped at. */
static void task_end(long err)
{
	if (err) {
		count_error(err);
		atomic_fetch_add(&ended_err, 1);
	} else {
		atomic_fetch_add(&ended_ok, 1);
	}
}

/* spawn - blitz_spawn, counted; NULL (errno ENOMEM) is a fault taken. */
static struct blitz_task *spawn(const struct blitz_task_vtable *vt, const void *st, size_t size)
{
	struct blitz_task *t = blitz_spawn(NULL, vt, st, size);

	if (!t) {
		CHECK(errno == ENOMEM, "spawn failed with %s, not ENOMEM", strerror(errno));
		atomic_fetch_add(&spawn_failed, 1);
		return NULL;
	}
	atomic_fetch_add(&spawned, 1);
	return t;
}

/* spawn_detached_on - blitz_spawn_detached on @rt (NULL: the caller's), counted. */
static bool spawn_detached_on(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
			      const void *st, size_t size)
{
	int err = blitz_spawn_detached(rt, vt, st, size);

	if (err) {
		/* The shutdown workload frees the runtime under its acceptor. */
		CHECK(err == -ENOMEM || (err == -ESHUTDOWN && state_buffers),
		      "detached spawn failed with %s, not ENOMEM", strerror(-err));
		atomic_fetch_add(&spawn_failed, 1);
		return false;
	}
	atomic_fetch_add(&spawned, 1);
	return true;
}

/*
 * run_root - blitz_block_on @vt, again while its own spawn fails (a
 * task_alloc fault), at most 1000 times.
 */
static int run_root(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
		    void *st, size_t size)
{
	int r;

	for (int i = 0; i < 1000; i++) {
		r = blitz_block_on(rt, vt, st, size);
		if (r != -ENOMEM)
			break;
		atomic_fetch_add(&spawn_failed, 1);
	}
	CHECK(r == 0, "the root task: %s", strerror(-r));
	if (r == 0)
		atomic_fetch_add(&roots, 1);
	return r;
}

/*
 * own_calloc - the workload's own memory, asked for again while a libc
 * fault (--libc) refuses it: the runtime is under test, not the workload.
 */
static void *own_calloc(size_t size)
{
	void *p = NULL;

	for (int i = 0; i < 1000 && !(p = calloc(1, size)); i++)
		;
	if (!p) {
		fprintf(stderr, "fault-workloads: out of memory\n");
		exit(2);
	}
	return p;
}

/* The scale of the tests' hang guards (sanitizer builds set it). */
static double timeout_scale(void)
{
	const char *s = getenv("BLITZ_TEST_TIMEOUT_SCALE");
	double v = s ? atof(s) : 1.0;

	return v >= 1.0 ? v : 1.0;
}

/*
 * A group: a root task that spawns @n tasks of @vt, the state of task i
 * made by @make, and joins those that spawned.
 */
#define GROUP_MAX 64

struct group {
	struct blitz_co co;
	const struct blitz_task_vtable *vt;
	void (*make)(unsigned i, void *state);
	size_t size;
	unsigned n, i;
	struct blitz_task *t[GROUP_MAX];
};

static enum blitz_poll group_poll(void *arg, struct blitz_cx *cx)
{
	struct group *g = arg;

	BLITZ_CO_BEGIN(&g->co);
	for (g->i = 0; g->i < g->n; g->i++) {
		void *st = own_calloc(g->size);

		g->make(g->i, st);
		g->t[g->i] = spawn(g->vt, st, g->size);
		free(st);
	}
	for (g->i = 0; g->i < g->n; g->i++) {
		if (!g->t[g->i])
			continue;
		BLITZ_AWAIT(&g->co, blitz_join_poll(g->t[g->i], cx));
		blitz_task_release(g->t[g->i]);
	}
	BLITZ_CO_END(&g->co);
}

static const struct blitz_task_vtable group_vt = BLITZ_TASK_VTABLE(group_poll, NULL);

/* run_group - the group of @n tasks of @vt as a root task. */
static void run_group(struct blitz_runtime *rt, const struct blitz_task_vtable *vt,
		      void (*make)(unsigned i, void *state), size_t size, unsigned n)
{
	struct group g = { .vt = vt, .make = make, .size = size, .n = n };

	run_root(rt, &group_vt, &g, sizeof(g));
}

/* ---------------------------------------------------------------------- */
/* spawn: spawn and join, yields, detached grandchildren                  */

#define SPAWN_CHILDREN 2000

struct child {
	struct blitz_co co;
	unsigned i, yields;
	bool done;
};

static _Atomic long grandchildren_live;

struct grandchild {
	struct blitz_co co;
};

static enum blitz_poll grandchild_poll(void *arg, struct blitz_cx *cx)
{
	struct grandchild *g = arg;

	BLITZ_CO_BEGIN(&g->co);
	BLITZ_YIELD(&g->co, cx);
	task_end(0);
	atomic_fetch_sub(&grandchildren_live, 1);
	BLITZ_CO_END(&g->co);
}

static const struct blitz_task_vtable grandchild_vt = BLITZ_TASK_VTABLE(grandchild_poll, NULL);

static enum blitz_poll child_poll(void *arg, struct blitz_cx *cx)
{
	struct child *c = arg;

	BLITZ_CO_BEGIN(&c->co);
	for (c->yields = 0; c->yields < c->i % 3; c->yields++)
		BLITZ_YIELD(&c->co, cx);
	if (c->i % 8 == 0) {
		struct grandchild g = { { 0 } };

		atomic_fetch_add(&grandchildren_live, 1);
		if (!spawn_detached_on(NULL, &grandchild_vt, &g, sizeof(g)))
			atomic_fetch_sub(&grandchildren_live, 1);
	}
	c->done = true;
	task_end(0);
	BLITZ_CO_END(&c->co);
}

static const struct blitz_task_vtable child_vt = BLITZ_TASK_VTABLE(child_poll, NULL);

struct spawn_root {
	struct blitz_co co;
	struct blitz_task *t[SPAWN_CHILDREN];
	unsigned i;
};

static enum blitz_poll spawn_root_poll(void *arg, struct blitz_cx *cx)
{
	struct spawn_root *r = arg;

	BLITZ_CO_BEGIN(&r->co);
	for (r->i = 0; r->i < SPAWN_CHILDREN; r->i++) {
		struct child c = { .i = r->i };

		r->t[r->i] = spawn(&child_vt, &c, sizeof(c));
	}
	for (r->i = 0; r->i < SPAWN_CHILDREN; r->i++) {
		if (!r->t[r->i])
			continue;
		BLITZ_AWAIT(&r->co, blitz_join_poll(r->t[r->i], cx));
		CHECK(((struct child *)blitz_task_state(r->t[r->i]))->done,
		      "child %u joined without its work done", r->i);
		blitz_task_release(r->t[r->i]);
	}
	while (atomic_load(&grandchildren_live) > 0)
		BLITZ_YIELD(&r->co, cx);
	BLITZ_CO_END(&r->co);
}

static const struct blitz_task_vtable spawn_root_vt = BLITZ_TASK_VTABLE(spawn_root_poll, NULL);

static void run_spawn(struct blitz_runtime *rt)
{
	struct spawn_root *r = own_calloc(sizeof(*r));

	for (int round = 0; round < 3; round++) {
		memset(r, 0, sizeof(*r));
		run_root(rt, &spawn_root_vt, r, sizeof(*r));
	}
	free(r);
}

/* ---------------------------------------------------------------------- */
/* channel: producers and consumers over a bounded channel                */

#define PRODUCERS 4
#define CONSUMERS 3
#define PER_PRODUCER 500
#define CHAN_ROUNDS 8

static _Atomic int seen[PRODUCERS * PER_PRODUCER];

struct producer {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct blitz_chan_waiter w;
	uint32_t p, k, v;
	int err;
};

static enum blitz_poll producer_poll(void *arg, struct blitz_cx *cx)
{
	struct producer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	blitz_chan_waiter_init(&s->w);
	for (s->k = 0; s->k < PER_PRODUCER; s->k++) {
		s->v = s->p * PER_PRODUCER + s->k;
		BLITZ_AWAIT(&s->co, blitz_channel_send_poll(s->ch, &s->w, cx, &s->v, &s->err));
		if (s->err)
			break;
	}
	CHECK(!s->err, "producer %u: send: %s", s->p, strerror(-s->err));
	task_end(s->err);
	BLITZ_CO_END(&s->co);
}

static const struct blitz_task_vtable producer_vt = BLITZ_TASK_VTABLE(producer_poll, NULL);

struct consumer {
	struct blitz_co co;
	struct blitz_channel *ch;
	struct blitz_chan_waiter w;
	uint32_t v;
	int err;
};

static enum blitz_poll consumer_poll(void *arg, struct blitz_cx *cx)
{
	struct consumer *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	blitz_chan_waiter_init(&s->w);
	for (;;) {
		BLITZ_AWAIT(&s->co, blitz_channel_recv_poll(s->ch, &s->w, cx, &s->v, &s->err));
		if (s->err)
			break;
		if (s->v < PRODUCERS * PER_PRODUCER)
			atomic_fetch_add(&seen[s->v], 1);
		else
			CHECK(0, "received %u, never sent", s->v);
	}
	CHECK(s->err == -EPIPE, "consumer: %s", strerror(-s->err));
	task_end(0);
	BLITZ_CO_END(&s->co);
}

static const struct blitz_task_vtable consumer_vt = BLITZ_TASK_VTABLE(consumer_poll, NULL);

struct chan_root {
	struct blitz_co co;
	struct blitz_channel ch;
	struct blitz_task *prod[PRODUCERS], *cons[CONSUMERS];
	unsigned i, nconsumers;
};

/* Each round: the channel (its buffer may fail), consumers, then producers. */
static enum blitz_poll chan_root_poll(void *arg, struct blitz_cx *cx)
{
	struct chan_root *r = arg;
	int err;

	BLITZ_CO_BEGIN(&r->co);
	err = blitz_channel_init(&r->ch, 16, sizeof(uint32_t));
	if (err) {
		CHECK(err == -ENOMEM, "channel init: %s", strerror(-err));
		count_error(err);
		return BLITZ_READY;
	}
	for (r->i = 0; r->i < CONSUMERS; r->i++) {
		struct consumer c = { .ch = &r->ch };

		r->cons[r->i] = spawn(&consumer_vt, &c, sizeof(c));
		r->nconsumers += r->cons[r->i] != NULL;
	}
	/* No consumer: the producers would wait forever; send nothing. */
	for (r->i = 0; r->i < PRODUCERS && r->nconsumers; r->i++) {
		struct producer p = { .ch = &r->ch, .p = r->i };

		r->prod[r->i] = spawn(&producer_vt, &p, sizeof(p));
	}
	for (r->i = 0; r->i < PRODUCERS; r->i++) {
		if (!r->prod[r->i])
			continue;
		BLITZ_AWAIT(&r->co, blitz_join_poll(r->prod[r->i], cx));
		blitz_task_release(r->prod[r->i]);
	}
	blitz_channel_close(&r->ch);
	for (r->i = 0; r->i < CONSUMERS; r->i++) {
		if (!r->cons[r->i])
			continue;
		BLITZ_AWAIT(&r->co, blitz_join_poll(r->cons[r->i], cx));
		blitz_task_release(r->cons[r->i]);
	}
	for (unsigned v = 0; v < PRODUCERS * PER_PRODUCER; v++) {
		int want = r->prod[v / PER_PRODUCER] ? 1 : 0;

		CHECK(atomic_load(&seen[v]) == want, "value %u received %d times, not %d",
		      v, atomic_load(&seen[v]), want);
		atomic_store(&seen[v], 0);
	}
	blitz_channel_destroy(&r->ch);
	BLITZ_CO_END(&r->co);
}

static const struct blitz_task_vtable chan_root_vt = BLITZ_TASK_VTABLE(chan_root_poll, NULL);

static void run_channel(struct blitz_runtime *rt)
{
	for (int round = 0; round < CHAN_ROUNDS; round++) {
		struct chan_root r;
		struct blitz_broadcast bc;
		struct blitz_watch wt;
		uint32_t zero = 0;
		int err;

		memset(&r, 0, sizeof(r));
		run_root(rt, &chan_root_vt, &r, sizeof(r));
		/* The other channels' buffers: they fail alike, or work. */
		if ((err = blitz_broadcast_init(&bc, 8, sizeof(uint32_t))) == 0)
			blitz_broadcast_destroy(&bc);
		else
			CHECK(err == -ENOMEM, "broadcast init: %s", strerror(-err));
		if ((err = blitz_watch_init(&wt, sizeof(uint32_t), &zero)) == 0)
			blitz_watch_destroy(&wt);
		else
			CHECK(err == -ENOMEM, "watch init: %s", strerror(-err));
	}
}

/* ---------------------------------------------------------------------- */
/* fs: write, read back, compare                                           */

#define FILES 8
#define FILE_BYTES (48 * 1024)
#define FS_ROUNDS 4

static char fs_dir[256];

static void fill(char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

struct file_task {
	struct blitz_co co;
	struct blitz_fs_op op;
	unsigned i;
	int fd;
	size_t done;
	char path[300];
	char want[FILE_BYTES], got[FILE_BYTES];
	struct blitz_fs_dir dir;
	long err;
};

static void file_drop(void *arg)
{
	struct file_task *f = arg;

	if (f->fd >= 0)
		close(f->fd);
	unlink(f->path);
}

/*
 * One file: write_file, read_file, compare; then open, write at the file
 * position until all is written, fsync, read_at until all is read,
 * compare; readdir.  Stops at the first error.
 */
static enum blitz_poll file_poll(void *arg, struct blitz_cx *cx)
{
	struct file_task *f = arg;

	BLITZ_CO_BEGIN(&f->co);
	snprintf(f->path, sizeof(f->path), "%s/f%u", fs_dir, f->i);
	fill(f->want, FILE_BYTES, f->i);
	blitz_fs_prep_write_file(&f->op, f->path, f->want, FILE_BYTES);
	BLITZ_AWAIT(&f->co, blitz_fs_poll(&f->op, cx));
	if ((f->err = f->op.result) < 0)
		goto out;
	blitz_fs_prep_read_file(&f->op, f->path);
	BLITZ_AWAIT(&f->co, blitz_fs_poll(&f->op, cx));
	if ((f->err = f->op.result) < 0)
		goto out;
	CHECK(f->op.size == FILE_BYTES && !memcmp(f->op.data, f->want, FILE_BYTES),
	      "%s: read_file gave back other bytes", f->path);
	free(f->op.data);
	blitz_fs_prep_open_flags(&f->op, f->path, O_RDWR | O_TRUNC, 0644);
	BLITZ_AWAIT(&f->co, blitz_fs_poll(&f->op, cx));
	if ((f->err = f->op.result) < 0)
		goto out;
	f->fd = (int)f->op.result;
	for (f->done = 0; f->done < FILE_BYTES; f->done += (size_t)f->op.result) {
		blitz_fs_prep_write(&f->op, f->fd, f->want + f->done, FILE_BYTES - f->done);
		BLITZ_AWAIT(&f->co, blitz_fs_poll(&f->op, cx));
		if ((f->err = f->op.result) < 0)
			goto out;
		CHECK(f->op.result > 0, "%s: a write of %zu bytes wrote none", f->path,
		      FILE_BYTES - f->done);
		if (f->op.result == 0)
			goto out;
	}
	blitz_fs_prep_fsync(&f->op, f->fd, true);
	BLITZ_AWAIT(&f->co, blitz_fs_poll(&f->op, cx));
	if ((f->err = f->op.result) < 0)
		goto out;
	for (f->done = 0; f->done < FILE_BYTES; f->done += (size_t)f->op.result) {
		blitz_fs_prep_read_at(&f->op, f->fd, f->got + f->done, FILE_BYTES - f->done,
				      (off_t)f->done);
		BLITZ_AWAIT(&f->co, blitz_fs_poll(&f->op, cx));
		if ((f->err = f->op.result) < 0)
			goto out;
		CHECK(f->op.result > 0, "%s: end of file at %zu", f->path, f->done);
		if (f->op.result == 0)
			goto out;
	}
	CHECK(!memcmp(f->got, f->want, FILE_BYTES), "%s: read back other bytes", f->path);
	blitz_fs_prep_readdir(&f->op, fs_dir, &f->dir);
	BLITZ_AWAIT(&f->co, blitz_fs_poll(&f->op, cx));
	if ((f->err = f->op.result) < 0)
		goto out;
	blitz_fs_dir_free(&f->dir);
out:
	task_end(f->err < 0 ? f->err : 0);
	BLITZ_CO_END(&f->co);
}

static const struct blitz_task_vtable file_vt = BLITZ_TASK_VTABLE(file_poll, file_drop);

static void make_file(unsigned i, void *state)
{
	struct file_task *f = state;

	f->i = i;
	f->fd = -1;
}


static void run_fs(struct blitz_runtime *rt)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(fs_dir, sizeof(fs_dir), "%s/blitz-faults-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(fs_dir)) {
		CHECK_OWN(0, "mkdtemp %s: %s", fs_dir, strerror(errno));
		return;
	}
	for (int round = 0; round < FS_ROUNDS; round++)
		run_group(rt, &file_vt, make_file, sizeof(struct file_task), FILES);
	CHECK_OWN(rmdir(fs_dir) == 0, "rmdir %s: %s (a file left behind)", fs_dir, strerror(errno));
}

/* ---------------------------------------------------------------------- */
/* blocking: jobs from tasks and from outside                              */

#define BLOCKERS 16
#define JOBS_EACH 12
#define OUTSIDE_JOBS 64

static _Atomic long jobs_ok;

static int64_t triple(void *arg)
{
	usleep(50);
	return 3 * (int64_t)(intptr_t)arg;
}

struct blocker {
	struct blitz_co co;
	struct blitz_blocking job;
	unsigned i, k;
	long err;
};

static enum blitz_poll blocker_poll(void *arg, struct blitz_cx *cx)
{
	struct blocker *b = arg;
	intptr_t n;

	BLITZ_CO_BEGIN(&b->co);
	for (b->k = 0; b->k < JOBS_EACH; b->k++) {
		blitz_blocking_init(&b->job, triple, (void *)(intptr_t)(b->i * 100 + b->k));
		BLITZ_AWAIT(&b->co, blitz_blocking_poll(&b->job, cx));
		n = b->i * 100 + b->k;
		if (b->job.result == 3 * n) {
			atomic_fetch_add(&jobs_ok, 1);
			continue;
		}
		CHECK(b->job.result == -EAGAIN, "job %ld: result %" PRId64, (long)n, b->job.result);
		b->err = (long)b->job.result;
	}
	task_end(b->err);
	BLITZ_CO_END(&b->co);
}

static const struct blitz_task_vtable blocker_vt = BLITZ_TASK_VTABLE(blocker_poll, NULL);

static void make_blocker(unsigned i, void *state)
{
	((struct blocker *)state)->i = i;
}


static void run_blocking(struct blitz_runtime *rt)
{
	struct blitz_blocking jobs[OUTSIDE_JOBS];
	struct blitz_blocking_stats st;
	long outside_ok = 0;

	run_group(rt, &blocker_vt, make_blocker, sizeof(struct blocker), BLOCKERS);
	for (int i = 0; i < OUTSIDE_JOBS; i++) {
		int err;

		blitz_blocking_init(&jobs[i], triple, (void *)(intptr_t)i);
		err = blitz_spawn_blocking(rt, &jobs[i]);
		if (err) {
			CHECK(err == -EAGAIN, "spawn_blocking: %s", strerror(-err));
			jobs[i].fn = NULL;
			continue;
		}
	}
	for (int i = 0; i < OUTSIDE_JOBS; i++) {
		if (!jobs[i].fn)
			continue;
		CHECK(blitz_blocking_wait(&jobs[i]) == 3 * i, "outside job %d: %" PRId64,
		      i, jobs[i].result);
		outside_ok++;
	}
	blitz_blocking_stats(rt, &st);
	CHECK((long)st.jobs_done == atomic_load(&jobs_ok) + outside_ok,
	      "the pool ran %" PRIu64 " jobs; %ld came back", st.jobs_done,
	      atomic_load(&jobs_ok) + outside_ok);
}

/* ---------------------------------------------------------------------- */
/* timer: sleeps, and wakes from wheel-owned entries                       */

#define SLEEPERS 64
#define NAPS 6

struct sleeper {
	struct blitz_co co;
	struct blitz_sleep nap;
	uint64_t until;
	unsigned k;
	long err;
};

static enum blitz_poll sleeper_poll(void *arg, struct blitz_cx *cx)
{
	struct sleeper *s = arg;
	int err;

	BLITZ_CO_BEGIN(&s->co);
	for (s->k = 0; s->k < NAPS; s->k++) {
		if (s->k % 2) {
			blitz_sleep_init(&s->nap, 1000000);
			BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
			continue;
		}
		/* An entry the wheel owns; out of memory, nap by the sleep instead. */
		s->until = blitz_now_ns() + 1000000;
		err = runtime_timer_wake_at(blitz_cx_runtime(cx), s->until, blitz_cx_waker(cx));
		if (err) {
			CHECK(err == -ENOMEM, "timer: %s", strerror(-err));
			s->err = err;
			blitz_sleep_until_init(&s->nap, s->until);
			BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
			continue;
		}
		/* Woken only by the entry (nothing else holds our waker). */
		BLITZ_AWAIT(&s->co, blitz_now_ns() >= s->until ? BLITZ_READY : BLITZ_PENDING);
	}
	task_end(s->err);
	BLITZ_CO_END(&s->co);
}

static const struct blitz_task_vtable sleeper_vt = BLITZ_TASK_VTABLE(sleeper_poll, NULL);


static void make_sleeper(unsigned i, void *state)
{
	(void)i;
	(void)state;		/* calloc'd: k = 0, err = 0 */
}

static void run_timer(struct blitz_runtime *rt)
{
	run_group(rt, &sleeper_vt, make_sleeper, sizeof(struct sleeper), SLEEPERS);
}

/* ---------------------------------------------------------------------- */
/* echo: an echo server in the runtime, clients on plain threads           */

#define CLIENTS 4
#define CONNS_EACH 12
#define MSGS_EACH 8
#define MSG_MAX 6000
#define ECHO_BUF 4096

static _Atomic long echo_live, conns_whole, conns_broken, bytes_checked;
static _Atomic bool server_stop, server_gone;

struct echo {
	struct blitz_co co;
	struct blitz_stream s;
	struct blitz_bufreader r;
	struct blitz_stream_op op;
	size_t n, done;
	long err;
	int fd;
	bool has_reader, ended;
	unsigned char buf[ECHO_BUF];
};

/*
 * The reader's buffer is freed by the poll that ends: no read is pending
 * then.  A task dropped before (the runtime shut down under it) has its
 * buffer in its state, which a pending read keeps alive (state_buffers).
 */
static void echo_drop(void *arg)
{
	struct echo *e = arg;

	if (!e->ended)
		atomic_fetch_add(&dropped, 1);
	close(e->fd);
	atomic_fetch_sub(&echo_live, 1);
}

/* Read what is there, write it all back, until end of stream or an error. */
static enum blitz_poll echo_poll(void *arg, struct blitz_cx *cx)
{
	struct echo *e = arg;

	BLITZ_CO_BEGIN(&e->co);
	blitz_stream_socket(&e->s, e->fd);
	if ((e->err = blitz_bufreader_init(&e->r, &e->s, state_buffers ? e->buf : NULL,
					   ECHO_BUF)) < 0)
		goto out;
	e->has_reader = true;
	for (;;) {
		BLITZ_AWAIT(&e->co, blitz_bufreader_fill_poll(&e->r, cx));
		if (e->r.result < 0) {
			e->err = e->r.result;
			break;
		}
		e->n = blitz_bufreader_buffered(&e->r);
		if (!e->n)
			break;				/* end of stream */
		for (e->done = 0; e->done < e->n; e->done += (size_t)e->op.result) {
			BLITZ_AWAIT(&e->co, blitz_stream_write_poll(&e->op, &e->s,
				    (const char *)blitz_bufreader_data(&e->r) + e->done,
				    e->n - e->done, cx));
			if (e->op.result <= 0) {
				e->err = e->op.result ? e->op.result : -EPIPE;
				goto out;
			}
		}
		blitz_bufreader_consume(&e->r, e->n);
	}
out:
	if (e->has_reader)
		blitz_bufreader_destroy(&e->r);
	e->ended = true;
	task_end(e->err);
	BLITZ_CO_END(&e->co);
}

static const struct blitz_task_vtable echo_vt = BLITZ_TASK_VTABLE(echo_poll, echo_drop);

struct acceptor {
	struct blitz_co co;
	struct blitz_accept a;
	struct blitz_sleep nap;
	int lfd;
	bool ended;
};

static void acceptor_drop(void *arg)
{
	struct acceptor *s = arg;

	if (!s->ended)
		atomic_fetch_add(&dropped, 1);

	blitz_io_cancel(&s->a.op);
	blitz_sleep_cancel(&s->nap);
}

/*
 * Accept until told to stop.  A failed accept (out of descriptors, a
 * refused submission) backs off 1 ms, as a server does; a connection that
 * cannot get its task is closed (its client sees the end of the stream).
 */
static enum blitz_poll acceptor_poll(void *arg, struct blitz_cx *cx)
{
	struct acceptor *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	while (!atomic_load(&server_stop)) {
		s->a.flags = BLITZ_ACCEPT_SHED;
		BLITZ_AWAIT(&s->co, blitz_accept_poll(&s->a, s->lfd, cx));
		if (s->a.result >= 0) {
			struct echo e = { .fd = s->a.result };

			atomic_fetch_add(&echo_live, 1);
			if (!spawn_detached_on(NULL, &echo_vt, &e, sizeof(e))) {
				atomic_fetch_sub(&echo_live, 1);
				close(e.fd);
			}
			continue;
		}
		CHECK(s->a.result == -EMFILE || s->a.result == -ENFILE || s->a.result == -ENOMEM ||
		      s->a.result == -ECANCELED, "accept: %s", strerror(-s->a.result));
		blitz_sleep_init(&s->nap, 1000000);
		BLITZ_AWAIT(&s->co, blitz_sleep_poll(&s->nap, cx));
	}
	s->ended = true;
	task_end(0);
	BLITZ_CO_END(&s->co);
}

static const struct blitz_task_vtable acceptor_vt = BLITZ_TASK_VTABLE(acceptor_poll, acceptor_drop);

static struct blitz_addr server_addr;

/* A message's byte at @i: what the client sends and wants back. */
static unsigned char msg_byte(unsigned client, unsigned conn, unsigned msg, size_t i)
{
	return (unsigned char)((client * 31 + conn * 7 + msg * 13 + i * 5 + (i >> 7)) & 0xff);
}

/*
 * One connection: MSGS_EACH messages, each written whole then read back
 * whole and compared.  Whole: every echo came back; broken: the server
 * ended it (a fault it took), and every byte that came back matched.
 */
static bool client_conn(unsigned client, unsigned conn, char *out, char *in)
{
	struct timeval tv = { .tv_sec = (time_t)(60 * timeout_scale()) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool whole = false;

	if (fd < 0 || connect(fd, (struct sockaddr *)&server_addr.ss, server_addr.len) < 0) {
		if (atomic_load(&server_gone)) {
			if (fd >= 0)
				close(fd);
			return false;
		}
		CHECK_OWN(0, "client: connect: %s", strerror(errno));
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (unsigned m = 0; m < MSGS_EACH; m++) {
		size_t len = 1 + (client * 977 + conn * 131 + m * 1543) % MSG_MAX, got = 0;

		for (size_t i = 0; i < len; i++)
			out[i] = (char)msg_byte(client, conn, m, i);
		if (send(fd, out, len, MSG_NOSIGNAL) != (ssize_t)len) {
			CHECK_OWN(errno == ECONNRESET || errno == EPIPE, "client: send: %s",
				  strerror(errno));
			goto out;
		}
		while (got < len) {
			uint64_t t0 = blitz_now_ns();
			ssize_t r;

			do
				r = recv(fd, in + got, len - got, 0);
			while (r < 0 && errno == EINTR);

			if (r <= 0) {
				/*
				 * A timeout is a hang, whatever else failed: EAGAIN
				 * after the whole SO_RCVTIMEO (fiu-run fakes EAGAIN
				 * at once, too).
				 */
				CHECK(r == 0 || errno != EAGAIN ||
				      blitz_now_ns() - t0 < (uint64_t)tv.tv_sec * 1000000000ull,
				      "client: recv: no echo within %ld s (a hang)", (long)tv.tv_sec);
				CHECK_OWN(r == 0 || errno == ECONNRESET, "client: recv: %s",
					  strerror(errno));
				goto check;
			}
			got += (size_t)r;
		}
check:
		CHECK(!memcmp(in, out, got), "client %u: conn %u msg %u: other bytes came back",
		      client, conn, m);
		atomic_fetch_add(&bytes_checked, (long)got);
		if (got < len)
			goto out;
	}
	whole = true;
out:
	atomic_fetch_add(whole ? &conns_whole : &conns_broken, 1);
	if (fd >= 0)
		close(fd);
	return true;
}

/* A client: CONNS_EACH connections; with state_buffers, until the server is gone. */
static void *client_main(void *arg)
{
	unsigned client = (unsigned)(uintptr_t)arg;
	char *out = own_calloc(MSG_MAX), *in = own_calloc(MSG_MAX);

	for (unsigned c = 0; state_buffers || c < CONNS_EACH; c++)
		if (!client_conn(client, c % CONNS_EACH, out, in))
			break;
	free(out);
	free(in);
	return NULL;
}

/* start_clients - the client threads (asked again while libc says no); how many run. */
static unsigned start_clients(pthread_t *clients)
{
	unsigned n = 0;

	for (unsigned i = 0; i < CLIENTS; i++) {
		int err = EAGAIN;

		for (int k = 0; k < 1000 && err; k++)
			err = pthread_create(&clients[n], NULL, client_main, (void *)(uintptr_t)i);
		CHECK_OWN(!err, "client thread: %s", strerror(err));
		n += !err;
	}
	return n;
}

static void join_clients(pthread_t *clients, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		pthread_join(clients[i], NULL);
}

static void run_echo(struct blitz_runtime *rt)
{
	struct acceptor ac = { .lfd = -1 };
	struct blitz_task *t = NULL;
	pthread_t clients[CLIENTS];
	unsigned nclients = 0;
	struct blitz_addr any;

	blitz_addr_parse("127.0.0.1:0", &any, NULL, 0);
	ac.lfd = blitz_listen(&any, 64);
	if (ac.lfd < 0 || blitz_addr_local(ac.lfd, &server_addr)) {
		CHECK_OWN(0, "listen: %s", strerror(-ac.lfd));
		return;
	}
	/* The acceptor is the server: without it nothing runs; try until it spawns. */
	for (int i = 0; i < 1000 && !(t = blitz_spawn(rt, &acceptor_vt, &ac, sizeof(ac))); i++)
		atomic_fetch_add(&spawn_failed, 1);
	CHECK(t, "the acceptor never spawned");
	if (!t)
		goto out;
	atomic_fetch_add(&spawned, 1);
	nclients = start_clients(clients);
	join_clients(clients, nclients);
	atomic_store(&server_stop, true);
	blitz_task_cancel(t);
	blitz_join(t);
	blitz_task_release(t);
	/* Every client has closed: each echo task sees the end of its stream. */
	while (atomic_load(&echo_live) > 0)
		usleep(1000);
	CHECK(atomic_load(&conns_whole) + atomic_load(&conns_broken) == nclients * CONNS_EACH,
	      "connections: %ld whole + %ld broken", atomic_load(&conns_whole),
	      atomic_load(&conns_broken));
out:
	close(ac.lfd);
}

/*
 * shutdown: the echo server and its clients, and the runtime freed under
 * them once 256 KiB came back: every task, waiting or queued, with its
 * operations in flight, is cancelled and dropped by blitz_runtime_free.
 */
static void run_shutdown(struct blitz_runtime **rtp)
{
	struct acceptor ac = { .lfd = -1 };
	pthread_t clients[CLIENTS];
	unsigned nclients = 0;
	struct blitz_addr any;
	double limit = 60 * timeout_scale();
	uint64_t t0 = blitz_now_ns();

	state_buffers = true;
	blitz_addr_parse("127.0.0.1:0", &any, NULL, 0);
	ac.lfd = blitz_listen(&any, 64);
	if (ac.lfd < 0 || blitz_addr_local(ac.lfd, &server_addr)) {
		CHECK_OWN(0, "listen: %s", strerror(-ac.lfd));
		return;
	}
	for (int i = 0; i < 1000; i++) {
		if (spawn_detached_on(*rtp, &acceptor_vt, &ac, sizeof(ac)))
			break;
	}
	nclients = start_clients(clients);
	while (atomic_load(&bytes_checked) < 256 * 1024 &&
	       (double)(blitz_now_ns() - t0) < limit * 1e9)
		usleep(1000);
	CHECK(atomic_load(&bytes_checked) >= 256 * 1024, "no 256 KiB echoed within %.0f s (a hang)",
	      limit);
	blitz_runtime_free(*rtp);
	*rtp = NULL;
	atomic_store(&server_gone, true);
	close(ac.lfd);
	join_clients(clients, nclients);
}

/* ---------------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*run)(struct blitz_runtime *rt);
	void (*run_free)(struct blitz_runtime **rtp);	/* frees the runtime itself */
} workloads[] = {
	{ "spawn", run_spawn, NULL },
	{ "channel", run_channel, NULL },
	{ "fs", run_fs, NULL },
	{ "blocking", run_blocking, NULL },
	{ "timer", run_timer, NULL },
	{ "echo", run_echo, NULL },
	{ "shutdown", NULL, run_shutdown },
};
#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

static int usage(void)
{
	fprintf(stderr, "usage: fault-workloads [--libc] WORKLOAD (spawn, channel, fs, blocking, timer, echo or shutdown)\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct blitz_config cfg;
	struct blitz_runtime *rt;
	struct blitz_stats st;
	const char *backend;
	char err[256];
	unsigned w;

	if (argc == 3 && !strcmp(argv[1], "--libc")) {
		libc_faults = true;
		argv++;
		argc--;
	}
	if (argc != 2)
		return usage();
	for (w = 0; w < NR_WORKLOADS && strcmp(argv[1], workloads[w].name); w++)
		;
	if (w == NR_WORKLOADS)
		return usage();
	workload = argv[1];
	blitz_config_default(&cfg);
	cfg.workers = 2;
	cfg.blocking_idle_ms = 1;	/* pool threads come and go: many starts */
	if (blitz_config_from_env(&cfg, err, sizeof(err))) {
		fprintf(stderr, "fault-workloads: %s\n", err);
		return 2;
	}
	rt = blitz_runtime_new(&cfg);
	if (!rt)
		return 2;
	backend = blitz_io_backend_name(rt);
	if (workloads[w].run)
		workloads[w].run(rt);
	else
		workloads[w].run_free(&rt);
	if (rt)
		blitz_stats(rt, &st);
	printf("{\"workload\":\"%s\",\"backend\":\"%s\",\"spawned\":%ld,\"spawn_failed\":%ld,"
	       "\"ended_ok\":%ld,\"ended_err\":%ld,\"dropped\":%ld,\"enomem\":%ld,\"eagain\":%ld,\"xfer_errors\":%ld,"
	       "\"other_errors\":%ld,\"conns_whole\":%ld,\"conns_broken\":%ld,\"bytes_checked\":%ld,"
	       "\"injected\":{",
	       workload, backend, atomic_load(&spawned), atomic_load(&spawn_failed),
	       atomic_load(&ended_ok), atomic_load(&ended_err), atomic_load(&dropped),
	       atomic_load(&errors_by_kind[0]),
	       atomic_load(&errors_by_kind[1]), atomic_load(&errors_by_kind[2]),
	       atomic_load(&errors_by_kind[3]), atomic_load(&conns_whole),
	       atomic_load(&conns_broken), atomic_load(&bytes_checked));
	for (unsigned p = 0; p < FAULT_NR_POINTS; p++)
		printf("%s\"%s\":%" PRIu64, p ? "," : "", fault_name(p), fault_injected(p));
	printf("}}\n");
	fflush(stdout);
	/*
	 * Every task the workload spawned has ended, well or with an error,
	 * or was dropped unfinished (cancelled, or the runtime freed under it).
	 */
	CHECK(atomic_load(&spawned) ==
	      atomic_load(&ended_ok) + atomic_load(&ended_err) + atomic_load(&dropped),
	      "%ld tasks spawned, %ld ended well, %ld with an error, %ld dropped",
	      atomic_load(&spawned), atomic_load(&ended_ok), atomic_load(&ended_err),
	      atomic_load(&dropped));
	/* The runtime counted the same spawns: ours and the roots'. */
	CHECK(!rt || (long)st.total_spawned == atomic_load(&spawned) + atomic_load(&roots),
	      "the runtime counted %" PRIu64 " spawns; %ld tasks and %ld roots were spawned",
	      st.total_spawned, atomic_load(&spawned), atomic_load(&roots));
	blitz_runtime_free(rt);
	return broken ? 1 : 0;
}
