// SPDX-License-Identifier: MIT
/*
 * RapidReassignment's split by the app's item costs (frr_app_ops.item_cost,
 * rr/rr_policy.c): one helpee behind one helper a clock ahead, on a fake
 * env that records the DoThis.  Without costs the tail is min(lag / 2,
 * rest / 2) items (docs/protocol.md); with costs it is that share of the
 * partition's cost, so a tail of expensive items is shorter; under
 * --rr-link-weight the lead it needs grows with the share of its last clock
 * it did not compute (rr_weigh).  The runtime
 * side (the costs taken from the app, held per partition) runs in
 * test_runtime_rules, whose app gives costs in modes flexrr and rr.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "rr/rr_proto.h"
#include "rr/rr_proto_int.h"

TestSuite(rr_cost, .timeout = 60);

#define N 100

struct env {
	double cost[N + 1];
	int have_costs;
	struct frr_rr_msg sent;
	int nsent;
};

static int e_send(void *env, int from, int to, const struct frr_rr_msg *m)
{
	struct env *e = env;

	(void)from, (void)to;
	e->sent = *m;
	e->nsent++;
	return 0;
}

static int e_recv(void *env, int w, struct frr_rr_msg *m, int timeout_ms)
{
	(void)env, (void)w, (void)m, (void)timeout_ms;
	return -EAGAIN;
}

/* worker 1, the helper, is a clock ahead with nothing done yet */
static struct frr_progress e_progress(void *env, int v)
{
	(void)env;
	return (struct frr_progress){ .clock = v == 1 ? 6 : 5,
				      .done = 0,
				      .total = N };
}

static int e_publish(void *env, int w, int clock, const struct frr_rr_list *l)
{
	(void)env, (void)w, (void)clock, (void)l;
	return 0;
}

static int e_run_range(void *env, int helper, int owner, int clock, uint64_t a,
		       uint64_t b)
{
	(void)env, (void)helper, (void)owner, (void)clock, (void)a, (void)b;
	return 0;
}

static int e_state_push(void *env, int owner, int helper, uint64_t a,
			uint64_t b)
{
	(void)env, (void)owner, (void)helper, (void)a, (void)b;
	return 0;
}

static uint64_t e_nitems(void *env, int v)
{
	(void)env, (void)v;
	return N;
}

/* the helpee's partition only: the helper's fraction is by count */
static const double *e_costs(void *env, int v)
{
	struct env *e = env;

	return e->have_costs && v == 0 ? e->cost : NULL;
}

static const struct rr_env_ops ops = {
	.send = e_send,
	.recv = e_recv,
	.progress = e_progress,
	.publish = e_publish,
	.run_range = e_run_range,
	.state_push = e_state_push,
	.nitems = e_nitems,
	.costs = e_costs,
};

/* Items 0..49 cost 1, items 50..99 cost 9: 500 in all. */
static void two_tier(struct env *e)
{
	e->cost[0] = 0;
	for (int i = 0; i < N; i++)
		e->cost[i + 1] = e->cost[i] + (i < 50 ? 1 : 9);
}

/* Worker 0 at item `next` of its clock 5 offers to worker 1 (P = 1, T = 2,
 * a group of one) after a clock 4 of which it spent `idle` waiting and
 * flushing, with --rr-link-weight `k`: the DoThis it sent, and its list. */
static void offer_weighed(struct env *e, uint64_t next, struct frr_rr_list *l,
			  double k, double idle)
{
	struct rr_config cfg = {
		.P = 1,
		.T = 2,
		.W = 2,
		.group_size = 1,
		.threshold = 0.2,
		.min_share = 0.05,
		.max_helpers = 1,
		.timeout_ms = 1000,
		.remote_ok = 1,
		.link_weight = k,
	};
	struct rr_worker rw;

	cr_assert_eq(rr_worker_init(&rw, &cfg, &ops, e, 0, NULL), 0);
	rr_weigh(&rw, idle, 1.0);
	*l = (struct frr_rr_list){ .next = next, .end = N, .n = N };
	cr_assert_eq(rr_maybe_offer(&rw, 5, l), 0);
	rr_worker_fini(&rw);
}

