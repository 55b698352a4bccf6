// SPDX-License-Identifier: MIT
/*
 * core/io/fs.c - filesystem operations as awaitables (include/blitz/fs.h).
 *
 * Where an operation runs:
 *  - on a backend that can do files (IO_CAP_FILES: io_uring), the single
 *    operations are its own (the file opcodes of the I/O driver, and
 *    read/write at an offset or the file position);
 *  - elsewhere (epoll and poll) every operation is a job on the blocking
 *    pool (a readiness backend cannot wait for a regular file: it is
 *    always "ready", and the syscall would block the worker);
 *  - everywhere: readdir (io_uring has no getdents) and the whole-file
 *    helpers, which run as one job each (open, read or write until done,
 *    close), so that a task cancelled half-way never leaves a descriptor
 *    or a buffer behind: the job owns both until it hands them over.
 *
 * Handing over an output (read_file's data, readdir's entries, the
 * descriptor a pool job opened) to a task that may have been cancelled
 * meanwhile: op->claim goes from NONE to
 * HANDED (the job, after filling the output) or to ABANDONED (the task's
 * blitz_fs_cancel()), whichever comes first; the loser frees the output.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <blitz/fs.h>
#include "../fault.h"
#include "../sched/runtime.h"

enum fs_kind {
	FS_OPEN, FS_READ, FS_WRITE, FS_FSYNC, FS_STAT, FS_MKDIR, FS_READDIR,
	FS_RENAME, FS_UNLINK, FS_RMDIR, FS_READ_FILE, FS_WRITE_FILE,
	FS_CLOSE,	/* a step of the helpers, not an operation */
};

enum { VIA_NONE = 0, VIA_DRIVER = 1, VIA_POOL = 2, VIA_NOW = 3 };
enum { CLAIM_NONE = 0, CLAIM_ABANDONED = 1, CLAIM_HANDED = 2 };

/* The most one read or write asks for (Linux's own limit per call). */
#define FS_MAX_RW 0x7ffff000ul

static const char *const verbs[] = {
	[FS_OPEN] = "open", [FS_READ] = "read", [FS_WRITE] = "write",
	[FS_FSYNC] = "fsync", [FS_STAT] = "stat", [FS_MKDIR] = "mkdir",
	[FS_READDIR] = "readdir", [FS_RENAME] = "rename", [FS_UNLINK] = "unlink",
	[FS_RMDIR] = "rmdir", [FS_READ_FILE] = "read", [FS_WRITE_FILE] = "write",
	[FS_CLOSE] = "close",
};

/* ---------------------------------------------------------------------- */
/* Preparing                                                               */

static void prep(struct blitz_fs_op *op, enum fs_kind kind, const char *path)
{
	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)kind;
	op->failed_step = (uint8_t)kind;
	op->path = path;
	op->fd = -1;
	op->off = -1;
	atomic_init(&op->claim, CLAIM_NONE);
}

int blitz_fs_open_flags(const struct blitz_fs_open_options *o)
{
	bool writes = o->write || o->append;
	int flags;

	if (!o->read && !writes)
		return -EINVAL;
	if ((o->truncate || o->create || o->create_new) && !writes)
		return -EINVAL;
	if (o->truncate && o->append)
		return -EINVAL;
	flags = o->read && writes ? O_RDWR : o->read ? O_RDONLY : O_WRONLY;
	if (o->append)
		flags |= O_APPEND;
	if (o->truncate)
		flags |= O_TRUNC;
	if (o->create_new)
		flags |= O_CREAT | O_EXCL;
	else if (o->create)
		flags |= O_CREAT;
	return flags | o->custom_flags | O_CLOEXEC;
}

void blitz_fs_prep_open_flags(struct blitz_fs_op *op, const char *path, int flags, unsigned mode)
{
	prep(op, FS_OPEN, path);
	op->flags = flags | O_CLOEXEC;
	op->mode = mode;
}

void blitz_fs_prep_open(struct blitz_fs_op *op, const char *path,
			const struct blitz_fs_open_options *opts)
{
	int flags = blitz_fs_open_flags(opts);

	blitz_fs_prep_open_flags(op, path, flags < 0 ? 0 : flags, opts->mode ? opts->mode : 0666);
	if (flags < 0) {
		op->via = VIA_NOW;	/* completes at the first poll */
		op->result = flags;
	}
}

static void prep_rw(struct blitz_fs_op *op, enum fs_kind kind, int fd, const void *buf,
		    size_t len, off_t off)
{
	prep(op, kind, NULL);
	op->fd = fd;
	op->buf = (void *)buf;
	op->len = len > FS_MAX_RW ? FS_MAX_RW : len;
	op->off = off;
}

