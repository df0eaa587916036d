// SPDX-License-Identifier: MIT
/* The "mf" app: options, tables, partitions, the per-item SGD loop and the
 * per-clock RMSE (options in mf_opts.c).  See mf.h for the model and
 * docs/apps/mf.md. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/simd.h"
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "mf.h"
#include "mf_opts.h"

enum { T_USER = 0, T_ITEM = 1 };
enum { S_TRAIN_SSE = 0, S_TRAIN_N, S_TEST_SSE, S_TEST_N, S_NSTATS };

/* One data partition: its held-out ratings and users (p; p.train is
 * dropped once work is built), and its training ratings as the SGD loop
 * reads them (mf_part_work). */
struct mf_slice {
	struct mf_part p;
	struct mf_work *work;
	float *icap;
	struct mf_group *groups; /* mf_user_groups: where each user starts */
	uint64_t ngroups;
	int loaded;
	/* the users the held-out ratings name (global ids), once the
	 * ratings' users were renumbered to them (test_users) */
	uint32_t *tusers, ntusers;
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
	ret = mf_parse_opts(argc, argv, job->seed, &m->o);
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
		free(m->slices[v].groups);
		free(m->slices[v].tusers);
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
		/* workers' item changes averaged (docs/apps/mf.md) */
		.combine = FRR_COMBINE_MEAN_OF_SUMS,
		/* a worker that reads its own averaged push on top of a stale
		 * row under SSP converged worse (flexrr demo, ssp: test RMSE
		 * 0.629 after 20 clocks with it, 0.525 without;
		 * docs/benchmarks.md) */
		.flags = FRR_TABLE_NO_OWN_PENDING,
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
	if (!ret)
		ret = mf_user_groups(sl->work, sl->p.ntrain, &sl->groups,
				     &sl->ngroups);
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

/* A partition reads and writes its users' rows; the evaluation reads
 * every item's row (and items are few), so every item is declared. */
static int mf_part_rows(void *app, int part, struct frr_rowset *rs)
{
	struct mf_app *m = app;
	const struct mf_part *p = &m->slices[part].p;
	int ret = frr_rows_add(rs, T_ITEM, 0, m->nitems);

	for (uint32_t l = 0; l < p->nusers && !ret; l++)
		ret = frr_rows_add(rs, T_USER, p->users[l], 1);
	return ret;
}

/* ---- the SGD loop ------------------------------------------------------ */
#define MF_LEAD 4 /* ratings whose rows are asked for ahead of the step */
#define MF_USERS_AHEAD 12 /* users whose rows are announced ahead */

/* Users come in a shuffled order: the first access to each copies its row
 * from memory no cache has seen.  The users after the current one are
 * announced (frr_row_prefetch) MF_USERS_AHEAD ahead, counted in users, not
 * ratings (a user may have one rating or thousands), from the slice's
 * groups: one compare per rating, and no read of the work list that far
 * ahead (a page the hardware has not streamed in yet: it cost more than
 * the prefetch saved where the rows fit in the caches). */
struct mf_ahead {
	const struct mf_group *gr; /* its sentinel ends the last user */
	uint64_t g, ng;		   /* the user of the rating asked for next */
	uint64_t next;		   /* where user g + 1 starts: gr[g + 1] */
};

static struct mf_ahead ahead_init(struct frr_ctx *c, const struct mf_slice *sl,
				  uint64_t j)
{
	const struct mf_group *gr = sl->groups;
	uint64_t lo = 0, hi = sl->ngroups;

	if (!hi) /* no ratings: only the sentinel, never reached */
		return (struct mf_ahead){ gr, 0, 0, gr[0].start };
	while (hi - lo > 1) { /* the group holding rating j */
		uint64_t mid = lo + (hi - lo) / 2;

		if (gr[mid].start <= j)
			lo = mid;
		else
			hi = mid;
	}
	for (uint64_t k = 1; k <= MF_USERS_AHEAD && lo + k < sl->ngroups; k++)
		frr_row_prefetch(c, T_USER, gr[lo + k].user);
	return (struct mf_ahead){ gr, lo, sl->ngroups, gr[lo + 1].start };
}

static inline void users_ahead(struct frr_ctx *c, uint64_t j,
			       struct mf_ahead *a)
{
	if (j != a->next)
		return;
	a->g++; /* rating j starts the next user (j < the sentinel's start) */
	a->next = a->gr[a->g + 1].start;
	if (a->g + MF_USERS_AHEAD < a->ng)
		frr_row_prefetch(c, T_USER, a->gr[a->g + MF_USERS_AHEAD].user);
}

static inline void rows_ahead(struct frr_ctx *c, const struct mf_work *w,
			      uint64_t j, float **ru, float **ri, int rank,
			      struct mf_ahead *a)
{
	float *pu = frr_row_write(c, T_USER, w[j].user);
	float *qi = frr_row_write(c, T_ITEM, w[j].item);

