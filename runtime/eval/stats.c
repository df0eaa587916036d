// SPDX-License-Identifier: MIT
/* Checking a rank's stats record on rank 0 (stats.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "flexrr/flexrr.h"
#include "stats.h"

static const char *const metric_names[FRR_RT_NMETRICS] = {
	"compute_s",
	"wait_s",
	"flush_s",
	"updates",
	"bytes",
	"stale_reads",
	"min_data_clock",
	"rr_offers",
	"rr_accepted",
	"rr_cancelled",
	"rr_items_reassigned",
	"pulls",
	"pushed",
	"apply_s",
	"dropped",
};

const char *frr_metric_name(int i)
{
	return i >= 0 && i < FRR_RT_NMETRICS ? metric_names[i] : "?";
}

size_t frr_stats_len(int T)
{
	return FRR_MAX_STATS + (size_t)T * FRR_RT_NMETRICS;
}

/* The range of metric i; every bound is exact in a double and makes the
 * runtime's conversions ((uint64_t), (int)) defined. */
static void metric_range(int i, double *lo, double *hi)
{
	*lo = 0;
	if (i <= FRR_M_FLUSH_S || i == FRR_M_APPLY_S)
		*hi = 1e9;
	else if (i == FRR_M_MIN_DATA_CLOCK) {
		*lo = -1;
		*hi = 2147483647.0;
	} else
		*hi = 9007199254740992.0; /* 2^53 */
}

int frr_stats_check(const double *d, int T, char *why, size_t len)
{
	for (int t = 0; t < T; t++) {
		const double *m =
		    d + FRR_MAX_STATS + (size_t)t * FRR_RT_NMETRICS;

		for (int i = 0; i < FRR_RT_NMETRICS; i++) {
			double lo, hi;

			metric_range(i, &lo, &hi);
			/* written so that NaN fails too */
			if (m[i] >= lo && m[i] <= hi)
				continue;
			snprintf(why, len,
				 "metric %s of its worker %d is %g (expected "
				 "%g .. %g)",
				 metric_names[i], t, m[i], lo, hi);
			return -EPROTO;
		}
	}
	return 0;
}
