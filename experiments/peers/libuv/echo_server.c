// SPDX-License-Identifier: MIT
/*
 * echo-server-libuv - the libuv peer of echo-bench's server (Debian's
 * libuv1-dev, 1.44).
 *
 * libuv runs one event loop per thread and has no work stealing; this
 * server is one loop on one thread (no --workers: it is single-threaded,
 * and says so in its startup line).  Per connection: read into a 16 KB
 * buffer of its own (as blitz's and Tokio's servers do), write it back with
 * uv_try_write; only when the socket buffer is full does the rest go to
 * uv_write, and reading pauses until that write completes, so the buffer is
 * never overwritten while the kernel still needs it.  TCP_NODELAY on every
 * connection.
 *
 * The address goes to stdout (one line); SIGINT or SIGTERM stops the loop.
 *
 * usage: echo-server-libuv [--listen IP:PORT]   (default 127.0.0.1:0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define PROG	"echo-server-libuv"
#define BUF	16384

struct conn {
	uv_tcp_t tcp;			/* first: the handle's address is the conn's */
	uv_write_t wr;
	char buf[BUF];
};

static uv_loop_t *loop;
static uv_tcp_t server;
static uv_signal_t sigint, sigterm;

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

static void on_close(uv_handle_t *h)
{
	free(h);		/* h is &conn->tcp, the start of the conn */
}

static void alloc_buf(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
	struct conn *c = (struct conn *)h;

	b->base = c->buf;
	b->len = sizeof(c->buf);
}

/* The slow path is over: the whole message is out, read again. */
static void on_write(uv_write_t *w, int status)
{
	struct conn *c = w->data;

	if (status < 0 || uv_read_start((uv_stream_t *)&c->tcp, alloc_buf, on_read) < 0)
		uv_close((uv_handle_t *)&c->tcp, on_close);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = (struct conn *)s;
	uv_buf_t rest;
	int done;

	if (n == 0)			/* EAGAIN: nothing this time */
		return;
	if (n < 0) {			/* UV_EOF or an error */
		uv_close((uv_handle_t *)s, on_close);
		return;
	}
	done = uv_try_write(s, &(uv_buf_t){ .base = b->base, .len = (size_t)n }, 1);
	if (done == n)
		return;
	if (done < 0 && done != UV_EAGAIN) {
		uv_close((uv_handle_t *)s, on_close);
		return;
	}
	/* The socket buffer is full: write the rest, stop reading meanwhile. */
	done = done < 0 ? 0 : done;
	rest = uv_buf_init(b->base + done, (unsigned)(n - done));
	uv_read_stop(s);
	c->wr.data = c;
	if (uv_write(&c->wr, s, &rest, 1, on_write) < 0)
		uv_close((uv_handle_t *)s, on_close);
}

static void on_connection(uv_stream_t *l, int status)
{
	struct conn *c;

	if (status < 0)
		return;
	c = malloc(sizeof(*c));
	if (!c)
		return;
	uv_tcp_init(loop, &c->tcp);
	if (uv_accept(l, (uv_stream_t *)&c->tcp) < 0) {
		uv_close((uv_handle_t *)&c->tcp, on_close);
		return;
	}
	uv_tcp_nodelay(&c->tcp, 1);
	if (uv_read_start((uv_stream_t *)&c->tcp, alloc_buf, on_read) < 0)
		uv_close((uv_handle_t *)&c->tcp, on_close);
}

static void on_signal(uv_signal_t *h, int signum)
{
	uv_stop(loop);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [--listen IP:PORT]   (default 127.0.0.1:0)\n"
		"A single-threaded libuv echo server (one event loop; no --workers).\n");
}

static const char *parse_args(int argc, char **argv)
{
	const char *listen = "127.0.0.1:0";

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(argv[i], "--listen") && i + 1 < argc) {
			listen = argv[++i];
		} else if (!strncmp(argv[i], "--listen=", 9)) {
			listen = argv[i] + 9;
		} else {
			fprintf(stderr, PROG ": unknown option or missing value: %s\n", argv[i]);
			usage(stderr);
			exit(2);
		}
	}
	return listen;
}

/* "1.2.3.4:80" or "[::1]:80" */
static int parse_addr(const char *s, struct sockaddr_storage *ss)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;
	size_t hl;

	if (!colon)
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (*end || colon[1] == '\0' || port < 0 || port > 65535)
		return -1;
	hl = (size_t)(colon - s);
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		s++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)ss) == 0)
		return 0;
	return uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)ss) == 0 ? 0 : -1;
}

static void print_address(void)
{
	struct sockaddr_storage ss;
	int len = sizeof(ss);
	char ip[64];

	uv_tcp_getsockname(&server, (struct sockaddr *)&ss, &len);
	if (ss.ss_family == AF_INET6) {
		uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof(ip));
		printf("[%s]:%d\n", ip, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	} else {
		uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof(ip));
		printf("%s:%d\n", ip, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	}
	fflush(stdout);
}

static void close_any(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		uv_close(h, h->type == UV_TCP && h != (uv_handle_t *)&server ? on_close : NULL);
}

int main(int argc, char **argv)
{
	const char *listen = parse_args(argc, argv);
	struct sockaddr_storage ss;
	int r;

	if (parse_addr(listen, &ss) < 0) {
		fprintf(stderr, PROG ": --listen %s: expected IP:PORT\n", listen);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	loop = uv_default_loop();
	uv_tcp_init(loop, &server);
	r = uv_tcp_bind(&server, (struct sockaddr *)&ss, 0);
	if (!r)
		r = uv_listen((uv_stream_t *)&server, 4096, on_connection);
	if (r) {
		fprintf(stderr, PROG ": %s: %s\n", listen, uv_strerror(r));
		return 1;
	}
	uv_signal_init(loop, &sigint);
	uv_signal_start(&sigint, on_signal, SIGINT);
	uv_signal_init(loop, &sigterm);
	uv_signal_start(&sigterm, on_signal, SIGTERM);
	print_address();
	fprintf(stderr, PROG ": serving on libuv %s (one thread)\n", uv_version_string());
	uv_run(loop, UV_RUN_DEFAULT);
	/* Stopped by a signal: close every handle, let the closes run. */
	uv_walk(loop, close_any, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	return uv_loop_close(loop) ? 1 : 0;
}
