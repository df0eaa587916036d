// SPDX-License-Identifier: MIT
/*
 * The memory check: what a rank of this job will hold at its peak, from
 * the layout (docs/runtime.md "Memory of a rank" has the formula), summed
 * over the ranks that share a host and compared, before anything large is
 * allocated, with the memory that host has available.  Every rank gets
 * every rank's figures (one allgather), so all of them reach the same
 * verdict and only rank 0 explains it.
 *
 * The cache and in-flight terms are upper bounds: a worker of a table
 * flagged FRR_TABLE_SEE_OWN_PENDING ("rows written mostly by one
 * partition") touches its share of it, of any other table every row.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "job.h"

/*
 * Verbs lanes (job/setup.c): each lane's context (a PD, two CQs; a lane
 * per worker thread, or --lanes) and QP to every peer, and the peers' lane
 * QPs on the main context.
 * bench/lane-memory.sh measured them in the soft-RoCE VM (rank peak RSS
 * with and without --shared-transport, P <= 8, T <= 4): about 0.5 MiB a
 * thread and 0.65 MiB a thread and peer.  An estimate for rxe; a NIC's
 * provider sizes its queues differently.  shm's lanes map the peers'
 * inboxes, which the inbox term counts already.
 */
#define LANE_THREAD_BYTES (512.0 * 1024)
#define LANE_PEER_BYTES (0.65 * 1048576)

struct mem_plan {
	double replica, accum, transport, caches, pending, inflight, app;
	double lanes; /* of transport, the verbs lanes' (job/setup.c) */
	/* --checkpoint DIR on a tmpfs (/dev/shm, or the directory a local
	 * --on-failure job gets there, launch/ckpt_mem.c): the files of the
	 * newest complete checkpoint and of the one being written */
	double files;
	/* what that tmpfs has free (< 0: DIR is not on a tmpfs) */
	double files_room;
	/* of replica, what its pages hold only once used: the rows of
	 * helpees, dormant until the rank first reads one of their owner's
	 * (table/hold.c), and the room for rows pulled.  On shm untouched
	 * pages cost nothing; verbs registers (pins) the whole region, so 0
	 * there.  Reported, not subtracted: the check needs what the rank
	 * holds once every owner is woken and every pull came */
	double asleep;
	/* of inflight, what only a lag needs: the batches of the clocks
	 * after the oldest one not applied (a worker up to the slack ahead
	 * of the slowest keeps its own batches of them here) */
	double lag;
};

/* What the memory check needs: the bound, with the lag (inflight counts
 * it). */
static double plan_total(const struct mem_plan *m)
{
	return m->replica + m->accum + m->transport + m->caches + m->pending +
	       m->inflight + m->app + m->files;
}

