// SPDX-License-Identifier: MIT
/*
 * verbs backend connections: rdma_cm resolve/connect/accept with deadlines
 * and retries, disconnect detection.  The endpoints' RC QPs are made in
 * verbs_qp.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "verbs.h"

#define VB_RESOLVE_STEP_MS 2000
#define VB_BACKOFF_MAX_MS 500

static const char *rej_reason_str(unsigned r)
{
	switch (r) {
	case VB_REJ_AUTH:
		return "no proof of this job's secret, or a replayed request "
		       "(a process of another job?)";
	case VB_REJ_RANK:
		return "rank outside the job or equal to the acceptor's";
	case VB_REJ_VERSION:
		return "flexrr connection protocol version mismatch";
	case VB_REJ_FULL:
		return "the acceptor has no endpoint slot left";
	case VB_REJ_SETUP:
		return "the acceptor failed to set up its queue pair";
	}
	return "unknown reason";
}

static void priv_fill(struct vb_ctx *c, struct vb_priv *p, unsigned reason)
{
	memset(p, 0, sizeof(*p));
	p->magic = VB_PRIV_MAGIC;
	p->version = VB_PRIV_VERSION;
	p->reason = (uint16_t)reason;
	p->rank = c->base.cfg.rank;
	p->nranks = c->base.cfg.nranks;
	p->active_mtu = (uint32_t)c->active_mtu;
	p->flags = c->u64_cas ? VB_PRIV_F_U64_CAS : 0;
	if (c->base.cfg.flags & FRR_TP_CFG_NO_NOTIFY)
		p->flags |= VB_PRIV_F_NO_NOTIFY;
}

/* What the MAC of a REQ (nonce_c NULL) or of a REP answering nonce_c
 * covers: both nonces, both ranks, the job size and the sender's link
 * parameters. */
struct priv_auth {
	const char *role;
	const unsigned char *nc, *na;
	struct {
		int32_t connector, acceptor, nranks;
		uint32_t mtu, flags;
	} q;
};

static void priv_auth_of(const struct vb_priv *p, int connector, int acceptor,
			 const unsigned char *nonce_c, struct priv_auth *a)
{
	static const unsigned char zero[FRR_AUTH_NONCE_LEN];

	memset(a, 0, sizeof(*a));
	a->role = nonce_c ? "flexrr verbs rep" : "flexrr verbs req";
	a->nc = nonce_c ? nonce_c : p->nonce;
	a->na = nonce_c ? p->nonce : zero;
	a->q.connector = connector;
	a->q.acceptor = acceptor;
	a->q.nranks = p->nranks;
	a->q.mtu = p->active_mtu;
	a->q.flags = p->flags;
}

/* Seal p (a REQ when nonce_c is NULL, else a REP answering nonce_c). */
static int priv_seal(struct vb_ctx *c, struct vb_priv *p, int connector,
		     int acceptor, const unsigned char *nonce_c)
{
	unsigned char mac[FRR_AUTH_MAC_LEN];
	struct priv_auth a;
	int ret = frr_auth_nonce(p->nonce);

	if (ret)
		return ret;
	priv_auth_of(p, connector, acceptor, nonce_c, &a);
	frr_auth_mac(&c->base.cfg.job_secret, a.role, a.nc, a.na, &a.q,
		     sizeof(a.q), mac);
	memcpy(p->mac, mac, sizeof(p->mac));
	return 0;
}

static int priv_proves(struct vb_ctx *c, const struct vb_priv *p, int connector,
		       int acceptor, const unsigned char *nonce_c)
{
	struct priv_auth a;

	priv_auth_of(p, connector, acceptor, nonce_c, &a);
	return frr_auth_verify(&c->base.cfg.job_secret, a.role, a.nc, a.na,
			       &a.q, sizeof(a.q), p->mac, sizeof(p->mac));
}

