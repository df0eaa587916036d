// SPDX-License-Identifier: MIT
/*
 * TCP rendezvous: the out-of-band channel of launcher-started ranks (and of
 * local `flexrr run -n P` jobs).  Rank 0 listens; every other rank connects
 * and says hello with the job token, its rank, the job size and hashes of its
 * binary and of the run arguments.  Rank 0 refuses (and keeps waiting past)
 * connections with another token; a member with another binary, other
 * arguments or another job size fails the job with a message naming it.
 * Collectives are star-shaped through rank 0 (set-up only, never hot).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "rt.h"

#define RDV_MAGIC 0x46525256u /* "FRRV" */
#define RDV_VERSION 1

enum rdv_status {
	RDV_OK = 0,
	RDV_BAD_TOKEN = 1,
	RDV_BAD_BINARY = 2,
	RDV_BAD_ARGS = 3,
	RDV_BAD_SIZE = 4,
	RDV_BAD_RANK = 5,
};

static const char *const rdv_status_str[] = {
	"ok",
	"wrong job token",
	"a different flexrr binary than rank 0's",
	"different run arguments than rank 0's",
	"a different job size than rank 0's",
	"a rank that is out of range or already taken",
};

struct rdv_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t token;
	int32_t rank;
	int32_t size;
	uint64_t binhash;
	uint64_t argshash;
};

struct rdv_reply {
	uint32_t magic;
	int32_t status;
};

struct rdv {
	struct frr_oob oob;
	int *fds; /* rank 0: fds[r] to rank r; others: fds[0] */
};

uint64_t frr_rdv_binary_hash(void)
{
	static uint64_t cached;
	const char *fake = getenv("FLEXRR_TEST_BINHASH"); /* tests only */
	unsigned char buf[65536];
	uint64_t h = 0;
	ssize_t n;
	int fd;

	if (fake)
		return strtoull(fake, NULL, 0);
	if (cached)
		return cached;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = frr_fnv1a64(buf, (size_t)n, h);
	close(fd);
	cached = h ? h : 1;
	return cached;
}

static int left_ms(double deadline)
{
	double l = (deadline - frr_now_s()) * 1000;

	return l <= 0 ? 0 : (int)l + 1;
}

/* Full read/write with a deadline. */
static int io_full(int fd, void *buf, size_t len, int wr, double deadline)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { fd, wr ? POLLOUT : POLLIN, 0 };
		int ms = left_ms(deadline), r;
		ssize_t n;

		if (!ms)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ETIMEDOUT;
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int parse_addr(const char *addr, struct sockaddr_in *sa)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints = { .ai_family = AF_INET }, *res = NULL;
	long port;
	char *end;

	if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(host))
		goto bad;
	port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		goto bad;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	if (getaddrinfo(host, NULL, &hints, &res) || !res) {
		frr_err("rendezvous address %s: cannot resolve host '%s'", addr,
			host);
		return -EINVAL;
	}
	*sa = *(struct sockaddr_in *)res->ai_addr;
	sa->sin_port = htons((uint16_t)port);
	freeaddrinfo(res);
	return 0;
bad:
	frr_err("rendezvous address '%s' is not HOST:PORT (e.g. "
		"10.0.0.1:29500)",
		addr);
	return -EINVAL;
}

static int rdv_allgather(struct frr_oob *oob, const void *mine, size_t len,
			 void *all, int timeout_ms)
{
	struct rdv *r = (struct rdv *)oob;
	double dl = frr_now_s() + timeout_ms / 1000.0;
	int err = 0;

	if (oob->rank == 0) {
		memcpy(all, mine, len);
		for (int p = 1; p < oob->size && !err; p++) {
			err = io_full(r->fds[p], (char *)all + (size_t)p * len,
				      len, 0, dl);
			if (err)
				frr_err("rendezvous: rank %d did not send its "
					"share (%s): it failed or was killed",
					p, strerror(-err));
		}
		for (int p = 1; p < oob->size && !err; p++)
			err = io_full(r->fds[p], all, len * oob->size, 1, dl);
	} else {
		err = io_full(r->fds[0], (void *)mine, len, 1, dl);
		if (!err)
			err = io_full(r->fds[0], all, len * oob->size, 0, dl);
		if (err)
			frr_err("rendezvous: exchange with rank 0 failed (%s): "
				"rank 0 failed or was killed",
				strerror(-err));
	}
	return err;
}

static int rdv_barrier(struct frr_oob *oob, int timeout_ms)
{
	char one = 1, *all = calloc((size_t)oob->size, 1);
	int err;

	if (!all)
		return -ENOMEM;
	err = rdv_allgather(oob, &one, 1, all, timeout_ms);
	free(all);
	return err;
}

static void rdv_close(struct frr_oob *oob)
{
	struct rdv *r = (struct rdv *)oob;
	int n = oob->rank == 0 ? oob->size : 1;

	for (int i = 0; i < n; i++)
		if (r->fds[i] >= 0)
			close(r->fds[i]);
	free(r->fds);
	free(r);
}

static const struct frr_oob_ops rdv_ops = {
	.size = sizeof(struct frr_oob_ops),
	.allgather = rdv_allgather,
	.barrier = rdv_barrier,
	.close = rdv_close,
};

