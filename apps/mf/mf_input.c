// SPDX-License-Identifier: MIT
/*
 * A run's rating files, read in pieces (frr_app_ops share/gather: each
 * process parses one byte range of every file, then every process gets
 * every piece) or whole by every process.  Either way each process ends
 * with the same data, in file order, so partitions and results do not
 * depend on how the files were read.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "mf.h"

#define PIECE_MAGIC "FRRMFP1"

/* A piece as it travels: this header, count[nfiles] (the ratings of each
 * file, in file order), then the ratings with raw ids. */
struct piece_hdr {
	char magic[8];
	uint32_t whole; /* 1: no ratings, every process reads the files */
	uint32_t nfiles;
};

static size_t piece_head(int nfiles)
{
	return sizeof(struct piece_hdr) + sizeof(uint64_t) * (size_t)nfiles;
}

static double train_mean(const struct mf_data *d, uint64_t seed, double frac)
{
	double sum = 0;
	uint64_t n = 0;

	for (uint64_t j = 0; j < d->n; j++) {
		const struct mf_rating *x = &d->ratings[j];

		if (!mf_is_test(seed, x->user, x->item, 0, frac)) {
			sum += x->r;
			n++;
		}
	}
	return n ? sum / (double)n : d->mean;
}

/* in->data holds every rating: assign users to partitions. */
static int data_ready(struct mf_input *in)
{
	int ret = mf_data_assign(&in->data, in->nparts);

	if (ret) {
		mf_data_free(&in->data);
		return ret;
	}
	in->mu = (float)train_mean(&in->data, in->seed, in->test_frac);
	in->have_data = 1;
	return 0;
}

int mf_input_ready(struct mf_input *in)
{
	int ret;

	if (in->have_data)
		return 0;
	ret = mf_load_files(in->paths, in->npaths, in->fmt, &in->data);
	return ret ? ret : data_ready(in);
}

/* Piece k of n of every file, as a blob: the ratings array grown in place
 * into header + counts + ratings (no second copy of the piece). */
static int piece_read(struct mf_input *in, int k, int n, size_t *len)
{
	size_t head = piece_head(in->npaths);
	struct mf_rating *all = NULL;
	uint64_t *count = NULL, total = 0;
	uint8_t *p;
	int ret = 0;

	count = calloc((size_t)in->npaths, sizeof(*count));
	if (!count)
		return -ENOMEM;
	for (int f = 0; f < in->npaths && !ret; f++) {
		struct mf_data d = { 0 };
		struct mf_rating *grown;

		ret = mf_load_shard(&in->paths[f], 1, in->fmt, k, n, &d);
		if (ret)
			break;
		grown = realloc(all, sizeof(*all) * (total + d.n) + head);
		if (!grown) {
			mf_data_free(&d);
			ret = -ENOMEM;
			break;
		}
		all = grown;
		memcpy(all + total, d.ratings, sizeof(*all) * d.n);
		total += d.n;
		count[f] = d.n;
		mf_data_free(&d);
	}
	if (!ret && !all)
		all = malloc(head);
	if (!ret && !all)
		ret = -ENOMEM;
	if (ret) {
		free(all);
		free(count);
		return ret;
	}
	p = (uint8_t *)all;
	memmove(p + head, p, sizeof(*all) * total);
	memcpy(p, PIECE_MAGIC, 8);
	memcpy(p + 8, &(uint32_t){ 0 }, 4);
	memcpy(p + 12, &(uint32_t){ (uint32_t)in->npaths }, 4);
	memcpy(p + sizeof(struct piece_hdr), count,
	       sizeof(*count) * in->npaths);
	free(count);
	in->piece = p;
	*len = head + sizeof(*all) * total;
	return 0;
}

int mf_input_share(struct mf_input *in, int k, int n, const void **blob,
		   size_t *len)
{
	static const struct piece_hdr whole = { PIECE_MAGIC, 1, 0 };
	int ret = -ENOTSUP;

	/* one piece is the whole file: no byte ranges to split */
	if (!in->whole && n > 1)
		ret = piece_read(in, k, n, len);
	if (!ret) {
		*blob = in->piece;
		return 0;
	}
	if (ret != -ENOTSUP)
		return ret;
	/* mf_load_shard said which file cannot be split */
	in->whole = 1;
	ret = mf_input_ready(in);
	*blob = &whole;
	*len = sizeof(whole);
	return ret;
}

