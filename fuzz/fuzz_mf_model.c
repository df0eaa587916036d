// SPDX-License-Identifier: MIT
/* mf --load: a model file for a run of rank 2 with 3 users and 2 items. */
#include <math.h>

#include "fuzz.h"
#include "mf/mf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const struct mf_model_hdr want = {
		.rank = 2, .cols = 3, .nusers = 3, .nitems = 2
	};
	float *rows;

	if (mf_model_read(fuzz_file(0, data, n), &want, &rows))
		return 0;
	for (int j = 0; j < 5 * 3; j++)
		FUZZ_CHECK(isfinite(rows[j]));
	free(rows);
	return 0;
}