static void offer(struct env *e, uint64_t next, struct frr_rr_list *l)
{
	offer_weighed(e, next, l, 0, 0);
}

Test(rr_cost, without_costs_the_tail_is_a_count)
{
	struct env e = { 0 };
	struct frr_rr_list l;

	two_tier(&e);
	offer(&e, 10, &l);
	/* lag = 1 (the helper) - 0.1 (done) = 0.9: 45 items, = rest / 2 */
	cr_assert_eq(e.nsent, 1);
	cr_assert_eq(e.sent.type, RR_MSG_DO_THIS);
	cr_assert_eq(e.sent.a, 55, "offered [%llu, 100)",
		     (unsigned long long)e.sent.a);
	cr_assert_eq(e.sent.b, N);
	cr_assert_eq(l.end, 55);
}

Test(rr_cost, with_costs_the_tail_is_a_share_of_the_work)
{
	struct env e = { .have_costs = 1 };
	struct frr_rr_list l;
	double tail, kept;

	two_tier(&e);
	offer(&e, 10, &l);
	/* done 10 of 500: lag 0.98, so 245 of the cost (= rest / 2): the
	 * first a with cost[a] >= 255 is 73, a tail of 27 items costing 243,
	 * where 45 items would cost 405 of the 490 left */
	cr_assert_eq(e.nsent, 1);
	cr_assert_eq(e.sent.a, 73, "offered [%llu, 100)",
		     (unsigned long long)e.sent.a);
	cr_assert_eq(l.end, 73);
	tail = e.cost[N] - e.cost[e.sent.a];
	kept = e.cost[e.sent.a] - e.cost[10];
	cr_assert(tail <= kept && tail > kept - 9 * 2,
		  "the tail costs %g, the helpee keeps %g", tail, kept);
}

Test(rr_cost, an_item_dearer_than_the_share_is_not_offered)
{
	struct env e = { .have_costs = 1 };
	struct frr_rr_list l;

	/* 99 items of cost 1, then one of 1000; the helpee at 60 has 1039
	 * left: half of it is less than the last item alone, so there is no
	 * tail to offer (by count it offers items 80..99, 1019 of the 1039:
	 * then the helper, not the straggler, holds the clock) */
	for (int i = 0; i < N; i++)
		e.cost[i + 1] = e.cost[i] + (i == N - 1 ? 1000 : 1);
	offer(&e, 60, &l);
	cr_assert_eq(e.nsent, 0, "offered [%llu, %llu)",
		     (unsigned long long)e.sent.a,
		     (unsigned long long)e.sent.b);
	cr_assert_eq(l.end, N);
	e.have_costs = 0;
	offer(&e, 60, &l);
	cr_assert_eq(e.nsent, 1);
	cr_assert_eq(e.sent.a, 80);
}

Test(rr_cost, a_worker_that_spent_its_clock_waiting_needs_more_lead)
{
	struct env e = { 0 };
	struct frr_rr_list l;

	/* lag 0.9 (see above) against 0.2 + K x idle share */
	offer_weighed(&e, 10, &l, 2, 0.5); /* 0.2 + 1.0: kept */
	cr_assert_eq(e.nsent, 0,
		     "offered [%llu, 100) with 1.2 of a clock "
		     "needed and 0.9 ahead",
		     (unsigned long long)e.sent.a);
	cr_assert_eq(l.end, N);
	offer_weighed(&e, 10, &l, 2, 0.3); /* 0.2 + 0.6: offered */
	cr_assert_eq(e.nsent, 1);
	cr_assert_eq(e.sent.a, 55);
	offer_weighed(&e, 10, &l, 0, 1.0); /* off: as without a weight */
	cr_assert_eq(e.nsent, 2);
	cr_assert_eq(e.sent.a, 55);
	/* a share is at most the whole clock: 0.2 + 0.6 x 1 */
	offer_weighed(&e, 10, &l, 0.6, 5.0);
	cr_assert_eq(e.nsent, 3);
}
