// SPDX-License-Identifier: MIT
/*
 * fs-bench - file read throughput through blitz's fs module (blitz/fs.h):
 * io_uring's own reads (the fs module on the io_uring backend) against the
 * blocking pool (the fs module on epoll and poll: one pool job per read),
 * the tracker's issue 9.  One JSON line per backend, block size and task
 * count, docs/design.md's bench JSON plus throughput and per-read latency:
 *
 * {"runtime":"blitz","bench":"fs_read","workers":2,"backend":"io_uring",
 *  "via":"io_uring","cache":"warm","file_bytes":268435456,
 *  "block_bytes":65536,"tasks":16,"ops":4096,"iters":5,"median_ns":...,
 *  "min_ns":...,"ns_per_op":...,"mb_per_sec":...,"ops_per_sec":...,
 *  "p50_ns":...,"p99_ns":...,"p999_ns":...,"max_ns":...,"cached_pct":100.0}
 *
 * A pass reads the whole file once: it is cut into blocks of block_bytes
 * (ops = the number of blocks), each of the tasks reads its own contiguous
 * run of blocks front to back with read_at, one block in flight per task.
 * median_ns/min_ns are over the measured passes; mb_per_sec (10^6 bytes a
 * second) and ops_per_sec come from the median; the latency percentiles
 * (nearest rank, exact) are over every block of every measured pass, from
 * the first read of a block to the task seeing its last byte, so they
 * include the task's wait to be polled again.  "via" is where the reads
 * ran, from the pool's own count of finished jobs: "pool" if every read was
 * a pool job, "io_uring" if none was.
 *
 * The file (--size, pattern: each 8-byte word holds its own offset, checked
 * at the start of every block) is created in a temporary directory under
 * --dir, flushed to disk (fdatasync) and removed at exit.  The page cache
 * is warm: the warm-up pass leaves the file in memory, and cached_pct (the
 * file's pages resident before each measured pass, mincore(2), averaged)
 * says so.  --cold drops the file's pages (posix_fadvise DONTNEED) before
 * every pass, so each pass reads from the disk (from the host's cache, on
 * a virtual machine); cached_pct should then be about 0.
 *
 * The backends alternate within each iteration (io_uring's pass, then the
 * pool's, ...), each on a runtime of its own, so drift on a shared machine
 * hits them alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <blitz.h>
#include "bench_util.h"

#define PROG		"fs-bench"
#define MAX_LIST	8		/* values in a --block or --tasks list */
#define MAX_TASKS	1024
#define MIN_BLOCK	512		/* and a multiple of it: blocks start 8-aligned */
#define MAX_BLOCK	(64l << 20)
#define FILL_CHUNK	(1l << 20)

static void die(const char *what)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---------------------------------------------------------------------- */
/* Options                                                                */

struct opts {
	struct blitz_config cfg;
	enum blitz_io_backend backend[MAX_LIST];	/* distinct: at most one per backend */
	int nbackends;
	long block[MAX_LIST];
	int nblocks;
	long tasks[MAX_LIST];
	int ntasks;
	long size;
	int iters, warmup;
	bool cold;
	const char *dir;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--backend LIST] [--workers N] [--size BYTES] [--block LIST]\n"
		"                [--tasks LIST] [--iters K] [--warmup W] [--cold] [--dir DIR]\n"
		"File read throughput through blitz's fs module: io_uring's reads against the\n"
		"blocking pool (the fs module's path on epoll and poll); one JSON line per\n"
		"backend, block size and task count.  LIST is comma-separated; sizes take\n"
		"K, M or G.  Defaults: --backend io_uring,epoll --workers 2 --size 256M\n"
		"--block 4K,64K,1M --tasks 1,16 --iters 5 --warmup 1 --dir $TMPDIR or /tmp.\n"
		"The page cache is warm unless --cold (the file's pages dropped before each pass).\n");
}

/*
 * list_copy - @v into @copy (LIST_CHARS bytes) for strtok_r(); too long a
 * list is an error.  A copy on the stack: an exit(2) from a bad item
 * leaves nothing allocated behind (tests/fuzz/fs_opts.c checks for leaks).
 */
