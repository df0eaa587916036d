// SPDX-License-Identifier: MIT
/*
 * shm connection management: the service thread (accepts connections,
 * answers HELLO and IMPORT, watches endpoints for hang-ups) and the
 * endpoint calls (connect, accept, close, alive).  May block (with a
 * timeout) and allocate; nothing here runs per write.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "shm.h"

/* ---- service thread --------------------------------------------------- */

static struct shm_mr *region_find(struct shm_ctx *c, uint32_t id)
{
	for (size_t i = 0; i < c->nregions; i++)
		if (c->regions[i]->base.region_id == id)
			return c->regions[i];
	return NULL;
}

static void serve_import(struct shm_ctx *c, int fd, const struct shm_msg *q)
{
	struct shm_mr *mr;
	struct shm_msg m;
	char why[160];
	int err = 0;

	pthread_mutex_lock(&c->lock);
	mr = region_find(c, q->region_id);
	/* freed: the owner is failing or closing, a peer's loss to the
	 * importer (ECONNRESET), not a forgery of its own */
	if (!mr && q->region_id < c->base.next_region_id)
		err = -ECONNRESET;
	else if (!mr || mr->fd < 0)
		err = -ENOENT;
	if (err) {
		pthread_mutex_unlock(&c->lock);
		snprintf(why, sizeof(why), "rank %d %s region %u%s", c->rank,
			 err == -ENOENT ? "has no remotely writable" : "freed",
			 q->region_id,
			 err == -ENOENT ? " (the descriptor is forged)"
					: ": it is failing or closing (its "
					  "own message says why)");
		shm_reply_error(fd, c, SHM_IMPORT_ERR, err, why);
		return;
	}
	shm_msg_init(&m, c, SHM_IMPORT_OK);
	m.region_id = q->region_id;
	m.len = mr->base.len;
	/* under the lock so mr_free cannot close the fd meanwhile */
	(void)shm_msg_send(fd, &m, mr->fd);
	pthread_mutex_unlock(&c->lock);
}

static void serve_hello(struct shm_ctx *c, int fd, struct shm_msg *q,
			int ring_fd)
{
	struct shm_pending *p;
	char why[160];

	if (q->rank < 0 || q->rank >= c->nranks || q->rank == c->rank ||
	    q->nranks != c->nranks || ring_fd < 0) {
		snprintf(why, sizeof(why),
			 "rank %d of a %d-rank job cannot connect to rank %d "
			 "of a %d-rank job",
			 q->rank, q->nranks, c->rank, c->nranks);
		goto reject;
	}
	pthread_mutex_lock(&c->lock);
	if (c->acceptq_n == c->acceptq_cap) {
		pthread_mutex_unlock(&c->lock);
		snprintf(why, sizeof(why),
			 "rank %d has %d connections nobody accepted", c->rank,
			 c->acceptq_cap);
		goto reject;
	}
	p = &c->acceptq[c->acceptq_n++];
	p->fd = fd;
	p->rank = q->rank;
	p->ring_fd = ring_fd;
	p->flags = q->flags;
	snprintf(p->addr, sizeof(p->addr), "%s", q->addr);
	pthread_cond_signal(&c->acceptq_cond);
	pthread_mutex_unlock(&c->lock);
	return;

reject:
	shm_reply_error(fd, c, SHM_REJECT, -EPROTO, why);
	if (ring_fd >= 0)
		close(ring_fd);
	close(fd);
}

/* An authenticated request (shm_auth.c): a new endpoint or an import. */
static void serve_request(struct shm_ctx *c, int fd, struct shm_msg *q,
			  int ring_fd)
{
	if (q->type == SHM_HELLO) {
		serve_hello(c, fd, q, ring_fd);
		return;
	}
	if (q->type == SHM_IMPORT)
		serve_import(c, fd, q);
	if (ring_fd >= 0)
		close(ring_fd);
	close(fd);
}

/* A new connection: credentials now, then the secret as its messages
 * arrive (serve_handshake), so a silent client delays nobody. */
