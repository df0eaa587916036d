// SPDX-License-Identifier: MIT
/*
 * frr_tp_doctor: is this host ready for the verbs backend?  Lists devices,
 * ports (state, link layer, MTU), GID tables with types, NUMA nodes and the
 * memlock limit against the pinned footprint, then opens the backend the way
 * a job would and registers that footprint.  Every problem comes with its
 * fix.  The command around it (options, exit status) is cli/cmd_doctor.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "verbs.h"

struct doctor {
	FILE *out;
	const struct frr_tp_doctor_sink *sink; /* or NULL */
	int problems, warnings;
	size_t pinned; /* planned pinned footprint, bytes */
	const char *device;
	int usable; /* a port that passes every check */
	/* the caller's words for the fixes (frr_tp_doctor_cfg) */
	const char *device_hint, *pinned_hint, *backend_hint;
	const char *rxe_hint, *vm_hint; /* or NULL */
};

static const char *or_default(const char *hint, const char *dflt)
{
	return hint ? hint : dflt;
}

static void problem(struct doctor *d, const char *what, const char *fix)
{
	d->problems++;
	fprintf(d->out, "  [PROBLEM] %s\n            fix: %s\n", what, fix);
	if (d->sink)
		d->sink->check(d->sink->arg, 2, what, fix);
}

static void warning(struct doctor *d, const char *what, const char *fix)
{
	d->warnings++;
	fprintf(d->out, "  [warn]    %s\n            hint: %s\n", what, fix);
	if (d->sink)
		d->sink->check(d->sink->arg, 1, what, fix);
}

static void ok(struct doctor *d, const char *what)
{
	fprintf(d->out, "  [ok]      %s\n", what);
	if (d->sink)
		d->sink->check(d->sink->arg, 0, what, NULL);
}

static int kernel_has_rxe(void)
{
	struct utsname u;
	char pat[512];
	glob_t g;
	int found;
	FILE *f;
	char line[256];

	if (!access("/sys/module/rdma_rxe", F_OK))
		return 1;
	if (uname(&u))
		return 0;
	snprintf(pat, sizeof(pat),
		 "/lib/modules/%s/kernel/drivers/infiniband/sw/rxe/"
		 "rdma_rxe.ko*",
		 u.release);
	found = !glob(pat, 0, NULL, &g) && g.gl_pathc > 0;
	globfree(&g);
	if (found)
		return 1;
	snprintf(pat, sizeof(pat), "/lib/modules/%s/modules.builtin",
		 u.release);
	f = fopen(pat, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "rdma_rxe.ko") != NULL;
	fclose(f);
	return found;
}

static void no_device(struct doctor *d)
{
	struct utsname u;
	char fix[512];

	uname(&u);
	fprintf(d->out, "devices: none (no /sys/class/infiniband entries)\n\n");
	fprintf(d->out, "checks:\n");
	if (kernel_has_rxe()) {
		snprintf(fix, sizeof(fix),
			 "create one: modprobe rdma_rxe; rdma link add rxe0 "
			 "type rxe netdev IFACE%s%s%s, then check again; or %s",
			 d->rxe_hint ? " (" : "",
			 d->rxe_hint ? d->rxe_hint : "", d->rxe_hint ? ")" : "",
			 d->backend_hint);
		problem(d,
			"no RDMA device; this kernel has rdma_rxe (soft-RoCE)",
			fix);
	} else {
		snprintf(
		    fix, sizeof(fix),
		    "run verbs code on a host with an RDMA device, or in a "
		    "VM whose kernel has rdma_rxe%s%s%s; or %s",
		    d->vm_hint ? " (" : "", d->vm_hint ? d->vm_hint : "",
		    d->vm_hint ? ")" : "", d->backend_hint);
		problem(d,
			"no RDMA device, and this kernel has no rdma_rxe "
			"module either (no soft-RoCE possible here)",
			fix);
	}
	fprintf(d->out, "  kernel %s\n", u.release);
}

