// SPDX-License-Identifier: MIT
/*
 * The simulator (`flexrr simulate`, runtime/sim/): the real RR engine in
 * virtual time.  Behaviour, not timing of this machine: without stragglers
 * every mode runs at the ideal; a persistent straggler costs BSP and SSP its
 * whole slow-down while FlexRR and lb-bsp rebalance and backup drops work;
 * runs are a pure function of the configuration; every item is done once
 * (the simulator checks it at every clock and fails the run otherwise);
 * the command line explains bad options.  Agreement with real runs:
 * test_sim_validate.c.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "sim/sim.h"
#include "table/table.h"
#include "test_runtime_util.h"

TestSuite(sim, .timeout = 300);

static struct frr_sim_cost cost_100us = { .kind = FRR_SIM_COST_CONST,
					  .a = 100e-6 };

static struct frr_sim_cfg cfg(int P, int T, int clocks, uint64_t items)
{
	struct frr_sim_cfg c;

	frr_sim_cfg_defaults(&c);
	c.P = P;
	c.T = T;
	c.clocks = clocks;
	c.items = items;
	c.cost = &cost_100us;
	return c;
}

static double run(const struct frr_sim_cfg *c, int mode, const char *spec,
		  struct frr_sim_result *out)
{
	struct frr_stragglers s;
	struct frr_sim_result r;
	int err;

	cr_assert_eq(frr_stragglers_parse(spec, &s), 0, "spec %s", spec);
	cr_assert_eq(frr_stragglers_setup(&s, c->seed, c->T, c->P * c->T), 0);
	err = frr_sim_run(c, (enum frr_sim_mode)mode, &s, &r);
	cr_assert_eq(err, 0, "%s under %s failed (%d)",
		     frr_sim_mode_names[mode], spec, err);
	if (out)
		*out = r;
	else
		frr_sim_result_free(&r);
	return r.time_s;
}

Test(sim, every_mode_runs_at_the_ideal_without_stragglers)
{
	struct frr_sim_cfg c = cfg(4, 4, 30, 400);
	/* 30 clocks x 400 items x 100 us of pure work */
	double work = 30 * 400 * 100e-6;

	for (int m = 0; m < FRR_SIM_NMODES; m++) {
		double t = run(&c, m, "none", NULL);

		cr_assert(t >= work && t < work * 1.03,
			  "%s took %.4f s for %.4f s of work per worker",
			  frr_sim_mode_names[m], t, work);
	}
}

Test(sim, a_persistent_straggler_costs_bsp_not_flexrr)
{
	struct frr_sim_cfg c = cfg(4, 4, 40, 400);
	double bsp, ssp, flexrr, lb, backup;
	struct frr_sim_result r;

	c.backups = 1;
	bsp = run(&c, FRR_SIM_BSP, "persistent:5,3", NULL);
	ssp = run(&c, FRR_SIM_SSP, "persistent:5,3", NULL);
	flexrr = run(&c, FRR_SIM_FLEXRR, "persistent:5,3", &r);
	cr_assert_gt(r.rr[FRR_SIM_MOVED], 0, "no item was reassigned");
	cr_assert_leq(r.time_s, r.bound_s * 1.15,
		      "flexrr %.4f s, balanced bound %.4f s", r.time_s,
		      r.bound_s);
	frr_sim_result_free(&r);
	lb = run(&c, FRR_SIM_LB_BSP, "persistent:5,3", NULL);
	backup = run(&c, FRR_SIM_BACKUP, "persistent:5,3", &r);
	cr_assert_gt(r.dropped_items, 0, "backup dropped nothing");
	frr_sim_result_free(&r);
	cr_assert(bsp > 2.5 * 40 * 400 * 100e-6, "bsp %.4f s", bsp);
	cr_assert(ssp > 0.95 * bsp, "ssp %.4f s vs bsp %.4f s", ssp, bsp);
	cr_assert(flexrr < 0.5 * bsp, "flexrr %.4f s vs bsp %.4f s", flexrr,
		  bsp);
	cr_assert(lb < 0.5 * bsp, "lb-bsp %.4f s vs bsp %.4f s", lb, bsp);
	cr_assert(backup < 0.5 * bsp, "backup %.4f s vs bsp %.4f s", backup,
		  bsp);
}