double frr_tmpfs_room(const char *path)
{
	char up[4096];
	struct statfs fs;
	char *slash;

	snprintf(up, sizeof(up), "%s", path);
	while (statfs(up, &fs)) {
		if (errno != ENOENT || !(slash = strrchr(up, '/')))
			return -1;
		if (slash == up)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (fs.f_type != TMPFS_MAGIC)
		return -1;
	return (double)fs.f_bavail * (double)fs.f_bsize;
}

/* What the app says it will allocate once the job runs (mem_later), for
 * this rank's own partitions. */
static double app_later(const struct frr_rt *rt)
{
	const struct frr_app_ops *a = rt->app;
	int *parts;
	double b;

	if (!FRR_APP_HAS(a, mem_later) || !a->mem_later ||
	    !(parts = malloc((size_t)rt->T * sizeof(int))))
		return 0;
	for (int i = 0; i < rt->T; i++)
		parts[i] = rt->rank * rt->T + i;
	b = (double)a->mem_later(rt->app_state, parts, rt->T);
	free(parts);
	return b;
}

/* The job will run over verbs (--backend verbs, or auto on a host that
 * has a device). */
static int on_verbs(const struct frr_rt *rt)
{
	enum frr_tp_backend b = rt->prm->backend;

	return b == FRR_TP_BACKEND_VERBS ||
	       (b == FRR_TP_BACKEND_AUTO &&
		frr_tp_backend_available(FRR_TP_BACKEND_VERBS));
}

/* The job's threads will each open a verbs lane (job/setup.c lanes). */
static int lanes_on_verbs(const struct frr_rt *rt)
{
	return frr_rt_lanes_wanted(rt) && on_verbs(rt);
}

/* Of the replica, what shm leaves untouched until it is used (mem_plan's
 * asleep): the dormant rows, and the room for rows pulled. */
static double asleep(const struct frr_rt *rt)
{
	const struct frr_hold *h = rt->tb->hold;
	double b;

	if (!h || on_verbs(rt))
		return 0;
	b = (double)h->dormant_bytes;
	for (int t = 0; t < rt->tb->ntables; t++)
		b += (double)h->pull_cap[rt->rank * FRR_MAX_TABLES + t] *
		     rt->tb->spec[t].cols * sizeof(float);
	return b;
}

/* Table t's terms of a rank's plan (help: its workers may run others'
 * ranges; hfrac: of a flagged table's share, what one help batch can
 * touch); returns its bytes in a checkpoint's cut. */
static double plan_table(const struct frr_rt *rt, struct mem_plan *m, int t,
			 int help, double hfrac)
{
	const double ring = frr_cache_ring(rt->eff_slack), W = rt->W;
	const struct frr_table_spec *s = &rt->tb->spec[t];
	double rb = 4.0 * s->cols, rows = (double)s->rows;
	double shard = (double)rt->tb->shard_rows[t * rt->P + rt->rank] * rb;
	/* declared "rows written mostly by one partition" */
	int one = (rt->tb->own_declared >> t) & 1;
	int own = (s->flags & FRR_TABLE_SEE_OWN_PENDING) != 0;
	double touched = one ? rows / W : rows;
	/* of those, the rows of this rank's shard (a flagged table's
	 * rows placed with their only writer, table/place.c: all of a
	 * worker's share) */
	const uint64_t *solo = rt->tb->hold ? rt->tb->hold->solo[t] : NULL;
	double here = one ? (solo ? (double)solo[rt->rank] / rt->T
				  : touched * (shard / rb) / rows)
			  : shard / rb;
	/* rows this rank's workers add to the shard in place
	 * (table/direct.c): no snapshot, no record, never in a
	 * batch; per thread and in all */
	double direct = (double)frr_direct_rows(rt, t),
	       moving = shard - direct * rb;
	/* the rows both caches touch (the help cache's bound) */
	double cached = touched + (help ? (one ? hfrac : 1) * touched : 0);

	if (s->rule == FRR_UPDATE_ADAGRAD)
		m->accum += shard;
	/* FRR_TABLE_COMPENSATED: a float per shard cell, and one per
	 * cell of the rows a batch touches */
	if (s->flags & FRR_TABLE_COMPENSATED) {
		m->accum += shard;
		m->caches += rt->T * cached * rb;
	}
	/* table/hold.c: this rank's slot per row, and as the owner
	 * every rank's slot per row of its shard; on use, a bit per row
	 * for each helpee rank's declarations and, as the owner, one per
	 * rank and row of its shard */
	m->replica += 4 * rows + 4.0 * rt->P * (shard / rb);
	if (rt->tb->hold && rt->tb->hold->on_use)
		m->replica +=
		    (rows * rt->tb->hold->nh + rt->P * (shard / rb)) / 8;
	/* val + snap of the rows a batch touches, and per row a stamp,
	 * a slot and, for the rows written, two ids */
	m->caches += rt->T * (cached * (2 * rb + 16) + (1 + help) * 5 * rows);
	/* the own cache's snapshots, where it keeps none */
	if (!frr_cache_keeps_snap(rt, s, (int)ring))
		m->caches -= rt->T * touched * rb;
	else if (!rt->rr_reassign) /* kept there: helpers write too */
		m->caches -= direct * rb;
	if (here > touched)
		here = touched;
	/* pending rows: a copy of each change to another rank's
	 * shard, a pointer and a tag into the batch's own chunks (in
	 * flight, below) for this rank's (table/batch.c) */
	if (own && ring)
		m->pending += rt->T * (ring * ((touched - here) * (rb + 4) +
					       (here - direct / rt->T) * 12) +
				       4 * rows);
	/* batches of the clocks not yet applied: a flagged table's
	 * shard once per clock, another's once per worker.  A clock
	 * is applied once every worker's batch of it is in, so with
	 * one worker one clock; else a worker that runs the slack
	 * ahead of the slowest keeps s more here (the bound the check
	 * uses: lag); in step, one */
	m->inflight += moving * (one ? 1 : W);
	if (W > 1)
		m->lag += rt->eff_slack * moving * (one ? 1 : W);
	/* --checkpoint: the cut's copy of the shard (and AdaGrad's
	 * sums) that the writer thread writes (job/checkpoint.c) */
	return rt->prm->ckpt_dir
		   ? shard * (s->rule == FRR_UPDATE_ADAGRAD ? 2 : 1)
		   : 0;
}

static void plan_rank(const struct frr_rt *rt, struct mem_plan *m)
{
	/* own (+ help: RapidReassignment, when there is anyone to help) */
	const int help = rt->rr_reassign && rt->W > 1;
	/* of a flagged table's share, what one help batch can touch: rr
	 * offers at most half of what is left of a list (rr_policy.c
	 * tail_start), lb-bsp a donor's whole excess (rr/lb.c); a help
	 * cache's slots restart at every batch (one range) */
	const double hfrac = rt->lb_history ? 1.0 : 0.5;
	double cut = 0; /* --checkpoint: the cut's copies */

	memset(m, 0, sizeof(*m));
	m->app = app_later(rt);
	m->replica = (double)rt->tb->repl_len;
	m->transport = (double)rt->ctl_len + (double)rt->tb->inbox_len +
		       (double)rt->T * (double)rt->tb->slot_max;
	if (lanes_on_verbs(rt))
		m->lanes = frr_rt_lane_count(rt) *
			   (LANE_THREAD_BYTES + LANE_PEER_BYTES * (rt->P - 1));
	m->transport += m->lanes;
	m->asleep = asleep(rt);
	for (int t = 0; t < rt->tb->ntables; t++)
		cut += plan_table(rt, m, t, help, hfrac);
	/* --checkpoint: the cut's copy of each own partition's item state
	 * (job/checkpoint.c frr_rt_ckpt_snap) */
	for (int t = 0; rt->prm->ckpt_dir && t < rt->T; t++) {
		const struct frr_part *p = &rt->ws->parts[rt->rank * rt->T + t];

		if (p->state)
			cut += (double)p->state_off[p->n];
	}
	m->inflight += m->lag + cut;
	/* what the cut's copy becomes on disk, twice (the previous
	 * checkpoint is removed once the next is complete) */
	m->files_room = cut > 0 ? frr_tmpfs_room(rt->prm->ckpt_dir) : -1;
	if (m->files_room >= 0)
		m->files = 2 * cut;
}

/* MemAvailable (free memory plus what the kernel can reclaim), or the
 * free pages where /proc/meminfo has no such line. */
static double host_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	double kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	if (kib >= 0)
		return kib * 1024;
	return (double)sysconf(_SC_AVPHYS_PAGES) *
	       (double)sysconf(_SC_PAGESIZE);
}

