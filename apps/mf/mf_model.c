// SPDX-License-Identifier: MIT
/* Model files (--save / --load): a header, then the user rows and the item
 * rows (mf.h MF_MODEL_MAGIC). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/reader.h"
#include "flexrr/file.h"
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "mf.h"

int mf_model_read(const char *path, const struct mf_model_hdr *want,
		  float **rows)
{
	struct frr_reader *r;
	struct mf_model_hdr h;
	uint64_t n, bytes;
	float *v = NULL;
	int ret;

	*rows = NULL;
	ret = frr_reader_open(path, &r);
	if (ret)
		return ret;
	ret = frr_reader_bytes(r, &h, sizeof(h));
	if (ret)
		goto out_close;
	if (memcmp(h.magic, MF_MODEL_MAGIC, sizeof(h.magic))) {
		ret = frr_reader_fail(r, "not an mf model (saved with "
					 "'flexrr run --save FILE ... mf')");
		goto out_close;
	}
	if (h.rank != want->rank || h.nusers != want->nusers ||
	    h.nitems != want->nitems || h.cols != want->cols) {
		ret = frr_reader_fail(r,
				      "model is rank %" PRIu32 " with %" PRIu64
				      " users x %" PRIu64
				      " items, this run is rank %" PRIu32
				      " with %" PRIu64 " x %" PRIu64
				      "; load it with the same data and --rank",
				      h.rank, h.nusers, h.nitems, want->rank,
				      want->nusers, want->nitems);
		goto out_close;
	}
	if (!isfinite(h.mu)) {
		ret = frr_reader_fail(r,
				      "the model's mean rating is %g; the "
				      "file is damaged",
				      h.mu);
		goto out_close;
	}
	/* the shape is this run's: the size was checked when its tables were
	 * made, and n * 4 cannot overflow */
	n = (h.nusers + h.nitems) * h.cols;
	bytes = n * sizeof(float);
	v = malloc(bytes ? bytes : 1);
	if (!v) {
		ret = frr_reader_oom(r, "the model", bytes);
		goto out_close;
	}
	ret = frr_reader_bytes(r, v, bytes);
	for (uint64_t j = 0; !ret && j < n; j++)
		if (!isfinite(v[j]))
			ret = frr_reader_fail(
			    r,
			    "%s row %" PRIu64 ", column %" PRIu64
			    ": %g is not a finite number; the model file "
			    "is damaged",
			    j / h.cols < h.nusers ? "user" : "item",
			    j / h.cols < h.nusers ? j / h.cols
						  : j / h.cols - h.nusers,
			    j % h.cols, (double)v[j]);
	if (!ret)
		ret = frr_reader_end(r, "the last item row");
	if (ret)
		goto out_close;
	frr_info("%s: model loaded (%" PRIu64 " rows)", path,
		 h.nusers + h.nitems);
	*rows = v;
	v = NULL;
out_close:
	free(v);
	frr_reader_close(r);
	return ret;
}

struct mf_fill {
	struct frr_eval_ctx *ec;
	struct mf_model_hdr h;
	float *row;
};

static int mf_fill(FILE *f, void *arg)
{
	struct mf_fill *m = arg;
	int ret = 0;

	if (fwrite(&m->h, sizeof(m->h), 1, f) != 1)
		ret = -EIO;
	for (int t = 0; !ret && t <= 1; t++) {
		uint64_t n = t == 0 ? m->h.nusers : m->h.nitems;

		for (uint64_t r = 0; !ret && r < n; r++) {
			ret = frr_eval_row_read(m->ec, t, r, m->row);
			if (!ret &&
			    fwrite(m->row, sizeof(float), (size_t)m->h.cols,
				   f) != (size_t)m->h.cols)
				ret = -EIO;
		}
	}
	return ret;
}

int mf_model_write(struct frr_eval_ctx *ec, const struct mf_model_hdr *hdr,
		   const char *path)
{
	struct mf_fill m = { ec, *hdr, malloc(sizeof(float) * hdr->cols) };
	int ret;

	if (!m.row) {
		frr_err("mf: out of memory saving the model to '%s'", path);
		return -ENOMEM;
	}
	memcpy(m.h.magic, MF_MODEL_MAGIC, sizeof(m.h.magic));
	/* a failed save keeps the old model (frr_file_write_atomic) */
	ret = frr_file_write_atomic(path, "mf: --save", mf_fill, &m);
	free(m.row);
	return ret;
}