/* A partition over 2^22 items (Netflix over 16 workers: 6.3 M ratings)
 * runs as in the runtime, whose progress words count it in units of
 * 2^shift items (core.h frr_prog_shift): every item of every clock once
 * (frr_sim_run fails a clock that closes short), reassigned under a
 * straggler.  It was refused (the word's 22-bit field). */
Test(sim, a_partition_over_2_22_items_runs_in_the_runtimes_units)
{
	static struct frr_sim_cost tiny = { .kind = FRR_SIM_COST_CONST,
					    .a = 20e-9 };
	struct frr_sim_cfg c = cfg(2, 2, 20, 6280031);
	struct frr_stragglers none;
	struct frr_sim_result r;
	double bsp;

	c.cost = &tiny;
	cr_assert_eq(frr_prog_shift(c.items), 1);
	bsp = run(&c, FRR_SIM_BSP, "none", NULL);
	cr_assert(bsp >= 20 * 6280031 * 20e-9, "bsp %.4f s", bsp);
	run(&c, FRR_SIM_FLEXRR, "persistent:1,2", &r);
	cr_assert_gt(r.rr[FRR_SIM_MOVED], 0, "no item was reassigned");
	cr_assert_leq(r.time_s, r.bound_s * 1.15,
		      "flexrr %.4f s, balanced bound %.4f s", r.time_s,
		      r.bound_s);
	frr_sim_result_free(&r);
	c.items = FRR_SIM_MAX_ITEMS + 1;
	cr_assert_eq(frr_stragglers_parse("none", &none), 0);
	cr_assert_eq(frr_sim_run(&c, FRR_SIM_BSP, &none, &r), -EINVAL);
}

/* lb-bsp is the runtime's plan (straggler.h frr_lb_plan): a 2x persistent
 * straggler's tail goes only to its rr helper group, each helper stretched
 * from its own full list, so g helpers end a clock at T with
 * T s / 2 + g (T s - n) = n: 4/3 of the ideal for g = 1, 8/7 for g = 3
 * (clock 0, with no speeds yet, at 2x).  Any worker taking any share (the
 * simulator before the plan was shared) came within 1.07x either way. */
Test(sim, lb_bsp_moves_tails_within_the_helper_group)
{
	struct frr_sim_cfg c = cfg(4, 4, 40, 400);
	double work = 40 * 400 * 100e-6,
	       want[2][2] = { { 1.30, 1.42 }, { 1.12, 1.22 } };
	int groups[2] = { 1, 3 };

	for (int i = 0; i < 2; i++) {
		struct frr_sim_result r;
		double x;

		c.rr_group = groups[i];
		run(&c, FRR_SIM_LB_BSP, "persistent:0,2", &r);
		x = r.time_s / work;
		cr_assert_gt(r.rr[FRR_SIM_MOVED], 0,
			     "group of %d: nothing moved", groups[i]);
		cr_assert(x >= want[i][0] && x <= want[i][1],
			  "group of %d: %.3fx the work, wanted %.2f-%.2f",
			  groups[i], x, want[i][0], want[i][1]);
		frr_sim_result_free(&r);
	}
}

Test(sim, runs_are_deterministic_and_costs_follow_the_model)
{
	static struct frr_sim_cost ln = { .kind = FRR_SIM_COST_LOGNORMAL,
					  .a = 100e-6,
					  .b = 0.5 };
	struct frr_sim_cfg c = cfg(3, 4, 25, 300);
	struct frr_sim_result a, b;

	c.cost = &ln;
	run(&c, FRR_SIM_FLEXRR, "slow-worker:0.2,1.0", &a);
	run(&c, FRR_SIM_FLEXRR, "slow-worker:0.2,1.0", &b);
	cr_assert_eq(a.time_s, b.time_s, "%.9f vs %.9f", a.time_s, b.time_s);
	cr_assert_eq(a.rr[FRR_SIM_OFFERS], b.rr[FRR_SIM_OFFERS]);
	cr_assert_eq(a.rr[FRR_SIM_MOVED], b.rr[FRR_SIM_MOVED]);
	/* lognormal with mean 100 us: the drawn work is within 2% of it */
	cr_assert(fabs(a.work_s - 12 * 25 * 300 * 100e-6) <
		      0.02 * 12 * 25 * 300 * 100e-6,
		  "work %.4f s", a.work_s);
	frr_sim_result_free(&a);
	frr_sim_result_free(&b);
}

