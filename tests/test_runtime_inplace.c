// SPDX-License-Identifier: MIT
/*
 * Rows added in place (table/direct.c, docs/runtime.md "Rows only their
 * writer declares"), exact counts: the counting app with each partition
 * declaring its own cells (part_rows), so under SSP every cell is a row
 * only one partition declares and its worker adds to the shard in place;
 * 2 ranks x 2 threads, slack 1.
 *   - ssp: after the last clock (save_at, on the leader) every cell is
 *     exactly the clocks run;
 *   - flexrr with a 4x persistent straggler (worker 0): helpers run the
 *     tail of its list and their help batches write its cells, which its
 *     own worker also adds to in place (the partition's mutex orders the
 *     two): still every cell exactly the clocks run, every clock all items
 *     (the app fails the job otherwise), and items did move (the
 *     --metrics "rr_items_reassigned" column), so the help path ran.
 * With FLEXRR_DIRECT=0 the same counts hold through batches (the test
 * runs both).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "job.h"
#include "test_count_app.h"
#include "test_util.h"

TestSuite(runtime_inplace, .timeout = 600);

#define CLOCKS 6
#define NW 4 /* 2 ranks x 2 threads */

/* Partition p's cells: only it declares them. */
static int i_rows(void *app, int part, struct frr_rowset *rs)
{
	(void)app;
	return frr_rows_add(rs, 0, (uint64_t)part * COUNT_ITEMS, COUNT_ITEMS);
}

static const struct frr_app_ops inplace_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "inplacecount",
	.summary = "counts the runs of every item (tests)",
	.create = count_create,
	.destroy = count_destroy,
	.tables = count_tables,
	.load_partition = count_load,
	.process = count_process,
	.clock_global = count_global_all,
	.nstats = COUNT_ST_N,
	.save_at = count_save_exact,
	.part_rows = i_rows,
};

struct cfg {
	enum frr_tp_backend backend;
	enum frr_mode mode;
	char metrics[128];
};

static int job_main(struct frr_oob *oob, void *arg)
{
	struct cfg *j = arg;
	struct frr_rt_params o =
	    count_params(&inplace_app, j->backend, CLOCKS, j->metrics);

	o.mode = j->mode;
	o.slack = 1;
	return frr_rt_job_run(oob, &o) ? -EPROTO : 0;
}

/* Items moved to helpers over the run (--metrics). */
static double moved_items(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	double moved = 0;

	cr_assert_not_null(f, "%s missing", path);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert(strstr(line, ",rr_items_reassigned,"), "header: %s", line);
	while (fgets(line, sizeof(line), f)) {
		double col[COUNT_COLS];

		cr_assert_eq(count_metrics_row(line, col), COUNT_COLS,
			     "row: %s", line);
		moved += col[COUNT_COL_MOVED];
	}
	fclose(f);
	return moved;
}

static void run(enum frr_mode mode, const char *direct)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	setenv("FLEXRR_DIRECT", direct, 1);
	for (int b = 0; b < nb; b++) {
		struct cfg j = { .backend = bs[b], .mode = mode };

		snprintf(j.metrics, sizeof(j.metrics), "/tmp/inplace-%d.csv",
			 getpid());
		unlink(j.metrics);
		cr_assert_eq(frr_launch_local(2, job_main, &j, 180000), 0,
			     "%s, %s, FLEXRR_DIRECT=%s: the job failed or "
			     "counted wrong (messages above)",
			     frr_mode_name(mode), frr_tp_backend_name(bs[b]),
			     direct);
		if (mode == FRR_MODE_FLEXRR)
			cr_assert_gt(moved_items(j.metrics), 0,
				     "flexrr moved no item: the help path "
				     "did not run");
		unlink(j.metrics);
	}
	unsetenv("FLEXRR_DIRECT");
}

Test(runtime_inplace, ssp_counts_every_item_once)
{
	run(FRR_MODE_SSP, "1");
	run(FRR_MODE_SSP, "0");
}

Test(runtime_inplace, flexrr_helpers_and_owner_count_every_item_once)
{
	run(FRR_MODE_FLEXRR, "1");
	run(FRR_MODE_FLEXRR, "0");
}