#define LIST_CHARS	512
static char *list_copy(const char *opt, const char *v, char *copy)
{
	if (strlen(v) >= LIST_CHARS) {
		fprintf(stderr, PROG ": %s: a list of at most %d characters\n", opt, LIST_CHARS - 1);
		exit(2);
	}
	return strcpy(copy, v);
}

/* parse_list - @v's comma-separated numbers (@sizes: K, M, G too) into @out. */
static int parse_list(const char *opt, const char *v, long *out, long lo, long hi, bool sizes)
{
	char buf[LIST_CHARS], *copy = list_copy(opt, v, buf), *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_LIST) {
			fprintf(stderr, PROG ": %s: at most %d values\n", opt, MAX_LIST);
			exit(2);
		}
		out[n++] = sizes ? bench_parse_size(opt, tok, lo, hi) : bench_parse_num(opt, tok, lo, hi);
	}
	if (!n) {
		fprintf(stderr, PROG ": %s: no value\n", opt);
		exit(2);
	}
	return n;
}

static int parse_backends(const char *v, enum blitz_io_backend *out)
{
	char buf[LIST_CHARS], *copy = list_copy("--backend", v, buf), *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum blitz_io_backend b = bench_parse_backend("--backend", tok);

		for (int i = 0; i < n; i++)
			if (out[i] == b) {
				fprintf(stderr, PROG ": --backend %s: %s twice\n", v, tok);
				exit(2);
			}
		if (n == MAX_LIST) {
			fprintf(stderr, PROG ": --backend: at most %d values\n", MAX_LIST);
			exit(2);
		}
		out[n++] = b;
	}
	if (!n) {
		fprintf(stderr, PROG ": --backend: no value\n");
		exit(2);
	}
	return n;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 's' },
		{ "block", required_argument, NULL, 'B' },
		{ "tasks", required_argument, NULL, 't' },
		{ "iters", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "cold", no_argument, NULL, 'c' },
		{ "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (struct opts){ .nbackends = 2, .backend = { BLITZ_BACKEND_IO_URING, BLITZ_BACKEND_EPOLL },
			    .nblocks = 3, .block = { 4l << 10, 64l << 10, 1l << 20 },
			    .ntasks = 2, .tasks = { 1, 16 },
			    .size = 256l << 20, .iters = 5, .warmup = 1 };
	o->dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	bench_config(&o->cfg, 2);
	while ((c = bench_getopt(argc, argv, lopts)) != -1) {
		switch (c) {
		case 'b': o->nbackends = parse_backends(optarg, o->backend); break;
		case 'w': o->cfg.workers = (unsigned)bench_parse_num("--workers", optarg, 1, blitz_max_workers()); break;
		case 's': o->size = bench_parse_size("--size", optarg, 1, 1l << 40); break;
		case 'B': o->nblocks = parse_list("--block", optarg, o->block, MIN_BLOCK, MAX_BLOCK, true); break;
		case 't': o->ntasks = parse_list("--tasks", optarg, o->tasks, 1, MAX_TASKS, false); break;
		case 'i': o->iters = (int)bench_parse_num("--iters", optarg, 1, 1000); break;
		case 'W': o->warmup = (int)bench_parse_num("--warmup", optarg, 0, 1000); break;
		case 'c': o->cold = true; break;
		case 'd': o->dir = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	for (int i = 0; i < o->nblocks; i++)
		if (o->block[i] % MIN_BLOCK) {
			fprintf(stderr, PROG ": --block %ld: not a multiple of %d\n",
				o->block[i], MIN_BLOCK);
			exit(2);
		}
}

/* ---------------------------------------------------------------------- */
/* The file                                                               */

/* Global for the exit and signal handlers, which remove it. */
static struct {
	char dir[PATH_MAX];
	char path[PATH_MAX];
	int fd;
	long size;
} file = { .fd = -1 };

static void remove_file(void)
{
	if (file.path[0])
		unlink(file.path);
	if (file.dir[0])
		rmdir(file.dir);
}

/* Async-signal-safe: unlink, rmdir and _exit only. */
static void on_signal(int sig)
{
	remove_file();
	_exit(128 + sig);
}

/* fill - write the pattern: the 8-byte word at offset o holds o. */
static void fill(int fd, long size)
{
	uint64_t *chunk = malloc(FILL_CHUNK);

	if (!chunk)
		die("malloc");
	for (long off = 0; off < size; off += FILL_CHUNK) {
		size_t len = (size_t)(size - off < FILL_CHUNK ? size - off : FILL_CHUNK);

		for (size_t j = 0; j < FILL_CHUNK / 8; j++)
			chunk[j] = (uint64_t)off + 8 * j;
		if (pwrite(fd, chunk, len, off) != (ssize_t)len)
			die("write the file");
	}
	free(chunk);
}

/* make_file - the file under @dir, its pattern on the disk (so clean pages). */
static void make_file(const char *dir, long size)
{
	if (snprintf(file.dir, sizeof(file.dir), "%s/fs-bench.XXXXXX", dir) >= (int)sizeof(file.dir))
		die("--dir too long");
	if (!mkdtemp(file.dir)) {
		file.dir[0] = '\0';
		die(dir);
	}
	atexit(remove_file);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (snprintf(file.path, sizeof(file.path), "%s/data", file.dir) >= (int)sizeof(file.path))
		die("--dir too long");
	file.fd = open(file.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (file.fd < 0)
		die(file.path);
	file.size = size;
	fill(file.fd, size);
	if (fdatasync(file.fd))
		die("fdatasync");
}

/* cached_pct - how much of the file is in the page cache, in percent. */
static double cached_pct(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)file.size;
	size_t pages = (len + page - 1) / page, in = 0;
	unsigned char *vec = malloc(pages);
	void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, file.fd, 0);

	if (!vec || map == MAP_FAILED || mincore(map, len, vec))
		die("mincore");
	for (size_t i = 0; i < pages; i++)
		in += vec[i] & 1;
	munmap(map, len);
	free(vec);
	return 100.0 * (double)in / (double)pages;
}

