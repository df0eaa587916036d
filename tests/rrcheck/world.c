// SPDX-License-Identifier: MIT
/*
 * The rr world (world.h): the env of the engine, the workers' driver and
 * the rrc_sys callbacks.  End-of-run checks are in world_check.c.
 *
 * Objects (bits of struct rrc_acc): VIS(r) the delivered messages of r,
 * PROG(v) v's progress word, DONE(v) whether that word says v finished its
 * last clock, FIN the finished clocks (SSP), EVAL the evaluated clocks,
 * ITEM(owner, i) an item's processing count and state.
 * A send touches no object: it commutes with every step but the delivery of
 * that message, which names the send as its cause.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world_int.h"

const char *const rrw_phase_names[RRW_NPHASES] = {
	[RRW_BEGIN] = "clock_begin",	[RRW_SSP] = "SSP wait",
	[RRW_ITEMS] = "own items",	[RRW_OWN_DONE] = "own_list_done",
	[RRW_EVAL] = "evaluation wait", [RRW_END] = "clock end",
	[RRW_EXIT] = "worker_exit",	[RRW_FINISHED] = "finished",
};

int rrw_obj_vis(const struct rrw *x, int r)
{
	(void)x;
	return r;
}

int rrw_obj_prog(const struct rrw *x, int v)
{
	return x->W + v;
}

int rrw_obj_item(const struct rrw *x, int owner, uint64_t i)
{
	/* more items than bits: several items share one (more conflicts,
	 * still sound) */
	return OBJ_FIRST_ITEM(x) + (int)(((uint64_t)x->item_base[owner] + i) %
					 (uint64_t)x->item_bits);
}

int rrw_min_fin(const struct rrw *x)
{
	int m = x->cfg.clocks;

	for (int v = 0; v < x->W; v++)
		if (x->fin[v] < m)
			m = x->fin[v];
	return m;
}

void rrw_failf(struct rrw *x, const char *fmt, ...)
{
	va_list ap;

	if (x->failed)
		return;
	x->failed = 1;
	va_start(ap, fmt);
	vsnprintf(x->fail, sizeof(x->fail), fmt, ap);
	va_end(ap);
}

/* ---- the driver: runtime/rt_worker.c's loop ------------------------------ */

static int driver_step(struct rrw_wk *k, enum rrw_op op, struct rrc_acc a)
{
	rrw_yield(k, op, a);
	rrw_after_op(k);
	return 0;
}

/* wait (idle, nap) until *have >= need; *have read by a step on obj */
static int wait_for(struct rrw_wk *k, int c, const int *have, int need, int obj,
		    enum rrw_op op)
{
	struct rrw *x = k->x;
	int err;

	for (;;) {
		driver_step(k, op, (struct rrc_acc){ rrw_bit(obj), 0 });
		if ((have ? *have : rrw_min_fin(x)) >= need)
			return 0;
		err = rr_idle(&k->rw, c);
		if (err)
			return err;
		rrw_nap(x, k->w, 100);
	}
}

static int own_items(struct rrw_wk *k, int c)
{
	struct rrw *x = k->x;
	struct frr_rr_list *l = &k->v.list;
	int err, w = k->w;

	for (;;) {
		k->v.phase = RRW_ITEMS;
		while (l->next < l->end) {
			struct frr_rr_list after = { l->next + 1, l->end,
						     l->n };
			uint64_t wr = rrw_bit(rrw_obj_item(x, w, l->next)) |
				      rrw_bit(rrw_obj_prog(x, w));

			/* the item, then its progress word (the runtime
			 * publishes every item for lists under 32) */
			if (rrw_is_final(x, w, c, &after))
				wr |= rrw_bit(OBJ_DONE(x, w));
			k->v.at_item = 1;
			driver_step(k, OP_ITEM, (struct rrc_acc){ 0, wr });
			k->v.at_item = 0;
			rrw_process_item(x, w, w, c, l->next);
			k->v.items_done++;
			l->next++;
			x->prog[w] = frr_prog_pack(c, l->next, l->end);
			err = rr_progress_check(&k->rw, c, l);
			if (err)
				return err;
		}
		k->v.phase = RRW_OWN_DONE;
		err = rr_own_list_done(&k->rw, c, l);
		if (err < 0)
			return err;
		if (l->next >= l->end)
			return 0;
		x->flags |= 1u << RRW_P_RECLAIM_EXTEND;
	}
}

