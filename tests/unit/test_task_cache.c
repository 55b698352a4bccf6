// SPDX-License-Identifier: MIT
/*
 * test_task_cache.c - the caches of task blocks (core/sched/task_cache.h):
 * what is reused, the bounds of a worker's lists and of the runtime's
 * depot, the sizes that are not cached, a remote spawner's reuse.  One
 * worker, so that every spawn and every free of the tasks under test
 * happens on it, in an order the test knows; the counts are read by the
 * root task on that worker, before and after.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <blitz.h>
#include "../../core/sched/runtime.h"
#include "../../core/sched/task.h"
#include "../../core/sched/task_cache.h"
#include "../../core/sched/task_slab.h"
#include "suites.h"

#define CHAIN_LEN	100
#define BURST		(4 * TASK_CACHE_BLOCKS)

static struct blitz_runtime *rt;

static void setup(void)
{
	rt = test_runtime(1);
}

static void teardown(void)
{
	blitz_runtime_free(rt);
}

/*
 * The calling worker's cache counters; @bad counts a poll that is not on a
 * worker (the tests' counts hold only there; asserted by the test thread).
 */
static void counts(struct blitz_cx *cx, uint64_t *hits, uint64_t *misses, int *bad)
{
	struct blitz_worker_stats s = { 0 };

	if (blitz_cx_worker(cx) < 0 || blitz_worker_stats(rt, (unsigned)blitz_cx_worker(cx), &s))
		(*bad)++;
	*hits = s.task_cache_hits;
	*misses = s.task_cache_misses;
}

/*
 * A chain: each link spawns the next and ends, so from the third link on
 * every spawn finds the block of the link before last.  Links alternate
 * between two state sizes of one class, and each checks that its state
 * arrived whole in a reused block.
 */
struct link {
	struct blitz_oneshot *done;
	int *bad;
	int n;
	uint32_t pattern;
	unsigned char tail[8];		/* the odd links' state has all of it, the even ones' half */
};

#define SHORT_LINK	(offsetof(struct link, tail) + 4)
#define CLASS(state)	((TASK_BYTES(state) + 8 + 15) / 16)

_Static_assert(sizeof(struct link) > SHORT_LINK && CLASS(sizeof(struct link)) == CLASS(SHORT_LINK),
	       "the two link sizes share a class (task_cache.c: 16-byte steps)");
_Static_assert(TASK_BYTES(sizeof(struct link)) <= TASK_CACHE_MAX_BYTES,
	       "a link is cached");

static enum blitz_poll link_poll(void *arg, struct blitz_cx *cx);
static const struct blitz_task_vtable link_vt = BLITZ_TASK_VTABLE(link_poll, NULL);

static enum blitz_poll link_poll(void *arg, struct blitz_cx *cx)
{
	struct link *s = arg;
	struct link next = { s->done, s->bad, s->n - 1, (uint32_t)(s->n - 1) * 2654435761u, { 0 } };

	if (s->pattern != (uint32_t)s->n * 2654435761u)
		(*s->bad)++;
	if (s->n == 0) {
		blitz_oneshot_send(s->done, 1);
		return BLITZ_READY;
	}
	/* Two sizes in one class: the block of one serves the other. */
	if (blitz_spawn_detached(NULL, &link_vt, &next, next.n % 2 ? sizeof(next) : SHORT_LINK))
		(*s->bad)++;
	return BLITZ_READY;
}

struct chain_root {
	struct blitz_co co;
	struct blitz_oneshot done;
	int bad;
	uint64_t hits0, misses0, hits, misses;
};

static enum blitz_poll chain_root_poll(void *arg, struct blitz_cx *cx)
{
	struct chain_root *r = arg;
	uint64_t v;
	int err;

	BLITZ_CO_BEGIN(&r->co);
	blitz_oneshot_init(&r->done);
	counts(cx, &r->hits0, &r->misses0, &r->bad);
	{
		struct link first = { &r->done, &r->bad, CHAIN_LEN - 1,
				      (uint32_t)(CHAIN_LEN - 1) * 2654435761u, { 0 } };

		if (blitz_spawn_detached(NULL, &link_vt, &first, sizeof(first)))
			r->bad++;
	}
	BLITZ_AWAIT(&r->co, blitz_oneshot_recv_poll(&r->done, cx, &v, &err));
	counts(cx, &r->hits, &r->misses, &r->bad);
	BLITZ_CO_END(&r->co);
}
static const struct blitz_task_vtable chain_root_vt = BLITZ_TASK_VTABLE(chain_root_poll, NULL);

