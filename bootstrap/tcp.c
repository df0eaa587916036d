// SPDX-License-Identifier: MIT
/*
 * TCP rendezvous: the out-of-band channel of launcher-started ranks, of
 * local `flexrr run -n P` jobs and of `flexrr bench`'s two sides.  Rank 0
 * listens; every other rank connects and says hello with the job token, its
 * rank, the job size and hashes of its binary and of the run arguments.
 * Rank 0 refuses (and keeps waiting past) connections with another token; a
 * member with another binary, other arguments or another job size fails the
 * job with a message naming it.  Collectives are star-shaped through rank 0
 * (set-up only, never hot).
 *
 * Wire format (host byte order: every rank of a job runs the same build):
 *   joiner -> rank 0   struct rdv_hello
 *   rank 0 -> joiner   struct rdv_reply (status; the token when rank 0
 *                      hands it out, FRR_TCP cfg job_token 0 on the joiner)
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"

#define RDV_MAGIC 0x46525256u /* "FRRV" */
#define RDV_VERSION 2
#define RDV_DEFAULT_COLL_MS 30000
#define RDV_HINT "--rendezvous HOST:PORT"

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
	uint64_t token; /* 0: asks rank 0 to hand the token out */
	int32_t rank;
	int32_t size;
	uint64_t binhash;
	uint64_t argshash;
};

struct rdv_reply {
	uint32_t magic;
	int32_t status;
	uint64_t token; /* handed out, else 0 */
};

struct rdv {
	struct frr_oob oob;
	int *fds; /* rank 0: fds[r] to rank r; others: fds[0] */
};

/* Hash one file into h (chained FNV-1a); 0 if it cannot be read. */
static uint64_t hash_file(const char *path, uint64_t h)
{
	unsigned char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		h = frr_fnv1a64(buf, (size_t)n, h);
	close(fd);
	return h;
}

uint64_t frr_binary_hash(void)
{
	static uint64_t cached;
	const char *fake = getenv("FLEXRR_TEST_BINHASH"); /* tests only */
	char exe[PATH_MAX], lib[PATH_MAX];
	Dl_info di;
	uint64_t h;

	if (fake)
		return strtoull(fake, NULL, 0);
	if (cached)
		return cached;
	h = hash_file("/proc/self/exe", 0);
	if (!h)
		return 1;
	/* libflexrr.so: its code is part of "the same build" too */
	if (dladdr((void *)frr_binary_hash, &di) && di.dli_fname &&
	    realpath("/proc/self/exe", exe) && realpath(di.dli_fname, lib) &&
	    strcmp(exe, lib))
		h = hash_file(lib, h);
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

struct rdv_addr {
	struct sockaddr_storage sa;
	socklen_t len;
};

/* HOST:PORT, [V6]:PORT or *:PORT (listen on every IPv4 interface).  An
 * IPv4 address of HOST is preferred when it has both kinds. */
static int parse_addr(const char *addr, int passive, struct rdv_addr *out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM },
			*res = NULL, *pick;
	const char *colon = addr ? strrchr(addr, ':') : NULL;
	char host[256];
	size_t hl;
	long port;
	char *end;

	if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(host))
		goto bad;
	port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		goto bad;
	hl = (size_t)(colon - addr);
	if (addr[0] == '[' && hl > 2 && addr[hl - 1] == ']')
		memcpy(host, addr + 1, hl -= 2);
	else
		memcpy(host, addr, hl);
	host[hl] = 0;
	if (!strcmp(host, "*")) {
		if (!passive)
			goto bad;
		hints.ai_family = AF_INET;
		hints.ai_flags = AI_PASSIVE;
	}
	if (getaddrinfo(hints.ai_flags ? NULL : host, colon + 1, &hints,
			&res) ||
	    !res) {
		frr_err("rendezvous address %s: cannot resolve host '%s'", addr,
			host);
		return -EINVAL;
	}
	for (pick = res; pick && pick->ai_family != AF_INET;)
		pick = pick->ai_next;
	if (!pick)
		pick = res;
	memcpy(&out->sa, pick->ai_addr, pick->ai_addrlen);
	out->len = pick->ai_addrlen;
	freeaddrinfo(res);
	return 0;
