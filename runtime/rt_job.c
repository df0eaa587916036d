// SPDX-License-Identifier: MIT
/*
 * One rank of a job: set-up (tables, regions, descriptor exchange), the
 * server loop (apply batches in worker order, push fresh rows, evaluate,
 * heartbeat) and teardown.  The worker loop is in rt_worker.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "rt.h"

/* ---- small helpers ------------------------------------------------------ */
void frr_rt_fatal(struct frr_rt *rt, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* one message per rank even if several threads detect it */
	if (!rt || !atomic_exchange(&rt->failed, 1)) {
		frr_err("%s", buf);
		/* rr (additive): name the helpers we were waiting on */
		if (rt && FRR_RR_HAS(rt->rr, peer_dead) && rt->rr_state)
			rt->rr->peer_dead(rt, rt->rr_state, -1);
	}
	fflush(stdout);
	fflush(stderr);
	_exit(3);
}

/* rr names the helpers that were helping on a dead rank (rr_hooks.h) */
static void rr_peer_dead(struct frr_rt *rt, int rank)
{
	if (FRR_RR_HAS(rt->rr, peer_dead) && rt->rr_state &&
	    !atomic_load(&rt->failed))
		rt->rr->peer_dead(rt, rt->rr_state, rank);
}

/*
 * A peer is gone.  Before exiting, tell every other rank which one (a
 * counter write into its notice slot for us, flushed briefly): a rank that
 * then sees *us* disappear reports the rank that really died, not us.
 */
void frr_rt_peer_fatal(struct frr_rt *rt, int peer, const char *how)
{
	int dead = peer, reporter = -1;
	for (int q = 0; q < rt->P; q++) {
		uint64_t v = frr_tp_load_u64(
		    ctl_u64(rt, rt->off_notice + (size_t)q * 64));

		if (v && (reporter < 0 || q == peer)) {
			dead = (int)(v - 1);
			reporter = q;
		}
	}
	if (dead < 0 || dead >= rt->P)
		dead = peer;
	rr_peer_dead(rt, dead);
	/* The lock is recursive (this thread may hold it already); another
	 * thread may hold it in a flush to the dead peer, bounded by flush_ms:
	 * wait that long, the notice is what lets the others name `dead`. */
	{
		struct timespec dl = frr_deadline_ts(rt->flush_ms + 300);

		if (!pthread_mutex_timedlock(&rt->tp_lock, &dl)) {
			for (int r = 0; r < rt->P; r++)
				if (r != rt->rank && r != dead && r != peer)
					frr_tp_write_u64(
					    rt->eps[r], rt->rctl[r],
					    rt->off_notice +
						(size_t)rt->rank * 64,
					    (uint64_t)dead + 1, 0, 0);
			for (int r = 0; r < rt->P; r++)
				if (r != rt->rank && r != dead && r != peer)
					frr_tp_flush(rt->eps[r], 500);
			pthread_mutex_unlock(&rt->tp_lock);
		}
	}
	if (reporter >= 0 && dead != peer)
		frr_rt_fatal(
		    rt,
		    "rank %d has gone (crashed or was killed), as rank "
		    "%d reported before it stopped too; stopping rank "
		    "%d",
		    dead, reporter, rt->rank);
	frr_rt_fatal(rt,
		     "rank %d has gone (%s: it crashed or was killed); "
		     "stopping rank %d",
		     dead, how, rt->rank);
}

int frr_rt_owner_rank(const struct frr_rt *rt, uint64_t row)
{
	return (int)(row % (uint64_t)rt->P);
}

int frr_rt_stop_clock(const struct frr_rt *rt)
{
	return atomic_load_explicit(&rt->end_clock, memory_order_acquire);
}

static size_t align64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

static uint64_t progress_sig(const struct frr_rt *rt)
{
	uint64_t sig = 0;

	for (int v = 0; v < rt->W; v++)
		sig =
		    sig * 31 +
		    frr_tp_load_u64(ctl_u64(rt, rt->off_prog + (size_t)v * 64));
	return sig;
}

void frr_rt_stall_init(const struct frr_rt *rt, struct frr_stall *s)
{
	s->sig = progress_sig(rt);
	s->since = frr_rt_clock_now();
}

int frr_rt_stalled(const struct frr_rt *rt, struct frr_stall *s)
{
	double now = frr_rt_clock_now();
	uint64_t sig = progress_sig(rt);

	if (sig != s->sig) {
		s->sig = sig;
		s->since = now;
		return 0;
	}
	return (now - s->since) * 1000 > rt->o->timeout_ms;
}

/* ---- rr-facing getters (rr_hooks.h) ------------------------------------- */
const struct frr_job_info *frr_rt_job(const struct frr_rt *rt)
{
	return &rt->job;
}

int frr_rt_rr_reassign(const struct frr_rt *rt)
{
	return rt->rr_reassign;
}

uint64_t frr_rt_nitems(const struct frr_rt *rt, int v)
{
	return (v >= 0 && v < rt->W) ? rt->nitems[v] : 0;
}

int frr_rt_prog_shift(const struct frr_rt *rt)
{
	return rt->prog_shift;
}

struct frr_progress frr_rt_progress(const struct frr_rt *rt, int v)
{
	return frr_prog_unpack(
	    frr_tp_load_u64(ctl_u64(rt, rt->off_prog + (size_t)v * 64)));
}

double frr_rt_now(const struct frr_rt *rt)
{
	return frr_rt_clock_now() - rt->t0;
}

double frr_rt_clock_time(const struct frr_rt *rt, int w)
{
	int l = w - rt->rank * rt->T;

	if (l < 0 || l >= rt->T)
		return 0;
	return rt->wk[l].loop_time;
}

static int part_load(struct frr_rt *rt, int v)
{
	struct frr_part *p = &rt->parts[v];
	uint64_t n = 0, off = 0;
	int err;

	if (p->loaded)
		return 0;
	err = rt->app->load_partition(rt->app_state, v, &n);
	if (err) {
		frr_err("app %s: loading the partition of worker %d failed "
			"(%d): see the app's message above",
			rt->app->name, v, err);
		return err < 0 ? err : -EIO;
	}
	p->n = n;
	if (rt->app->item_state_size) {
		p->state_off = malloc((n + 1) * sizeof(uint64_t));
		if (!p->state_off)
			return -ENOMEM;
		for (uint64_t i = 0; i < n; i++) {
			p->state_off[i] = off;
			off += rt->app->item_state_size(rt->app_state, v, i);
		}
		p->state_off[n] = off;
		if (!off) {
			free(p->state_off);
			p->state_off = NULL;
		} else {
			p->state = calloc(1, off);
			if (!p->state)
				return -ENOMEM;
			for (uint64_t i = 0; i < n; i++)
				if (rt->app->item_state_init)
					rt->app->item_state_init(
					    rt->app_state, v, i,
					    p->state + p->state_off[i]);
		}
	}
	p->loaded = 1;
	return 0;
}

int frr_rt_want_replica(struct frr_rt *rt, int v)
{
	if (v < 0 || v >= rt->W)
		return -EINVAL;
	return part_load(rt, v);
}

/* Write item states [a, b) of worker owner from this rank's copy into rank
 * r's copy, flushed on return. */
