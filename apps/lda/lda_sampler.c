// SPDX-License-Identifier: MIT
/* LDA token samplers: SparseLDA's buckets and the O(K) draw.  See
 * lda_sampler.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lda_sampler.h"

/* A non-zero count of a word's row: topic k, count c (negative in a stale
 * view that our own move took below zero). */
struct lda_ent {
	uint32_t k;
	int32_t c;
};

struct lda_word {
	uint64_t off;	/* its list: ent[off .. off + cap) */
	uint32_t cap;	/* min(K, 4 x its corpus frequency) */
	uint32_t n;	/* entries: its non-zero counts */
	uint32_t epoch; /* list built in this epoch (0: never) */
	uint32_t over;	/* overflowed: the row itself is used this epoch */
	uint32_t stamp; /* document whose log-likelihood term is cached */
	double ll;
};

struct lda_sampler {
	struct lda_hyper h;
	enum lda_sampler_kind kind;
	uint32_t epoch, stamp;
	double vb, kalpha;
	struct lda_word *w;  /* V */
	struct lda_ent *ent; /* every word's list */
	uint64_t nent;
	/* the topic totals as sampled against, kept with the moves */
	double *inv;	/* K: 1 / (n_k + V beta) */
	double inv_max; /* >= every inv[k] */
	double ssum;	/* sum of inv: s = alpha beta ssum */
	double *coef;	/* K: (alpha + n_dk) inv[k] */
	/* the current document */
	uint16_t *z;
	uint64_t len;
	double *ndk;	/* K: its topic counts */
	double rsum;	/* sum_k n_dk inv[k]: r = beta rsum */
	uint32_t *dtop; /* K: topics it has held */
	uint32_t ndtop;
	uint32_t *tmark; /* K: stamp of the document listing the topic */
	/* scratch */
	double *term; /* K: q's terms, by list entry */
	double *cdf;  /* K: the dense draw */
};

int lda_sampler_kind_parse(const char *name, enum lda_sampler_kind *kind)
{
	if (!strcmp(name, "sparse"))
		*kind = LDA_SAMPLER_SPARSE;
	else if (!strcmp(name, "dense"))
		*kind = LDA_SAMPLER_DENSE;
	else
		return -EINVAL;
	return 0;
}

const char *lda_sampler_kind_name(enum lda_sampler_kind kind)
{
	return kind == LDA_SAMPLER_DENSE ? "dense" : "sparse";
}

void lda_sampler_free(struct lda_sampler *s)
{
	if (!s)
		return;
	free(s->w);
	free(s->ent);
	free(s->inv);
	free(s->coef);
	free(s->ndk);
	free(s->dtop);
	free(s->tmark);
	free(s->term);
	free(s->cdf);
	free(s);
}

/* A row of a consistent table has at most f_w non-zeros (f_w: the word's
 * tokens); a row read while being updated mixes such rows, and a clock of
 * our own moves adds at most 2 f_w.  4 f_w makes an overflow rare, and an
 * overflow only switches the word to its row for the rest of the clock. */
static int lda_sampler_layout(struct lda_sampler *s, const struct lda_corpus *c)
{
	uint32_t V = s->h.V, K = s->h.K;

	s->w = calloc(V, sizeof(*s->w));
	if (!s->w)
		return -ENOMEM;
	if (s->kind == LDA_SAMPLER_DENSE)
		return 0;
	for (uint64_t i = 0; i < c->ntokens; i++)
		if (s->w[c->word[i]].cap < K)
			s->w[c->word[i]].cap++;
	for (uint32_t v = 0; v < V; v++) {
		struct lda_word *lw = &s->w[v];

		lw->cap = (uint64_t)lw->cap * 4 < K ? lw->cap * 4 : K;
		lw->off = s->nent;
		s->nent += lw->cap;
	}
	return 0;
}

