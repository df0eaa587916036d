/* SPDX-License-Identifier: MIT */
/*
 * Collapsed Gibbs sampling for LDA, independent of the runtime.  Counts are
 * floats because they live in a float parameter table; they stay exact
 * integers up to 2^24 per cell.
 *
 *   row[i][k]  tokens of token i's word assigned to topic k (the word's
 *              row of the word-topic counts: tokens of one word share it)
 *   nk[k]      tokens assigned to topic k
 *   z[i]       topic of token i of a document (its item state)
 */
#ifndef FLEXRR_APPS_LDA_MODEL_H
#define FLEXRR_APPS_LDA_MODEL_H

#include <stdint.h>

#include "flexrr/base.h"

/* topics are stored as uint16 per token (the item state) */
#define LDA_MAX_TOPICS 65535

struct lda_hyper {
	uint32_t K, V;
	double alpha, beta;
};

/* Uniform in [0, 1) from a splitmix64 stream seeded by frr_item_rng(). */
static inline double lda_rng_uniform(uint64_t *s)
{
	return (double)(frr_splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Initial topics of a document: uniform, or drawn from a loaded model's
 * word-topic counts (phi0 = V x K, NULL = uniform).  Deterministic in seed. */
void lda_init_doc(const struct lda_hyper *h, const uint32_t *words,
		  uint64_t len, uint16_t *z, const float *phi0, uint64_t seed);
/* Copy a document's topics out of its item state (memory an rr helper on
 * another rank writes) into z once, and check them there: 0, or -EPROTO
 * with *bad = the first token whose topic is not < K.  Only the copy may
 * index the count tables. */
int lda_topics_take(const struct lda_hyper *h, const uint16_t *state,
		    uint64_t len, uint16_t *z, uint64_t *bad);
/* A topic drawn from the collapsed Gibbs conditional of a token already
 * taken out of the counts, O(K): p(k) ~ (ndk + alpha)(row + beta) /
 * (nk + V beta), negative counts (a stale view) taken as 0.  ndk: the
 * document's K topic counts; cdf: K doubles of scratch. */
uint32_t lda_dense_draw(const struct lda_hyper *h, const float *row,
			const float *nk, const double *ndk, double *cdf,
			uint64_t *rng);
/* One Gibbs sweep over a document's tokens, moving counts in row[i] and nk.
 * scratch: 2 * K doubles.  Returns the document's training log-likelihood
 * after the sweep, sum_i log sum_k theta_dk phi_kw_i with
 * theta = (ndk + alpha) / (len + K alpha), phi = (nwk + beta) / (nk + V beta)
 * (the point-estimate likelihood we also compute for gensim's model). */
double lda_sample_doc(const struct lda_hyper *h, uint64_t len, uint16_t *z,
		      float *const *row, float *nk, double *scratch,
		      uint64_t *rng);
/* The same likelihood without sampling. */
double lda_doc_loglik(const struct lda_hyper *h, uint64_t len,
		      const uint16_t *z, float *const *row, const float *nk,
		      double *scratch);

#endif