START_TEST(a_chain_reuses_the_block_of_the_link_before_last)
{
	struct chain_root r = { 0 };

	ck_assert_int_eq(blitz_block_on(rt, &chain_root_vt, &r, sizeof(r)), 0);
	ck_assert_int_eq(r.bad, 0);
	/* Links 0 and 1 find the cache empty; link k >= 2 reuses link k - 2's block. */
	ck_assert_uint_eq(r.misses - r.misses0, 2);
	ck_assert_uint_eq(r.hits - r.hits0, CHAIN_LEN - 2);
}
END_TEST

/* A burst: tasks that only count down; all are spawned before any runs. */
struct burst_task {
	_Atomic int *left;
	struct blitz_oneshot *done;
	char pad[TASK_CACHE_MAX_BYTES];	/* used by the uncached burst only */
};

static enum blitz_poll burst_poll(void *arg, struct blitz_cx *cx)
{
	struct burst_task *s = arg;

	if (atomic_fetch_sub_explicit(s->left, 1, memory_order_acq_rel) == 1)
		blitz_oneshot_send(s->done, 1);
	return BLITZ_READY;
}
static const struct blitz_task_vtable burst_vt = BLITZ_TASK_VTABLE(burst_poll, NULL);

struct burst_root {
	struct blitz_co co;
	struct blitz_oneshot done;
	_Atomic int left;
	size_t size;			/* the tasks' state size */
	int n;				/* tasks per round */
	int round, bad;
	uint64_t hits[3], misses[3];	/* before round 0, after round 0, after round 1 */
};

static enum blitz_poll burst_root_poll(void *arg, struct blitz_cx *cx)
{
	struct burst_root *r = arg;
	uint64_t v;
	int err;

	BLITZ_CO_BEGIN(&r->co);
	counts(cx, &r->hits[0], &r->misses[0], &r->bad);
	for (r->round = 0; r->round < 2; r->round++) {
		blitz_oneshot_init(&r->done);
		atomic_store(&r->left, r->n);
		for (int i = 0; i < r->n; i++) {
			struct burst_task t = { &r->left, &r->done, { 0 } };

			if (blitz_spawn_detached(NULL, &burst_vt, &t, r->size))
				r->bad++;
		}
		/* The last task wakes us before it ends; on one worker it ends before we run. */
		BLITZ_AWAIT(&r->co, blitz_oneshot_recv_poll(&r->done, cx, &v, &err));
		counts(cx, &r->hits[r->round + 1], &r->misses[r->round + 1], &r->bad);
	}
	BLITZ_CO_END(&r->co);
}
static const struct blitz_task_vtable burst_root_vt = BLITZ_TASK_VTABLE(burst_root_poll, NULL);

/*
 * A burst beyond the worker's bound: round 0 starts empty and mallocs
 * every block; its frees fill the worker's lists to TASK_CACHE_BLOCKS and
 * put the rest in the depot; round 1 takes the lists, then the whole
 * depot at its first miss: every spawn a hit.
 */
START_TEST(a_burst_beyond_the_bound_comes_back_from_the_depot)
{
	struct burst_root r = { .size = offsetof(struct burst_task, pad), .n = BURST };

	ck_assert_int_eq(blitz_block_on(rt, &burst_root_vt, &r, sizeof(r)), 0);
	ck_assert_int_eq(r.bad, 0);
	ck_assert_uint_eq(r.hits[1] - r.hits[0], 0);
	ck_assert_uint_eq(r.misses[1] - r.misses[0], BURST);
	ck_assert_uint_eq(r.hits[2] - r.hits[1], BURST);
	ck_assert_uint_eq(r.misses[2] - r.misses[1], 0);
}
END_TEST

/*
 * The depot holds at most task_depot_max() blocks of a class, taken from
 * a worker TASK_DEPOT_BATCH at a time: a burst of the worker's bound, the
 * depot's and 100 more puts every full batch that fits in the depot,
 * frees the batches that do not, and leaves the last partial batch in the
 * worker's outbox; the next burst takes the lists, the outbox, the depot,
 * and mallocs the rest.
 */
