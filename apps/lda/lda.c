// SPDX-License-Identifier: MIT
/*
 * LDA by collapsed Gibbs sampling as a flexrr app.  Work items are
 * documents; each data partition is a contiguous run of documents holding
 * about 1/N of the tokens (N partitions).
 *
 * Tables: "word_topic" (V rows x K counts) and "topic_total" (1 x K), both
 * ADD tables.  The topic of every token is the document's item state
 * (uint16 per token, frr_item_state): whichever thread samples a document
 * gets its current assignments and leaves the new ones, and the count
 * changes it makes go to the tables as increments, so the counts stay
 * consistent with the assignments wherever a document is sampled.
 *
 * Initial assignments are a deterministic function of (seed, document), so
 * every process computes the initial counts of every word itself and the
 * tables start consistent with the item states (init_row) without an extra
 * clock.  A thread samples against its cached rows: the counts fetched at
 * its first access in the clock plus its own moves (the AD-LDA scheme:
 * other partitions' moves arrive through the table at later clocks,
 * staleness bounded by SSP); the runtime pushes the net changes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/modelfile.h"
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "lda_corpus.h"
#include "lda_heldout.h"
#include "lda_model.h"
#include "lda_opts.h"
#include "lda_sampler.h"

enum { TB_WORD_TOPIC, TB_TOPIC_TOTAL };
enum { ST_LOGLIK, ST_TOKENS, ST_HO_LL, ST_HO_TOKENS, ST_COUNT };

/* A worker thread's scratch (frr_scratch). */
struct lda_thread {
	struct lda_sampler *smp;
	uint16_t *z;	 /* maxlen: the document's topics, copied (rr) */
	int clock, part; /* the rows the sampler's lists are of */
};

struct lda_app {
	struct lda_corpus c;
	struct lda_hyper h;
	uint64_t seed, maxlen; /* maxlen: tokens of the longest document */
	int nparts;
	uint64_t *bound; /* nparts + 1 document boundaries */
	float *init_nwk; /* initial counts, V x K */
	float *init_nk;	 /* K */
	float *phi0;	 /* --load: word-topic counts to start from */
	enum lda_sampler_kind sampler;
	double heldout;		/* fraction of documents held out */
	struct lda_corpus test; /* the held-out documents */
	struct lda_heldout *ho;
	uint64_t top_words;
	char *top_text; /* leader: the latest top-words listing */
	int leader;	/* this process evaluates (clock_local) */
	const char *save_path;
	int progress; /* print the metrics every clock */
};

static void lda_destroy(void *app)
{
	struct lda_app *a = app;

	if (!a)
		return;
	if (a->top_text) /* the run's end: the last clock's topics */
		fputs(a->top_text, stdout);
	fflush(stdout);
	free(a->top_text);
	free(a->bound);
	free(a->init_nwk);
	free(a->init_nk);
	free(a->phi0);
	lda_heldout_free(a->ho);
	lda_corpus_free(&a->test);
	lda_corpus_free(&a->c);
	free(a);
}

static uint64_t lda_doc_seed(const struct lda_app *a, uint64_t d)
{
	uint64_t s = a->seed * FRR_GOLDEN_GAMMA ^ (d + 1);

	return frr_splitmix64(&s);
}

static uint64_t lda_len(const struct lda_app *a, uint64_t d)
{
	return a->c.doc[d + 1] - a->c.doc[d];
}

/* Documents split so each partition gets about ntokens / N tokens and at
 * least one document. */
static int lda_partition(struct lda_app *a)
{
	uint64_t N = (uint64_t)a->nparts, d = 0;

	if (a->c.ndocs < N) {
		frr_err("lda: %llu documents cannot fill %llu data "
			"partitions: run fewer processes or threads (-n, -t) "
			"or give more documents",
			(unsigned long long)a->c.ndocs, (unsigned long long)N);
		return -EINVAL;
	}
	a->bound = calloc(N + 1, sizeof(*a->bound));
	if (!a->bound)
		return -ENOMEM;
	for (uint64_t p = 1; p < N; p++) {
		uint64_t goal = a->c.ntokens * p / N;

		while (d < a->c.ndocs && a->c.doc[d] < goal)
			d++;
		if (d <= a->bound[p - 1]) /* a long document before */
			d = a->bound[p - 1] + 1;
		if (d > a->c.ndocs - (N - p)) /* leave one per partition */
			d = a->c.ndocs - (N - p);
		a->bound[p] = d;
	}
	a->bound[N] = a->c.ndocs;
	return 0;
}

