// SPDX-License-Identifier: MIT
/* The "mf" app: options, tables, partitions, the per-item SGD loop and the
 * per-clock RMSE.  See mf.h for the model and docs/apps/mf.md. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/opts.h"
#include "common/simd.h"
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "mf.h"

enum { T_USER = 0, T_ITEM = 1 };
enum { S_TRAIN_SSE = 0, S_TRAIN_N, S_TEST_SSE, S_TEST_N, S_NSTATS };

#define MF_MAX_FILES 16

struct mf_opts {
	const char *data[MF_MAX_FILES];
	int ndata;
	enum mf_format fmt;
	int synthetic;
	struct mf_synth synth;
	int have_data_seed;
	int have_synth_rank;
	int read_whole;
	int have_read;
	uint64_t data_seed;
	int rank;
	double lr, lr_decay, reg, bias_reg, steps;
	int have_bias_reg;
	double test_frac;
	const char *load;
};

/* One data partition: its held-out ratings and users (p; p.train is
 * dropped once work is built), and its training ratings as the SGD loop
 * reads them (mf_part_work). */
struct mf_slice {
	struct mf_part p;
	struct mf_work *work;
	float *icap;
	int loaded;
};

struct mf_app {
	struct mf_opts o;
	struct frr_job_info job;
	int cols;
	uint32_t nusers, nitems;
	float mu;
	struct mf_input in;	 /* files only; dropped once partitions exist */
	pthread_mutex_t lock;	 /* load_partition */
	struct mf_slice *slices; /* [nparts] */
	float *model;		 /* --load: rows to start from */
	float *eval_items, *eval_users;
	uint32_t eval_users_cap;
};

void mf_usage(FILE *out);

void mf_usage(FILE *out)
{
	fprintf(out,
		"usage: flexrr run [run options] mf (--data FILE... | "
		"--synthetic SPEC) [options]\n"
		"\n"
		"Matrix factorization by SGD: r(u,i) ~ mu + b_u + b_i + p_u.q_i"
		"; work items are\n"
		"training ratings, partitioned by user; tables 'user' and "
		"'item' (rank+1 cols).\n"
		"Per clock: train_rmse (error before each SGD step) and "
		"test_rmse (held out).\n"
		"\n"
		"input (one of):\n"
		"  --data FILE           ratings file, plain or gzip; repeat "
		"for several files\n"
		"  --format F            netflix ('MOVIE:' blocks of "
		"'user,rating,date'),\n"
		"                        movielens (ratings.dat 'u::i::r::t' "
		"or ratings.csv with\n"
		"                        header), triples ('user item rating')"
		"; default: detected\n"
		"  --read HOW            pieces (default): each process "
		"parses a part;\n"
		"                        whole: each parses all (--data "
		"only)\n"
		"  --synthetic SPEC      USERS,ITEMS,RATINGS or 'netflix' "
		"(480189,17770,100480507):\n"
		"                        low-rank truth + Gaussian noise, "
		"power-law popularity\n"
		"  --synth-rank K        rank of the truth (default: --rank)\n"
		"  --synth-noise S       noise standard deviation (0.5)\n"
		"  --synth-signal S      standard deviation of p*.q* (1.0)\n"
		"  --synth-mean M        global mean rating (3.6)\n"
		"  --synth-skew A        popularity power law, 0 <= A < 1 "
		"(0.4; 0 = uniform)\n"
		"  --data-seed N         generator seed (default: the run's "
		"--seed)\n"
		"\n"
		"model and training:\n"
		"  --rank K              factors per user and item (10)\n"
		"  --lr X                step size of clock 0 (0.03)\n"
		"  --lr-decay D          step size of clock c = lr * D^c "
		"(0.95)\n"
		"  --steps S            per worker and clock, the step sizes "
		"applied to one row\n"
		"                        sum to at most S: step = min(lr, S / "
		"the row's ratings\n"
		"                        in the partition) (4; large = off)\n"
		"  --reg L               L2 penalty on factors (0.02)\n"
		"  --bias-reg L          L2 penalty on biases (default: --reg)"
		"\n"
		"  --test-frac F         held-out fraction, by a hash of "
		"(seed, user, item) (0.1)\n"
		"  --load FILE           start from a model saved with "
		"'flexrr run --save FILE'\n"
		"  --help                this text\n"
		"\n"
		"Objective (for --target): test RMSE (train RMSE with "
		"--test-frac 0).\n"
		"Example: flexrr run -n 2 -t 1 --clocks 20 mf --synthetic "
		"20000,2000,1000000\n");
}

