// SPDX-License-Identifier: MIT
/*
 * The item context of flexrr.h (besides rows: table/cache.c).  The same
 * context whoever runs the items: the partition, its clock, item state,
 * item RNG and the app's globals never depend on the thread.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "worker.h"

int frr_clock(const struct frr_ctx *c)
{
	return frr_rt_app_clock(c->rt, c->clock);
}

void *frr_part(const struct frr_ctx *c)
{
	return c->rt->ws->parts[c->part].data;
}

int frr_part_index(const struct frr_ctx *c)
{
	return c->part;
}

void *frr_scratch(struct frr_ctx *c)
{
	return c->wk->scratch;
}

const struct frr_job_info *frr_job(const struct frr_ctx *c)
{
	return &c->rt->job;
}

void frr_stat_add(struct frr_ctx *c, int idx, double v)
{
	if (idx >= 0 && idx < FRR_MAX_STATS)
		c->rec->stats[idx] += v;
}

void *frr_item_state(struct frr_ctx *c, uint64_t item)
{
	struct frr_part *p = &c->rt->ws->parts[c->part];

	if (!p->state || item >= p->n)
		return NULL;
	if (p->state_off[item + 1] == p->state_off[item])
		return NULL;
	return p->state + p->state_off[item];
}

uint64_t frr_item_rng(const struct frr_ctx *c, uint64_t item)
{
	struct frr_rng r;
	uint64_t s = c->rt->job.seed ^ 0x6a09e667f3bcc909ull;

	s = s * 0x9e3779b97f4a7c15ull + (uint64_t)c->part;
	s = s * 0x9e3779b97f4a7c15ull +
	    (uint64_t)frr_rt_app_clock(c->rt, c->clock);
	s = s * 0x9e3779b97f4a7c15ull + item;
	frr_rng_seed(&r, s);
	return frr_rng_next(&r);
}

/* Copy the globals c reads into the thread's buffer (waits only if the
 * thread runs a clock it did not wait for itself: it never should). */
static void copy_globals(struct frr_ctx *c, int from)
{
	struct frr_worker *wk = c->wk;
	struct frr_rt *rt = c->rt;
	struct frr_stall st;
	int ok;

	frr_rt_stall_init(rt, &st);
	while (!(ok = frr_rt_globals_ready(rt, c->clock)) &&
	       !frr_rt_failed(rt) && !frr_rt_stalled(rt, &st))
		frr_nap_us(50);
	if (ok == 1 && !frr_rt_globals_get(rt, from, wk->glob)) {
		wk->glob_from = from;
		wk->glob_ok = 1;
		return;
	}
	if (ok == 0 && !frr_rt_failed(rt))
		frr_rt_fail(rt, -ETIMEDOUT,
			    "worker %d waited %d ms (the --timeout) for the "
			    "globals of clock %d: rank 0 hangs",
			    wk->dp.id, rt->prm->timeout_ms, from);
	else if (ok == 1)
		frr_rt_fail(rt, -EPROTO,
			    "the globals of clock %d changed while worker %d "
			    "read them: a rank of this job is corrupt",
			    from, wk->dp.id);
	/* the job fails: process() gets zeros until it unwinds */
	memset(wk->glob, 0, sizeof(wk->glob));
	wk->glob_ok = 0;
}

const double *frr_globals(struct frr_ctx *c, int *from)
{
	struct frr_worker *wk = c->wk;
	int f = frr_rt_globals_from(c->rt, c->clock);

	if (!c->rt->nglob)
		return NULL;
	if (f < 0) {
		if (from)
			*from = -1;
		memset(wk->glob, 0, sizeof(wk->glob));
		wk->glob_ok = 0;
		return wk->glob;
	}
	if (!wk->glob_ok || wk->glob_from != f)
		copy_globals(c, f);
	if (from)
		*from = f;
	return wk->glob;
}
