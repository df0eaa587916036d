// SPDX-License-Identifier: MIT
/*
 * --mode backup (BSP with backup workers) through the real runtime and
 * transports, 2 ranks x 2 threads, a counting app and exact accounting:
 *   - table "count" has one cell per item of every worker; running an item
 *     adds 1 to its cell, so a cell ends at the number of clocks its item
 *     ran, at most the job's clocks;
 *   - every clock, the items run (the app's stat, summed) plus the items
 *     the cut dropped (the --metrics file's "dropped") are every item of
 *     the job: per worker, its "updates" (one per item run) plus its
 *     "dropped" equal its partition's items; at most --backups workers of
 *     a clock dropped any;
 *   - after the last clock (save_at, on the leader) the cells sum to the
 *     items run over all clocks.
 * A persistent straggler (4x) makes the cut happen; whether it catches the
 * straggler before its list ends depends on timing, so a run that dropped
 * nothing is repeated (each run must account exactly).
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
#include "test_count_app.h"
#include "test_util.h"

TestSuite(runtime_backup, .timeout = 600);

#define CLOCKS 5
#define NW 4 /* 2 ranks x 2 threads */

static int b_global(void *app, const double *st, int nstats, int clock,
		    double *objective, char *metrics, size_t len)
{
	struct count_app *a = app;

	(void)nstats, (void)clock;
	a->ran += st[COUNT_ST_ITEMS];
	*objective = st[COUNT_ST_ITEMS];
	snprintf(metrics, len, "ran=%.0f", a->ran);
	return 0;
}

/* Every cell in [0, clocks] and whole; their sum is the items run. */
static int b_save_at(void *app, struct frr_eval_ctx *ec, const char *path,
		     int clock)
{
	(void)path;
	return count_cells_check(app, ec, clock, 0);
}

static const struct frr_app_ops backup_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "backupcount",
	.summary = "counts the items a backup cut lets run (tests)",
	.create = count_create,
	.destroy = count_destroy,
	.tables = count_tables,
	.load_partition = count_load,
	.process = count_process,
	.clock_global = b_global,
	.nstats = COUNT_ST_N,
	.save_at = b_save_at,
};

struct cfg {
	enum frr_tp_backend backend;
	uint64_t seed;
	int backups;
	char metrics[128];
};

static int job_main(struct frr_oob *oob, void *arg)
{
	struct cfg *j = arg;
	struct frr_rt_params o =
	    count_params(&backup_app, j->backend, CLOCKS, j->metrics);

	o.mode = FRR_MODE_BACKUP;
	o.backups = j->backups;
	o.seed += j->seed;
	o.rr.group_size = 1;
	o.rr.threshold = 0.2;
	o.rr.min_share = 0.05;
	o.rr.report_interval = 16;
	return frr_rt_job_run(oob, &o) ? -EPROTO : 0;
}

/* The metrics file's accounting (see the top): the items dropped. */
static double check_metrics(const char *path, int backups)
{
	int cut[CLOCKS] = { 0 }, rows = 0;
	FILE *f = fopen(path, "r");
	char line[512];
	double dropped = 0;

	cr_assert_not_null(f, "%s missing", path);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert(strstr(line, ",dropped\n"), "header: %s", line);
	while (fgets(line, sizeof(line), f)) {
		double col[COUNT_COLS];

		cr_assert_eq(count_metrics_row(line, col), COUNT_COLS,
			     "row: %s", line);
		cr_assert(col[0] >= 0 && col[0] < CLOCKS, "%s", line);
		/* updates (one per item run) + dropped = the partition */
		cr_assert_eq(col[COUNT_COL_UPDATES] + col[COUNT_COL_DROPPED],
			     COUNT_ITEMS,
			     "worker %.0f clock %.0f ran %.0f items and "
			     "dropped %.0f of %d",
			     col[1], col[0], col[COUNT_COL_UPDATES],
			     col[COUNT_COL_DROPPED], COUNT_ITEMS);
		cut[(int)col[0]] += col[COUNT_COL_DROPPED] > 0;
		dropped += col[COUNT_COL_DROPPED];
		rows++;
	}
	fclose(f);
	cr_assert_eq(rows, CLOCKS * NW);
	for (int c = 0; c < CLOCKS; c++)
		cr_assert_leq(cut[c], backups,
			      "clock %d: %d workers dropped items, %d backups",
			      c, cut[c], backups);
	return dropped;
}

static void run_backup(int backups)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	for (int b = 0; b < nb; b++) {
		struct cfg j = { .backend = bs[b], .backups = backups };
		double dropped = 0;

		snprintf(j.metrics, sizeof(j.metrics), "/tmp/backup-%d.csv",
			 getpid());
		for (j.seed = 0; j.seed < 6 && dropped <= 0; j.seed++) {
			unlink(j.metrics);
			cr_assert_eq(frr_launch_local(2, job_main, &j, 180000),
				     0,
				     "%s: the backup job failed or counted "
				     "wrong (messages above)",
				     frr_tp_backend_name(bs[b]));
			dropped =
			    check_metrics(j.metrics, backups ? backups : 1);
		}
		unlink(j.metrics);
		cr_assert_gt(dropped, 0,
			     "%s: a 4x straggler was never cut in %llu runs: "
			     "the test proves nothing",
			     frr_tp_backend_name(bs[b]),
			     (unsigned long long)j.seed);
	}
}

/* The default: 5% of 4 workers, at least 1. */
Test(runtime_backup, one_backup_accounts_exactly)
{
	run_backup(0);
}

Test(runtime_backup, two_backups_account_exactly)
{
	run_backup(2);
}

/* A job that learns its size only at the start (PMIx) is checked there:
 * as many backups as workers fail it, never run as BSP unnoticed. */
Test(runtime_backup, as_many_backups_as_workers_fail_the_job)
{
	struct cfg j = { .backend = FRR_TP_BACKEND_SHM, .backups = NW };

	snprintf(j.metrics, sizeof(j.metrics), "/tmp/backup-%d.csv", getpid());
	cr_assert_neq(frr_launch_local(2, job_main, &j, 60000), 0,
		      "a job with %d backups of %d workers ran", NW, NW);
	unlink(j.metrics);
}