Test(sim, every_mode_and_pattern_completes_at_many_shapes)
{
	static const char *const pats[] = { "slow-worker:0.3,2.0",
					    "disrupted-machine:0.2,3,2",
					    "power-law:1.5", "persistent:1,4",
					    "contention:0" };
	static const int shapes[][2] = {
		{ 1, 1 }, { 1, 5 }, { 5, 1 }, { 3, 3 }
	};

	/* the engine must neither deadlock nor lose an item (checked by the
	 * simulator at every clock), whatever the slack and group */
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
		for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++)
			for (int m = 0; m < FRR_SIM_NMODES; m++) {
				struct frr_sim_cfg c =
				    cfg(shapes[k][0], shapes[k][1], 12, 97);

				c.slack = (int)(p % 3);
				c.rr_group = 1 + (int)(k % 4);
				c.backups = 0;
				if (!strncmp(pats[p], "persistent", 10) &&
				    c.P * c.T < 2)
					continue;
				run(&c, m, pats[p], NULL);
			}
}

Test(sim, command_line_help_table_and_errors)
{
	static struct rt_run r;
	char csv[128];
	FILE *f;
	char line[512];
	int rows = 0;

	char *help[] = { (char *)rt_bin(), "simulate", "--help", NULL };
	rt_exec(&r, help, NULL, 30);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "lb-bsp") && strstr(r.out, "--cost") &&
		      strstr(r.out, "--net"),
		  "%s", r.out);

	snprintf(csv, sizeof(csv), "/tmp/test-sim-%d.csv", getpid());
	char *ok[] = { (char *)rt_bin(),
		       "simulate",
		       "-n",
		       "2",
		       "-t",
		       "2",
		       "--clocks",
		       "10",
		       "--items",
		       "64",
		       "--modes",
		       "bsp,flexrr",
		       "--stragglers",
		       "slow-worker:0.2,1",
		       "--csv",
		       csv,
		       NULL };
	rt_exec(&r, ok, NULL, 60);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "x_ideal") && strstr(r.out, "flexrr"), "%s",
		  r.out);
	f = fopen(csv, "r");
	cr_assert(f, "no CSV written");
	while (fgets(line, sizeof(line), f))
		rows++;
	fclose(f);
	unlink(csv);
	cr_assert_eq(rows, 3, "CSV rows: %d (header + 2)", rows);

	char *bad[] = { (char *)rt_bin(), "simulate", "--modes", "bsp,nope",
			NULL };
	rt_exec(&r, bad, NULL, 30);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "'nope' is not one of"), "%s", r.err);

	char *cost[] = { (char *)rt_bin(), "simulate", "--cost",
			 "metrics:/nonexistent.csv", NULL };
	rt_exec(&r, cost, NULL, 30);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "/nonexistent.csv"), "%s", r.err);
}

/* A helper whose range of the clock completed is offered again: with one
 * helper, a 3x straggler makes more offers than there are clocks (one per
 * helper per clock could not). */
Test(sim, a_helper_that_completed_its_range_gets_another_offer)
{
	struct frr_sim_cfg c = cfg(2, 1, 20, 400);
	struct frr_sim_result r;

	c.rr_group = 1;
	run(&c, FRR_SIM_FLEXRR, "persistent:0,3", &r);
	cr_assert_gt(r.rr[FRR_SIM_OFFERS], (uint64_t)c.clocks,
		     "%llu offers in %d clocks: no helper got a second one",
		     (unsigned long long)r.rr[FRR_SIM_OFFERS], c.clocks);
	cr_assert_leq(r.time_s, r.bound_s * 1.15,
		      "flexrr %.4f s, balanced bound %.4f s", r.time_s,
		      r.bound_s);
	frr_sim_result_free(&r);
}

/* ---- bytes (docs/simulator.md "Network", "Table models") ---------------- */

/* --link none is the latency-only simulator of before links existed: the
 * same times, events and engine counters as it gave (recorded from
 * df035d5's `flexrr simulate`, printed to 1 us; lb-bsp's since its model
 * changed, below), with or without a table
 * model (a model only counts bytes then). */