/* Every process computes the counts of the initial assignments. */
static int lda_init_counts(struct lda_app *a)
{
	uint32_t K = a->h.K;
	uint16_t *z;

	a->maxlen = 1;
	for (uint64_t d = 0; d < a->c.ndocs; d++)
		if (lda_len(a, d) > a->maxlen)
			a->maxlen = lda_len(a, d);
	a->init_nwk = calloc((size_t)a->h.V * K, sizeof(float));
	a->init_nk = calloc(K, sizeof(float));
	z = malloc(a->maxlen * sizeof(*z));
	if (!a->init_nwk || !a->init_nk || !z) {
		free(z);
		return -ENOMEM;
	}
	for (uint64_t d = 0; d < a->c.ndocs; d++) {
		const uint32_t *w = a->c.word + a->c.doc[d];
		uint64_t len = lda_len(a, d);

		lda_init_doc(&a->h, w, len, z, a->phi0, lda_doc_seed(a, d));
		for (uint64_t i = 0; i < len; i++) {
			a->init_nwk[(uint64_t)w[i] * K + z[i]] += 1;
			a->init_nk[z[i]] += 1;
		}
	}
	free(z);
	return 0;
}

static void lda_shape(const struct lda_app *a, struct frr_model_table *t)
{
	t[0] = (struct frr_model_table){ "word_topic", a->h.V, a->h.K };
	t[1] = (struct frr_model_table){ "topic_total", 1, a->h.K };
}

static int lda_load_corpus(struct lda_app *a, struct lda_opts *o)
{
	if (o->uci)
		return lda_load_uci(o->uci, o->vocab, &a->c);
	return lda_load_text(o->text, &o->t, &a->c);
}

static int lda_create(const struct frr_job_info *job, int argc, char **argv,
		      void **app)
{
	struct frr_model_table t[2];
	struct lda_opts o;
	struct lda_app *a;
	float *m[2] = { NULL, NULL };
	int rc;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->seed = job->seed;
	a->nparts = job->nparts;
	a->leader = job->leader;
	rc = lda_parse_opts(argc, argv, &o);
	if (rc > 0) /* help: printed by frr_run_main */
		rc = -ECANCELED;
	if (rc)
		goto destroy;
	a->h = (struct lda_hyper){ .K = o.K, .alpha = o.alpha, .beta = o.beta };
	a->sampler = (enum lda_sampler_kind)o.sampler;
	a->heldout = o.heldout;
	a->top_words = o.top_words;
	a->save_path = o.save_path;
	a->progress = o.progress;
	rc = lda_load_corpus(a, &o);
	if (rc)
		goto destroy;
	a->h.V = a->c.nwords;
	if (o.write_uci && job->leader) {
		rc = lda_write_uci(&a->c, o.write_uci);
		if (rc)
			goto destroy;
	}
	if (a->heldout > 0) {
		rc = lda_heldout_split(&a->c, a->heldout, &a->test);
		if (rc)
			goto destroy;
	}
	if (o.load) {
		lda_shape(a, t);
		rc = frr_model_load(o.load, "lda", t, 2, m);
		if (rc)
			goto destroy;
		a->phi0 = m[0];
		free(m[1]);
	}
	rc = lda_partition(a);
	if (!rc)
		rc = lda_init_counts(a);
	if (rc)
		goto destroy;
	if (a->heldout > 0) {
		/* the leader scores every test document */
		a->ho = lda_heldout_new(&a->h, &a->c, &a->test, 0, 1,
					TB_WORD_TOPIC, TB_TOPIC_TOTAL);
		if (!a->ho) {
			rc = -ENOMEM;
			goto destroy;
		}
	}
	frr_info("lda: %llu documents, %u words, %llu tokens, %u topics, "
		 "%s sampler, %llu held-out documents",
		 (unsigned long long)a->c.ndocs, a->h.V,
		 (unsigned long long)a->c.ntokens, a->h.K,
		 lda_sampler_kind_name(a->sampler),
		 (unsigned long long)a->test.ndocs);
	*app = a;
	return 0;

destroy:
	lda_destroy(a);
	return rc;
}