/* What the process holds already (its input, the app's state): resident
 * pages now, from /proc/self/statm; 0 where unknown. */
static double resident_now(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	double pages = 0, size;

	if (f) {
		if (fscanf(f, "%lf %lf", &size, &pages) != 2)
			pages = 0;
		fclose(f);
	}
	return pages * (double)sysconf(_SC_PAGESIZE);
}

/* limit - usage of one cgroup directory (v2 or v1 file names); < 0 when
 * it sets no limit. */
static double cgroup_room(const char *dir, int v2)
{
	char p[4300], buf[64];
	double lim = -1, use = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir,
		 v2 ? "memory.max" : "memory.limit_in_bytes");
	if ((f = fopen(p, "r"))) {
		if (fgets(buf, sizeof(buf), f) && strncmp(buf, "max", 3))
			lim = strtod(buf, NULL);
		fclose(f);
	}
	/* v1 says "no limit" with a huge page-rounded number */
	if (lim < 0 || lim >= 9.0e18)
		return -1;
	snprintf(p, sizeof(p), "%s/%s", dir,
		 v2 ? "memory.current" : "memory.usage_in_bytes");
	if ((f = fopen(p, "r"))) {
		if (fgets(buf, sizeof(buf), f))
			use = strtod(buf, NULL);
		fclose(f);
	}
	return lim > use ? lim - use : 0;
}