static int drive_clock(struct rrw_wk *k, int c)
{
	struct rrw *x = k->x;
	uint64_t n = x->cfg.n[k->w];
	int err;

	k->v.clock = c;
	k->v.phase = RRW_BEGIN;
	err = rr_clock_begin(&k->rw, c);
	if (err)
		return err;
	k->v.phase = RRW_SSP;
	err = wait_for(k, c, NULL, c - x->cfg.slack, OBJ_FIN(x), OP_FIN_READ);
	if (err)
		return err;
	k->ssp_passed = c;
	k->v.list = (struct frr_rr_list){ 0, n, n };
	rrw_publish(x, k->w, c, &k->v.list);
	err = own_items(k, c);
	if (err)
		return err;
	if (x->cfg.eval) {
		k->v.phase = RRW_EVAL;
		err = wait_for(k, c, &x->eval_done, c - x->cfg.slack,
			       OBJ_EVAL(x), OP_EVAL_READ);
		if (err)
			return err;
	}
	k->v.phase = RRW_END;
	k->v.list.next = k->v.list.end = n;
	rrw_publish(x, k->w, c, &k->v.list);
	/* every item of ours done before the clock counts as applied */
	driver_step(
	    k, OP_CLOCK_END,
	    (struct rrc_acc){ rrw_items(x, k->w, 0, n), rrw_bit(OBJ_FIN(x)) });
	for (uint64_t i = 0; i < n; i++)
		if (x->count[k->w][c][i] != 1)
			rrw_failf(x,
				  "worker %d ended clock %d with item %llu "
				  "processed %d times",
				  k->w, c, (unsigned long long)i,
				  x->count[k->w][c][i]);
	x->fin[k->w] = c + 1;
	return rr_clock_end(&k->rw, c);
}

static void worker_main(void *arg)
{
	struct rrw_wk *k = arg;
	int err = 0;

	for (int c = 0; c < k->x->cfg.clocks && !err; c++)
		err = drive_clock(k, c);
	if (!err) {
		k->v.phase = RRW_EXIT;
		err = rr_worker_exit(&k->rw, k->x->cfg.clocks - 1);
	}
	k->rc = err;
	k->v.phase = RRW_FINISHED;
	k->op = OP_NONE;
}

/* ---- rrc_sys ------------------------------------------------------------- */

static void sys_reset(void *arg)
{
	struct rrw *x = arg;

	memset(x->vis, 0, sizeof(x->vis));
	for (int c = 0; c < x->nch; c++)
		memset(&x->ch[c].q, 0, sizeof(x->ch[c].q));
	memset(x->prog, 0, sizeof(x->prog));
	memset(x->fin, 0, sizeof(x->fin));
	memset(x->ver, 0, sizeof(x->ver));
	memset(x->count, 0, sizeof(x->count));
	memset(x->by, 0xff, sizeof(x->by));
	memset(x->state, 0, sizeof(x->state));
	x->eval_done = 0;
	x->mutated = 0;
	memset(x->fp, 0, sizeof(x->fp));
	x->flags = 0;
	x->failed = 0;
	x->fail[0] = '\0';
	x->cur = -1;
	for (int w = 0; w < x->W; w++) {
		struct rrw_wk *k = &x->wk[w];

		if (k->rw_ok)
			rr_worker_fini(&k->rw);
		k->rw_ok = rr_worker_init(&k->rw, &x->rcfg, &rrw_env_ops, x, w,
					  NULL) == 0;
		if (!k->rw_ok)
			rrw_failf(x, "rr_worker_init failed");
		memset(&k->v, 0, sizeof(k->v));
		k->v.rw = &k->rw;
		k->op = OP_NONE;
		k->seen = 0;
		k->gate = NULL;
		k->moved = 1;
		k->ssp_passed = -1;
		k->rc = 0;
		rrc_coro_start(&k->co, worker_main, k);
	}
	/* up to each worker's first step (code before it is local) */
	for (int w = 0; w < x->W && !x->failed; w++) {
		x->running = w;
		rrc_coro_resume(&x->wk[w].co);
	}
}

static int sys_enabled(void *arg, int t)
{
	struct rrw *x = arg;

	if (x->failed)
		return 0;
	if (t < x->W) {
		const struct rrw_wk *k = &x->wk[t];

		if (k->op == OP_NAP)
			return k->nap_free || rrw_changed(k);
		if (k->op == OP_GATE)
			return k->gate(k->gate_arg);
		return k->op != OP_NONE;
	}
	if (t < x->W + x->nch)
		return x->ch[t - x->W].q.n > 0;
	return x->eval_done < x->cfg.clocks && rrw_min_fin(x) > x->eval_done;
}

static int sys_alive(void *arg, int t)
{
	struct rrw *x = arg;

	if (t < x->W)
		return x->wk[t].op != OP_NONE;
	if (t < x->W + x->nch)
		return x->ch[t - x->W].q.n > 0;
	return x->eval_done < x->cfg.clocks;
}

static struct rrc_acc sys_pending(void *arg, int t, int *cause)
{
	struct rrw *x = arg;

	*cause = -1;
	if (t < x->W)
		return x->wk[t].acc;
	if (t < x->W + x->nch) {
		const struct rrw_chan *ch = &x->ch[t - x->W];

		*cause = ch->q.cause[ch->q.head];
		return (struct rrc_acc){ 0, rrw_bit(rrw_obj_vis(x, ch->to)) };
	}
	return (struct rrc_acc){ rrw_bit(OBJ_FIN(x)), rrw_bit(OBJ_EVAL(x)) };
}

