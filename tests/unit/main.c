// SPDX-License-Identifier: MIT
/*
 * tests/unit/main.c - runs every suite and ends with Check's summary line.
 *
 *   blitz-tests            all suites
 *   blitz-tests NAME...    only these suites (each test file registers one)
 *
 * Exit status: 0 when every test passed (skips pass with a SKIP line).
 */
#include <dirent.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../core/sched/park.h"
#include "../../core/sched/runtime.h"
#include "suites.h"

double test_timeout_scale(void)
{
	/* Sanitizer builds run several times slower. */
	const char *s = getenv("BLITZ_TEST_TIMEOUT_SCALE");

	return s ? atof(s) : 1.0;
}

long test_scaled(long n)
{
	long m = test_timeout_scale() > 1 ? n / 10 : n;

	return m > 0 ? m : 1;
}

static enum blitz_poll nothing_poll(void *arg, struct blitz_cx *cx)
{
	(void)arg;
	(void)cx;
	return BLITZ_READY;
}
const struct blitz_task_vtable test_nothing_vt = BLITZ_TASK_VTABLE(nothing_poll, NULL);

/* thread_state - the state letter of this process's thread named @comm ('?': none). */
static char thread_state(const char *comm)
{
	char path[300], name[32], stat[256], state = '?';
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	ck_assert_ptr_nonnull(dir);
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		if (!(f = fopen(path, "r")))
			continue;	/* a thread that just exited */
		name[0] = 0;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, comm))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", d->d_name);
		if ((f = fopen(path, "r"))) {
			/* pid (comm) state ...: the state follows the last ')'. */
			if (fgets(stat, sizeof(stat), f) && strrchr(stat, ')'))
				state = strrchr(stat, ')')[2];
			fclose(f);
		}
	}
	closedir(dir);
	return state;
}

bool test_worker_asleep(struct blitz_runtime *rt, unsigned w)
{
	uint32_t s = atomic_load(&rt->workers[w].park.futex);
	char comm[32];

	if (s != PARK_PARKED && s != PARK_PARKED_IO)
		return false;
	snprintf(comm, sizeof(comm), "blitz-worker%u", w);
	return thread_state(comm) == 'S';
}

void test_wait_until_asleep(struct blitz_runtime *rt, unsigned w)
{
	for (int ms = 0; !test_worker_asleep(rt, w); ms++) {
		ck_assert_msg(ms < 10000 * test_timeout_scale(), "worker %u never slept", w);
		usleep(1000);
	}
}

int test_backend_count(void)
{
	int n = 0;

	while (test_backend_name(n))
		n++;
	return n;
}

/*
 * A runtime of @workers on @backend (BLITZ_BACKEND_AUTO: leave the
 * default) with io_uring's @rings.
 */
static struct blitz_runtime *runtime_of(unsigned workers, enum blitz_io_backend backend,
					enum blitz_io_uring_rings rings)
{
	struct blitz_config c;
	struct blitz_runtime *rt;

	blitz_config_default(&c);
	c.workers = workers;
	if (backend != BLITZ_BACKEND_AUTO)
		c.backend = backend;
	c.io_uring_rings = rings;
	rt = blitz_runtime_new(&c);
	ck_assert_ptr_nonnull(rt);
	return rt;
}

struct blitz_runtime *test_runtime_on(int i)
{
	return runtime_of(2, test_backend_kind(i), BLITZ_IO_URING_RINGS_WORKER);
}

struct blitz_runtime *test_runtime_one_ring(int i)
{
	return runtime_of(2, test_backend_kind(i), BLITZ_IO_URING_RINGS_SHARED);
}

struct blitz_runtime *test_runtime(unsigned workers)
{
	return runtime_of(workers, BLITZ_BACKEND_AUTO, BLITZ_IO_URING_RINGS_WORKER);
}

struct test_poller {
	blitz_poll_fn fn;
	void *arg;
};

static enum blitz_poll test_poller_poll(void *state, struct blitz_cx *cx)
{
	struct test_poller *p = state;

	return p->fn(p->arg, cx);
}
static const struct blitz_task_vtable test_poller_vt = BLITZ_TASK_VTABLE(test_poller_poll, NULL);

void test_run_poll(struct blitz_runtime *rt, blitz_poll_fn fn, void *arg)
{
	struct test_poller p = { fn, arg };

	ck_assert_int_eq(blitz_block_on(rt, &test_poller_vt, &p, sizeof(p)), 0);
}

int test_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#define MAX_SUITES 64
static struct {
	const char *name;
	Suite *(*make)(void);
} suites[MAX_SUITES];
static size_t nsuites;

void blitz_register_suite(const char *name, Suite *(*make)(void))
{
	if (nsuites == MAX_SUITES) {
		fprintf(stderr, "blitz-tests: more than %d suites\n", MAX_SUITES);
		exit(2);
	}
	suites[nsuites].name = name;
	suites[nsuites++].make = make;
}

/* Fixed order: the fast unit suites first, the shell scripts last. */
static int rank(const char *name)
{
	static const char *const order[] = { "config", "queue", "task", "runtime" };

	if (!strcmp(name, "scripts"))
		return 1000;
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, order[i]))
			return i;
	return 100;
}

static int by_rank(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int d = rank(x) - rank(y);

	return d ? d : strcmp(x, y);
}

int main(int argc, char **argv)
{
	SRunner *sr = NULL;
	int failed;

	qsort(suites, nsuites, sizeof(suites[0]), by_rank);
	for (size_t i = 0; i < nsuites; i++) {
		bool want = argc < 2;

		for (int a = 1; a < argc; a++)
			want |= !strcmp(argv[a], suites[i].name);
		if (!want)
			continue;
		if (!sr)
			sr = srunner_create(suites[i].make());
		else
			srunner_add_suite(sr, suites[i].make());
	}
	if (!sr) {
		fprintf(stderr, "blitz-tests: no such suite\n");
		return 2;
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