/* ---- options ----------------------------------------------------------- */
/* The apps' shared parsers (common/opts.h), under mf's name. */
static int opt_double(const char *name, const char *s, double lo, double hi,
		      double *out)
{
	return frr_opt_double("mf", name, s, lo, hi, out);
}

/* lo >= 0 at every caller */
static int opt_int(const char *name, const char *s, long lo, long hi, long *out)
{
	uint64_t u;
	int ret = frr_opt_u64("mf", name, s, (uint64_t)lo, (uint64_t)hi, &u);

	if (!ret)
		*out = (long)u;
	return ret;
}

/* The input options; 1 if k is not one of them. */
static int input_opt(struct mf_opts *o, const char *k, const char *v,
		     double *skew)
{
	double d = 0; /* d, l: read even when a parse fails */
	long l = 0;
	int ret = 0;

	if (!strcmp(k, "--data")) {
		if (o->ndata == MF_MAX_FILES) {
			frr_err("mf: more than %d --data files; concatenate "
				"some",
				MF_MAX_FILES);
			return -EINVAL;
		}
		o->data[o->ndata++] = v;
	} else if (!strcmp(k, "--format")) {
		ret = mf_format_parse(v, &o->fmt);
	} else if (!strcmp(k, "--synthetic")) {
		o->synthetic = 1;
		ret = mf_synth_parse(v, &o->synth);
	} else if (!strcmp(k, "--synth-rank")) {
		ret = opt_int(k, v, 1, MF_MAX_RANK, &l);
		o->synth.rank = (int)l;
		o->have_synth_rank = 1;
	} else if (!strcmp(k, "--synth-noise")) {
		ret = opt_double(k, v, 0, 1e6, &o->synth.noise);
	} else if (!strcmp(k, "--synth-signal")) {
		ret = opt_double(k, v, 0, 1e6, &o->synth.signal);
	} else if (!strcmp(k, "--synth-mean")) {
		ret = opt_double(k, v, -1e9, 1e9, &o->synth.mean);
	} else if (!strcmp(k, "--synth-skew")) {
		ret = opt_double(k, v, 0, 0.99, skew);
	} else if (!strcmp(k, "--read")) {
		o->read_whole = !strcmp(v, "whole");
		o->have_read = 1;
		if (!o->read_whole && strcmp(v, "pieces")) {
			frr_err("mf: --read '%s': expected 'pieces' or 'whole'",
				v);
			return -EINVAL;
		}
	} else if (!strcmp(k, "--data-seed")) {
		ret = opt_double(k, v, 0, 9007199254740992.0, &d);
		o->data_seed = (uint64_t)d;
	} else {
		return 1;
	}
	return ret;
}

/* The model and training options; 1 if k is not one of them. */
static int train_opt(struct mf_opts *o, const char *k, const char *v)
{
	long l = 0;
	int ret = 0;

	if (!strcmp(k, "--rank")) {
		ret = opt_int(k, v, 1, MF_MAX_RANK, &l);
		o->rank = (int)l;
	} else if (!strcmp(k, "--lr")) {
		ret = opt_double(k, v, 1e-9, 10, &o->lr);
	} else if (!strcmp(k, "--lr-decay")) {
		ret = opt_double(k, v, 1e-3, 1, &o->lr_decay);
	} else if (!strcmp(k, "--steps")) {
		ret = opt_double(k, v, 1e-6, 1e12, &o->steps);
	} else if (!strcmp(k, "--reg")) {
		ret = opt_double(k, v, 0, 1e3, &o->reg);
	} else if (!strcmp(k, "--bias-reg")) {
		ret = opt_double(k, v, 0, 1e3, &o->bias_reg);
		o->have_bias_reg = 1;
	} else if (!strcmp(k, "--test-frac")) {
		ret = opt_double(k, v, 0, 0.9, &o->test_frac);
	} else if (!strcmp(k, "--load")) {
		o->load = v;
	} else {
		return 1;
	}
	return ret;
}