static int rdv_listen(const char *addr, int *fd_out)
{
	struct sockaddr_in sa;
	int fd, one = 1, err;

	err = parse_addr(addr, &sa);
	if (err)
		return err;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) {
		err = -errno;
		frr_err("rank 0 cannot listen on the rendezvous address %s: "
			"%s; rank 0 must run on that host and the port must be "
			"free (pick another with --rendezvous HOST:PORT)",
			addr, strerror(-err));
		close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

static int serve(struct rdv *r, int lfd, uint64_t binhash, uint64_t argshash,
		 double dl)
{
	int need = r->oob.size - 1;

	while (need > 0) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		struct rdv_hello h;
		struct rdv_reply rep = { RDV_MAGIC, RDV_OK };
		struct sockaddr_in peer;
		socklen_t pl = sizeof(peer);
		int ms = left_ms(dl), fd, pr;

		pr = ms ? poll(&pfd, 1, ms) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			frr_err("rendezvous: %d of %d ranks did not connect to "
				"rank 0 in time; check that every rank was "
				"started with the same --rendezvous address "
				"and job token",
				need, r->oob.size - 1);
			return -ETIMEDOUT;
		}
		fd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (io_full(fd, &h, sizeof(h), 0, frr_now_s() + 2.0) ||
		    h.magic != RDV_MAGIC || h.version != RDV_VERSION ||
		    h.token != r->oob.job_token)
			rep.status = RDV_BAD_TOKEN;
		else if (h.size != r->oob.size)
			rep.status = RDV_BAD_SIZE;
		else if (h.rank <= 0 || h.rank >= r->oob.size ||
			 r->fds[h.rank] >= 0)
			rep.status = RDV_BAD_RANK;
		else if (h.binhash != binhash)
			rep.status = RDV_BAD_BINARY;
		else if (h.argshash != argshash)
			rep.status = RDV_BAD_ARGS;
		io_full(fd, &rep, sizeof(rep), 1, frr_now_s() + 2.0);
		if (rep.status == RDV_BAD_TOKEN) {
			/* a stray connection: ignore it, keep waiting */
			frr_warn("rendezvous: refused a connection from %s: "
				 "wrong job token",
				 inet_ntoa(peer.sin_addr));
			close(fd);
			continue;
		}
		if (rep.status != RDV_OK) {
			frr_err("rendezvous: rank %d (from %s) runs %s; start "
				"every rank with the same flexrr build, "
				"options and -n",
				h.rank, inet_ntoa(peer.sin_addr),
				rdv_status_str[rep.status]);
			close(fd);
			return -EINVAL;
		}
		r->fds[h.rank] = fd;
		need--;
	}
	return 0;
}

static int join(struct rdv *r, const char *addr, uint64_t binhash,
		uint64_t argshash, double dl)
{
	struct sockaddr_in sa;
	struct rdv_hello h = {
		.magic = RDV_MAGIC,
		.version = RDV_VERSION,
		.token = r->oob.job_token,
		.rank = r->oob.rank,
		.size = r->oob.size,
		.binhash = binhash,
		.argshash = argshash,
	};
	struct rdv_reply rep;
	int err = parse_addr(addr, &sa), fd = -1;

	if (err)
		return err;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		err = -errno;
		close(fd);
		fd = -1;
		if (!left_ms(dl)) {
			frr_err("rendezvous address %s is unreachable (%s): "
				"is rank 0 running there, and is the address "
				"right (--rendezvous / FLEXRR_RENDEZVOUS)?",
				addr, strerror(-err));
			return -EHOSTUNREACH;
		}
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
	}
	err = io_full(fd, &h, sizeof(h), 1, dl);
	if (!err)
		err = io_full(fd, &rep, sizeof(rep), 0, dl);
	if (err || rep.magic != RDV_MAGIC) {
		frr_err("rendezvous with rank 0 at %s failed (%s)", addr,
			err ? strerror(-err) : "bad reply");
		close(fd);
		return err ? err : -EPROTO;
	}
	if (rep.status != RDV_OK) {
		frr_err("rank 0 at %s refused rank %d: %s; start every rank "
			"with the same flexrr build, options, -n and job token",
			addr, r->oob.rank,
			rep.status > 0 && rep.status <= RDV_BAD_RANK
			    ? rdv_status_str[rep.status]
			    : "unknown reason");
		close(fd);
		return -EACCES;
	}
	r->fds[0] = fd;
	return 0;
}

int frr_rdv_open(const char *addr, int listen_fd, int rank, int size,
		 uint64_t token, uint64_t binhash, uint64_t argshash,
		 int timeout_ms, struct frr_oob **oob)
{
	struct rdv *r = calloc(1, sizeof(*r));
	double dl = frr_now_s() + timeout_ms / 1000.0;
	int err = 0, lfd = listen_fd;

	if (!r)
		return -ENOMEM;
	r->oob = (struct frr_oob){ &rdv_ops, rank, size, token };
	r->fds = malloc((size_t)size * sizeof(int));
	if (!r->fds) {
		free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < size; i++)
		r->fds[i] = -1;
	if (rank == 0) {
		if (lfd < 0 && size > 1)
			err = rdv_listen(addr, &lfd);
		if (!err && size > 1)
			err = serve(r, lfd, binhash, argshash, dl);
		if (lfd >= 0)
			close(lfd);
	} else {
		err = join(r, addr, binhash, argshash, dl);
	}
	if (err) {
		r->oob.size = rank == 0 ? size : 1;
		rdv_close(&r->oob);
		return err;
	}
	*oob = &r->oob;
	return 0;
}
