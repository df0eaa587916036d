// SPDX-License-Identifier: MIT
/* Held-out log-likelihood by document completion.  See lda_heldout.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "lda_heldout.h"
#include "lda_sampler.h"

/* A word's non-zero topic k with a = n_wk / (n_k + V beta). */
struct lda_ho_ent {
	uint32_t k;
	float a;
};

struct lda_heldout {
	struct lda_hyper h;
	const struct lda_corpus *test;
	int rank, nranks, tb_word, tb_total;
	double vb, kalpha;
	/* the model as read: phi_kw = (n_wk + beta) inv[k] */
	uint32_t *words; /* distinct words of this rank's documents */
	uint32_t nwords;
	uint64_t *woff; /* V: first entry of the word in ent[] */
	uint32_t *wn;	/* V: its entries */
	uint32_t *wcap; /* V: entries reserved */
	struct lda_ho_ent *ent;
	double *inv, inv_max, ssum;
	float *row; /* K: one row as read */
	/* the document being completed */
	uint32_t *obs, *held; /* its observed / held-out words */
	uint16_t *z;	      /* topics of the observed tokens */
	double *c, *acc;      /* K: counts, averaged counts */
	double rsum;	      /* sum_k c_k inv[k] */
	uint32_t *top, *atop; /* K: topics with c > 0 / acc > 0 */
	uint8_t *in, *ain;    /* K: listed in top / atop */
	uint32_t ntop, natop;
	double *term; /* K: q's terms */
};

static int lda_is_test(uint64_t d, double frac)
{
	return floor((double)(d + 1) * frac) > floor((double)d * frac);
}

int lda_heldout_split(struct lda_corpus *c, double frac,
		      struct lda_corpus *test)
{
	uint64_t nt, tt = 0, nd, td = 0;
	uint64_t *tdoc, *ndoc;
	uint32_t *tword, *nword;

	for (uint64_t d = 0; d < c->ndocs; d++)
		if (lda_is_test(d, frac)) {
			td++;
			tt += c->doc[d + 1] - c->doc[d];
		}
	nd = c->ndocs - td;
	nt = c->ntokens - tt;
	if (!td || !nd || !tt || !nt) {
		frr_err("lda: --heldout %g of %llu documents leaves %llu "
			"training and %llu test documents (%llu and %llu "
			"tokens): choose a fraction that leaves both",
			frac, (unsigned long long)c->ndocs,
			(unsigned long long)nd, (unsigned long long)td,
			(unsigned long long)nt, (unsigned long long)tt);
		return -EINVAL;
	}
	tdoc = malloc((td + 1) * sizeof(*tdoc));
	ndoc = malloc((nd + 1) * sizeof(*ndoc));
	tword = malloc(tt * sizeof(*tword));
	nword = malloc(nt * sizeof(*nword));
	if (!tdoc || !ndoc || !tword || !nword) {
		free(tdoc);
		free(ndoc);
		free(tword);
		free(nword);
		return -ENOMEM;
	}
	tdoc[0] = ndoc[0] = 0;
	td = nd = 0;
	for (uint64_t d = 0; d < c->ndocs; d++) {
		uint64_t len = c->doc[d + 1] - c->doc[d];
		int t = lda_is_test(d, frac);
		uint64_t *off = t ? tdoc : ndoc, *n = t ? &td : &nd;

		memcpy((t ? tword : nword) + off[*n], c->word + c->doc[d],
		       len * sizeof(*tword));
		off[*n + 1] = off[*n] + len;
		(*n)++;
	}
	*test = (struct lda_corpus){ .ndocs = td,
				     .nwords = c->nwords,
				     .ntokens = tt,
				     .doc = tdoc,
				     .word = tword };
	free(c->doc);
	free(c->word);
	c->doc = ndoc;
	c->word = nword;
	c->ndocs = nd;
	c->ntokens = nt;
	return 0;
}

void lda_heldout_free(struct lda_heldout *ho)
{
	if (!ho)
		return;
	free(ho->words);
	free(ho->woff);
	free(ho->wn);
	free(ho->wcap);
	free(ho->ent);
	free(ho->inv);
	free(ho->row);
	free(ho->obs);
	free(ho->held);
	free(ho->z);
	free(ho->c);
	free(ho->acc);
	free(ho->top);
	free(ho->atop);
	free(ho->in);
	free(ho->ain);
	free(ho->term);
	free(ho);
}

/* The distinct words of this rank's test documents, their entries (as
 * lda_sampler's lists: at most 3x a word's training tokens non-zeros) and
 * the longest document. */
