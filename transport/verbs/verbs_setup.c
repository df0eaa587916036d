// SPDX-License-Identifier: MIT
/*
 * verbs backend set-up: the listener, PD/CQs, contexts, registered regions,
 * and the ops table (device, port and GID choice: verbs_device.c).  See
 * verbs.h for the design.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "verbs.h"

#define VB_STASH_CAP 8192u /* power of two; like shm's completion queue */
#define VB_RXE_VENDOR_ID 0xffffffu /* soft-RoCE (rdma_rxe) */

/* ---- listener, PD, CQs ------------------------------------------------ */

static int open_listener(struct vb_ctx *c, int port)
{
	char ip[INET_ADDRSTRLEN];
	const char *bound;

	inet_ntop(AF_INET, &c->bind_sa.sin_addr, ip, sizeof(ip));
	c->bind_sa.sin_family = AF_INET;
	c->bind_sa.sin_port = htons((uint16_t)port);
	c->lch = rdma_create_event_channel();
	if (!c->lch)
		return frr_tp_err(&c->base, -errno,
				  "verbs: rdma_create_event_channel: %s; is "
				  "rdma_ucm loaded (/dev/infiniband/"
				  "rdma_cm)?",
				  strerror(errno));
	if (fcntl(c->lch->fd, F_SETFL, O_NONBLOCK))
		return frr_tp_err(&c->base, -errno, "verbs: fcntl: %s",
				  strerror(errno));
	if (rdma_create_id(c->lch, &c->listen_id, NULL, RDMA_PS_TCP))
		return frr_tp_err(&c->base, -errno, "verbs: rdma_create_id: %s",
				  strerror(errno));
	if (rdma_bind_addr(c->listen_id, (struct sockaddr *)&c->bind_sa))
		return frr_tp_err(&c->base, -errno,
				  "verbs: rdma_bind_addr(%s:%d): %s; is the "
				  "port in use, or the address not local?",
				  ip, port, strerror(errno));
	bound = c->listen_id->verbs
		    ? ibv_get_device_name(c->listen_id->verbs->device)
		    : "no device";
	if (c->listen_id->verbs != c->verbs)
		return frr_tp_err(&c->base, -EINVAL,
				  "verbs: address %s belongs to %s, not to "
				  "the chosen device %s; set FLEXRR_DEVICE "
				  "and FLEXRR_GID_INDEX consistently",
				  ip, bound, c->devname);
	if (rdma_listen(c->listen_id, 64))
		return frr_tp_err(&c->base, -errno, "verbs: rdma_listen: %s",
				  strerror(errno));
	c->bind_sa.sin_port = rdma_get_src_port(c->listen_id);
	snprintf(c->addr, sizeof(c->addr), "%s:%u", ip,
		 ntohs(c->bind_sa.sin_port));
	return 0;
}

/*
 * Whether the kernel's memcpy may split an aligned 8-byte copy (rxe places
 * payloads with it, verbs.h).  x86-64 Linux copies with 'rep movsb' when the
 * CPU has ERMS/FSRM (byte granular); otherwise with 8-byte moves.  Unknown
 * architectures: assume it may.
 */
static int copy_may_tear(void)
{
#if defined(__x86_64__)
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int tear = 1;

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			tear = strstr(line, " erms") || strstr(line, " fsrm");
			break;
		}
	fclose(f);
	return tear;
#else
	return 1;
#endif
}