static void serve_new_conn(struct shm_ctx *c)
{
	int fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC), slot = -1;

	if (fd < 0)
		return;
	for (int i = 0; i < c->hs_cap && slot < 0; i++)
		if (c->hs[i].state == SHM_HS_FREE)
			slot = i;
	if (slot < 0) {
		shm_reply_error(fd, c, SHM_REJECT, -EBUSY,
				"too many connections being authenticated");
		frr_warn("shm: rank %d has %d connections that have not "
			 "authenticated yet: refusing more (a local process "
			 "connects in a loop?)",
			 c->rank, c->hs_cap);
		close(fd);
		return;
	}
	if (shm_auth_begin(c, fd, &c->hs[slot]) ||
	    shm_epoll_add(c->epfd, fd, EPOLLIN,
			  SHM_SVC_AUTH | (uint64_t)slot)) {
		c->hs[slot].state = SHM_HS_FREE;
		close(fd);
	}
}

static void hs_end(struct shm_ctx *c, struct shm_hs *h)
{
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, h->fd, NULL);
	h->state = SHM_HS_FREE;
}

static void serve_handshake(struct shm_ctx *c, int slot)
{
	struct shm_hs *h = &c->hs[slot];
	int ring_fd, ret;

	if (slot < 0 || slot >= c->hs_cap || h->state == SHM_HS_FREE)
		return;
	ret = shm_auth_step(c, h, &ring_fd);
	if (!ret)
		return;
	hs_end(c, h);
	if (ret < 0) {
		close(h->fd);
		return;
	}
	serve_request(c, h->fd, &h->q, ring_fd);
}

/* Drop the handshakes past their deadline; ms until the next one's (-1:
 * none), for epoll_wait. */
static int hs_expire(struct shm_ctx *c)
{
	long long now = frr_now_ms(), next = -1;

	for (int i = 0; i < c->hs_cap; i++) {
		struct shm_hs *h = &c->hs[i];

		if (h->state == SHM_HS_FREE)
			continue;
		if (h->deadline_ms <= now) {
			shm_auth_expire(c, h);
			hs_end(c, h);
			close(h->fd);
		} else if (next < 0 || h->deadline_ms - now < next) {
			next = h->deadline_ms - now;
		}
	}
	return (int)next;
}

static void mark_gone(struct shm_ctx *c, uint64_t serial)
{
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->neps; i++) {
		if (c->eps[i]->serial == serial) {
			atomic_store_explicit(&c->eps[i]->gone, 1,
					      memory_order_relaxed);
			/* level-triggered: stop reporting this fd */
			epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->eps[i]->fd, NULL);
		}
	}
	pthread_mutex_unlock(&c->lock);
}

void *shm_service(void *arg)
{
	struct shm_ctx *c = arg;
	struct epoll_event ev[16];

	/* its own copy of the rank: see struct shm_ctx */
	frr_log_thread_start(c->rank, "shm");
	bool stop = false;

	while (!stop) {
		int n = epoll_wait(c->epfd, ev, 16, hs_expire(c));

		if (n < 0 && errno == EINTR)
			continue;
		stop = n < 0;
		for (int i = 0; i < n && !stop; i++) {
			uint64_t tag = ev[i].data.u64;

			if (tag == SHM_SVC_WAKE)
				stop = true;
			else if (tag == SHM_SVC_LISTEN)
				serve_new_conn(c);
			else if (tag & SHM_SVC_AUTH)
				serve_handshake(c, (int)(tag & ~SHM_SVC_AUTH));
			else
				mark_gone(c, tag);
		}
	}
	shm_auth_ctx_closing(c);
	return NULL;
}

/* ---- endpoints -------------------------------------------------------- */

static struct shm_ep *ep_new(struct shm_ctx *c, int rank, const char *addr)
{
	struct shm_ep *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = -1;
	e->base.ctx = &c->base;
	e->base.peer_rank = rank;
	snprintf(e->peer_addr, sizeof(e->peer_addr), "%s", addr);
	return e;
}

static void ep_unmap(struct shm_ep *e)
{
	if (e->in)
		munmap(e->in, shm_ring_map_len());
	if (e->out)
		munmap(e->out, shm_ring_map_len());
}

