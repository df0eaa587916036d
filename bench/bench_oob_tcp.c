// SPDX-License-Identifier: MIT
/*
 * The benchmark's side channel: one TCP connection between server (rank 0)
 * and client (rank 1), used only at set-up and between sizes, never while
 * measuring.  Like perftest: no address = server, address = client.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "flexrr/log.h"

#define HELLO_MAGIC 0x46524242u /* "FRBB" */
#define ACCEPT_MS 120000

struct hello {
	uint32_t magic;
	uint32_t test;
	uint32_t backend;
	uint32_t all;
	uint64_t job_token; /* server -> client */
	uint64_t size;	    /* client -> server: the client's run rules */
	int64_t iters;
};

struct tcp_oob {
	struct frr_oob base;
	int fd;
};

static int io_full(int fd, void *buf, size_t len, int timeout_ms, int out)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd,
				      .events = out ? POLLOUT : POLLIN };
		int r = poll(&pfd, 1, timeout_ms);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -errno : -ETIMEDOUT;
		n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int tcp_allgather(struct frr_oob *oob, const void *mine, size_t len,
			 void *all, int timeout_ms)
{
	struct tcp_oob *t = (struct tcp_oob *)oob;
	char *a = all;
	int ret;

	if (timeout_ms <= 0)
		timeout_ms = 30000;
	ret = io_full(t->fd, (void *)mine, len, timeout_ms, 1);
	if (!ret && len)
		ret = io_full(t->fd, a + (size_t)(1 - oob->rank) * len, len,
			      timeout_ms, 0);
	if (!ret && !len) { /* barrier: one byte each way */
		char b = 0;

		ret = io_full(t->fd, &b, 1, timeout_ms, 1);
		if (!ret)
			ret = io_full(t->fd, &b, 1, timeout_ms, 0);
	}
	if (ret) {
		frr_err("bench: side channel to the %s failed: %s",
			oob->rank ? "server" : "client", strerror(-ret));
		return ret;
	}
	if (len)
		memcpy(a + (size_t)oob->rank * len, mine, len);
	return 0;
}

static int tcp_barrier(struct frr_oob *oob, int timeout_ms)
{
	return tcp_allgather(oob, NULL, 0, NULL, timeout_ms);
}

static void tcp_close(struct frr_oob *oob)
{
	struct tcp_oob *t = (struct tcp_oob *)oob;

	close(t->fd);
	free(t);
}

static const struct frr_oob_ops tcp_ops = {
	.size = sizeof(struct frr_oob_ops),
	.allgather = tcp_allgather,
	.barrier = tcp_barrier,
	.close = tcp_close,
};

static int serve(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	struct pollfd pfd;
	int one = 1, lfd, fd, r;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		r = -errno;
		frr_err("bench: cannot listen on TCP port %d: %s (pick another "
			"with -p)",
			port, strerror(errno));
		close(lfd);
		return r;
	}
	fprintf(stderr, "flexrr bench: waiting for the client on port %d\n",
		port);
	pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
	r = poll(&pfd, 1, ACCEPT_MS);
	fd = r > 0 ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
	if (fd < 0) {
		r = r > 0 ? -errno : -ETIMEDOUT;
		frr_err("bench: no client connected within %d s",
			ACCEPT_MS / 1000);
	}
	close(lfd);
	return fd < 0 ? r : fd;
}

static int dial(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	char ps[16];
	int fd = -1, r;

	snprintf(ps, sizeof(ps), "%d", port);
	r = getaddrinfo(host, ps, &hints, &res);
	if (r) {
		frr_err("bench: cannot resolve '%s': %s", host,
			gai_strerror(r));
		return -EHOSTUNREACH;
	}
	/* the server may start a moment after us: retry for 10 s */
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		for (ai = res; ai && fd < 0; ai = ai->ai_next) {
			fd = socket(ai->ai_family,
				    ai->ai_socktype | SOCK_CLOEXEC, 0);
			if (fd >= 0 &&
			    connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		frr_err("bench: cannot connect to %s port %d (is the server "
			"running, same -p?)",
			host, port);
	return fd < 0 ? -ECONNREFUSED : fd;
}

int bench_oob_tcp(struct bench_params *p, struct frr_oob **out)
{
	struct hello mine = { .magic = HELLO_MAGIC,
			      .test = p->test,
			      .backend = p->backend,
			      .all = (uint32_t)p->all,
			      .size = p->size,
			      .iters = p->iters };
	struct hello theirs;
	struct tcp_oob *t;
	int fd, one = 1, ret;

	fd = p->peer ? dial(p->peer, p->port) : serve(p->port);
	if (fd < 0)
		return fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!p->peer && getrandom(&mine.job_token, 8, 0) != 8)
		mine.job_token = (uint64_t)time(NULL) ^ (uint64_t)getpid()
							    << 20;
	mine.job_token |= 1;
	ret = io_full(fd, &mine, sizeof(mine), 30000, 1);
	if (!ret)
		ret = io_full(fd, &theirs, sizeof(theirs), 30000, 0);
	if (ret) {
		frr_err("bench: side-channel handshake failed: %s",
			strerror(-ret));
		goto close_fd;
	}
	if (theirs.magic != HELLO_MAGIC || theirs.test != mine.test ||
	    theirs.backend != mine.backend) {
		frr_err(
		    "bench: the other side runs %s on backend %s, this side "
		    "%s on %s; start both with the same test and --backend",
		    theirs.magic == HELLO_MAGIC ? bench_test_name(theirs.test)
						: "something else",
		    frr_tp_backend_name(theirs.backend),
		    bench_test_name(mine.test),
		    frr_tp_backend_name(mine.backend));
		ret = -EPROTO;
		goto close_fd;
	}
	if (!p->peer &&
	    (theirs.size != p->size || theirs.all != (uint32_t)p->all ||
	     theirs.iters != p->iters)) {
		if (!theirs.size || theirs.size > ((uint64_t)1 << 30)) {
			ret = -EPROTO;
			goto close_fd;
		}
		fprintf(stderr, "flexrr bench: using the client's sizes and "
				"iterations\n");
		p->size = (size_t)theirs.size;
		p->all = (int)theirs.all;
		p->iters = (long)theirs.iters;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = -ENOMEM;
		goto close_fd;
	}
	t->fd = fd;
	t->base.ops = &tcp_ops;
	t->base.rank = p->peer ? 1 : 0;
	t->base.size = 2;
	t->base.job_token = p->peer ? theirs.job_token : mine.job_token;
	*out = &t->base;
	return 0;

close_fd:
	close(fd);
	return ret;
}