static int lda_heldout_words(struct lda_heldout *ho,
			     const struct lda_corpus *train, uint64_t *maxlen)
{
	const struct lda_corpus *t = ho->test;
	uint64_t n = 0;

	ho->words = malloc(t->nwords * sizeof(*ho->words));
	ho->woff = calloc(t->nwords, sizeof(*ho->woff));
	ho->wn = calloc(t->nwords, sizeof(*ho->wn));
	ho->wcap = calloc(t->nwords, sizeof(*ho->wcap));
	if (!ho->words || !ho->woff || !ho->wn || !ho->wcap)
		return -ENOMEM;
	for (uint64_t i = 0; i < train->ntokens; i++)
		if (ho->wcap[train->word[i]] < ho->h.K)
			ho->wcap[train->word[i]]++;
	*maxlen = 1;
	for (uint64_t d = (uint64_t)ho->rank; d < t->ndocs;
	     d += (uint64_t)ho->nranks) {
		if (t->doc[d + 1] - t->doc[d] > *maxlen)
			*maxlen = t->doc[d + 1] - t->doc[d];
		for (uint64_t i = t->doc[d]; i < t->doc[d + 1]; i++) {
			uint32_t w = t->word[i];

			if (ho->wn[w]) /* 1 + listed: taken */
				continue;
			ho->wn[w] = 1;
			ho->words[ho->nwords++] = w;
			ho->wcap[w] = ho->wcap[w] * 3 < ho->h.K
					  ? ho->wcap[w] * 3
					  : ho->h.K;
			ho->woff[w] = n;
			n += ho->wcap[w];
		}
	}
	ho->ent = malloc((n ? n : 1) * sizeof(*ho->ent));
	return ho->ent ? 0 : -ENOMEM;
}

struct lda_heldout *lda_heldout_new(const struct lda_hyper *h,
				    const struct lda_corpus *train,
				    const struct lda_corpus *test, int rank,
				    int nranks, int tb_word, int tb_total)
{
	struct lda_heldout *ho = calloc(1, sizeof(*ho));
	uint64_t maxlen = 1;
	uint32_t K = h->K;

	if (!ho)
		return NULL;
	*ho = (struct lda_heldout){ .h = *h,
				    .test = test,
				    .rank = rank,
				    .nranks = nranks,
				    .tb_word = tb_word,
				    .tb_total = tb_total,
				    .vb = h->V * h->beta,
				    .kalpha = K * h->alpha };
	if (lda_heldout_words(ho, train, &maxlen))
		goto fail;
	ho->inv = malloc(K * sizeof(*ho->inv));
	ho->row = malloc(K * sizeof(*ho->row));
	ho->obs = malloc(maxlen * sizeof(*ho->obs));
	ho->held = malloc(maxlen * sizeof(*ho->held));
	ho->z = malloc(maxlen * sizeof(*ho->z));
	ho->c = calloc(K, sizeof(*ho->c));
	ho->acc = calloc(K, sizeof(*ho->acc));
	ho->top = malloc(K * sizeof(*ho->top));
	ho->atop = malloc(K * sizeof(*ho->atop));
	ho->in = calloc(K, 1);
	ho->ain = calloc(K, 1);
	ho->term = malloc(K * sizeof(*ho->term));
	if (!ho->inv || !ho->row || !ho->obs || !ho->held || !ho->z || !ho->c ||
	    !ho->acc || !ho->top || !ho->atop || !ho->in || !ho->ain ||
	    !ho->term)
		goto fail;
	return ho;
fail:
	lda_heldout_free(ho);
	return NULL;
}

/* Read the model: inv from the totals, each word's non-zero entries. */
static int lda_ho_read(struct lda_heldout *ho, lda_row_read_fn read, void *ctx)
{
	uint32_t K = ho->h.K;
	int rc = read(ctx, ho->tb_total, 0, ho->row);

	if (rc)
		return rc;
	ho->ssum = ho->inv_max = 0;
	for (uint32_t k = 0; k < K; k++) {
		ho->inv[k] = 1.0 / ((ho->row[k] > 0 ? ho->row[k] : 0) + ho->vb);
		ho->ssum += ho->inv[k];
		if (ho->inv[k] > ho->inv_max)
			ho->inv_max = ho->inv[k];
	}
	for (uint32_t i = 0; i < ho->nwords; i++) {
		uint32_t w = ho->words[i], n = 0;
		struct lda_ho_ent *e = ho->ent + ho->woff[w];

		rc = read(ctx, ho->tb_word, w, ho->row);
		if (rc)
			return rc;
		/* a row beyond its reserve (read mid-update) keeps the
		 * first ones: a model a little off, never a wrong index */
		for (uint32_t k = 0; k < K && n < ho->wcap[w]; k++)
			if (ho->row[k] > 0)
				e[n++] = (struct lda_ho_ent){
					k, (float)(ho->row[k] * ho->inv[k])
				};
		ho->wn[w] = n;
	}
	return 0;
}

static void lda_ho_add(struct lda_heldout *ho, uint32_t k, double d)
{
	ho->c[k] += d;
	ho->rsum += d * ho->inv[k];
	if (!ho->in[k]) {
		ho->in[k] = 1;
		ho->top[ho->ntop++] = k;
	}
}

/* One exact Gibbs step for observed token j (word w), phi fixed:
 * p(k) ~ (c_k + alpha)(n_wk + beta) inv[k] = q + r + s as in SparseLDA. */