static int open_queues(struct vb_ctx *c, const struct frr_tp_config *cfg)
{
	int no_rq = !!(cfg->flags & FRR_TP_CFG_NO_NOTIFY);
	struct ibv_device_attr da;
	int scqe, rcqe;

	if (ibv_query_device(c->verbs, &da))
		return frr_tp_err(&c->base, -errno,
				  "verbs: ibv_query_device(%s): %s", c->devname,
				  strerror(errno));
	c->max_sge = (uint32_t)da.max_sge;
	c->u64_cas = da.vendor_id == VB_RXE_VENDOR_ID && copy_may_tear();
	/* outstanding swaps per QP: they pipeline like writes */
	c->rd_atom = da.max_qp_rd_atom < da.max_qp_init_rd_atom
			 ? da.max_qp_rd_atom
			 : da.max_qp_init_rd_atom;
	if (c->rd_atom > 16)
		c->rd_atom = 16;
	if (c->rd_atom < 1)
		c->rd_atom = 1;
	if (getenv("FLEXRR_VERBS_U64"))
		c->u64_cas = !strcmp(getenv("FLEXRR_VERBS_U64"), "cas");
	c->pd = ibv_alloc_pd(c->verbs);
	if (!c->pd)
		return frr_tp_err(&c->base, -errno,
				  "verbs: ibv_alloc_pd(%s): %s", c->devname,
				  strerror(errno));
	/* Every full endpoint's SQ/RQ fits: CQs never overflow (verbs.h).
	 * A full mesh needs nranks - 1; a few spare for reconnects.  Sized
	 * by the job: rxe allocates and zeroes every CQ entry up front.  The
	 * accepted endpoints of no-notify peers (their sending threads)
	 * take a slot but no CQ entry. */
	c->nslots = cfg->max_eps < 8 ? 8 : cfg->max_eps;
	c->max_full = cfg->nranks + 3 < 8 ? 8 : cfg->nranks + 3;
	if (c->max_full > VB_MAX_FULL)
		c->max_full = VB_MAX_FULL;
	if (c->max_full * (int)(no_rq ? VB_SQ_DEPTH : VB_RQ_DEPTH) > da.max_cqe)
		c->max_full =
		    da.max_cqe / (int)(no_rq ? VB_SQ_DEPTH : VB_RQ_DEPTH);
	if (c->max_full > c->nslots)
		c->max_full = c->nslots;
	if (c->max_full < 1)
		return frr_tp_err(&c->base, -ENOSPC,
				  "verbs: %s allows only %d CQ entries",
				  c->devname, da.max_cqe);
	c->eps = calloc((size_t)c->nslots, sizeof(*c->eps));
	c->gens = calloc((size_t)c->nslots, sizeof(*c->gens));
	if (!c->eps || !c->gens)
		return frr_tp_err(&c->base, -ENOMEM, "verbs: out of memory");
	scqe = c->max_full * (int)VB_SQ_DEPTH;
	rcqe = no_rq ? 1 : c->max_full * (int)VB_RQ_DEPTH;
	c->scq = ibv_create_cq(c->verbs, scqe, NULL, NULL, 0);
	if (!c->scq)
		return frr_tp_err(&c->base, -errno,
				  "verbs: ibv_create_cq(%d): %s", scqe,
				  strerror(errno));
	c->rcq = ibv_create_cq(c->verbs, rcqe, NULL, NULL, 0);
	if (!c->rcq)
		return frr_tp_err(&c->base, -errno,
				  "verbs: ibv_create_cq(%d): %s", rcqe,
				  strerror(errno));
	c->stash_cap = VB_STASH_CAP;
	c->stash = calloc(c->stash_cap, sizeof(*c->stash));
	if (!c->stash)
		return frr_tp_err(&c->base, -ENOMEM, "verbs: out of memory");
	return 0;
}

int vb_open(const struct frr_tp_config *cfg, struct frr_tp_ctx **out)
{
	struct ibv_port_attr pa;
	struct vb_ctx *c;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return frr_tp_err(NULL, -ENOMEM, "verbs: out of memory");
	c->base.cfg = *cfg; /* the open's own errors name the caller's hints */
	ret = vb_pick_device(c, cfg, &pa);
	if (ret)
		goto close_ctx;
	c->active_mtu = pa.active_mtu;
	c->link_layer = pa.link_layer;
	ret = vb_pick_gid(c, cfg, &pa);
	if (ret)
		goto close_ctx;
	ret = open_listener(c, cfg->port);
	if (ret)
		goto close_ctx;
	ret = open_queues(c, cfg);
	if (ret)
		goto close_ctx;
	c->numa_node = vb_numa_node(c->devname);
	snprintf(c->desc, sizeof(c->desc), "%s port %u gid %d", c->devname,
		 c->port, c->gid_index);
	frr_info("verbs: rank %d uses %s (%s, active MTU %s, NUMA node %d%s), "
		 "listening on %s",
		 cfg->rank, c->desc,
		 c->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE v2"
							  : "InfiniBand",
		 vb_mtu_str(c->active_mtu), c->numa_node,
		 c->u64_cas ? ", counters by atomics" : "", c->addr);
	*out = &c->base;
	return 0;

close_ctx:
	/* keep the message: the generic layer has no ctx to read it from */
	vb_close(&c->base);
	return ret;
}

void vb_close(struct frr_tp_ctx *ctx)
{
	struct vb_ctx *c = vb_ctx_of(ctx);
	int nmr = 0;

	for (int i = 0; c->eps && i < c->nslots; i++)
		if (c->eps[i])
			vb_ep_close(&c->eps[i]->base);
	while (c->mrs) {
		nmr++;
		frr_tp_verbs_ops.mr_free(&c->mrs->base);
	}
	if (nmr)
		frr_warn("verbs: %d region(s) still registered at close; "
			 "deregistered them (free regions before closing "
			 "the context)",
			 nmr);
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->lch)
		rdma_destroy_event_channel(c->lch);
	if (c->rcq)
		ibv_destroy_cq(c->rcq);
	if (c->scq)
		ibv_destroy_cq(c->scq);
	free(c->eps);
	free(c->gens);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->devs)
		rdma_free_devices(c->devs);
	free(c->stash);
	free(c);
}