static int state_ship(struct frr_rt *rt, int owner, int r, uint64_t a,
		      uint64_t b)
{
	struct frr_part *p = &rt->parts[owner];
	struct frr_tp_rmr *rm;
	size_t off, len;
	int err;

	if (r == rt->rank || !p->state || a >= b)
		return 0;
	if (!rt->state_mr || !rt->state_mr[owner] || b > p->n)
		return -EINVAL;
	rm = rt->rstate[(size_t)r * rt->W + owner];
	if (!rm) {
		frr_err("rank %d holds no replica of worker %d's partition: "
			"rr must ask for it with frr_rt_want_replica() in "
			"job_init",
			r, owner);
		return -EINVAL;
	}
	off = p->state_off[a];
	len = p->state_off[b] - off;
	pthread_mutex_lock(&rt->tp_lock);
	err = frr_tp_write(rt->eps[r], rt->state_mr[owner], off, rm, off, len,
			   0, 0);
	if (!err)
		err = frr_tp_flush(rt->eps[r], rt->flush_ms);
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		frr_rt_peer_fatal(rt, r, "shipping item state to it failed");
	return 0;
}

int frr_rt_state_push(struct frr_rt *rt, int owner, int helper, uint64_t a,
		      uint64_t b)
{
	if (owner < 0 || owner >= rt->W || helper < 0 || helper >= rt->W ||
	    owner / rt->T != rt->rank)
		return -EINVAL;
	return state_ship(rt, owner, helper / rt->T, a, b);
}

int frr_rt_state_return(struct frr_rt *rt, int owner, uint64_t a, uint64_t b)
{
	return state_ship(rt, owner, owner / rt->T, a, b);
}

/* Collective (rr with item state only): move held partitions' item state
 * into remote-writable regions and import every rank's. */
static int state_setup(struct frr_rt *rt)
{
	size_t dl = (size_t)rt->W * sizeof(struct frr_tp_desc);
	struct frr_tp_desc *mine = calloc(1, dl), *all = NULL;
	int err = 0;

	rt->state_mr = calloc((size_t)rt->W, sizeof(*rt->state_mr));
	rt->rstate = calloc((size_t)rt->W * rt->P, sizeof(*rt->rstate));
	all = calloc((size_t)rt->P, dl);
	if (!mine || !all || !rt->state_mr || !rt->rstate) {
		err = -ENOMEM;
		goto out;
	}
	for (int v = 0; v < rt->W && !err; v++) {
		struct frr_part *p = &rt->parts[v];
		size_t len;

		if (!p->state)
			continue;
		len = p->state_off[p->n];
		err = frr_tp_mr_alloc(rt->tp, len, FRR_TP_ACCESS_REMOTE_WRITE,
				      &rt->state_mr[v]);
		if (err)
			break;
		memcpy(frr_tp_mr_ptr(rt->state_mr[v]), p->state, len);
		free(p->state);
		p->state = frr_tp_mr_ptr(rt->state_mr[v]);
		err = frr_tp_mr_export(rt->state_mr[v], &mine[v]);
	}
	if (err)
		goto out;
	err = frr_oob_allgather(rt->oob, mine, dl, all, rt->o->timeout_ms);
	for (int r = 0; r < rt->P && !err; r++)
		for (int v = 0; v < rt->W && !err; v++) {
			struct frr_tp_desc *d = &all[(size_t)r * rt->W + v];

			if (r == rt->rank || d->magic != FRR_TP_DESC_MAGIC)
				continue;
			err = frr_tp_rmr_import(
			    rt->eps[r], d, &rt->rstate[(size_t)r * rt->W + v]);
		}
out:
	free(mine);
	free(all);
	return err;
}

/* ---- eval ctx ------------------------------------------------------------ */
struct frr_eval_ctx {
	struct frr_rt *rt;
	double stats[FRR_MAX_STATS];
};

static const float *repl_row(const struct frr_rt *rt, int t, uint64_t row)
{
	int o = frr_rt_owner_rank(rt, row);
	uint64_t li = row / (uint64_t)rt->P;

	return (const float *)(rt->replp + rt->repl_off[t * rt->P + o] +
			       li * rt->spec[t].cols * sizeof(float));
}

int frr_eval_row_read(struct frr_eval_ctx *ec, int table, uint64_t row,
		      float *out)
{
	struct frr_rt *rt = ec->rt;

	if (table < 0 || table >= rt->ntables || row >= rt->spec[table].rows)
		return -EINVAL;
	memcpy(out, repl_row(rt, table, row),
	       rt->spec[table].cols * sizeof(float));
	return 0;
}

int frr_eval_row_write(struct frr_eval_ctx *ec, int table, uint64_t row,
		       const float *in)
{
	struct frr_rt *rt = ec->rt;
	uint32_t cols;

	if (table < 0 || table >= rt->ntables || row >= rt->spec[table].rows ||
	    frr_rt_owner_rank(rt, row) != rt->rank)
		return -EINVAL;
	cols = rt->spec[table].cols;
	memcpy(rt->master[table] + (row / (uint64_t)rt->P) * cols, in,
	       cols * sizeof(float));
	return 0;
}

void frr_eval_stat_add(struct frr_eval_ctx *ec, int idx, double v)
{
	if (idx >= 0 && idx < FRR_MAX_STATS)
		ec->stats[idx] += v;
}

const struct frr_job_info *frr_eval_job(const struct frr_eval_ctx *ec)
{
	return &ec->rt->job;
}

/* ---- layout ------------------------------------------------------------- */
static int layout(struct frr_rt *rt)
{
	int P = rt->P, T = rt->T, W = rt->W;
	size_t off = 0;

	rt->shard_rows = calloc((size_t)FRR_MAX_TABLES * P, sizeof(uint64_t));
	rt->repl_off = calloc((size_t)FRR_MAX_TABLES * P, sizeof(size_t));
	rt->pay_off = calloc((size_t)FRR_MAX_TABLES * P, sizeof(size_t));
	rt->slot_bytes = calloc((size_t)P, sizeof(size_t));
	if (!rt->shard_rows || !rt->repl_off || !rt->pay_off || !rt->slot_bytes)
		return -ENOMEM;
	for (int t = 0; t < rt->ntables; t++)
		for (int o = 0; o < P; o++) {
			uint64_t rows = rt->spec[t].rows;

			rt->shard_rows[t * P + o] =
			    rows > (uint64_t)o ? (rows - o + P - 1) / P : 0;
			rt->repl_off[t * P + o] = off;
			off += align64(rt->shard_rows[t * P + o] *
				       rt->spec[t].cols * sizeof(float));
		}
	rt->repl_len = off ? off : 64;
	rt->slot_max = 0;
	for (int o = 0; o < P; o++) {
		size_t s = FRR_SLOT_HDR;

		for (int t = 0; t < rt->ntables; t++) {
			rt->pay_off[o * FRR_MAX_TABLES + t] = s;
			s += align64(rt->shard_rows[t * P + o] *
				     rt->spec[t].cols * sizeof(float));
		}
		rt->slot_bytes[o] = s;
		if (s > rt->slot_max)
			rt->slot_max = s;
	}
	rt->K = rt->eff_slack + 3 + (rt->rr_reassign ? FRR_RT_HELP_SLOTS : 0);
	rt->inbox_len = (size_t)W * rt->K * rt->slot_bytes[rt->rank];

	rt->stats_rec =
	    align64(8 + 8 * (FRR_MAX_STATS + (size_t)T * FRR_RT_NMETRICS));
	off = 0;
	rt->off_prog = off;
	off += (size_t)W * 64;
	rt->off_done = off;
	off += (size_t)P * 64;
	rt->off_hb = off;
	off += (size_t)P * 64;
	rt->off_stop = off;
	off += 64;
	rt->off_notice = off; /* [writer rank]: dead rank + 1 */
	off += (size_t)P * 64;
	rt->off_stats = off; /* + one staging record after the P slots */
	off += ((size_t)P * FRR_RT_STATS_SLOTS + 1) * rt->stats_rec;
	rt->off_ack = off;
	off += align64((size_t)P * T * rt->K * 8);
	rt->off_mbox = off;
	off += (size_t)T * W * FRR_RR_MBOX_DEPTH * 64;
	rt->off_mack = off;
	off += align64((size_t)T * W * 8);
	rt->off_mstage = off;
	off += (size_t)T * 64;
	rt->ctl_len = off;
	return 0;
}

