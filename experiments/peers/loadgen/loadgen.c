// SPDX-License-Identifier: MIT
/*
 * echo-loadgen - a neutral closed-loop load generator for TCP echo servers.
 *
 *   echo-loadgen [--connections N] [--size BYTES] [--duration S] [--warmup S]
 *                [--server-pid PID] [--label NAME] [--backend NAME]
 *                [--workers N] ADDRESS
 *
 * Plain C on one thread with epoll, no blitz and no Tokio, so the same code
 * measures every server (experiments/peers/run-echo pins it to a CPU of its
 * own with taskset).  Each connection is a closed loop: send one message,
 * wait for the whole echo, compare every byte with what was sent, record the
 * round trip, send the next.  One JSON line at the end (below); exit 0, or 1
 * when a connection failed (the line is still printed, with "errors"), or 2
 * on a bad argument (one line on stderr).
 *
 * What keeps it cheap per message:
 *   - every socket is registered once, edge-triggered, for EPOLLIN and
 *     EPOLLOUT: no epoll_ctl after the connection is set up;
 *   - a message is one send, and its echo one recv when it arrives whole
 *     (the read asks for exactly what is missing, so there is no recv that
 *     ends in EAGAIN unless the echo came in pieces);
 *   - one epoll_wait serves up to MAX_EVENTS connections, and one clock read
 *     (CLOCK_MONOTONIC, vDSO) stamps the whole batch: a round trip is from
 *     the wake that sent the message to the wake that saw its echo, as an
 *     event loop sees it;
 *   - nothing is allocated after setup.
 *
 * Edge-triggered reads are safe because at most one message is in flight per
 * connection: the server cannot have sent more than the bytes missing, so a
 * read that got them all has drained the socket, and one that did not read
 * on until EAGAIN.
 *
 * The measured window opens at the first wake after --warmup seconds and
 * closes at the first wake --duration after that (not after the warm-up's
 * planned end: a load generator starved of its CPU past the planned window,
 * on a machine busier than it has CPUs, closed it at the wake that opened
 * it and reported nothing) at which a round trip has ended in it (at most
 * MAX_EXTEND_NS later it closes anyway); round trips that end in it are
 * counted, and the CPU time of the load generator (getrusage) and, with
 * --server-pid, of the server (utime and stime of /proc/PID/stat, every
 * thread) are read at both ends, so "cpu per message" divides the CPU of the
 * window by its messages, in all and split into user space and kernel.
 * Each connection counts its round trips and its longest in the window,
 * for the fairness fields (print_fairness).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include "echo_client.h"
#include "hist.h"

#define PROG		"echo-loadgen"
#define MAX_CONNS	100000
#define MAX_SIZE	(1l << 20)
#define MAX_EVENTS	1024
#define IDLE_WAIT_MS	100	/* the longest wait: a boundary is never later */

struct opts {
	const char *addr;
	const char *label, *backend;	/* describe the server in the JSON */
	long workers;			/* 0: not said */
	long connections, size;
	double duration, warmup;
	long server_pid;		/* 0: the server's CPU is not read */
};

struct conn {
	int fd;				/* -1 once it failed */
	uint32_t sent, rcvd;		/* of the message in flight; rcvd <= sent */
	uint64_t t0;			/* the batch stamp it was sent in */
	uint64_t msgs, max_ns;		/* in the window: round trips, the longest */
};

/* A CPU reading at one end of the window. */
/* CPU time in ns, split by mode: user space, and the kernel on the process's behalf. */
struct cpu_split {
	uint64_t user, sys;
};

struct cpu_mark {
	uint64_t wall_ns;
	struct cpu_split self, server;
	bool server_ok;			/* server was read */
};

struct gen {
	const struct opts *o;
	struct conn *c;
	long live;			/* connections not failed */
	int ep;
	unsigned char *payload, *rbuf;
	uint64_t now;			/* the current batch's stamp */
	bool measuring;
	uint64_t msgs, errors;
	uint64_t msgs_all;		/* every round trip, the warmup's too */
	uint64_t last_echo, gap_max;	/* in the window: the last wake with an echo, the longest gap */
	struct cpu_mark from, to;
	struct hist h;
};

