// SPDX-License-Identifier: MIT
/*
 * The item context of flexrr.h (besides rows: table/cache.c).  The same
 * context whoever runs the items: the partition, its clock, item state and
 * item RNG never depend on the thread.
 */
#include <stddef.h>

#include "rt.h"

int frr_clock(const struct frr_ctx *c)
{
	return frr_rt_app_clock(c->rt, c->clock);
}

void *frr_part(const struct frr_ctx *c)
{
	return c->rt->parts[c->part].data;
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
	struct frr_part *p = &c->rt->parts[c->part];

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
