// SPDX-License-Identifier: MIT
/* LDA sampler on plain arrays (no runtime), on the real KJV corpus (one
 * document per chapter): the training log-likelihood per token rises and
 * the topics are distinct. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lda/lda_corpus.h"
#include "lda/lda_model.h"
#include "lda_test_util.h"

TestSuite(lda_kernel, .timeout = 120);

#define NT 20
#define TOP 10

/* indices of the n largest of row[0..V) by count, column k of nwk */
static void top_words(const float *nwk, uint32_t V, uint32_t k, uint32_t *out,
		      int n)
{
	for (int i = 0; i < n; i++)
		out[i] = UINT32_MAX;
	for (uint32_t w = 0; w < V; w++) {
		float c = nwk[(uint64_t)w * NT + k];
		int i = n;

		while (i > 0 && (out[i - 1] == UINT32_MAX ||
				 nwk[(uint64_t)out[i - 1] * NT + k] < c))
			i--;
		if (i >= n)
			continue;
		memmove(out + i + 1, out + i, (size_t)(n - i - 1) * 4);
		out[i] = w;
	}
}

/* The trained topics are distinct: no two share more than 3 of their 10
 * top words, and on average they share less than half a word (each
 * topic's words are logged to judge by eye). */
static void assert_topics_distinct(const float *nwk, const struct lda_corpus *c)
{
	uint32_t top[NT][TOP];
	int maxov = 0, sumov = 0;

	for (uint32_t k = 0; k < NT; k++) {
		char line[512];
		int n = 0;

		top_words(nwk, c->nwords, k, top[k], TOP);
		for (int i = 0; i < TOP; i++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %s",
				      c->vocab[top[k][i]]);
		cr_log_info("topic %2u:%s\n", k, line);
	}
	for (int a = 0; a < NT; a++)
		for (int b = a + 1; b < NT; b++) {
			int ov = 0;

			for (int i = 0; i < TOP; i++)
				for (int j = 0; j < TOP; j++)
					ov += top[a][i] == top[b][j];
			maxov = ov > maxov ? ov : maxov;
			sumov += ov;
		}
	cr_log_info("top-%d overlap: max %d, mean %.3f per pair\n", TOP, maxov,
		    sumov / (NT * (NT - 1) / 2.0));
	cr_assert_leq(maxov, 3);
	cr_assert_lt(sumov / (NT * (NT - 1) / 2.0), 0.5);
}

Test(lda_kernel, kjv_loglik_rises_topics_distinct)
{
	struct lda_text_opts o;
	struct lda_corpus c;
	struct lda_hyper h = { .K = NT, .alpha = 0.1, .beta = 0.01 };
	double ll[40], scratch[2 * NT];
	uint16_t *z;
	float *nwk, **row, nk[NT] = { 0 };
	int sweeps = frr_lda_quick() ? 15 : 40;

	lda_text_opts_default(&o);
	o.max_doc_frac = 0.25;
	cr_assert_eq(lda_load_text(lda_test_kjv(), &o, &c), 0);
	cr_assert_eq(c.ndocs, 1189);
	h.V = c.nwords;
	cr_log_info("KJV: %llu docs, %u words, %llu tokens\n",
		    (unsigned long long)c.ndocs, c.nwords,
		    (unsigned long long)c.ntokens);
	z = malloc(c.ntokens * sizeof(*z));
	nwk = calloc((size_t)c.nwords * NT, sizeof(*nwk));
	row = malloc(c.ntokens * sizeof(*row));
	/* the sampler takes each token's word row */
	for (uint64_t i = 0; i < c.ntokens; i++)
		row[i] = nwk + (uint64_t)c.word[i] * NT;
	for (uint64_t d = 0; d < c.ndocs; d++)
		lda_init_doc(&h, c.word + c.doc[d], c.doc[d + 1] - c.doc[d],
			     z + c.doc[d], NULL, 1000 + d);
	for (uint64_t i = 0; i < c.ntokens; i++) {
		nwk[(uint64_t)c.word[i] * NT + z[i]] += 1;
		nk[z[i]] += 1;
	}
	for (int s = 0; s < sweeps; s++) {
		uint64_t rng = 77 + (uint64_t)s;
		double sum = 0;

		for (uint64_t d = 0; d < c.ndocs; d++)
			sum += lda_sample_doc(&h, c.doc[d + 1] - c.doc[d],
					      z + c.doc[d], row + c.doc[d], nk,
					      scratch, &rng);
		ll[s] = sum / (double)c.ntokens;
	}
	/* counts stay consistent with the assignments */
	for (uint32_t k = 0; k < NT; k++) {
		double t = 0;

		for (uint32_t w = 0; w < c.nwords; w++)
			t += nwk[(uint64_t)w * NT + k];
		cr_assert_float_eq(t, nk[k], 1e-3);
	}
	cr_log_info("loglik/token: %.4f -> %.4f -> %.4f\n", ll[0],
		    ll[sweeps / 2], ll[sweeps - 1]);
	lda_assert_rising(ll, sweeps);
	assert_topics_distinct(nwk, &c);
	free(z);
	free(row);
	free(nwk);
	lda_corpus_free(&c);
}