static void check_memlock(struct doctor *d)
{
	struct rlimit rl;
	char what[256], lim[64];
	int cap_ipc_lock = 0;
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			cap_ipc_lock = !!(caps & (1ull << 14));
	}
	if (f)
		fclose(f);
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return;
	if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		snprintf(lim, sizeof(lim), "%llu KiB",
			 (unsigned long long)rl.rlim_cur / 1024);
	fprintf(d->out,
		"memlock: limit %s, CAP_IPC_LOCK %s, planned pinned "
		"footprint %zu MiB\n",
		lim, cap_ipc_lock ? "yes (limit does not apply)" : "no",
		d->pinned >> 20);
	if (cap_ipc_lock || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= d->pinned) {
		snprintf(what, sizeof(what),
			 "memlock allows the planned %zu MiB of registered "
			 "memory",
			 d->pinned >> 20);
		ok(d, what);
		return;
	}
	snprintf(what, sizeof(what),
		 "memlock limit %s is below the planned %zu MiB of registered "
		 "memory: ibv_reg_mr will fail with ENOMEM",
		 lim, d->pinned >> 20);
	problem(d, what,
		"'ulimit -l unlimited' in the launching shell, 'memlock "
		"unlimited' for the user in /etc/security/limits.conf, or "
		"'--ulimit memlock=-1' for a container");
}

static void print_gids(struct doctor *d, const char *dev, int port, int tbl_len,
		       int *v2ipv4)
{
	struct vb_gid g;
	char s[64];

	fprintf(d->out, "    GID table (non-empty entries):\n");
	fprintf(d->out, "      %-5s %-11s %-40s %s\n", "index", "type", "gid",
		"netdev");
	for (int i = 0; i < tbl_len && i < 4096; i++) {
		if (vb_gid_read(dev, port, i, &g))
			continue;
		vb_gid_str(&g, s, sizeof(s));
		fprintf(d->out, "      %-5d %-11s %-40s %s\n", i,
			vb_gid_type_str(g.type), s, g.ndev[0] ? g.ndev : "-");
		if (g.type == VB_GID_V2 && g.is_ipv4 && *v2ipv4 < 0)
			*v2ipv4 = i;
	}
}

static int netdev_mtu(const char *dev, int port, int gid)
{
	struct vb_gid g;
	char path[256], line[32];
	FILE *f;
	int mtu = -1;

	if (vb_gid_read(dev, port, gid, &g) || !g.ndev[0])
		return -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", g.ndev);
	f = fopen(path, "r");
	if (f && fgets(line, sizeof(line), f))
		mtu = atoi(line);
	if (f)
		fclose(f);
	return mtu;
}