static int check_memory(struct frr_rt *rt)
{
	double need = (double)rt->ctl_len + rt->inbox_len + rt->repl_len;
	double avail =
	    (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	double table = 0;

	for (int t = 0; t < rt->ntables; t++)
		table += (double)rt->spec[t].rows * rt->spec[t].cols * 4;
	/* master + accum + per-thread accumulators and staging */
	need += 2 * table / rt->P +
		rt->T * ((rt->rr_reassign ? 2 : 1) * table + rt->slot_max);
	if (need > 0.8 * avail) {
		frr_err("the parameter tables (%.3g GiB in all) need about "
			"%.3g GiB on each rank but only %.3g GiB of memory is "
			"available: use smaller tables, more processes, or "
			"fewer threads",
			table / 1073741824.0, need / 1073741824.0,
			avail / 1073741824.0);
		return -ENOMEM;
	}
	return 0;
}

/* ---- transport set-up --------------------------------------------------- */
struct rank_info {
	struct frr_tp_addr addr;
	struct frr_tp_desc ctl, inbox, repl;
	uint64_t nitems[]; /* T */
};

static size_t rank_info_len(const struct frr_rt *rt)
{
	return sizeof(struct rank_info) + (size_t)rt->T * sizeof(uint64_t);
}

static int tp_setup(struct frr_rt *rt)
{
	struct frr_tp_config cfg = {
		.backend = rt->o->backend,
		.job_token = rt->o->job_token,
		.rank = rt->rank,
		.nranks = rt->P,
		/* a write waiting for send-queue room must not hold the
		 * transport lock past what a dead peer is allowed */
		.timeout_ms = rt->flush_ms,
		.gid_index = -1,
	};
	size_t ilen = rank_info_len(rt);
	struct rank_info *mine = NULL;
	uint8_t *all = NULL;
	struct frr_tp_addr *addrs = NULL;
	int err;

	err = frr_tp_open(&cfg, &rt->tp);
	if (err)
		return err;
	rt->eps = calloc((size_t)rt->P, sizeof(*rt->eps));
	rt->rctl = calloc((size_t)rt->P, sizeof(*rt->rctl));
	rt->rinbox = calloc((size_t)rt->P, sizeof(*rt->rinbox));
	rt->rrepl = calloc((size_t)rt->P, sizeof(*rt->rrepl));
	mine = calloc(1, ilen);
	all = calloc((size_t)rt->P, ilen);
	addrs = calloc((size_t)rt->P, sizeof(*addrs));
	if (!rt->eps || !rt->rctl || !rt->rinbox || !rt->rrepl || !mine ||
	    !all || !addrs) {
		err = -ENOMEM;
		goto out;
	}
	err = frr_tp_mr_alloc(rt->tp, rt->ctl_len, FRR_TP_ACCESS_REMOTE_WRITE,
			      &rt->ctl);
	if (!err)
		err = frr_tp_mr_alloc(rt->tp, rt->inbox_len,
				      FRR_TP_ACCESS_REMOTE_WRITE, &rt->inbox);
	if (!err)
		err = frr_tp_mr_alloc(rt->tp, rt->repl_len,
				      FRR_TP_ACCESS_REMOTE_WRITE, &rt->repl);
	if (err)
		goto out;
	rt->ctlp = frr_tp_mr_ptr(rt->ctl);
	rt->inboxp = frr_tp_mr_ptr(rt->inbox);
	rt->replp = frr_tp_mr_ptr(rt->repl);

	err = frr_tp_addr_get(rt->tp, &mine->addr);
	if (!err)
		err = frr_tp_mr_export(rt->ctl, &mine->ctl);
	if (!err)
		err = frr_tp_mr_export(rt->inbox, &mine->inbox);
	if (!err)
		err = frr_tp_mr_export(rt->repl, &mine->repl);
	if (err)
		goto out;
	for (int t = 0; t < rt->T; t++)
		mine->nitems[t] = rt->parts[rt->rank * rt->T + t].n;
	err = frr_oob_allgather(rt->oob, mine, ilen, all, rt->o->timeout_ms);
	if (err) {
		frr_err("exchanging transport addresses with the other ranks "
			"failed (%d)",
			err);
		goto out;
	}
	for (int r = 0; r < rt->P; r++) {
		struct rank_info *ri = (struct rank_info *)(all + r * ilen);

		addrs[r] = ri->addr;
		for (int t = 0; t < rt->T; t++)
			rt->nitems[r * rt->T + t] = ri->nitems[t];
	}
	err = frr_tp_connect_all(rt->tp, addrs, rt->P, rt->o->timeout_ms,
				 rt->eps);
	if (err)
		goto out;
	for (int r = 0; r < rt->P; r++) {
		struct rank_info *ri = (struct rank_info *)(all + r * ilen);

		if (r == rt->rank)
			continue;
		err = frr_tp_rmr_import(rt->eps[r], &ri->ctl, &rt->rctl[r]);
		if (!err)
			err = frr_tp_rmr_import(rt->eps[r], &ri->inbox,
						&rt->rinbox[r]);
		if (!err)
			err = frr_tp_rmr_import(rt->eps[r], &ri->repl,
						&rt->rrepl[r]);
		if (err)
			goto out;
	}
out:
	free(mine);
	free(all);
	free(addrs);
	return err;
}

static void tp_teardown(struct frr_rt *rt)
{
	for (int i = 0; rt->rstate && i < rt->W * rt->P; i++)
		if (rt->rstate[i])
			frr_tp_rmr_release(rt->rstate[i]);
	for (int v = 0; rt->state_mr && v < rt->W; v++)
		if (rt->state_mr[v]) {
			frr_tp_mr_free(rt->state_mr[v]);
			rt->parts[v].state = NULL;
		}
	free(rt->rstate);
	free(rt->state_mr);
	for (int r = 0; rt->eps && r < rt->P; r++) {
		if (rt->rctl[r])
			frr_tp_rmr_release(rt->rctl[r]);
		if (rt->rinbox[r])
			frr_tp_rmr_release(rt->rinbox[r]);
		if (rt->rrepl[r])
			frr_tp_rmr_release(rt->rrepl[r]);
		if (rt->eps[r])
			frr_tp_ep_close(rt->eps[r]);
	}
	for (int t = 0; rt->wk && t < rt->T; t++)
		if (rt->wk[t].stage)
			frr_tp_mr_free(rt->wk[t].stage);
	if (rt->ctl)
		frr_tp_mr_free(rt->ctl);
	if (rt->inbox)
		frr_tp_mr_free(rt->inbox);
	if (rt->repl)
		frr_tp_mr_free(rt->repl);
	if (rt->tp)
		frr_tp_close(rt->tp);
	free(rt->eps);
	free(rt->rctl);
	free(rt->rinbox);
	free(rt->rrepl);
}

/* A transport call that fails on the data path means a peer is gone. */
static void tp_check(struct frr_rt *rt, int err, int peer, const char *what)
{
	char how[160];

	if (!err)
		return;
	snprintf(how, sizeof(how), "%s to rank %d failed: %s", what, peer,
		 strerror(-err));
	frr_rt_peer_fatal(rt, peer, how);
}

/* Write u64 into every peer's control region at off, then set it locally. */
static void ctl_broadcast_u64(struct frr_rt *rt, size_t off, uint64_t v)
{
	pthread_mutex_lock(&rt->tp_lock);
	for (int r = 0; r < rt->P; r++) {
		if (r == rt->rank)
			continue;
		tp_check(
		    rt, frr_tp_write_u64(rt->eps[r], rt->rctl[r], off, v, 0, 0),
		    r, "a counter write");
	}
	pthread_mutex_unlock(&rt->tp_lock);
	atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, off), v,
			      memory_order_release);
}