/* Publish a connected ep: watched for hang-up, scanned by poll_notify. */
static int ep_register(struct shm_ctx *c, struct shm_ep *e)
{
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	e->serial = c->next_ep_serial++;
	if (c->neps == c->capeps) {
		int ncap = c->capeps ? c->capeps * 2 : 8;
		struct shm_ep **p = realloc(c->eps, ncap * sizeof(*p));

		if (!p) {
			ret = -ENOMEM;
			goto unlock;
		}
		c->eps = p;
		c->capeps = ncap;
	}
	ret = shm_epoll_add(c->epfd, e->fd, EPOLLRDHUP, e->serial);
	if (ret)
		goto unlock;
	c->eps[c->neps++] = e;
unlock:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* Make my inbound ring; its fd goes to the peer, which produces into it. */
static int ring_create(struct shm_ctx *c, struct shm_ep *e, int *fd)
{
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "flexrr-r%d-ring", c->base.cfg.rank);
	e->in = shm_memfd_map(name, shm_ring_map_len(), 1, fd, &ret);
	return ret;
}

/* HELLO with my ring: the peer's answer in *m, with its ring's fd in
 * *peer_ring when it sent one. */
static int connect_hello(struct shm_ctx *c, struct shm_ep *e,
			 const struct frr_tp_addr *peer, int ring_fd,
			 int timeout_ms, long long deadline, struct shm_msg *m,
			 int *peer_ring)
{
	struct frr_tp_ctx *ctx = &c->base;
	struct shm_msg q;
	int ret;

	shm_msg_init(&q, c, SHM_HELLO);
	q.flags = ctx->cfg.flags;
	e->base.no_notify = !!(ctx->cfg.flags & FRR_TP_CFG_NO_NOTIFY);
	ret = shm_auth_connect(
	    c, e->fd, peer->rank, &q, ring_fd,
	    (int)(deadline - frr_now_ms() > 0 ? deadline - frr_now_ms() : 1), m,
	    peer_ring);
	if (ret == -ETIMEDOUT)
		return frr_tp_err(ctx, ret,
				  "shm: rank %d did not answer the connection "
				  "within %d ms: it is stopped, hung or "
				  "overloaded (%s)",
				  peer->rank, timeout_ms,
				  frr_tp_timeout_hint(ctx));
	if (ret)
		return frr_tp_err(ctx, ret,
				  "shm: rank %d did not accept the "
				  "connection: %s",
				  peer->rank, strerror(-ret));
	return 0;
}

int shm_ep_connect(struct frr_tp_ctx *ctx, const struct frr_tp_addr *peer,
		   int timeout_ms, struct frr_tp_ep **out)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	long long deadline = frr_now_ms() + timeout_ms;
	struct shm_msg m;
	struct shm_ep *e;
	int ring_fd = -1, peer_ring = -1, ret;

	e = ep_new(c, peer->rank, peer->str);
	if (!e)
		return frr_tp_err(ctx, -ENOMEM, "shm: out of memory");
	ret = ring_create(c, e, &ring_fd);
	if (ret) {
		frr_tp_err(ctx, ret,
			   "shm: cannot create a notification "
			   "ring: %s",
			   strerror(-ret));
		goto free_ep;
	}
	e->fd = shm_dial(peer->str, timeout_ms);
	if (e->fd < 0) {
		ret = e->fd;
		frr_tp_err(ctx, ret,
			   "shm: cannot connect to rank %d at %s: %s (has it "
			   "exited, or is it on another host? shm is "
			   "same-host only)",
			   peer->rank, peer->str, strerror(-ret));
		goto free_ring;
	}
	ret = connect_hello(c, e, peer, ring_fd, timeout_ms, deadline, &m,
			    &peer_ring);
	if (ret)
		goto close_fd;
	if (m.type != SHM_WELCOME || m.rank != peer->rank || peer_ring < 0) {
		ret = m.type == SHM_REJECT ? m.err : -EPROTO;
		frr_tp_err(ctx, ret, "shm: rank %d refused the connection: %s",
			   peer->rank,
			   m.type == SHM_REJECT ? m.why : "protocol error");
		goto close_fd;
	}
	e->out = shm_map_peer_fd(peer_ring, shm_ring_map_len(), &ret);
	if (!e->out) {
		frr_tp_err(ctx, ret, "shm: cannot map rank %d's ring: %s",
			   peer->rank, strerror(-ret));
		goto close_fd;
	}
	ret = ep_register(c, e);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot register endpoint: %s",
			   strerror(-ret));
		goto close_fd;
	}
	close(peer_ring);
	close(ring_fd);
	*out = &e->base;
	return 0;