Test(sim, link_none_gives_the_old_results)
{
	static const struct {
		int P, T, clocks, items, mode;
		const char *cost, *pattern;
		double time_s;
		uint64_t events, offers, moved;
	} old[] = {
		{ 3, 2, 20, 200, FRR_SIM_BSP, "lognormal:100,0.5",
		  "slow-worker:0.2,1.0", 0.768264, 246, 0, 0 },
		{ 3, 2, 20, 200, FRR_SIM_FLEXRR, "lognormal:100,0.5",
		  "slow-worker:0.2,1.0", 0.472037, 7310, 118, 2417 },
		{ 3, 2, 20, 200, FRR_SIM_BACKUP, "lognormal:100,0.5",
		  "slow-worker:0.2,1.0", 0.598513, 7747, 0, 0 },
		{ 2, 3, 15, 150, FRR_SIM_RR, "const:100", "persistent:1,3",
		  0.38322, 6330, 60, 981 },
		/* re-recorded when lb-bsp took the runtime's plan (tails to
		 * the donor's helper group, item state shipped; it gave any
		 * worker any share before: 0.286631 s, 255 events) */
		{ 2, 3, 15, 150, FRR_SIM_LB_BSP, "const:100", "persistent:1,3",
		  0.290831, 328, 0, 1288 },
	};

	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		struct frr_sim_cost cost;
		struct frr_sim_cfg c = cfg(old[i].P, old[i].T, old[i].clocks,
					   (uint64_t)old[i].items);
		struct frr_sim_result a, b;

		cr_assert_eq(frr_sim_cost_parse(old[i].cost, c.items, &cost),
			     0);
		c.cost = &cost;
		run(&c, old[i].mode, old[i].pattern, &a);
		cr_assert(fabs(a.time_s - old[i].time_s) < 6e-7,
			  "%s: %.6f s, before links %.6f s",
			  frr_sim_mode_names[old[i].mode], a.time_s,
			  old[i].time_s);
		cr_assert_eq(a.events, old[i].events, "%s: events",
			     frr_sim_mode_names[old[i].mode]);
		cr_assert_eq(a.rr[FRR_SIM_OFFERS], old[i].offers);
		cr_assert_eq(a.rr[FRR_SIM_MOVED], old[i].moved);
		cr_assert_eq(frr_sim_model_parse("mf:5000,2000,16", &c.model),
			     0);
		run(&c, old[i].mode, old[i].pattern, &b);
		cr_assert_eq(a.time_s, b.time_s,
			     "a model without a link "
			     "changed the time");
		cr_assert_eq(a.events, b.events);
		cr_assert_gt(b.bytes_batch, 0);
		frr_sim_result_free(&a);
		frr_sim_result_free(&b);
		frr_sim_cost_free(&cost);
	}
}

/*
 * A small mf model whose every batch is one dense range per table and
 * shard: 3 ranks x 2 workers, U = 72 users (12 per partition, placed with
 * it: 24 on each rank, as table/place.c puts rows one rank declares),
 * I = 30 items (60 ratings a partition: every item; spread), rank 8.  Per
 * clock each worker sends each remote shard one chunk: slot header, the
 * items' segment, the seq word (its users are on its own rank); each owner
 * pushes the written range (the whole shard) of users to its standby rank
 * and every item (mf declares them all) to both other ranks, plus the
 * pushing and done words.  With rows spread as r % P (before the simulator
 * placed them as the runtime does) every batch also carried 4 users to
 * each remote shard and each owner pushed 8 users to the other rank.
 */
