// SPDX-License-Identifier: MIT
/*
 * verbs devices: what sysfs says about GIDs and NUMA nodes, whether a usable
 * device exists, and which device, port and GID a context uses (with an
 * error that names the fix when none fits).  Also used by the doctor.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "verbs.h"

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

int vb_pick_device(struct vb_ctx *c, const struct frr_tp_config *cfg,
		   struct ibv_port_attr *pa)
{
	const char *want = cfg_device(cfg);
	char seen[256] = "";
	int n = 0, nodev = 1;

	c->devs = rdma_get_devices(&n);
	if (!c->devs || n == 0)
		return frr_tp_err(&c->base, -ENODEV,
				  "verbs: no RDMA device found (no "
				  "/sys/class/infiniband entries): load the "
				  "NIC's driver, or for soft-RoCE 'modprobe "
				  "rdma_rxe; rdma link add rxe0 type rxe "
				  "netdev IFACE' (%s); or %s",
				  frr_tp_doctor_hint(&c->base),
				  frr_tp_backend_hint(cfg));
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
				  "%s); %s",
				  want, seen, frr_tp_device_hint(cfg));
	return frr_tp_err(&c->base, -ENETDOWN,
			  "verbs: no ACTIVE port on %s; check the link; for "
			  "rxe the netdev must be up with a carrier (%s)",
			  want ? want : seen, frr_tp_doctor_hint(&c->base));
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

/* The GID the user named (cfg or FLEXRR_GID_INDEX): it must be a RoCE v2
 * IPv4 GID, holding the bind address if one was given. */
static int gid_explicit(struct vb_ctx *c, const struct frr_tp_config *cfg,
			const struct ibv_port_attr *pa, int want,
			const struct in_addr *bind, const char *list)
{
	struct vb_gid g;
	char gs[64];

	if (want >= pa->gid_tbl_len ||
	    vb_gid_read(c->devname, c->port, want, &g))
		return frr_tp_err(&c->base, -EINVAL,
				  "verbs: GID index %d on %s port %u "
				  "is empty or out of range (table "
				  "of %d); usable RoCE v2 IPv4 GIDs: "
				  "%s; fix or unset FLEXRR_GID_INDEX (%s)",
				  want, c->devname, c->port, pa->gid_tbl_len,
				  list, frr_tp_doctor_hint(&c->base));
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
	if (bind && g.ip.s_addr != bind->s_addr)
		return frr_tp_err(&c->base, -EINVAL,
				  "verbs: GID index %d holds another "
				  "address than the bind address %s; "
				  "usable: %s",
				  want, cfg->bind_addr, list);
	c->gid_index = want;
	c->bind_sa.sin_addr = g.ip;
	return 0;
}

/* The first RoCE v2 IPv4 GID (holding the bind address if one was given). */
static int gid_auto(struct vb_ctx *c, const struct frr_tp_config *cfg,
		    const struct ibv_port_attr *pa, const struct in_addr *bind,
		    const char *list)
{
	struct vb_gid g;

	for (int i = 0; i < pa->gid_tbl_len; i++) {
		if (vb_gid_read(c->devname, c->port, i, &g) ||
		    g.type != VB_GID_V2 || !g.is_ipv4)
			continue;
		if (bind && g.ip.s_addr != bind->s_addr)
			continue;
		c->gid_index = i;
		c->bind_sa.sin_addr = g.ip;
		return 0;
	}
	if (bind)
		return frr_tp_err(&c->base, -EADDRNOTAVAIL,
				  "verbs: no RoCE v2 GID of %s port %u holds "
				  "the bind address %s (usable: %s); bind to "
				  "an address of the RDMA netdev",
				  c->devname, c->port, cfg->bind_addr, list);
	return frr_tp_err(&c->base, -EADDRNOTAVAIL,
			  "verbs: %s port %u has no RoCE v2 GID with an IPv4 "
			  "address; give its netdev an IPv4 address ('ip "
			  "addr add A.B.C.D/N dev IFACE') (%s)",
			  c->devname, c->port, frr_tp_doctor_hint(&c->base));
}

/* InfiniBand: rdma_cm addresses the device by its IPoIB netdev's IPv4. */
static int gid_infiniband(struct vb_ctx *c, int want,
			  const struct in_addr *bind)
{
	c->gid_index = want >= 0 ? want : 0;
	if (bind) {
		c->bind_sa.sin_addr = *bind;
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

int vb_pick_gid(struct vb_ctx *c, const struct frr_tp_config *cfg,
		const struct ibv_port_attr *pa)
{
	int want = cfg_gid_index(cfg);
	struct in_addr bind = { 0 };
	int have_bind = 0;
	char list[256];

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
	if (pa->link_layer != IBV_LINK_LAYER_ETHERNET)
		return gid_infiniband(c, want, have_bind ? &bind : NULL);
	list_v2_gids(c, pa->gid_tbl_len, list, sizeof(list));
	if (want >= 0)
		return gid_explicit(c, cfg, pa, want, have_bind ? &bind : NULL,
				    list);
	return gid_auto(c, cfg, pa, have_bind ? &bind : NULL, list);
}