/* A peer's piece: header, counts and length agree; the total is added to
 * *total and the counts copied into count[f + nfiles * k]. */
static int piece_check(const struct mf_input *in, const uint8_t *b, size_t len,
		       int k, uint64_t *count, uint64_t *total)
{
	struct piece_hdr h;
	size_t head = piece_head(in->npaths);
	uint64_t sum = 0;

	if (len < sizeof(h))
		goto bad;
	memcpy(&h, b, sizeof(h));
	if (memcmp(h.magic, PIECE_MAGIC, 8))
		goto bad;
	if (h.whole != (uint32_t)in->whole) {
		frr_err("mf: the processes disagree whether the input can be "
			"read in pieces (piece %d); were the files changed "
			"while the job started?",
			k);
		return -EPROTO;
	}
	if (in->whole && len != sizeof(h))
		goto bad;
	if (in->whole)
		return 0;
	if (h.nfiles != (uint32_t)in->npaths || len < head)
		goto bad;
	memcpy(count, b + sizeof(h), sizeof(*count) * in->npaths);
	for (int f = 0; f < in->npaths; f++) {
		if (count[f] > (len - head) / sizeof(struct mf_rating))
			goto bad;
		sum += count[f];
	}
	if (sum != (len - head) / sizeof(struct mf_rating) ||
	    (len - head) % sizeof(struct mf_rating))
		goto bad;
	*total += sum;
	return 0;
bad:
	frr_err("mf: input piece %d (%zu bytes) is malformed; the process "
		"that read it is broken or not ours",
		k, len);
	return -EPROTO;
}

/* Copy the pieces' ratings in file order: file f's ratings of piece 0,
 * of piece 1, ..., then file f + 1's.  Checked on the copy. */
static int pieces_join(struct mf_input *in, const void *const *blobs, int n,
		       const uint64_t *count, uint64_t total)
{
	size_t head = piece_head(in->npaths), sz = sizeof(struct mf_rating);
	struct mf_rating *r = malloc(sz * total + 1);
	uint64_t at = 0;

	if (!r) {
		frr_err("mf: out of memory for the %" PRIu64 " ratings of "
			"the input",
			total);
		return -ENOMEM;
	}
	for (int f = 0; f < in->npaths; f++)
		for (int k = 0; k < n; k++) {
			uint64_t before = 0, c = count[f + in->npaths * k];

			for (int g = 0; g < f; g++)
				before += count[g + in->npaths * k];
			memcpy(r + at,
			       (const uint8_t *)blobs[k] + head + before * sz,
			       sz * c);
			at += c;
		}
	for (uint64_t j = 0; j < total; j++)
		if (!isfinite(r[j].r)) {
			frr_err("mf: an input piece holds rating %g, which "
				"no file gives; the process that read it is "
				"broken or not ours",
				(double)r[j].r);
			free(r);
			return -EPROTO;
		}
	if (!total) {
		frr_err("mf: no ratings found in the --data files; are they "
			"the right files?");
		free(r);
		return -EINVAL;
	}
	return mf_data_finish(r, total, &in->data);
}

int mf_input_gather(struct mf_input *in, const void *const *blobs,
		    const size_t *lens, int n)
{
	uint64_t *count = calloc((size_t)n * in->npaths + 1, sizeof(*count));
	uint64_t total = 0;
	int ret = count ? 0 : -ENOMEM;

	free(in->piece);
	in->piece = NULL;
	for (int k = 0; k < n && !ret; k++)
		ret = piece_check(in, blobs[k], lens[k], k,
				  count + (size_t)in->npaths * k, &total);
	if (!ret && !in->whole) {
		ret = pieces_join(in, blobs, n, count, total);
		if (!ret)
			ret = data_ready(in);
		if (!ret && in->leader)
			frr_info("mf: %" PRIu64 " ratings from %d file%s, "
				 "read in %d pieces",
				 total, in->npaths, in->npaths > 1 ? "s" : "",
				 n);
	}
	free(count);
	return ret;
}

int mf_input_partition(struct mf_input *in, int part, struct mf_part *out)
{
	/* the data is dropped after the first clock: a late call reads the
	 * files again (whole: the same data) */
	int ret = mf_input_ready(in);

	return ret ? ret
		   : mf_data_partition(&in->data, part, in->seed, in->test_frac,
				       out);
}

void mf_input_drop(struct mf_input *in)
{
	if (in->have_data)
		mf_data_free(&in->data);
	in->have_data = 0;
	free(in->piece);
	in->piece = NULL;
}