/*
 * What this process's memory cgroup still allows (the least over it and
 * its ancestors: Slurm's task/cgroup, containers and systemd set limits
 * there that MemAvailable does not show), and which cgroup: *path gets
 * its name.  < 0 when no cgroup limits memory.
 */
static double cgroup_available(char *path, size_t len)
{
	static const char *const base[2][2] = {
		{ "/sys/fs/cgroup/memory", NULL },
		{ "/sys/fs/cgroup", "/sys/fs/cgroup/unified" },
	};
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[4096], cg[4096] = "";
	double best = -1;
	int v2 = 1;

	while (f && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		b[strcspn(b, "\n")] = 0;
		if (!strncmp(a, ":memory:", 8) || (!cg[0] && a[1] == ':')) {
			v2 = a[1] == ':';
			snprintf(cg, sizeof(cg), "%s", b + 1);
		}
	}
	if (f)
		fclose(f);
	snprintf(path, len, "%s", cg);
	for (int i = 0; i < 2 && cg[0] && base[v2][i]; i++)
		for (char dir[4200], *end = cg + strlen(cg);;) {
			double room;

			snprintf(dir, sizeof(dir), "%s%.*s", base[v2][i],
				 (int)(end - cg), cg);
			room = cgroup_room(dir, v2);
			if (room >= 0 && (best < 0 || room < best))
				best = room;
			while (end > cg && *--end != '/')
				;
			if (end <= cg)
				break;
		}
	return best;
}

/* Which host a rank is on: its boot id and host name. */
uint64_t frr_rt_host_id(void)
{
	char id[128] = "", name[256] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f) {
		if (!fgets(id, sizeof(id), f))
			id[0] = '\0';
		fclose(f);
	}
	frr_hostname(name, sizeof(name));
	return frr_fnv1a64(name, strlen(name), frr_fnv1a64(id, strlen(id), 0));
}

struct mem_info {
	uint64_t host, cgroup; /* cgroup: host and memory cgroup, hashed */
	double need, avail, cg_avail; /* cg_avail < 0: no cgroup limit */
	struct mem_plan plan;
};

static void refuse(const struct frr_rt *rt, const struct mem_info *all, int r,
		   int here, double need, double avail, const char *where)
{
	const struct mem_plan *m = &all[r].plan;
	const double G = 1073741824.0;
	double table = 0;
	char lanes[160] = "", group[160] = "";
	/* helpers hold their helpees' declared rows (table/hold.c) */
	int g = rt->prm->rr.group_size > 0 ? rt->prm->rr.group_size
					   : FRR_RR_GROUP_DEFAULT;

	for (int t = 0; t < rt->tb->ntables; t++)
		table +=
		    (double)rt->tb->spec[t].rows * rt->tb->spec[t].cols * 4;
	/* the threads' connections (a QP per thread and peer) a large part */
	if (m->lanes > 0.1 * plan_total(m))
		snprintf(lanes, sizeof(lanes),
			 ", fewer lanes (--lanes N: its %d threads' own "
			 "connections to the other ranks take %.2f GiB)",
			 rt->T, m->lanes / G);
	if (rt->rr_reassign && rt->W > 1 && frr_rt_has_part_rows(rt->app))
		snprintf(group, sizeof(group),
			 ", a smaller helper group (--rr-group G, now %d: "
			 "a rank holds the rows of the workers it may help)",
			 g < rt->W - 1 ? g : rt->W - 1);
	frr_err("the job will not fit in memory: its %d rank%s on rank %d's "
		"host%s need about %.1f GiB but only %.1f GiB of memory is "
		"available%s (the tables are %.2f GiB; a rank holds about "
		"%.2f GiB: replica %.2f, worker caches %.2f, pending rows "
		"%.2f, batches in flight %.2f, AdaGrad and compensation sums "
		"%.2f, transport %.2f, the app's later allocations %.2f, "
		"checkpoint files in memory %.2f); use more hosts, fewer "
		"processes per host, fewer threads (-t)%s%s, a smaller "
		"slack, smaller tables%s%s",
		here, here == 1 ? "" : "s", r, where[0] ? " in its cgroup" : "",
		need / G, avail / G, where, table / G, plan_total(m) / G,
		m->replica / G, m->caches / G, m->pending / G, m->inflight / G,
		m->accum / G, m->transport / G, m->app / G, m->files / G, lanes,
		group, m->files > 0 ? ", --checkpoint DIR on a disk" : "",
		where[0] ? ", or raise the cgroup's memory limit (srun --mem, "
			   "docker --memory)"
			 : "");
}

