// SPDX-License-Identifier: MIT
/*
 * A rank's stats record as rank 0 reads it (runtime/eval/stats.h): the
 * input is the record (any length up to 4 workers' worth, zero-padded);
 * whatever frr_stats_check accepts is safe for what rank 0 does with it:
 * every metric converts to an integer without undefined behaviour.
 */
#include <math.h>

#include "fuzz.h"
#include "flexrr/flexrr.h"
#include "stats.h"
#include "flexrr/flexrr.h"
#include "stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	double d[FRR_MAX_STATS + 4 * FRR_RT_NMETRICS];
	int T = n ? 1 + data[0] % 4 : 1;
	char why[160];

	memset(d, 0, sizeof(d));
	if (n > 1)
		memcpy(d, data + 1, n - 1 < sizeof(d) ? n - 1 : sizeof(d));
	if (frr_stats_check(d, T, why, sizeof(why))) {
		FUZZ_CHECK(strstr(why, "metric ") == why);
		return 0;
	}
	for (int t = 0; t < T; t++) {
		const double *m = d + FRR_MAX_STATS + t * FRR_RT_NMETRICS;
		volatile uint64_t sink = 0;

		for (int i = 0; i < FRR_RT_NMETRICS; i++) {
			FUZZ_CHECK(isfinite(m[i]));
			if (i != FRR_M_MIN_DATA_CLOCK)
				sink += (uint64_t)m[i];
			else
				sink += (uint64_t)(int)m[i] + 1;
		}
		(void)sink;
	}
	return 0;
}
