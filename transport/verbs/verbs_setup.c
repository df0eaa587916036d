// SPDX-License-Identifier: MIT
/*
 * verbs backend set-up: device, port and GID choice, the listener, PD/CQs,
 * registered regions, and the ops table.  See verbs.h for the design.
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

const char *vb_mtu_str(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256:
		return "256";
	case IBV_MTU_512:
		return "512";
	case IBV_MTU_1024:
		return "1024";
	case IBV_MTU_2048:
		return "2048";
	case IBV_MTU_4096:
		return "4096";
	}
	return "?";
}

/* ---- sysfs ------------------------------------------------------------ */

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		int err = ferror(f) ? -EIO : -ENOENT;

		fclose(f);
		return err;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int vb_gid_read(const char *dev, int port, int idx, struct vb_gid *g)
{
	char path[256], line[64];
	unsigned v[8];
	int nz = 0;

	memset(g, 0, sizeof(*g));
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gids/%d", dev, port, idx);
	if (read_line(path, line, sizeof(line)))
		return -ENOENT;
	if (sscanf(line, "%x:%x:%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) != 8)
		return -ENOENT;
	for (int i = 0; i < 8; i++) {
		g->raw[2 * i] = (uint8_t)(v[i] >> 8);
		g->raw[2 * i + 1] = (uint8_t)v[i];
		nz |= v[i] != 0;
	}
	if (!nz)
		return -ENOENT;
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev,
		 port, idx);
	if (!read_line(path, line, sizeof(line)))
		g->type = strstr(line, "v2") ? VB_GID_V2 : VB_GID_V1;
	else
		g->type = VB_GID_V1; /* IB ports have no types file */
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", dev,
		 port, idx);
	if (read_line(path, g->ndev, sizeof(g->ndev)))
		g->ndev[0] = '\0';
	g->is_ipv4 =
	    !v[0] && !v[1] && !v[2] && !v[3] && !v[4] && v[5] == 0xffff;
	if (g->is_ipv4)
		memcpy(&g->ip.s_addr, &g->raw[12], 4);
	return 0;
}

const char *vb_gid_type_str(enum vb_gid_type t)
{
	return t == VB_GID_V2 ? "RoCE v2" : t == VB_GID_V1 ? "IB/RoCE v1" : "-";
}

int vb_gid_str(const struct vb_gid *g, char *buf, size_t len)
{
	if (g->is_ipv4) {
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &g->ip, ip, sizeof(ip));
		return snprintf(buf, len, "::ffff:%s", ip);
	}
	return inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len) ? 0 : -EINVAL;
}

int vb_numa_node(const char *dev)
{
	char path[256], line[32];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/device/numa_node", dev);
	if (read_line(path, line, sizeof(line)))
		return -1;
	return atoi(line) >= 0 ? atoi(line) : -1;
}

/* ---- availability ----------------------------------------------------- */

static int first_active_port(struct ibv_context *vctx, struct ibv_port_attr *pa)
{
	struct ibv_device_attr da;

	if (ibv_query_device(vctx, &da))
		return -1;
	for (int p = 1; p <= da.phys_port_cnt; p++)
		if (!ibv_query_port(vctx, (uint8_t)p, pa) &&
		    pa->state == IBV_PORT_ACTIVE)
			return p;
	return -1;
}

int frr_tp_verbs_available(void)
{
	struct ibv_device **list;
	int n = 0, found = 0;

	list = ibv_get_device_list(&n);
	if (!list)
		return 0;
	for (int i = 0; i < n && !found; i++) {
		struct ibv_context *vctx = ibv_open_device(list[i]);
		struct ibv_port_attr pa;

		if (!vctx)
			continue;
		found = first_active_port(vctx, &pa) > 0;
		ibv_close_device(vctx);
	}
	ibv_free_device_list(list);
	return found;
}

/* ---- device, port, GID ------------------------------------------------ */

static const char *cfg_device(const struct frr_tp_config *cfg)
{
	const char *env = getenv("FLEXRR_DEVICE");

	if (cfg->device && *cfg->device)
		return cfg->device;
	return env && *env ? env : NULL;
}

/*
 * Explicit GID index, or -1 for auto.  A zeroed config means auto: index 0
 * is never an IPv4 RoCE v2 GID (it is the link-local v1 entry), so only
 * values > 0 in the config count; FLEXRR_GID_INDEX=0 still forces 0.
 */
