// SPDX-License-Identifier: MIT
/*
 * Who is left after a loss, agreed by the ranks themselves (no launcher
 * tells them): frr_members_agree.  Every rank listens on a socket of its
 * own from the start (frr_members_listen; the addresses are exchanged while
 * the job runs).  After its job failed, a rank asks the ranks below it in
 * order: a closed socket (connection refused) is a dead process, one that
 * does not answer within answer_ms is a stopped or lost one; the first that
 * answers is the coordinator.  A rank that finds none below it alive is the
 * coordinator: it claims the next epoch (cfg->lease: one winner per epoch,
 * so a rank left behind can never start a second copy of the job), takes
 * members until every rank above it has joined or is dead, or answer_ms
 * passed, and sends each the verdict: the ranks not in (lost), or none lost
 * (the job failed on its own, and nothing is recovered).
 *
 * Each exchange is one struct mb_msg (host byte order: one build), MACed
 * with the job's secret over both sides' fresh nonces, as the rendezvous:
 *   member -> coordinator   HELLO      rank, epoch, run, nonce_m
 *   coordinator -> member   CHALLENGE  nonce_c, MAC("members coordinator")
 *   member -> coordinator   PROOF      MAC("members member")
 *   coordinator -> member   VERDICT    status, hash of lost[], MAC("members
 *                                      verdict"), then lost[size]
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "rdv.h"

#define MB_MAGIC 0x4652524du /* "FRRM" */
#define MB_STEP_MS 2000	     /* a member that connected answers in less */
#define MB_PROBE_MS 250	     /* how often the coordinator looks for deaths */

enum mb_type { MB_HELLO = 1, MB_CHALLENGE, MB_PROOF, MB_VERDICT };

struct mb_msg {
	uint32_t magic;
	uint32_t type;
	int32_t rank; /* the member's */
	int32_t size;
	uint32_t epoch; /* the one that failed */
	int32_t status; /* verdict: 1 lost some, 0 none */
	uint64_t run_id;
	uint64_t lost_hash;
	unsigned char nonce[FRR_AUTH_NONCE_LEN];
	unsigned char mac[FRR_AUTH_MAC_LEN];
};

/* What a MAC binds besides the nonces: the member, the job's size and run,
 * the failed epoch and, in the verdict, its status and lost[]'s hash. */
struct mb_bound {
	int32_t rank, size, status;
	uint32_t epoch;
	uint64_t run_id, lost_hash;
};

static void mb_mac(const struct frr_members_cfg *cfg, const char *role,
		   int rank, int status, uint64_t lh, const unsigned char *nm,
		   const unsigned char *nc, unsigned char mac[FRR_AUTH_MAC_LEN])
{
	struct mb_bound b = { rank,	  cfg->size,   status,
			      cfg->epoch, cfg->run_id, lh };

	frr_auth_mac(cfg->secret, role, nm, nc, &b, sizeof(b), mac);
}

static int mb_io(int fd, void *m, size_t len, int wr, int ms)
{
	return rdv_io_full(fd, m, len, wr, frr_now_s() + ms / 1e3);
}

static void mb_init(const struct frr_members_cfg *cfg, struct mb_msg *m,
		    uint32_t type, int rank)
{
	*m = (struct mb_msg){ .magic = MB_MAGIC,
			      .type = type,
			      .rank = rank,
			      .size = cfg->size,
			      .epoch = cfg->epoch,
			      .run_id = cfg->run_id };
}

/* A copy of what arrived, judged before use: ours, of this job, run and
 * epoch, from or about a rank in range. */
static int mb_recv(const struct frr_members_cfg *cfg, int fd, uint32_t type,
		   struct mb_msg *m, int ms)
{
	int err = mb_io(fd, m, sizeof(*m), 0, ms);

	if (err)
		return err;
	if (m->magic != MB_MAGIC || m->type != type || m->size != cfg->size ||
	    m->run_id != cfg->run_id || m->epoch != cfg->epoch || m->rank < 0 ||
	    m->rank >= cfg->size)
		return -EPROTO;
	return 0;
}

/* Connect to addr within ms (rdv_dial): the fd, -ECONNREFUSED (nobody
 * listens: the process is gone) or another negative errno. */
static int mb_dial(const char *addr, int ms)
{
	struct rdv_addr a;
	int err = rdv_parse_addr("a rank's members address", addr, 0, &a);

	return err ? err : rdv_dial(&a, ms);
}

int frr_members_gone(const char *addr, int ms)
{
	int fd = mb_dial(addr, ms);

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : fd == -ECONNREFUSED ? 1 : fd;
}