/* A REQ's nonce not seen before in this ctx (then remembered). */
static int nonce_fresh(struct vb_ctx *c, const unsigned char *n)
{
	unsigned k = c->nseen < VB_SEEN_NONCES ? c->nseen : VB_SEEN_NONCES;

	for (unsigned i = 0; i < k; i++)
		if (!memcmp(c->seen[i], n, FRR_AUTH_NONCE_LEN))
			return 0;
	memcpy(c->seen[c->nseen++ % VB_SEEN_NONCES], n, FRR_AUTH_NONCE_LEN);
	return 1;
}

/* The connection parameters both sides send (rdma_connect / rdma_accept):
 * our private data and the QP's retry and RDMA-read limits. */
static void conn_param_init(struct vb_ctx *c, struct vb_ep *e,
			    struct vb_priv *mine, struct rdma_conn_param *cp)
{
	priv_fill(c, mine, VB_REJ_NONE);
	memset(cp, 0, sizeof(*cp));
	cp->private_data = mine;
	cp->private_data_len = sizeof(*mine);
	cp->retry_count = VB_RETRY_CNT;
	cp->rnr_retry_count = VB_RNR_RETRY;
	cp->responder_resources = (uint8_t)c->rd_atom;
	cp->initiator_depth = (uint8_t)c->rd_atom;
	cp->qp_num = e->qp->qp_num;
}

/* Private data of an event, or NULL when it is not ours. */
static int priv_get(const struct rdma_cm_event *ev, struct vb_priv *p)
{
	const struct rdma_conn_param *cp = &ev->param.conn;

	if (!cp->private_data || cp->private_data_len < sizeof(*p))
		return -1;
	memcpy(p, cp->private_data, sizeof(*p));
	return p->magic == VB_PRIV_MAGIC ? 0 : -1;
}

static unsigned priv_check(struct vb_ctx *c, const struct vb_priv *p)
{
	if (p->version != VB_PRIV_VERSION)
		return VB_REJ_VERSION;
	if (p->rank < 0 || p->rank >= c->base.cfg.nranks ||
	    p->rank == c->base.cfg.rank || p->nranks != c->base.cfg.nranks)
		return VB_REJ_RANK;
	if (p->active_mtu < IBV_MTU_256 || p->active_mtu > IBV_MTU_4096)
		return VB_REJ_VERSION;
	return VB_REJ_NONE;
}

/* Next CM event on ch before deadline: 0, -ETIMEDOUT or -errno. */
static int wait_event(struct rdma_event_channel *ch, long long deadline,
		      struct rdma_cm_event **ev)
{
	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		long long left;

		if (!rdma_get_cm_event(ch, ev))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		left = deadline - frr_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

static struct rdma_event_channel *channel_open(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (ch && fcntl(ch->fd, F_SETFL, O_NONBLOCK)) {
		rdma_destroy_event_channel(ch);
		return NULL;
	}
	return ch;
}

/* ---- active side ------------------------------------------------------ */

struct attempt {
	int err;       /* what the last retryable failure means */
	char why[160]; /* and its text */
};

static int retry(struct attempt *at, int err, const char *fmt, int status)
{
	at->err = err;
	snprintf(at->why, sizeof(at->why), fmt,
		 strerror(status < 0 ? -status : status));
	return -EAGAIN;
}

/* Wait for one of the expected event; other events are skipped. */
static int expect(struct vb_ep *e, long long deadline,
		  enum rdma_cm_event_type want, struct attempt *at,
		  struct vb_priv *priv)
{
	struct rdma_cm_event *ev;
	int ret, status;