static void lda_init_row(void *app, int table, uint64_t row, float *out,
			 uint32_t cols)
{
	struct lda_app *a = app;
	const float *src =
	    table == TB_WORD_TOPIC ? a->init_nwk + row * cols : a->init_nk;

	memcpy(out, src, cols * sizeof(float));
}

static int lda_tables(void *app, struct frr_table_spec *specs, int max)
{
	struct lda_app *a = app;

	if (max < 2)
		return -EINVAL;
	specs[TB_WORD_TOPIC] = (struct frr_table_spec){
		.name = "word_topic",
		.rows = a->h.V,
		.cols = a->h.K,
		.rule = FRR_UPDATE_ADD,
		.init_row = lda_init_row,
	};
	specs[TB_TOPIC_TOTAL] = (struct frr_table_spec){
		.name = "topic_total",
		.rows = 1,
		.cols = a->h.K,
		.rule = FRR_UPDATE_ADD,
		.init_row = lda_init_row,
	};
	return 2;
}

static int lda_load_partition(void *app, int part, uint64_t *nitems,
			      void **data)
{
	struct lda_app *a = app;

	/* the corpus is parsed once per process in create() */
	*nitems = a->bound[part + 1] - a->bound[part];
	*data = &a->bound[part];
	return 0;
}

/* A partition's documents read their words' rows and the totals; the
 * leader's evaluation (held-out documents, --save, --top-words) reads
 * every word's row. */
static int lda_part_rows(void *app, int part, struct frr_rowset *rs)
{
	struct lda_app *a = app;
	int rc = frr_rows_add(rs, TB_TOPIC_TOTAL, 0, 1);

	if (!rc && a->leader && (a->ho || a->save_path || a->top_words))
		return frr_rows_add(rs, TB_WORD_TOPIC, 0, a->h.V);
	for (uint64_t d = a->bound[part]; d < a->bound[part + 1] && !rc; d++) {
		const uint32_t *w = a->c.word + a->c.doc[d];

		for (uint64_t i = 0, n = lda_len(a, d); i < n && !rc; i++)
			rc = frr_rows_add(rs, TB_WORD_TOPIC, w[i], 1);
	}
	return rc;
}

static size_t lda_state_size(void *app, int part, uint64_t item)
{
	struct lda_app *a = app;

	return lda_len(a, a->bound[part] + item) * sizeof(uint16_t);
}

/* A document's Gibbs sweep costs about its tokens (documents range from
 * a verse to chapters): reassignment splits by them.  Empty ones cost a
 * little too (they are skipped, not free). */
static double lda_item_cost(void *app, int part, uint64_t item)
{
	struct lda_app *a = app;

	return 1.0 + (double)lda_len(a, a->bound[part] + item);
}

static void lda_state_init(void *app, int part, uint64_t item, void *state)
{
	struct lda_app *a = app;
	uint64_t d = a->bound[part] + item;

	lda_init_doc(&a->h, a->c.word + a->c.doc[d], lda_len(a, d), state,
		     a->phi0, lda_doc_seed(a, d));
}

static int lda_thread_init(void *app, void *scratch)
{
	struct lda_app *a = app;
	struct lda_thread *t = scratch;

	t->smp = lda_sampler_new(&a->h, a->sampler, &a->c);
	t->z = malloc(a->maxlen * sizeof(*t->z));
	t->clock = t->part = -1;
	return t->smp && t->z ? 0 : -ENOMEM;
}

static void lda_thread_fini(void *app, void *scratch)
{
	struct lda_thread *t = scratch;

	(void)app;
	lda_sampler_free(t->smp);
	free(t->z);
}