/*
 * The local replica is overwritten while this rank's workers may read it
 * (SSP allows a read to see newer rows, even mid-row): the same benign race
 * peers cause with their one-sided writes, which TSan cannot see.  So this
 * copy is not instrumented either, and must not become a memcpy call.
 */
#ifdef __clang__
#define FRR_NO_MEMCPY_IDIOM no_builtin("memcpy")
#else
#define FRR_NO_MEMCPY_IDIOM optimize("no-tree-loop-distribute-patterns")
#endif
__attribute__((no_sanitize("thread"), FRR_NO_MEMCPY_IDIOM)) static void
replica_copy(void *dst, const void *src, size_t n)
{
	uint32_t *d = dst;
	const uint32_t *s = src;

	for (size_t i = 0; i < n / 4; i++)
		d[i] = s[i];
}

/* Push rows [lo, hi) of this rank's shard of table t to every replica. */
static void push_rows(struct frr_rt *rt, int t, uint64_t lo, uint64_t hi)
{
	size_t rb = rt->spec[t].cols * sizeof(float);
	size_t off = rt->repl_off[t * rt->P + rt->rank] + lo * rb;

	if (hi <= lo)
		return;
	replica_copy(rt->replp + off, rt->master[t] + lo * rt->spec[t].cols,
		     (hi - lo) * rb);
	pthread_mutex_lock(&rt->tp_lock);
	for (int r = 0; r < rt->P; r++) {
		if (r == rt->rank)
			continue;
		tp_check(rt,
			 frr_tp_write(rt->eps[r], rt->repl, off, rt->rrepl[r],
				      off, (hi - lo) * rb, 0, 0),
			 r, "pushing rows");
	}
	pthread_mutex_unlock(&rt->tp_lock);
}

/* timeout_ms: flush_ms while the job runs (the server must get back to
 * its heartbeats), the long --timeout at start-up and at the end. */
static void flush_all(struct frr_rt *rt, int timeout_ms)
{
	pthread_mutex_lock(&rt->tp_lock);
	for (int r = 0; r < rt->P; r++)
		if (r != rt->rank)
			tp_check(rt, frr_tp_flush(rt->eps[r], timeout_ms), r,
				 "flushing writes");
	pthread_mutex_unlock(&rt->tp_lock);
}

static int tables_init(struct frr_rt *rt)
{
	for (int t = 0; t < rt->ntables; t++) {
		uint64_t n = rt->shard_rows[t * rt->P + rt->rank];
		uint32_t cols = rt->spec[t].cols;

		rt->master[t] = calloc(n * cols + 1, sizeof(float));
		if (!rt->master[t])
			return -ENOMEM;
		if (rt->spec[t].rule == FRR_UPDATE_ADAGRAD) {
			rt->accum[t] = calloc(n * cols + 1, sizeof(float));
			if (!rt->accum[t])
				return -ENOMEM;
		}
		if (rt->spec[t].init_row)
			for (uint64_t li = 0; li < n; li++)
				rt->spec[t].init_row(
				    rt->app_state, t, li * rt->P + rt->rank,
				    rt->master[t] + li * cols, cols);
	}
	return 0;
}

/* ---- server: apply ------------------------------------------------------ */
static struct frr_slot_hdr *slot_hdr(struct frr_rt *rt, int v, int k)
{
	return (struct frr_slot_hdr *)(rt->inboxp +
				       ((size_t)v * rt->K + k) *
					   rt->slot_bytes[rt->rank]);
}

static void apply_slot(struct frr_rt *rt, const struct frr_slot_hdr *h,
		       uint64_t *dlo, uint64_t *dhi)
{
	const uint8_t *base = (const uint8_t *)h;

	for (int t = 0; t < rt->ntables; t++) {
		uint32_t cols = rt->spec[t].cols;
		const float *g =
		    (const float *)(base +
				    rt->pay_off[rt->rank * FRR_MAX_TABLES + t]);
		float *m = rt->master[t];
		uint64_t lo = h->lo[t], hi = h->hi[t];

		if (hi <= lo)
			continue;
		if (lo < dlo[t])
			dlo[t] = lo;
		if (hi > dhi[t])
			dhi[t] = hi;
		if (rt->spec[t].rule == FRR_UPDATE_ADAGRAD) {
			float *acc = rt->accum[t];
			float lr = rt->spec[t].lr, eps = rt->spec[t].eps;

			for (uint64_t i = lo * cols; i < hi * cols; i++) {
				if (g[i] == 0.0f)
					continue;
				acc[i] += g[i] * g[i];
				m[i] -= lr * g[i] / sqrtf(eps + acc[i]);
			}
		} else {
			for (uint64_t i = lo * cols; i < hi * cols; i++)
				m[i] += g[i];
		}
	}
}

static int cmp_slot(const void *a, const void *b, void *arg)
{
	struct frr_rt *rt = arg;
	const int *x = a, *y = b;
	const struct frr_slot_hdr *h = slot_hdr(rt, x[0], x[1]);
	const struct frr_slot_hdr *g = slot_hdr(rt, y[0], y[1]);

	if (h->owner != g->owner)
		return h->owner - g->owner;
	if (h->final != g->final)
		return g->final - h->final; /* owner's own batch first */
	if (h->sender != g->sender)
		return h->sender - g->sender;
	return h->seq < g->seq ? -1 : h->seq > g->seq;
}