/* Topics come from memory an rr helper writes: copied once, every one
 * checked < K before it may index a count table (issue 10, item 4). */
Test(lda_kernel, out_of_range_topic_is_refused)
{
	struct lda_hyper h = { .K = 8, .V = 4, .alpha = 0.1, .beta = 0.01 };
	uint16_t state[5] = { 0, 7, 3, 8, 1 }, z[5];
	uint64_t bad = 99;

	cr_assert_eq(lda_topics_take(&h, state, 3, z, &bad), 0);
	cr_assert(z[0] == 0 && z[1] == 7 && z[2] == 3, "not copied");
	cr_assert_eq(lda_topics_take(&h, state, 5, z, &bad), -EPROTO);
	cr_assert_eq(bad, 3, "first bad token %llu, want 3",
		     (unsigned long long)bad);
	state[3] = 65535;
	cr_assert_eq(lda_topics_take(&h, state, 5, z, &bad), -EPROTO);
	cr_assert_eq(bad, 3);
}

/* The textbook draw, one fused loop (what lda_dense_draw computes). */
static uint32_t ref_draw(const struct lda_hyper *h, const float *row,
			 const float *nk, const double *ndk, double *cdf,
			 uint64_t *rng)
{
	double vb = h->V * h->beta, tot = 0, u;
	uint32_t k;

	for (k = 0; k < h->K; k++) {
		double nw = row[k] > 0 ? row[k] : 0;
		double nt = nk[k] > 0 ? nk[k] : 0;

		tot += (ndk[k] + h->alpha) * (nw + h->beta) / (nt + vb);
		cdf[k] = tot;
	}
	u = lda_rng_uniform(rng) * tot;
	for (k = 0; k + 1 < h->K && cdf[k] <= u; k++)
		;
	return k;
}

/* The dense draw (weights and running sum in separate loops) takes the
 * same topics as the fused textbook loop for the same random numbers: the
 * operations are the same.  K = 37 leaves a vector tail; the counts
 * include negative ones and -0.0 (weighed as 0). */
Test(lda_kernel, dense_draw_equals_reference)
{
	const struct lda_hyper h = {
		.K = 37, .V = 500, .alpha = 0.1, .beta = 0.01
	};
	float row[37], nk[37];
	double ndk[37], cdf[37];
	uint64_t r0 = 99, r1 = 99;
	uint32_t hist[37] = { 0 };

	for (uint32_t k = 0; k < h.K; k++) {
		row[k] = (float)((int)((k * 13) % 7) - 1);
		nk[k] = (float)(((k * 29) % 50) * 3) - 2.0f;
		ndk[k] = (double)((k * 5) % 4);
	}
	row[3] = -0.0f;
	for (int i = 0; i < 4000; i++) {
		uint32_t a = lda_dense_draw(&h, row, nk, ndk, cdf, &r0);
		uint32_t b = ref_draw(&h, row, nk, ndk, cdf, &r1);

		cr_assert_eq(a, b, "draw %d: topic %u vs %u", i, a, b);
		hist[a]++;
	}
	cr_assert_gt(hist[1], 0); /* row[1] = 5: the likeliest but one */
}