/* One Gibbs sweep over document d (topics z) on the thread's cached rows:
 * the one place the sampler is called.  Returns its log-likelihood. */
static double lda_sample(const struct lda_app *a, struct frr_ctx *c,
			 struct lda_thread *t, uint64_t d, uint16_t *z,
			 float *nk, uint64_t rng)
{
	const uint32_t *words = a->c.word + a->c.doc[d];
	uint64_t len = lda_len(a, d);
	double ll = 0;

	lda_sampler_doc_begin(t->smp, z, len);
	for (uint64_t i = 0; i < len; i++)
		lda_sampler_token(t->smp, i, words[i],
				  frr_row_write(c, TB_WORD_TOPIC, words[i]), nk,
				  &rng);
	for (uint64_t i = 0; i < len; i++)
		ll += lda_sampler_loglik(
		    t->smp, words[i], frr_row_read(c, TB_WORD_TOPIC, words[i]));
	lda_sampler_doc_end(t->smp);
	return ll;
}

static int lda_process(void *app, struct frr_ctx *c, uint64_t begin,
		       uint64_t end)
{
	struct lda_app *a = app;
	struct lda_thread *t = frr_scratch(c);
	uint64_t first = *(const uint64_t *)frr_part(c), ntok = 0;
	float *nk = frr_row_write(c, TB_TOPIC_TOTAL, 0);
	double ll = 0;

	/* another clock or partition fetches the rows anew: the sampler's
	 * lists with them */
	if (t->clock != frr_clock(c) || t->part != frr_part_index(c)) {
		t->clock = frr_clock(c);
		t->part = frr_part_index(c);
		lda_sampler_clock(t->smp, nk);
	}

	for (uint64_t it = begin; it < end; it++) {
		uint64_t d = first + it, len = lda_len(a, d), bad;
		uint16_t *z = frr_item_state(c, it);

		if (!len)
			continue;
		if (!z || lda_topics_take(&a->h, z, len, t->z, &bad)) {
			/* no state: a runtime bug; else rr's remote writes */
			frr_err("lda: document %llu (partition %d, clock %d) "
				"has a corrupt item state: %s %u, not < K = %u",
				(unsigned long long)d, frr_part_index(c),
				frr_clock(c), z ? "topic" : "none",
				z ? t->z[bad] : 0, a->h.K);
			return -EPROTO;
		}
		ll += lda_sample(a, c, t, d, t->z, nk, frr_item_rng(c, it));
		memcpy(z, t->z, len * sizeof(*z));
		ntok += len;
	}
	frr_stat_add(c, ST_LOGLIK, ll);
	frr_stat_add(c, ST_TOKENS, (double)ntok);
	return 0;
}

static int lda_save_row(void *ctx, int t, uint64_t r, float *out)
{
	return frr_eval_row_read(ctx, t, r, out);
}

static int lda_save(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct lda_app *a = app;
	struct frr_model_table t[2];

	lda_shape(a, t);
	return frr_model_save(path, "lda", t, 2, lda_save_row, ec);
}