static void validate_hdr(struct frr_rt *rt, const struct frr_slot_hdr *h, int v)
{
	bool ok = h->sender == v && h->owner >= 0 && h->owner < rt->W &&
		  h->clock >= 0 && h->final >= 0 && h->final <= 1 &&
		  h->nextra >= 0 && h->nextra <= rt->W * rt->K &&
		  h->ntables == rt->ntables;

	for (int t = 0; ok && t < rt->ntables; t++)
		ok = h->lo[t] <= h->hi[t] &&
		     h->hi[t] <= rt->shard_rows[t * rt->P + rt->rank];
	if (!ok)
		frr_rt_fatal(rt,
			     "corrupt update batch from worker %d (sender %d, "
			     "owner %d, clock %d): mismatched binaries or "
			     "memory corruption",
			     v, h->sender, h->owner, h->clock);
}

/* Apply clock c if every batch of it has arrived; 1 if applied. */
static int try_apply(struct frr_rt *rt, int c, int **sel, int *selcap)
{
	int W = rt->W, n = 0;
	/* per-worker tallies, allocated once: this runs every loop turn */
	int *finals = rt->scratch, *extra = finals + W, *want = extra + W;
	uint64_t dlo[FRR_MAX_TABLES], dhi[FRR_MAX_TABLES];

	memset(rt->scratch, 0, 3 * (size_t)W * sizeof(int));
	for (int v = 0; v < W; v++)
		for (int k = 0; k < rt->K; k++) {
			struct frr_slot_hdr *h = slot_hdr(rt, v, k);
			uint64_t seq = frr_tp_load_u64(&h->seq);

			if (seq <= rt->consumed[v * rt->K + k])
				continue;
			validate_hdr(rt, h, v);
			if (h->clock != c)
				continue;
			if (n + 2 > *selcap) {
				*selcap = 2 * (*selcap + 8);
				*sel = realloc(*sel, *selcap * 2 * sizeof(int));
				if (!*sel)
					frr_rt_fatal(rt, "out of memory");
			}
			(*sel)[2 * n] = v;
			(*sel)[2 * n + 1] = k;
			n++;
			if (h->final) {
				finals[h->owner]++;
				want[h->owner] = h->nextra;
			} else {
				extra[h->owner]++;
			}
		}
	for (int w = 0; w < W; w++)
		if (finals[w] != 1 || extra[w] != want[w])
			return 0;
	qsort_r(*sel, (size_t)n, 2 * sizeof(int), cmp_slot, rt);
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		dlo[t] = UINT64_MAX;
		dhi[t] = 0;
	}
	for (int i = 0; i < n; i++)
		apply_slot(rt, slot_hdr(rt, (*sel)[2 * i], (*sel)[2 * i + 1]),
			   dlo, dhi);
	/* the previous push's source rows must be settled before reuse */
	flush_all(rt, rt->flush_ms);
	for (int t = 0; t < rt->ntables; t++)
		push_rows(rt, t, dlo[t], dhi[t]);
	/* free the slots: acks go to the sender's rank */
	for (int i = 0; i < n; i++) {
		int v = (*sel)[2 * i], k = (*sel)[2 * i + 1];
		struct frr_slot_hdr *h = slot_hdr(rt, v, k);
		int sr = v / rt->T;
		size_t off =
		    rt->off_ack +
		    (((size_t)rt->rank * rt->T + v % rt->T) * rt->K + k) * 8;

		rt->consumed[v * rt->K + k] = h->seq;
		if (sr == rt->rank) {
			atomic_store_explicit(
			    (_Atomic uint64_t *)ctl_u64(rt, off), h->seq,
			    memory_order_release);
		} else {
			pthread_mutex_lock(&rt->tp_lock);
			tp_check(rt,
				 frr_tp_write_u64(rt->eps[sr], rt->rctl[sr],
						  off, h->seq, 0, 0),
				 sr, "acknowledging a batch");
			pthread_mutex_unlock(&rt->tp_lock);
		}
	}
	/* G3: shard_done travels after the rows on each endpoint */
	ctl_broadcast_u64(rt, rt->off_done + (size_t)rt->rank * 64,
			  (uint64_t)c + 1);
	return 1;
}

/* ---- server: evaluation ------------------------------------------------- */
static void eval_local(struct frr_rt *rt, int c)
{
	struct frr_eval_ctx ec = { .rt = rt };
	uint8_t *stage = rt->ctlp + rt->off_stats +
			 (size_t)rt->P * FRR_RT_STATS_SLOTS * rt->stats_rec;
	double *d = (double *)(stage + 8);
	size_t dst = rt->off_stats + ((size_t)rt->rank * FRR_RT_STATS_SLOTS +
				      c % FRR_RT_STATS_SLOTS) *
					 rt->stats_rec;

	if (rt->app->clock_local) {
		int err = rt->app->clock_local(rt->app_state, &ec, c);

		if (err)
			frr_rt_fatal(rt,
				     "app %s: clock_local(clock %d) failed "
				     "(%d)",
				     rt->app->name, c, err);
	}
	for (int t = 0; t < rt->T; t++) {
		struct frr_wclock *rc = &rt->wk[t].rec[c % FRR_RT_STAT_RING];
		double *m = d + FRR_MAX_STATS + t * FRR_RT_NMETRICS;

		for (int i = 0; i < FRR_MAX_STATS; i++)
			ec.stats[i] += rc->stats[i];
		m[0] = rc->compute_s;
		m[1] = rc->wait_s;
		m[2] = rc->flush_s;
		m[3] = (double)rc->updates;
		m[4] = (double)rc->bytes;
		m[5] = (double)rc->stale_reads;
		for (int i = 0; i < FRR_RT_NRR; i++)
			m[7 + i] = rc->rr[i];
		m[6] = rc->min_data_clock == INT64_MAX
			   ? -1
			   : (double)rc->min_data_clock;
	}
	memcpy(d, ec.stats, sizeof(ec.stats));
	/* the stage is reused next clock: flush before rewriting it */
	*(uint64_t *)stage = 0;
	if (rt->rank == 0) {
		memcpy(rt->ctlp + dst + 8, d, rt->stats_rec - 8);
		atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, dst),
				      (uint64_t)c + 1, memory_order_release);
	} else {
		pthread_mutex_lock(&rt->tp_lock);
		tp_check(rt,
			 frr_tp_write(rt->eps[0], rt->ctl,
				      (size_t)(stage - rt->ctlp), rt->rctl[0],
				      dst, rt->stats_rec, 0, 0),
			 0, "sending clock stats");
		tp_check(rt,
			 frr_tp_write_u64(rt->eps[0], rt->rctl[0], dst,
					  (uint64_t)c + 1, 0, 0),
			 0, "sending clock stats");
		tp_check(rt, frr_tp_flush(rt->eps[0], rt->flush_ms), 0,
			 "sending clock stats");
		pthread_mutex_unlock(&rt->tp_lock);
	}
	atomic_store_explicit(&rt->eval_done, c + 1, memory_order_release);
}