static void drop_cache(void)
{
	errno = posix_fadvise(file.fd, 0, 0, POSIX_FADV_DONTNEED);
	if (errno)
		die("posix_fadvise(DONTNEED)");
}

/* ---------------------------------------------------------------------- */
/* The readers                                                            */

/*
 * One task's share of a pass: the blocks [first, first + count) of the
 * file, read in order into @buf, one latency sample per block into
 * lat[0..count).  A short read is followed by a read of the rest of the
 * block: a sample always covers a whole block.
 */
struct reader {
	struct blitz_co co;
	struct blitz_fs_op op;
	int fd;
	char *buf;
	long block;
	long first, count, i;
	off_t start, pos, end;		/* the current block: [start, end), pos read up to */
	uint64_t t0;
	uint64_t *lat;
};

/* check_block - the block's first word is its offset (the file's pattern). */
static void check_block(const struct reader *s)
{
	uint64_t word;

	memcpy(&word, s->buf, sizeof(word));
	if (word != (uint64_t)s->start) {
		fprintf(stderr, PROG ": block at %lld holds %llu: read the wrong bytes\n",
			(long long)s->start, (unsigned long long)word);
		exit(1);
	}
}

static void read_failed(struct reader *s)
{
	char msg[256];

	if (s->op.result == 0)
		fprintf(stderr, PROG ": read at %lld: end of file before %lld\n",
			(long long)s->pos, (long long)s->end);
	else
		fprintf(stderr, PROG ": %s\n", blitz_fs_strerror(&s->op, msg, sizeof(msg)));
	exit(1);
}

static enum blitz_poll reader_poll(void *arg, struct blitz_cx *cx)
{
	struct reader *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (s->i = 0; s->i < s->count; s->i++) {
		s->start = s->pos = (off_t)(s->first + s->i) * s->block;
		s->end = s->start + s->block < file.size ? s->start + s->block : file.size;
		s->t0 = bench_now_ns();
		while (s->pos < s->end) {
			blitz_fs_prep_read_at(&s->op, s->fd, s->buf + (s->pos - s->start),
					      (size_t)(s->end - s->pos), s->pos);
			BLITZ_AWAIT(&s->co, blitz_fs_poll(&s->op, cx));
			if (s->op.result <= 0)
				read_failed(s);
			s->pos += s->op.result;
		}
		s->lat[s->i] = bench_now_ns() - s->t0;
		check_block(s);
	}
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable reader_vt = BLITZ_TASK_VTABLE(reader_poll, NULL);

/* The root task: spawns the readers and joins them. */
struct root {
	struct blitz_co co;
	const struct reader *r;
	struct blitz_task **t;
	int n;
};

static enum blitz_poll root_poll(void *arg, struct blitz_cx *cx)
{
	struct root *s = arg;

