// SPDX-License-Identifier: MIT
/*
 * Systematic interleaving check of the RapidReassignment engine
 * (runtime/rr_proto.c): the real engine code runs in the deterministic world
 * of rrcheck/world.h (one coroutine per worker, every env call a scheduling
 * point, message deliveries and progress reads ordered by the scheduler)
 * and rrcheck/explore.h enumerates the interleavings:
 *   - exhaustively, one run per Mazurkiewicz trace (DPOR), for 2 and 3
 *     workers with small item counts and one clock;
 *   - exhaustively within K delays of round robin, for two clocks;
 * and every run ends with the checks of world.h: no deadlock (found by the
 * scheduler when nobody can move, never by a timeout), every item exactly
 * once per clock, SSP, item state, nothing left in flight, and no worker
 * waiting while it holds help it may start.  Each configuration also
 * requires the protocol paths it is there for to have been taken (at its
 * full bound: FLEXRR_TEST_QUICK's smaller bounds only check invariants).
 *
 * Time: about 30 s on an idle 2-core machine, 8 s with FLEXRR_TEST_QUICK=1
 * (smaller bounds); FLEXRR_RR_EXPLORE=full adds the large configurations of
 * docs/rapidreassignment.md (minutes).  Each configuration prints one line:
 * runs, distinct traces, distinct end states, seconds.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"
#include "flexrr/log.h"
#include "test_util.h"
#include "world.h"

/* generous: the suite shares 2 cores with other jobs */
TestSuite(rr_explore, .timeout = 900);

enum how { DPOR, DELAYS };

#define N(p) (1u << RRW_P_##p)

static int full(void)
{
	const char *e = getenv("FLEXRR_RR_EXPLORE");

	return e && !strcmp(e, "full");
}

static void need(const struct rrw_cover *cv, unsigned want, const char *name)
{
	for (int i = 0; i < RRW_NPATHS; i++)
		if (want >> i & 1)
			cr_expect_gt(cv->path[i], 0,
				     "%s: no run took the path '%s'", name,
				     rrw_path_names[i]);
}

struct xcase {
	const char *name;
	int P, T, group, clocks, slack;
	uint64_t n[RRW_MAXW];
	double threshold; /* 0: 0.2 */
	int channels, eval, max_unapplied;
	enum how how;
	int delays, quick_delays; /* DELAYS: the bound, and under QUICK */
	int full;		  /* only with FLEXRR_RR_EXPLORE=full */
	unsigned need;
};

/* The configurations and their bounds (docs/rapidreassignment.md reports
 * what they explored).  Every interleaving for one clock; within K delays
 * of round robin for two. */
