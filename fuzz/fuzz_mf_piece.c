// SPDX-License-Identifier: MIT
/* mf reading in pieces: the input is piece 1 of 2 as another process sent
 * it (mf_input_gather), piece 0 a valid piece of no ratings. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "mf/mf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const char *paths[] = { "unused" };
	uint8_t empty[24] = "FRRMFP1";
	struct mf_input g = { .paths = paths, .npaths = 1, .nparts = 2 };
	const void *b[2] = { empty, data };
	size_t l[2] = { sizeof(empty), n };

	empty[12] = 1; /* one file, no ratings */
	if (!mf_input_gather(&g, b, l, 2)) {
		FUZZ_CHECK(g.data.n > 0 && g.data.n == (n - 24) / 12);
		for (uint64_t j = 0; j < g.data.n; j++)
			FUZZ_CHECK(isfinite(g.data.ratings[j].r) &&
				   g.data.ratings[j].user < g.data.nusers &&
				   g.data.ratings[j].item < g.data.nitems);
	}
	mf_input_drop(&g);
	return 0;
}
