// SPDX-License-Identifier: MIT
/*
 * shm access control: who may open an endpoint to a rank or import one of
 * its regions.  Abstract UNIX sockets are visible to every local user
 * (/proc/net/unix) and anyone may connect to them, so the acceptor first
 * checks the peer's credentials (SO_PEERCRED: our uid or root), then the
 * two sides prove the job secret to each other by HMAC challenge-response
 * (shm.h), and only then is any memfd passed.  The connector checks the
 * acceptor's credentials and proof too before it hands over its ring.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "shm.h"

#define SHM_AUTH_MS 4000	  /* a connection's whole handshake, at most */
#define SHM_REFUSE_BURST 3	  /* refusals said in full per window */
#define SHM_REFUSE_WINDOW_MS 5000 /* then one count line per window */

/* what both MACs bind: the request, who asks whom */
struct shm_auth_params {
	uint32_t type;
	uint32_t region_id;
	int32_t connector;
	int32_t acceptor;
	int32_t nranks;
	uint32_t zero;
};

static void mac_of(const struct frr_job_secret *s, const char *role,
		   const struct shm_msg *req,
		   const unsigned char nonce_a[FRR_AUTH_NONCE_LEN],
		   int acceptor, unsigned char mac[FRR_AUTH_MAC_LEN])
{
	struct shm_auth_params p = { .type = req->type,
				     .region_id = req->region_id,
				     .connector = req->rank,
				     .acceptor = acceptor,
				     .nranks = req->nranks };

	frr_auth_mac(s, role, req->nonce, nonce_a, &p, sizeof(p), mac);
}

static int mac_ok(const struct frr_job_secret *s, const char *role,
		  const struct shm_msg *req,
		  const unsigned char nonce_a[FRR_AUTH_NONCE_LEN], int acceptor,
		  const unsigned char mac[FRR_AUTH_MAC_LEN])
{
	struct shm_auth_params p = { .type = req->type,
				     .region_id = req->region_id,
				     .connector = req->rank,
				     .acceptor = acceptor,
				     .nranks = req->nranks };

	return frr_auth_verify(s, role, req->nonce, nonce_a, &p, sizeof(p), mac,
			       FRR_AUTH_MAC_LEN);
}

/* The uid of the process at the other end of fd; -1 when unknown. */
static long peer_uid(int fd, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
	    len != sizeof(cr))
		return -1;
	*pid = cr.pid;
	return (long)cr.uid;
}

static int uid_allowed(long uid)
{
	return uid == (long)geteuid() || uid == 0;
}

/* A refusal as the answer: the same message type a server would send. */
static void refusal(struct shm_msg *ans, const struct shm_msg *req, int err,
		    const char *why)
{
	memset(ans, 0, sizeof(*ans));
	ans->magic = SHM_MSG_MAGIC;
	ans->type = req->type == SHM_IMPORT ? SHM_IMPORT_ERR : SHM_REJECT;
	ans->err = err;
	snprintf(ans->why, sizeof(ans->why), "%s", why);
}

int shm_auth_connect(struct shm_ctx *c, int fd, int peer_rank,
		     struct shm_msg *req, int pass_fd, int timeout_ms,
		     struct shm_msg *ans, int *got_fd)
{
	long long dl = frr_now_ms() + timeout_ms;
	struct shm_msg ch, pr;
	pid_t pid = 0;
	long uid = peer_uid(fd, &pid);
	int ret, ign;

	*got_fd = -1;
	if (!uid_allowed(uid)) {
		refusal(ans, req, -EACCES,
			"the socket belongs to another user's process");
		return 0;
	}
	ret = frr_auth_nonce(req->nonce);
	if (!ret)
		ret = shm_msg_send(fd, req, -1);
	if (!ret)
		ret = shm_msg_recv(fd, &ch, &ign, timeout_ms);
	if (ret)
		return ret;
	if (ign >= 0)
		close(ign);
	if (ch.type != SHM_CHALLENGE) { /* refused before any proof */
		*ans = ch;
		if (ch.type != SHM_REJECT && ch.type != SHM_IMPORT_ERR)
			refusal(ans, req, -EPROTO, "protocol error");
		return 0;
	}
	if (!mac_ok(&c->secret, "shm acceptor", req, ch.nonce, peer_rank,
		    ch.mac)) {
		refusal(ans, req, -EACCES,
			"it does not prove this job's secret (a process of "
			"another job, or a stale address)");
		return 0;
	}
	shm_msg_init(&pr, c, SHM_PROOF);
	mac_of(&c->secret, "shm connector", req, ch.nonce, peer_rank, pr.mac);
	ret = shm_msg_send(fd, &pr, pass_fd);
	if (!ret)
		ret = shm_msg_recv(
		    fd, ans, got_fd,
		    dl - frr_now_ms() > 0 ? (int)(dl - frr_now_ms()) : 1);
	return ret;
}

/* Refusals logged in this window and those only counted.  One budget for
 * the whole process, shared by its contexts' service threads: a rank with
 * a lane per worker thread has T + 1 listeners, and its log must not grow
 * with T (a stranger may knock on every name).  The count is said when a
 * window ends and when the process's last context closes. */
static struct {
	pthread_mutex_t lock;
	int ctxs;
	long long t0_ms;
	int logged;
	unsigned long quiet;
} refusals = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void refusals_flush_locked(int rank)
{
	if (!refusals.quiet)
		return;
	frr_warn("shm: rank %d refused %lu more connections in the last "
		 "%.0f s (a local process keeps connecting: who, above)",
		 rank, refusals.quiet,
		 (double)(frr_now_ms() - refusals.t0_ms) / 1000.0);
	refusals.quiet = 0;
}