Test(sim, bytes_per_clock_of_a_small_mf_model_are_the_formula)
{
	const uint64_t P = 3, T = 2, W = 6, U = 72, I = 30, k = 8, C = 10;
	struct frr_sim_cfg c = cfg((int)P, (int)T, (int)C, 60);
	struct frr_sim_result r;
	uint64_t batch, push, row = k * sizeof(float);

	cr_assert_eq(frr_sim_model_parse("mf:72,30,8", &c.model), 0);
	run(&c, FRR_SIM_BSP, "none", &r);
	/* a partition's users live on its rank (table/place.c): a batch to
	 * a remote shard carries items only, and a rank's users are pushed
	 * to its standby alone */
	batch = W * (P - 1) *
		(FRR_SLOT_HDR + frr_seg_bytes(FRR_SEG_DENSE, I / P, k) + 8);
	push = P * ((U / P) * row + (I / P) * row) /* to the standby */
	       + P * ((I / P) * row)		   /* the other */
	       + P * (P - 1) * 16;
	cr_assert_eq(r.bytes_batch, C * batch, "batches %llu, formula %llu",
		     (unsigned long long)r.bytes_batch,
		     (unsigned long long)(C * batch));
	cr_assert_eq(r.bytes_push, C * push, "pushes %llu, formula %llu",
		     (unsigned long long)r.bytes_push,
		     (unsigned long long)(C * push));
	cr_assert_eq(r.bytes_ctl, 0, "bsp sends no control words (link off)");
	frr_sim_result_free(&r);
}

/* The three runs of the on-use tests: `base` (no helpers), flexrr with
 * helpees' rows on use, and flexrr with them from the start; their
 * results in r[0..2] (free with free3). */
static void three_runs(struct frr_sim_cfg c, int base, const char *spec,
		       struct frr_sim_result r[3])
{
	run(&c, base, spec, &r[0]);
	run(&c, FRR_SIM_FLEXRR, spec, &r[1]);
	c.rr_rows_from_start = 1;
	run(&c, FRR_SIM_FLEXRR, spec, &r[2]);
}

static void free3(struct frr_sim_result r[3])
{
	for (int i = 0; i < 3; i++)
		frr_sim_result_free(&r[i]);
}

/*
 * Helpees' rows on use (table/hold.c): the same model over 4 ranks of one
 * worker, flexrr without stragglers (nothing reassigned).  A rank may help
 * the 3 others (the group), the one before it being its standby anyway:
 * with the rows pushed from the start (--rr-rows-from-start) each owner
 * also pushes its 18 users to the 2 other ranks every clock; on use, while
 * no range is reassigned, the pushes are BSP's to the byte.
 */
Test(sim, helpees_rows_are_pushed_once_used)
{
	const uint64_t P = 4, U = 72, k = 8, C = 10;
	struct frr_sim_cfg c = cfg((int)P, 1, (int)C, 60);
	struct frr_sim_result r[3], b, on, fs;
	uint64_t row = k * sizeof(float);

	cr_assert_eq(frr_sim_model_parse("mf:72,30,8", &c.model), 0);
	three_runs(c, FRR_SIM_BSP, "none", r);
	b = r[0], on = r[1], fs = r[2];
	cr_assert_eq(on.rr[FRR_SIM_MOVED], 0, "%llu items reassigned",
		     (unsigned long long)on.rr[FRR_SIM_MOVED]);
	cr_assert_eq(fs.rr[FRR_SIM_MOVED], 0);
	cr_assert_eq(on.bytes_push, b.bytes_push, "on use %llu, bsp %llu",
		     (unsigned long long)on.bytes_push,
		     (unsigned long long)b.bytes_push);
	cr_assert_eq(fs.bytes_push, b.bytes_push + C * P * 2 * (U / P) * row,
		     "from the start %llu, bsp %llu",
		     (unsigned long long)fs.bytes_push,
		     (unsigned long long)b.bytes_push);
	free3(r);
}

/*
 * Wakes per owner and helpee rank: lda over 4 ranks of one worker, worker
 * 0 four times slower all along, so its helpers (the 3 others) run ranges
 * of rank 0's partition only and wake, from every owner, the rows rank 0
 * declares, never those only the other helpees declare.  They are pushed
 * fewer bytes than every helpee's rows from the start, although each
 * wake's rows also go once more with the owner's next push; a wake of all
 * of an owner's helpee rows (the rule before 2026-12-07 12:00) came to
 * more than from the start.
 */
