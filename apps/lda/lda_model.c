// SPDX-License-Identifier: MIT
/* Collapsed Gibbs sampler: the O(K) per token textbook form. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "lda_model.h"

void lda_init_doc(const struct lda_hyper *h, const uint32_t *words,
		  uint64_t len, uint16_t *z, const float *phi0, uint64_t seed)
{
	uint64_t s = seed;

	for (uint64_t i = 0; i < len; i++) {
		const float *row;
		double tot = 0, u;
		uint32_t k;

		if (!phi0) {
			z[i] = (uint16_t)(frr_splitmix64(&s) % h->K);
			continue;
		}
		row = phi0 + (uint64_t)words[i] * h->K;
		for (k = 0; k < h->K; k++)
			tot += row[k] + h->beta;
		u = lda_rng_uniform(&s) * tot;
		for (k = 0; k + 1 < h->K; k++) {
			u -= row[k] + h->beta;
			if (u < 0)
				break;
		}
		z[i] = (uint16_t)k;
	}
}

static void lda_doc_counts(const struct lda_hyper *h, uint64_t len,
			   const uint16_t *z, double *ndk)
{
	memset(ndk, 0, h->K * sizeof(*ndk));
	for (uint64_t i = 0; i < len; i++)
		ndk[z[i]] += 1;
}

double lda_doc_loglik(const struct lda_hyper *h, uint64_t len,
		      const uint16_t *z, float *const *row, const float *nk,
		      double *scratch)
{
	double *theta = scratch, *inv = scratch + h->K;
	double vb = h->V * h->beta, ll = 0;
	double norm = 1.0 / ((double)len + h->K * h->alpha);

	lda_doc_counts(h, len, z, theta);
	for (uint32_t k = 0; k < h->K; k++) {
		theta[k] = (theta[k] + h->alpha) * norm;
		inv[k] = 1.0 / ((nk[k] > 0 ? (double)nk[k] : 0) + vb);
	}
	for (uint64_t i = 0; i < len; i++) {
		const float *r = row[i];
		double p = 0;

		for (uint32_t k = 0; k < h->K; k++)
			p += theta[k] *
			     ((r[k] > 0 ? (double)r[k] : 0) + h->beta) * inv[k];
		ll += log(p);
	}
	return ll;
}

/* x > 0 ? x : +0.0f without a branch (the compare does not vectorize
 * without -ffinite-math-only): a set sign bit clears every bit. */
static inline float lda_clamp0(float x)
{
	int32_t b;

	memcpy(&b, &x, sizeof(b));
	b &= ~(b >> 31);
	memcpy(&x, &b, sizeof(x));
	return x;
}

/* The weights first, in a loop of independent elements that vectorizes
 * (the divisions dominate), then their running sum in the same order: the
 * same operations as one fused loop, so the same topics.  (An AVX2 variant
 * through apps/common/simd.h gained under 5% over this SSE2 loop: the
 * double divisions bound both.) */
uint32_t lda_dense_draw(const struct lda_hyper *h, const float *row,
			const float *nk, const double *ndk,
			double *restrict cdf, uint64_t *rng)
{
	const double vb = h->V * h->beta, alpha = h->alpha, beta = h->beta;
	double tot = 0, u;
	uint32_t K = h->K, k;

	for (k = 0; k < K; k++) {
		/* a stale view can hold a count our own move just took below
		 * zero: clamp, never a negative weight */
		double nw = lda_clamp0(row[k]), nt = lda_clamp0(nk[k]);

		cdf[k] = (ndk[k] + alpha) * (nw + beta) / (nt + vb);
	}
	for (k = 0; k < K; k++) {
		tot += cdf[k];
		cdf[k] = tot;
	}
	u = lda_rng_uniform(rng) * tot;
	for (k = 0; k + 1 < K && cdf[k] <= u; k++)
		;
	return k;
}

double lda_sample_doc(const struct lda_hyper *h, uint64_t len, uint16_t *z,
		      float *const *row, float *nk, double *scratch,
		      uint64_t *rng)
{
	double *ndk = scratch, *cdf = scratch + h->K;

	lda_doc_counts(h, len, z, ndk);
	for (uint64_t i = 0; i < len; i++) {
		float *r = row[i];
		uint32_t k = z[i];

		ndk[k] -= 1;
		r[k] -= 1;
		nk[k] -= 1;
		k = lda_dense_draw(h, r, nk, ndk, cdf, rng);
		ndk[k] += 1;
		r[k] += 1;
		nk[k] += 1;
		z[i] = (uint16_t)k;
	}
	return lda_doc_loglik(h, len, z, row, nk, scratch);
}

int lda_topics_take(const struct lda_hyper *h, const uint16_t *state,
		    uint64_t len, uint16_t *z, uint64_t *bad)
{
	memcpy(z, state, len * sizeof(*z));
	for (uint64_t i = 0; i < len; i++)
		if (z[i] >= h->K) {
			*bad = i;
			return -EPROTO;
		}
	return 0;
}