	for (;;) {
		ret = wait_event(e->ch, deadline, &ev);
		if (ret == -ETIMEDOUT)
			return retry(at, -ETIMEDOUT, "no answer (%s)",
				     ETIMEDOUT);
		if (ret)
			return frr_tp_err(&e->ctx->base, ret,
					  "verbs: rdma_get_cm_event: %s",
					  strerror(-ret));
		status = ev->status;
		if (ev->event == want) {
			if (priv && priv_get(ev, priv))
				memset(priv, 0, sizeof(*priv));
			rdma_ack_cm_event(ev);
			return 0;
		}
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_ERROR:
			rdma_ack_cm_event(ev);
			return retry(at, -EHOSTUNREACH,
				     "address resolution failed (%s): no "
				     "neighbour answers for that IP",
				     status);
		case RDMA_CM_EVENT_ROUTE_ERROR:
			rdma_ack_cm_event(ev);
			return retry(at, -EHOSTUNREACH,
				     "route resolution failed (%s)", status);
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_CONNECT_ERROR:
			rdma_ack_cm_event(ev);
			return retry(at, -EHOSTUNREACH, "peer unreachable (%s)",
				     status);
		case RDMA_CM_EVENT_REJECTED: {
			struct vb_priv p;

			if (!priv_get(ev, &p) && p.reason) {
				rdma_ack_cm_event(ev);
				return frr_tp_err(
				    &e->ctx->base, -ECONNREFUSED,
				    "verbs: rank %d at %s refused the "
				    "connection: %s",
				    e->base.peer_rank, e->peer_addr,
				    rej_reason_str(p.reason));
			}
			rdma_ack_cm_event(ev);
			at->err = -ECONNREFUSED;
			snprintf(at->why, sizeof(at->why),
				 "rejected (reason %d): nobody listens on "
				 "that port",
				 status);
			return -EAGAIN;
		}
		default:
			rdma_ack_cm_event(ev);
		}
	}
}

static int try_connect(struct vb_ep *e, struct sockaddr_in *dst,
		       long long deadline, struct attempt *at)
{
	struct vb_ctx *c = e->ctx;
	struct sockaddr_in src = c->bind_sa;
	struct rdma_conn_param cp;
	struct vb_priv mine, theirs;
	long long left = deadline - frr_now_ms();
	int step = left < VB_RESOLVE_STEP_MS ? (int)left : VB_RESOLVE_STEP_MS;
	int ret;

	if (step < 1)
		step = 1;
	src.sin_port = 0;
	e->ch = channel_open();
	if (!e->ch)
		return frr_tp_err(&c->base, -errno,
				  "verbs: rdma_create_event_channel: %s",
				  strerror(errno));
	if (rdma_create_id(e->ch, &e->id, e, RDMA_PS_TCP))
		return frr_tp_err(&c->base, -errno, "verbs: rdma_create_id: %s",
				  strerror(errno));
	if (rdma_resolve_addr(e->id, (struct sockaddr *)&src,
			      (struct sockaddr *)dst, step))
		return retry(at, -EHOSTUNREACH, "rdma_resolve_addr: %s", errno);
	ret = expect(e, deadline, RDMA_CM_EVENT_ADDR_RESOLVED, at, NULL);
	if (ret)
		return ret;
	if (rdma_resolve_route(e->id, step))
		return retry(at, -EHOSTUNREACH, "rdma_resolve_route: %s",
			     errno);
	ret = expect(e, deadline, RDMA_CM_EVENT_ROUTE_RESOLVED, at, NULL);
	if (ret)
		return ret;
	if (e->id->verbs != c->verbs)
		return frr_tp_err(
		    &c->base, -EINVAL,
		    "verbs: %s is reached through device %s, "
		    "not %s; bind every rank to addresses of "
		    "one device",
		    e->peer_addr,
		    e->id->verbs ? ibv_get_device_name(e->id->verbs->device)
				 : "none",
		    c->devname);
	ret = vb_qp_setup(e);
	if (ret)
		return ret;
	conn_param_init(c, e, &mine, &cp);
	ret = priv_seal(c, &mine, c->base.cfg.rank, e->base.peer_rank, NULL);
	if (ret)
		return ret;
	if (rdma_connect(e->id, &cp))
		return retry(at, -ECONNREFUSED, "rdma_connect: %s", errno);
	ret = expect(e, deadline, RDMA_CM_EVENT_CONNECT_RESPONSE, at, &theirs);
	if (ret)
		return ret;
	if (theirs.magic != VB_PRIV_MAGIC || priv_check(c, &theirs) ||
	    theirs.rank != e->base.peer_rank ||
	    !priv_proves(c, &theirs, c->base.cfg.rank, e->base.peer_rank,
			 mine.nonce)) {
		rdma_reject(e->id, NULL, 0);
		return frr_tp_err(&c->base, -EPROTO,
				  "verbs: the process at %s is not rank %d "
				  "of this job (it answered as rank %d "
				  "without a valid proof of the job "
				  "secret); check the address exchange",
				  e->peer_addr, e->base.peer_rank, theirs.rank);
	}
	e->u64_cas = !!(theirs.flags & VB_PRIV_F_U64_CAS);
	ret = vb_qp_rtr_rts(e, (enum ibv_mtu)theirs.active_mtu);
	if (ret)
		return ret;
	if (rdma_establish(e->id))
		return frr_tp_err(&c->base, -errno, "verbs: rdma_establish: %s",
				  strerror(errno));
	vb_log_connected(e, (enum ibv_mtu)theirs.active_mtu);
	return 0;
}