Test(sim, a_helper_is_pushed_only_its_helpees_rows)
{
	struct frr_sim_cfg c = cfg(4, 1, 10, 200);
	struct frr_sim_result r[3], b, on, fs;

	cr_assert_eq(frr_sim_model_parse("lda:2000,20", &c.model), 0);
	c.slack = 1;
	c.seed = 1;
	three_runs(c, FRR_SIM_SSP, "persistent:0,4", r);
	b = r[0], on = r[1], fs = r[2];
	cr_assert_gt(on.rr[FRR_SIM_MOVED], 0, "nothing reassigned");
	cr_assert_eq(on.rr[FRR_SIM_MOVED], fs.rr[FRR_SIM_MOVED]);
	cr_assert_gt(on.bytes_push, b.bytes_push,
		     "no helpee's rows pushed: on use %llu, ssp %llu",
		     (unsigned long long)on.bytes_push,
		     (unsigned long long)b.bytes_push);
	cr_assert_lt(on.bytes_push, fs.bytes_push,
		     "on use %llu, from the start %llu",
		     (unsigned long long)on.bytes_push,
		     (unsigned long long)fs.bytes_push);
	free3(r);
}

/*
 * The same model in the dense plane of before issue 21 (--plane dense):
 * rows on r % P, so each batch carries its partition's 4 users on each
 * remote shard beside the shard's 10 items, one dense range per table in
 * one chunk; every rank holds every row, so each owner pushes its 24 users
 * and 10 items to both other ranks.
 */
Test(sim, bytes_per_clock_of_the_dense_plane_are_the_formula)
{
	const uint64_t P = 3, W = 6, U = 72, I = 30, k = 8, C = 10;
	struct frr_sim_cfg c = cfg((int)P, 2, (int)C, 60);
	struct frr_sim_result r;
	uint64_t batch, push, row = k * sizeof(float);

	cr_assert_eq(frr_sim_model_parse("mf:72,30,8", &c.model), 0);
	c.dense_plane = 1;
	run(&c, FRR_SIM_BSP, "none", &r);
	batch = W * (P - 1) *
		(FRR_SLOT_HDR + frr_seg_bytes(FRR_SEG_DENSE, U / W / P, k) +
		 frr_seg_bytes(FRR_SEG_DENSE, I / P, k) + 8);
	push = P * (P - 1) * ((U / P + I / P) * row + 16);
	cr_assert_eq(r.bytes_batch, C * batch, "batches %llu, formula %llu",
		     (unsigned long long)r.bytes_batch,
		     (unsigned long long)(C * batch));
	cr_assert_eq(r.bytes_push, C * push, "pushes %llu, formula %llu",
		     (unsigned long long)r.bytes_push,
		     (unsigned long long)(C * push));
	frr_sim_result_free(&r);
}

/* On a link of bandwidth B (no per-message cost), a BSP clock of 2 x 1
 * workers is longer than on an unlimited link by a worker's batch / B plus
 * an owner's push / B (each on its own NIC, at the same time). */
Test(sim, a_slow_link_makes_a_clock_longer_by_its_bytes)
{
	const double B = 1e8; /* 0.8 Gb/s */
	struct frr_sim_cfg c = cfg(2, 1, 10, 400);
	struct frr_sim_result fast, slow;
	double extra, want, per_worker, per_push;

	cr_assert_eq(frr_sim_model_parse("mf:2000,500,16", &c.model), 0);
	c.poll_s = 0; /* wake-ups at once: no rounding to the naps */
	c.link = (struct frr_sim_link){ .on = 1 };
	run(&c, FRR_SIM_BSP, "none", &fast);
	c.link = (struct frr_sim_link){ .on = 1, .tx_Bps = B, .rx_Bps = B };
	run(&c, FRR_SIM_BSP, "none", &slow);
	cr_assert_eq(fast.bytes_batch, slow.bytes_batch);
	per_worker = (double)slow.bytes_batch / (c.clocks * 2);
	per_push = (double)slow.bytes_push / (c.clocks * 2);
	want = (per_worker + per_push) / B;
	extra = (slow.time_s - fast.time_s) / c.clocks;
	cr_assert(want > 1e-4, "the model moves too little: %.3g s", want);
	cr_assert(fabs(extra - want) < 0.01 * want,
		  "a clock took %.6f s longer, bytes / bandwidth = %.6f s",
		  extra, want);
	cr_assert(slow.comm_mean > fast.comm_mean && slow.comm_max <= 1,
		  "communication share %.4f (unlimited: %.4f)", slow.comm_mean,
		  fast.comm_mean);
	frr_sim_result_free(&fast);
	frr_sim_result_free(&slow);
}