static uint64_t lost_hash(const unsigned char *lost, int n)
{
	return frr_fnv1a64(lost, (size_t)n, 0x6d656d62657273ull);
}

/* Ask rank k to coordinate: 1/0 (its verdict, lost[] filled), or a
 * negative errno: it is dead, stopped, or not one of this job's. */
static int ask(const struct frr_members_cfg *cfg, int k, unsigned char *lost)
{
	struct mb_msg h, c, p, v;
	unsigned char mac[FRR_AUTH_MAC_LEN];
	int fd = mb_dial(cfg->addrs[k], cfg->answer_ms), err;

	if (fd < 0)
		return fd;
	mb_init(cfg, &h, MB_HELLO, cfg->rank);
	err = frr_auth_nonce(h.nonce);
	if (!err)
		err = mb_io(fd, &h, sizeof(h), 1, MB_STEP_MS);
	/* a live rank answers once its own job has failed too */
	if (!err)
		err = mb_recv(cfg, fd, MB_CHALLENGE, &c, cfg->answer_ms);
	if (!err) {
		mb_mac(cfg, "members coordinator", cfg->rank, 0, 0, h.nonce,
		       c.nonce, mac);
		err = rdv_mac_ok(mac, c.mac) ? 0 : -EACCES;
	}
	if (!err) {
		mb_init(cfg, &p, MB_PROOF, cfg->rank);
		mb_mac(cfg, "members member", cfg->rank, 0, 0, h.nonce, c.nonce,
		       p.mac);
		err = mb_io(fd, &p, sizeof(p), 1, MB_STEP_MS);
	}
	/* the verdict comes when every rank joined or answer_ms passed */
	if (!err)
		err = mb_recv(cfg, fd, MB_VERDICT, &v,
			      2 * cfg->answer_ms + MB_STEP_MS);
	if (!err)
		err = mb_io(fd, lost, (size_t)cfg->size, 0, MB_STEP_MS);
	if (!err) {
		mb_mac(cfg, "members verdict", cfg->rank, v.status, v.lost_hash,
		       h.nonce, c.nonce, mac);
		if (!rdv_mac_ok(mac, v.mac) || v.rank != cfg->rank ||
		    v.lost_hash != lost_hash(lost, cfg->size))
			err = -EACCES;
	}
	close(fd);
	return err ? err : v.status != 0;
}

struct member {
	int fd;
	unsigned char nm[FRR_AUTH_NONCE_LEN], nc[FRR_AUTH_NONCE_LEN];
};

/* One connection to the coordinator's socket: a member of this epoch that
 * proves the secret joins (in[rank] = 1, m[rank] kept); anything else is
 * closed. */
static void take_one(const struct frr_members_cfg *cfg, int lfd,
		     struct member *m, unsigned char *in)
{
	struct mb_msg h, c, p;
	unsigned char mac[FRR_AUTH_MAC_LEN];
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), err;

	if (fd < 0)
		return;
	err = mb_recv(cfg, fd, MB_HELLO, &h, MB_STEP_MS);
	if (!err && (h.rank <= cfg->rank || in[h.rank]))
		err = -EPROTO; /* it asks the ranks below it, never us */
	if (!err) {
		mb_init(cfg, &c, MB_CHALLENGE, h.rank);
		err = frr_auth_nonce(c.nonce);
	}
	if (!err) {
		mb_mac(cfg, "members coordinator", h.rank, 0, 0, h.nonce,
		       c.nonce, c.mac);
		err = mb_io(fd, &c, sizeof(c), 1, MB_STEP_MS);
	}
	if (!err)
		err = mb_recv(cfg, fd, MB_PROOF, &p, MB_STEP_MS);
	if (!err) {
		mb_mac(cfg, "members member", h.rank, 0, 0, h.nonce, c.nonce,
		       mac);
		err = p.rank == h.rank && rdv_mac_ok(mac, p.mac) ? 0 : -EACCES;
	}
	if (err) {
		if (err == -EACCES)
			frr_warn("members: a connection to rank %d's socket "
				 "did not prove the job's secret: dropped",
				 cfg->rank);
		close(fd);
		return;
	}
	in[h.rank] = 1;
	m[h.rank].fd = fd;
	memcpy(m[h.rank].nm, h.nonce, sizeof(h.nonce));
	memcpy(m[h.rank].nc, c.nonce, sizeof(c.nonce));
}

/* Every rank above us has joined or is gone (its socket refuses). */
static int all_known(const struct frr_members_cfg *cfg, unsigned char *in,
		     unsigned char *gone)
{
	int n = 0;

	for (int r = cfg->rank + 1; r < cfg->size; r++) {
		if (in[r] || gone[r])
			continue;
		int fd = mb_dial(cfg->addrs[r], MB_PROBE_MS);

		if (fd == -ECONNREFUSED)
			gone[r] = 1;
		else if (fd >= 0)
			close(fd);
		n += !gone[r];
	}
	return n == 0;
}