	BLITZ_CO_BEGIN(&s->co);
	for (int i = 0; i < s->n; i++)
		if (!(s->t[i] = blitz_spawn(NULL, &reader_vt, &s->r[i], sizeof(s->r[i]))))
			die("spawn");
	BLITZ_AWAIT(&s->co, blitz_join_tasks_poll(s->t, (size_t)s->n, cx));
	for (int i = 0; i < s->n; i++)
		blitz_task_release(s->t[i]);
	BLITZ_CO_END(&s->co);
}
static const struct blitz_task_vtable root_vt = BLITZ_TASK_VTABLE(root_poll, NULL);

/* ---------------------------------------------------------------------- */
/* Passes and rows                                                        */

/* One backend's row for one block size and task count. */
struct row {
	struct blitz_runtime *rt;
	uint64_t *time;			/* per measured pass */
	uint64_t *lat;			/* iters x nblk samples */
	double cached;			/* sum over the measured passes */
	uint64_t jobs;			/* pool jobs the measured passes ran */
};

/* A pass's shape: nblk blocks of @block bytes over @tasks readers. */
struct pass {
	long block, nblk;
	int tasks;
	struct reader *r;		/* tasks of them */
	struct blitz_task **t;
	char *bufs;			/* tasks x block bytes */
};

static uint64_t jobs_done(struct blitz_runtime *rt)
{
	struct blitz_blocking_stats st;

	blitz_blocking_stats(rt, &st);
	return st.jobs_done;
}

/* run_pass - read the whole file once on @rt; samples into @lat[0..nblk). */
static uint64_t run_pass(struct blitz_runtime *rt, struct pass *p, uint64_t *lat)
{
	struct root root = { .r = p->r, .t = p->t, .n = p->tasks };
	long first = 0;
	uint64_t start;

	for (int i = 0; i < p->tasks; i++) {
		long count = p->nblk / p->tasks + (i < p->nblk % p->tasks);

		p->r[i] = (struct reader){ .fd = file.fd, .buf = p->bufs + (size_t)i * (size_t)p->block,
					   .block = p->block, .first = first, .count = count,
					   .lat = lat + first };
		first += count;
	}
	start = bench_now_ns();
	if (blitz_block_on(rt, &root_vt, &root, sizeof(root)))
		die("block_on");
	return bench_now_ns() - start;
}

/* one_pass - iteration @it (< 0: warm-up) of @row: the cache set up, then a pass. */
static void one_pass(struct row *row, struct pass *p, int it, bool cold)
{
	uint64_t jobs0 = jobs_done(row->rt), t;

	if (cold)
		drop_cache();
	if (it >= 0)
		row->cached += cached_pct();
	t = run_pass(row->rt, p, row->lat + (it >= 0 ? (size_t)it * (size_t)p->nblk : 0));
	if (it >= 0) {
		row->time[it] = t;
		row->jobs += jobs_done(row->rt) - jobs0;
	}
}

static const char *via(const struct row *row, const struct pass *p, int iters)
{
	if (row->jobs == 0)
		return "io_uring";
	return row->jobs >= (uint64_t)p->nblk * (uint64_t)iters ? "pool" : "mixed";
}

static void print_row(struct row *row, const struct pass *p, const struct opts *o)
{
	size_t nlat = (size_t)o->iters * (size_t)p->nblk;
	uint64_t med;
	double sec;

	qsort(row->time, (size_t)o->iters, sizeof(*row->time), bench_cmp_u64);
	qsort(row->lat, nlat, sizeof(*row->lat), bench_cmp_u64);
	med = bench_median(row->time, (size_t)o->iters);
	sec = (double)med / 1e9;
	printf("{\"runtime\":\"blitz\",\"bench\":\"fs_read\",\"workers\":%u,\"backend\":\"%s\","
	       "\"via\":\"%s\",\"cache\":\"%s\",\"file_bytes\":%ld,\"block_bytes\":%ld,\"tasks\":%d,"
	       "\"ops\":%ld,\"iters\":%d,\"median_ns\":%llu,\"min_ns\":%llu,\"ns_per_op\":%.2f,"
	       "\"mb_per_sec\":%.1f,\"ops_per_sec\":%.1f,\"p50_ns\":%llu,\"p99_ns\":%llu,"
	       "\"p999_ns\":%llu,\"max_ns\":%llu,\"cached_pct\":%.1f}\n",
	       blitz_runtime_workers(row->rt), blitz_io_backend_name(row->rt), via(row, p, o->iters),
	       o->cold ? "cold" : "warm", file.size, p->block, p->tasks, p->nblk, o->iters,
	       (unsigned long long)med, (unsigned long long)row->time[0],
	       (double)med / (double)p->nblk, (double)file.size / sec / 1e6, (double)p->nblk / sec,
	       (unsigned long long)bench_quantile(row->lat, nlat, 0.50),
	       (unsigned long long)bench_quantile(row->lat, nlat, 0.99),
	       (unsigned long long)bench_quantile(row->lat, nlat, 0.999),
	       (unsigned long long)row->lat[nlat - 1], row->cached / o->iters);
	fflush(stdout);
}

/* run_config - one block size and task count on every backend, alternating. */
static void run_config(struct row *rows, int nrows, long block, int tasks, const struct opts *o)
{
	struct pass p = { .block = block, .nblk = (file.size + block - 1) / block, .tasks = tasks };

	p.r = calloc((size_t)tasks, sizeof(*p.r));
	p.t = calloc((size_t)tasks, sizeof(*p.t));
	p.bufs = aligned_alloc(4096, (size_t)tasks * (size_t)block);
	if (!p.r || !p.t || !p.bufs)
		die("malloc");
	for (int b = 0; b < nrows; b++) {
		rows[b].time = calloc((size_t)o->iters, sizeof(uint64_t));
		rows[b].lat = calloc((size_t)o->iters * (size_t)p.nblk, sizeof(uint64_t));
		rows[b].cached = 0;
		rows[b].jobs = 0;
		if (!rows[b].time || !rows[b].lat)
			die("malloc");
	}
	for (int it = -o->warmup; it < o->iters; it++)
		for (int b = 0; b < nrows; b++)
			one_pass(&rows[b], &p, it, o->cold);
	for (int b = 0; b < nrows; b++) {
		print_row(&rows[b], &p, o);
		free(rows[b].time);
		free(rows[b].lat);
	}
	free(p.r);
	free(p.t);
	free(p.bufs);
}

/*
 * start_runtimes - one runtime per asked-for backend.  A backend that is
 * not available (the runtime fell back to another) is skipped, and said so.
 */
static int start_runtimes(struct opts *o, struct row *rows)
{
	int n = 0;

	for (int b = 0; b < o->nbackends; b++) {
		struct blitz_runtime *rt;

		o->cfg.backend = o->backend[b];
		if (!(rt = blitz_runtime_new(&o->cfg)))
			die("blitz_runtime_new");
		if (strcmp(blitz_io_backend_name(rt), blitz_backend_name(o->backend[b]))) {
			fprintf(stderr, PROG ": %s is not available here (the runtime runs %s): "
				"skipping it\n", blitz_backend_name(o->backend[b]),
				blitz_io_backend_name(rt));
			blitz_runtime_free(rt);
			continue;
		}
		rows[n++] = (struct row){ .rt = rt };
	}
	return n;
}

int main(int argc, char **argv)
{
	struct row rows[3];
	struct opts o;
	int n;

	parse_opts(argc, argv, &o);
	n = start_runtimes(&o, rows);
	if (!n) {
		fprintf(stderr, PROG ": no backend to run\n");
		return 1;
	}
	make_file(o.dir, o.size);
	fprintf(stderr, PROG ": %ld bytes in %s, page cache %s\n", file.size, file.path,
		o.cold ? "dropped before every pass (--cold)" : "warm");
	for (int i = 0; i < o.nblocks; i++)
		for (int j = 0; j < o.ntasks; j++)
			run_config(rows, n, o.block[i], (int)o.tasks[j], &o);
	for (int b = 0; b < n; b++)
		blitz_runtime_free(rows[b].rt);
	close(file.fd);
	return 0;
}