static void lda_ho_step(struct lda_heldout *ho, uint64_t j, uint32_t w,
			uint64_t *rng)
{
	const struct lda_ho_ent *e = ho->ent + ho->woff[w];
	double q = 0, r, u;
	uint32_t n = ho->wn[w], k = ho->z[j], m;

	lda_ho_add(ho, k, -1);
	for (m = 0; m < n; m++) {
		ho->term[m] = (ho->c[e[m].k] + ho->h.alpha) * e[m].a;
		q += ho->term[m];
	}
	r = ho->rsum > 0 ? ho->h.beta * ho->rsum : 0;
	u = lda_rng_uniform(rng) *
	    (q + r + ho->h.alpha * ho->h.beta * ho->ssum);
	k = ho->h.K;
	if (u < q) {
		for (m = 0; m + 1 < n && u >= ho->term[m]; m++)
			u -= ho->term[m];
		k = e[m].k;
	} else if ((u -= q) < r) {
		for (m = 0; m < ho->ntop && k == ho->h.K; m++) {
			double t = ho->h.beta * ho->c[ho->top[m]] *
				   ho->inv[ho->top[m]];

			if (t > 0 && u < t)
				k = ho->top[m];
			u -= t;
		}
	}
	if (k == ho->h.K) /* s, or rounding left r nothing */
		k = lda_draw_inv(ho->inv, ho->h.K, ho->inv_max, rng);
	ho->z[j] = (uint16_t)k;
	lda_ho_add(ho, k, 1);
}

/* log sum_k theta_k phi_kw for each held-out word, theta from acc. */
static double lda_ho_score(const struct lda_heldout *ho, uint64_t nobs,
			   uint64_t nh)
{
	double ll = 0, r = 0, norm = 1.0 / ((double)nobs + ho->kalpha);
	double s = ho->h.alpha * ho->h.beta * ho->ssum;

	for (uint32_t m = 0; m < ho->natop; m++)
		r += ho->acc[ho->atop[m]] * ho->inv[ho->atop[m]];
	r *= ho->h.beta;
	for (uint64_t i = 0; i < nh; i++) {
		uint32_t w = ho->held[i];
		const struct lda_ho_ent *e = ho->ent + ho->woff[w];
		double q = 0;

		for (uint32_t m = 0; m < ho->wn[w]; m++)
			q += (ho->acc[e[m].k] + ho->h.alpha) * e[m].a;
		ll += log((q + r + s) * norm);
	}
	return ll;
}

static void lda_ho_keep(struct lda_heldout *ho)
{
	for (uint32_t m = 0; m < ho->ntop; m++) {
		uint32_t k = ho->top[m];

		if (ho->c[k] <= 0)
			continue;
		ho->acc[k] += ho->c[k] / LDA_HO_KEEP;
		if (!ho->ain[k]) {
			ho->ain[k] = 1;
			ho->atop[ho->natop++] = k;
		}
	}
}

/* Complete test document d: estimate theta from the observed half, score
 * the held-out half. */
static double lda_ho_doc(struct lda_heldout *ho, uint64_t d, uint64_t seed,
			 uint64_t *nheld)
{
	const struct lda_corpus *t = ho->test;
	uint64_t len = t->doc[d + 1] - t->doc[d], no = 0, nh = 0;
	uint64_t rng = seed * 0x9e3779b97f4a7c15ull ^ (d + 1);
	double ll;

	for (uint64_t i = 0; i < len; i++)
		if (i % 2)
			ho->held[nh++] = t->word[t->doc[d] + i];
		else
			ho->obs[no++] = t->word[t->doc[d] + i];
	ho->ntop = ho->natop = 0;
	ho->rsum = 0;
	for (uint64_t j = 0; j < no; j++) {
		ho->z[j] = (uint16_t)(frr_splitmix64(&rng) % ho->h.K);
		lda_ho_add(ho, ho->z[j], 1);
	}
	for (int sweep = 0; sweep < LDA_HO_BURN + LDA_HO_KEEP; sweep++) {
		for (uint64_t j = 0; j < no; j++)
			lda_ho_step(ho, j, ho->obs[j], &rng);
		if (sweep >= LDA_HO_BURN)
			lda_ho_keep(ho);
	}
	ll = lda_ho_score(ho, no, nh);
	for (uint32_t m = 0; m < ho->ntop; m++) {
		ho->c[ho->top[m]] = 0;
		ho->in[ho->top[m]] = 0;
	}
	for (uint32_t m = 0; m < ho->natop; m++) {
		ho->acc[ho->atop[m]] = 0;
		ho->ain[ho->atop[m]] = 0;
	}
	*nheld = nh;
	return ll;
}

int lda_heldout_eval(struct lda_heldout *ho, lda_row_read_fn read, void *ctx,
		     uint64_t seed, double *ll, double *ntok)
{
	const struct lda_corpus *t = ho->test;
	int rc = lda_ho_read(ho, read, ctx);

	if (rc)
		return rc;
	for (uint64_t d = (uint64_t)ho->rank; d < t->ndocs;
	     d += (uint64_t)ho->nranks) {
		uint64_t nh = 0;

		*ll += lda_ho_doc(ho, d, seed, &nh);
		*ntok += (double)nh;
	}
	return 0;
}