static void check_port(struct doctor *d, struct ibv_context *vctx,
		       const char *dev, int port)
{
	struct ibv_port_attr pa;
	char what[320], fix[320];
	int eth, v2 = -1;

	if (ibv_query_port(vctx, (uint8_t)port, &pa)) {
		snprintf(what, sizeof(what), "%s port %d: ibv_query_port: %s",
			 dev, port, strerror(errno));
		problem(d, what, "check dmesg for driver errors");
		return;
	}
	eth = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	fprintf(d->out,
		"  port %d: state %s, link layer %s, active MTU %s (max %s)\n",
		port, ibv_port_state_str(pa.state),
		eth ? "Ethernet (RoCE)" : "InfiniBand",
		vb_mtu_str(pa.active_mtu), vb_mtu_str(pa.max_mtu));
	if (eth)
		print_gids(d, dev, port, pa.gid_tbl_len, &v2);
	fprintf(d->out, "  checks for %s port %d:\n", dev, port);
	if (pa.state != IBV_PORT_ACTIVE) {
		snprintf(what, sizeof(what), "%s port %d is %s, not ACTIVE",
			 dev, port, ibv_port_state_str(pa.state));
		problem(
		    d, what,
		    eth ? "bring the netdev up with a carrier ('ip link set "
			  "IFACE up'; 'rdma link show' names it)"
			: "check the cable and that a subnet manager runs "
			  "(opensm; 'ibstat')");
		return;
	}
	snprintf(what, sizeof(what), "%s port %d is ACTIVE", dev, port);
	ok(d, what);
	if (eth && v2 < 0) {
		problem(d,
			"no RoCE v2 GID with an IPv4 address: rdma_cm has no "
			"address to bind and RoCE v1 is not routable",
			"give the RDMA netdev an IPv4 address ('ip addr add "
			"A.B.C.D/N dev IFACE'); the GID appears by itself");
		return;
	}
	if (eth) {
		snprintf(what, sizeof(what),
			 "RoCE v2 IPv4 GID at index %d (auto-selected; "
			 "FLEXRR_GID_INDEX overrides)",
			 v2);
		ok(d, what);
		if (pa.active_mtu < pa.max_mtu) {
			int nmtu = netdev_mtu(dev, port, v2);

			snprintf(what, sizeof(what),
				 "active MTU %s is below the port's %s "
				 "(netdev MTU %d)",
				 vb_mtu_str(pa.active_mtu),
				 vb_mtu_str(pa.max_mtu), nmtu);
			snprintf(fix, sizeof(fix),
				 "for bigger RDMA packets raise the netdev MTU "
				 "on every host (e.g. 'ip link set dev IFACE "
				 "mtu 9000'); flexrr uses the minimum of both "
				 "ends' active MTU, so a mismatch only costs "
				 "bandwidth");
			warning(d, what, fix);
		}
	}
	d->usable++;
}

static void check_device(struct doctor *d, struct ibv_device *ibdev)
{
	const char *dev = ibv_get_device_name(ibdev);
	struct ibv_context *vctx = ibv_open_device(ibdev);
	struct ibv_device_attr da;
	char what[256];
	int node = vb_numa_node(dev);

	fprintf(d->out, "\ndevice %s: ", dev);
	if (!vctx || ibv_query_device(vctx, &da)) {
		fprintf(d->out, "cannot open\n");
		snprintf(what, sizeof(what), "%s: ibv_open_device: %s", dev,
			 strerror(errno));
		problem(d, what,
			"check permissions of /dev/infiniband/uverbs* and "
			"that the user-space provider is installed "
			"(ibverbs-providers)");
		if (vctx)
			ibv_close_device(vctx);
		return;
	}
	fprintf(d->out, "%d port(s), firmware %s, ", da.phys_port_cnt,
		da.fw_ver[0] ? da.fw_ver : "-");
	if (node >= 0)
		fprintf(d->out, "NUMA node %d (regions are allocated there)\n",
			node);
	else
		fprintf(d->out,
			"NUMA node unknown (virtual device or one node)\n");
	if (da.vendor_id == 0xffffff)
		fprintf(d->out, "  soft-RoCE (rdma_rxe): CPU-copied; fine for "
				"development and CI, not for performance\n");
	for (int p = 1; p <= da.phys_port_cnt; p++)
		check_port(d, vctx, dev, p);
	ibv_close_device(vctx);
}

/* Open the backend exactly as a job would, and pin the footprint. */
static void check_open(struct doctor *d)
{
	struct frr_tp_config cfg = {
		.backend = FRR_TP_BACKEND_VERBS,
		.job_token = 0xd0c7,
		.rank = 0,
		.nranks = 1,
		.timeout_ms = 5000,
		.device = d->device,
		.gid_index = -1,
		.doctor_hint = "the checks above say more",
	};
	struct frr_tp_ctx *ctx;
	struct frr_tp_mr *mr;
	char what[FRR_TP_ERRBUF + 64], fix[256];
	int ret;

	fprintf(d->out, "\nopening the verbs backend as a job would:\n");
	fflush(d->out); /* errors go to stderr: keep the order */
	ret = frr_tp_open(&cfg, &ctx);
	if (ret) {
		snprintf(what, sizeof(what), "frr_tp_open(verbs) failed: %s",
			 strerror(-ret));
		problem(d, what, "see the error above; it names the fix");
		return;
	}
	snprintf(what, sizeof(what), "opened %s", frr_tp_device_name(ctx));
	ok(d, what);
	fflush(d->out);
	ret = frr_tp_mr_alloc(ctx, d->pinned, FRR_TP_ACCESS_REMOTE_WRITE, &mr);
	if (ret) {
		snprintf(what, sizeof(what), "registering %zu MiB failed: %s",
			 d->pinned >> 20, frr_tp_last_error(ctx));
		snprintf(fix, sizeof(fix),
			 "raise the memlock limit (ulimit -l unlimited) or %s",
			 d->pinned_hint);
		problem(d, what, fix);
	} else {
		snprintf(what, sizeof(what), "registered %zu MiB",
			 d->pinned >> 20);
		ok(d, what);
		frr_tp_mr_free(mr);
	}
	frr_tp_close(ctx);
}

