/* SPDX-License-Identifier: MIT */
/*
 * The counting app of the exact-accounting suites (test_runtime_backup,
 * test_runtime_lbbsp): COUNT_ITEMS items per partition; running item i of
 * partition p adds 1 to cell p x COUNT_ITEMS + i of table "count" (one
 * column, ADD), counts stat COUNT_ST_ITEMS and sleeps 300 us, so a 4x
 * straggler is slow enough for a plan or a cut to act.  Each suite brings
 * its own clock_global and save_at (count_cells_check, exact or not) and
 * reads its --metrics rows with count_metrics_row.
 */
#ifndef FLEXRR_TEST_COUNT_APP_H
#define FLEXRR_TEST_COUNT_APP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "job.h"

#define COUNT_ITEMS 48

enum { COUNT_ST_ITEMS, COUNT_ST_N };

struct count_app {
	struct frr_job_info job;
	double ran; /* leader: items run, summed over the clocks */
};

static inline int count_create(const struct frr_job_info *job, int argc,
			       char **argv, void **app)
{
	struct count_app *a = calloc(1, sizeof(*a));

	(void)argc, (void)argv;
	if (!a)
		return -ENOMEM;
	a->job = *job;
	*app = a;
	return 0;
}

static inline void count_destroy(void *app)
{
	free(app);
}

static inline int count_tables(void *app, struct frr_table_spec *s, int max)
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

static inline int count_load(void *app, int part, uint64_t *n, void **data)
{
	(void)app, (void)part;
	*n = COUNT_ITEMS;
	*data = NULL;
	return 0;
}

static inline int count_process(void *app, struct frr_ctx *c, uint64_t begin,
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

/* After clock 'clock' (save_at, on the leader): every cell of "count" is a
 * whole number of runs, exactly clock + 1 when exact (every item ran once
 * a clock), else at most that (a cut may drop an item); and the cells sum
 * to the items run.  0, or -EPROTO (said). */
static inline int count_cells_check(const struct count_app *a,
				    struct frr_eval_ctx *ec, int clock,
				    int exact)
{
	double sum = 0;

	for (uint64_t r = 0; r < (uint64_t)a->job.nparts * COUNT_ITEMS; r++) {
		float v;

		frr_eval_row_read(ec, 0, r, &v);
		if (exact ? v != (float)(clock + 1)
			  : v < 0 || v > (float)(clock + 1) ||
				v != (float)(int)v) {
			frr_err("cell %llu is %g after %d clocks%s",
				(unsigned long long)r, (double)v, clock + 1,
				exact ? ": an item ran twice or never in a "
					"clock"
				      : "");
			return -EPROTO;
		}
		sum += v;
	}
	if (sum != a->ran) {
		frr_err("the cells sum to %.0f, but %.0f items ran", sum,
			a->ran);
		return -EPROTO;
	}
	return 0;
}

/* clock_global of the exact suites: every clock ran every item of the job
 * (the stat summed over the workers), else the job fails. */
static inline int count_global_all(void *app, const double *st, int nstats,
				   int clock, double *objective, char *metrics,
				   size_t len)
{
	struct count_app *a = app;

	(void)nstats;
	if (st[COUNT_ST_ITEMS] != (double)a->job.nparts * COUNT_ITEMS) {
		frr_err("clock %d ran %.0f items of %d", clock,
			st[COUNT_ST_ITEMS], a->job.nparts * COUNT_ITEMS);
		return -EPROTO;
	}
	a->ran += st[COUNT_ST_ITEMS];
	*objective = st[COUNT_ST_ITEMS];
	snprintf(metrics, len, "ran=%.0f", a->ran);
	return 0;
}

/* save_at of the exact suites: every cell is the clocks run, exactly. */
static inline int count_save_exact(void *app, struct frr_eval_ctx *ec,
				   const char *path, int clock)
{
	(void)path;
	return count_cells_check(app, ec, clock, 1);
}

/* The exact suites' job, on each rank: 2 threads, seed 3, quiet, their
 * --metrics file, --save (the leader's save_at checks the cells), worker
 * 0 a 4x persistent straggler; each suite sets its mode and what that
 * mode needs. */
static inline struct frr_rt_params count_params(const struct frr_app_ops *app,
						enum frr_tp_backend b,
						int clocks, const char *metrics)
{
	static char *argv[2];

	argv[0] = (char *)app->name;
	return (struct frr_rt_params){
		.threads = 2,
		.backend = b,
		.clocks = clocks,
		.seed = 3,
		.quiet = 1,
		.metrics_path = metrics,
		.save_path = "unused",
		.timeout_ms = 20000,
		.dead_ms = 5000,
		.delay_worker = -1,
		.rr = { .stragglers = "persistent:0,4" },
		.app = app,
		.app_argc = 1,
		.app_argv = argv,
	};
}

/* A row of the --metrics file (2 ranks x 2 threads): its COUNT_COLS
 * numbers; the count read (COUNT_COLS when whole). */
#define COUNT_COLS 18
#define COUNT_COL_UPDATES 6 /* items run */
#define COUNT_COL_MOVED 13  /* rr_items_reassigned */
#define COUNT_COL_DROPPED 17
static inline int count_metrics_row(const char *line, double col[COUNT_COLS])
{
	const char *p = line;
	int n = 0;

	while (n < COUNT_COLS && p) {
		col[n++] = atof(p);
		if ((p = strchr(p, ',')))
			p++;
	}
	return n;
}

#endif /* FLEXRR_TEST_COUNT_APP_H */
