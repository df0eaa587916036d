/* SPDX-License-Identifier: MIT */
/*
 * Held-out log-likelihood by document completion (Wallach et al., 2009):
 * a fraction of the documents is kept out of training; for each of them
 * the topic mixture is estimated from half of its tokens (even positions)
 * with the model fixed, and the other half (odd positions) is scored:
 *   heldout_loglik_per_token = sum over held-out tokens of
 *       log sum_k theta_dk phi_kw  /  held-out tokens,
 *   phi_kw   = (n_wk + beta) / (n_k + V beta)   (the trained counts),
 *   theta_dk = (c_dk + alpha) / (n_obs + K alpha), c_dk averaged over
 *              LDA_HO_KEEP collapsed Gibbs sweeps over the observed half
 *              after LDA_HO_BURN sweeps of burn-in (exact Gibbs with phi
 *              fixed, SparseLDA's buckets: O(non-zero topics of the word)
 *              per token).
 */
#ifndef FLEXRR_APPS_LDA_HELDOUT_H
#define FLEXRR_APPS_LDA_HELDOUT_H

#include <stdint.h>

#include "lda_corpus.h"
#include "lda_model.h"

#define LDA_HO_BURN 10
#define LDA_HO_KEEP 10

/* Move every test document out of c into test: document d (0-based, in
 * input order) is a test document when floor((d + 1) frac) >
 * floor(d frac), i.e. evenly spaced; test shares c's vocabulary size but
 * not its word strings.  -EINVAL (with a message) when no training or no
 * test document would be left. */
int lda_heldout_split(struct lda_corpus *c, double frac,
		      struct lda_corpus *test);

/* Reads row 'row' of table 'table' (K floats) into out; 0 or -errno. */
typedef int (*lda_row_read_fn)(void *ctx, int table, uint64_t row, float *out);

struct lda_heldout;

/* train: the training corpus (sizes the tables); test: the held-out one;
 * this rank scores test documents i with i % nranks == rank; tb_word /
 * tb_total: the word-topic and topic-total tables.  NULL when out of
 * memory. */
struct lda_heldout *lda_heldout_new(const struct lda_hyper *h,
				    const struct lda_corpus *train,
				    const struct lda_corpus *test, int rank,
				    int nranks, int tb_word, int tb_total);
void lda_heldout_free(struct lda_heldout *ho);

/* Score this rank's test documents against the model read through read():
 * adds the log-likelihood of the held-out halves to *ll and their token
 * count to *ntok.  seed: deterministic per (job seed, clock). */
int lda_heldout_eval(struct lda_heldout *ho, lda_row_read_fn read, void *ctx,
		     uint64_t seed, double *ll, double *ntok);

#endif
