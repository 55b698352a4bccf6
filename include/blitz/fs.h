/* SPDX-License-Identifier: MIT */
/*
 * blitz/fs.h - the filesystem from tasks: open, read, write, read_at,
 * write_at, fsync, stat, mkdir, readdir, rename, unlink, rmdir, and the
 * read-whole-file / write-whole-file helpers.
 *
 * An operation (struct blitz_fs_op) lives in the awaiting task's state:
 * prepare it with a blitz_fs_prep_* function, await blitz_fs_poll(), and
 * read op->result (a descriptor, a byte count, 0, or -errno).
 *
 *	blitz_fs_prep_read_file(&s->op, "/etc/hostname");
 *	BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
 *	if (s->op.result < 0)
 *		fprintf(stderr, "%s\n", blitz_fs_strerror(&s->op, msg, sizeof(msg)));
 *	else
 *		use(s->op.data, s->op.size), free(s->op.data);
 *
 * On io_uring the single operations are io_uring's own (openat, read,
 * write, fsync, statx, mkdirat, renameat, unlinkat); on epoll and poll, and
 * for readdir and the whole-file helpers everywhere, the operation runs on
 * the runtime's blocking pool (docs/fs.md).
 *
 * Paths and buffers must stay valid until the operation completes.  A task
 * that can be cancelled while an operation is pending calls
 * blitz_fs_cancel() from its drop function.
 */
#ifndef BLITZ_FS_H
#define BLITZ_FS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <blitz/blocking.h>
#include <blitz/io.h>
#include <blitz/task.h>

/* How to open a file (as Rust's OpenOptions). */
struct blitz_fs_open_options {
	bool read;
	bool write;
	bool append;		/* implies write */
	bool truncate;		/* needs write */
	bool create;		/* create if missing; needs write or append */
	bool create_new;	/* create, failing with EEXIST if it exists */
	unsigned mode;		/* for a created file; 0: 0666 (before the umask) */
	int custom_flags;	/* more O_* flags, OR-ed in (O_CLOEXEC always is) */
};

/**
 * blitz_fs_open_flags - the open(2) flags for @opts.
 * Return: the flags, or -EINVAL for a contradictory set (neither read nor
 * write; truncate or create without write).
 */
int blitz_fs_open_flags(const struct blitz_fs_open_options *opts);

/* One directory entry (readdir).  d_type values: DT_REG, DT_DIR, ... */
struct blitz_fs_dirent {
	char *name;
	unsigned char type;
	uint64_t ino;
};

/* A directory's entries, sorted by name, without "." and "..". */
struct blitz_fs_dir {
	size_t count;
	struct blitz_fs_dirent *entries;
};

/** blitz_fs_dir_free - release what readdir filled in @dir (NULL: nothing). */
void blitz_fs_dir_free(struct blitz_fs_dir *dir);

struct blitz_fs_op {
	uint8_t kind;			/* enum in core/io/fs.c */
	uint8_t via;			/* 0 not started, 1 the I/O driver (io_uring), 2 the pool */
	uint8_t delivered;		/* blitz_fs_poll returned READY */
	uint8_t failed_step;		/* whole-file helpers: the step that failed */
	int fd;
	int flags;
	unsigned mode;
	const char *path;
	const char *path2;		/* rename: the new name */
	void *buf;
	size_t len;
	off_t off;			/* read_at / write_at; -1: the file position */
	struct statx *stx;		/* stat: out */
	struct blitz_fs_dir *dir;	/* readdir: out */
	int64_t result;			/* a descriptor, bytes, 0, or -errno */
	void *data;			/* read_file: out (malloc'd: free() it) */
	size_t size;			/* read_file: out; write_file: in */
	_Atomic uint32_t claim;		/* who frees an output nobody awaits (core/io/fs.c) */
	struct blitz_io_op io;		/* via the I/O driver */
	struct blitz_blocking job;	/* via the pool */
};

void blitz_fs_prep_open(struct blitz_fs_op *op, const char *path,
			const struct blitz_fs_open_options *opts);
/* open(2) flags and mode as they are (O_CLOEXEC added). */
void blitz_fs_prep_open_flags(struct blitz_fs_op *op, const char *path, int flags, unsigned mode);
/*
 * read, write, read_at, write_at, fsync: after the prep, op->path may be
 * set to the file's name for blitz_fs_strerror() (else it says "fd N").
 * At the file position: */
void blitz_fs_prep_read(struct blitz_fs_op *op, int fd, void *buf, size_t len);
void blitz_fs_prep_write(struct blitz_fs_op *op, int fd, const void *buf, size_t len);
/* At @off; the file position is left alone. */
void blitz_fs_prep_read_at(struct blitz_fs_op *op, int fd, void *buf, size_t len, off_t off);
void blitz_fs_prep_write_at(struct blitz_fs_op *op, int fd, const void *buf, size_t len, off_t off);
void blitz_fs_prep_fsync(struct blitz_fs_op *op, int fd, bool datasync);
/* stat follows symbolic links; @out gets STATX_BASIC_STATS. */
void blitz_fs_prep_stat(struct blitz_fs_op *op, const char *path, struct statx *out);
void blitz_fs_prep_mkdir(struct blitz_fs_op *op, const char *path, unsigned mode);
void blitz_fs_prep_readdir(struct blitz_fs_op *op, const char *path, struct blitz_fs_dir *out);
void blitz_fs_prep_rename(struct blitz_fs_op *op, const char *from, const char *to);
void blitz_fs_prep_unlink(struct blitz_fs_op *op, const char *path);
void blitz_fs_prep_rmdir(struct blitz_fs_op *op, const char *path);
/* The whole file into op->data (malloc'd, one byte more, NUL) and op->size. */
void blitz_fs_prep_read_file(struct blitz_fs_op *op, const char *path);
/* Create or truncate @path and write @len bytes of @data to it. */
void blitz_fs_prep_write_file(struct blitz_fs_op *op, const char *path, const void *data, size_t len);

/**
 * blitz_fs_poll - start @op on the first poll, then wait for it.
 * Return: BLITZ_READY when op->result is valid.
 *
 * read and write may transfer fewer bytes than asked (as read(2) does); the
 * whole-file helpers loop until done.
 */
enum blitz_poll blitz_fs_poll(struct blitz_fs_op *op, struct blitz_cx *cx);

/**
 * blitz_fs_cancel - for a drop function: stop waiting for @op.  A queued or
 * cancellable operation completes with -ECANCELED; one already running
 * finishes, and an output nobody will read (read_file's data, readdir's
 * entries) is freed by whichever side finishes last.  A no-op once
 * blitz_fs_poll() has returned READY.
 */
void blitz_fs_cancel(struct blitz_fs_op *op);

/**
 * blitz_fs_strerror - a message a person can act on for a failed @op:
 * "open /x/y: No such file or directory (ENOENT)".
 * Return: @buf.
 */
const char *blitz_fs_strerror(const struct blitz_fs_op *op, char *buf, size_t len);

#endif /* BLITZ_FS_H */
