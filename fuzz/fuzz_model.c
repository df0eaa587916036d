// SPDX-License-Identifier: MIT
/* mlr and lda --load (apps/common/modelfile): a model of two tables. */
#include <math.h>

#include "common/modelfile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const struct frr_model_table t[2] = {
		{ .name = "weights", .rows = 3, .cols = 2 },
		{ .name = "bias", .rows = 1, .cols = 4 },
	};
	float *m[2];

	if (frr_model_load(fuzz_file(0, data, n), "mlr", t, 2, m))
		return 0;
	for (int i = 0; i < 2; i++) {
		for (uint64_t j = 0; j < t[i].rows * t[i].cols; j++)
			FUZZ_CHECK(isfinite(m[i][j]));
		free(m[i]);
	}
	return 0;
}