close_fd:
	if (peer_ring >= 0)
		close(peer_ring);
	close(e->fd);
free_ring:
	close(ring_fd);
free_ep:
	ep_unmap(e);
	free(e);
	return ret;
}

static int take_pending(struct shm_ctx *c, int timeout_ms,
			struct shm_pending *out)
{
	struct timespec ts = frr_deadline_ts(timeout_ms);
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	while (!c->acceptq_n && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&c->acceptq_cond, &c->lock, &ts);
	if (c->acceptq_n) {
		*out = c->acceptq[0];
		memmove(&c->acceptq[0], &c->acceptq[1],
			--c->acceptq_n * sizeof(c->acceptq[0]));
		ret = 0;
	} else {
		ret = -ETIMEDOUT;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int shm_ep_accept(struct frr_tp_ctx *ctx, int timeout_ms,
		  struct frr_tp_ep **out)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	struct shm_pending p;
	struct shm_msg m;
	struct shm_ep *e;
	int ring_fd = -1, ret;

	ret = take_pending(c, timeout_ms, &p);
	if (ret && !timeout_ms) /* FRR_TP_NOWAIT: nobody is knocking */
		return -EAGAIN;
	if (ret)
		return frr_tp_err(ctx, ret,
				  "shm: rank %d: no peer connected within %d "
				  "ms (did the peers start and get this "
				  "rank's address?)",
				  ctx->cfg.rank, timeout_ms);
	e = ep_new(c, p.rank, p.addr);
	if (!e) {
		ret = frr_tp_err(ctx, -ENOMEM, "shm: out of memory");
		goto close_pending;
	}
	e->fd = p.fd;
	e->base.no_notify = !!(p.flags & FRR_TP_CFG_NO_NOTIFY);
	e->out = shm_map_peer_fd(p.ring_fd, shm_ring_map_len(), &ret);
	if (!e->out) {
		frr_tp_err(ctx, ret, "shm: cannot map rank %d's ring: %s",
			   p.rank, strerror(-ret));
		goto free_ep;
	}
	ret = ring_create(c, e, &ring_fd);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot create a ring: %s",
			   strerror(-ret));
		goto free_ep;
	}
	shm_msg_init(&m, c, SHM_WELCOME);
	ret = shm_msg_send(e->fd, &m, ring_fd);
	close(ring_fd);
	if (ret) {
		frr_tp_err(ctx, -ECONNRESET,
			   "shm: rank %d hung up while connecting: %s", p.rank,
			   strerror(-ret));
		ret = -ECONNRESET;
		goto free_ep;
	}
	ret = ep_register(c, e);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: cannot register endpoint: %s",
			   strerror(-ret));
		goto free_ep;
	}
	close(p.ring_fd);
	*out = &e->base;
	return 0;

free_ep:
	if (e) {
		ep_unmap(e);
		free(e);
	}
close_pending:
	close(p.fd);
	close(p.ring_fd);
	return ret;
}

void shm_ep_close(struct frr_tp_ep *ep)
{
	struct shm_ctx *c = shm_ctx_of(ep->ctx);
	struct shm_ep *e = shm_ep_of(ep);

	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->neps; i++) {
		if (c->eps[i] == e) {
			c->eps[i] = c->eps[--c->neps];
			break;
		}
	}
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, e->fd, NULL);
	pthread_mutex_unlock(&c->lock);
	close(e->fd);
	ep_unmap(e);
	free(e);
}

int shm_ep_alive(struct frr_tp_ep *ep)
{
	struct shm_ep *e = shm_ep_of(ep);
	struct pollfd pfd = { .fd = e->fd, .events = POLLRDHUP };

	if (atomic_load_explicit(&e->gone, memory_order_relaxed))
		return 0;
	/* do not wait for the service thread: ask the socket now */
	if (poll(&pfd, 1, 0) > 0 &&
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
		atomic_store_explicit(&e->gone, 1, memory_order_relaxed);
		return 0;
	}
	return 1;
}