static void write_metrics(struct frr_rt *rt, int c, int r, const double *d)
{
	if (!rt->metrics_f)
		return;
	for (int t = 0; t < rt->T; t++) {
		const double *m = d + FRR_MAX_STATS + t * FRR_RT_NMETRICS;

		if (rt->metrics_json) {
			static const char *const names[] = {
				"compute_s",
				"wait_s",
				"flush_s",
				"updates",
				"bytes",
				"stale_reads",
				"min_data_clock",
				"rr_offers",
				"rr_accepted",
				"rr_cancelled",
				"rr_items_reassigned",
			};

			fprintf(rt->metrics_f,
				"{\"clock\":%d,\"worker\":%d,\"rank\":%d", c,
				r * rt->T + t, r);
			for (size_t i = 0; i < sizeof(names) / sizeof(*names);
			     i++)
				fprintf(rt->metrics_f, ",\"%s\":%.9g", names[i],
					m[i]);
			fprintf(rt->metrics_f, "}\n");
			continue;
		}
		fprintf(rt->metrics_f,
			"%d,%d,%d,%.6f,%.6f,%.6f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,"
			"%.0f,%.0f\n",
			c, r * rt->T + t, r, m[0], m[1], m[2], m[3], m[4], m[5],
			m[6], m[7], m[8], m[9], m[10]);
	}
}

/* Rank 0: 1 when clock c's stats of every rank are in and processed. */
static int try_global(struct frr_rt *rt, int c)
{
	double stats[FRR_MAX_STATS] = { 0 };
	double slowest = -1, now;
	int slow_w = -1;
	uint64_t stale = 0;

	for (int r = 0; r < rt->P; r++) {
		size_t off = rt->off_stats + ((size_t)r * FRR_RT_STATS_SLOTS +
					      c % FRR_RT_STATS_SLOTS) *
						 rt->stats_rec;

		if (frr_tp_load_u64(ctl_u64(rt, off)) != (uint64_t)c + 1)
			return 0;
	}
	for (int r = 0; r < rt->P; r++) {
		size_t off = rt->off_stats + ((size_t)r * FRR_RT_STATS_SLOTS +
					      c % FRR_RT_STATS_SLOTS) *
						 rt->stats_rec;
		const double *d = (const double *)(rt->ctlp + off + 8);

		for (int i = 0; i < FRR_MAX_STATS; i++)
			stats[i] += d[i];
		for (int t = 0; t < rt->T; t++) {
			const double *m =
			    d + FRR_MAX_STATS + t * FRR_RT_NMETRICS;

			if (m[0] > slowest) {
				slowest = m[0];
				slow_w = r * rt->T + t;
			}
			stale += (uint64_t)m[5];
		}
		write_metrics(rt, c, r, d);
	}
	rt->metrics[0] = 0;
	if (rt->app->clock_global) {
		int err = rt->app->clock_global(
		    rt->app_state, stats, rt->app->nstats, c, &rt->objective,
		    rt->metrics, sizeof(rt->metrics));

		if (err)
			frr_rt_fatal(rt,
				     "app %s: clock_global(clock %d) "
				     "failed (%d)",
				     rt->app->name, c, err);
	}
	now = frr_rt_clock_now();
	if (!rt->o->quiet)
		fprintf(stderr,
			"flexrr: clock %d objective=%.6g clock_s=%.4f "
			"slowest=w%d (%.4f s)%s\n",
			c, rt->objective, now - rt->last_global_t, slow_w,
			slowest, stale ? " STALE READS" : "");
	rt->last_global_t = now;
	if (stale)
		frr_err("clock %d: %" PRIu64 " reads were staler than the "
			"slack allows: SSP bound violated",
			c, stale);
	if (rt->o->have_target && c + 1 < frr_rt_stop_clock(rt)) {
		bool hit = rt->app->maximize ? rt->objective >= rt->o->target
					     : rt->objective <= rt->o->target;

		if (hit) {
			int end = c + rt->eff_slack + 2;

			if (end < frr_rt_stop_clock(rt)) {
				atomic_store(&rt->end_clock, end);
				ctl_broadcast_u64(rt, rt->off_stop,
						  (uint64_t)end);
			}
		}
	}
	return 1;
}

/* ---- server: heartbeats -------------------------------------------------- */
#define HB_FINISHED UINT64_MAX

/*
 * Every 200 ms: write our heartbeat into every peer and ask the transport
 * whether each peer is alive.  Both need the transport lock; a worker may
 * hold it in a flush to a dead peer, so they are skipped (trylock) rather
 * than waited for.  Reading the peers' heartbeats is lock-free and runs on
 * every call, so a silent peer is always noticed after dead_ms.
 */
static void heartbeat(struct frr_rt *rt, double now, int finished)
{
	int beat = now >= rt->hb_next || finished;

	if (beat && (finished ? !pthread_mutex_lock(&rt->tp_lock)
			      : !pthread_mutex_trylock(&rt->tp_lock))) {
		uint64_t v = finished ? HB_FINISHED : ++rt->hb_count;
		size_t off = rt->off_hb + (size_t)rt->rank * 64;

		rt->hb_next = now + 0.2;
		for (int r = 0; r < rt->P; r++) {
			if (r == rt->rank)
				continue;
			if (!finished && !frr_tp_ep_alive(rt->eps[r]))
				frr_rt_peer_fatal(rt, r,
						  "its connection dropped");
			tp_check(rt,
				 frr_tp_write_u64(rt->eps[r], rt->rctl[r], off,
						  v, 0, 0),
				 r, "a heartbeat");
		}
		pthread_mutex_unlock(&rt->tp_lock);
	}
	for (int r = 0; r < rt->P; r++) {
		uint64_t v;

		if (r == rt->rank)
			continue;
		v = frr_tp_load_u64(ctl_u64(rt, rt->off_hb + (size_t)r * 64));
		if (v == HB_FINISHED)
			continue;
		if (v != rt->hb_last[r]) {
			rt->hb_last[r] = v;
			rt->hb_seen[r] = now;
		} else if ((now - rt->hb_seen[r]) * 1000 > rt->o->dead_ms) {
			char how[64];

			snprintf(how, sizeof(how), "no heartbeat for %d ms",
				 rt->o->dead_ms);
			frr_rt_peer_fatal(rt, r, how);
		}
	}
}

