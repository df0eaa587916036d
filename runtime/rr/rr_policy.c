// SPDX-License-Identifier: MIT
/*
 * RapidReassignment policy: who may help whom (helper groups) and when a
 * worker offers part of its list to which helper, how much.
 */
#include <errno.h>

#include "flexrr/log.h"
#include "rr_proto_int.h"

/* ---- helper groups ------------------------------------------------------ */

int rr_helper_group(int P, int T, int g, int w, int *out)
{
	int r = w / T, t = w % T, n = 0, nlocal, nremote;

	if (g > RR_MAX_GROUP)
		g = RR_MAX_GROUP;
	if (g > P * T - 1)
		g = P * T - 1;
	if (g <= 0)
		return 0;
	/* other processes do not share w's CPU: most of the group is there;
	 * one same-process helper (for g >= 3) keeps help cheap (no state
	 * push, shared replica) */
	nremote = (P - 1) * T;
	nlocal = T - 1;
	if (nremote > g - (g >= 3 && nlocal > 0))
		nremote = g - (g >= 3 && nlocal > 0);
	if (nlocal > g - nremote)
		nlocal = g - nremote;
	/* remote: walk threads outer, ranks inner, so consecutive workers of
	 * a rank spread their load over distinct peers */
	for (int j = 0; j < T && n < nremote; j++)
		for (int i = 1; i < P && n < nremote; i++)
			out[n++] = ((r + i) % P) * T + (t + j) % T;
	for (int j = 1; j <= nlocal; j++)
		out[n++] = r * T + (t + j) % T;
	return n;
}

void rr_helper_groups(int P, int T, int g, int *grp, int *ng)
{
	for (int v = 0; v < P * T; v++)
		ng[v] =
		    rr_helper_group(P, T, g, v, grp + (size_t)v * (size_t)g);
}

/* ---- offering ----------------------------------------------------------- */

/* Partition v's item costs (a prefix sum), or NULL: count items. */
static const double *costs_of(const struct rr_worker *rw, int v)
{
	return rw->env_ops->costs ? rw->env_ops->costs(rw->env, v) : NULL;
}

/* The share of partition v's cost (its items' count without costs) in
 * items [a, b), of n. */
static double share(const double *cost, uint64_t n, uint64_t a, uint64_t b)
{
	if (!n || b <= a)
		return 0.0;
	if (cost && cost[n] > 0)
		/* a peer's word may be ahead of what we clamp to */
		return b > n ? (cost[n] - cost[a < n ? a : n]) / cost[n]
			     : (cost[b] - cost[a]) / cost[n];
	return (double)(b - a) / (double)n;
}

/* Fraction of its clock helper h has done, seen from our clock (a helper in
 * a later clock counts as 100% plus); < 0 when it is behind us. */
static double helper_fraction(struct rr_worker *rw, int h, int clock)
{
	struct frr_progress p = rw->env_ops->progress(rw->env, h);
	uint64_t n = rw->env_ops->nitems(rw->env, h);
	double rem, f;

	if (p.clock < clock)
		return -1.0;
	rem = share(costs_of(rw, h), n, p.done, p.total);
	f = rem >= 1.0 ? 0.0 : 1.0 - rem;
	/* each clock it is ahead counts as a whole clock done */
	return f + (double)(p.clock - clock);
}

/* An offer to h of this clock that h has not completed (sent, accepted,
 * being cancelled, or cancelled: then h was not free to help).  A helper
 * whose earlier ranges all completed may be offered more: it has sent
 * HelpCompleted, so it holds no task of ours and is free.  Exactly once is
 * unaffected: every offer is a fresh tail of our list and is decided at the
 * helper on its own (docs/protocol.md). */
static int busy_with(const struct rr_worker *rw, int h)
{
	for (int i = 0; i < rw->noffers; i++)
		if (rw->offers[i].helper == h &&
		    rw->offers[i].state != RR_OFFER_COMPLETED)
			return 1;
	return 0;
}

