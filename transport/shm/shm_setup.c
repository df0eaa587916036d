// SPDX-License-Identifier: MIT
/*
 * shm set-up: contexts, regions, imports of remote regions, the backend's
 * ops table.  Connections are in shm_cm.c, the wire messages in shm_msg.c,
 * the data path in shm_datapath.c.  Everything here may block (with a
 * timeout) and allocate; nothing here runs per write.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "shm.h"

static _Atomic unsigned addr_counter;

size_t shm_page_round(size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (len + pg - 1) & ~(pg - 1);
}

/* ---- shared-memory objects -------------------------------------------- */

/* The mapping (pointer returned, so that no output is left unset on any
 * path), or NULL with *err set to a negative errno. */
void *shm_memfd_map(const char *name, size_t len, int populate, int *fd_out,
		    int *err)
{
	void *p = MAP_FAILED;
	int fd;

	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd >= 0 && !ftruncate(fd, (off_t)len))
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
	if (p == MAP_FAILED) {
		*err = -errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*fd_out = fd;
	*err = 0;
	return p;
}

void *shm_map_peer_fd(int fd, size_t need, int *err)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st)) {
		*err = -errno;
		return NULL;
	}
	if ((uint64_t)st.st_size < need) {
		*err = -EPROTO;
		return NULL;
	}
	p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	*err = p == MAP_FAILED ? -errno : 0;
	return p == MAP_FAILED ? NULL : p;
}

size_t shm_ring_map_len(void)
{
	return shm_page_round(sizeof(struct shm_ring));
}

/* ---- context ---------------------------------------------------------- */

int shm_epoll_add(int epfd, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* Name the ctx, listen on its socket and watch that socket and wake_fd
 * with epoll; on failure the fds opened so far stay in c: the caller's
 * cleanup closes them. */
static int shm_ctx_listen(struct shm_ctx *c)
{
	struct sockaddr_un sa;
	socklen_t salen;
	int ret;

	/* world-readable (/proc/net/unix): nothing secret in it */
	snprintf(c->addr, sizeof(c->addr), "@flexrr-shm-p%d-r%d-%u",
		 (int)getpid(), c->rank, atomic_fetch_add(&addr_counter, 1));
	ret = shm_sockaddr_of(c->addr, &sa, &salen);
	if (ret)
		return frr_tp_err(
		    NULL, ret,
		    "shm: address %s does not fit a UNIX socket name", c->addr);
	c->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->lfd < 0 || bind(c->lfd, (struct sockaddr *)&sa, salen) ||
	    listen(c->lfd, 128 > c->acceptq_cap ? 128 : c->acceptq_cap))
		return frr_tp_err(NULL, -errno,
				  "shm: cannot listen on UNIX socket %s: %s",
				  c->addr, strerror(errno));
	c->wake_fd = eventfd(0, EFD_CLOEXEC);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->wake_fd < 0 || c->epfd < 0)
		return frr_tp_err(NULL, -errno, "shm: eventfd/epoll: %s",
				  strerror(errno));
	ret = shm_epoll_add(c->epfd, c->lfd, EPOLLIN, SHM_SVC_LISTEN);
	if (!ret)
		ret = shm_epoll_add(c->epfd, c->wake_fd, EPOLLIN, SHM_SVC_WAKE);
	if (ret)
		return frr_tp_err(NULL, ret, "shm: epoll_ctl: %s",
				  strerror(-ret));
	return 0;
}

