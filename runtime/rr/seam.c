// SPDX-License-Identifier: MIT
/*
 * What the runtime offers RapidReassignment (rr/rr_hooks.h): the job's
 * shape, partitions' sizes, progress, clock times, and running a range of
 * another worker's items as a helper.
 */
#include <errno.h>

#include "rr_hooks.h"
#include "ssp.h"

const struct frr_rt_shape *frr_rt_shape(const struct frr_rt *rt)
{
	return &rt->shape;
}

int frr_rt_rr_reassign(const struct frr_rt *rt)
{
	return rt->rr_reassign;
}

uint64_t frr_rt_nitems(const struct frr_rt *rt, int v)
{
	return (v >= 0 && v < rt->W) ? rt->ws->nitems[v] : 0;
}

int frr_rt_prog_shift(const struct frr_rt *rt)
{
	return rt->prog_shift;
}

int frr_rt_progress_reader(struct frr_rt *rt, int w, int r)
{
	int wr = w / rt->T, t = w % rt->T, *subs = rt->prog_subs + t * rt->P;

	if (w < 0 || w >= rt->W || r < 0 || r >= rt->P)
		return -EINVAL;
	if (r == wr) /* read locally */
		return 0;
	if (r == rt->rank)
		rt->prog_read[w] = 1;
	if (wr != rt->rank)
		return 0;
	for (int i = 0; i < rt->prog_nsubs[t]; i++)
		if (subs[i] == r)
			return 0;
	subs[rt->prog_nsubs[t]++] = r;
	return 0;
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
	return rt->ws->wk[l].loop_time;
}

/* The helper's batch is its help cache's: fetched for (owner, clock),
 * flushed before return, attributed to the owner. */
int frr_rt_run_range(struct frr_rt *rt, int helper, int owner, int clock,
		     uint64_t a, uint64_t b)
{
	int hl = helper - rt->rank * rt->T, err = 0;
	struct frr_worker *wk;
	struct frr_ctx c;

	if (hl < 0 || hl >= rt->T || owner < 0 || owner >= rt->W ||
	    !rt->ws->parts[owner].loaded || a > b ||
	    b > rt->ws->parts[owner].n || !rt->ws->wk[hl].dp.help.gen)
		return -EINVAL;
	wk = &rt->ws->wk[hl];
	c = (struct frr_ctx){
		.rt = rt,
		.wk = wk,
		.snd = &wk->dp,
		.cache = &wk->dp.help,
		.rec = frr_rt_clock_rec(wk, clock),
		.part = owner,
		.part_n = rt->ws->parts[owner].n,
		.clock = clock,
		.bound = frr_rt_read_bound(rt, clock),
	};
	if (b > a)
		err = frr_rt_process(&c, a, b);
	c.rec->helped += b - a;
	/* the owner's copy of the range's item states is current before
	 * the batch leaves: once every shard applied the clock (which needs
	 * this batch) the owner may read them again */
	if (!err && owner / rt->T != rt->rank)
		err = frr_rt_state_return(rt, owner, a, b);
	return err ? err : frr_rt_batch_send(&c, 0, 0);
}
