/* SPDX-License-Identifier: MIT */
/*
 * The counting app of the exact-accounting suites (test_runtime_backup,
 * test_runtime_lbbsp): COUNT_ITEMS items per partition; running item i of
 * partition p adds 1 to cell p x COUNT_ITEMS + i of table "count" (one
 * column, ADD), counts stat COUNT_ST_ITEMS and sleeps 300 us, so a 4x
 * straggler is slow enough for a plan or a cut to act.  Each suite brings
 * its own clock_global and save_at: what it checks differs.
 */
#ifndef FLEXRR_TEST_COUNT_APP_H
#define FLEXRR_TEST_COUNT_APP_H

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "flexrr/flexrr.h"

#define COUNT_ITEMS 48

enum { COUNT_ST_ITEMS, COUNT_ST_N };

struct count_app {
	struct frr_job_info job;
	double ran; /* leader: items run, summed over the clocks */
};

static int count_create(const struct frr_job_info *job, int argc, char **argv,
			void **app)
{
	struct count_app *a = calloc(1, sizeof(*a));

	(void)argc, (void)argv;
	if (!a)
		return -ENOMEM;
	a->job = *job;
	*app = a;
	return 0;
}

static void count_destroy(void *app)
{
	free(app);
}

static int count_tables(void *app, struct frr_table_spec *s, int max)
{
	struct count_app *a = app;

	(void)max;
	s[0] = (struct frr_table_spec){ .name = "count",
					.rows = (uint64_t)a->job.nparts *
						COUNT_ITEMS,
					.cols = 1,
					.rule = FRR_UPDATE_ADD };
	return 1;
}

static int count_load(void *app, int part, uint64_t *n, void **data)
{
	(void)app, (void)part;
	*n = COUNT_ITEMS;
	*data = NULL;
	return 0;
}

static int count_process(void *app, struct frr_ctx *c, uint64_t begin,
			 uint64_t end)
{
	uint64_t base = (uint64_t)frr_part_index(c) * COUNT_ITEMS;
	struct timespec ts = { 0, 300 * 1000 };

	(void)app;
	for (uint64_t i = begin; i < end; i++) {
		frr_cell_update(c, 0, base + i, 0, 1);
		frr_stat_add(c, COUNT_ST_ITEMS, 1);
		nanosleep(&ts, NULL);
	}
	return 0;
}

#endif /* FLEXRR_TEST_COUNT_APP_H */
