// SPDX-License-Identifier: MIT
/*
 * --mode lb-bsp: BSP whose lists are balanced up front (LB-BSP, Chen et al.,
 * SoCC 2020), through the worker loop's ops table (rr_hooks.h), beside rr's.
 *
 * A worker can only run items whose input its rank holds: its own partition
 * and the replicas of its helpees (the rr helper groups, loaded at job_init
 * as rr loads them).  At clock c's start (after the BSP wait, so every
 * worker's final batch of c - 1 is drained on this rank) every worker reads
 * every worker's per-item time of clocks c - H .. c - 1, which the final
 * batches carry and each rank's server keeps (table/inbox.c lb_record), and
 * computes the same plan (straggler/ frr_lb_shares and frr_lb_plan, which
 * the simulator runs too): shares of the clock's items proportional to the
 * predicted speeds, then, donor by donor in id order, a worker more than
 * FRR_LB_GIVE_ABOVE above its share gives the tail of its list to the
 * helpers of its group: water-filling to the time by which the donor and
 * its group's helpers, each from its planned load at its predicted speed,
 * do the donor's items together.  A donor
 * runs [0, end) and tells the shards to expect
 * one batch more per planned range; a helper runs its ranges after its own
 * list (frr_rt_run_range, one batch each).  So every item runs once per
 * clock, and what is moved depends only on the words every rank has: the
 * plan is the same everywhere, though timings make it differ run to run.
 * The owner keeps one item at least.
 *
 * Item state (lda's topic assignments) travels with a range given to a
 * helper on another rank, as in rr: the donor writes the range's states
 * into the helper's rank's copy as it plans the clock, before it publishes
 * its progress word for the clock, which the helpers of its group read
 * (frr_rt_progress_reader): a helper runs the range once that word shows
 * the clock, so the states it reads are the donor's.  frr_rt_run_range
 * writes them back before the range's batch leaves, and the owner's next
 * clock waits for that batch (BSP).  Helpers on the donor's rank share its
 * copy.  So a checkpoint copies a worker's states of clock C once every
 * shard applied C (items_done_late), not before its batch leaves, and
 * every helper, on the donor's rank too, waits for the donor's word of
 * C + 1 before it runs a range of C + 1: the copy is done by then.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "rr_hooks.h"
#include "rr_proto.h"
#include "straggler.h"

/* One worker thread's scratch and this clock's plan (its thread only). */
struct lb_thread {
	double *tsum, *speed;	    /* W */
	uint64_t *share, *n, *load; /* n: lists; load: planned this clock */
	struct frr_lb_gift *gifts; /* the clock's ranges moved, at most W * g */
	int ngifts, clock;
} __attribute__((aligned(64)));

struct lb_job {
	int P, T, W, rank, g, H;
	int *grp, *ng;	      /* worker v's helpers: grp[v * g ..], ng[v] */
	struct lb_thread *th; /* T */
};

static void job_free(struct lb_job *j)
{
	for (int l = 0; j->th && l < j->T; l++) {
		free(j->th[l].tsum);
		free(j->th[l].share);
		free(j->th[l].gifts);
	}
	free(j->th);
	free(j->grp);
	free(j);
}

/* With item state: a worker's helpers on other ranks read its progress
 * word, which says its states of the clock's ranges were pushed. */
static int state_readers(struct frr_rt *rt, const struct lb_job *j)
{
	int err = 0;

	for (int v = 0; v < j->W && !err; v++)
		for (int i = 0; i < j->ng[v] && !err; i++)
			err = frr_rt_progress_reader(
			    rt, v, j->grp[(size_t)v * (size_t)j->g + i] / j->T);
	return err;
}

