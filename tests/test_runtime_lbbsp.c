// SPDX-License-Identifier: MIT
/*
 * --mode lb-bsp (BSP with lists balanced up front, rr/lb.c) through the real
 * runtime and transports, 2 ranks x 2 threads, a counting app, exact counts:
 *   - table "count" has one cell per item of every worker; running an item
 *     adds 1 to it, so after the last clock (save_at, on the leader) every
 *     cell is exactly the clocks run: no item ran twice or never in a clock,
 *     however the plans moved the tails;
 *   - every clock the items run (the app's stat, summed over the workers)
 *     are every item of the job (the app fails the job otherwise);
 *   - the --metrics file: per clock the workers' "updates" (one per item
 *     run) sum to the job's items; clock 0 moves nothing (no speed
 *     measured yet); from clock 1 on the 4x straggler (worker 0) gives a
 *     tail away every clock ("rr_items_reassigned", lb-bsp's moved items)
 *     and runs the rest of its list itself (updates + moved = its items).
 * Each rank plans on its own from the item times the final batches carry:
 * a plan that differed between ranks would run items twice or never.
 * The command line: the progress line's and summary's moved counts, and the
 * refusals.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "job.h"
#include "test_runtime_util.h"
#include "test_count_app.h"
#include "test_util.h"

TestSuite(runtime_lbbsp, .timeout = 600);

#define CLOCKS 6
#define NW 4 /* 2 ranks x 2 threads */

static const struct frr_app_ops lb_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "lbcount",
	.summary = "counts the runs of every item (tests)",
	.create = count_create,
	.destroy = count_destroy,
	.tables = count_tables,
	.load_partition = count_load,
	.process = count_process,
	.clock_global = count_global_all,
	.nstats = COUNT_ST_N,
	.save_at = count_save_exact,
};

struct cfg {
	enum frr_tp_backend backend;
	int history;
	char metrics[128];
};

static int job_main(struct frr_oob *oob, void *arg)
{
	struct cfg *j = arg;
	struct frr_rt_params o =
	    count_params(&lb_app, j->backend, CLOCKS, j->metrics);

	o.mode = FRR_MODE_LB_BSP;
	o.lb_history = j->history;
	return frr_rt_job_run(oob, &o) ? -EPROTO : 0;
}

/* The metrics file's accounting (see the top). */
static void check_metrics(const char *path)
{
	double ran[CLOCKS] = { 0 }, moved[CLOCKS] = { 0 };
	FILE *f = fopen(path, "r");
	char line[512];
	int rows = 0;

	cr_assert_not_null(f, "%s missing", path);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert(strstr(line, ",updates,") &&
		      strstr(line, ",rr_items_reassigned,"),
		  "header: %s", line);
	while (fgets(line, sizeof(line), f)) {
		double col[COUNT_COLS];
		int c;

		cr_assert_eq(count_metrics_row(line, col), COUNT_COLS,
			     "row: %s", line);
		c = (int)col[0];
		cr_assert(c >= 0 && c < CLOCKS, "%s", line);
		ran[c] += col[COUNT_COL_UPDATES];
		moved[c] += col[COUNT_COL_MOVED];
		if (col[1] == 0 && c > 0) {
			/* the straggler: a tail given away, the rest run */
			cr_assert_gt(col[COUNT_COL_MOVED], 0,
				     "clock %d: the 4x straggler kept its "
				     "whole list",
				     c);
			cr_assert_eq(col[COUNT_COL_UPDATES] +
					 col[COUNT_COL_MOVED],
				     COUNT_ITEMS,
				     "clock %d: the straggler ran %.0f items "
				     "and gave %.0f of %d",
				     c, col[COUNT_COL_UPDATES],
				     col[COUNT_COL_MOVED], COUNT_ITEMS);
		}
		rows++;
	}
	fclose(f);
	cr_assert_eq(rows, CLOCKS * NW);
	cr_assert_eq(moved[0], 0, "clock 0 moved %.0f items", moved[0]);
	for (int c = 0; c < CLOCKS; c++)
		cr_assert_eq(ran[c], NW * COUNT_ITEMS,
			     "clock %d ran %.0f items", c, ran[c]);
}

static void run_lb(int history)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	for (int b = 0; b < nb; b++) {
		struct cfg j = { .backend = bs[b], .history = history };

		snprintf(j.metrics, sizeof(j.metrics), "/tmp/lbbsp-%d.csv",
			 getpid());
		unlink(j.metrics);
		cr_assert_eq(frr_launch_local(2, job_main, &j, 180000), 0,
			     "%s: the lb-bsp job failed or counted wrong "
			     "(messages above)",
			     frr_tp_backend_name(bs[b]));
		check_metrics(j.metrics);
		unlink(j.metrics);
	}
}

/* The default history (3 clocks). */
Test(runtime_lbbsp, every_item_runs_once_per_clock)
{
	run_lb(0);
}

/* One clock of history: the plan follows the last clock alone. */
Test(runtime_lbbsp, history_of_one_clock_counts_exactly)
{
	run_lb(1);
}

/* From the command line: moved items per clock and in the summary; what
 * cannot work is a usage error said once. */
Test(runtime_lbbsp, cli_reports_and_refuses)
{
	static const struct {
		const char *a[4], *msg;
	} bad[] = {
		{ { "--seed", "3", "--lb-history", "2" },
		  "--lb-history is for --mode lb-bsp" },
		{ { "--mode", "lb-bsp", "--slack", "1" },
		  "--mode lb-bsp has slack 0" },
		{ { "--mode", "lb-bsp", "--lb-history", "65" }, "lb-history" },
	};
	struct rt_run *r = calloc(1, sizeof(*r));
	struct rt_argv a;

	rt_run_argv(&a, 2, 2, "shm", "--mode", "lb-bsp", "--clocks", "3",
		    "--stragglers", "persistent:0,4", "toy");
	rt_exec(r, a.v, NULL, 60);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert_eq(rt_count(r->err, " moved="), 3, "%s", r->err);
	cr_assert(strstr(r->out, "mode=lb-bsp") &&
		      strstr(r->out, " lb_history=3 moved=") &&
		      strstr(r->out, " moved_share="),
		  "%s", r->out);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rt_run_argv(&a, 2, 2, "shm", bad[i].a[0], bad[i].a[1],
			    bad[i].a[2], bad[i].a[3], "toy");
		rt_exec(r, a.v, NULL, 60);
		RT_ASSERT_USAGE_ERROR(r, bad[i].msg);
	}
	/* more helpers than a group holds: refused as rr refuses it (it was
	 * clamped to 16 silently) */
	rt_run_argv(&a, 2, 2, "shm", "--mode", "lb-bsp", "--rr-group", "20",
		    "toy");
	rt_exec(r, a.v, NULL, 60);
	cr_assert_neq(r->code, 0, "--rr-group 20 ran: %s", r->out);
	cr_assert(strstr(r->err, "--rr-group 20: at most 16 helpers"), "%s",
		  r->err);
	free(r);
}
