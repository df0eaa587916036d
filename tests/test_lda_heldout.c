// SPDX-License-Identifier: MIT
/* Held-out log-likelihood by document completion, on plain arrays: the
 * split keeps every document exactly once, and against a model whose words
 * each belong to one topic the estimate matches the closed form. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lda/lda_corpus.h"
#include "lda/lda_heldout.h"
#include "lda/lda_model.h"

TestSuite(lda_heldout, .timeout = 60);

/* ndocs documents, document d has 3 + d % 5 tokens, words (d + i) % V */
static void make_corpus(struct lda_corpus *c, uint64_t ndocs, uint32_t V)
{
	uint64_t n = 0;

	c->ndocs = ndocs;
	c->nwords = V;
	c->doc = malloc((ndocs + 1) * sizeof(*c->doc));
	c->word = malloc(ndocs * 8 * sizeof(*c->word));
	c->vocab = NULL;
	for (uint64_t d = 0; d < ndocs; d++) {
		c->doc[d] = n;
		for (uint64_t i = 0; i < 3 + d % 5; i++)
			c->word[n++] = (uint32_t)((d + i) % V);
	}
	c->doc[ndocs] = n;
	c->ntokens = n;
}

Test(lda_heldout, split_keeps_every_document_once)
{
	struct lda_corpus all, c, t;
	uint64_t nt = 0, nd = 0;

	make_corpus(&all, 40, 7);
	make_corpus(&c, 40, 7);
	cr_assert_eq(lda_heldout_split(&c, 0.1, &t), 0);
	cr_assert_eq(t.ndocs, 4); /* documents 9, 19, 29, 39 */
	cr_assert_eq(c.ndocs, 36);
	cr_assert_eq(c.ntokens + t.ntokens, all.ntokens);
	cr_assert_eq(t.nwords, 7);
	for (uint64_t d = 0; d < all.ndocs; d++) {
		int test = d % 10 == 9;
		const struct lda_corpus *x = test ? &t : &c;
		uint64_t *n = test ? &nt : &nd,
			 len = all.doc[d + 1] - all.doc[d];

		cr_assert_eq(x->doc[*n + 1] - x->doc[*n], len, "document %llu",
			     (unsigned long long)d);
		cr_assert_arr_eq(x->word + x->doc[*n], all.word + all.doc[d],
				 len * sizeof(*all.word));
		(*n)++;
	}
	lda_corpus_free(&t);
	lda_corpus_free(&c);
	/* nothing left to test on, or to train on: a clear error */
	make_corpus(&c, 40, 7);
	cr_assert_eq(lda_heldout_split(&c, 0.01, &t), -EINVAL);
	lda_corpus_free(&c);
	make_corpus(&c, 1, 7);
	cr_assert_eq(lda_heldout_split(&c, 0.5, &t), -EINVAL);
	lda_corpus_free(&c);
	lda_corpus_free(&all);
}

/* The model: word w belongs to topic w / 10 with 50 tokens; 4 topics. */
#define HK 4
#define HV 40

static int read_model(void *ctx, int table, uint64_t row, float *out)
{
	(void)ctx;
	for (int k = 0; k < HK; k++)
		out[k] = table == 1 ? 500 : (row / 10 == (uint64_t)k ? 50 : 0);
	return 0;
}

/* log p(w) when the observed half put its n tokens c_k on topics exactly
 * (each word's topic is certain: the other topics' phi is beta / 500) */
static double closed_form(const struct lda_hyper *h, const double *c, double n,
			  uint32_t w)
{
	double p = 0, vb = h->V * h->beta;

	for (int k = 0; k < HK; k++) {
		double nw = w / 10 == (uint32_t)k ? 50 : 0;

		p += (c[k] + h->alpha) / (n + HK * h->alpha) * (nw + h->beta) /
		     (500 + vb);
	}
	return log(p);
}

Test(lda_heldout, completion_matches_closed_form)
{
	struct lda_hyper h = { .K = HK, .V = HV, .alpha = 0.1, .beta = 1e-4 };
	static uint64_t doc[3] = { 0, 40, 80 };
	static uint32_t word[80];
	struct lda_corpus train, test;
	struct lda_heldout *ho;
	double ll = 0, n = 0, want = 0;

	/* document 0: words of topic 2 only; document 1: topics 0 and 1
	 * alternating by pairs (even tokens observed, odd held out) */
	for (int i = 0; i < 40; i++) {
		word[i] = (uint32_t)(20 + i % 10);
		word[40 + i] = (uint32_t)((i / 2) % 2 ? 10 + i % 7 : i % 9);
	}
	test = (struct lda_corpus){ .ndocs = 2,
				    .nwords = HV,
				    .ntokens = 80,
				    .doc = doc,
				    .word = word };
	make_corpus(&train, 400, HV);
	ho = lda_heldout_new(&h, &train, &test, 0, 1, 0, 1);
	cr_assert_not_null(ho);
	cr_assert_eq(lda_heldout_eval(ho, read_model, NULL, 5, &ll, &n), 0);
	cr_assert_eq(n, 40);
	{
		double c0[HK] = { 0, 0, 20, 0 }, c1[HK] = { 10, 10, 0, 0 };

		for (int i = 1; i < 40; i += 2) {
			want += closed_form(&h, c0, 20, word[i]);
			want += closed_form(&h, c1, 20, word[40 + i]);
		}
	}
	cr_log_info("held-out %.6f, closed form %.6f\n", ll / n, want / n);
	cr_assert_float_eq(ll / n, want / n, 1e-6);
	/* the other rank of two takes document 1 only */
	lda_heldout_free(ho);
	ho = lda_heldout_new(&h, &train, &test, 1, 2, 0, 1);
	ll = n = 0;
	cr_assert_eq(lda_heldout_eval(ho, read_model, NULL, 5, &ll, &n), 0);
	cr_assert_eq(n, 20);
	lda_heldout_free(ho);
	lda_corpus_free(&train);
}