static int cfg_gid_index(const struct frr_tp_config *cfg)
{
	const char *env = getenv("FLEXRR_GID_INDEX");
	char *end;
	long v;

	if (cfg->gid_index > 0)
		return cfg->gid_index;
	if (!env || !*env)
		return -1;
	v = strtol(env, &end, 10);
	if (*end || v < 0 || v > 65535)
		return -2;
	return (int)v;
}

static int pick_device(struct vb_ctx *c, const char *want,
		       struct ibv_port_attr *pa)
{
	char seen[256] = "";
	int n = 0, nodev = 1;

	c->devs = rdma_get_devices(&n);
	if (!c->devs || n == 0)
		return frr_tp_err(&c->base, -ENODEV,
				  "verbs: no RDMA device found (no "
				  "/sys/class/infiniband entries); run "
				  "'flexrr doctor'; for soft-RoCE run "
				  "scripts/softroce-setup.sh, or "
				  "scripts/softroce-vm.sh when the kernel "
				  "lacks rdma_rxe; or use --backend shm");
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(c->devs[i]->device);
		int p;

		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen),
			 "%s%s", *seen ? ", " : "", name);
		if (want && strcmp(want, name))
			continue;
		nodev = 0;
		p = first_active_port(c->devs[i], pa);
		if (p > 0) {
			c->verbs = c->devs[i];
			c->port = (uint8_t)p;
			snprintf(c->devname, sizeof(c->devname), "%s", name);
			return 0;
		}
	}
	if (want && nodev)
		return frr_tp_err(&c->base, -ENODEV,
				  "verbs: device '%s' not found (devices: "
				  "%s); fix FLEXRR_DEVICE / --device",
				  want, seen);
	return frr_tp_err(&c->base, -ENETDOWN,
			  "verbs: no ACTIVE port on %s; check the link "
			  "('rdma link show', 'ibv_devinfo'); for rxe the "
			  "netdev must be up with a carrier; 'flexrr doctor' "
			  "shows port states",
			  want ? want : seen);
}

static void list_v2_gids(struct vb_ctx *c, int tbl_len, char *buf, size_t len)
{
	struct vb_gid g;
	char ip[INET_ADDRSTRLEN];

	buf[0] = '\0';
	for (int i = 0; i < tbl_len; i++) {
		if (vb_gid_read(c->devname, c->port, i, &g) ||
		    g.type != VB_GID_V2 || !g.is_ipv4)
			continue;
		inet_ntop(AF_INET, &g.ip, ip, sizeof(ip));
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%d (%s)",
			 *buf ? ", " : "", i, ip);
	}
	if (!*buf)
		snprintf(buf, len, "none");
}

/* IB link layer: the IPv4 address of the device's IPoIB netdev. */
static int ipoib_addr(const char *dev, struct in_addr *ip)
{
	char path[256];
	struct ifaddrs *ifa, *i;
	DIR *d;
	struct dirent *de;
	int ret = -EADDRNOTAVAIL;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net",
		 dev);
	d = opendir(path);
	if (!d)
		return ret;
	if (getifaddrs(&ifa)) {
		closedir(d);
		return -errno;
	}
	while (ret && (de = readdir(d))) {
		for (i = ifa; i; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    !strcmp(i->ifa_name, de->d_name)) {
				*ip = ((struct sockaddr_in *)i->ifa_addr)
					  ->sin_addr;
				ret = 0;
				break;
			}
	}
	freeifaddrs(ifa);
	closedir(d);
	return ret;
}