static int lb_job_init(struct frr_rt *rt, const struct frr_rr_opts *opts,
		       void **state)
{
	const struct frr_rt_shape *s = frr_rt_shape(rt);
	struct lb_job *j;
	int err;

	/* a checkpoint copies an owner's item states once its helpers'
	 * tails of the clock are back: after the clock, not before its
	 * batch (job/checkpoint.c) */
	if (rt->app->item_state_size)
		rt->ws->items_done_late = 1;
	/* as rr refuses it (rr.c check_opts); it was clamped silently */
	if (opts->group_size > RR_MAX_GROUP) {
		frr_err("--rr-group %d: at most %d helpers per worker",
			opts->group_size, RR_MAX_GROUP);
		return -EINVAL;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->P = s->nranks;
	j->T = s->threads;
	j->W = s->nworkers;
	j->rank = s->rank;
	j->H = rt->lb_history;
	/* rr's default, at most RR_MAX_GROUP (refused above) */
	j->g = rr_config_from(opts, j->P, j->T, 0, 0).group_size;
	err = -ENOMEM;
	j->th = calloc((size_t)j->T, sizeof(*j->th));
	j->grp = malloc((size_t)j->W * (size_t)(j->g + 1) * sizeof(int));
	if (!j->th || !j->grp)
		goto fail;
	j->ng = j->grp + (size_t)j->W * (size_t)j->g;
	rr_helper_groups(j->P, j->T, j->g, j->grp, j->ng);
	for (int l = 0; l < j->T; l++) {
		struct lb_thread *t = &j->th[l];

		t->tsum = malloc(2 * (size_t)j->W * sizeof(double));
		t->share = malloc(3 * (size_t)j->W * sizeof(uint64_t));
		t->gifts =
		    malloc((size_t)j->W * (size_t)j->g * sizeof(*t->gifts));
		if (!t->tsum || !t->share || !t->gifts)
			goto fail;
		t->speed = t->tsum + j->W;
		t->n = t->share + j->W;
		t->load = t->n + j->W;
		t->clock = -1;
	}
	err = rr_load_replicas(rt, j->g, "lb-bsp");
	if (!err && rt->app->item_state_size)
		err = state_readers(rt, j);
	if (err)
		goto fail;
	*state = j;
	return 0;
fail:
	if (err == -ENOMEM)
		frr_err("lb-bsp: out of memory for the plans of %d workers",
			j->W);
	job_free(j);
	return err;
}

static void lb_job_fini(struct frr_rt *rt, void *state)
{
	(void)rt;
	job_free(state);
}

/* Worker v's seconds per item of clock k, as this rank's server kept it. */
static int item_time(const struct frr_rt *rt, int v, int k, double *t)
{
	uint64_t w = atomic_load_explicit(
	    &rt->lb_item[(size_t)v * FRR_LB_RING + (size_t)k % FRR_LB_RING],
	    memory_order_relaxed);
	uint32_t bits = (uint32_t)w;
	float f;

	if (w >> 32 != (uint64_t)k + 1)
		return -EPROTO;
	memcpy(&f, &bits, sizeof(f));
	*t = f;
	return 0;
}

/* The plan of clock c, the same on every worker of every rank. */
static int plan(struct frr_rt *rt, const struct lb_job *j, struct lb_thread *t,
		int c)
{
	int H = j->H < c ? j->H : c;
	struct frr_lb_plan lp;
	uint64_t total = 0;

	t->ngifts = 0;
	t->clock = c;
	if (!H)
		return 0; /* no speed measured yet: plain BSP */
	for (int v = 0; v < j->W; v++) {
		t->tsum[v] = 0;
		total += frr_rt_nitems(rt, v);
		for (int k = c - H; k < c; k++) {
			double x;

			if (item_time(rt, v, k, &x))
				return frr_rt_fail(
				    rt, -EPROTO,
				    "lb-bsp: worker %d's item time of clock "
				    "%d is not here at clock %d's start (its "
				    "final batch was applied); a flexrr bug",
				    v, k, c);
			t->tsum[v] += x;
		}
	}
	frr_lb_shares(j->W, H, t->tsum, t->speed, total, t->share);
	for (int v = 0; v < j->W; v++)
		t->n[v] = frr_rt_nitems(rt, v);
	lp = (struct frr_lb_plan){ j->W,     j->g, j->grp,  j->ng,    t->speed,
				   t->share, t->n, t->load, t->gifts, 0 };
	frr_lb_plan(&lp);
	t->ngifts = lp.ngifts;
	return 0;
}

static int lb_clock_plan(struct frr_rt *rt, void *state, int w, int clock,
			 struct frr_rr_list *list)
{
	struct lb_job *j = state;
	int l = w - j->rank * j->T;
	struct lb_thread *t = &j->th[l];
	struct frr_wclock *rec = frr_rt_clock_rec(&rt->ws->wk[l], clock);
	int err = plan(rt, j, t, clock);

	if (err)
		return err;
	for (int i = 0; i < t->ngifts && !err; i++)
		if (t->gifts[i].owner == w) {
			/* the tails are cut from the end down */
			list->end = t->gifts[i].a;
			rec->rr[RR_C_ITEMS] +=
			    (double)(t->gifts[i].b - t->gifts[i].a);
			/* before the progress word of this clock (a no-op
			 * without item state or on this rank) */
			err = frr_rt_state_push(rt, w, t->gifts[i].helper,
						t->gifts[i].a, t->gifts[i].b);
		}
	return err;
}

/* Before a helper runs g: the donor's states of it are here once its
 * progress word shows the clock (lb_clock_plan pushed them first).  A
 * helper on the donor's rank shares its copy and waits too: until the
 * donor starts c it may still be copying its states of c - 1 for a
 * checkpoint (items_done_late), which the range's writes would tear. */
static int state_arrived(struct frr_rt *rt, const struct frr_lb_gift *g, int c)
{
	double t0 = frr_rt_clock_now();
	int ms = rt->prm->timeout_ms > 0 ? rt->prm->timeout_ms : 60000;

	if (!rt->app->item_state_size)
		return 0;
	while (frr_rt_progress(rt, g->owner).clock < c) {
		if (frr_rt_failed(rt))
			return frr_rt_failed(rt);
		if ((frr_rt_clock_now() - t0) * 1000 >= ms)
			return frr_rt_fail(
			    rt, -ETIMEDOUT,
			    "lb-bsp: worker %d did not say within %d ms (the "
			    "--timeout) that it pushed the item states of its "
			    "items %llu..%llu of clock %d to worker %d's rank",
			    g->owner, ms, (unsigned long long)g->a,
			    (unsigned long long)g->b - 1, c, g->helper);
		frr_nap_us(20);
	}
	return 0;
}

/* After the own list: the planned ranges of others; k = this worker's
 * ranges that others run (one batch each to every shard). */
static int lb_own_list_done(struct frr_rt *rt, void *state, int w, int clock,
			    struct frr_rr_list *list)
{
	struct lb_job *j = state;
	struct lb_thread *t = &j->th[w - j->rank * j->T];
	int k = 0, err = 0;

	(void)list;
	if (t->clock != clock)
		return -EPROTO;
	for (int i = 0; i < t->ngifts && !err; i++) {
		const struct frr_lb_gift *g = &t->gifts[i];

		if (g->owner == w)
			k++;
		else if (g->helper == w && !(err = state_arrived(rt, g, clock)))
			err = frr_rt_run_range(rt, w, g->owner, clock, g->a,
					       g->b);
	}
	/* run once: a second call (none expected) must not run them again */
	t->clock = -1;
	return err ? err : k;
}

static int lb_nop(struct frr_rt *rt, void *state, int w, int clock)
{
	(void)rt;
	(void)state;
	(void)w;
	(void)clock;
	return 0;
}

static int lb_progress_check(struct frr_rt *rt, void *state, int w, int clock,
			     struct frr_rr_list *list)
{
	(void)list;
	return lb_nop(rt, state, w, clock);
}

static void lb_peer_dead(struct frr_rt *rt, void *state, int rank,
			 const char *what)
{
	(void)rt;
	(void)state;
	(void)rank;
	(void)what;
}

static void lb_worker_failed(struct frr_rt *rt, void *state, int w)
{
	(void)rt;
	(void)state;
	(void)w;
}

const struct frr_rr_ops frr_lb_ops = {
	.job_init = lb_job_init,
	.job_fini = lb_job_fini,
	.clock_begin = lb_nop,
	.idle = lb_nop,
	.progress_check = lb_progress_check,
	.own_list_done = lb_own_list_done,
	.clock_end = lb_nop,
	.clock_plan = lb_clock_plan,
	.worker_exit = lb_nop,
	.peer_dead = lb_peer_dead,
	.worker_failed = lb_worker_failed,
};
