// SPDX-License-Identifier: MIT
/*
 * TCP rendezvous: the out-of-band channel of launcher-started ranks, of
 * local `flexrr run -n P` jobs and of `flexrr bench`'s two sides.  Rank 0
 * listens (rdv_serve.c); every other rank connects and proves it knows the
 * job secret by HMAC challenge-response, rank 0 proving it too (rdv.h).
 * Rank 0 refuses, one connection at a time and logged, joiners that fail
 * the proof or run another binary, other arguments or another job size, and
 * keeps waiting for its own ranks.  Collectives are star-shaped through
 * rank 0 (set-up only, never hot).
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"
#include "rdv.h"

#define RDV_DEFAULT_COLL_MS 30000
#define RDV_HINT "frr_tcp_cfg.addr"

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

int rdv_left_ms(double deadline)
{
	double l = (deadline - frr_now_s()) * 1000;

	return l <= 0 ? 0 : (int)l + 1;
}

int rdv_io_full(int fd, void *buf, size_t len, int wr, double deadline)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { fd, wr ? POLLOUT : POLLIN, 0 };
		int ms = rdv_left_ms(deadline), r;
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

int rdv_resolve(const char *host, const char *port, int passive,
		struct rdv_addr *out)
{
	struct addrinfo hints = { .ai_family = passive ? AF_INET : AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 },
			*res = NULL, *pick;

	if (getaddrinfo(passive ? NULL : host, port, &hints, &res) || !res)
		return -EADDRNOTAVAIL;
	for (pick = res; pick && pick->ai_family != AF_INET;)
		pick = pick->ai_next;
	if (!pick)
		pick = res;
	memcpy(&out->sa, pick->ai_addr, pick->ai_addrlen);
	out->len = pick->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int rdv_parse_addr(const char *what, const char *addr, int passive,
		   struct rdv_addr *out)
{
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
	if (!strcmp(host, "*") && !passive)
		goto bad;
	if (rdv_resolve(host, colon + 1, !strcmp(host, "*"), out)) {
		frr_err("%s %s: cannot resolve host '%s'", what, addr, host);
		return -EINVAL;
	}
	return 0;
bad:
	frr_err("%s '%s' is not HOST:PORT (e.g. 10.0.0.1:29500)", what,
		addr ? addr : "(none)");
	return -EINVAL;
}

/* Say why the peer that fmt names failed an exchange: a closed connection
 * is a rank that died; a timeout, one whose connection is open but that
 * does not answer (stopped, hung or swapped out: the kernel still takes
 * its bytes). */