START_TEST(the_depot_keeps_at_most_its_bound)
{
	size_t size = offsetof(struct burst_task, pad);
	uint32_t max = task_depot_max(TASK_BYTES(size));
	uint32_t over = max + 100;			/* beyond the worker's lists */
	uint32_t batches = over / TASK_DEPOT_BATCH;
	uint32_t kept = max / TASK_DEPOT_BATCH < batches ? max / TASK_DEPOT_BATCH : batches;
	uint64_t hits = TASK_CACHE_BLOCKS + over % TASK_DEPOT_BATCH + (uint64_t)kept * TASK_DEPOT_BATCH;
	struct burst_root r = { .size = size, .n = (int)(TASK_CACHE_BLOCKS + over) };

	ck_assert_uint_gt(max, TASK_CACHE_BLOCKS);
	ck_assert_uint_gt(batches, max / TASK_DEPOT_BATCH);	/* some batch finds it full */
	ck_assert_int_eq(blitz_block_on(rt, &burst_root_vt, &r, sizeof(r)), 0);
	ck_assert_int_eq(r.bad, 0);
	ck_assert_uint_eq(r.misses[1] - r.misses[0], (uint64_t)r.n);
	ck_assert_uint_eq(r.hits[2] - r.hits[1], hits);
	ck_assert_uint_eq(r.misses[2] - r.misses[1], (uint64_t)r.n - hits);
}
END_TEST

START_TEST(a_large_task_is_not_cached)
{
	struct burst_root r = { .size = sizeof(struct burst_task), .n = BURST };

	ck_assert_uint_gt(TASK_BYTES(r.size), TASK_CACHE_MAX_BYTES);
	ck_assert_int_eq(blitz_block_on(rt, &burst_root_vt, &r, sizeof(r)), 0);
	ck_assert_int_eq(r.bad, 0);
	ck_assert_uint_eq(r.hits[2], r.hits[0]);
	ck_assert_uint_eq(r.misses[2], r.misses[0]);
}
END_TEST

/* A detached task that counts itself done. */
static _Atomic int remote_done;

static enum blitz_poll remote_poll(void *arg, struct blitz_cx *cx)
{
	atomic_fetch_add_explicit(&remote_done, 1, memory_order_relaxed);
	return BLITZ_READY;
}
static const struct blitz_task_vtable remote_vt = BLITZ_TASK_VTABLE(remote_poll, NULL);

/* Until the depot holds @n blocks of @bytes' class (a minute at most). */
static void wait_depot(struct blitz_runtime *r, size_t bytes, uint32_t n)
{
	for (int i = 0; i < 60000 && task_depot_blocks(&r->depot, bytes) != n; i++)
		usleep(1000);
	ck_assert_uint_eq(task_depot_blocks(&r->depot, bytes), n);
}

/* A task (of another class than remote_vt's) that keeps its worker until released. */
struct hold {
	_Atomic int *release;
	char pad[200];
};

static enum blitz_poll hold_poll(void *arg, struct blitz_cx *cx)
{
	struct hold *s = arg;

	while (!atomic_load_explicit(s->release, memory_order_acquire))
		usleep(100);
	return BLITZ_READY;
}
static const struct blitz_task_vtable hold_vt = BLITZ_TASK_VTABLE(hold_poll, NULL);

/*
 * A remote burst (spawned by this thread, not a worker, while the worker
 * is held, so that no block comes back during it): the worker then frees
 * each task, keeping TASK_CACHE_BLOCKS and putting the rest in the depot;
 * this thread's next spawn takes the whole depot, and the spawns after it
 * come from this thread's own lists (the depot stays empty).  The held
 * task's handle is ours, released after the burst is counted, so its
 * block is not freed on the worker before that (the worker's drain of
 * the outside tasks it completed, owned.h, drops only the scheduler's
 * reference): the worker's lists hold the burst's blocks only, and the
 * depot's count reaches BURST - TASK_CACHE_BLOCKS with the burst's last
 * free, not before.  Assumes Check's fork mode (a fresh process, so this
 * thread's lists start empty).
 */
