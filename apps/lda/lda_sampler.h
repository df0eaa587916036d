/* SPDX-License-Identifier: MIT */
/*
 * LDA token samplers behind one interface, independent of the runtime: the
 * caller hands over what one token's step needs (its word's count row as
 * the worker sees it, the topic totals, the RNG) and the sampler keeps the
 * rest (the document's topic counts, per-word topic lists, cached sums).
 * One sampler per thread; nothing is allocated after lda_sampler_new().
 *
 * Both kinds draw from the same collapsed Gibbs conditional (the token
 * taken out of the counts)
 *   p(k) ~ (n_dk + alpha)(n_wk + beta) / (n_k + V beta)
 * on the counts the worker sees now (negative counts of a stale view taken
 * as 0); they differ in cost only.
 *
 * LDA_SAMPLER_SPARSE (the default): SparseLDA's bucket decomposition
 * (Yao, Mimno, McCallum, KDD 2009),
 *   p(k) ~ alpha beta / (n_k + V beta)              s: all topics
 *        + beta n_dk / (n_k + V beta)                r: the document's
 *        + (alpha + n_dk) n_wk / (n_k + V beta)      q: the word's
 * with the sums of s and r kept up to date in O(1) per move and q summed
 * over the word's non-zero topics: a contiguous (topic, count) list per word
 * built from the row at the word's first token after lda_sampler_clock()
 * and kept equal to it under the worker's own moves (the row gets every
 * move too: the runtime pushes its change).  Cost per token: O(non-zero topics
 * of the word) for q, O(1) expected for s (rejection from a uniform topic), the
 * document's topics only when r is drawn.
 *
 * LDA_SAMPLER_DENSE: the textbook O(K) draw (lda_dense_draw), for checking.
 *
 * Use, per clock (each time the worker's counts are read anew):
 *   lda_sampler_clock(s, nk);
 *   per document: lda_sampler_doc_begin(s, z, len);
 *                 z[i] = lda_sampler_token(s, i, w_i, row(w_i), nk, &rng);
 *                 ll += lda_sampler_loglik(s, w_i, row(w_i))  (all i);
 *                 lda_sampler_doc_end(s);
 * Call lda_sampler_clock() whenever the rows may have been fetched anew
 * (another clock or partition on this thread): between two calls the sampler
 * samples against its lists and sums, which follow its own moves only.  A
 * missed call costs freshness, never consistency: every move is written to
 * the row it was drawn for.
 */
#ifndef FLEXRR_APPS_LDA_SAMPLER_H
#define FLEXRR_APPS_LDA_SAMPLER_H

#include <stdint.h>

#include "lda_corpus.h"
#include "lda_model.h"

enum lda_sampler_kind { LDA_SAMPLER_SPARSE, LDA_SAMPLER_DENSE };

struct lda_sampler;

/* c: the training corpus (its word frequencies size the per-word lists).
 * NULL when out of memory. */
struct lda_sampler *lda_sampler_new(const struct lda_hyper *h,
				    enum lda_sampler_kind kind,
				    const struct lda_corpus *c);
void lda_sampler_free(struct lda_sampler *s);
/* "sparse" / "dense" -> kind; -EINVAL for anything else */
int lda_sampler_kind_parse(const char *name, enum lda_sampler_kind *kind);
const char *lda_sampler_kind_name(enum lda_sampler_kind kind);
/* Bytes this sampler holds (for the memory report). */
uint64_t lda_sampler_bytes(const struct lda_sampler *s);

/* The counts were read anew: nk are the topic totals (K floats). */
void lda_sampler_clock(struct lda_sampler *s, const float *nk);

/* The document whose tokens follow: its topics z[0..len) (the sampler
 * rewrites z[i] in lda_sampler_token). */
void lda_sampler_doc_begin(struct lda_sampler *s, uint16_t *z, uint64_t len);
/* Resample token i (word w): moves its count in row (w's K counts), nk and
 * the document's counts from its old topic to the new one, writes z[i] and
 * returns it. */
uint32_t lda_sampler_token(struct lda_sampler *s, uint64_t i, uint32_t w,
			   float *row, float *nk, uint64_t *rng);
/* log sum_k theta_dk phi_kw for a token of word w of the document, on the
 * counts as they are now: theta_dk = (n_dk + alpha) / (len + K alpha),
 * phi_kw = (n_wk + beta) / (n_k + V beta) (= lda_doc_loglik's terms);
 * O(non-zero topics of w), once per distinct word of the document. */
double lda_sampler_loglik(struct lda_sampler *s, uint32_t w, const float *row);
void lda_sampler_doc_end(struct lda_sampler *s);

/* A topic k drawn with probability proportional to inv[k] (> 0, at most
 * inv_max) by rejection from uniform topics: O(1) expected while the
 * topics are not too uneven (the mean acceptance is mean(inv) / inv_max). */
static inline uint32_t lda_draw_inv(const double *inv, uint32_t K,
				    double inv_max, uint64_t *rng)
{
	for (;;) {
		double x = lda_rng_uniform(rng) * K;
		uint32_t k = (uint32_t)x < K ? (uint32_t)x : K - 1;

		/* the fraction of x is a second uniform, independent of k */
		if ((x - k) * inv_max < inv[k])
			return k;
	}
}

#endif