static void sys_step(void *arg, int t, int index)
{
	struct rrw *x = arg;
	int cause;
	struct rrc_acc a = sys_pending(arg, t, &cause);
	uint64_t h = x->fp[t] ^ 0x9e3779b97f4a7c15ull;

	/* what this step sees: the version of each object it touches */
	for (uint64_t m = a.rd | a.wr; m; m &= m - 1) {
		int o = __builtin_ctzll(m);

		h = (h ^ (uint64_t)o) * 0x100000001b3ull;
		h = (h ^ x->ver[o]) * 0x100000001b3ull;
	}
	x->fp[t] = h;
	x->cur = index;
	if (x->verbose) {
		printf("%3d: t%-2d", index, t);
		if (t < x->W)
			printf(" op %d %s/%s", x->wk[t].op,
			       rrw_phase_names[x->wk[t].v.phase],
			       rr_state_names[x->wk[t].rw.state]);
		printf(" rd %llx wr %llx cause %d\n", (unsigned long long)a.rd,
		       (unsigned long long)a.wr, cause);
	}
	if (t < x->W) {
		x->running = t;
		rrc_coro_resume(&x->wk[t].co);
	} else if (t < x->W + x->nch) {
		struct rrw_chan *ch = &x->ch[t - x->W];
		struct rrw_queue *d = &x->vis[ch->to];

		d->m[(d->head + d->n) % RRW_QCAP] = ch->q.m[ch->q.head];
		d->n++;
		ch->q.head = (ch->q.head + 1) % RRW_QCAP;
		ch->q.n--;
		x->ver[rrw_obj_vis(x, ch->to)]++;
	} else {
		x->eval_done++;
		x->ver[OBJ_EVAL(x)]++;
	}
}

int rrw_create(const struct rrw_cfg *cfg, struct rrw **out)
{
	struct rrw *x;
	int W = cfg->P * cfg->T, items = 0, err = 0;

	if (W < 2 || W > RRW_MAXW || cfg->clocks < 1 || cfg->clocks > RRW_MAXC)
		return -EINVAL;
	for (int w = 0; w < W; w++)
		if (!cfg->n[w] || cfg->n[w] > RRW_MAXN)
			return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->cfg = *cfg;
	x->W = W;
	for (int w = 0; w < W; w++) {
		x->item_base[w] = items;
		items += (int)cfg->n[w];
	}
	x->item_bits = 64 - OBJ_FIRST_ITEM(x);
	x->rcfg = (struct rr_config){
		.P = cfg->P,
		.T = cfg->T,
		.W = W,
		.group_size = cfg->group,
		.threshold = cfg->threshold,
		.min_share = cfg->min_share,
		.max_helpers = cfg->max_helpers ? cfg->max_helpers : cfg->group,
		.timeout_ms = 1000, /* never expires: time is frozen */
		.slack = cfg->slack,
		.max_unapplied = cfg->max_unapplied,
		.remote_ok = 1,
		.hook = rrw_world_hook,
		.hook_arg = x,
	};
	for (int s = 0; s < W; s++)
		for (int r = 0; r < W; r++) {
			x->chan_of[s][r] = s == r ? -1 : x->nch;
			if (s != r)
				x->ch[x->nch++] =
				    (struct rrw_chan){ .from = s, .to = r };
		}
	if (!cfg->channels) /* the pairs stay (chan_of), not as threads */
		x->nch = 0;
	x->eval_tid = cfg->eval ? W + x->nch : -1;
	for (int w = 0; w < W && !err; w++) {
		x->wk[w].x = x;
		x->wk[w].w = w;
		err = rrc_coro_init(&x->wk[w].co, 0);
	}
	x->sys = (struct rrc_sys){
		.arg = x,
		.nthreads = W + x->nch + (cfg->eval ? 1 : 0),
		.reset = sys_reset,
		.enabled = sys_enabled,
		.alive = sys_alive,
		.pending = sys_pending,
		.step = sys_step,
		.end = rrw_check_end,
	};
	if (err) {
		rrw_destroy(x);
		return err;
	}
	*out = x;
	return 0;
}

void rrw_destroy(struct rrw *x)
{
	if (!x)
		return;
	for (int w = 0; w < x->W; w++) {
		if (x->wk[w].rw_ok)
			rr_worker_fini(&x->wk[w].rw);
		rrc_coro_fini(&x->wk[w].co);
	}
	free(x->ends.h);
	free(x->traces.h);
	free(x);
}

const struct rrc_sys *rrw_sys(struct rrw *x)
{
	return &x->sys;
}

void rrw_set_verbose(struct rrw *x, int on)
{
	x->verbose = on;
}

uint64_t rrw_last_trace(const struct rrw *x)
{
	return x->last_trace;
}

int rrw_has_trace(const struct rrw *x, uint64_t h);

int rrw_nworkers(const struct rrw *x)
{
	return x->W;
}

const struct rrw_view *rrw_view(const struct rrw *x, int w)
{
	return &x->wk[w].v;
}

const char *rrw_failure(const struct rrw *x)
{
	return x->fail;
}

const struct rrw_cover *rrw_cover(const struct rrw *x)
{
	return &x->cover;
}