START_TEST(a_remote_burst_comes_back_to_the_spawner)
{
	size_t bytes = TASK_BYTES(0);
	_Atomic int release = 0;
	struct hold hold = { &release, { 0 } };
	struct blitz_task *held, *h[3];

	atomic_store(&remote_done, 0);
	ck_assert_ptr_nonnull(held = blitz_spawn(rt, &hold_vt, &hold, sizeof(hold)));
	for (int i = 0; i < BURST; i++)
		ck_assert_int_eq(blitz_spawn_detached(rt, &remote_vt, NULL, 0), 0);
	ck_assert_uint_eq(task_depot_blocks(&rt->depot, bytes), 0);
	atomic_store_explicit(&release, 1, memory_order_release);
	wait_depot(rt, bytes, BURST - TASK_CACHE_BLOCKS);
	ck_assert_int_eq(atomic_load(&remote_done), BURST);
	ck_assert_int_eq(blitz_join(held), 0);
	blitz_task_release(held);
	/*
	 * Handles: ours until after the depot assertions, so no block of theirs
	 * is freed before them (the worker's drain, owned.h, drops only the
	 * scheduler's reference).
	 */
	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(h[i] = blitz_spawn(rt, &remote_vt, NULL, 0));
		ck_assert_uint_eq(task_depot_blocks(&rt->depot, bytes), 0);
	}
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(blitz_join(h[i]), 0);
		blitz_task_release(h[i]);
	}
	ck_assert_int_eq(atomic_load(&remote_done), BURST + 3);
}
END_TEST

/*
 * A thread whose lists were given back at its exit (the key's destructor)
 * and that frees or spawns again, as a later destructor may: malloc and
 * free from then on, nothing kept on lists nobody will empty.  Run on a
 * thread of its own; the destructor is called directly, as glibc would.
 */
static void *after_exit(void *arg)
{
	struct blitz_runtime *r = arg;
	struct blitz_task *t = blitz_spawn(r, &remote_vt, NULL, 0);

	if (!t || blitz_join(t))
		return (void *)1;
	blitz_task_release(t);		/* onto this thread's list */
	task_cache_thread_exit();	/* what the key's destructor does */
	t = blitz_spawn(r, &remote_vt, NULL, 0);
	if (!t || blitz_join(t))
		return (void *)1;
	blitz_task_release(t);		/* to free(): the lists are gone */
	return task_cache_thread_blocks() == 0 ? NULL : (void *)2;
}

START_TEST(a_thread_past_its_exit_keeps_nothing)
{
	pthread_t th;
	void *ret;

	ck_assert_int_eq(pthread_create(&th, NULL, after_exit, rt), 0);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_ptr_null(ret);
}
END_TEST

/*
 * Threads that are not workers spawn bursts into two workers, and free
 * some tasks themselves (handles): every task runs once, and (under the
 * sanitizers, which CI runs this under) no block is used after its free,
 * leaked or raced on, through the depot's pushes and whole takes and the
 * threads' lists given back at their exit.
 */
enum { SPAWNERS = 3, ROUNDS = 40, PER_ROUND = 600 };

static void *spawner(void *arg)
{
	struct blitz_runtime *r = arg;

	for (int round = 0; round < ROUNDS; round++) {
		struct blitz_task *h[PER_ROUND / 8];

		for (int i = 0; i < PER_ROUND; i++) {
			if (i % 8 == 0)
				h[i / 8] = blitz_spawn(r, &remote_vt, NULL, 0);
			else if (blitz_spawn_detached(r, &remote_vt, NULL, 0))
				return (void *)1;
		}
		for (int i = 0; i < PER_ROUND / 8; i++) {
			if (!h[i] || blitz_join(h[i]))
				return (void *)1;
			blitz_task_release(h[i]);
		}
	}
	return NULL;
}

