/* SPDX-License-Identifier: MIT */
/*
 * A rank's stats record of one clock, as it crosses to rank 0 (written by
 * eval/eval.c, read by eval/metrics.c): a word holding clock + 1, then the
 * app's FRR_MAX_STATS stats, then FRR_RT_NMETRICS metrics per worker of
 * the rank (enum frr_metric).  Rank 0 reads it from memory the rank writes:
 * it copies it once and checks the copy with frr_stats_check.
 */
#ifndef FLEXRR_RUNTIME_EVAL_STATS_H
#define FLEXRR_RUNTIME_EVAL_STATS_H

#include <stddef.h>

#include "table.h" /* FRR_RT_NRR: the rr counters of a clock's record */

#define FRR_RT_NMETRICS (11 + FRR_RT_NRR) /* metric slots (stats.c names) */

enum frr_metric {
	FRR_M_COMPUTE_S = 0,
	FRR_M_WAIT_S,
	FRR_M_FLUSH_S,
	FRR_M_UPDATES,
	FRR_M_BYTES,
	FRR_M_STALE_READS,
	FRR_M_MIN_DATA_CLOCK, /* -1: read no rows */
	FRR_M_RR0,	      /* FRR_RT_NRR rr counters (rr_proto.h) */
	/* of them, items run by another worker (rr_proto.h RR_C_ITEMS; rr
	 * and lb-bsp) */
	FRR_M_RR_ITEMS = FRR_M_RR0 + 3,
	FRR_M_PULLS = FRR_M_RR0 + FRR_RT_NRR, /* rows not held, fetched */
	FRR_M_PUSHED,  /* worker 0 of a rank: row bytes its shard pushed */
	FRR_M_APPLY_S, /* worker 0 of a rank: its server's apply + push */
	FRR_M_DROPPED, /* mode backup: items of its list the cut dropped */
};

/* The name of metric i (the --metrics file's columns). */
const char *frr_metric_name(int i);

/* Doubles in a record after its clock word, for T workers per rank. */
size_t frr_stats_len(int T);

/*
 * Check a copied record d of frr_stats_len(T) doubles.  The app's stats
 * are the app's to judge (a diverged model sums to NaN, and the app says
 * so); every metric must be finite and in its range: times in
 * [0, 1e9] s, counts in [0, 2^53], the min data clock in [-1, 2^31).
 * Returns 0, or -EPROTO with why (e.g. "metric wait_s of its worker 1 is
 * nan") written to why[len].
 */
int frr_stats_check(const double *d, int T, char *why, size_t len);

#endif /* FLEXRR_RUNTIME_EVAL_STATS_H */