static int parse_addr(struct vb_ctx *c, const char *s, struct sockaddr_in *sa)
{
	char ip[64];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	memset(sa, 0, sizeof(*sa));
	if (!colon || (size_t)(colon - s) >= sizeof(ip))
		goto bad;
	memcpy(ip, s, (size_t)(colon - s));
	ip[colon - s] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535 ||
	    inet_pton(AF_INET, ip, &sa->sin_addr) != 1)
		goto bad;
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return 0;
bad:
	return frr_tp_err(&c->base, -EINVAL,
			  "verbs: peer address '%s' is not IPv4:port; pass "
			  "what frr_tp_addr_get returned on the peer",
			  s);
}

/* The last attempt's cause, or, when every attempt went unanswered, a
 * peer that is stopped, hung or overloaded (its listener takes no
 * request): then the caller's timeout hint says what to do. */
static int connect_failed(struct vb_ep *e, const struct attempt *at,
			  long long ms, int attempts)
{
	struct frr_tp_ctx *ctx = &e->ctx->base;
	int rank = e->base.peer_rank;

	if (at->err == -ETIMEDOUT)
		return frr_tp_err(ctx, at->err,
				  "verbs: rank %d at %s did not answer within "
				  "%lld ms (%d attempts): it is stopped, hung "
				  "or overloaded, or not listening there (%s)",
				  rank, e->peer_addr, ms, attempts,
				  frr_tp_timeout_hint(ctx));
	return frr_tp_err(ctx, at->err,
			  "verbs: connecting to rank %d at %s failed after "
			  "%lld ms (%d attempts): %s; is rank %d running and "
			  "listening there? (%s)",
			  rank, e->peer_addr, ms, attempts, at->why, rank,
			  frr_tp_doctor_hint(ctx));
}

int vb_ep_connect(struct frr_tp_ctx *ctx, const struct frr_tp_addr *peer,
		  int timeout_ms, struct frr_tp_ep **out)
{
	struct vb_ctx *c = vb_ctx_of(ctx);
	long long start = frr_now_ms(), deadline = start + timeout_ms;
	struct attempt at = { .err = -ETIMEDOUT, .why = "no answer" };
	/* the last definite cause (refused, unreachable): a final attempt cut
	 * short by the deadline must not hide it */
	struct attempt cause = { .err = 0 };
	struct sockaddr_in dst;
	int ret, attempts = 0, backoff = 10;
	struct vb_ep *e;

	ret = parse_addr(c, peer->str, &dst);
	if (ret)
		return ret;
	e = vb_ep_alloc(c, 1);
	if (!e)
		return frr_tp_err(ctx, -ENOSPC,
				  "verbs: no endpoint slot left (%d per "
				  "context on %s, %d of them with queues: "
				  "job size + 3, at most %d); close "
				  "endpoints no longer used or raise "
				  "frr_tp_config.max_eps",
				  c->nslots, c->devname, c->max_full,
				  VB_MAX_FULL);
	e->base.peer_rank = peer->rank;
	e->base.no_notify = !!(ctx->cfg.flags & FRR_TP_CFG_NO_NOTIFY);
	snprintf(e->peer_addr, sizeof(e->peer_addr), "%s", peer->str);
	for (;;) {
		attempts++;
		ret = try_connect(e, &dst, deadline, &at);
		if (ret != -EAGAIN)
			break;
		if (at.err != -ETIMEDOUT)
			cause = at;
		vb_ep_teardown(e);
		if (frr_now_ms() + backoff >= deadline) {
			ret = connect_failed(e, cause.err ? &cause : &at,
					     frr_now_ms() - start, attempts);
			break;
		}
		usleep((useconds_t)backoff * 1000);
		backoff = backoff * 2 > VB_BACKOFF_MAX_MS ? VB_BACKOFF_MAX_MS
							  : backoff * 2;
	}
	if (ret) {
		vb_ep_close(&e->base);
		return ret;
	}
	*out = &e->base;
	return 0;
}