/* ---------------------------------------------------------------------- */
/* Options                                                                */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--connections N] [--size BYTES] [--duration SECONDS]\n"
		"                    [--warmup SECONDS] [--server-pid PID] [--label NAME]\n"
		"                    [--backend NAME] [--workers N] ADDRESS\n"
		"A closed-loop load generator for TCP echo servers (one thread, epoll);\n"
		"one JSON line per run.  ADDRESS: HOST:PORT, [IPV6]:PORT or a Unix socket path.\n"
		"  --server-pid PID  also report the server's CPU per message (/proc/PID/stat)\n"
		"  --label, --backend, --workers  describe the server in the JSON\n"
		"Defaults: --connections 100 --size 64 --duration 5 --warmup 1.\n");
}

static void bad_arg(const char *opt, const char *v, const char *expected)
{
	fprintf(stderr, PROG ": %s %s: expected %s\n", opt, v, expected);
	exit(2);
}

/* A whole number from @lo to @hi; with @suffix, K (2^10) and M (2^20) too. */
static long parse_num(const char *opt, const char *v, long lo, long hi, bool suffix)
{
	char *end, what[80];
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (suffix && end != v && (*end == 'K' || *end == 'k') && !end[1] && n <= hi >> 10)
		n <<= 10, end++;
	else if (suffix && end != v && (*end == 'M' || *end == 'm') && !end[1] && n <= hi >> 20)
		n <<= 20, end++;
	if (errno || *end || end == v || n < lo || n > hi) {
		snprintf(what, sizeof(what), "a number from %ld to %ld%s", lo, hi,
			 suffix ? " (K and M suffixes allowed)" : "");
		bad_arg(opt, v, what);
	}
	return n;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "connections", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "server-pid", required_argument, NULL, 'p' },
		{ "label", required_argument, NULL, 'l' },
		{ "backend", required_argument, NULL, 'b' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*o = (struct opts){ .label = "unknown", .connections = 100, .size = 64,
			    .duration = 5, .warmup = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->connections = parse_num("--connections", optarg, 1, MAX_CONNS, false); break;
		case 's': o->size = parse_num("--size", optarg, 1, MAX_SIZE, true); break;
		case 'd': o->duration = echo_parse_seconds(PROG, "--duration", optarg, 1e-3); break;
		case 'W': o->warmup = echo_parse_seconds(PROG, "--warmup", optarg, 0); break;
		case 'p': o->server_pid = parse_num("--server-pid", optarg, 1, 1l << 30, false); break;
		case 'l': o->label = optarg; break;
		case 'b': o->backend = optarg; break;
		case 'w': o->workers = parse_num("--workers", optarg, 1, 1 << 20, false); break;
		case 'h': usage(stdout); exit(0);
		case '?':
			if (optopt && strchr("csdWpbwl", optopt))
				fprintf(stderr, PROG ": %s needs a value (--help: usage)\n", argv[optind - 1]);
			else
				fprintf(stderr, PROG ": unknown option %s (--help: usage)\n", argv[optind - 1]);
			exit(2);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, PROG ": %s (--help: usage)\n",
			optind == argc ? "no ADDRESS given" : "one ADDRESS only");
		exit(2);
	}
	o->addr = argv[optind];
}

/* ---------------------------------------------------------------------- */
/* The address and the connections                                       */

/* resolve - @s as HOST:PORT, [IPV6]:PORT or a path (with a '/'); exit 2 if not. */
static void resolve(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	char host[256];
	const char *colon = strrchr(s, ':'), *h = s;
	size_t hl;
	int rc;

	if (strchr(s, '/')) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		if (strlen(s) >= sizeof(un->sun_path))
			bad_arg("ADDRESS", s, "a Unix socket path shorter than 108 bytes");
		memset(un, 0, sizeof(*un));
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, s);
		*len = sizeof(*un);
		return;
	}
	if (!colon || colon == s || !colon[1])
		bad_arg("ADDRESS", s, "HOST:PORT, [IPV6]:PORT or a Unix socket path");
	hl = (size_t)(colon - s);
	if (*s == '[' && colon[-1] == ']')
		h++, hl -= 2;
	if (hl >= sizeof(host))
		bad_arg("ADDRESS", s, "a shorter host name");
	memcpy(host, h, hl);
	host[hl] = '\0';
	parse_num("ADDRESS's port", colon + 1, 1, 65535, false);
	rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc) {
		fprintf(stderr, PROG ": ADDRESS %s: %s\n", s, gai_strerror(rc));
		exit(2);
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
}