static void rdv_peer_failed(int err, int ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rdv_peer_failed(int err, int ms, const char *fmt, ...)
{
	char who[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(who, sizeof(who), fmt, ap);
	va_end(ap);
	if (err == -ETIMEDOUT)
		frr_err("rendezvous: %s: no answer within %d ms: it is "
			"stopped, hung or overloaded (raise the timeout if the "
			"machine is busy)",
			who, ms);
	else
		frr_err("rendezvous: %s (%s): it failed or was killed", who,
			strerror(-err));
}

/* Rank 0 gathers every share, then sends each joiner a word and the
 * result.  The word names the rank whose share did not come (-1: none),
 * so the others name it too instead of calling rank 0 dead when it stops:
 * a joiner waits RDV_WORD_GRACE_MS past its own deadline for that word. */
struct rdv_word {
	int32_t failed; /* the rank whose share did not come, or -1 */
	int32_t err;	/* its negative errno */
};
#define RDV_WORD_GRACE_MS 2000

static int gather_at_rank0(struct rdv *r, const void *mine, size_t len,
			   void *all, int ms)
{
	struct rdv_word w = { -1, 0 };
	int size = r->oob.size, err = 0;
	double dl = frr_now_s() + ms / 1e3;

	memcpy(all, mine, len);
	for (int p = 1; p < size && !w.err; p++) {
		w.err = rdv_io_full(r->fds[p], (char *)all + (size_t)p * len,
				    len, 0, dl);
		if (w.err) {
			w.failed = p;
			rdv_peer_failed(w.err, ms,
					"rank %d did not send its share", p);
		}
	}
	/* the others learn who failed, within a grace past the deadline */
	if (w.err)
		dl = frr_now_s() + RDV_WORD_GRACE_MS / 1e3;
	for (int p = 1; p < size; p++) {
		int e = p == w.failed
			    ? 0
			    : rdv_io_full(r->fds[p], &w, sizeof(w), 1, dl);

		if (!e && !w.err)
			e = rdv_io_full(r->fds[p], all, len * size, 1, dl);
		if (e && !w.err && !err) {
			rdv_peer_failed(e, ms,
					"rank %d did not take the result", p);
			err = e;
		}
	}
	return w.err ? w.err : err;
}

/* A joiner: its share out, rank 0's word and the result in. */
static int gather_at_joiner(struct rdv *r, const void *mine, size_t len,
			    void *all, int ms)
{
	double dl = frr_now_s() + ms / 1e3;
	struct rdv_word w;
	int err = rdv_io_full(r->fds[0], (void *)mine, len, 1, dl);

	dl += RDV_WORD_GRACE_MS / 1e3;
	if (!err)
		err = rdv_io_full(r->fds[0], &w, sizeof(w), 0, dl);
	if (!err && w.failed >= 0) {
		/* peer-sent: a rank of the job and an errno, or a bad word */
		if (w.failed < 1 || w.failed >= r->oob.size || w.err >= 0 ||
		    w.err < -4095) {
			frr_err("rendezvous: rank 0 sent a bad word (rank %d, "
				"error %d)",
				(int)w.failed, (int)w.err);
			return -EPROTO;
		}
		rdv_peer_failed(w.err, ms,
				"rank 0 stopped the exchange: rank %d did not "
				"send its share",
				(int)w.failed);
		return w.err;
	}
	if (!err)
		err = rdv_io_full(r->fds[0], all, len * r->oob.size, 0, dl);
	if (err)
		rdv_peer_failed(err, ms, "the exchange with rank 0 failed");
	return err;
}

static int rdv_allgather(struct frr_oob *oob, const void *mine, size_t len,
			 void *all, int timeout_ms)
{
	struct rdv *r = (struct rdv *)oob;
	int ms = timeout_ms > 0 ? timeout_ms : RDV_DEFAULT_COLL_MS;

	return oob->rank == 0 ? gather_at_rank0(r, mine, len, all, ms)
			      : gather_at_joiner(r, mine, len, all, ms);
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

const char *rdv_hint(const struct frr_tcp_cfg *cfg)
{
	return cfg->addr_hint ? cfg->addr_hint : RDV_HINT;
}

const char *rdv_timeout_hint(const struct frr_tcp_cfg *cfg)
{
	return cfg->timeout_hint ? cfg->timeout_hint
				 : "raise frr_tcp_cfg.timeout_ms";
}

static int rdv_listen(const struct frr_tcp_cfg *cfg, int *fd_out)
{
	struct rdv_addr a;
	int fd, one = 1, err;

	err = rdv_parse_addr("rendezvous address", cfg->addr, 1, &a);
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
			cfg->addr, strerror(-err), rdv_hint(cfg));
		close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

int rdv_dial(const struct rdv_addr *a, int ms)
{
	struct pollfd p;
	int fd, err, one = 1, r;
	socklen_t l = sizeof(err);

	fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)&a->sa, a->len))
		goto ok;
	if (errno != EINPROGRESS) {
		err = -errno;
		goto fail;
	}
	p = (struct pollfd){ fd, POLLOUT, 0 };
	r = poll(&p, 1, ms);
	if (r <= 0) {
		err = r ? -errno : -ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) || err) {
		err = err ? -err : -errno;
		goto fail;
	}
ok:
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	close(fd);
	return err;
}

/* Connect to rank 0, retrying every 100 ms until the deadline (it may
 * start later): each try waits at most what is left (a blocking connect to
 * a host that is down sat in the kernel's SYN retries for minutes). */
static int dial(const struct frr_tcp_cfg *cfg, double dl)
{
	struct rdv_addr a;
	int err = rdv_parse_addr("rendezvous address", cfg->addr, 0, &a), fd;

	if (err)
		return err;
	while ((fd = rdv_dial(&a, rdv_left_ms(dl))) < 0) {
		struct timespec ts = { 0, 100000000 };

		if (!rdv_left_ms(dl)) {
			frr_err("rendezvous address %s is unreachable (%s): "
				"is rank 0 running there, and is the address "
				"right (%s)?",
				cfg->addr, strerror(-fd), rdv_hint(cfg));
			return -EHOSTUNREACH;
		}
		nanosleep(&ts, NULL);
	}
	return fd;
}

/* Send our hello, check rank 0's proof, make ours (*p): 0, else a negative
 * errno (logged). */