/* ---- passive side ----------------------------------------------------- */

static void refuse(struct rdma_cm_id *id, struct vb_ctx *c, unsigned reason)
{
	struct vb_priv p;

	priv_fill(c, &p, reason);
	rdma_reject(id, &p, sizeof(p));
	rdma_destroy_id(id);
}

/* After rdma_accept: ESTABLISHED, on the channel the id was migrated to. */
static int accept_established(struct vb_ctx *c, struct vb_ep *e, int rank,
			      long long deadline)
{
	struct rdma_cm_event *ev;
	int ret;

	ret = wait_event(e->ch, deadline, &ev);
	if (ret == -ETIMEDOUT)
		return frr_tp_err(&c->base, ret,
				  "verbs: rank %d did not complete the "
				  "connection in time: it is stopped, "
				  "hung or overloaded (%s)",
				  rank, frr_tp_timeout_hint(&c->base));
	if (ret)
		return frr_tp_err(&c->base, ret,
				  "verbs: rank %d did not complete the "
				  "connection: %s",
				  rank, strerror(-ret));
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED) {
		ret = frr_tp_err(&c->base, -ECONNRESET,
				 "verbs: rank %d's connection failed during "
				 "set-up (%s, status %d); did it exit?",
				 rank, rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return ret;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static int accept_one(struct vb_ctx *c, struct rdma_cm_id *id,
		      const struct vb_priv *theirs, long long deadline,
		      struct vb_ep **out)
{
	struct rdma_conn_param cp;
	struct vb_priv mine;
	struct sockaddr_in *sa;
	struct vb_ep *e;
	int ret;

	e = vb_ep_alloc(c, !(theirs->flags & VB_PRIV_F_NO_NOTIFY));
	if (!e) {
		refuse(id, c, VB_REJ_FULL);
		return frr_tp_err(&c->base, -ENOSPC,
				  "verbs: no endpoint slot left for rank %d "
				  "(%d per context on %s, %d of them with "
				  "queues: job size + 3, at most %d); raise "
				  "frr_tp_config.max_eps",
				  theirs->rank, c->nslots, c->devname,
				  c->max_full, VB_MAX_FULL);
	}
	e->base.peer_rank = theirs->rank;
	e->base.no_notify = !!(theirs->flags & VB_PRIV_F_NO_NOTIFY);
	e->u64_cas = !!(theirs->flags & VB_PRIV_F_U64_CAS);
	sa = (struct sockaddr_in *)rdma_get_peer_addr(id);
	inet_ntop(AF_INET, &sa->sin_addr, e->peer_addr, sizeof(e->peer_addr));
	e->ch = channel_open();
	if (!e->ch || rdma_migrate_id(id, e->ch)) {
		ret = frr_tp_err(&c->base, -errno,
				 "verbs: moving rank %d's connection to its "
				 "own event channel: %s",
				 theirs->rank, strerror(errno));
		refuse(id, c, VB_REJ_SETUP);
		goto close_ep;
	}
	e->id = id;
	ret = vb_qp_setup(e);
	if (!ret)
		ret = vb_qp_rtr_rts(e, (enum ibv_mtu)theirs->active_mtu);
	if (!ret) { /* the REP proves the secret over the REQ's nonce */
		conn_param_init(c, e, &mine, &cp);
		ret = priv_seal(c, &mine, theirs->rank, c->base.cfg.rank,
				theirs->nonce);
	}
	if (ret) {
		struct vb_priv p;

		priv_fill(c, &p, VB_REJ_SETUP);
		rdma_reject(id, &p, sizeof(p));
		goto close_ep;
	}
	if (rdma_accept(id, &cp)) {
		ret = frr_tp_err(&c->base, -errno, "verbs: rdma_accept: %s",
				 strerror(errno));
		goto close_ep;
	}
	ret = accept_established(c, e, theirs->rank, deadline);
	if (ret)
		goto close_ep;
	vb_log_connected(e, (enum ibv_mtu)theirs->active_mtu);
	*out = e;
	return 0;

close_ep:
	vb_ep_close(&e->base);
	return ret;
}

int vb_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms, struct frr_tp_ep **out)
{
	struct vb_ctx *c = vb_ctx_of(ctx);
	long long deadline = frr_now_ms() + timeout_ms;
	struct rdma_cm_event *ev;
	struct vb_priv theirs;
	struct vb_ep *e = NULL;
	unsigned reason;
	int ret;

	for (;;) {
		ret = wait_event(c->lch, deadline, &ev);
		if (ret == -ETIMEDOUT && !timeout_ms) /* FRR_TP_NOWAIT */
			return -EAGAIN;
		if (ret == -ETIMEDOUT)
			return frr_tp_err(ctx, -ETIMEDOUT,
					  "verbs: no peer connected to %s "
					  "within %d ms; did the other ranks "
					  "start, with this address?",
					  c->addr, timeout_ms);
		if (ret)
			return frr_tp_err(ctx, ret,
					  "verbs: rdma_get_cm_event: %s",
					  strerror(-ret));
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			continue;
		}
		struct rdma_cm_id *id = ev->id;

		reason = priv_get(ev, &theirs) ? VB_REJ_VERSION
					       : priv_check(c, &theirs);
		if (!reason && (!priv_proves(c, &theirs, theirs.rank,
					     c->base.cfg.rank, NULL) ||
				!nonce_fresh(c, theirs.nonce)))
			reason = VB_REJ_AUTH;
		rdma_ack_cm_event(ev);
		if (reason) {
			frr_warn("verbs: refused a connection to %s: %s",
				 c->addr, rej_reason_str(reason));
			refuse(id, c, reason);
			continue;
		}
		/* FRR_TP_NOWAIT: the handshake of a knock gets the ctx's */
		if (!timeout_ms)
			deadline = frr_now_ms() + ctx->cfg.timeout_ms;
		ret = accept_one(c, id, &theirs, deadline, &e);
		if (ret)
			return ret;
		*out = &e->base;
		return 0;
	}
}