static void server_loop(struct frr_rt *rt)
{
	int *sel = NULL, selcap = 0;
	double last_progress = frr_rt_clock_now();
	struct frr_stall stall;
	long idle_ns = 0;

	for (int r = 0; r < rt->P; r++)
		rt->hb_seen[r] = last_progress;
	frr_rt_stall_init(rt, &stall);
	for (;;) {
		int end = frr_rt_stop_clock(rt), busy = 0;
		uint64_t stop = frr_tp_load_u64(ctl_u64(rt, rt->off_stop));
		double now = frr_rt_clock_now();

		/* remote-written: only ever an earlier end than ours */
		if (stop && stop < (uint64_t)end) {
			end = (int)stop;
			atomic_store(&rt->end_clock, end);
		}
		if (rt->next_apply < end &&
		    (rt->rank != 0 || rt->next_global >= rt->next_apply) &&
		    try_apply(rt, rt->next_apply, &sel, &selcap)) {
			rt->next_apply++;
			busy = 1;
		}
		if (rt->next_eval < end && rt->next_eval < rt->next_apply &&
		    frr_rt_all_done_ge(rt, (uint64_t)rt->next_eval + 1)) {
			eval_local(rt, rt->next_eval++);
			busy = 1;
		}
		if (rt->rank == 0 && rt->next_global < rt->next_eval &&
		    try_global(rt, rt->next_global)) {
			rt->next_global++;
			busy = 1;
		}
		if (rt->next_apply >= end && rt->next_eval >= end &&
		    (rt->rank != 0 || rt->next_global >= end))
			break;
		heartbeat(rt, now, 0);
		if (busy) {
			frr_rt_stall_init(rt, &stall);
			idle_ns = 0;
			continue;
		}
		if (now - last_progress > 0.01) {
			last_progress = now;
			if (frr_rt_stalled(rt, &stall))
				frr_rt_fatal(
				    rt,
				    "no worker made progress for %d ms "
				    "(waiting for clock %d): a worker "
				    "hangs; raise --timeout if one "
				    "sixteenth of a clock takes that "
				    "long",
				    rt->o->timeout_ms, rt->next_apply);
		}
		/* idle: back off from 20 us to 200 us (many ranks share cores)
		 */
		idle_ns =
		    idle_ns ? (idle_ns < 200000 ? idle_ns * 2 : 200000) : 20000;
		struct timespec ts = { 0, idle_ns };
		nanosleep(&ts, NULL);
	}
	heartbeat(rt, frr_rt_clock_now(), 1);
	free(sel);
}

/* ---- one rank's job ------------------------------------------------------ */
static int workers_start(struct frr_rt *rt)
{
	for (int t = 0; t < rt->T; t++) {
		struct frr_worker *wk = &rt->wk[t];
		int err;

		wk->rt = rt;
		wk->local = t;
		wk->id = rt->rank * rt->T + t;
		for (int i = 0; i < FRR_RT_STAT_RING; i++)
			wk->rec[i].clock = -1;
		wk->sent_seq = calloc((size_t)rt->P, sizeof(uint64_t));
		wk->mbox_sent = calloc((size_t)rt->W, sizeof(uint64_t));
		wk->mbox_recv = calloc((size_t)rt->W, sizeof(uint64_t));
		if (!wk->sent_seq || !wk->mbox_sent || !wk->mbox_recv)
			return -ENOMEM;
		err = frr_tp_mr_alloc(rt->tp, rt->slot_max, FRR_TP_ACCESS_LOCAL,
				      &wk->stage);
		if (err)
			return err;
	}
	for (int t = 0; t < rt->T; t++) {
		int err = pthread_create(&rt->wk[t].thread, NULL,
					 frr_rt_worker_main, &rt->wk[t]);
		if (err)
			frr_rt_fatal(rt, "pthread_create failed: %s",
				     strerror(err));
	}
	return 0;
}

/* Test hook: every worker's last progress word, as this rank sees it, says
 * it finished the job's last clock with its whole list done. */
static int check_final_progress(struct frr_rt *rt)
{
	int last = frr_rt_stop_clock(rt) - 1, bad = 0;

	for (int v = 0; v < rt->W; v++) {
		struct frr_progress p = frr_rt_progress(rt, v);
		uint64_t n = rt->nitems[v] >> rt->prog_shift;

		if (p.clock != last || p.done != n || p.total != n) {
			frr_err(
			    "progress of worker %d seen on rank %d: clock %d "
			    "done %llu of %llu; expected clock %d, %llu of "
			    "%llu",
			    v, rt->rank, p.clock, (unsigned long long)p.done,
			    (unsigned long long)p.total, last,
			    (unsigned long long)n, (unsigned long long)n);
			bad = 1;
		}
	}
	return bad ? -EPROTO : 0;
}

static void print_summary(struct frr_rt *rt, double secs)
{
	const char *mode[] = { "bsp", "ssp", "async", "flexrr", "rr" };

	printf("flexrr: done mode=%s backend=%s procs=%d threads=%d "
	       "clocks=%d time_s=%.3f objective=%.9g%s%s\n",
	       mode[rt->job.mode],
	       frr_tp_backend_name(frr_tp_backend_of(rt->tp)), rt->P, rt->T,
	       frr_rt_stop_clock(rt), secs, rt->objective,
	       rt->metrics[0] ? " " : "", rt->metrics);
	fflush(stdout);
}

/*
 * Rank 0 creates the app first and tells the others how it went: bad app
 * options or a missing input file are reported once, by rank 0, not P
 * times; the others then exit quietly with the same failure.
 */
static int app_create(struct frr_rt *rt)
{
	const struct frr_run_opts *o = rt->o;
	int32_t st = 0, *all = calloc((size_t)rt->P, sizeof(int32_t));
	int err;

	if (!all)
		return -ENOMEM;
	if (rt->rank == 0) {
		st = rt->app->create(&rt->job, o->app_argc, o->app_argv,
				     &rt->app_state);
		if (st > 0)
			st = -EINVAL;
	}
	err = frr_oob_allgather(rt->oob, &st, sizeof(st), all, o->timeout_ms);
	if (!err && all[0] && rt->rank != 0) {
		frr_dbg("rank 0 could not create app %s (%d); exiting",
			rt->app->name, all[0]);
		err = all[0];
	} else if (!err) {
		err = st;
	}
	free(all);
	if (err || rt->rank == 0)
		return err;
	err =
	    rt->app->create(&rt->job, o->app_argc, o->app_argv, &rt->app_state);
	return err > 0 ? -EINVAL : err;
}

static int rt_init(struct frr_rt *rt, struct frr_oob *oob,
		   struct frr_run_opts *o)
{
	int err;