/* No rank below us answered: coordinate.  lost[r] = not in. */
static int coordinate(const struct frr_members_cfg *cfg, unsigned char *lost)
{
	struct member *m = calloc((size_t)cfg->size, sizeof(*m));
	unsigned char *in = calloc((size_t)cfg->size, 2), *gone;
	double end = frr_now_s() + cfg->answer_ms / 1e3;
	int status = 0, err = 0;

	if (!m || !in) {
		err = -ENOMEM;
		goto out;
	}
	gone = in + cfg->size;
	in[cfg->rank] = 1;
	while (!all_known(cfg, in, gone) && rdv_left_ms(end)) {
		struct pollfd p = { cfg->listen_fd, POLLIN, 0 };

		if (poll(&p, 1, MB_PROBE_MS) > 0)
			take_one(cfg, cfg->listen_fd, m, in);
	}
	for (int r = 0; r < cfg->size; r++) {
		lost[r] = !in[r];
		status |= lost[r];
	}
	/* one coordinator per epoch: a rank left behind that comes back
	 * and finds nobody must not run the job a second time */
	if (status && cfg->lease)
		err = cfg->lease(cfg->lease_arg, cfg->epoch + 1);
	if (err == -EEXIST)
		err = -ESTALE; /* the others went on without us */
	for (int r = cfg->rank + 1; r < cfg->size && !err; r++) {
		struct mb_msg v;

		if (!in[r])
			continue;
		mb_init(cfg, &v, MB_VERDICT, r);
		v.status = status;
		v.lost_hash = lost_hash(lost, cfg->size);
		mb_mac(cfg, "members verdict", r, status, v.lost_hash, m[r].nm,
		       m[r].nc, v.mac);
		/* a member gone since is found in the next epoch */
		if (!mb_io(m[r].fd, &v, sizeof(v), 1, MB_STEP_MS))
			(void)mb_io(m[r].fd, lost, (size_t)cfg->size, 1,
				    MB_STEP_MS);
	}
out:
	for (int r = 0; m && r < cfg->size; r++)
		if (in && in[r] && r != cfg->rank)
			close(m[r].fd);
	free(m);
	free(in);
	return err ? err : status;
}

int frr_members_agree(const struct frr_members_cfg *cfg, unsigned char *lost)
{
	for (int k = 0; k < cfg->rank; k++) {
		int r = ask(cfg, k, lost);

		if (r >= 0)
			return r && lost[cfg->rank] ? -ESTALE : r;
	}
	return coordinate(cfg, lost);
}

int frr_members_listen(const char *toward, int *fd_out, char *addr, size_t len)
{
	struct rdv_addr a;
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	char host[NI_MAXHOST], port[NI_MAXSERV], named[NI_MAXHOST + 8];
	int u, fd, err;

	/* rank 0 listening on every interface (*:PORT): the others reach it
	 * by its host name, and so do we */
	if (!strncmp(toward, "*:", 2) && !frr_hostname(host, sizeof(host))) {
		err = rdv_resolve(host, toward + 2, 0, &a);
		if (err) {
			frr_err("members: this host's name '%s' resolves to no "
				"address",
				host);
			return err;
		}
		snprintf(named, sizeof(named), "%s%s", host, toward + 1);
		toward = named;
	} else {
		err = rdv_parse_addr("rendezvous address", toward, 0, &a);
		if (err)
			return err;
	}
	/* the interface that reaches toward (nothing is sent) */
	u = socket(a.sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u < 0 || connect(u, (struct sockaddr *)&a.sa, a.len) ||
	    getsockname(u, (struct sockaddr *)&me, &ml)) {
		err = -errno;
		frr_err("members: no route toward %s to listen on: %s", toward,
			strerror(-err));
		if (u >= 0)
			close(u);
		return err;
	}
	close(u);
	if (me.ss_family == AF_INET)
		((struct sockaddr_in *)&me)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&me)->sin6_port = 0;
	fd = socket(me.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, ml) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&me, &ml) ||
	    getnameinfo((struct sockaddr *)&me, ml, host, sizeof(host), port,
			sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV)) {
		err = -errno;
		frr_err("members: cannot listen for the other ranks: %s",
			strerror(-err));
		if (fd >= 0)
			close(fd);
		return err ? err : -EIO;
	}
	snprintf(addr, len, me.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		 host, port);
	*fd_out = fd;
	return 0;
}