static int shm_open_ctx(const struct frr_tp_config *cfg,
			struct frr_tp_ctx **out)
{
	struct shm_ctx *c;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return frr_tp_err(NULL, -ENOMEM, "shm: out of memory");
	c->cq = calloc(SHM_CQ_SLOTS, sizeof(*c->cq));
	/* hellos wait here until accepted: room for every endpoint the ctx
	 * may hold (cfg->max_eps is normalized by frr_tp_open) */
	c->acceptq_cap =
	    cfg->max_eps > SHM_ACCEPTQ ? cfg->max_eps : SHM_ACCEPTQ;
	if (c->acceptq_cap < cfg->nranks)
		c->acceptq_cap = cfg->nranks;
	c->acceptq = calloc((size_t)c->acceptq_cap, sizeof(*c->acceptq));
	/* every peer may be authenticating at once, and some strangers */
	c->hs_cap = c->acceptq_cap + 64;
	c->hs = calloc((size_t)c->hs_cap, sizeof(*c->hs));
	if (!c->cq || !c->acceptq || !c->hs) {
		ret = frr_tp_err(NULL, -ENOMEM, "shm: out of memory");
		goto free_ctx;
	}
	c->base.cfg = *cfg;
	c->secret = cfg->job_secret;
	c->rank = cfg->rank;
	c->nranks = cfg->nranks;
	c->next_ep_serial = 16; /* below: service thread tags */
	c->lfd = c->wake_fd = c->epfd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->acceptq_cond, NULL);
	ret = shm_ctx_listen(c);
	if (ret)
		goto close_fds;
	shm_auth_ctx_opened(); /* the service thread counts it out */
	ret = -pthread_create(&c->svc, NULL, shm_service, c);
	if (ret) {
		frr_tp_err(NULL, ret, "shm: cannot start service thread: %s",
			   strerror(-ret));
		shm_auth_ctx_closing(c);
		goto close_fds;
	}
	*out = &c->base;
	return 0;

close_fds:
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	if (c->lfd >= 0)
		close(c->lfd);
	pthread_cond_destroy(&c->acceptq_cond);
	pthread_mutex_destroy(&c->lock);
free_ctx:
	free(c->cq);
	free(c->acceptq);
	free(c->hs);
	free(c);
	return ret;
}

static void shm_close_ctx(struct frr_tp_ctx *ctx)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	uint64_t one = 1;

	if (write(c->wake_fd, &one, sizeof(one)) != sizeof(one))
		frr_warn("shm: cannot wake the service thread: %s",
			 strerror(errno));
	pthread_join(c->svc, NULL);
	for (int i = 0; i < c->acceptq_n; i++) {
		close(c->acceptq[i].fd);
		close(c->acceptq[i].ring_fd);
	}
	for (int i = 0; i < c->hs_cap; i++)
		if (c->hs[i].state != SHM_HS_FREE)
			close(c->hs[i].fd);
	if (c->neps || c->nregions)
		frr_warn("shm: context of rank %d closed with %d endpoints "
			 "and %zu regions still open (leaked)",
			 ctx->cfg.rank, c->neps, c->nregions);
	close(c->epfd);
	close(c->wake_fd);
	close(c->lfd);
	pthread_cond_destroy(&c->acceptq_cond);
	pthread_mutex_destroy(&c->lock);
	free(c->regions);
	free(c->eps);
	free(c->cq);
	free(c->acceptq);
	free(c->hs);
	free(c);
}

static int shm_addr_get(struct frr_tp_ctx *ctx, struct frr_tp_addr *addr)
{
	struct shm_ctx *c = shm_ctx_of(ctx);

	memset(addr, 0, sizeof(*addr));
	addr->backend = FRR_TP_BACKEND_SHM;
	addr->rank = ctx->cfg.rank;
	addr->job_token = ctx->cfg.job_token;
	snprintf(addr->str, sizeof(addr->str), "%s", c->addr);
	return 0;
}

static const char *shm_device_name(const struct frr_tp_ctx *ctx)
{
	(void)ctx;
	return "shm (memfd, same host)";
}

/* ---- regions ---------------------------------------------------------- */