	rt->o = o;
	rt->oob = oob;
	rt->app = o->app;
	rt->rank = oob->rank;
	rt->P = oob->size;
	rt->T = o->threads;
	rt->W = rt->P * rt->T;
	rt->t0 = frr_rt_clock_now();
	rt->job = (struct frr_job_info){
		.rank = rt->rank,
		.nranks = rt->P,
		.threads = rt->T,
		.nworkers = rt->W,
		.mode = o->mode,
		.slack = o->slack,
		.seed = o->seed,
	};
	/* data-path flushes: a live peer answers in ms; a dead one must not
	 * hold the transport lock for long (see frr_rt_peer_fatal) */
	rt->flush_ms = o->dead_ms / 3 > 200 ? o->dead_ms / 3 : 200;
	rt->eff_slack =
	    o->mode == FRR_MODE_ASYNC ? FRR_RT_ASYNC_WINDOW : o->slack;
	atomic_init(&rt->end_clock, o->clocks);
	/* tests prove the staleness checker can fail by breaking SSP */
	rt->test_break_ssp = getenv("FLEXRR_TEST_BREAK_SSP") != NULL;
	{
		pthread_mutexattr_t ma;

		/* recursive: a fatal path may re-take it to send a notice */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&rt->tp_lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	frr_log_set_rank(rt->rank);
	if (o->rr_engaged) {
		rt->rr = &frr_rr_ops;
		rt->rr_reassign =
		    o->mode == FRR_MODE_FLEXRR || o->mode == FRR_MODE_RR;
	}
	rt->parts = calloc((size_t)rt->W, sizeof(*rt->parts));
	rt->nitems = calloc((size_t)rt->W, sizeof(uint64_t));
	rt->wk = calloc((size_t)rt->T, sizeof(*rt->wk));
	rt->hb_last = calloc((size_t)rt->P, sizeof(uint64_t));
	rt->hb_seen = calloc((size_t)rt->P, sizeof(double));
	if (!rt->parts || !rt->nitems || !rt->wk || !rt->hb_last ||
	    !rt->hb_seen)
		return -ENOMEM;
	err = app_create(rt);
	if (err)
		return err;
	rt->ntables = rt->app->tables(rt->app_state, rt->spec, FRR_MAX_TABLES);
	if (rt->ntables < 0 || rt->ntables > FRR_MAX_TABLES) {
		frr_err("app %s declared %d tables (at most %d)", rt->app->name,
			rt->ntables, FRR_MAX_TABLES);
		return -EINVAL;
	}
	for (int t = 0; t < rt->ntables; t++)
		if (!rt->spec[t].rows || !rt->spec[t].cols) {
			frr_err("app %s: table %d (%s) has %" PRIu64
				" rows x %u cols: both must be > 0",
				rt->app->name, t,
				rt->spec[t].name ? rt->spec[t].name : "?",
				rt->spec[t].rows, rt->spec[t].cols);
			return -EINVAL;
		}
	for (int t = 0; t < rt->T; t++) {
		int w = rt->rank * rt->T + t;

		err = part_load(rt, w);
		if (err)
			return err;
		if (rt->parts[w].n == 0) {
			frr_err("worker %d has no work items (%d workers in "
				"all): use fewer processes or threads (-n, "
				"-t) or more data",
				w, rt->W);
			return -EINVAL;
		}
	}
	if (rt->rr) {
		err = rt->rr->job_init(rt, &o->rr, &rt->rr_state);
		if (err)
			return err;
	}
	err = layout(rt);
	if (!err)
		err = check_memory(rt);
	if (!err)
		err = tp_setup(rt);
	/* same decision on every rank: it is collective */
	if (!err && rt->rr_reassign && rt->app->item_state_size)
		err = state_setup(rt);
	if (err)
		return err;
	{
		uint64_t mx = 0;

		for (int w = 0; w < rt->W; w++)
			if (rt->nitems[w] > mx)
				mx = rt->nitems[w];
		while ((mx >> rt->prog_shift) > FRR_PROG_FIELD_MAX)
			rt->prog_shift++;
	}
	rt->consumed = calloc((size_t)rt->W * rt->K, sizeof(uint64_t));
	rt->scratch = calloc(3 * (size_t)rt->W, sizeof(int));
	if (!rt->consumed || !rt->scratch)
		return -ENOMEM;
	return tables_init(rt);
}

static void rt_fini(struct frr_rt *rt)
{
	if (rt->rr && rt->rr_state)
		rt->rr->job_fini(rt, rt->rr_state);
	tp_teardown(rt);
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		free(rt->master[t]);
		free(rt->accum[t]);
	}
	for (int w = 0; rt->parts && w < rt->W; w++) {
		free(rt->parts[w].state_off);
		free(rt->parts[w].state);
	}
	for (int t = 0; rt->wk && t < rt->T; t++) {
		free(rt->wk[t].sent_seq);
		free(rt->wk[t].mbox_sent);
		free(rt->wk[t].mbox_recv);
	}
	if (rt->app_state)
		rt->app->destroy(rt->app_state);
	if (rt->metrics_f)
		fclose(rt->metrics_f);
	free(rt->parts);
	free(rt->nitems);
	free(rt->wk);
	free(rt->hb_last);
	free(rt->hb_seen);
	free(rt->consumed);
	free(rt->scratch);
	free(rt->shard_rows);
	free(rt->repl_off);
	free(rt->pay_off);
	free(rt->slot_bytes);
	pthread_mutex_destroy(&rt->tp_lock);
}

int frr_rt_job_run(struct frr_oob *oob, struct frr_run_opts *o)
{
	struct frr_rt rt_, *rt = &rt_;
	int err;
	double t_start;

	memset(rt, 0, sizeof(*rt));
	err = rt_init(rt, oob, o);
	if (err)
		goto out;
	if (rt->rank == 0 && o->metrics_path) {
		rt->metrics_f = fopen(o->metrics_path, "w");
		if (!rt->metrics_f) {
			frr_err("cannot write the metrics file %s: %s",
				o->metrics_path, strerror(errno));
			err = -errno;
			goto out;
		}
		/* FILE.json / FILE.jsonl: one JSON object per line */
		rt->metrics_json = strstr(o->metrics_path, ".json") != NULL;
		if (!rt->metrics_json)
			fprintf(rt->metrics_f,
				"clock,worker,rank,compute_s,wait_s,"
				"flush_s,updates,bytes,stale_reads,"
				"min_data_clock,rr_offers,rr_accepted,"
				"rr_cancelled,rr_items_reassigned\n");
	}
	if (o->load_path) {
		struct frr_eval_ctx ec = { .rt = rt };

		/* every rank overwrites the rows it owns, before the push */
		err = rt->app->load
			  ? rt->app->load(rt->app_state, &ec, o->load_path)
			  : -EOPNOTSUPP;
		if (err) {
			frr_err(
			    "app %s: loading the model from %s failed (%d)%s",
			    rt->app->name, o->load_path, err,
			    rt->app->load ? "" : ": the app cannot load");
			goto out;
		}
	}
	/* initial rows everywhere before anyone reads */
	for (int t = 0; t < rt->ntables; t++)
		push_rows(rt, t, 0, rt->shard_rows[t * rt->P + rt->rank]);
	flush_all(rt, o->timeout_ms);
	err = frr_oob_barrier(oob, o->timeout_ms);
	if (err) {
		frr_err("the start-up barrier failed (%d): another rank "
			"failed to start, see its message",
			err);
		goto out;
	}
	t_start = frr_rt_clock_now();
	rt->last_global_t = t_start;
	err = workers_start(rt);
	if (err)
		goto out;
	server_loop(rt);
	for (int t = 0; t < rt->T; t++) {
		pthread_join(rt->wk[t].thread, NULL);
		if (rt->wk[t].rc && !err)
			err = rt->wk[t].rc;
	}
	if (!err && rt->rank == 0) {
		if (o->save_path && rt->app->save) {
			struct frr_eval_ctx ec = { .rt = rt };

			err = rt->app->save(rt->app_state, &ec, o->save_path);
			if (err)
				frr_err("app %s: saving the model to %s failed "
					"(%d)",
					rt->app->name, o->save_path, err);
		}
		if (rt->metrics_f) {
			fclose(rt->metrics_f);
			rt->metrics_f = NULL;
		}
		if (!err)
			print_summary(rt, frr_rt_clock_now() - t_start);
	}
	flush_all(rt, o->timeout_ms);
	if (!err)
		err = frr_oob_barrier(oob, o->timeout_ms);
	/* every peer flushed before the barrier: all final words are in */
	if (!err && getenv("FLEXRR_TEST_CHECK_PROGRESS"))
		err = check_final_progress(rt);
out:
	rt_fini(rt);
	return err;
}
