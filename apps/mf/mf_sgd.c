// SPDX-License-Identifier: MIT
/* The SGD kernel on plain arrays, and the functions every part shares. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/simd.h"
#include "mf.h"

double mf_rng_normal(struct mf_rng *r)
{
	/* Box-Muller; 1 - u keeps the log argument in (0, 1] */
	double u = 1.0 - mf_rng_uniform(r);
	double v = mf_rng_uniform(r);

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static FRR_SIMD_INLINE double sgd_pass_body(float *P, float *Q,
					    const struct mf_rating *ratings,
					    uint64_t n,
					    const struct mf_hyper *h)
{
	const size_t cols = (size_t)h->rank + 1;
	double sse = 0.0;

	for (uint64_t j = 0; j < n; j++) {
		const struct mf_rating *x = &ratings[j];
		float e = mf_sgd_step(P + x->user * cols, Q + x->item * cols, h,
				      x->r);

		sse += (double)e * e;
	}
	return sse;
}

FRR_SIMD_DEFINE(double, sgd_pass,
		(float *P, float *Q, const struct mf_rating *ratings,
		 uint64_t n, const struct mf_hyper *h),
		(P, Q, ratings, n, h))

double mf_sgd_pass(float *P, float *Q, const struct mf_rating *ratings,
		   uint64_t n, const struct mf_hyper *h)
{
	return sgd_pass(P, Q, ratings, n, h);
}

static FRR_SIMD_INLINE double sse_body(const float *P, const float *Q,
				       const struct mf_rating *ratings,
				       uint64_t n, int rank, float mu)
{
	const size_t cols = (size_t)rank + 1;
	double sse = 0.0;

	for (uint64_t j = 0; j < n; j++) {
		const struct mf_rating *x = &ratings[j];
		float e = x->r - mf_predict(P + x->user * cols,
					    Q + x->item * cols, rank, mu);

		sse += (double)e * e;
	}
	return sse;
}

FRR_SIMD_DEFINE(double, sse,
		(const float *P, const float *Q,
		 const struct mf_rating *ratings, uint64_t n, int rank,
		 float mu),
		(P, Q, ratings, n, rank, mu))

double mf_sse(const float *P, const float *Q, const struct mf_rating *ratings,
	      uint64_t n, int rank, float mu)
{
	return sse(P, Q, ratings, n, rank, mu);
}

void mf_init_row(uint64_t seed, int table, uint64_t row, float *out, int rank)
{
	struct mf_rng r = { mf_hash3(seed ^ 0x696e6974726f7773ull,
				     (uint64_t)table, row) };
	const double sd = 0.1 / sqrt((double)rank);

	for (int f = 0; f < rank; f++)
		out[f] = (float)(sd * mf_rng_normal(&r));
	out[rank] = 0.0f;
}

void mf_shuffle(struct mf_rating *r, uint64_t n, uint64_t seed)
{
	struct mf_rng g = { frr_mix64(seed ^ 0x73687566666c6521ull) };

	mf_permute(r, n, sizeof(*r), &g);
}