/* The checkpoint files of rank r's host do not fit the tmpfs DIR is on
 * (a container's /dev/shm is often 64 MiB): said by rank 0. */
static int files_over(const struct frr_rt *rt, const struct mem_info *all,
		      int r)
{
	const double M = 1048576.0;
	double files = 0;

	if (all[r].plan.files_room < 0)
		return 0;
	for (int q = 0; q < rt->P; q++)
		if (all[q].host == all[r].host)
			files += all[q].plan.files;
	if (files <= all[r].plan.files_room)
		return 0;
	if (rt->rank == 0)
		frr_err(
		    "the job's checkpoints will not fit in %s: its ranks on "
		    "rank %d's host write about %.1f MiB there (two "
		    "checkpoints: the newest and the next) but the tmpfs "
		    "it is on has %.1f MiB free; give --checkpoint DIR on a "
		    "disk, or a larger tmpfs (docker --shm-size)",
		    rt->prm->ckpt_dir, r, files / M,
		    all[r].plan.files_room / M);
	return 1;
}

/* The peak to expect (debug): what the process holds now (its input) and
 * the plan, term by term. */
static void log_plan(const struct frr_rt *rt, const struct mem_info *mine)
{
	const double M = 1048576.0, held = resident_now();
	const struct mem_plan *m = &mine->plan;

	frr_dbg("memory plan of rank %d: %.0f MiB on top of the %.0f MiB it "
		"holds (peak about %.0f MiB in step, up to %.0f MiB when a "
		"worker runs the slack ahead; %.0f MiB of it untouched until "
		"used: its helpees' dormant rows, the pull room): "
		"replica %.0f, caches %.0f, pending %.0f, in flight %.0f, "
		"sums %.0f, transport %.0f, app later %.0f, checkpoint files "
		"in memory %.0f",
		rt->rank, mine->need / M, held / M,
		(mine->need - m->lag + held) / M, (mine->need + held) / M,
		m->asleep / M, m->replica / M, m->caches / M, m->pending / M,
		m->inflight / M, m->accum / M, m->transport / M, m->app / M,
		m->files / M);
}

int frr_rt_check_memory(struct frr_rt *rt)
{
	struct mem_info mine = { .host = frr_rt_host_id(),
				 .avail = host_available() };
	struct mem_info *all = calloc((size_t)rt->P, sizeof(*all));
	char cg[4096], where[4200];
	int err;

	if (!all)
		return -ENOMEM;
	mine.cg_avail = cgroup_available(cg, sizeof(cg));
	mine.cgroup = frr_fnv1a64(cg, strlen(cg), mine.host);
	plan_rank(rt, &mine.plan);
	mine.need = plan_total(&mine.plan);
	err = frr_rt_allgather(rt, "exchanging memory plans", &mine,
			       sizeof(mine), all);
	if (err)
		goto out;
	for (int r = 0; r < rt->P && !err; r++) {
		double need = 0, cg_need = 0;
		int here = 0, in_cg = 0;

		for (int q = 0; q < rt->P; q++) {
			if (all[q].host != all[r].host)
				continue;
			need += all[q].need;
			here++;
			if (all[q].cgroup == all[r].cgroup) {
				cg_need += all[q].need;
				in_cg++;
			}
		}
		if (files_over(rt, all, r)) {
			err = -ENOSPC;
		} else if (need > 0.9 * all[r].avail) {
			if (rt->rank == 0)
				refuse(rt, all, r, here, need, all[r].avail,
				       "");
			err = -ENOMEM;
		} else if (all[r].cg_avail >= 0 &&
			   cg_need > 0.9 * all[r].cg_avail) {
			/* only rank r knows its cgroup's name */
			snprintf(where, sizeof(where), " (memory cgroup %s)",
				 r == rt->rank ? cg : "of that rank");
			if (rt->rank == 0)
				refuse(rt, all, r, in_cg, cg_need,
				       all[r].cg_avail, where);
			err = -ENOMEM;
		}
	}
	if (frr_log_get_level() >= FRR_LOG_DEBUG)
		log_plan(rt, &mine);
out:
	free(all);
	return err;
}