static int open_offers(const struct rr_worker *rw)
{
	int n = 0;

	for (int i = 0; i < rw->noffers; i++)
		n += rw->offers[i].state != RR_OFFER_COMPLETED;
	return n;
}

/*
 * The tail to offer for a lag: lag / 2 of the partition, at most half of
 * what is left, by count, or by cost when the app gave costs (the smallest
 * a whose tail [a, end) costs no more than that).  end when there is too
 * little to split (the caller offers nothing).
 */
static uint64_t tail_start(const double *cost, const struct frr_rr_list *l,
			   double lag)
{
	uint64_t amount, lo, hi;
	double want, at;

	if (!cost || cost[l->n] <= 0) {
		amount = (uint64_t)(lag / 2 * (double)l->n);
		if (amount > (l->end - l->next) / 2)
			amount = (l->end - l->next) / 2;
		return l->end - amount;
	}
	want = lag / 2 * cost[l->n];
	if (want > (cost[l->end] - cost[l->next]) / 2)
		want = (cost[l->end] - cost[l->next]) / 2;
	at = cost[l->end] - want;
	/* the first a in (next, end] with cost[a] >= at */
	lo = l->next + 1;
	hi = l->end;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (cost[mid] >= at)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int rr_maybe_offer(struct rr_worker *rw, int clock, struct frr_rr_list *list)
{
	const struct rr_config *c = rw->cfg;
	const double *cost = costs_of(rw, rw->w);
	uint64_t rem_items = list->end - list->next, a, id;
	double rem, me, best_lag = -1, lag;
	int best = -1, h, err;

	if (!list->n || rem_items < 2 || rw->noffers >= RR_MAX_OFFERS ||
	    open_offers(rw) >= c->max_helpers)
		return 0;
	rem = share(cost, list->n, list->next, list->end);
	if (rem <= c->min_share)
		return 0;
	me = 1.0 - rem;
	for (int i = 0; i < rw->nhelpers; i++) {
		h = rw->helpers[i];
		if (busy_with(rw, h) || (rw->remote_refused >> i & 1) ||
		    (!c->remote_ok &&
		     rr_rank_of(rw, h) != rr_rank_of(rw, rw->w)))
			continue;
		lag = helper_fraction(rw, h, clock) - me;
		if (lag > best_lag) {
			best_lag = lag;
			best = i;
		}
	}
	if (best < 0 || best_lag <= c->threshold + rw->thr_extra)
		return 0;
	h = rw->helpers[best];
	a = tail_start(cost, list, best_lag);
	if (a >= list->end)
		return 0;
	if (rr_rank_of(rw, h) != rr_rank_of(rw, rw->w)) {
		err = rw->env_ops->state_push(rw->env, rw->w, h, a, list->end);
		if (err == -EOPNOTSUPP) {
			/* item state cannot travel yet: local helpers only */
			rw->remote_refused |= 1ull << best;
			return 0;
		}
		if (err)
			return err;
	}
	id = ((uint64_t)(uint32_t)clock << 32) | (rw->next_id++ & 0xffffffff);
	err = rr_send_msg(rw, h, RR_MSG_DO_THIS, clock, a, list->end, id);
	if (err)
		return err;
	rw->offers[rw->noffers++] = (struct rr_offer){
		.helper = h,
		.state = RR_OFFER_SENT,
		.a = a,
		.b = list->end,
		.id = id,
	};
	rr_count(rw, clock, RR_C_OFFERS, 1);
	rr_event(rw, FRR_TR_OFFER, h, clock, a, list->end);
	frr_dbg("rr: worker %d clock %d: DoThis [%llu, %llu) to worker %d "
		"(lag %.2f)",
		rw->w, clock, (unsigned long long)a,
		(unsigned long long)list->end, h, best_lag);
	list->end = a;
	return rw->env_ops->publish(rw->env, rw->w, clock, list);
}