	__builtin_prefetch(pu, 1);
	__builtin_prefetch(pu + rank, 1);
	__builtin_prefetch(qi, 1);
	__builtin_prefetch(qi + rank, 1);
	ru[j % MF_LEAD] = pu;
	ri[j % MF_LEAD] = qi;
	users_ahead(c, j, a);
}

/* The steps of ratings [begin, end), compiled for each simd.h level (the
 * step is inlined: a call per rating would cost more than vectors gain).
 * The rows of rating j + MF_LEAD are asked for (and prefetched) right after
 * step j: their cache misses overlap the steps in between.  Within a clock
 * of one partition a row is the same memory at every access, and BSP's copies
 * hold exactly the previous clocks, so asking early changes no result. */
static FRR_SIMD_INLINE double sgd_loop_body(struct frr_ctx *c,
					    const struct mf_slice *sl,
					    struct mf_hyper h, float lr,
					    uint64_t begin, uint64_t end)
{
	const struct mf_work *w = sl->work;
	float *ru[MF_LEAD], *ri[MF_LEAD];
	struct mf_ahead a = ahead_init(c, sl, begin);
	uint64_t ahead = begin;
	double sse = 0.0;

	while (ahead < end && ahead < begin + MF_LEAD)
		rows_ahead(c, w, ahead++, ru, ri, h.rank, &a);
	for (uint64_t j = begin; j < end; j++) {
		const struct mf_work *x = &w[j];
		float e;

		h.lr = lr < x->ucap ? lr : x->ucap;
		h.lr_item = lr < sl->icap[x->item] ? lr : sl->icap[x->item];
		e = mf_sgd_step(ru[j % MF_LEAD], ri[j % MF_LEAD], &h, x->r);
		sse += (double)e * e;
		if (ahead < end)
			rows_ahead(c, w, ahead++, ru, ri, h.rank, &a);
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

/* Renumber a slice's held-out ratings to the users they name, once: the
 * evaluation then copies those users' rows only, not every user of the
 * partition (the held-out error is the same, term for term). */
static int test_users(struct mf_slice *sl)
{
	struct mf_part *p = &sl->p;
	uint32_t *k;

	if (sl->tusers || !p->ntest)
		return 0;
	k = malloc(sizeof(*k) * ((size_t)p->nusers + 1));
	sl->tusers =
	    malloc(sizeof(*sl->tusers) *
		   ((p->ntest < p->nusers ? p->ntest : p->nusers) + 1));
	if (!k || !sl->tusers) {
		free(k);
		free(sl->tusers);
		sl->tusers = NULL;
		return -ENOMEM;
	}
	memset(k, 0xff, sizeof(*k) * p->nusers);
	for (uint64_t j = 0; j < p->ntest; j++) {
		uint32_t u = p->test[j].user;

		if (k[u] == UINT32_MAX) {
			k[u] = sl->ntusers;
			sl->tusers[sl->ntusers++] = p->users[u];
		}
		p->test[j].user = k[u];
	}
	free(k);
	return 0;
}

/* Held-out ratings in the partitions this process runs (--test-frac 0:
 * none, and nothing to score). */
static int any_test(struct frr_eval_ctx *ec)
{
	for (int i = 0; i < frr_eval_nlocal(ec); i++) {
		const struct mf_slice *sl = frr_eval_local(ec, i, NULL);

		if (sl->p.ntest)
			return 1;
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
	/* without held-out ratings every item row (cols x items floats a
	 * clock) would be read for nothing */
	if (!any_test(ec))
		return 0;
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
		struct mf_slice *sl = frr_eval_local(ec, i, NULL);
		const struct mf_part *p = &sl->p;

		if (!p->ntest)
			continue;
		ret = test_users(sl);
		if (ret)
			return ret;
		if (sl->ntusers > m->eval_users_cap) {
			free(m->eval_users);
			m->eval_users = malloc(sizeof(float) *
					       (size_t)sl->ntusers * m->cols);
			m->eval_users_cap = m->eval_users ? sl->ntusers : 0;
			if (!m->eval_users)
				return -ENOMEM;
		}
		ret = read_rows(ec, T_USER, sl->tusers, sl->ntusers,
				m->eval_users, m->cols);
		if (ret)
			return ret;
		frr_eval_stat_add(ec, S_TEST_SSE,
				  mf_sse(m->eval_users, m->eval_items, p->test,
					 p->ntest, m->o.rank, m->mu));
		frr_eval_stat_add(ec, S_TEST_N, (double)p->ntest);
	}
	return 0;
}

/* What clock_local allocates at its first call: every item's row, and the
 * rows of the users the held-out ratings of a partition name (at most
 * min(held-out ratings, users) of the largest; test_users' index too). */
static size_t mf_mem_later(void *app, const int *parts, int n)
{
	struct mf_app *m = app;
	size_t most = 0, index = 0;

	int tests = 0;

	for (int i = 0; i < n; i++) {
		const struct mf_part *p = &m->slices[parts[i]].p;
		size_t u = p->ntest < p->nusers ? p->ntest : p->nusers;

		if (u > most)
			most = u;
		index += sizeof(uint32_t) * (u + (size_t)p->nusers);
		tests |= p->ntest > 0;
	}
	if (!tests) /* clock_local reads nothing (any_test) */
		return 0;
	return sizeof(float) * ((size_t)m->nitems + 1 + most) *
		   (size_t)m->cols +
	       index;
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

static int mf_check_args(int argc, char **argv)
{
	struct mf_opts o;
	int ret = mf_parse_opts(argc, argv, 0, &o);

	return ret > 0 ? 0 : ret; /* help is not an error */
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
	.check_args = mf_check_args,
	.part_rows = mf_part_rows,
	.mem_later = mf_mem_later,
	.opts = &mf_opt_set,
};