struct lda_sampler *lda_sampler_new(const struct lda_hyper *h,
				    enum lda_sampler_kind kind,
				    const struct lda_corpus *c)
{
	struct lda_sampler *s = calloc(1, sizeof(*s));
	uint32_t K = h->K;

	if (!s)
		return NULL;
	s->h = *h;
	s->kind = kind;
	s->vb = h->V * h->beta;
	s->kalpha = K * h->alpha;
	if (lda_sampler_layout(s, c))
		goto fail;
	s->ent = malloc((s->nent ? s->nent : 1) * sizeof(*s->ent));
	s->inv = malloc(K * sizeof(*s->inv));
	s->coef = malloc(K * sizeof(*s->coef));
	s->ndk = calloc(K, sizeof(*s->ndk));
	s->dtop = malloc(K * sizeof(*s->dtop));
	s->tmark = calloc(K, sizeof(*s->tmark));
	s->term = malloc(K * sizeof(*s->term));
	s->cdf = malloc(K * sizeof(*s->cdf));
	if (!s->ent || !s->inv || !s->coef || !s->ndk || !s->dtop ||
	    !s->tmark || !s->term || !s->cdf)
		goto fail;
	return s;
fail:
	lda_sampler_free(s);
	return NULL;
}

uint64_t lda_sampler_bytes(const struct lda_sampler *s)
{
	return sizeof(*s) + s->h.V * sizeof(*s->w) + s->nent * sizeof(*s->ent) +
	       (uint64_t)s->h.K * (5 * sizeof(double) + 2 * sizeof(uint32_t));
}

void lda_sampler_clock(struct lda_sampler *s, const float *nk)
{
	double sum = 0, mx = 0;

	if (++s->epoch == 0) { /* wrapped: forget every list */
		for (uint32_t v = 0; v < s->h.V; v++)
			s->w[v].epoch = 0;
		s->epoch = 1;
	}
	for (uint32_t k = 0; k < s->h.K; k++) {
		double inv = 1.0 / ((nk[k] > 0 ? (double)nk[k] : 0) + s->vb);

		s->inv[k] = inv;
		s->coef[k] = s->h.alpha * inv;
		sum += inv;
		mx = inv > mx ? inv : mx;
	}
	s->ssum = sum;
	s->inv_max = mx;
}

/* Whether row[k .. k + 16) are all +0.0f (the usual case at large K). */
static inline int lda_zero16(const float *row)
{
	uint64_t b[8];

	memcpy(b, row, sizeof(b));
	return !(b[0] | b[1] | b[2] | b[3] | b[4] | b[5] | b[6] | b[7]);
}

/* The word's list from its row: one pass over K, skipping zeros 16 at a
 * time. */
static void lda_word_build(struct lda_sampler *s, struct lda_word *lw,
			   const float *row)
{
	struct lda_ent *e = s->ent + lw->off;
	uint32_t n = 0, K = s->h.K;

	lw->epoch = s->epoch;
	lw->over = s->kind == LDA_SAMPLER_DENSE;
	lw->n = 0;
	if (lw->over)
		return;
	for (uint32_t k0 = 0; k0 < K; k0 += 16) {
		uint32_t end = k0 + 16 < K ? k0 + 16 : K;

		if (end - k0 == 16 && lda_zero16(row + k0))
			continue;
		for (uint32_t k = k0; k < end; k++) {
			if (row[k] == 0)
				continue;
			if (n == lw->cap) {
				lw->over = 1; /* the row stays the counts */
				return;
			}
			e[n++] = (struct lda_ent){ k, (int32_t)row[k] };
		}
	}
	lw->n = n;
}

/* Topic k's total and the document's count change by d: keep inv, the
 * sums and coef. */
