// SPDX-License-Identifier: MIT
/*
 * test_fs.c - the filesystem module on each backend: byte-exact round
 * trips up to 100 MB (whole-file helpers and open/write_at/read), many
 * tasks reading and writing at once, directories, every error path with
 * its message, cancellation, and where each operation ran (io_uring's own
 * operations there, the blocking pool on epoll and poll).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <blitz.h>
#include "suites.h"

static struct blitz_runtime *rt;
static char dir[256];

/* path - a name in the test's directory (a few rotating buffers). */
static const char *path(const char *name)
{
	static char bufs[8][512];
	static int next;
	char *p = bufs[next++ % 8];

	snprintf(p, sizeof(bufs[0]), "%s/%s", dir, name);
	return p;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

/* Each test: a runtime on backend _i, a fresh directory; false to skip. */
static bool setup(int i)
{
	struct blitz_config c;
	const char *tmp = getenv("TMPDIR");

	blitz_config_default(&c);
	c.workers = 2;
	c.backend = test_backend_kind(i);
	rt = blitz_runtime_new(&c);
	ck_assert_ptr_nonnull(rt);
	if (strcmp(blitz_io_backend_name(rt), test_backend_name(i))) {
		blitz_runtime_free(rt);
		return false;
	}
	snprintf(dir, sizeof(dir), "%s/blitz-fs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return true;
}

static void teardown(void)
{
	blitz_runtime_free(rt);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	ck_assert_int_eq(access(dir, F_OK), -1);
}

#define SETUP_OR_SKIP() do {						\
		if (!setup(_i))						\
			SKIP("%s unavailable here", test_backend_name(_i));		\
	} while (0)

/* ---------------------------------------------------------------------- */
/* Running one operation from the test thread                              */

struct one {
	struct blitz_co co;
	struct blitz_fs_op op;
};

static enum blitz_poll one_poll(void *arg, struct blitz_cx *cx)
{
	struct one *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
	BLITZ_CO_END(&s->co);
}

static void one_drop(void *arg)
{
	blitz_fs_cancel(&((struct one *)arg)->op);
}

static const struct blitz_task_vtable one_vt = BLITZ_TASK_VTABLE(one_poll, one_drop);

/* run - await a prepared @op in a task; returns op->result. */
static int64_t run(struct blitz_fs_op *op)
{
	struct one s = { .op = *op };

	ck_assert_int_eq(blitz_block_on(rt, &one_vt, &s, sizeof(s)), 0);
	*op = s.op;
	return op->result;
}

static int64_t fs_write_file(const char *p, const void *data, size_t len)
{
	struct blitz_fs_op op;

	blitz_fs_prep_write_file(&op, p, data, len);
	return run(&op);
}

static int fs_open(const char *p, struct blitz_fs_open_options o)
{
	struct blitz_fs_op op;

	blitz_fs_prep_open(&op, p, &o);
	return (int)run(&op);
}

/* A reproducible pattern (xorshift64). */
static void fill(unsigned char *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++) {
		if (i % 8 == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		buf[i] = (unsigned char)(x >> (8 * (i % 8)));
	}
}

/* ---------------------------------------------------------------------- */
/* Round trips                                                             */

/* Whole-file helpers: write, stat, read back, compare. */
static void helper_round_trip(size_t len, uint64_t seed)
{
	unsigned char *data = malloc(len ? len : 1);
	struct blitz_fs_op op;
	struct statx stx;
	const char *p = path("round-trip");

	ck_assert_ptr_nonnull(data);
	fill(data, len, seed);
	ck_assert_int_eq(fs_write_file(p, data, len), (int64_t)len);
	blitz_fs_prep_stat(&op, p, &stx);
	ck_assert_int_eq(run(&op), 0);
	ck_assert_uint_eq(stx.stx_size, len);
	ck_assert(S_ISREG(stx.stx_mode));
	blitz_fs_prep_read_file(&op, p);
	ck_assert_int_eq(run(&op), (int64_t)len);
	ck_assert_uint_eq(op.size, len);
	ck_assert_msg(memcmp(op.data, data, len) == 0, "%zu bytes differ after the round trip", len);
	ck_assert_int_eq(((char *)op.data)[len], '\0');
	free(op.data);
	free(data);
}

/* open / write_at in chunks / fsync / close; open / read at the position. */
static void primitive_round_trip(size_t len, size_t chunk, uint64_t seed)
{
	unsigned char *data = malloc(len + 1), *back = malloc(len + chunk);
	struct blitz_fs_op op;
	const char *p = path("primitive");
	size_t got = 0;
	int fd;

	ck_assert(data && back);
	fill(data, len, seed);
	fd = fs_open(p, (struct blitz_fs_open_options){ .write = true, .create = true,
							.truncate = true, .mode = 0600 });
	ck_assert_int_ge(fd, 0);
	/* Back to front: every chunk at its offset. */
	for (size_t n = (len + chunk - 1) / chunk; n-- > 0;) {
		size_t at = n * chunk, sz = len - at < chunk ? len - at : chunk;

		blitz_fs_prep_write_at(&op, fd, data + at, sz, (off_t)at);
		ck_assert_int_eq(run(&op), (int64_t)sz);
	}
	blitz_fs_prep_fsync(&op, fd, false);
	ck_assert_int_eq(run(&op), 0);
	ck_assert_int_eq(close(fd), 0);
	fd = fs_open(p, (struct blitz_fs_open_options){ .read = true });
	ck_assert_int_ge(fd, 0);
	for (;;) {
		blitz_fs_prep_read(&op, fd, back + got, chunk);
		ck_assert_int_ge(run(&op), 0);
		if (op.result == 0)
			break;
		got += (size_t)op.result;
		ck_assert_uint_le(got, len);
	}
	ck_assert_uint_eq(got, len);
	ck_assert_msg(memcmp(back, data, len) == 0, "%zu bytes differ after the round trip", len);
	close(fd);
	free(back);
	free(data);
}

START_TEST(round_trips_small_to_megabytes)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 65536 + 3, (1 << 20) + 7, 5 << 20 };

	SETUP_OR_SKIP();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		helper_round_trip(sizes[i], i);
		if (sizes[i])
			primitive_round_trip(sizes[i], 64 * 1024 + 1, i + 100);
	}
	teardown();
}
END_TEST