void shm_auth_ctx_opened(void)
{
	pthread_mutex_lock(&refusals.lock);
	refusals.ctxs++;
	pthread_mutex_unlock(&refusals.lock);
}

void shm_auth_ctx_closing(struct shm_ctx *c)
{
	pthread_mutex_lock(&refusals.lock);
	if (--refusals.ctxs == 0)
		refusals_flush_locked(c->rank);
	pthread_mutex_unlock(&refusals.lock);
}

/* The first SHM_REFUSE_BURST refusals of each window are said in full, the
 * rest counted and said as one line when the window ends: anyone may
 * connect (the names are public), so a loop of connections would
 * otherwise write megabytes of log a second. */
static void log_refusal(struct shm_ctx *c, const char *why)
{
	long long now = frr_now_ms();

	pthread_mutex_lock(&refusals.lock);
	if (!refusals.t0_ms || now - refusals.t0_ms >= SHM_REFUSE_WINDOW_MS) {
		refusals_flush_locked(c->rank);
		refusals.t0_ms = now;
		refusals.logged = 0;
	}
	if (refusals.logged == SHM_REFUSE_BURST) {
		refusals.quiet++;
	} else {
		refusals.logged++;
		frr_warn("shm: rank %d refused a connection: %s%s", c->rank,
			 why,
			 refusals.logged == SHM_REFUSE_BURST
			     ? " (more refusals are counted, not listed)"
			     : "");
	}
	pthread_mutex_unlock(&refusals.lock);
}

/* Answer a refused request (never with the secret) and log it. */
static int refuse(struct shm_ctx *c, int fd, uint32_t type, int err,
		  const char *why)
{
	log_refusal(c, why);
	shm_reply_error(fd, c, type == SHM_IMPORT ? SHM_IMPORT_ERR : SHM_REJECT,
			err, why);
	return err;
}

int shm_auth_begin(struct shm_ctx *c, int fd, struct shm_hs *h)
{
	char why[160];
	long uid;

	memset(h, 0, sizeof(*h));
	h->fd = fd;
	uid = peer_uid(fd, &h->pid);
	if (!uid_allowed(uid)) {
		snprintf(why, sizeof(why),
			 "pid %d runs as uid %ld: only uid %ld (or root) may "
			 "connect",
			 (int)h->pid, uid, (long)geteuid());
		return refuse(c, fd, SHM_HELLO, -EACCES, why);
	}
	h->state = SHM_HS_REQUEST;
	h->deadline_ms = frr_now_ms() + SHM_AUTH_MS;
	return 0;
}

/* SHM_HS_REQUEST: take HELLO or IMPORT, answer with a challenge. */
static int hs_request(struct shm_ctx *c, struct shm_hs *h)
{
	int ign, ret = shm_msg_recv(h->fd, &h->q, &ign, 0);

	if (ign >= 0) /* nothing is taken before the proof */
		close(ign);
	if (ret == -ETIMEDOUT)
		return 0;
	if (ret)
		return ret;
	if (h->q.type != SHM_HELLO && h->q.type != SHM_IMPORT)
		return refuse(c, h->fd, SHM_HELLO, -EPROTO,
			      "the first message must be HELLO or IMPORT");
	shm_msg_init(&h->ch, c, SHM_CHALLENGE);
	ret = frr_auth_nonce(h->ch.nonce);
	if (ret)
		return ret;
	mac_of(&c->secret, "shm acceptor", &h->q, h->ch.nonce, c->rank,
	       h->ch.mac);
	ret = shm_msg_send(h->fd, &h->ch, -1);
	if (!ret)
		h->state = SHM_HS_PROOF;
	return ret;
}

/* SHM_HS_PROOF: the connector's proof of the secret (and its fd). */
static int hs_proof(struct shm_ctx *c, struct shm_hs *h, int *got_fd)
{
	struct shm_msg pr;
	char why[160];
	int ret = shm_msg_recv(h->fd, &pr, got_fd, 0);

	if (ret == -ETIMEDOUT)
		return 0;
	if (ret)
		return ret;
	if (pr.type == SHM_PROOF && mac_ok(&c->secret, "shm connector", &h->q,
					   h->ch.nonce, c->rank, pr.mac))
		return 1;
	if (*got_fd >= 0)
		close(*got_fd);
	*got_fd = -1;
	snprintf(why, sizeof(why),
		 "pid %d (claims rank %d) does not prove the job secret",
		 (int)h->pid, h->q.rank);
	return refuse(c, h->fd, h->q.type, -EACCES, why);
}

int shm_auth_step(struct shm_ctx *c, struct shm_hs *h, int *got_fd)
{
	*got_fd = -1;
	switch (h->state) {
	case SHM_HS_REQUEST:
		return hs_request(c, h);
	case SHM_HS_PROOF:
		return hs_proof(c, h, got_fd);
	default:
		return -EINVAL;
	}
}

void shm_auth_expire(struct shm_ctx *c, struct shm_hs *h)
{
	char why[240];

	snprintf(why, sizeof(why),
		 "pid %d (this uid) connected but %s within %d ms: not a rank "
		 "of this job? silent local clients of this user delay a "
		 "job's start; stop them",
		 (int)h->pid,
		 h->state == SHM_HS_REQUEST ? "sent nothing"
					    : "did not prove the job secret",
		 SHM_AUTH_MS);
	refuse(c, h->fd, h->state == SHM_HS_PROOF ? h->q.type : SHM_HELLO,
	       -ETIMEDOUT, why);
}