static int vb_addr_get(struct frr_tp_ctx *ctx, struct frr_tp_addr *addr)
{
	struct vb_ctx *c = vb_ctx_of(ctx);

	memset(addr, 0, sizeof(*addr));
	addr->backend = FRR_TP_BACKEND_VERBS;
	addr->rank = ctx->cfg.rank;
	addr->job_token = ctx->cfg.job_token;
	snprintf(addr->str, sizeof(addr->str), "%s", c->addr);
	return 0;
}

static const char *vb_device_name(const struct frr_tp_ctx *ctx)
{
	return container_of(ctx, const struct vb_ctx, base)->desc;
}

/* ---- registered regions ----------------------------------------------- */

static int reg_failed(struct vb_ctx *c, size_t len, int err)
{
	struct rlimit rl;
	char lim[64] = "unknown";

	if (!getrlimit(RLIMIT_MEMLOCK, &rl)) {
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "unlimited");
		else
			snprintf(lim, sizeof(lim), "%llu KiB",
				 (unsigned long long)rl.rlim_cur / 1024);
	}
	if (err == ENOMEM || err == EPERM || err == EAGAIN)
		return frr_tp_err(&c->base, -ENOMEM,
				  "verbs: ibv_reg_mr(%zu KiB) on %s failed: "
				  "%s; the memlock limit is %s (pinned "
				  "regions count against it): run 'ulimit "
				  "-l unlimited', set 'memlock unlimited' in "
				  "/etc/security/limits.conf, or start the "
				  "container with --ulimit memlock=-1",
				  len / 1024, c->devname, strerror(err), lim);
	return frr_tp_err(&c->base, -err,
			  "verbs: ibv_reg_mr(%zu KiB) on %s failed: %s",
			  len / 1024, c->devname, strerror(err));
}

static int vb_mr_alloc(struct frr_tp_ctx *ctx, size_t len, unsigned access,
		       struct frr_tp_mr **out)
{
	struct vb_ctx *c = vb_ctx_of(ctx);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int flags = 0; /* source of writes: local read only */
	struct vb_mr *m;
	void *p;
	int ret;

	if (access & FRR_TP_ACCESS_REMOTE_WRITE) {
		flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		if (c->u64_cas) /* counters arrive as atomics (verbs.h) */
			flags |= IBV_ACCESS_REMOTE_ATOMIC;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return frr_tp_err(ctx, -ENOMEM, "verbs: out of memory");
	m->maplen = (len + page - 1) & ~(page - 1);
	/* anonymous pages: page aligned, zeroed, and whole pages for the
	 * DONTFORK marking that ibv_reg_mr applies */
	p = mmap(NULL, m->maplen, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		ret = frr_tp_err(ctx, -errno, "verbs: mmap(%zu): %s", m->maplen,
				 strerror(errno));
		goto free_m;
	}
	if (c->numa_node >= 0 && numa_available() >= 0)
		numa_tonode_memory(p, m->maplen, c->numa_node);
	m->mr = ibv_reg_mr(c->pd, p, m->maplen, flags);
	if (!m->mr) {
		ret = reg_failed(c, m->maplen, errno);
		goto unmap;
	}
	m->base.ptr = p;
	m->base.len = len;
	m->base.access = access;
	m->base.region_id = ctx->next_region_id++;
	m->base.remote_addr = (uint64_t)(uintptr_t)p;
	m->base.rkey = m->mr->rkey;
	m->base.lkey = m->mr->lkey;
	m->next = c->mrs;
	if (c->mrs)
		c->mrs->prev = m;
	c->mrs = m;
	*out = &m->base;
	return 0;

unmap:
	munmap(p, m->maplen);
free_m:
	free(m);
	return ret;
}

static void vb_mr_free(struct frr_tp_mr *mr)
{
	struct vb_mr *m = vb_mr_of(mr);
	struct vb_ctx *c = vb_ctx_of(mr->ctx);
	int ret;

	ret = ibv_dereg_mr(m->mr);
	if (ret)
		frr_warn("verbs: ibv_dereg_mr: %s", strerror(ret));
	munmap(m->base.ptr, m->maplen);
	if (m->prev)
		m->prev->next = m->next;
	else
		c->mrs = m->next;
	if (m->next)
		m->next->prev = m->prev;
	free(m);
}

const struct frr_tp_ops frr_tp_verbs_ops = {
	.name = "verbs",
	.available = frr_tp_verbs_available,
	.open = vb_open,
	.close = vb_close,
	.addr_get = vb_addr_get,
	.device_name = vb_device_name,
	.mr_alloc = vb_mr_alloc,
	.mr_free = vb_mr_free,
	.ep_connect = vb_ep_connect,
	.ep_accept = vb_ep_accept,
	.ep_close = vb_ep_close,
	.ep_alive = vb_ep_alive,
	.rmr_import = vb_rmr_import,
	.rmr_release = vb_rmr_release,
	.write = vb_write,
	.write_u64 = vb_write_u64,
	.write_notify = vb_write_notify,
	.poll = vb_poll,
	.poll_notify = vb_poll_notify,
	.flush = vb_flush,
};
