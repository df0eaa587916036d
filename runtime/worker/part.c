// SPDX-License-Identifier: MIT
/*
 * Data partitions held by a rank (its own workers' and, with
 * RapidReassignment, read-only replicas of partitions it may help with) and
 * their item state.  In flexrr/rr mode with an app that has item state, the
 * state buffers are transport regions, so a range's state can be shipped to
 * a helper on another rank and back (rr/rr_hooks.h "Item state").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "worker.h"

/* The app's item costs as a prefix sum, for RapidReassignment's split. */
static int part_costs(struct frr_rt *rt, int v, struct frr_part *p)
{
	const struct frr_app_ops *a = rt->app;
	double sum = 0;

	if (!rt->rr_reassign || !FRR_APP_HAS(a, item_cost) || !a->item_cost)
		return 0;
	p->cost_before = malloc((p->n + 1) * sizeof(double));
	if (!p->cost_before)
		return -ENOMEM;
	for (uint64_t i = 0; i < p->n; i++) {
		double c = a->item_cost(rt->app_state, v, i);

		/* written so that NaN fails too */
		if (!(c > 0 && c < 1e300)) {
			frr_err("app %s: item_cost(partition %d, item %llu) "
				"is %g: an item's cost must be finite and > 0",
				a->name, v, (unsigned long long)i, c);
			return -EINVAL;
		}
		p->cost_before[i] = sum;
		sum += c;
	}
	p->cost_before[p->n] = sum;
	return 0;
}

const double *frr_rt_costs(const struct frr_rt *rt, int v)
{
	if (v < 0 || v >= rt->W || !rt->ws->parts[v].loaded)
		return NULL;
	return rt->ws->parts[v].cost_before;
}

int frr_rt_part_load(struct frr_rt *rt, int v)
{
	struct frr_part *p = &rt->ws->parts[v];
	uint64_t n = 0, off = 0;
	int err;

	if (p->loaded)
		return 0;
	err = rt->app->load_partition(rt->app_state, v, &n, &p->data);
	if (err) {
		frr_err("app %s: loading partition %d failed (%d): see the "
			"app's message above",
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
	err = part_costs(rt, v, p);
	if (err)
		return err;
	p->loaded = 1;
	return 0;
}

int frr_rt_want_replica(struct frr_rt *rt, int v)
{
	if (v < 0 || v >= rt->W)
		return -EINVAL;
	return frr_rt_part_load(rt, v);
}

/* Write item states [a, b) of worker owner from this rank's copy into rank
 * r's copy, flushed on return. */
static int state_ship(struct frr_rt *rt, int owner, int r, uint64_t a,
		      uint64_t b)
{
	struct frr_part *p = &rt->ws->parts[owner];
	struct frr_tp_rmr *rm;
	size_t off, len;
	int err;

	if (r == rt->rank || !p->state || a >= b)
		return 0;
	if (!rt->ws->state_mr || !rt->ws->state_mr[owner] || b > p->n)
		return -EINVAL;
	rm = rt->ws->rstate[(size_t)r * rt->W + owner];
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
	err = frr_tp_write(rt->eps[r], rt->ws->state_mr[owner], off, rm, off,
			   len, 0, 0);
	if (!err)
		err = frr_tp_flush(rt->eps[r], rt->flush_ms);
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		return frr_rt_peer_fail(rt, r,
					"shipping item state to it failed");
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
int frr_rt_state_setup(struct frr_rt *rt)
{
	size_t dl = (size_t)rt->W * sizeof(struct frr_tp_desc);
	struct frr_tp_desc *mine = calloc(1, dl), *all = NULL;
	int err = 0;

	rt->ws->state_mr = calloc((size_t)rt->W, sizeof(*rt->ws->state_mr));
	rt->ws->rstate = calloc((size_t)rt->W * rt->P, sizeof(*rt->ws->rstate));
	all = calloc((size_t)rt->P, dl);
	if (!mine || !all || !rt->ws->state_mr || !rt->ws->rstate) {
		err = -ENOMEM;
		goto out;
	}
	for (int v = 0; v < rt->W && !err; v++) {
		struct frr_part *p = &rt->ws->parts[v];
		size_t len;

		if (!p->state)
			continue;
		len = p->state_off[p->n];
		err = frr_tp_mr_alloc(rt->tp, len, FRR_TP_ACCESS_REMOTE_WRITE,
				      &rt->ws->state_mr[v]);
		if (err)
			break;
		memcpy(frr_tp_mr_ptr(rt->ws->state_mr[v]), p->state, len);
		free(p->state);
		p->state = frr_tp_mr_ptr(rt->ws->state_mr[v]);
		err = frr_tp_mr_export(rt->ws->state_mr[v], &mine[v]);
	}
	if (err)
		goto out;
	err = frr_rt_allgather(rt, "exchanging the item-state regions", mine,
			       dl, all);
	for (int r = 0; r < rt->P && !err; r++)
		for (int v = 0; v < rt->W && !err; v++) {
			struct frr_tp_desc *d = &all[(size_t)r * rt->W + v];

			if (r == rt->rank || d->magic != FRR_TP_DESC_MAGIC)
				continue;
			err = frr_tp_rmr_import(
			    rt->eps[r], d,
			    &rt->ws->rstate[(size_t)r * rt->W + v]);
		}
out:
	free(mine);
	free(all);
	return err;
}

void frr_rt_parts_fini(struct frr_rt *rt)
{
	for (int w = 0; rt->ws->parts && w < rt->W; w++) {
		free(rt->ws->parts[w].state_off);
		free(rt->ws->parts[w].state);
		free(rt->ws->parts[w].cost_before);
	}
	free(rt->ws->parts);
	rt->ws->parts = NULL;
}