static int pick_gid(struct vb_ctx *c, const struct frr_tp_config *cfg,
		    const struct ibv_port_attr *pa)
{
	int want = cfg_gid_index(cfg);
	struct in_addr bind = { 0 };
	int have_bind = 0;
	struct vb_gid g;
	char list[256], gs[64];

	if (cfg->bind_addr && *cfg->bind_addr) {
		if (inet_pton(AF_INET, cfg->bind_addr, &bind) != 1)
			return frr_tp_err(&c->base, -EINVAL,
					  "verbs: bind address '%s' is not an "
					  "IPv4 address",
					  cfg->bind_addr);
		have_bind = 1;
	}
	if (want == -2)
		return frr_tp_err(&c->base, -EINVAL,
				  "verbs: FLEXRR_GID_INDEX='%s' is not a "
				  "GID index (0..65535); unset it to "
				  "auto-select",
				  getenv("FLEXRR_GID_INDEX"));
	if (pa->link_layer != IBV_LINK_LAYER_ETHERNET) {
		c->gid_index = want >= 0 ? want : 0;
		if (have_bind) {
			c->bind_sa.sin_addr = bind;
			return 0;
		}
		if (ipoib_addr(c->devname, &c->bind_sa.sin_addr))
			return frr_tp_err(&c->base, -EADDRNOTAVAIL,
					  "verbs: %s is InfiniBand but its "
					  "IPoIB netdev has no IPv4 address; "
					  "rdma_cm needs one: configure IPoIB "
					  "or pass a bind address",
					  c->devname);
		return 0;
	}
	list_v2_gids(c, pa->gid_tbl_len, list, sizeof(list));
	if (want >= 0) {
		if (want >= pa->gid_tbl_len ||
		    vb_gid_read(c->devname, c->port, want, &g))
			return frr_tp_err(&c->base, -EINVAL,
					  "verbs: GID index %d on %s port %u "
					  "is empty or out of range (table "
					  "of %d); usable RoCE v2 IPv4 GIDs: "
					  "%s; fix or unset FLEXRR_GID_INDEX "
					  "('flexrr doctor' lists the table)",
					  want, c->devname, c->port,
					  pa->gid_tbl_len, list);
		if (g.type != VB_GID_V2 || !g.is_ipv4) {
			vb_gid_str(&g, gs, sizeof(gs));
			return frr_tp_err(&c->base, -EINVAL,
					  "verbs: GID index %d on %s port %u "
					  "is %s %s, not a RoCE v2 IPv4 GID "
					  "(rdma_cm needs an IPv4 address, "
					  "routable RoCE needs v2); usable: "
					  "%s; fix or unset FLEXRR_GID_INDEX",
					  want, c->devname, c->port,
					  vb_gid_type_str(g.type), gs, list);
		}
		if (have_bind && g.ip.s_addr != bind.s_addr)
			return frr_tp_err(&c->base, -EINVAL,
					  "verbs: GID index %d holds another "
					  "address than the bind address %s; "
					  "usable: %s",
					  want, cfg->bind_addr, list);
		c->gid_index = want;
		c->bind_sa.sin_addr = g.ip;
		return 0;
	}
	for (int i = 0; i < pa->gid_tbl_len; i++) {
		if (vb_gid_read(c->devname, c->port, i, &g) ||
		    g.type != VB_GID_V2 || !g.is_ipv4)
			continue;
		if (have_bind && g.ip.s_addr != bind.s_addr)
			continue;
		c->gid_index = i;
		c->bind_sa.sin_addr = g.ip;
		return 0;
	}
	if (have_bind)
		return frr_tp_err(&c->base, -EADDRNOTAVAIL,
				  "verbs: no RoCE v2 GID of %s port %u holds "
				  "the bind address %s (usable: %s); bind to "
				  "an address of the RDMA netdev",
				  c->devname, c->port, cfg->bind_addr, list);
	return frr_tp_err(&c->base, -EADDRNOTAVAIL,
			  "verbs: %s port %u has no RoCE v2 GID with an IPv4 "
			  "address; give its netdev an IPv4 address ('ip "
			  "addr add A.B.C.D/N dev IFACE') and check "
			  "'flexrr doctor'",
			  c->devname, c->port);
}

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

static int open_queues(struct vb_ctx *c, int nranks)
{
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
	/* Every endpoint's SQ/RQ fits: CQs never overflow (verbs.h). */
	/* a full mesh needs nranks - 1; a few spare for reconnects.  Sized
	 * by the job: rxe allocates and zeroes every CQ entry up front */
	c->max_eps = nranks + 3 < 8 ? 8 : nranks + 3;
	if (c->max_eps > VB_MAX_EPS)
		c->max_eps = VB_MAX_EPS;
	if (c->max_eps * (int)VB_RQ_DEPTH > da.max_cqe)
		c->max_eps = da.max_cqe / (int)VB_RQ_DEPTH;
	if (c->max_eps < 1)
		return frr_tp_err(&c->base, -ENOSPC,
				  "verbs: %s allows only %d CQ entries",
				  c->devname, da.max_cqe);
	scqe = c->max_eps * (int)VB_SQ_DEPTH;
	rcqe = c->max_eps * (int)VB_RQ_DEPTH;
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
	ret = pick_device(c, cfg_device(cfg), &pa);
	if (ret)
		goto close_ctx;
	c->active_mtu = pa.active_mtu;
	c->link_layer = pa.link_layer;
	ret = pick_gid(c, cfg, &pa);
	if (ret)
		goto close_ctx;
	ret = open_listener(c, cfg->port);
	if (ret)
		goto close_ctx;
	ret = open_queues(c, cfg->nranks);
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

	for (int i = 0; i < VB_MAX_EPS; i++)
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
	.size = sizeof(struct frr_tp_ops),
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