/*
 * Control words (sim_net.c sim_ctl_send): a worker posts its progress
 * words on its own lane, as the runtime does since 2026-12-07 (core/ctl.c),
 * not behind the other threads' batches nor the server's push.  mf over
 * 4 x 4 workers on a slow link, flexrr with nothing reassigned (threshold
 * 1): a clock is SSP's but for the words' own costs.  Under the rank's
 * transport lock (--ctl-shared, the runtime before) the workers wait for
 * the server to post its pushes; until 2026-12-07 the simulator also made
 * them wait FIFO behind every batch queued on the NIC (1.57x SSP here).
 */
Test(sim, progress_words_wait_for_nothing_on_the_lanes)
{
	struct frr_sim_cost cost = { .kind = FRR_SIM_COST_CONST, .a = 5e-6 };
	struct frr_sim_cfg c = cfg(4, 4, 10, 2000);
	struct frr_sim_result r;
	double ssp, lanes, locked;

	c.cost = &cost;
	c.rr_threshold = 1.0;
	cr_assert_eq(frr_sim_model_parse("mf:20000,2000,16", &c.model), 0);
	cr_assert_eq(frr_sim_link_preset("softroce", &c.link, &c.lat_s), 0);
	ssp = run(&c, FRR_SIM_SSP, "none", NULL);
	lanes = run(&c, FRR_SIM_FLEXRR, "none", &r);
	cr_assert_eq(r.rr[FRR_SIM_MOVED], 0, "%llu items reassigned",
		     (unsigned long long)r.rr[FRR_SIM_MOVED]);
	cr_assert(r.bytes_ctl > 0, "flexrr sent no control words");
	frr_sim_result_free(&r);
	cr_assert(lanes >= ssp && lanes < 1.01 * ssp,
		  "on the lanes %.4f s, ssp %.4f s", lanes, ssp);
	c.ctl_shared = 1;
	locked = run(&c, FRR_SIM_FLEXRR, "none", NULL);
	cr_assert(locked > 1.2 * ssp && locked < 1.5 * ssp,
		  "behind the pushes %.4f s, ssp %.4f s", locked, ssp);
}

/*
 * --rr-link-weight (a what-if of the simulator's engine, not the
 * runtime's): a worker that spent most of its last clock waiting and
 * flushing offers only to a helper ahead by more, so on a link that sets
 * the pace (4 x 4 mf on softroce, slow-worker) fewer items move and
 * their help batches no longer lengthen the clock; without a link the
 * weight changes next to nothing (that side is in docs/simulator.md).
 */
Test(sim, a_link_weight_keeps_link_delayed_workers_items)
{
	struct frr_sim_cost cost = { .kind = FRR_SIM_COST_CONST, .a = 5e-6 };
	struct frr_sim_cfg c = cfg(4, 4, 10, 2000);
	struct frr_sim_result blind, aware;

	c.cost = &cost;
	cr_assert_eq(frr_sim_model_parse("mf:20000,2000,16", &c.model), 0);
	cr_assert_eq(frr_sim_link_preset("softroce", &c.link, &c.lat_s), 0);
	run(&c, FRR_SIM_FLEXRR, "slow-worker:0.1,1.0", &blind);
	c.rr_link_weight = 2;
	run(&c, FRR_SIM_FLEXRR, "slow-worker:0.1,1.0", &aware);
	cr_assert(aware.rr[FRR_SIM_MOVED] < blind.rr[FRR_SIM_MOVED] / 2,
		  "items reassigned: %llu with the weight, %llu without",
		  (unsigned long long)aware.rr[FRR_SIM_MOVED],
		  (unsigned long long)blind.rr[FRR_SIM_MOVED]);
	cr_assert(aware.time_s < 0.95 * blind.time_s,
		  "%.4f s with the weight, %.4f s without", aware.time_s,
		  blind.time_s);
	frr_sim_result_free(&blind);
	frr_sim_result_free(&aware);
}

/* The runtime's CPU per byte (--flush-ns-per-byte, --apply-ns-per-byte):
 * on an unlimited link a BSP clock of 2 x 1 workers grows by a worker's
 * batch x the flush's cost plus (the batch its shard took in + its push)
 * x the apply's (the two ranks' batches and pushes are alike). */
