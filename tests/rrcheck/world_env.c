// SPDX-License-Identifier: MIT
/*
 * The env of the engine in the rr world (world.h): every call that touches
 * shared state announces its step (objects read and written) and gives
 * control back to the scheduler before it runs.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "world_int.h"

static int rank_of(const struct rrw *x, int w)
{
	return w / x->cfg.T;
}

/* ---- steps of a worker --------------------------------------------------- */

/* Announce the next step and give control back; returns when it runs. */
static int moved_since_nap(const struct rrw_wk *k)
{
	return k->v.phase != (enum rrw_phase)k->nap_phase ||
	       k->rw.state != (enum rr_state)k->nap_state ||
	       k->v.clock != k->nap_clock;
}

void rrw_yield(struct rrw_wk *k, enum rrw_op op, struct rrc_acc a)
{
	/* coverage: help queued that the help capacity keeps from starting */
	if (k->rw.ntasks && rr_ready_task(&k->rw, INT_MAX) < 0)
		k->x->flags |= 1u << RRW_P_CAPACITY;
	k->moved |= moved_since_nap(k);
	k->op = op;
	k->acc = a;
	rrc_coro_yield(&k->co);
}

/* After the step's shared access: versions of what it wrote, and what it
 * read or wrote is what a later nap waits on. */
void rrw_after_op(struct rrw_wk *k)
{
	struct rrw *x = k->x;

	for (uint64_t m = k->acc.wr; m; m &= m - 1)
		x->ver[__builtin_ctzll(m)]++;
	for (uint64_t m = k->acc.rd | k->acc.wr; m; m &= m - 1) {
		int o = __builtin_ctzll(m);

		k->seen |= rrw_bit(o);
		k->seen_ver[o] = x->ver[o];
	}
}

int rrw_changed(const struct rrw_wk *k)
{
	for (uint64_t m = k->seen; m; m &= m - 1) {
		int o = __builtin_ctzll(m);

		if (k->x->ver[o] != k->seen_ver[o])
			return 1;
	}
	return 0;
}

void rrw_process_item(struct rrw *x, int runner, int owner, int c, uint64_t i)
{
	int r = rank_of(x, runner);

	x->count[owner][c][i]++;
	x->by[owner][c][i] = (int8_t)runner;
	if (x->state[r][owner][i] != (uint64_t)c)
		rrw_failf(x,
			  "item state: worker %d processed item %llu of worker "
			  "%d clock %d and found state %llu (want %d)",
			  runner, (unsigned long long)i, owner, c,
			  (unsigned long long)x->state[r][owner][i], c);
	x->state[r][owner][i] = (uint64_t)c + 1;
	if (rrw_min_fin(x) < c - x->cfg.slack)
		rrw_failf(x,
			  "SSP: worker %d processed item %llu of worker %d "
			  "clock %d while clock %d is not finished everywhere",
			  runner, (unsigned long long)i, owner, c,
			  c - x->cfg.slack - 1);
}

/* ---- the env of the engine ------------------------------------------------
 */

static int has_open_offer(const struct rr_worker *rw, int helper)
{
	for (int i = 0; i < rw->noffers; i++)
		if (rw->offers[i].helper == helper &&
		    (rw->offers[i].state == RR_OFFER_SENT ||
		     rw->offers[i].state == RR_OFFER_CANCEL_SENT))
			return 1;
	return 0;
}