/* What the options imply together; -EINVAL on a bad combination. */
static int opts_finish(struct mf_opts *o, double skew)
{
	if (!o->ndata == !o->synthetic) {
		frr_err("mf: give either --data FILE or --synthetic SPEC "
			"(e.g. --synthetic 20000,2000,1000000); see mf --help");
		return -EINVAL;
	}
	if (o->fmt != MF_FMT_AUTO && !o->ndata) {
		frr_err("mf: --format applies to --data files only");
		return -EINVAL;
	}
	/* the generator makes each partition where it is loaded: no files */
	if (o->have_read && !o->ndata) {
		frr_err("mf: --read applies to --data files only (--synthetic "
			"data is generated, not read); drop --read");
		return -EINVAL;
	}
	if (skew >= 0)
		o->synth.user_skew = o->synth.item_skew = skew;
	if (!o->have_synth_rank)
		o->synth.rank = o->rank;
	if (!o->have_bias_reg)
		o->bias_reg = o->reg;
	o->synth.seed = o->data_seed;
	return 0;
}

static int parse_opts(int argc, char **argv, uint64_t seed, struct mf_opts *o)
{
	double skew = -1;
	int ret = 0;

	*o = (struct mf_opts){
		.rank = 10,
		.lr = 0.03,
		.lr_decay = 0.95,
		.steps = 4,
		.reg = 0.02,
		.test_frac = 0.1,
		.data_seed = seed,
	};
	mf_synth_defaults(&o->synth);
	for (int a = 1; a < argc && !ret; a++) {
		const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
			mf_usage(stdout);
			return 1;
		}
		if (strncmp(k, "--", 2) || !v) {
			frr_err("mf: %s '%s'; 'flexrr run ... mf --help' "
				"lists the options",
				strncmp(k, "--", 2) ? "unexpected argument"
						    : "missing value after",
				k);
			return -EINVAL;
		}
		a++;
		ret = input_opt(o, k, v, &skew);
		if (ret == 1)
			ret = train_opt(o, k, v);
		if (ret == 1) {
			frr_err("mf: unknown option '%s'; 'flexrr run ... mf "
				"--help' lists the options",
				k);
			return -EINVAL;
		}
	}
	return ret ? ret : opts_finish(o, skew);
}

/* ---- the model file ---------------------------------------------------- */
static struct mf_model_hdr model_hdr(const struct mf_app *m)
{
	return (struct mf_model_hdr){
		.rank = (uint32_t)m->o.rank,
		.cols = (uint32_t)m->cols,
		.nusers = m->nusers,
		.nitems = m->nitems,
		.mu = m->mu,
	};
}

static int model_read(struct mf_app *m, const char *path)
{
	const struct mf_model_hdr want = model_hdr(m);

	return mf_model_read(path, &want, &m->model);
}

/* ---- create / destroy -------------------------------------------------- */
static void mf_destroy(void *app);

static int mf_create(const struct frr_job_info *job, int argc, char **argv,
		     void **app)
{
	struct mf_app *m = calloc(1, sizeof(*m));
	int ret;

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	m->job = *job;
	ret = parse_opts(argc, argv, job->seed, &m->o);
	if (ret)
		goto out_free;
	m->cols = m->o.rank + 1;
	m->in = (struct mf_input){
		.paths = m->o.data,
		.npaths = m->o.ndata,
		.fmt = m->o.fmt,
		.whole = m->o.read_whole,
		.nparts = job->nparts,
		.leader = job->leader,
		.seed = m->o.data_seed,
		.test_frac = m->o.test_frac,
	};
	m->slices = calloc((size_t)job->nparts, sizeof(*m->slices));
	if (!m->slices) {
		frr_err("mf: out of memory for %d partitions", job->nparts);
		ret = -ENOMEM;
		goto out_free;
	}
	*app = m;
	return 0;
out_free:
	mf_destroy(m);
	return ret < 0 ? ret : -ECANCELED;
}

