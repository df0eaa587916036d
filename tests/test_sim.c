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
	cr_assert_gt(r.rr[3], 0, "no item was reassigned");
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
	cr_assert_eq(a.rr[0], b.rr[0]);
	cr_assert_eq(a.rr[3], b.rr[3]);
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
	cr_assert_gt(r.rr[0], (uint64_t)c.clocks,
		     "%llu offers in %d clocks: no helper got a second one",
		     (unsigned long long)r.rr[0], c.clocks);
	cr_assert_leq(r.time_s, r.bound_s * 1.15,
		      "flexrr %.4f s, balanced bound %.4f s", r.time_s,
		      r.bound_s);
	frr_sim_result_free(&r);
}