/* open_conn - connected, primed, non-blocking and registered; exit 1 if not. */
static void open_conn(struct gen *g, struct conn *c, const struct sockaddr_storage *ss,
		      socklen_t len, long i)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c };
	int one = 1;

	c->fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto fail;
	/* Round trips of one message: Nagle would only add delay. */
	if (ss->ss_family != AF_UNIX)
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)ss, len) < 0 || echo_prime(c->fd) < 0 ||
	    fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0 ||
	    epoll_ctl(g->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		goto fail;
	return;
fail:
	fprintf(stderr, PROG ": connection %ld of %ld to %s: %s\n", i + 1,
		g->o->connections, g->o->addr, strerror(errno));
	exit(1);
}

/* ---------------------------------------------------------------------- */
/* The closed loop                                                        */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* conn_fail - count the error, say the first, close the connection. */
static void conn_fail(struct gen *g, struct conn *c, const char *what, int err)
{
	if (!g->errors++)
		fprintf(stderr, PROG ": %s: %s (further errors are counted in \"errors\")\n",
			what, err ? strerror(err) : "the server closed the connection");
	close(c->fd);		/* also leaves the epoll set */
	c->fd = -1;
	g->live--;
}

/* push - send what is left of the message; EPOLLOUT's edge resumes it. */
static void push(struct gen *g, struct conn *c)
{
	uint32_t size = (uint32_t)g->o->size;

	while (c->sent < size) {
		ssize_t r = send(c->fd, g->payload + c->sent, size - c->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r < 0) {
			conn_fail(g, c, "send", errno);
			return;
		}
		c->sent += (uint32_t)r;
	}
}

static void start_msg(struct gen *g, struct conn *c)
{
	c->sent = c->rcvd = 0;
	c->t0 = g->now;
	push(g, c);
}

/*
 * pull - read the echo and compare it with what was sent.  Return true when
 * the message is whole.  A read asks for no more than is missing, so it
 * never takes a byte of a later message.
 */
static bool pull(struct gen *g, struct conn *c)
{
	uint32_t size = (uint32_t)g->o->size;

	while (c->rcvd < size) {
		ssize_t r = recv(c->fd, g->rbuf, size - c->rcvd, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return false;
		if (r <= 0) {
			conn_fail(g, c, "recv", r < 0 ? errno : 0);
			return false;
		}
		if (c->rcvd + (uint32_t)r > c->sent ||
		    memcmp(g->rbuf, g->payload + c->rcvd, (size_t)r)) {
			conn_fail(g, c, "the echo differs from the message", EBADMSG);
			return false;
		}
		c->rcvd += (uint32_t)r;
	}
	return true;
}

static void on_event(struct gen *g, struct conn *c, uint32_t ev)
{
	if ((ev & EPOLLOUT) && c->sent < (uint32_t)g->o->size) {
		push(g, c);
		if (c->fd < 0)
			return;
	}
	if (!(ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) || !pull(g, c))
		return;
	g->msgs_all++;
	if (g->measuring) {
		uint64_t rtt = g->now - c->t0;

		hist_add(&g->h, rtt);
		g->msgs++;
		c->msgs++;
		if (rtt > c->max_ns)
			c->max_ns = rtt;
		if (g->now - g->last_echo > g->gap_max)
			g->gap_max = g->now - g->last_echo;
		g->last_echo = g->now;
	}
	start_msg(g, c);
}

/*
 * server_cpu - the server's utime and stime (every thread) in ns; false if
 * unreadable.  The kernel accounts them by the tick (USER_HZ here): each
 * is a sample, exact over many ticks, not a measurement of each switch.
 */
static bool server_cpu(long pid, struct cpu_split *cpu)
{
	unsigned long long ut, st, tick_ns;
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* After "pid (comm) ": state is field 3, utime 14, stime 15. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return false;
	tick_ns = 1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK);
	cpu->user = ut * tick_ns;
	cpu->sys = st * tick_ns;
	return true;
}

/* cpu_since - the CPU time from @a to @b (each mode's counter only grows). */
static struct cpu_split cpu_since(const struct cpu_split *a, const struct cpu_split *b)
{
	return (struct cpu_split){ .user = b->user - a->user, .sys = b->sys - a->sys };
}