bad:
	frr_err("rendezvous address '%s' is not HOST:PORT (e.g. "
		"10.0.0.1:29500)",
		addr ? addr : "(none)");
	return -EINVAL;
}

static const char *peer_name(const struct sockaddr_storage *sa, socklen_t len,
			     char *buf, size_t n)
{
	if (getnameinfo((const struct sockaddr *)sa, len, buf, (socklen_t)n,
			NULL, 0, NI_NUMERICHOST))
		snprintf(buf, n, "?");
	return buf;
}

static int rdv_allgather(struct frr_oob *oob, const void *mine, size_t len,
			 void *all, int timeout_ms)
{
	struct rdv *r = (struct rdv *)oob;
	double dl = frr_now_s() +
		    (timeout_ms > 0 ? timeout_ms : RDV_DEFAULT_COLL_MS) / 1e3;
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

static const char *hint(const struct frr_tcp_cfg *cfg)
{
	return cfg->addr_hint ? cfg->addr_hint : RDV_HINT;
}

static int rdv_listen(const struct frr_tcp_cfg *cfg, int *fd_out)
{
	struct rdv_addr a;
	int fd, one = 1, err;

	err = parse_addr(cfg->addr, 1, &a);
	if (err)
		return err;
	fd = socket(a.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a.sa, a.len) || listen(fd, 64)) {
		err = -errno;
		frr_err("rank 0 cannot listen on the rendezvous address %s: "
			"%s; rank 0 must run on that host and the port must be "
			"free (pick another with %s)",
			cfg->addr, strerror(-err), hint(cfg));
		close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

/* Rank 0's verdict on one hello (RDV_OK: rank h->rank may join). */
static enum rdv_status check_hello(const struct rdv *r,
				   const struct frr_tcp_cfg *cfg, int hand_out,
				   const struct rdv_hello *h)
{
	if (h->magic != RDV_MAGIC || h->version != RDV_VERSION ||
	    (h->token != r->oob.job_token && !(hand_out && !h->token)))
		return RDV_BAD_TOKEN;
	if (h->size != r->oob.size)
		return RDV_BAD_SIZE;
	if (h->rank <= 0 || h->rank >= r->oob.size || r->fds[h->rank] >= 0)
		return RDV_BAD_RANK;
	if (h->binhash != cfg->binary_hash)
		return RDV_BAD_BINARY;
	if (h->argshash != cfg->args_hash)
		return RDV_BAD_ARGS;
	return RDV_OK;
}

/* Accept one connection and answer its hello: 1 = a rank joined, 0 = a
 * stray connection was turned away, < 0 = the job fails. */
static int serve_one(struct rdv *r, const struct frr_tcp_cfg *cfg, int hand_out,
		     int lfd)
{
	struct rdv_hello h;
	struct rdv_reply rep = { RDV_MAGIC, RDV_OK, 0 };
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	char name[64];
	int fd, one = 1;

	fd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
	if (fd < 0)
		return 0;
	if (io_full(fd, &h, sizeof(h), 0, frr_now_s() + 2.0))
		rep.status = RDV_BAD_TOKEN;
	else
		rep.status = check_hello(r, cfg, hand_out, &h);
	if (rep.status == RDV_OK && hand_out && !h.token)
		rep.token = r->oob.job_token;
	io_full(fd, &rep, sizeof(rep), 1, frr_now_s() + 2.0);
	peer_name(&peer, pl, name, sizeof(name));
	if (rep.status == RDV_BAD_TOKEN) {
		/* a stray connection: ignore it, keep waiting */
		frr_warn("rendezvous: refused a connection from %s: "
			 "wrong job token",
			 name);
		close(fd);
		return 0;
	}
	if (rep.status != RDV_OK) {
		frr_err("rendezvous: rank %d (from %s) runs %s; start "
			"every rank with the same flexrr build, "
			"options and -n",
			h.rank, name, rdv_status_str[rep.status]);
		close(fd);
		return -EINVAL;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r->fds[h.rank] = fd;
	return 1;
}

static int serve(struct rdv *r, const struct frr_tcp_cfg *cfg, int lfd,
		 double dl)
{
	int need = r->oob.size - 1, hand_out = !cfg->job_token;

	if (hand_out) /* rank 0 makes the token that it hands out */
		r->oob.job_token = frr_job_token_random();
	while (need > 0) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		int ms = left_ms(dl), pr;

		pr = ms ? poll(&pfd, 1, ms) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			frr_err("rendezvous: %d of %d ranks did not connect to "
				"rank 0 in time; check that every rank was "
				"started with the same address (%s) and job "
				"token",
				need, r->oob.size - 1, hint(cfg));
			return -ETIMEDOUT;
		}
		pr = serve_one(r, cfg, hand_out, lfd);
		if (pr < 0)
			return pr;
		need -= pr;
	}
	return 0;
}

/* Connect to rank 0, retrying until the deadline (it may start later). */
static int dial(const struct frr_tcp_cfg *cfg, double dl)
{
	struct rdv_addr a;
	int err = parse_addr(cfg->addr, 0, &a), fd, one = 1;

	if (err)
		return err;
	for (;;) {
		fd = socket(a.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (!connect(fd, (struct sockaddr *)&a.sa, a.len))
			break;
		err = -errno;
		close(fd);
		if (!left_ms(dl)) {
			frr_err("rendezvous address %s is unreachable (%s): "
				"is rank 0 running there, and is the address "
				"right (%s)?",
				cfg->addr, strerror(-err), hint(cfg));
			return -EHOSTUNREACH;
		}
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int join(struct rdv *r, const struct frr_tcp_cfg *cfg, double dl)
{
	struct rdv_hello h = {
		.magic = RDV_MAGIC,
		.version = RDV_VERSION,
		.token = r->oob.job_token,
		.rank = r->oob.rank,
		.size = r->oob.size,
		.binhash = cfg->binary_hash,
		.argshash = cfg->args_hash,
	};
	struct rdv_reply rep;
	int err, fd = dial(cfg, dl);

	if (fd < 0)
		return fd;
	err = io_full(fd, &h, sizeof(h), 1, dl);
	if (!err)
		err = io_full(fd, &rep, sizeof(rep), 0, dl);
	if (err || rep.magic != RDV_MAGIC) {
		frr_err("rendezvous with rank 0 at %s failed (%s)", cfg->addr,
			err ? strerror(-err) : "bad reply");
		close(fd);
		return err ? err : -EPROTO;
	}
	if (rep.status != RDV_OK) {
		frr_err("rank 0 at %s refused rank %d: %s; start every rank "
			"with the same flexrr build, options, -n and job token",
			cfg->addr, r->oob.rank,
			rep.status > 0 && rep.status <= RDV_BAD_RANK
			    ? rdv_status_str[rep.status]
			    : "unknown reason");
		close(fd);
		return -EACCES;
	}
	if (!r->oob.job_token) {
		if (!rep.token) {
			frr_err("rank 0 at %s handed out no job token: it "
				"expects one, give the same one to every rank",
				cfg->addr);
			close(fd);
			return -EACCES;
		}
		r->oob.job_token = rep.token;
	}
	r->fds[0] = fd;
	return 0;
}

int frr_tcp_open(const struct frr_tcp_cfg *cfg, struct frr_oob **oob)
{
	struct rdv *r;
	double dl;
	int err = 0, lfd = cfg->listen_fd;

	if (cfg->size < 1 || cfg->rank < 0 || cfg->rank >= cfg->size) {
		frr_err("frr_tcp_open: rank %d of %d is out of range",
			cfg->rank, cfg->size);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->oob =
	    (struct frr_oob){ &rdv_ops, cfg->rank, cfg->size, cfg->job_token };
	r->fds = malloc((size_t)cfg->size * sizeof(int));
	if (!r->fds) {
		free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < cfg->size; i++)
		r->fds[i] = -1;
	dl = frr_now_s() + cfg->timeout_ms / 1000.0;
	if (cfg->rank == 0) {
		if (lfd < 0 && cfg->size > 1)
			err = rdv_listen(cfg, &lfd);
		if (!err && cfg->size > 1)
			err = serve(r, cfg, lfd, dl);
		if (lfd >= 0)
			close(lfd);
	} else {
		err = join(r, cfg, dl);
	}
	if (err) {
		r->oob.size = cfg->rank == 0 ? cfg->size : 1;
		rdv_close(&r->oob);
		return err;
	}
	*oob = &r->oob;
	return 0;
}