START_TEST(remote_spawners_share_the_depot)
{
	struct blitz_runtime *r2 = test_runtime(2);
	pthread_t th[SPAWNERS];

	atomic_store(&remote_done, 0);
	for (int i = 0; i < SPAWNERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, spawner, r2), 0);
	for (int i = 0; i < SPAWNERS; i++) {
		void *ret;

		ck_assert_int_eq(pthread_join(th[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	ck_assert_int_eq(blitz_runtime_drain(r2, 60ull * 1000000000), 0);
	ck_assert_int_eq(atomic_load(&remote_done), SPAWNERS * ROUNDS * PER_ROUND);
	blitz_runtime_free(r2);
}
END_TEST

/*
 * Every cacheable task's block starts a cache line and shares none with
 * another block, whatever the state's size, and lies inside one slab past
 * its header line: two tasks never write one line.
 */
enum { SIZES = 6, PER_SIZE = 300 };
static const size_t state_sizes[SIZES] = { 0, 8, 24, 100, 300, TASK_CACHE_MAX_BYTES - TASK_BYTES(0) };

struct placed {
	uintptr_t at;
	size_t bytes;
};

static int by_address(const void *a, const void *b)
{
	uintptr_t x = ((const struct placed *)a)->at, y = ((const struct placed *)b)->at;

	return x < y ? -1 : x > y;
}

START_TEST(every_block_has_lines_of_its_own)
{
	static struct placed p[SIZES * PER_SIZE];
	static struct blitz_task *t[SIZES * PER_SIZE];
	static unsigned char state[TASK_CACHE_MAX_BYTES];
	int n = 0;

	for (int k = 0; k < SIZES; k++) {
		for (int i = 0; i < PER_SIZE; i++, n++) {
			t[n] = blitz_spawn(rt, &test_nothing_vt, state, state_sizes[k]);
			ck_assert_ptr_nonnull(t[n]);
			p[n].at = (uintptr_t)t[n];
			p[n].bytes = TASK_BLOCK_BYTES(TASK_BYTES(state_sizes[k]));
		}
	}
	qsort(p, (size_t)n, sizeof(p[0]), by_address);
	for (int i = 0; i < n; i++) {
		uintptr_t slab = p[i].at & ~(uintptr_t)(TASK_SLAB_BYTES - 1);

		ck_assert_uint_eq(p[i].at % TASK_BLOCK_ALIGN, 0);
		ck_assert_uint_ge(p[i].at, slab + TASK_BLOCK_ALIGN);
		ck_assert_uint_le(p[i].at + p[i].bytes, slab + TASK_SLAB_BYTES);
		if (i + 1 < n)
			ck_assert_uint_le(p[i].at + p[i].bytes, p[i + 1].at);
	}
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(blitz_join(t[i]), 0);
		blitz_task_release(t[i]);
	}
}
END_TEST

/*
 * A task's cold part (task.h) lies inside its class's bytes, past its
 * state; the header and a state of at most 16 bytes share the block's
 * first line, all that a spawn, a poll and a free of an untraced task
 * touch.  A large task's cold part is in front of it.  Every size is
 * joined (the join's waker lives in the cold part) and checked for its
 * state's bytes after the join.
 */
START_TEST(the_cold_part_is_past_the_state)
{
	static const size_t sizes[] = { 0, 8, 16, 24, 40, 100, TASK_CACHE_MAX_BYTES - TASK_BYTES(0), 2000 };
	static unsigned char state[2000];

	for (size_t i = 0; i < sizeof(state); i++)
		state[i] = (unsigned char)(i * 7 + 1);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct blitz_task *t = blitz_spawn(rt, &test_nothing_vt, state, sizes[k]);
		char *cold, *user;

		ck_assert_ptr_nonnull(t);
		cold = (char *)task_cold(t);
		user = task_user(t);
		if (TASK_BYTES(sizes[k]) > TASK_CACHE_MAX_BYTES) {
			ck_assert_ptr_eq(cold + TASK_COLD_FRONT, (char *)t);
		} else {
			ck_assert_uint_eq((uintptr_t)t % TASK_BLOCK_ALIGN, 0);
			ck_assert_uint_ge((uintptr_t)cold, (uintptr_t)(user + sizes[k]));
			/* Within its class's bytes: 16-byte steps (task_cache.h). */
			ck_assert_uint_le(cold + sizeof(struct task_cold) - (char *)t,
					  TASK_BYTES(sizes[k]) + 15);
			if (sizes[k] <= 16)	/* what an untraced task touches: one line */
				ck_assert_uint_le(user + sizes[k] - (char *)t, TASK_BLOCK_ALIGN);
		}
		ck_assert_int_eq(blitz_join(t), 0);
		ck_assert_mem_eq(task_user(t), state, sizes[k]);
		blitz_task_release(t);
	}
}
END_TEST

/*
 * A burst that needs a hundred slabs and more: once the runtime is freed
 * and this thread's lists are given back, every slab but the one being
 * carved has gone back to malloc (LeakSanitizer checks the rest at exit).
 */
static void *burst_and_free(void *arg)
{
	enum { N = 20000 };
	static struct blitz_task *h[N];
	struct blitz_runtime *r = test_runtime(2);
	uint32_t before = task_slab_count(), peak;

	(void)arg;
	for (int i = 0; i < N; i++)
		if (!(h[i] = blitz_spawn(r, &test_nothing_vt, NULL, 0)))
			return (void *)1;
	peak = task_slab_count();
	for (int i = 0; i < N; i++) {
		if (blitz_join(h[i]))
			return (void *)2;
		blitz_task_release(h[i]);
	}
	blitz_runtime_free(r);
	task_cache_thread_exit();
	if (peak < before + N / (TASK_SLAB_BYTES / TASK_BLOCK_ALIGN))
		return (void *)3;	/* the burst did not carve what it needed */
	return task_slab_count() <= 1 ? NULL : (void *)4;
}

START_TEST(slabs_go_back_once_their_blocks_do)
{
	pthread_t th;
	void *ret;

	ck_assert_int_eq(pthread_create(&th, NULL, burst_and_free, NULL), 0);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_msg(ret == NULL, "burst_and_free: %d (slabs now %u)", (int)(intptr_t)ret,
		      task_slab_count());
}
END_TEST

/*
 * A fork while another thread carves: the child's first carve must not
 * wait for a lock held by a thread the child does not have.  The other
 * thread takes the carving lock back to back, so most forks land while
 * it is held; a child that hangs is killed after a generous hang guard.
 */
static _Atomic int carving_stop;

static void *carve_loop(void *arg)
{
	(void)arg;
	while (!atomic_load(&carving_stop)) {
		void *b = task_slab_alloc(128, 120);

		if (b)
			task_slab_free(b, 128);
	}
	return NULL;
}

START_TEST(a_fork_while_carving_leaves_the_child_able_to_carve)
{
	pthread_t th;
	int hung = 0;

	atomic_store(&carving_stop, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, carve_loop, NULL), 0);
	for (int i = 0; i < 100 && !hung; i++) {
		pid_t child = fork();
		int status = 0;

		ck_assert_int_ge(child, 0);
		if (child == 0)
			_exit(task_slab_alloc(128, 120) ? 0 : 1);
		/* Hang guard only: a child that is not stuck ends in microseconds. */
		for (int t = 0; t < 10000 * test_timeout_scale(); t++) {
			if (waitpid(child, &status, WNOHANG) == child)
				break;
			usleep(1000);
		}
		if (waitpid(child, &status, WNOHANG) == 0) {
			hung = 1;
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
		} else {
			ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		}
	}
	atomic_store(&carving_stop, 1);
	pthread_join(th, NULL);
	ck_assert_msg(!hung, "a child forked while another thread carved never carved");
}
END_TEST

static Suite *task_cache_suite(void)
{
	Suite *s = suite_create("task_cache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_chain_reuses_the_block_of_the_link_before_last);
	tcase_add_test(tc, a_burst_beyond_the_bound_comes_back_from_the_depot);
	tcase_add_test(tc, the_depot_keeps_at_most_its_bound);
	tcase_add_test(tc, a_large_task_is_not_cached);
	tcase_add_test(tc, a_remote_burst_comes_back_to_the_spawner);
	tcase_add_test(tc, a_thread_past_its_exit_keeps_nothing);
	tcase_add_test(tc, remote_spawners_share_the_depot);
	tcase_add_test(tc, every_block_has_lines_of_its_own);
	tcase_add_test(tc, the_cold_part_is_past_the_state);
	suite_add_tcase(s, tc);
	tc = TCASE("slabs", 60);	/* no fixture: the slabs are counted with no runtime left */
	tcase_add_test(tc, slabs_go_back_once_their_blocks_do);
	tcase_add_test(tc, a_fork_while_carving_leaves_the_child_able_to_carve);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("task_cache", task_cache_suite)