void blitz_fs_prep_read(struct blitz_fs_op *op, int fd, void *buf, size_t len)
{
	prep_rw(op, FS_READ, fd, buf, len, -1);
}

void blitz_fs_prep_write(struct blitz_fs_op *op, int fd, const void *buf, size_t len)
{
	prep_rw(op, FS_WRITE, fd, buf, len, -1);
}

void blitz_fs_prep_read_at(struct blitz_fs_op *op, int fd, void *buf, size_t len, off_t off)
{
	prep_rw(op, FS_READ, fd, buf, len, off < 0 ? 0 : off);
	if (off < 0) {
		op->via = VIA_NOW;
		op->result = -EINVAL;
	}
}

void blitz_fs_prep_write_at(struct blitz_fs_op *op, int fd, const void *buf, size_t len, off_t off)
{
	prep_rw(op, FS_WRITE, fd, buf, len, off < 0 ? 0 : off);
	if (off < 0) {
		op->via = VIA_NOW;
		op->result = -EINVAL;
	}
}

void blitz_fs_prep_fsync(struct blitz_fs_op *op, int fd, bool datasync)
{
	prep(op, FS_FSYNC, NULL);
	op->fd = fd;
	op->flags = datasync;
}

void blitz_fs_prep_stat(struct blitz_fs_op *op, const char *path, struct statx *out)
{
	prep(op, FS_STAT, path);
	op->stx = out;
}

void blitz_fs_prep_mkdir(struct blitz_fs_op *op, const char *path, unsigned mode)
{
	prep(op, FS_MKDIR, path);
	op->mode = mode;
}

void blitz_fs_prep_readdir(struct blitz_fs_op *op, const char *path, struct blitz_fs_dir *out)
{
	prep(op, FS_READDIR, path);
	op->dir = out;
	out->count = 0;
	out->entries = NULL;
}

void blitz_fs_prep_rename(struct blitz_fs_op *op, const char *from, const char *to)
{
	prep(op, FS_RENAME, from);
	op->path2 = to;
}

void blitz_fs_prep_unlink(struct blitz_fs_op *op, const char *path)
{
	prep(op, FS_UNLINK, path);
}

void blitz_fs_prep_rmdir(struct blitz_fs_op *op, const char *path)
{
	prep(op, FS_RMDIR, path);
}

void blitz_fs_prep_read_file(struct blitz_fs_op *op, const char *path)
{
	prep(op, FS_READ_FILE, path);
}

void blitz_fs_prep_write_file(struct blitz_fs_op *op, const char *path, const void *data, size_t len)
{
	prep(op, FS_WRITE_FILE, path);
	op->buf = (void *)data;
	op->size = len;
}

/* ---------------------------------------------------------------------- */
/* Outputs nobody awaits                                                   */

void blitz_fs_dir_free(struct blitz_fs_dir *dir)
{
	if (!dir)
		return;
	for (size_t i = 0; i < dir->count; i++)
		free(dir->entries[i].name);
	free(dir->entries);
	dir->entries = NULL;
	dir->count = 0;
}

static void free_output(struct blitz_fs_op *op)
{
	if (op->kind == FS_OPEN) {
		close(op->fd);
		op->fd = -1;
	} else if (op->kind == FS_READDIR) {
		blitz_fs_dir_free(op->dir);
	} else if (op->kind == FS_READ_FILE) {
		free(op->data);
		op->data = NULL;
		op->size = 0;
	}
}

/* hand_over - the job's side: the output goes to the task, unless abandoned. */
static void hand_over(struct blitz_fs_op *op)
{
	uint32_t expect = CLAIM_NONE;

	/*
	 * acq_rel: release publishes the output to a canceller whose CAS
	 * fails on HANDED; acquire (on failure, via the failure order) pairs
	 * with the canceller's release of ABANDONED, after which the output is
	 * ours alone to free.
	 */
	if (!atomic_compare_exchange_strong_explicit(&op->claim, &expect, CLAIM_HANDED,
						     memory_order_acq_rel, memory_order_acquire))
		free_output(op);
}

/* ---------------------------------------------------------------------- */
/* On the blocking pool                                                    */

static int64_t neg_errno(long r)
{
	return r < 0 ? -(int64_t)errno : r;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct blitz_fs_dirent *)a)->name,
		      ((const struct blitz_fs_dirent *)b)->name);
}

