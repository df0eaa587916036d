// SPDX-License-Identifier: MIT
/* mlr LIBSVM text: TRAIN [FUZZ_SEP TEST]; the test file is read with the
 * training file's labels and dimension, as the app does. */
#include <math.h>

#include "fuzz.h"
#include "mlr/mlr_data.h"

static void check(const struct mlr_data *d, const struct mlr_labels *map)
{
	FUZZ_CHECK(!d->dense && d->n > 0 && d->classes == map->n);
	FUZZ_CHECK(((uint64_t)d->dim + 1) * d->classes <= MLR_MAX_WEIGHTS);
	FUZZ_CHECK(d->rowptr[0] == 0);
	for (uint64_t i = 0; i < d->n; i++) {
		FUZZ_CHECK(d->label[i] < d->classes);
		FUZZ_CHECK(d->rowptr[i] <= d->rowptr[i + 1]);
		for (uint64_t e = d->rowptr[i]; e < d->rowptr[i + 1]; e++) {
			FUZZ_CHECK(d->col[e] < d->dim);
			FUZZ_CHECK(isfinite(d->val[e]));
			FUZZ_CHECK(e == d->rowptr[i] ||
				   d->col[e] > d->col[e - 1]);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct mlr_labels map = { 0 };
	struct mlr_data train, test;
	const uint8_t *t;
	size_t an, tn;
	int has_test = fuzz_split(data, n, &an, &t, &tn);

	if (mlr_load_libsvm(fuzz_file(0, data, an), 0, 0, &map, &train))
		return 0;
	check(&train, &map);
	if (has_test &&
	    !mlr_load_libsvm(fuzz_file(1, t, tn), 0, train.dim, &map, &test)) {
		FUZZ_CHECK(test.dim == train.dim);
		check(&test, &map);
		mlr_data_free(&test);
	}
	mlr_data_free(&train);
	return 0;
}
