// SPDX-License-Identifier: MIT
/* mlr IDX images and labels: byte 0 picks the example limit and the class
 * count told (as for a test set), then IMAGES FUZZ_SEP LABELS. */
#include "fuzz.h"
#include "mlr/mlr_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	const uint8_t *lab;
	size_t in, ln;
	const char *ip, *lp;
	struct mlr_data d;
	uint32_t classes;
	uint64_t limit;

	if (!n)
		return 0;
	limit = data[0] & 3;	       /* 0 = all */
	classes = (data[0] >> 2) & 15; /* 0 = inferred */
	fuzz_split(data + 1, n - 1, &in, &lab, &ln);
	ip = fuzz_file(0, data + 1, in);
	lp = fuzz_file(1, lab, ln);
	if (mlr_load_idx(ip, lp, limit, classes, &d))
		return 0;
	FUZZ_CHECK(d.dense && d.n > 0 && d.dim > 0 && d.classes >= 2);
	FUZZ_CHECK(!limit || d.n <= limit);
	FUZZ_CHECK(!classes || d.classes == classes);
	FUZZ_CHECK(((uint64_t)d.dim + 1) * d.classes <= MLR_MAX_WEIGHTS);
	for (uint64_t i = 0; i < d.n; i++)
		FUZZ_CHECK(d.label[i] < d.classes);
	/* the last pixel lies inside the buffer (ASan checks the read) */
	volatile uint8_t last = d.pix[d.n * d.dim - 1];
	(void)last;
	mlr_data_free(&d);
	return 0;
}