static void mark(struct gen *g, struct cpu_mark *m)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	m->wall_ns = g->now;
	m->self.user = (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
	m->self.sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
	m->server_ok = g->o->server_pid && server_cpu(g->o->server_pid, &m->server);
}

/* How long past --duration the window waits for its first round trip. */
#define MAX_EXTEND_NS	(10ull * 1000000000ull)

static void run(struct gen *g)
{
	struct epoll_event evs[MAX_EVENTS];
	uint64_t start, end;

	g->now = now_ns();
	start = g->now + (uint64_t)(g->o->warmup * 1e9);
	end = start + (uint64_t)(g->o->duration * 1e9);
	for (long i = 0; i < g->o->connections; i++)
		start_msg(g, &g->c[i]);
	while (g->live > 0) {
		int n = epoll_wait(g->ep, evs, MAX_EVENTS, IDLE_WAIT_MS);

		if (n < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": epoll_wait: %s\n", strerror(errno));
			exit(1);
		}
		g->now = now_ns();
		if (!g->measuring && g->now >= start) {
			mark(g, &g->from);
			g->measuring = true;
			g->last_echo = g->now;
			end = g->now + (uint64_t)(g->o->duration * 1e9);
		}
		if (g->now >= end && (g->msgs > 0 || g->now >= end + MAX_EXTEND_NS)) {
			mark(g, &g->to);
			return;
		}
		for (int i = 0; i < n; i++)
			on_event(g, evs[i].data.ptr, evs[i].events);
	}
	mark(g, &g->to);	/* every connection failed */
}

/* ---------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * print_fairness - how the window's round trips spread over the live
 * connections: the least, median and most round trips of one connection,
 * and the median of each connection's longest (of those that made one).
 * A tail made by a few starved connections shows as a low minimum; one
 * made by stalls that hit every connection shows as a high median longest
 * and a long echo_gap_max (the longest time in the window without any
 * echo).
 */
static void print_fairness(const struct gen *g)
{
	uint64_t *n = malloc((size_t)g->o->connections * sizeof(*n));
	uint64_t *mx = malloc((size_t)g->o->connections * sizeof(*mx));
	long k = 0, m = 0;

	for (long i = 0; n && mx && i < g->o->connections; i++) {
		if (g->c[i].fd < 0)
			continue;
		n[k++] = g->c[i].msgs;
		if (g->c[i].msgs)	/* a longest only where a round trip ended */
			mx[m++] = g->c[i].max_ns;
	}
	if (k == 0 || m == 0) {
		printf(",\"conn_msgs_min\":null,\"conn_msgs_p50\":null,\"conn_msgs_max\":null,"
		       "\"conn_max_p50_ns\":null,\"echo_gap_max_ns\":null");
	} else {
		qsort(n, (size_t)k, sizeof(*n), cmp_u64);
		qsort(mx, (size_t)m, sizeof(*mx), cmp_u64);
		printf(",\"conn_msgs_min\":%llu,\"conn_msgs_p50\":%llu,\"conn_msgs_max\":%llu,"
		       "\"conn_max_p50_ns\":%llu,\"echo_gap_max_ns\":%llu",
		       (unsigned long long)n[0], (unsigned long long)n[k / 2],
		       (unsigned long long)n[k - 1], (unsigned long long)mx[m / 2],
		       (unsigned long long)g->gap_max);
	}
	free(n);
	free(mx);
}

static void print_json_str(const char *key, const char *v)
{
	printf(",\"%s\":", key);
	if (!v) {
		printf("null");
		return;
	}
	putchar('"');
	for (; *v; v++)
		if (*v == '"' || *v == '\\')
			printf("\\%c", *v);
		else if ((unsigned char)*v >= 0x20)
			putchar(*v);
	putchar('"');
}