static int grow(void **arr, size_t elem, size_t *cap, size_t need)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int shm_mr_alloc(struct frr_tp_ctx *ctx, size_t len, unsigned access,
			struct frr_tp_mr **out)
{
	struct shm_ctx *c = shm_ctx_of(ctx);
	size_t data_len = shm_page_round(len);
	struct shm_mr *m;
	char name[64];
	void *p;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return frr_tp_err(ctx, -ENOMEM, "shm: out of memory");
	m->fd = -1;
	if (access & FRR_TP_ACCESS_REMOTE_WRITE) {
		snprintf(name, sizeof(name), "flexrr-r%d-mr%u", ctx->cfg.rank,
			 ctx->next_region_id);
		m->map_len = data_len + shm_page_round(1);
		p = shm_memfd_map(name, m->map_len,
				  !(access & FRR_TP_ACCESS_ON_TOUCH), &m->fd,
				  &ret);
	} else {
		m->map_len = data_len;
		p = mmap(NULL, data_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		ret = p == MAP_FAILED ? -errno : 0;
	}
	if (ret) {
		frr_tp_err(ctx, ret,
			   "shm: cannot allocate a %zu-byte region: %s (check "
			   "free memory and 'ulimit -v')",
			   len, strerror(-ret));
		goto free_mr;
	}
	m->base.ptr = p;
	m->base.len = len;
	m->base.access = access;
	/* under the lock: serve_import tells a freed id by it */
	pthread_mutex_lock(&c->lock);
	m->base.region_id = ctx->next_region_id++;
	pthread_mutex_unlock(&c->lock);
	if (m->fd >= 0) {
		m->ctl = (struct shm_region_ctl *)((char *)p + data_len);
		m->ctl->region_id = m->base.region_id;
		atomic_store_explicit(&m->ctl->alive, 1, memory_order_release);
	}
	pthread_mutex_lock(&c->lock);
	ret = grow((void **)&c->regions, sizeof(*c->regions), &c->capregions,
		   c->nregions + 1);
	if (!ret)
		c->regions[c->nregions++] = m;
	pthread_mutex_unlock(&c->lock);
	if (ret) {
		frr_tp_err(ctx, ret, "shm: out of memory");
		goto unmap;
	}
	*out = &m->base;
	return 0;

unmap:
	munmap(p, m->map_len);
	if (m->fd >= 0)
		close(m->fd);
free_mr:
	free(m);
	return ret;
}

static void shm_mr_free(struct frr_tp_mr *mr)
{
	struct shm_ctx *c = shm_ctx_of(mr->ctx);
	struct shm_mr *m = shm_mr_of(mr);

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nregions; i++) {
		if (c->regions[i] == m) {
			c->regions[i] = c->regions[--c->nregions];
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	/* importers keep their own mapping: tell them it is dead */
	if (m->ctl)
		atomic_store_explicit(&m->ctl->alive, 0, memory_order_release);
	munmap(mr->ptr, m->map_len);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

/* ---- remote regions --------------------------------------------------- */

/* IMPORT over a connection of its own to the owner's service thread: the
 * owner's answer in *m, the region's fd in *rfd when it sent one. */
static int shm_import_ask(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
			  struct shm_msg *m, int *rfd)
{
	struct shm_ctx *c = shm_ctx_of(ep->ctx);
	struct shm_ep *e = shm_ep_of(ep);
	struct shm_msg q;
	int fd, ret;

	fd = shm_dial(e->peer_addr, ep->ctx->cfg.timeout_ms);
	if (fd < 0)
		return frr_tp_err(
		    ep->ctx, fd,
		    "shm: cannot reach rank %d to import region %u: %s",
		    ep->peer_rank, desc->region_id, strerror(-fd));
	shm_msg_init(&q, c, SHM_IMPORT);
	q.region_id = desc->region_id;
	ret = shm_auth_connect(c, fd, ep->peer_rank, &q, -1,
			       ep->ctx->cfg.timeout_ms, m, rfd);
	close(fd);
	if (ret == -ETIMEDOUT)
		return frr_tp_err(ep->ctx, ret,
				  "shm: rank %d did not answer the import of "
				  "region %u within %d ms: it is stopped, hung "
				  "or overloaded (%s)",
				  ep->peer_rank, desc->region_id,
				  ep->ctx->cfg.timeout_ms,
				  frr_tp_wait_hint(ep->ctx));
	if (ret)
		return frr_tp_err(ep->ctx, ret,
				  "shm: rank %d did not answer the import of "
				  "region %u: %s",
				  ep->peer_rank, desc->region_id,
				  strerror(-ret));
	return 0;
}

static int shm_rmr_import(struct frr_tp_ep *ep, const struct frr_tp_desc *desc,
			  struct frr_tp_rmr **out)
{
	struct shm_ep *e = shm_ep_of(ep);
	size_t data_len = shm_page_round(desc->len);
	struct shm_rmr *r;
	struct shm_msg m;
	int rfd = -1, ret;
	void *p;

	if (atomic_load_explicit(&e->gone, memory_order_relaxed))
		return frr_tp_err(ep->ctx, -ENOTCONN,
				  "shm: cannot import from rank %d: it has "
				  "closed the endpoint or exited",
				  ep->peer_rank);
	r = calloc(1, sizeof(*r));
	if (!r)
		return frr_tp_err(ep->ctx, -ENOMEM, "shm: out of memory");
	ret = shm_import_ask(ep, desc, &m, &rfd);
	if (ret)
		goto free_rmr;
	if (m.type != SHM_IMPORT_OK || rfd < 0) {
		ret = m.type == SHM_IMPORT_ERR ? m.err : -EPROTO;
		frr_tp_err(ep->ctx, ret, "shm: import of region %u refused: %s",
			   desc->region_id,
			   m.type == SHM_IMPORT_ERR ? m.why : "protocol error");
		goto close_rfd;
	}
	if (m.len != desc->len) {
		ret = frr_tp_err(ep->ctx, -EINVAL,
				 "shm: descriptor says region %u has %llu "
				 "bytes but rank %d registered %llu; the "
				 "descriptor is forged or stale",
				 desc->region_id, (unsigned long long)desc->len,
				 ep->peer_rank, (unsigned long long)m.len);
		goto close_rfd;
	}
	r->map_len = data_len + shm_page_round(1);
	p = shm_map_peer_fd(rfd, r->map_len, &ret);
	if (!p) {
		frr_tp_err(ep->ctx, ret,
			   "shm: cannot map region %u of rank %d (%llu bytes): "
			   "%s",
			   desc->region_id, ep->peer_rank,
			   (unsigned long long)desc->len, strerror(-ret));
		goto close_rfd;
	}
	close(rfd);
	r->data = p;
	r->ctl = (struct shm_region_ctl *)((char *)p + data_len);
	*out = &r->base;
	return 0;

close_rfd:
	if (rfd >= 0)
		close(rfd);
free_rmr:
	free(r);
	return ret;
}

static void shm_rmr_release(struct frr_tp_rmr *rmr)
{
	struct shm_rmr *r = shm_rmr_of(rmr);

	munmap(r->data, r->map_len);
	free(r);
}

const struct frr_tp_ops frr_tp_shm_ops = {
	.name = "shm",
	.open = shm_open_ctx,
	.close = shm_close_ctx,
	.addr_get = shm_addr_get,
	.device_name = shm_device_name,
	.mr_alloc = shm_mr_alloc,
	.mr_free = shm_mr_free,
	.ep_connect = shm_ep_connect,
	.ep_accept = shm_ep_accept,
	.ep_close = shm_ep_close,
	.ep_alive = shm_ep_alive,
	.rmr_import = shm_rmr_import,
	.rmr_release = shm_rmr_release,
	.write = shm_write,
	.write_u64 = shm_write_u64,
	.write_notify = shm_write_notify,
	.poll = shm_poll,
	.poll_notify = shm_poll_notify,
	.flush = shm_flush,
	.rmr_direct = shm_rmr_direct,
};
