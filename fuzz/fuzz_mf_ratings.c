// SPDX-License-Identifier: MIT
/* mf rating files (Netflix, MovieLens dat/csv, triples; plain or gzip):
 * byte 0 picks the format told and the worker count, the rest is the file.
 * A loaded set is then assigned and partitioned, as the app does. */
#include <math.h>

#include "fuzz.h"
#include "mf/mf.h"

static void check_part(const struct mf_data *d, const struct mf_part *p)
{
	for (uint64_t j = 0; j < p->ntrain + p->ntest; j++) {
		const struct mf_rating *x =
		    j < p->ntrain ? &p->train[j] : &p->test[j - p->ntrain];

		FUZZ_CHECK(x->user < p->nusers);
		FUZZ_CHECK(x->item < d->nitems);
		FUZZ_CHECK(p->users[x->user] < d->nusers);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const enum mf_format fmts[] = { MF_FMT_AUTO, MF_FMT_NETFLIX,
					       MF_FMT_ML_DAT, MF_FMT_TRIPLES };
	const char *path;
	struct mf_data d;
	uint64_t total = 0;
	int workers;

	if (!n)
		return 0;
	workers = 1 + (data[0] >> 2) % 4;
	path = fuzz_file(0, data + 1, n - 1);
	if (mf_load_files(&path, 1, fmts[data[0] & 3], &d))
		return 0;
	FUZZ_CHECK(d.n > 0 && d.nusers > 0 && d.nitems > 0);
	FUZZ_CHECK(d.nusers <= d.n && d.nitems <= d.n);
	for (uint64_t j = 0; j < d.n; j++) {
		FUZZ_CHECK(d.ratings[j].user < d.nusers);
		FUZZ_CHECK(d.ratings[j].item < d.nitems);
		FUZZ_CHECK(isfinite(d.ratings[j].r));
	}
	if (!mf_data_assign(&d, workers)) {
		for (int w = 0; w < workers; w++) {
			struct mf_part p;

			if (mf_data_partition(&d, w, 7, 0.25, &p))
				continue;
			check_part(&d, &p);
			total += p.ntrain + p.ntest;
			mf_part_free(&p);
		}
		FUZZ_CHECK(total == d.n); /* every rating in one partition */
	}
	mf_data_free(&d);
	return 0;
}