static void print_result(const struct gen *g)
{
	const struct opts *o = g->o;
	const struct hist *h = &g->h;
	double window = g->measuring ? (double)(g->to.wall_ns - g->from.wall_ns) / 1e9 : 0;
	double rate = window > 0 ? (double)g->msgs / window : 0, msgs = (double)g->msgs;
	bool srv_ok = g->measuring && g->from.server_ok && g->to.server_ok;
	struct cpu_split self = { 0 }, srv = { 0 };
	double srv_all;

	if (g->measuring)
		self = cpu_since(&g->from.self, &g->to.self);
	if (srv_ok)
		srv = cpu_since(&g->from.server, &g->to.server);
	srv_all = (double)(srv.user + srv.sys);

	printf("{\"bench\":\"echo\",\"client\":\"echo-loadgen\"");
	print_json_str("runtime", o->label);
	print_json_str("backend", o->backend);
	if (o->workers)
		printf(",\"workers\":%ld", o->workers);
	else
		printf(",\"workers\":null");
	printf(",\"connections\":%ld,\"size\":%ld,\"duration_s\":%g,\"warmup_s\":%g,"
	       "\"window_s\":%.4f,\"msgs_all\":%llu,\"msgs\":%llu,\"msgs_per_sec\":%.1f,\"bytes_per_sec\":%.1f,"
	       "\"min_ns\":%llu,\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,\"p999_ns\":%llu,"
	       "\"max_ns\":%llu,\"mean_ns\":%llu",
	       o->connections, o->size, o->duration, o->warmup, window,
	       (unsigned long long)g->msgs_all, (unsigned long long)g->msgs, rate, rate * (double)o->size,
	       (unsigned long long)(h->count ? h->min : 0),
	       (unsigned long long)hist_quantile(h, 0.50),
	       (unsigned long long)hist_quantile(h, 0.90),
	       (unsigned long long)hist_quantile(h, 0.99),
	       (unsigned long long)hist_quantile(h, 0.999),
	       (unsigned long long)h->max,
	       (unsigned long long)(h->count ? h->sum / h->count : 0));
	if (msgs > 0)
		printf(",\"client_cpu_ns_per_msg\":%.1f,\"client_user_ns_per_msg\":%.1f,"
		       "\"client_sys_ns_per_msg\":%.1f,\"client_cpu_util\":%.3f",
		       (double)(self.user + self.sys) / msgs, (double)self.user / msgs,
		       (double)self.sys / msgs, (double)(self.user + self.sys) / 1e9 / window);
	else
		printf(",\"client_cpu_ns_per_msg\":null,\"client_user_ns_per_msg\":null,"
		       "\"client_sys_ns_per_msg\":null,\"client_cpu_util\":null");
	if (msgs > 0 && srv_ok)
		printf(",\"server_pid\":%ld,\"server_cpu_ns_per_msg\":%.1f,\"server_user_ns_per_msg\":%.1f,"
		       "\"server_sys_ns_per_msg\":%.1f,\"server_cpu_util\":%.3f",
		       o->server_pid, srv_all / msgs, (double)srv.user / msgs, (double)srv.sys / msgs,
		       srv_all / 1e9 / window);
	else
		printf(",\"server_pid\":%s,\"server_cpu_ns_per_msg\":null,\"server_user_ns_per_msg\":null,"
		       "\"server_sys_ns_per_msg\":null,\"server_cpu_util\":null",
		       o->server_pid ? "0" : "null");
	print_fairness(g);
	printf(",\"errors\":%llu}\n", (unsigned long long)g->errors);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct opts o;
	struct gen *g;
	socklen_t len;
	struct cpu_split cpu;

	parse_opts(argc, argv, &o);
	resolve(o.addr, &ss, &len);
	if (o.server_pid && !server_cpu(o.server_pid, &cpu)) {
		fprintf(stderr, PROG ": --server-pid %ld: cannot read /proc/%ld/stat\n",
			o.server_pid, o.server_pid);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	echo_raise_nofile();
	g = calloc(1, sizeof(*g));
	if (!g)
		return perror(PROG ": calloc"), 1;
	g->o = &o;
	g->c = calloc((size_t)o.connections, sizeof(*g->c));
	g->payload = malloc((size_t)o.size);
	g->rbuf = malloc((size_t)o.size);
	g->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!g->c || !g->payload || !g->rbuf || g->ep < 0)
		return perror(PROG ": setup"), 1;
	echo_fill(g->payload, (size_t)o.size);
	hist_init(&g->h);
	for (long i = 0; i < o.connections; i++)
		open_conn(g, &g->c[i], &ss, len, i);
	g->live = o.connections;
	run(g);
	print_result(g);
	return g->errors ? 1 : 0;
}