static const struct xcase cases[] = {
	{ "2 workers, 1 rank, 1 clock, 4+4 items",
	  1,
	  2,
	  1,
	  1,
	  0,
	  { 4, 4 },
	  .how = DPOR,
	  .need = N(ACCEPTED) | N(CANCELLED) | N(CROSSING) | N(RECLAIM_EXTEND) |
		  N(HELP_AT_EXIT) | N(HELP_IN_CANCEL_WAIT) },
	{ "2 workers, 2 ranks (state push), 1 clock, 4+3 items",
	  2,
	  1,
	  1,
	  1,
	  0,
	  { 4, 3 },
	  .how = DPOR,
	  .need = N(ACCEPTED) | N(CANCELLED) | N(CROSSING) },
	/* each message travels alone: a receiver may see the sender's later
	 * progress words first */
	{ "2 workers, delayed deliveries, 1 clock, 4+2 items",
	  1,
	  2,
	  1,
	  1,
	  0,
	  { 4, 2 },
	  .channels = 1,
	  .how = DPOR,
	  .need = N(ACCEPTED) | N(CANCELLED) | N(CROSSING) },
	{ "3 workers, 1 helper each, 1 clock, 3+2+2 items",
	  1,
	  3,
	  1,
	  1,
	  0,
	  { 3, 2, 2 },
	  .how = DPOR,
	  .need = N(ACCEPTED) | N(CANCELLED) },
	/* threshold 0.1: both workers offer, to each other at once */
	{ "2 workers offering to each other, 1 clock, 5+5 items",
	  1,
	  2,
	  1,
	  1,
	  0,
	  { 5, 5 },
	  .threshold = 0.1,
	  .how = DELAYS,
	  .delays = 4,
	  .quick_delays = 3,
	  .need = N(CROSSED_OFFERS) | N(HELP_IN_CANCEL_WAIT) | N(CROSSING) },
	/* slack 0, the wait for evaluation, help capacity of 1 range */
	{ "2 workers, 2 clocks, evaluation, capacity, 3+1 items",
	  1,
	  2,
	  1,
	  2,
	  0,
	  { 3, 1 },
	  .eval = 1,
	  .max_unapplied = 3,
	  .how = DELAYS,
	  .delays = 4,
	  .quick_delays = 3,
	  .need = N(HELP_AHEAD) | N(HELP_AT_EXIT) | N(CANCELLED) | N(ACCEPTED) |
		  N(CAPACITY) },
	{ "2 workers, 2 ranks, 2 clocks, slack 1, 3+3 items",
	  2,
	  1,
	  1,
	  2,
	  1,
	  { 3, 3 },
	  .how = DELAYS,
	  .delays = 3,
	  .quick_delays = 3,
	  .need = N(HELP_AHEAD) | N(ACCEPTED) | N(CANCELLED) },
	/* two offers per clock: a cancelled range cut off by an accepted one
	 * runs as a range of its own */
	{ "3 workers, 2 helpers, 3 ranks, 2 clocks, slack 1, 6+2+2",
	  3,
	  1,
	  2,
	  2,
	  1,
	  { 6, 2, 2 },
	  .how = DELAYS,
	  .delays = 3,
	  .quick_delays = 2,
	  .need = N(RECLAIM_RUN) | N(HELP_AHEAD) | N(ACCEPTED) | N(CANCELLED) },
	/* FLEXRR_RR_EXPLORE=full */
	{ "2 workers offering to each other, 1 clock, 5+5 items",
	  1,
	  2,
	  1,
	  1,
	  0,
	  { 5, 5 },
	  .threshold = 0.1,
	  .how = DPOR,
	  .full = 1,
	  .need = N(CROSSED_OFFERS) | N(HELP_IN_CANCEL_WAIT) },
	{ "3 workers, 2 helpers each, 1 clock, 4+1+1 items",
	  1,
	  3,
	  2,
	  1,
	  0,
	  { 4, 1, 1 },
	  .how = DPOR,
	  .full = 1,
	  .need = N(ACCEPTED) | N(CANCELLED) },
	{ "2 workers, 2 clocks, evaluation, capacity, 3+1 items",
	  1,
	  2,
	  1,
	  2,
	  0,
	  { 3, 1 },
	  .eval = 1,
	  .max_unapplied = 3,
	  .how = DELAYS,
	  .delays = 5,
	  .quick_delays = 5,
	  .full = 1,
	  .need = N(HELP_AHEAD) | N(CAPACITY) },
};

/* Explore one configuration; fails with the violation and its schedule. */
static void run_case(int i)
{
	const struct xcase *k = &cases[i];
	struct rrw_cfg cfg = {
		.P = k->P,
		.T = k->T,
		.group = k->group,
		.clocks = k->clocks,
		.slack = k->slack,
		.threshold = k->threshold ? k->threshold : 0.2,
		.min_share = 0.05,
		.channels = k->channels,
		.eval = k->eval,
		.max_unapplied = k->max_unapplied,
	};
	/* under a sanitizer the checks of memory and races need the code
	 * paths, not every interleaving: the VM stage's bound (4.5x less time
	 * under ASan; the plain stage explores to the full bound) */
	int delays = frr_test_quick() || frr_test_sanitizer() ? k->quick_delays
							      : k->delays;
	static struct rrc_stats st;
	struct rrc_opts o = { 0 };
	char sched[4096], bound[24];
	struct rrw *x;
	int rc;

	if (k->full && !full())
		cr_skip_test("FLEXRR_RR_EXPLORE=full runs it");
	memcpy(cfg.n, k->n, sizeof(cfg.n));
	cr_assert_eq(rrw_create(&cfg, &x), 0, "%s: bad configuration", k->name);
	frr_log_set_level(FRR_LOG_ERROR);
	if (k->how == DPOR)
		rc = rrc_explore(rrw_sys(x), &o, &st);
	else
		rc = rrc_explore_delays(rrw_sys(x), delays, 0, &st);
	cr_assert_eq(rc, 0,
		     "%s: %s\n  after %ld runs; schedule (thread per step; "
		     "threads 0..%d are the workers): %s",
		     k->name,
		     rc == -EDEADLK || rc == -EPROTO ? rrw_failure(x)
						     : strerror(-rc),
		     st.runs, rrw_nworkers(x) - 1,
		     rrc_sched_str(st.sched, st.depth, sched, sizeof(sched)));
	cr_assert(st.exhausted, "%s: the exploration stopped early", k->name);
	if (k->how == DPOR)
		snprintf(bound, sizeof(bound), "all");
	else
		snprintf(bound, sizeof(bound), "<= %d delays", delays);
	printf("rr_explore: %-56s %-12s %8ld runs %8ld traces %3ld end "
	       "states %6.1f s\n",
	       k->name, bound, st.runs, rrw_cover(x)->traces,
	       rrw_cover(x)->end_states, st.seconds);
	fflush(stdout);
	/* The paths a configuration is there for are reached at its stated
	 * bound; QUICK's smaller bounds (the VM stage) check the same
	 * invariants on fewer interleavings and may miss a path. */
	if (delays == k->delays)
		need(rrw_cover(x), k->need, k->name);
	rrw_destroy(x);
}