static int x_send(void *env, int from, int to, const struct frr_rr_msg *m)
{
	struct rrw *x = env;
	struct rrw_wk *k = &x->wk[from];
	int c = to >= 0 && to < x->W ? x->chan_of[from][to] : -1;
	struct rrw_queue *q;

	if (c < 0) {
		rrw_failf(x, "worker %d sent to worker %d: no such peer", from,
			  to);
		return -EINVAL;
	}
	q = &x->ch[c].q;
	if (!x->cfg.channels) {
		rrw_yield(k, OP_SEND,
			  (struct rrc_acc){ 0, rrw_bit(rrw_obj_vis(x, to)) });
		q = &x->vis[to];
	}
	if (q->n == RRW_QCAP) {
		rrw_failf(x, "model: channel %d->%d overflows", from, to);
		return -ENOBUFS;
	}
	if (x->cfg.mutate == RRW_MUT_LOSE_CANCELLED &&
	    m->type == RR_MSG_CANCELLED && !x->mutated) {
		x->mutated = 1;
		if (!x->cfg.channels)
			rrw_after_op(k);
		return 0;
	}
	q->m[(q->head + q->n) % RRW_QCAP] = *m;
	q->m[(q->head + q->n) % RRW_QCAP].from = from;
	q->cause[(q->head + q->n) % RRW_QCAP] = x->cur;
	q->n++;
	if (m->type == RR_MSG_DO_THIS) {
		k->v.dothis_sent++;
		if (has_open_offer(&x->wk[to].rw, from))
			x->flags |= 1u << RRW_P_CROSSED_OFFERS;
	} else if (m->type == RR_MSG_BEGUN) {
		k->v.begun_sent++;
	} else if (m->type == RR_MSG_CANCEL) {
		k->v.cancel_sent++;
	}
	if (!x->cfg.channels)
		rrw_after_op(k);
	return 0;
}

static int x_recv(void *env, int w, struct frr_rr_msg *m, int timeout_ms)
{
	struct rrw *x = env;
	struct rrw_wk *k = &x->wk[w];
	struct rrw_queue *q = &x->vis[w];

	(void)timeout_ms; /* time is frozen: nothing arrives while we wait */
	rrw_yield(k, OP_RECV,
		  (struct rrc_acc){ 0, rrw_bit(rrw_obj_vis(x, w)) });
	if (!q->n) {
		rrw_after_op(k);
		return 0;
	}
	*m = q->m[q->head];
	q->head = (q->head + 1) % RRW_QCAP;
	q->n--;
	if (m->type == RR_MSG_BEGUN)
		for (int i = 0; i < k->rw.noffers; i++)
			if (k->rw.offers[i].id == m->w[0] &&
			    k->rw.offers[i].state == RR_OFFER_CANCEL_SENT)
				x->flags |= 1u << RRW_P_CROSSING;
	rrw_after_op(k);
	return 1;
}

static struct frr_progress x_progress(void *env, int v)
{
	struct rrw *x = env;
	struct rrw_wk *k = &x->wk[x->running]; /* the caller */
	struct frr_progress p;
	int last = x->cfg.clocks - 1;

	if (k->v.phase != RRW_EXIT) {
		rrw_yield(k, OP_PROG,
			  (struct rrc_acc){ rrw_bit(rrw_obj_prog(x, v)), 0 });
		p = frr_prog_unpack(x->prog[v]);
		rrw_after_op(k);
		return p;
	}
	/* After its last clock the engine reads a helpee's word only to see
	 * whether it finished (rr_worker_exit): the reader is told just that,
	 * so its polls do not race with every word the helpee publishes. */
	rrw_yield(k, OP_PROG, (struct rrc_acc){ rrw_bit(OBJ_DONE(x, v)), 0 });
	p = frr_prog_unpack(x->prog[v]);
	if (p.clock != last || p.done != p.total || p.total != x->cfg.n[v])
		p = (struct frr_progress){ last, 0, x->cfg.n[v] };
	rrw_after_op(k);
	return p;
}

int rrw_is_final(const struct rrw *x, int v, int clock,
		 const struct frr_rr_list *l)
{
	return clock == x->cfg.clocks - 1 && l->next == l->end &&
	       l->end == x->cfg.n[v];
}

int rrw_publish(void *env, int w, int clock, const struct frr_rr_list *list)
{
	struct rrw *x = env;
	struct rrw_wk *k = &x->wk[w];
	uint64_t wr = rrw_bit(rrw_obj_prog(x, w));

	if (rrw_is_final(x, w, clock, list))
		wr |= rrw_bit(OBJ_DONE(x, w));
	rrw_yield(k, OP_PUB, (struct rrc_acc){ 0, wr });
	x->prog[w] = frr_prog_pack(clock, list->next, list->end);
	rrw_after_op(k);
	return 0;
}