/* ---- liveness and teardown -------------------------------------------- */

void vb_ep_fail(struct vb_ep *e, int err)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (e->err)
		return;
	e->err = err;
	/* outstanding WRs complete (flushed) instead of waiting on a peer
	 * that is gone */
	if (e->qp)
		ibv_modify_qp(e->qp, &a, IBV_QP_STATE);
}

int vb_ep_check_cm(struct vb_ep *e)
{
	struct rdma_cm_event *ev;

	while (e->ch && !rdma_get_cm_event(e->ch, &ev)) {
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
			if (!e->err)
				frr_warn("verbs: rank %d (%s) disconnected: "
					 "it exited or closed the endpoint",
					 e->base.peer_rank, e->peer_addr);
			vb_ep_fail(e, -ENOTCONN);
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			frr_err("verbs: device %s was removed",
				e->ctx->devname);
			vb_ep_fail(e, -ENODEV);
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
	return e->err;
}

int vb_ep_alive(struct frr_tp_ep *ep)
{
	struct vb_ep *e = vb_ep_of(ep);

	return vb_ep_check_cm(e) == 0;
}

void vb_ep_close(struct frr_tp_ep *ep)
{
	struct vb_ep *e = vb_ep_of(ep);
	struct vb_ctx *c = e->ctx;

	/* DREQ: the peer learns now, not at its next write */
	if (e->id && e->qp && !e->err)
		rdma_disconnect(e->id);
	vb_ep_teardown(e);
	c->eps[e->slot] = NULL;
	c->nfull -= e->full;
	free(e);
}