static int64_t do_readdir(struct blitz_fs_op *op)
{
	struct blitz_fs_dir *out = op->dir;
	size_t cap = 0;
	struct dirent *d;
	DIR *dir = opendir(op->path);

	if (!dir)
		return -errno;
	errno = 0;
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (out->count == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			void *n = realloc(out->entries, ncap * sizeof(*out->entries));

			if (!n)
				goto nomem;
			out->entries = n;
			cap = ncap;
		}
		out->entries[out->count].name = strdup(d->d_name);
		if (!out->entries[out->count].name)
			goto nomem;
		out->entries[out->count].type = d->d_type;
		out->entries[out->count++].ino = d->d_ino;
	}
	if (errno) {
		int err = errno;

		closedir(dir);
		blitz_fs_dir_free(out);
		return -err;
	}
	closedir(dir);
	if (out->count)
		qsort(out->entries, out->count, sizeof(*out->entries), by_name);
	return (int64_t)out->count;
nomem:
	closedir(dir);
	blitz_fs_dir_free(out);
	return -ENOMEM;
}

/* fail - record the helper's failing step; returns -errno. */
static int64_t fail(struct blitz_fs_op *op, enum fs_kind step, int err)
{
	op->failed_step = (uint8_t)step;
	return -err;
}

static int64_t read_all(struct blitz_fs_op *op, int fd)
{
	struct stat st;
	size_t cap, got = 0;
	char *data;

	/* The size is a hint: files under /proc say 0 and still have data. */
	cap = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 4096;
	if (!(data = fault_malloc(FAULT_BUF_ALLOC, cap + 1)))
		return fail(op, FS_READ, ENOMEM);
	for (;;) {
		ssize_t r;

		if (got == cap) {
			char *n = realloc(data, 2 * cap + 1);

			if (!n) {
				free(data);
				return fail(op, FS_READ, ENOMEM);
			}
			data = n;
			cap *= 2;
		}
		r = read(fd, data + got, cap - got > FS_MAX_RW ? FS_MAX_RW : cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			free(data);
			return fail(op, FS_READ, err);
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	data[got] = '\0';
	op->data = data;
	op->size = got;
	return (int64_t)got;
}

static int64_t do_read_file(struct blitz_fs_op *op)
{
	int fd = open(op->path, O_RDONLY | O_CLOEXEC);
	int64_t r;

	if (fd < 0)
		return fail(op, FS_OPEN, errno);
	r = read_all(op, fd);
	close(fd);
	return r;
}

static int64_t do_write_file(struct blitz_fs_op *op)
{
	int fd = open(op->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	const char *p = op->buf;
	size_t left = op->size;

	if (fd < 0)
		return fail(op, FS_OPEN, errno);
	while (left) {
		ssize_t r = write(fd, p, left > FS_MAX_RW ? FS_MAX_RW : left);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			close(fd);
			return fail(op, FS_WRITE, err);
		}
		p += r;
		left -= (size_t)r;
	}
	if (close(fd) < 0)
		return fail(op, FS_CLOSE, errno);
	return (int64_t)op->size;
}

/* fs_job - the whole operation, blocking, on a pool thread. */
static int64_t fs_job(void *arg)
{
	struct blitz_fs_op *op = arg;
	int64_t r;

	switch (op->kind) {
	case FS_OPEN:
		/* The descriptor is an output: a task that went away has it closed. */
		if ((op->fd = open(op->path, op->flags, op->mode)) < 0)
			return -errno;
		r = op->fd;
		break;
	case FS_READ:
		return neg_errno(op->off < 0 ? read(op->fd, op->buf, op->len)
					     : pread(op->fd, op->buf, op->len, op->off));
	case FS_WRITE:
		return neg_errno(op->off < 0 ? write(op->fd, op->buf, op->len)
					     : pwrite(op->fd, op->buf, op->len, op->off));
	case FS_FSYNC:
		return neg_errno(op->flags ? fdatasync(op->fd) : fsync(op->fd));
	case FS_STAT:
		return neg_errno(statx(AT_FDCWD, op->path, 0, STATX_BASIC_STATS, op->stx));
	case FS_MKDIR:
		return neg_errno(mkdir(op->path, op->mode));
	case FS_RENAME:
		return neg_errno(rename(op->path, op->path2));
	case FS_UNLINK:
		return neg_errno(unlink(op->path));
	case FS_RMDIR:
		return neg_errno(rmdir(op->path));
	case FS_WRITE_FILE:
		return do_write_file(op);
	case FS_READDIR:
		r = do_readdir(op);
		break;
	case FS_READ_FILE:
		r = do_read_file(op);
		break;
	default:
		return -EINVAL;
	}
	if (r >= 0)
		hand_over(op);
	return r;
}

/* ---------------------------------------------------------------------- */
/* On the I/O driver (IO_CAP_FILES)                                       */

/* prep_io_op - the I/O driver's operation for @op; false if it has none. */
static bool prep_io_op(struct blitz_fs_op *op)
{
	struct blitz_io_op *io = &op->io;

	switch (op->kind) {
	case FS_OPEN:
		blitz_io_prep_openat(io, AT_FDCWD, op->path, op->flags, op->mode);
		return true;
	case FS_READ:
		blitz_io_prep_read(io, op->fd, op->buf, op->len, op->off);
		return true;
	case FS_WRITE:
		blitz_io_prep_write(io, op->fd, op->buf, op->len, op->off);
		return true;
	case FS_FSYNC:
		blitz_io_prep_fsync(io, op->fd, op->flags);
		return true;
	case FS_STAT:
		blitz_io_prep_statx(io, AT_FDCWD, op->path, 0, STATX_BASIC_STATS, op->stx);
		return true;
	case FS_MKDIR:
		blitz_io_prep_mkdirat(io, AT_FDCWD, op->path, op->mode);
		return true;
	case FS_RENAME:
		blitz_io_prep_renameat(io, AT_FDCWD, op->path, op->path2, 0);
		return true;
	case FS_UNLINK:
		blitz_io_prep_unlinkat(io, AT_FDCWD, op->path, 0);
		return true;
	case FS_RMDIR:
		blitz_io_prep_unlinkat(io, AT_FDCWD, op->path, AT_REMOVEDIR);
		return true;
	default:
		return false;	/* readdir, the whole-file helpers */
	}
}

/* ---------------------------------------------------------------------- */
/* Awaiting                                                                */

static void start(struct blitz_fs_op *op, struct blitz_cx *cx)
{
	struct blitz_runtime *rt = blitz_cx_runtime(cx);

	if (io_driver_can(&rt->io, IO_CAP_FILES) && prep_io_op(op)) {
		op->via = VIA_DRIVER;
		return;
	}
	op->via = VIA_POOL;
	blitz_blocking_init(&op->job, fs_job, op);
}

enum blitz_poll blitz_fs_poll(struct blitz_fs_op *op, struct blitz_cx *cx)
{
	if (op->via == VIA_NONE)
		start(op, cx);
	if (op->via == VIA_DRIVER) {
		if (blitz_io_poll(&op->io, cx) != BLITZ_READY)
			return BLITZ_PENDING;
		op->result = op->io.result;
	} else if (op->via == VIA_POOL) {
		if (blitz_blocking_poll(&op->job, cx) != BLITZ_READY)
			return BLITZ_PENDING;
		op->result = op->job.result;
	}
	op->delivered = 1;
	return BLITZ_READY;
}

void blitz_fs_cancel(struct blitz_fs_op *op)
{
	uint32_t expect = CLAIM_NONE;

	if (op->delivered)
		return;
	if (op->via == VIA_DRIVER) {
		blitz_io_cancel(&op->io);
		return;
	}
	if (op->via != VIA_POOL)
		return;
	blitz_blocking_cancel(&op->job);
	/* acq_rel: see hand_over(); on HANDED the output is ours to free. */
	if (!atomic_compare_exchange_strong_explicit(&op->claim, &expect, CLAIM_ABANDONED,
						     memory_order_acq_rel, memory_order_acquire))
		free_output(op);
}

/* ---------------------------------------------------------------------- */
/* Messages                                                                */

const char *blitz_fs_strerror(const struct blitz_fs_op *op, char *buf, size_t len)
{
	int err = op->result < 0 ? (int)-op->result : 0;
	const char *verb = verbs[op->failed_step < sizeof(verbs) / sizeof(verbs[0]) ?
				 op->failed_step : FS_OPEN];
	const char *name = err ? strerrorname_np(err) : NULL;
	char what[64] = "";

	if (!err) {
		snprintf(buf, len, "%s %s: no error", verb, op->path ? op->path : "");
		return buf;
	}
	if (name)
		snprintf(what, sizeof(what), "%s (%s)", strerror(err), name);
	else
		snprintf(what, sizeof(what), "%s (errno %d)", strerror(err), err);
	if (op->kind == FS_RENAME)
		snprintf(buf, len, "rename %s to %s: %s", op->path, op->path2, what);
	else if (op->path)
		snprintf(buf, len, "%s %s: %s", verb, op->path, what);
	else
		snprintf(buf, len, "%s (fd %d): %s", verb, op->fd, what);
	return buf;
}