/* The leader keeps the latest listing; destroy() prints it at the end. */
static int lda_top(struct lda_app *a, struct frr_eval_ctx *ec)
{
	uint32_t K = a->h.K, V = a->h.V, n = (uint32_t)a->top_words;
	float *nwk = malloc((size_t)V * K * sizeof(float));
	uint32_t *top = malloc(n * sizeof(*top));
	size_t cap = (size_t)K * (n + 2) * 24 + 64, len = 0;
	char *txt = malloc(cap);
	int rc = 0;

	if (n > V)
		n = V;
	if (!nwk || !top || !txt) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t w = 0; w < V && !rc; w++)
		rc = frr_eval_row_read(ec, TB_WORD_TOPIC, w, nwk + w * K);
	for (uint32_t k = 0; k < K && !rc; k++) {
		uint32_t m = 0;

		for (uint32_t w = 0; w < V; w++) {
			float c = nwk[(uint64_t)w * K + k];
			uint32_t i;

			if (m == n && c <= nwk[(uint64_t)top[n - 1] * K + k])
				continue;
			i = m < n ? m++ : n - 1;
			while (i > 0 && nwk[(uint64_t)top[i - 1] * K + k] < c) {
				top[i] = top[i - 1];
				i--;
			}
			top[i] = w;
		}
		len += (size_t)snprintf(txt + len, cap - len, "topic %3u:", k);
		for (uint32_t i = 0; i < m && len + 40 < cap; i++) {
			const char *s = a->c.vocab && a->c.vocab[top[i]]
					    ? a->c.vocab[top[i]]
					    : NULL;

			if (s)
				len += (size_t)snprintf(txt + len, cap - len,
							" %.30s", s);
			else
				len += (size_t)snprintf(txt + len, cap - len,
							" w%u", top[i] + 1);
		}
		len += (size_t)snprintf(txt + len, cap - len, "\n");
	}
	if (!rc) {
		free(a->top_text);
		a->top_text = txt;
		txt = NULL;
	}
out:
	free(txt);
	free(top);
	free(nwk);
	return rc;
}

static int lda_clock_local(void *app, struct frr_eval_ctx *ec, int clock)
{
	struct lda_app *a = app;
	int rc = 0;

	if (!frr_eval_job(ec)->leader)
		return 0;
	if (a->ho) {
		double ll = 0, n = 0;

		rc = lda_heldout_eval(a->ho, lda_save_row, ec,
				      lda_doc_seed(a, (uint64_t)clock << 32),
				      &ll, &n);
		if (rc)
			return rc;
		frr_eval_stat_add(ec, ST_HO_LL, ll);
		frr_eval_stat_add(ec, ST_HO_TOKENS, n);
	}
	if (a->save_path)
		rc = lda_save(a, ec, a->save_path);
	if (!rc && a->top_words)
		rc = lda_top(a, ec);
	return rc;
}

static int lda_clock_global(void *app, const double *st, int nstats, int clock,
			    double *objective, char *metrics, size_t len)
{
	struct lda_app *a = app;
	double n = st[ST_TOKENS] > 0 ? st[ST_TOKENS] : 1;
	int m;

	(void)nstats;
	*objective = st[ST_LOGLIK] / n;
	m = snprintf(metrics, len, "topics=%u tokens=%.0f ", a->h.K,
		     st[ST_TOKENS]);
	if (a->ho && m > 0 && (size_t)m < len)
		m += snprintf(
		    metrics + m, len - (size_t)m,
		    "heldout_tokens=%.0f heldout_loglik_per_token=%.5f ",
		    st[ST_HO_TOKENS],
		    st[ST_HO_LL] /
			(st[ST_HO_TOKENS] > 0 ? st[ST_HO_TOKENS] : 1));
	if (m > 0 && (size_t)m < len)
		snprintf(metrics + m, len - (size_t)m, "loglik_per_token=%.5f",
			 *objective);
	/* the runtime's progress line shows the objective only */
	if (a->progress)
		fprintf(stderr, "lda: clock %d %s\n", clock, metrics);
	return 0;
}

const struct frr_app_ops frr_app_lda = {
	.size = sizeof(struct frr_app_ops),
	.name = "lda",
	.summary = "LDA by collapsed Gibbs sampling: UCI bag-of-words, plain "
		   "text (KJV)",
	.usage = lda_usage,
	.create = lda_create,
	.destroy = lda_destroy,
	.tables = lda_tables,
	.load_partition = lda_load_partition,
	.item_state_size = lda_state_size,
	.item_state_init = lda_state_init,
	.scratch_size = sizeof(struct lda_thread),
	.thread_init = lda_thread_init,
	.thread_fini = lda_thread_fini,
	.process = lda_process,
	.clock_local = lda_clock_local,
	.clock_global = lda_clock_global,
	.save = lda_save,
	.nstats = ST_COUNT,
	.maximize = 1,
	.check_args = lda_check_args,
	.part_rows = lda_part_rows,
	.opts = &lda_opt_set,
	.item_cost = lda_item_cost,
};