static int handshake(struct rdv *r, const struct frr_tcp_cfg *cfg, int fd,
		     double dl, struct rdv_msg *p)
{
	const struct frr_job_secret *key = rdv_key(cfg);
	unsigned char want[FRR_AUTH_MAC_LEN];
	unsigned char raw[sizeof(struct rdv_msg)];
	struct rdv_msg h, m;
	int err;

	rdv_msg_init(&h, RDV_HELLO);
	h.rank = r->oob.rank;
	h.size = r->oob.size;
	h.binhash = cfg->binary_hash;
	h.argshash = cfg->args_hash;
	err = frr_auth_nonce(h.nonce);
	if (!err)
		err = rdv_io_full(fd, &h, sizeof(h), 1, dl);
	if (!err)
		err = rdv_io_full(fd, raw, sizeof(raw), 0, dl);
	if (err == -ETIMEDOUT) {
		/* connected (the kernel took us into its backlog), then
		 * silence: rank 0 cannot run, or the listener is not one */
		frr_err("rendezvous with rank 0 at %s: no answer within %d ms: "
			"rank 0 is stopped, hung or overloaded (%s if the "
			"machine is busy), or what listens there is not a "
			"flexrr rank 0 of this version",
			cfg->addr, cfg->timeout_ms, rdv_timeout_hint(cfg));
		return err;
	}
	if (err || rdv_parse(raw, sizeof(raw), RDV_CHALLENGE, &m)) {
		frr_err("rendezvous with rank 0 at %s failed (%s): is a flexrr "
			"rank 0 of this version listening there?",
			cfg->addr, err ? strerror(-err) : "bad reply");
		return err ? err : -EPROTO;
	}
	/* our proof goes out even when rank 0's fails: rank 0 then logs
	 * the mismatch too */
	rdv_msg_init(p, RDV_PROOF);
	p->rank = r->oob.rank;
	rdv_mac_joiner(key, &h, m.nonce, p->mac);
	rdv_mac_rank0(key, &h, m.nonce, want);
	if (!rdv_mac_ok(want, m.mac)) {
		frr_err("the process at %s does not know this job's secret: it "
			"is not rank 0 of this job (another job, or another "
			"FLEXRR_JOB_TOKEN); check the address (%s) and the "
			"token",
			cfg->addr, rdv_hint(cfg));
		return -EACCES;
	}
	return 0;
}

/* Until fd has something to read: 0, -ETIMEDOUT at dl, or -ECANCELED when
 * cfg->abandon says so. */
static int wait_readable(const struct frr_tcp_cfg *cfg, int fd, double dl)
{
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int ms = rdv_left_ms(dl), n;

		if (!ms)
			return -ETIMEDOUT;
		if (cfg->abandon && cfg->abandon(cfg->abandon_arg, -1))
			return -ECANCELED;
		n = poll(&p, 1, cfg->abandon && ms > 100 ? 100 : ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int join(struct rdv *r, const struct frr_tcp_cfg *cfg, double dl)
{
	unsigned char raw[sizeof(struct rdv_msg)];
	struct rdv_msg p, v;
	int err, said, fd = dial(cfg, dl);

	if (fd < 0)
		return fd;
	err = handshake(r, cfg, fd, dl, &p);
	said = err != 0; /* handshake logs its failures */
	if (err == -EACCES)
		(void)rdv_io_full(fd, &p, sizeof(p), 1, dl);
	if (!err)
		err = rdv_io_full(fd, &p, sizeof(p), 1, dl);
	/* the verdict comes once every rank joined */
	if (!err)
		err = wait_readable(cfg, fd, dl);
	if (!err)
		err = rdv_io_full(fd, raw, sizeof(raw), 0, dl);
	if (!err && rdv_parse(raw, sizeof(raw), RDV_VERDICT, &v)) {
		frr_err("rendezvous with rank 0 at %s failed: bad reply",
			cfg->addr);
		err = -EPROTO;
	} else if (!said && err == -ETIMEDOUT) {
		frr_err(
		    "rendezvous with rank 0 at %s: no verdict within %d ms: "
		    "rank 0 is stopped, hung or overloaded, or waits for a "
		    "rank that is (%s if the machine is busy)",
		    cfg->addr, cfg->timeout_ms, rdv_timeout_hint(cfg));
	} else if (!said && err == -ECONNRESET) {
		frr_err("rendezvous with rank 0 at %s failed (%s): rank 0 "
			"failed or was killed",
			cfg->addr, strerror(-err));
	}
	if (!err && v.status != RDV_OK) {
		frr_err("rank 0 at %s refused rank %d: %s; start every rank "
			"with the same flexrr build, options, -n and job "
			"secret",
			cfg->addr, r->oob.rank, rdv_status_str[v.status]);
		err = -EACCES;
	}
	if (err) {
		close(fd);
		return err;
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
	r->oob = (struct frr_oob){ &rdv_ops, cfg->rank, cfg->size, 0,
				   *rdv_key(cfg) };
	r->oob.job_token = frr_job_secret_tag(&r->oob.secret);
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
			err = rdv_serve(r, cfg, lfd, dl);
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
