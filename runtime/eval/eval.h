/* SPDX-License-Identifier: MIT */
/*
 * Evaluation (eval/): the app's clock_local and its context, every rank's
 * stats record of a clock to rank 0, clock_global, the progress line, the
 * metrics file and the summary line (docs/runtime.md "Evaluation").  Above
 * worker/; the job (job/) calls it from the server loop.
 */
#ifndef FLEXRR_RUNTIME_EVAL_H
#define FLEXRR_RUNTIME_EVAL_H

#include <stdio.h>

#include "core.h"
#include "stats.h"

/* A rank's evaluation state (rt->ev). */
struct frr_evals {
	int next_eval, next_global;
	double last_global_t;
	double objective;
	char metrics[512];
	FILE *metrics_f;
	int metrics_json;
	double *stats_copy;   /* rank 0: a rank's stats record (stats.h) */
	uint64_t dropped_sum; /* rank 0: items dropped in the job */
	uint64_t moved_sum;   /* rank 0: lb-bsp's items run by a helper */
	/* a recovered job: from its previous run's failure to its first
	 * clock (prm->recover_t0) */
	double recovery_s;
	/* a recovered job: the highest app clock started when its previous
	 * run failed (-1: none), and the clocks started before the failure
	 * that ran again (job.c rerun_agree) */
	int failed_at, rerun_clocks;
	/* after the app's clock_local(c) on this rank (checkpoints, job/'s):
	 * 0 or the job's error; NULL: none */
	int (*clock_evaluated)(struct frr_rt *rt, int c);
};

/* ---- eval/eval.c ---- */
int frr_rt_eval_local(struct frr_rt *rt, int c);
int frr_rt_app_load(struct frr_rt *rt);
int frr_rt_app_save(struct frr_rt *rt);

/* ---- eval/metrics.c ---- */
int frr_rt_metrics_open(struct frr_rt *rt);
/* 0, or the first error writing the metrics file (logged, with its path) */
int frr_rt_metrics_close(struct frr_rt *rt);
/* Rank 0: 1 when clock c's stats of every rank are in and processed. */
int frr_rt_try_global(struct frr_rt *rt, int c);
void frr_rt_print_summary(struct frr_rt *rt, double secs);

#endif /* FLEXRR_RUNTIME_EVAL_H */