static inline void lda_topic_add(struct lda_sampler *s, float *nk, uint32_t k,
				 double d)
{
	double inv_old = s->inv[k], nd_old = s->ndk[k], inv;

	nk[k] += (float)d;
	s->ndk[k] = nd_old + d;
	inv = 1.0 / ((nk[k] > 0 ? (double)nk[k] : 0) + s->vb);
	s->inv[k] = inv;
	s->ssum += inv - inv_old;
	if (inv > s->inv_max)
		s->inv_max = inv;
	s->rsum += s->ndk[k] * inv - nd_old * inv_old;
	s->coef[k] = (s->h.alpha + s->ndk[k]) * inv;
}

/* One pass over the word's list: takes the token out of topic o (adding
 * an entry of -1 when o has none: a stale view), drops o's entry if that
 * emptied it, and returns q = sum of coef[k] c_k over c_k > 0 with its
 * terms in term[] by entry.  -1 when the list was full: the row, which
 * holds the same counts, takes over for the rest of the epoch. */
static double lda_q_take(struct lda_sampler *s, struct lda_word *lw, uint32_t o)
{
	struct lda_ent *e = s->ent + lw->off;
	uint32_t n = lw->n, at = UINT32_MAX;
	double q = 0;

	for (uint32_t m = 0; m < n; m++) {
		struct lda_ent x = e[m];
		double t;

		if (x.k == o) {
			e[m].c = --x.c;
			at = m;
		}
		t = x.c > 0 ? s->coef[x.k] * x.c : 0;
		s->term[m] = t;
		q += t;
	}
	if (at == UINT32_MAX) {
		if (n == lw->cap) { /* the row (kept equal) takes over */
			lw->over = 1;
			return -1;
		}
		e[n] = (struct lda_ent){ o, -1 };
		s->term[n] = 0;
		lw->n++;
	} else if (!e[at].c) {
		e[at] = e[n - 1];
		s->term[at] = s->term[n - 1];
		lw->n--;
	}
	return q;
}

/* Topic k gains the token: entry j when the draw came from q (else
 * UINT32_MAX: looked up) or a new entry; when the list is full the row
 * takes over. */
static void lda_word_put(struct lda_sampler *s, struct lda_word *lw, uint32_t k,
			 uint32_t j)
{
	struct lda_ent *e = s->ent + lw->off;

	if (j == UINT32_MAX)
		for (j = 0; j < lw->n && e[j].k != k; j++)
			;
	if (j < lw->n) {
		e[j].c += 1;
	} else if (lw->n < lw->cap) {
		e[lw->n++] = (struct lda_ent){ k, 1 };
	} else {
		lw->over = 1;
	}
}

/* u in [0, r): a topic of the document by beta n_dk inv[k] (r = beta
 * rsum); K when rounding left nothing to pick. */
static uint32_t lda_r_walk(const struct lda_sampler *s, double u)
{
	uint32_t last = s->h.K;

	for (uint32_t m = 0; m < s->ndtop; m++) {
		uint32_t k = s->dtop[m];
		double t = s->h.beta * s->ndk[k] * s->inv[k];

		if (t <= 0)
			continue;
		if (u < t)
			return k;
		u -= t;
		last = k;
	}
	return last;
}

/* SparseLDA's draw with the token already out of ndk/nk and q summed;
 * *j: the entry when drawn from q, else UINT32_MAX. */
static uint32_t lda_sparse_draw(struct lda_sampler *s, struct lda_word *lw,
				double q, uint64_t *rng, uint32_t *j)
{
	const struct lda_ent *e = s->ent + lw->off;
	double r = s->rsum > 0 ? s->h.beta * s->rsum : 0;
	double sb = s->h.alpha * s->h.beta * s->ssum;
	double u = lda_rng_uniform(rng) * (q + r + sb);
	uint32_t k, last = UINT32_MAX;

	*j = UINT32_MAX;
	if (u < q) {
		for (uint32_t m = 0; m < lw->n; m++) {
			if (u < s->term[m]) {
				*j = m;
				return e[m].k;
			}
			u -= s->term[m];
			if (s->term[m] > 0)
				last = m;
		}
		if (last != UINT32_MAX) { /* rounding */
			*j = last;
			return e[last].k;
		}
	}
	u -= q;
	if (u >= 0 && u < r) {
		k = lda_r_walk(s, u);
		if (k < s->h.K)
			return k;
	}
	return lda_draw_inv(s->inv, s->h.K, s->inv_max, rng);
}