static int x_run_range(void *env, int helper, int owner, int clock, uint64_t a,
		       uint64_t b)
{
	struct rrw *x = env;
	struct rrw_wk *k = &x->wk[helper];
	int hr = rank_of(x, helper), orank = rank_of(x, owner);

	rrw_yield(k, OP_RUN, (struct rrc_acc){ 0, rrw_items(x, owner, a, b) });
	if (clock > k->ssp_passed)
		rrw_failf(x,
			  "SSP: worker %d ran items [%llu, %llu) of worker %d "
			  "clock %d but has only passed the SSP wait of clock "
			  "%d",
			  helper, (unsigned long long)a, (unsigned long long)b,
			  owner, clock, k->ssp_passed);
	for (uint64_t i = a; i < b; i++)
		rrw_process_item(x, helper, owner, clock, i);
	if (x->cfg.mutate == RRW_MUT_HELP_TWICE && helper != owner)
		x->count[owner][clock][a]++;
	if (hr != orank) /* write-back to the owner's copy */
		for (uint64_t i = a; i < b; i++)
			x->state[orank][owner][i] = x->state[hr][owner][i];
	if (helper == owner)
		x->flags |= 1u << RRW_P_RECLAIM_RUN;
	else if (k->v.phase == RRW_EXIT)
		x->flags |= 1u << RRW_P_HELP_AT_EXIT;
	else if (clock < k->v.clock)
		x->flags |= 1u << RRW_P_HELP_AHEAD;
	if (helper != owner && k->rw.state == RR_ST_CANCEL_WAIT)
		x->flags |= 1u << RRW_P_HELP_IN_CANCEL_WAIT;
	rrw_after_op(k);
	return 0;
}

static int x_state_push(void *env, int owner, int helper, uint64_t a,
			uint64_t b)
{
	struct rrw *x = env;
	struct rrw_wk *k = &x->wk[owner];
	int hr = rank_of(x, helper), orank = rank_of(x, owner);

	rrw_yield(k, OP_PUSH, (struct rrc_acc){ 0, rrw_items(x, owner, a, b) });
	for (uint64_t i = a; i < b; i++)
		x->state[hr][owner][i] = x->state[orank][owner][i];
	rrw_after_op(k);
	return 0;
}

static uint64_t x_nitems(void *env, int v)
{
	return ((struct rrw *)env)->cfg.n[v];
}

static uint64_t x_now(void *env)
{
	(void)env;
	return 0; /* frozen: no deadline ever expires */
}

/* Nothing to do: block until an object read since the last nap changes. */
void rrw_nap(void *env, int w, long us)
{
	struct rrw *x = env;
	struct rrw_wk *k = &x->wk[w];

	(void)us;
	rrw_check_idle_help(k);
	k->nap_free = k->moved || moved_since_nap(k);
	k->moved = 0;
	k->nap_phase = (int)k->v.phase;
	k->nap_state = (int)k->rw.state;
	k->nap_clock = k->v.clock;
	k->v.blocked = !k->nap_free;
	k->op = OP_NAP;
	k->acc = (struct rrc_acc){ k->nap_free ? 0 : k->seen, 0 };
	rrc_coro_yield(&k->co);
	k->v.blocked = 0;
	k->seen = 0;
}

const struct rr_env_ops rrw_env_ops = {
	.send = x_send,
	.recv = x_recv,
	.progress = x_progress,
	.publish = rrw_publish,
	.run_range = x_run_range,
	.state_push = x_state_push,
	.nitems = x_nitems,
	.now = x_now,
	.nap = rrw_nap,
};

void rrw_wait_until(struct rrw *x, int w, int (*pred)(void *arg), void *arg)
{
	struct rrw_wk *k = &x->wk[w];

	if (pred(arg))
		return;
	k->gate = pred;
	k->gate_arg = arg;
	k->v.blocked = 1;
	rrw_yield(k, OP_GATE, (struct rrc_acc){ ~0ull, 0 });
	k->v.blocked = 0;
	k->gate = NULL;
}

void rrw_world_hook(void *arg, int w, enum rr_hook_point pt,
		    const struct frr_rr_msg *m)
{
	struct rrw *x = arg;

	if (x->cfg.hook)
		x->cfg.hook(x->cfg.hook_arg, w, pt, m);
}