Test(sim, cpu_per_byte_makes_a_clock_longer_by_its_bytes)
{
	const double F = 2e-9, A = 1e-9;
	struct frr_sim_cfg c = cfg(2, 1, 10, 400);
	struct frr_sim_result fast, slow;
	double extra, want, per_worker, per_push;

	cr_assert_eq(frr_sim_model_parse("mf:2000,500,16", &c.model), 0);
	c.poll_s = 0;
	c.link = (struct frr_sim_link){ .on = 1 };
	run(&c, FRR_SIM_BSP, "none", &fast);
	c.link.flush_s_B = F;
	c.link.apply_s_B = A;
	run(&c, FRR_SIM_BSP, "none", &slow);
	per_worker = (double)slow.bytes_batch / (c.clocks * 2);
	per_push = (double)slow.bytes_push / (c.clocks * 2);
	want = per_worker * F + (per_worker + per_push) * A;
	extra = (slow.time_s - fast.time_s) / c.clocks;
	cr_assert(want > 1e-5, "the model moves too little: %.3g s", want);
	cr_assert(fabs(extra - want) < 0.02 * want,
		  "a clock took %.6f s longer, bytes x per-byte costs = %.6f s",
		  extra, want);
	frr_sim_result_free(&fast);
	frr_sim_result_free(&slow);
}

/*
 * Eight ranks of one worker, every batch to every shard: a sender waits
 * for each shard's receiver in turn, in virtual time, so the clock grows
 * by a worker's batch and a rank's push over the bandwidth.  Each rank's
 * batch starts at the next rank's shard (frr_batch_dest, as table/batch.c
 * sends them), so no receiver has two senders at once: 1.00x here; when
 * every batch started at shard 0 the last in that queue took up to twice
 * its batch (1.35x), and when a batch booked every receiver at its start,
 * each sender queued behind the others' whole batches, P times as long.
 */
Test(sim, many_senders_share_the_receivers_without_a_convoy)
{
	const double B = 1e8;
	struct frr_sim_cfg c = cfg(8, 1, 10, 2400);
	struct frr_sim_result fast, slow;
	double extra, want;

	cr_assert_eq(frr_sim_model_parse("mf:7200,2400,32", &c.model), 0);
	c.poll_s = 0;
	c.link = (struct frr_sim_link){ .on = 1 };
	run(&c, FRR_SIM_BSP, "none", &fast);
	c.link = (struct frr_sim_link){ .on = 1, .tx_Bps = B, .rx_Bps = B };
	run(&c, FRR_SIM_BSP, "none", &slow);
	want = ((double)slow.bytes_batch + (double)slow.bytes_push) /
	       (c.clocks * 8) / B;
	extra = (slow.time_s - fast.time_s) / c.clocks;
	cr_assert(extra >= 0.999 * want && extra <= 1.1 * want,
		  "a clock took %.6f s longer, a worker's batch and a rank's "
		  "push over the bandwidth %.6f s",
		  extra, want);
	frr_sim_result_free(&fast);
	frr_sim_result_free(&slow);
}

Test(sim, command_line_link_and_model)
{
	static struct rt_run r;

	char *ok[] = { (char *)rt_bin(),
		       "simulate",
		       "-n",
		       "3",
		       "-t",
		       "2",
		       "--clocks",
		       "5",
		       "--items",
		       "50",
		       "--modes",
		       "bsp,flexrr",
		       "--stragglers",
		       "none",
		       "--link",
		       "softroce",
		       "--model",
		       "lda:5000,50,20",
		       NULL };
	rt_exec(&r, ok, NULL, 60);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(strstr(r.out, "link softroce, model lda:5000,50,20") &&
		      strstr(r.out, "MB/clock") && strstr(r.out, "(25.00 us)"),
		  "%s", r.out);

	char *link[] = { (char *)rt_bin(), "simulate", "--link", "10gbe",
			 NULL };
	rt_exec(&r, link, NULL, 30);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "'10gbe': give hdr"), "%s", r.err);

	char *model[] = { (char *)rt_bin(), "simulate", "--model", "mf:100,20",
			  NULL };
	rt_exec(&r, model, NULL, 30);
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "model 'mf:100,20'"), "%s", r.err);
}