/* ---- every interleaving (one per Mazurkiewicz trace), one clock -------- */

Test(rr_explore, two_workers_one_rank)
{
	run_case(0);
}
Test(rr_explore, two_workers_two_ranks_item_state_travels)
{
	run_case(1);
}
Test(rr_explore, two_workers_messages_overtaken)
{
	run_case(2);
}
Test(rr_explore, three_workers_in_a_ring)
{
	run_case(3);
}

/* ---- within K delays of round robin ----------------------------------- */

Test(rr_explore, two_workers_both_offer)
{
	run_case(4);
}
Test(rr_explore, two_workers_two_clocks)
{
	run_case(5);
}
Test(rr_explore, two_workers_two_clocks_slack_one)
{
	run_case(6);
}
Test(rr_explore, three_workers_two_helpers_two_clocks)
{
	run_case(7);
}

/* ---- the large configurations (FLEXRR_RR_EXPLORE=full) ----------------- */

Test(rr_explore, full_two_workers_both_offer_every_interleaving)
{
	run_case(8);
}
Test(rr_explore, full_three_workers_two_helpers_every_interleaving)
{
	run_case(9);
}
Test(rr_explore, full_two_workers_two_clocks_five_delays)
{
	run_case(10);
}

/* ---- the checker checks ----------------------------------------------- */

/* The reduction must not lose interleavings: on a small configuration DPOR
 * reaches every trace the search with sleep sets only (every enabled
 * thread tried at every state) reaches, in both delivery models. */
Test(rr_explore, dpor_reaches_every_trace_of_the_plain_search)
{
	for (int ch = 0; ch <= 1; ch++) {
		struct rrw_cfg c = { .P = 1,
				     .T = 2,
				     .group = 1,
				     .clocks = 1,
				     .n = { 3, 2 },
				     .threshold = 0.2,
				     .min_share = 0.05,
				     .channels = ch };
		struct rrc_opts dpor = { 0 }, plain = { .naive = 1 };
		static struct rrc_stats s1, s2;
		struct rrw *a, *b;

		cr_assert_eq(rrw_create(&c, &a), 0);
		cr_assert_eq(rrw_create(&c, &b), 0);
		cr_assert_eq(rrc_explore(rrw_sys(a), &dpor, &s1), 0);
		cr_assert_eq(rrc_explore(rrw_sys(b), &plain, &s2), 0);
		cr_assert(s1.exhausted && s2.exhausted);
		cr_assert(rrw_traces_within(b, a),
			  "channels %d: DPOR missed traces: %ld of %ld", ch,
			  rrw_cover(a)->traces, rrw_cover(b)->traces);
		cr_assert(rrw_traces_within(a, b));
		cr_assert_gt(rrw_cover(a)->traces, 100);
		printf(
		    "rr_explore: reduction check, channels %d: DPOR %ld runs, "
		    "plain search %ld runs (+%ld cut by sleep sets), both "
		    "%ld traces\n",
		    ch, s1.runs, s2.runs, s2.redundant, rrw_cover(a)->traces);
		rrw_destroy(a);
		rrw_destroy(b);
	}
}

/* A broken world must be caught: a lost message is a deadlock, an item run
 * twice breaks exactly once; the failing schedule replays to the same
 * failure. */
static void mutant(enum rrw_mutation mut, int want_rc, const char *want1,
		   const char *want2)
{
	struct rrw_cfg c = { .P = 1,
			     .T = 2,
			     .group = 1,
			     .clocks = 1,
			     .n = { 4, 2 },
			     .threshold = 0.2,
			     .min_share = 0.05,
			     .mutate = (int)mut };
	static struct rrc_stats st;
	struct rrc_opts o = { 0 };
	struct rrw *x;

	cr_assert_eq(rrw_create(&c, &x), 0);
	cr_assert_eq(rrc_explore(rrw_sys(x), &o, &st), want_rc, "%s",
		     rrw_failure(x));
	cr_assert(strstr(rrw_failure(x), want1), "%s", rrw_failure(x));
	cr_assert(strstr(rrw_failure(x), want2), "%s", rrw_failure(x));
	cr_assert_eq(rrc_replay(rrw_sys(x), st.sched, st.depth), want_rc);
	rrw_destroy(x);
}

Test(rr_explore, a_lost_message_is_found_as_a_deadlock)
{
	mutant(RRW_MUT_LOSE_CANCELLED, -EDEADLK, "deadlock", "CANCEL_WAIT");
}

Test(rr_explore, an_item_run_twice_is_found)
{
	mutant(RRW_MUT_HELP_TWICE, -EPROTO, "processed 2 times", "worker 0");
}