START_TEST(round_trip_100_megabytes)
{
	SETUP_OR_SKIP();
	helper_round_trip(100u << 20, 42);
	primitive_round_trip(100u << 20, 4u << 20, 43);
	teardown();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Many tasks at once                                                      */

#define NTASKS 32
#define CHUNKS 32
#define CHUNK 4096

static unsigned char shared_data[CHUNKS * CHUNK];

/*
 * Each task writes its own file chunk by chunk (write_at, in a scrambled
 * order), syncs it, reads it back (read_at, another order) and also reads
 * the shared file, checking every byte.
 */
struct worker {
	struct blitz_co co;
	struct blitz_fs_op op;
	int id, fd, shared_fd, k, c;
	int64_t bad;
	char name[512];
	unsigned char mine[CHUNKS * CHUNK];
	unsigned char buf[CHUNK];
};

static enum blitz_poll worker_poll(void *arg, struct blitz_cx *cx)
{
	struct worker *s = arg;
	static const struct blitz_fs_open_options rw = { .read = true, .write = true,
							 .create = true, .truncate = true };

	BLITZ_CO_BEGIN(&s->co);
	fill(s->mine, sizeof(s->mine), 1000 + (uint64_t)s->id);
	blitz_fs_prep_open(&s->op, s->name, &rw);
	BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
	if ((s->fd = (int)s->op.result) < 0) {
		s->bad++;
		goto out;
	}
	for (s->k = 0; s->k < CHUNKS; s->k++) {
		s->c = (s->k * 7 + s->id) % CHUNKS;
		blitz_fs_prep_write_at(&s->op, s->fd, s->mine + s->c * CHUNK, CHUNK, (off_t)s->c * CHUNK);
		BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
		s->bad += s->op.result != CHUNK;
	}
	blitz_fs_prep_fsync(&s->op, s->fd, true);
	BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
	s->bad += s->op.result != 0;
	for (s->k = 0; s->k < CHUNKS; s->k++) {
		s->c = (s->k * 13 + s->id) % CHUNKS;
		blitz_fs_prep_read_at(&s->op, s->fd, s->buf, CHUNK, (off_t)s->c * CHUNK);
		BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
		s->bad += s->op.result != CHUNK || memcmp(s->buf, s->mine + s->c * CHUNK, CHUNK);
		s->c = (s->k * 5 + s->id) % CHUNKS;
		blitz_fs_prep_read_at(&s->op, s->shared_fd, s->buf, CHUNK, (off_t)s->c * CHUNK);
		BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
		s->bad += s->op.result != CHUNK || memcmp(s->buf, shared_data + s->c * CHUNK, CHUNK);
	}
	close(s->fd);
out:
	BLITZ_CO_END(&s->co);
}

static void worker_drop(void *arg)
{
	blitz_fs_cancel(&((struct worker *)arg)->op);
}

static const struct blitz_task_vtable worker_vt = BLITZ_TASK_VTABLE(worker_poll, worker_drop);

START_TEST(many_tasks_read_and_write_at_once)
{
	struct blitz_task *t[NTASKS];
	struct worker *w = calloc(1, sizeof(*w));
	int shared_fd;

	SETUP_OR_SKIP();
	ck_assert_ptr_nonnull(w);
	fill(shared_data, sizeof(shared_data), 7);
	ck_assert_int_eq(fs_write_file(path("shared"), shared_data, sizeof(shared_data)),
			 (int64_t)sizeof(shared_data));
	shared_fd = fs_open(path("shared"), (struct blitz_fs_open_options){ .read = true });
	ck_assert_int_ge(shared_fd, 0);
	for (int i = 0; i < NTASKS; i++) {
		w->id = i;
		w->shared_fd = shared_fd;
		snprintf(w->name, sizeof(w->name), "%s/file-%d", dir, i);
		t[i] = blitz_spawn(rt, &worker_vt, w, sizeof(*w));
		ck_assert_ptr_nonnull(t[i]);
	}
	for (int i = 0; i < NTASKS; i++) {
		ck_assert_int_eq(blitz_join(t[i]), 0);
		ck_assert_int_eq(((struct worker *)blitz_task_state(t[i]))->bad, 0);
		blitz_task_release(t[i]);
	}
	close(shared_fd);
	free(w);
	teardown();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Directories                                                             */

static void expect_dir(const char *p, const char *want, const unsigned char *types)
{
	struct blitz_fs_dir d;
	struct blitz_fs_op op;
	char got[256] = "";

	blitz_fs_prep_readdir(&op, p, &d);
	ck_assert_int_ge(run(&op), 0);
	ck_assert_int_eq(op.result, (int64_t)d.count);
	for (size_t i = 0; i < d.count; i++) {
		strcat(got, i ? " " : "");
		strcat(got, d.entries[i].name);
		if (types)
			ck_assert_int_eq(d.entries[i].type, types[i]);
		ck_assert_uint_ne(d.entries[i].ino, 0);
	}
	ck_assert_str_eq(got, want);
	blitz_fs_dir_free(&d);
}

START_TEST(directories_rename_unlink)
{
	struct blitz_fs_op op;
	struct statx stx;
	static const unsigned char types[] = { DT_REG, DT_REG, DT_DIR };

	SETUP_OR_SKIP();
	blitz_fs_prep_mkdir(&op, path("d"), 0755);
	ck_assert_int_eq(run(&op), 0);
	blitz_fs_prep_mkdir(&op, path("d"), 0755);
	ck_assert_int_eq(run(&op), -EEXIST);
	expect_dir(path("d"), "", NULL);
	ck_assert_int_eq(fs_write_file(path("d/b"), "bee", 3), 3);
	ck_assert_int_eq(fs_write_file(path("d/a"), "a", 1), 1);
	blitz_fs_prep_mkdir(&op, path("d/c"), 0700);
	ck_assert_int_eq(run(&op), 0);
	expect_dir(path("d"), "a b c", types);
	blitz_fs_prep_stat(&op, path("d/c"), &stx);
	ck_assert_int_eq(run(&op), 0);
	ck_assert(S_ISDIR(stx.stx_mode));
	ck_assert_int_eq(stx.stx_mode & 0077, 0);	/* 0700, less the umask */

	blitz_fs_prep_rename(&op, path("d/a"), path("d/z"));
	ck_assert_int_eq(run(&op), 0);
	blitz_fs_prep_stat(&op, path("d/a"), &stx);
	ck_assert_int_eq(run(&op), -ENOENT);
	blitz_fs_prep_stat(&op, path("d/z"), &stx);
	ck_assert_int_eq(run(&op), 0);
	ck_assert_uint_eq(stx.stx_size, 1);
	expect_dir(path("d"), "b c z", NULL);

	blitz_fs_prep_rmdir(&op, path("d"));
	ck_assert_int_eq(run(&op), -ENOTEMPTY);
	blitz_fs_prep_unlink(&op, path("d/z"));
	ck_assert_int_eq(run(&op), 0);
	blitz_fs_prep_unlink(&op, path("d/b"));
	ck_assert_int_eq(run(&op), 0);
	blitz_fs_prep_rmdir(&op, path("d/c"));
	ck_assert_int_eq(run(&op), 0);
	expect_dir(path("d"), "", NULL);
	blitz_fs_prep_rmdir(&op, path("d"));
	ck_assert_int_eq(run(&op), 0);
	expect_dir(dir, "", NULL);
	teardown();
}
END_TEST

START_TEST(open_options_and_positions)
{
	struct blitz_fs_op op;
	char buf[16] = "";
	int fd;

	SETUP_OR_SKIP();
	/* create_new refuses an existing file. */
	fd = fs_open(path("f"), (struct blitz_fs_open_options){ .write = true, .create_new = true });
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(fs_open(path("f"), (struct blitz_fs_open_options){ .write = true,
									  .create_new = true }), -EEXIST);
	/* Contradictory options never reach the kernel. */
	ck_assert_int_eq(fs_open(path("f"), (struct blitz_fs_open_options){ .truncate = true,
									  .read = true }), -EINVAL);
	ck_assert_int_eq(fs_open(path("f"), (struct blitz_fs_open_options){ 0 }), -EINVAL);
	/* Append: every write lands at the end; reads follow the position. */
	fd = fs_open(path("f"), (struct blitz_fs_open_options){ .append = true });
	ck_assert_int_ge(fd, 0);
	blitz_fs_prep_write(&op, fd, "abc", 3);
	ck_assert_int_eq(run(&op), 3);
	blitz_fs_prep_write(&op, fd, "def", 3);
	ck_assert_int_eq(run(&op), 3);
	close(fd);
	fd = fs_open(path("f"), (struct blitz_fs_open_options){ .read = true });
	blitz_fs_prep_read(&op, fd, buf, 2);
	ck_assert_int_eq(run(&op), 2);
	blitz_fs_prep_read(&op, fd, buf + 2, sizeof(buf) - 3);
	ck_assert_int_eq(run(&op), 4);
	ck_assert_str_eq(buf, "abcdef");
	blitz_fs_prep_read_at(&op, fd, buf, 3, 3);	/* the position stays at 6 */
	ck_assert_int_eq(run(&op), 3);
	ck_assert_int_eq(memcmp(buf, "def", 3), 0);
	blitz_fs_prep_read(&op, fd, buf, 3);
	ck_assert_int_eq(run(&op), 0);
	blitz_fs_prep_read_at(&op, fd, buf, 3, -1);
	ck_assert_int_eq(run(&op), -EINVAL);
	close(fd);
	teardown();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Errors                                                                  */

/* expect_error - @op fails with @err and its message is exactly @msg. */
static void expect_error(struct blitz_fs_op *op, int err, const char *msg)
{
	char got[1024];

	ck_assert_msg(run(op) == -err, "%s: got %lld", msg, (long long)op->result);
	ck_assert_str_eq(blitz_fs_strerror(op, got, sizeof(got)), msg);
}

static __attribute__((format(printf, 1, 2))) char *msgf(const char *fmt, ...)
{
	static char bufs[2][1024];
	static int n;
	char *m = bufs[n++ % 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(bufs[0]), fmt, ap);
	va_end(ap);
	return m;
}

START_TEST(enoent_everywhere)
{
	struct blitz_fs_op op;
	struct blitz_fs_dir d;
	struct statx stx;
	const char *missing, *inside;

	SETUP_OR_SKIP();
	missing = path("missing");
	inside = path("missing/x");
	blitz_fs_prep_open_flags(&op, missing, O_RDONLY, 0);
	expect_error(&op, ENOENT, msgf("open %s: No such file or directory (ENOENT)", missing));
	blitz_fs_prep_stat(&op, missing, &stx);
	expect_error(&op, ENOENT, msgf("stat %s: No such file or directory (ENOENT)", missing));
	blitz_fs_prep_unlink(&op, missing);
	expect_error(&op, ENOENT, msgf("unlink %s: No such file or directory (ENOENT)", missing));
	blitz_fs_prep_rmdir(&op, missing);
	expect_error(&op, ENOENT, msgf("rmdir %s: No such file or directory (ENOENT)", missing));
	blitz_fs_prep_readdir(&op, missing, &d);
	expect_error(&op, ENOENT, msgf("readdir %s: No such file or directory (ENOENT)", missing));
	ck_assert_uint_eq(d.count, 0);
	blitz_fs_prep_read_file(&op, missing);
	expect_error(&op, ENOENT, msgf("open %s: No such file or directory (ENOENT)", missing));
	ck_assert_ptr_null(op.data);
	blitz_fs_prep_write_file(&op, inside, "x", 1);
	expect_error(&op, ENOENT, msgf("open %s: No such file or directory (ENOENT)", inside));
	blitz_fs_prep_mkdir(&op, inside, 0755);
	expect_error(&op, ENOENT, msgf("mkdir %s: No such file or directory (ENOENT)", inside));
	blitz_fs_prep_rename(&op, missing, inside);
	expect_error(&op, ENOENT, msgf("rename %s to %s: No such file or directory (ENOENT)",
				       missing, inside));
	teardown();
}
END_TEST

START_TEST(eisdir_enospc_ebadf)
{
	struct blitz_fs_op op;
	static char data[64 * 1024];
	char buf[8], msg[128];
	int fd;

	SETUP_OR_SKIP();
	blitz_fs_prep_read_file(&op, dir);
	expect_error(&op, EISDIR, msgf("read %s: Is a directory (EISDIR)", dir));
	ck_assert_ptr_null(op.data);
	blitz_fs_prep_open_flags(&op, dir, O_WRONLY, 0);
	expect_error(&op, EISDIR, msgf("open %s: Is a directory (EISDIR)", dir));
	blitz_fs_prep_write_file(&op, dir, "x", 1);
	expect_error(&op, EISDIR, msgf("open %s: Is a directory (EISDIR)", dir));
	/* /dev/full: every write fails with ENOSPC. */
	if (access("/dev/full", W_OK) == 0) {
		blitz_fs_prep_write_file(&op, "/dev/full", data, sizeof(data));
		expect_error(&op, ENOSPC, "write /dev/full: No space left on device (ENOSPC)");
		fd = fs_open("/dev/full", (struct blitz_fs_open_options){ .write = true });
		ck_assert_int_ge(fd, 0);
		blitz_fs_prep_write_at(&op, fd, data, 100, 0);
		op.path = "/dev/full";
		expect_error(&op, ENOSPC, "write /dev/full: No space left on device (ENOSPC)");
		blitz_fs_prep_write(&op, fd, data, 100);
		snprintf(msg, sizeof(msg), "write (fd %d): No space left on device (ENOSPC)", fd);
		expect_error(&op, ENOSPC, msg);
		close(fd);
	}
	blitz_fs_prep_read(&op, -1, buf, sizeof(buf));
	expect_error(&op, EBADF, "read (fd -1): Bad file descriptor (EBADF)");
	blitz_fs_prep_fsync(&op, -1, false);
	expect_error(&op, EBADF, "fsync (fd -1): Bad file descriptor (EBADF)");
	teardown();
}
END_TEST

/*
 * EACCES needs a user the permission checks apply to: as root, the test
 * takes the effective uid of nobody for the operations (glibc changes it in
 * every thread, the runtime's included) and takes root back afterwards.
 */
START_TEST(eacces)
{
	struct blitz_fs_op op;
	const char *locked, *inner;
	bool root = geteuid() == 0;
	int fd;

	SETUP_OR_SKIP();
	locked = path("locked");
	inner = path("locked/f");
	ck_assert_msg(mkdir(locked, 0700) == 0, "mkdir %s: %s", locked, strerror(errno));
	ck_assert_int_eq(fs_write_file(inner, "secret", 6), 6);
	ck_assert_int_eq(chmod(inner, 0), 0);
	ck_assert_int_eq(chmod(locked, root ? 0700 : 0500), 0);
	if (root && seteuid(65534) != 0) {
		teardown();
		SKIP("cannot take the uid of nobody");
	}
	fd = open(inner, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		if (root)
			ck_assert_int_eq(seteuid(0), 0);
		teardown();
		SKIP("permission checks do not apply to this user (capabilities?)");
	}
	blitz_fs_prep_read_file(&op, inner);
	expect_error(&op, EACCES, msgf("open %s: Permission denied (EACCES)", inner));
	blitz_fs_prep_unlink(&op, inner);
	expect_error(&op, EACCES, msgf("unlink %s: Permission denied (EACCES)", inner));
	blitz_fs_prep_write_file(&op, path("locked/new"), "x", 1);
	expect_error(&op, EACCES, msgf("open %s: Permission denied (EACCES)", path("locked/new")));
	if (root)
		ck_assert_int_eq(seteuid(0), 0);
	ck_assert_int_eq(chmod(locked, 0700), 0);
	teardown();
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Where operations run; cancellation                                      */

START_TEST(files_go_to_the_pool_on_readiness_backends)
{
	struct blitz_blocking_stats st;
	struct blitz_fs_op op;
	struct statx stx;
	char buf[4];
	int fd;

	SETUP_OR_SKIP();
	fd = fs_open(path("f"), (struct blitz_fs_open_options){ .read = true, .write = true,
								 .create = true });
	ck_assert_int_ge(fd, 0);
	blitz_fs_prep_write_at(&op, fd, "wxyz", 4, 0);
	ck_assert_int_eq(run(&op), 4);
	blitz_fs_prep_read_at(&op, fd, buf, 4, 0);
	ck_assert_int_eq(run(&op), 4);
	blitz_fs_prep_stat(&op, path("f"), &stx);
	ck_assert_int_eq(run(&op), 0);
	close(fd);
	blitz_blocking_stats(rt, &st);
	if (test_backend_kind(_i) == BLITZ_BACKEND_IO_URING)
		ck_assert_uint_eq(st.jobs_done, 0);	/* all io_uring's own */
	else
		ck_assert_uint_eq(st.jobs_done, 4);
	teardown();
}
END_TEST

START_TEST(cancelled_tasks_leak_nothing)
{
	static unsigned char data[1 << 20];
	struct blitz_task *t[40];
	struct blitz_fs_dir d[40];
	const char *big;

	SETUP_OR_SKIP();
	/*
	 * One path for every task: a cancelled pool job may still be reading
	 * it, and path() rewrites its buffers in turn.
	 */
	big = path("big");
	ck_assert_int_eq(fs_write_file(big, data, sizeof(data)), (int64_t)sizeof(data));
	/* Cancelled at once, a little later, or after completion. */
	for (int i = 0; i < 40; i++) {
		struct one s = { 0 };

		if (i % 2)
			blitz_fs_prep_read_file(&s.op, big);
		else
			blitz_fs_prep_readdir(&s.op, dir, &d[i]);
		t[i] = blitz_spawn(rt, &one_vt, &s, sizeof(s));
		ck_assert_ptr_nonnull(t[i]);
		if (i % 3 == 1)
			usleep(200);
		blitz_task_cancel(t[i]);
	}
	for (int i = 0; i < 40; i++) {
		struct one *s = blitz_task_state(t[i]);

		/*
		 * Once blitz_fs_poll() returned READY (delivered) the output is
		 * the task's.  (Not blitz_join() == 0: a cancel that lands after
		 * the task completed still makes blitz_task_cancelled() true.)
		 */
		blitz_join(t[i]);
		if (s->op.delivered) {
			if (i % 2)
				free(s->op.data);
			else
				blitz_fs_dir_free(&d[i]);
		}
		blitz_task_release(t[i]);
	}
	/* Shutdown waits for jobs still running; they free what they made. */
	teardown();
}
END_TEST

/*
 * Opens cancelled at once, a little later, or after completion: each
 * descriptor is the task's (delivered: closed here) or closed by the
 * runtime (the pool job or the completion that finds its task gone).
 * Counted outside the runtime's life, so that its own descriptors cancel.
 */
START_TEST(cancelled_opens_leak_no_descriptor)
{
	struct blitz_task *t[40];
	int before = test_open_fds();
	const char *f;

	SETUP_OR_SKIP();
	f = path("f");	/* one path: see cancelled_tasks_leak_nothing */
	ck_assert_int_eq(fs_write_file(f, "data", 4), 4);
	for (int i = 0; i < 40; i++) {
		struct one s = { 0 };

		blitz_fs_prep_open_flags(&s.op, f, O_RDONLY, 0);
		t[i] = blitz_spawn(rt, &one_vt, &s, sizeof(s));
		ck_assert_ptr_nonnull(t[i]);
		if (i % 3 == 1)
			usleep(200);
		blitz_task_cancel(t[i]);
	}
	for (int i = 0; i < 40; i++) {
		struct one *s = blitz_task_state(t[i]);

		blitz_join(t[i]);
		if (s->op.delivered && s->op.result >= 0)
			close((int)s->op.result);
		blitz_task_release(t[i]);
	}
	teardown();	/* shutdown waits for the jobs still running */
	ck_assert_int_eq(test_open_fds(), before);
}
END_TEST

static Suite *fs_suite(void)
{
	Suite *s = suite_create("fs");
	TCase *tc = TCASE("fs", 60);

	tcase_add_loop_test(tc, round_trips_small_to_megabytes, 0, 3);
	tcase_add_loop_test(tc, round_trip_100_megabytes, 0, 3);
	tcase_add_loop_test(tc, many_tasks_read_and_write_at_once, 0, 3);
	tcase_add_loop_test(tc, directories_rename_unlink, 0, 3);
	tcase_add_loop_test(tc, open_options_and_positions, 0, 3);
	tcase_add_loop_test(tc, enoent_everywhere, 0, 3);
	tcase_add_loop_test(tc, eisdir_enospc_ebadf, 0, 3);
	tcase_add_loop_test(tc, eacces, 0, 3);
	tcase_add_loop_test(tc, files_go_to_the_pool_on_readiness_backends, 0, 3);
	tcase_add_loop_test(tc, cancelled_tasks_leak_nothing, 0, 3);
	tcase_add_loop_test(tc, cancelled_opens_leak_no_descriptor, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

BLITZ_SUITE("fs", fs_suite)