static void mf_destroy(void *app)
{
	struct mf_app *m = app;

	if (!m)
		return;
	for (int v = 0; m->slices && v < m->job.nparts; v++) {
		mf_part_free(&m->slices[v].p);
		free(m->slices[v].icap);
		free(m->slices[v].work);
	}
	mf_input_drop(&m->in);
	free(m->slices);
	free(m->model);
	free(m->eval_items);
	free(m->eval_users);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* ---- tables and partitions -------------------------------------------- */
static void mf_init_table_row(void *app, int table, uint64_t row, float *out,
			      uint32_t cols)
{
	struct mf_app *m = app;

	if (m->model) {
		size_t at = table == T_USER ? row : m->nusers + row;

		memcpy(out, m->model + at * (size_t)m->cols,
		       sizeof(float) * cols);
		return;
	}
	mf_init_row(m->job.seed, table, row, out, (int)cols - 1);
}

/*
 * User rows belong to one partition.  An SSP read lacks that partition's
 * own unapplied clocks, and SGD that re-applies its own steps on such a row
 * oscillates and diverges: so user rows are read with the partition's own
 * pending changes (FRR_TABLE_SEE_OWN_PENDING).
 *
 * Item rows are shared by every partition, and each partition's pass moves
 * a popular item most of the way to its own local optimum: summing nparts
 * such moves overshoots nparts-fold (diverges for 4 partitions), so the
 * table gets 1/nparts of each change (the clock's item update is the
 * partitions' average, as in local SGD with averaging).  Adding a
 * partition's own unapplied item changes back, as for users, measured worse
 * under SSP (users then fit an item view the other partitions' changes pull
 * away from), so item rows are read as the table has them.
 */
/* The shape, once the data is in (share/gather or, without them, read
 * whole now), and the model to start from. */
static int mf_shape(struct mf_app *m)
{
	int ret = 0;

	if (m->o.synthetic) {
		m->nusers = m->o.synth.users;
		m->nitems = m->o.synth.items;
		m->mu = (float)m->o.synth.mean;
	} else {
		ret = mf_input_ready(&m->in);
		m->nusers = m->in.data.nusers;
		m->nitems = m->in.data.nitems;
		m->mu = m->in.mu;
	}
	if (!ret && m->o.load)
		ret = model_read(m, m->o.load);
	if (!ret && m->job.leader)
		frr_info("mf: %" PRIu32 " users x %" PRIu32
			 " items, rank %d, mu %.4f",
			 m->nusers, m->nitems, m->o.rank, m->mu);
	return ret;
}

/* The input's pieces (files only; the generator makes each partition
 * where it runs). */
static int mf_share(void *app, int k, int n, const void **blob, size_t *len)
{
	struct mf_app *m = app;

	return m->o.synthetic ? 0 : mf_input_share(&m->in, k, n, blob, len);
}

static int mf_gather(void *app, const void *const *blobs, const size_t *lens,
		     int n)
{
	struct mf_app *m = app;
	int ret = m->o.synthetic ? 0 : mf_input_gather(&m->in, blobs, lens, n);

	return ret ? ret : mf_shape(m);
}

static int mf_tables(void *app, struct frr_table_spec *specs, int max)
{
	struct mf_app *m = app;
	int ret;

	if (max < 2)
		return -EINVAL;
	/* without share/gather (another driver): the shape now */
	if (!m->nitems && (ret = mf_shape(m)))
		return ret;
	specs[T_USER] = (struct frr_table_spec){
		.name = "user",
		.rows = m->nusers,
		.cols = (uint32_t)m->cols,
		.rule = FRR_UPDATE_ADD,
		.flags = FRR_TABLE_SEE_OWN_PENDING,
		.init_row = mf_init_table_row,
	};
	specs[T_ITEM] = (struct frr_table_spec){
		.name = "item",
		.rows = m->nitems,
		.cols = (uint32_t)m->cols,
		.rule = FRR_UPDATE_ADD,
		.push_scale = 1.0f / (float)m->job.nparts,
		.init_row = mf_init_table_row,
	};
	return 2;
}

static int mf_load_partition(void *app, int part, uint64_t *nitems, void **data)
{
	struct mf_app *m = app;
	struct mf_slice *sl;
	int ret = 0;

	if (part < 0 || part >= m->job.nparts)
		return -EINVAL;
	sl = &m->slices[part];
	pthread_mutex_lock(&m->lock);
	if (sl->loaded)
		goto out_unlock;
	if (m->o.synthetic) {
		ret =
		    mf_synth_partition(&m->o.synth, part, m->job.nparts,
				       m->o.test_frac, m->o.data_seed, &sl->p);
	} else {
		ret = mf_input_partition(&m->in, part, &sl->p);
	}
	if (!ret)
		ret = mf_part_work(&sl->p, m->nitems, m->o.steps, &sl->work,
				   &sl->icap);
	if (ret == -ENOMEM)
		frr_err("mf: out of memory for partition %d's work list", part);
	if (!ret)
		sl->loaded = 1;
out_unlock:
	pthread_mutex_unlock(&m->lock);
	*nitems = sl->p.ntrain;
	*data = sl;
	return ret;
}

/* ---- the SGD loop ------------------------------------------------------ */
#define MF_LEAD 4 /* ratings whose rows are asked for ahead of the step */

static inline void rows_ahead(struct frr_ctx *c, const struct mf_work *w,
			      uint64_t j, float **ru, float **ri, int rank)
{
	float *pu = frr_row_write(c, T_USER, w[j].user);
	float *qi = frr_row_write(c, T_ITEM, w[j].item);

	__builtin_prefetch(pu, 1);
	__builtin_prefetch(pu + rank, 1);
	__builtin_prefetch(qi, 1);
	__builtin_prefetch(qi + rank, 1);
	ru[j % MF_LEAD] = pu;
	ri[j % MF_LEAD] = qi;
}

/* The steps of ratings [begin, end), compiled for each simd.h level (the
 * step is inlined: a call per rating would cost more than vectors gain).
 * The rows of rating j + MF_LEAD are asked for (and prefetched) right after
 * step j: their cache misses overlap the steps in between.  Within a batch
 * a row is the same memory at every access, and BSP's copies hold exactly
 * the previous clocks, so asking early changes no result. */
static FRR_SIMD_INLINE double sgd_loop_body(struct frr_ctx *c,
					    const struct mf_slice *sl,
					    struct mf_hyper h, float lr,
					    uint64_t begin, uint64_t end)
{
	const struct mf_work *w = sl->work;
	float *ru[MF_LEAD], *ri[MF_LEAD];
	uint64_t ahead = begin;
	double sse = 0.0;

	while (ahead < end && ahead < begin + MF_LEAD)
		rows_ahead(c, w, ahead++, ru, ri, h.rank);
	for (uint64_t j = begin; j < end; j++) {
		const struct mf_work *x = &w[j];
		float e;

		h.lr = lr < x->ucap ? lr : x->ucap;
		h.lr_item = lr < sl->icap[x->item] ? lr : sl->icap[x->item];
		e = mf_sgd_step(ru[j % MF_LEAD], ri[j % MF_LEAD], &h, x->r);
		sse += (double)e * e;
		if (ahead < end)
			rows_ahead(c, w, ahead++, ru, ri, h.rank);
	}
	return sse;
}

FRR_SIMD_DEFINE(double, sgd_loop,
		(struct frr_ctx * c, const struct mf_slice *sl,
		 struct mf_hyper h, float lr, uint64_t begin, uint64_t end),
		(c, sl, h, lr, begin, end))

/* Rows are the runtime's cached copies: SGD updates them in place and the
 * runtime pushes what changed (flexrr.h "Rows"). */
static int mf_process(void *app, struct frr_ctx *c, uint64_t begin,
		      uint64_t end)
{
	struct mf_app *m = app;
	const float lr = (float)(m->o.lr * pow(m->o.lr_decay, frr_clock(c)));
	struct mf_hyper h = {
		.rank = m->o.rank,
		.reg = (float)m->o.reg,
		.breg = (float)m->o.bias_reg,
		.mu = m->mu,
	};
	double sse = sgd_loop(c, frr_part(c), h, lr, begin, end);

	frr_stat_add(c, S_TRAIN_SSE, sse);
	frr_stat_add(c, S_TRAIN_N, (double)(end - begin));
	return 0;
}

/* ---- evaluation -------------------------------------------------------- */
static int read_rows(struct frr_eval_ctx *ec, int table, const uint32_t *ids,
		     uint32_t n, float *out, int cols)
{
	for (uint32_t l = 0; l < n; l++) {
		int ret = frr_eval_row_read(ec, table, ids ? ids[l] : l,
					    out + (size_t)l * cols);
		if (ret)
			return ret;
	}
	return 0;
}

static int mf_clock_local(void *app, struct frr_eval_ctx *ec, int clock)
{
	struct mf_app *m = app;
	int ret;

	(void)clock;
	/* every load_partition happens at start-up: the whole data set is
	 * not needed any more */
	mf_input_drop(&m->in);
	if (!m->eval_items) {
		m->eval_items =
		    malloc(sizeof(float) * ((size_t)m->nitems + 1) * m->cols);
		if (!m->eval_items)
			return -ENOMEM;
	}
	ret = read_rows(ec, T_ITEM, NULL, m->nitems, m->eval_items, m->cols);
	if (ret)
		return ret;
	/* the held-out ratings of the partitions this process runs */
	for (int i = 0; i < frr_eval_nlocal(ec); i++) {
		const struct mf_slice *sl = frr_eval_local(ec, i, NULL);
		const struct mf_part *p = &sl->p;

		if (!p->ntest)
			continue;
		if (p->nusers > m->eval_users_cap) {
			free(m->eval_users);
			m->eval_users =
			    malloc(sizeof(float) * (size_t)p->nusers * m->cols);
			m->eval_users_cap = m->eval_users ? p->nusers : 0;
			if (!m->eval_users)
				return -ENOMEM;
		}
		ret = read_rows(ec, T_USER, p->users, p->nusers, m->eval_users,
				m->cols);
		if (ret)
			return ret;
		frr_eval_stat_add(ec, S_TEST_SSE,
				  mf_sse(m->eval_users, m->eval_items, p->test,
					 p->ntest, m->o.rank, m->mu));
		frr_eval_stat_add(ec, S_TEST_N, (double)p->ntest);
	}
	return 0;
}

static int mf_clock_global(void *app, const double *stats, int nstats,
			   int clock, double *objective, char *metrics,
			   size_t metrics_len)
{
	struct mf_app *m = app;
	double train, test;

	if (nstats < S_NSTATS)
		return -EINVAL;
	train = stats[S_TRAIN_N] > 0
		    ? sqrt(stats[S_TRAIN_SSE] / stats[S_TRAIN_N])
		    : NAN;
	test = stats[S_TEST_N] > 0 ? sqrt(stats[S_TEST_SSE] / stats[S_TEST_N])
				   : NAN;
	/* test_rmse last: the summary line ends with it */
	snprintf(metrics, metrics_len,
		 "sgd_updates=%.0f train_rmse=%.4f test_rmse=%.4f",
		 stats[S_TRAIN_N], train, test);
	*objective = stats[S_TEST_N] > 0 ? test : train;
	if (!isfinite(train) && stats[S_TRAIN_N] > 0) {
		frr_err("mf: SGD diverged in clock %d (train RMSE %g); lower "
			"--lr (now %g) or raise --reg",
			clock, train, m->o.lr);
		return -ERANGE;
	}
	return 0;
}

/* ---- save and load ----------------------------------------------------- */
static int mf_save(void *app, struct frr_eval_ctx *ec, const char *path)
{
	const struct mf_model_hdr h = model_hdr(app);

	return mf_model_write(ec, &h, path);
}

static int mf_load(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct mf_app *m = app;
	int ret;

	free(m->model);
	m->model = NULL;
	ret = model_read(m, path);
	for (int t = T_USER; !ret && t <= T_ITEM; t++) {
		uint64_t n = t == T_USER ? m->nusers : m->nitems;
		size_t base = t == T_USER ? 0 : m->nusers;

		for (uint64_t r = 0; !ret && r < n; r++)
			ret = frr_eval_row_write(
			    ec, t, r, m->model + (base + r) * m->cols);
	}
	return ret;
}

const struct frr_app_ops frr_app_mf = {
	.size = sizeof(struct frr_app_ops),
	.name = "mf",
	.summary = "matrix factorization by SGD (Netflix, MovieLens, "
		   "triples, synthetic)",
	.usage = mf_usage,
	.create = mf_create,
	.destroy = mf_destroy,
	.tables = mf_tables,
	.load_partition = mf_load_partition,
	.process = mf_process,
	.clock_local = mf_clock_local,
	.clock_global = mf_clock_global,
	.save = mf_save,
	.load = mf_load,
	.nstats = S_NSTATS,
	.maximize = 0,
	.share = mf_share,
	.gather = mf_gather,
};