uint32_t lda_sampler_token(struct lda_sampler *s, uint64_t i, uint32_t w,
			   float *row, float *nk, uint64_t *rng)
{
	struct lda_word *lw = &s->w[w];
	uint32_t k = s->z[i];
	double q = -1;

	if (lw->epoch != s->epoch)
		lda_word_build(s, lw, row);
	lda_topic_add(s, nk, k, -1);
	/* the row gets every move (the runtime pushes its change); the
	 * sparse draw reads the list, which holds the same counts */
	row[k] -= 1;
	if (!lw->over)
		q = lda_q_take(s, lw, k);
	if (q >= 0) {
		uint32_t j;

		k = lda_sparse_draw(s, lw, q, rng, &j);
		lda_word_put(s, lw, k, j);
	} else { /* dense, or an overflowed list */
		k = lda_dense_draw(&s->h, row, nk, s->ndk, s->cdf, rng);
	}
	row[k] += 1;
	lda_topic_add(s, nk, k, 1);
	if (s->tmark[k] != s->stamp) {
		s->tmark[k] = s->stamp;
		s->dtop[s->ndtop++] = k;
	}
	s->z[i] = (uint16_t)k;
	return k;
}

void lda_sampler_doc_begin(struct lda_sampler *s, uint16_t *z, uint64_t len)
{
	if (++s->stamp == 0) { /* wrapped: clear the marks */
		for (uint32_t v = 0; v < s->h.V; v++)
			s->w[v].stamp = 0;
		memset(s->tmark, 0, s->h.K * sizeof(*s->tmark));
		s->stamp = 1;
	}
	s->z = z;
	s->len = len;
	s->ndtop = 0;
	s->rsum = 0;
	for (uint64_t i = 0; i < len; i++) {
		s->ndk[z[i]] += 1;
		if (s->tmark[z[i]] != s->stamp) {
			s->tmark[z[i]] = s->stamp;
			s->dtop[s->ndtop++] = z[i];
		}
	}
	for (uint32_t m = 0; m < s->ndtop; m++) {
		uint32_t k = s->dtop[m];

		s->coef[k] = (s->h.alpha + s->ndk[k]) * s->inv[k];
		s->rsum += s->ndk[k] * s->inv[k];
	}
}

double lda_sampler_loglik(struct lda_sampler *s, uint32_t w, const float *row)
{
	struct lda_word *lw = &s->w[w];
	double p = 0;

	if (lw->stamp == s->stamp)
		return lw->ll;
	if (lw->epoch != s->epoch)
		lda_word_build(s, lw, row);
	if (lw->over) { /* sum_k coef[k] (n_wk + beta) over every topic */
		for (uint32_t k = 0; k < s->h.K; k++)
			p += s->coef[k] *
			     ((row[k] > 0 ? row[k] : 0) + s->h.beta);
	} else { /* q + r + s */
		const struct lda_ent *e = s->ent + lw->off;

		for (uint32_t m = 0; m < lw->n; m++)
			if (e[m].c > 0)
				p += s->coef[e[m].k] * e[m].c;
		p += s->h.beta * s->rsum + s->h.alpha * s->h.beta * s->ssum;
	}
	lw->stamp = s->stamp;
	lw->ll = log(p / ((double)s->len + s->kalpha));
	return lw->ll;
}

void lda_sampler_doc_end(struct lda_sampler *s)
{
	for (uint32_t m = 0; m < s->ndtop; m++) {
		uint32_t k = s->dtop[m];

		s->ndk[k] = 0;
		s->coef[k] = s->h.alpha * s->inv[k];
	}
	s->ndtop = 0;
	s->rsum = 0;
	s->z = NULL;
	s->len = 0;
}