int frr_tp_doctor(FILE *out, const char *device, size_t pinned_bytes)
{
	const struct frr_tp_doctor_cfg cfg = { .device = device,
					       .pinned_bytes = pinned_bytes };

	return frr_tp_doctor_run(out, &cfg, NULL);
}

int frr_tp_doctor_run(FILE *out, const struct frr_tp_doctor_cfg *cfg,
		      const struct frr_tp_doctor_sink *sink)
{
	struct doctor d_ = {
		.out = out,
		.sink = sink,
		.pinned = cfg->pinned_bytes ? cfg->pinned_bytes : 64u << 20,
		.device = cfg->device,
		.device_hint =
		    or_default(cfg->device_hint, "FLEXRR_DEVICE or "
						 "frr_tp_doctor_cfg.device"),
		.pinned_hint = or_default(cfg->pinned_hint,
					  "plan less registered memory "
					  "(frr_tp_doctor_cfg.pinned_bytes)"),
		.backend_hint =
		    or_default(cfg->backend_hint, "use the shm backend"),
		.rxe_hint = cfg->rxe_hint,
		.vm_hint = cfg->vm_hint,
	};
	struct doctor *d = &d_;
	struct ibv_device **list;
	int n = 0, checked = 0;

	/* no text wanted (a sink takes the checks): write it nowhere */
	if (!out)
		d->out = sink ? fopen("/dev/null", "w") : stdout;
	if (!d->out)
		d->out = stdout;

	fprintf(d->out, "RDMA (verbs backend) health check\n\n");
	check_memlock(d);
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		no_device(d);
		if (list)
			ibv_free_device_list(list);
		goto verdict;
	}
	if (access("/dev/infiniband/rdma_cm", R_OK | W_OK))
		problem(d,
			"/dev/infiniband/rdma_cm is missing or not accessible: "
			"rdma_cm connections will fail",
			"modprobe rdma_ucm (and check its permissions)");
	for (int i = 0; i < n; i++) {
		if (d->device &&
		    strcmp(d->device, ibv_get_device_name(list[i])))
			continue;
		checked++;
		check_device(d, list[i]);
	}
	ibv_free_device_list(list);
	if (!checked) {
		char what[160], fix[256];

		snprintf(what, sizeof(what), "device '%s' not found",
			 d->device);
		snprintf(fix, sizeof(fix),
			 "pick one of the devices listed by 'ibv_devices' (%s)",
			 d->device_hint);
		problem(d, what, fix);
	} else if (!d->usable) {
		problem(d, "no port passes the checks above",
			"fix the problems listed for each port");
	}
	if (d->usable)
		check_open(d);

verdict:
	fprintf(d->out, "\nverdict: %s", d->problems ? "UNHEALTHY" : "healthy");
	if (d->problems)
		fprintf(d->out, " (%d problem(s); each has its fix above)",
			d->problems);
	else if (d->warnings)
		fprintf(d->out, " (%d warning(s))", d->warnings);
	fprintf(d->out, "\n");
	if (d->out != stdout && d->out != out)
		fclose(d->out);
	return d->problems;
}
