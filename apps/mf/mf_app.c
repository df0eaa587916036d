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
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "mf.h"

enum { T_USER = 0, T_ITEM = 1, T_CLOCK = 2 };
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
	uint64_t data_seed;
	int rank;
	double lr, lr_decay, reg, bias_reg, steps;
	int have_bias_reg;
	double test_frac;
	const char *load;
};

/*
 * A worker thread's working copies of the rows it touches.  Within a clock
 * SGD runs on these copies (reads through the table do not reflect the
 * reader's own updates), and what changed is pushed at the end of every
 * process() call.  Per row:
 *   val    the working copy for this clock (valid while stamp == gen),
 *   acc    the change not pushed yet,
 *   pend   (user rows of the home view only) what it pushed in each of the
 *          last 'ring' clocks, tagged with the clock in ptag.
 *
 * User rows belong to one worker.  An SSP read lacks that worker's own
 * unapplied clocks, and SGD that re-applies its own steps on such a row
 * oscillates and diverges; so on a user row's first touch in a clock the
 * worker takes the table's row plus its own pushes the shard has not applied
 * yet (read-my-writes across clocks).  Which of its clocks a shard has
 * applied it learns from the "clock" table: the owner adds 1 to row
 * (worker * P + shard) in every clock it processes items, and shards apply
 * clocks whole and in order.
 *
 * Item rows are shared by every worker, and each worker's pass moves a
 * popular item most of the way to its own local optimum: summing W such
 * moves overshoots W-fold (diverges for W >= 4), so a worker pushes 1/W of
 * its item change (the clock's item update is the workers' average, as in
 * local SGD with averaging).  Adding a worker's own unapplied item pushes
 * back, as for users, measured worse under SSP (users then fit an item view
 * the other workers' pushes pull away from), so item rows are read as the
 * table has them.
 *
 * Used only by the thread that owns the scratch.
 */
struct mf_side {
	uint32_t cap;
	int ring;	  /* clocks of pend kept; 0 = none (away side) */
	float *val, *acc; /* cap * cols */
	float *pend;	  /* cap * ring * cols */
	int32_t *ptag;	  /* cap * ring: clock of the pend entry, -1 none */
	uint32_t *stamp;  /* == gen: val holds this clock's working copy */
	uint32_t *dstamp; /* == call: in dirty[] */
	uint32_t *dirty;
	uint32_t ndirty;
};

#define MF_MAX_RING 32

/* One thread's rows for one owner: 'home' is the thread's own worker,
 * kept across clocks; 'away' is whatever owner it helps, per clock. */
struct mf_view {
	int owner, clock;
	const struct mf_part *part;
	uint32_t gen, call;
	struct mf_side user, item;
	/* home only: the k-th clock in which this worker pushed its clock
	 * stamp, for the last 'ring' clocks */
	int32_t stamp_clock[MF_MAX_RING];
	uint64_t stamp_k[MF_MAX_RING];
	uint64_t nstamps;
	int last_stamp;
};

struct mf_scratch {
	struct mf_view home, away;
};

struct mf_app {
	struct mf_opts o;
	struct frr_job_info job;
	int cols;
	uint32_t nusers, nitems;
	float mu;
	struct mf_data data; /* files only; dropped once partitions exist */
	int have_data;
	pthread_mutex_t lock;  /* load_partition */
	struct mf_part *parts; /* [nworkers] */
	int *loaded;
	struct mf_scratch *scratch; /* [threads] */
	float *model;		    /* --load: rows to start from */
	float item_scale; /* share of a worker's item-row change pushed */
	/* [nworkers][rows]: --steps / the row's ratings in the partition */
	float **icap, **ucap;
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

static int parse_opts(int argc, char **argv, uint64_t seed, struct mf_opts *o)
{
	double skew = -1, d = 0; /* d, l: read even when a parse fails */
	long l = 0;
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
		if (!strcmp(k, "--data")) {
			if (o->ndata == MF_MAX_FILES) {
				frr_err("mf: more than %d --data files; "
					"concatenate some",
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
			ret = opt_double(k, v, 0, 0.99, &skew);
		} else if (!strcmp(k, "--data-seed")) {
			ret = opt_double(k, v, 0, 9007199254740992.0, &d);
			o->data_seed = (uint64_t)d;
		} else if (!strcmp(k, "--rank")) {
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
			frr_err("mf: unknown option '%s'; 'flexrr run ... mf "
				"--help' lists the options",
				k);
			return -EINVAL;
		}
	}
	if (ret)
		return ret;
	if (!o->ndata == !o->synthetic) {
		frr_err("mf: give either --data FILE or --synthetic SPEC "
			"(e.g. --synthetic 20000,2000,1000000); see mf --help");
		return -EINVAL;
	}
	if (o->fmt != MF_FMT_AUTO && !o->ndata) {
		frr_err("mf: --format applies to --data files only");
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

/* ---- the model file ---------------------------------------------------- */
static int model_read(struct mf_app *m, const char *path)
{
	const struct mf_model_hdr want = {
		.rank = (uint32_t)m->o.rank,
		.cols = (uint32_t)m->cols,
		.nusers = m->nusers,
		.nitems = m->nitems,
	};

	return mf_model_read(path, &want, &m->model);
}

/* ---- create / destroy -------------------------------------------------- */
static double train_mean(const struct mf_data *d, uint64_t seed, double frac)
{
	double sum = 0;
	uint64_t n = 0;

	for (uint64_t j = 0; j < d->n; j++) {
		const struct mf_rating *x = &d->ratings[j];

		if (!mf_is_test(seed, x->user, x->item, 0, frac)) {
			sum += x->r;
			n++;
		}
	}
	return n ? sum / (double)n : d->mean;
}

static int load_data(struct mf_app *m)
{
	int ret = mf_load_files(m->o.data, m->o.ndata, m->o.fmt, &m->data);

	if (ret)
		return ret;
	ret = mf_data_assign(&m->data, m->job.nworkers);
	if (ret) {
		mf_data_free(&m->data);
		return ret;
	}
	m->have_data = 1;
	return 0;
}

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
	m->item_scale = 1.0f / (float)job->nworkers;
	if (m->o.synthetic) {
		m->nusers = m->o.synth.users;
		m->nitems = m->o.synth.items;
		m->mu = (float)m->o.synth.mean;
	} else {
		ret = load_data(m);
		if (ret)
			goto out_free;
		m->nusers = m->data.nusers;
		m->nitems = m->data.nitems;
		m->mu =
		    (float)train_mean(&m->data, m->o.data_seed, m->o.test_frac);
	}
	m->parts = calloc((size_t)job->nworkers, sizeof(*m->parts));
	m->loaded = calloc((size_t)job->nworkers, sizeof(*m->loaded));
	m->icap = calloc((size_t)job->nworkers, sizeof(*m->icap));
	m->ucap = calloc((size_t)job->nworkers, sizeof(*m->ucap));
	m->scratch = calloc((size_t)job->threads, sizeof(*m->scratch));
	if (!m->parts || !m->loaded || !m->scratch || !m->icap || !m->ucap) {
		frr_err("mf: out of memory for %d workers", job->nworkers);
		ret = -ENOMEM;
		goto out_free;
	}
	if (m->o.load) {
		ret = model_read(m, m->o.load);
		if (ret)
			goto out_free;
	}
	if (job->rank == 0)
		frr_info("mf: %" PRIu32 " users x %" PRIu32
			 " items, rank %d, mu %.4f",
			 m->nusers, m->nitems, m->o.rank, m->mu);
	*app = m;
	return 0;
out_free:
	mf_destroy(m);
	return ret < 0 ? ret : -ECANCELED;
}

static void side_free(struct mf_side *s)
{
	free(s->pend);
	free(s->ptag);
	free(s->val);
	free(s->acc);
	free(s->stamp);
	free(s->dstamp);
	free(s->dirty);
}

static void mf_destroy(void *app)
{
	struct mf_app *m = app;

	if (!m)
		return;
	for (int t = 0; m->scratch && t < m->job.threads; t++) {
		side_free(&m->scratch[t].home.user);
		side_free(&m->scratch[t].home.item);
		side_free(&m->scratch[t].away.user);
		side_free(&m->scratch[t].away.item);
	}
	for (int w = 0; m->parts && w < m->job.nworkers; w++)
		mf_part_free(&m->parts[w]);
	for (int w = 0; m->icap && m->ucap && w < m->job.nworkers; w++) {
		free(m->icap[w]);
		free(m->ucap[w]);
	}
	free(m->icap);
	free(m->ucap);
	mf_data_free(&m->data);
	free(m->scratch);
	free(m->parts);
	free(m->loaded);
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

	if (table == T_CLOCK) {
		memset(out, 0, sizeof(float) * cols);
		return;
	}
	if (m->model) {
		size_t at = table == T_USER ? row : m->nusers + row;

		memcpy(out, m->model + at * (size_t)m->cols,
		       sizeof(float) * cols);
		return;
	}
	mf_init_row(m->job.seed, table, row, out, (int)cols - 1);
}

static int mf_tables(void *app, struct frr_table_spec *specs, int max)
{
	struct mf_app *m = app;

	if (max < 3)
		return -EINVAL;
	specs[T_USER] = (struct frr_table_spec){
		.name = "user",
		.rows = m->nusers,
		.cols = (uint32_t)m->cols,
		.rule = FRR_UPDATE_ADD,
		.init_row = mf_init_table_row,
	};
	specs[T_ITEM] = specs[T_USER];
	specs[T_ITEM].name = "item";
	specs[T_ITEM].rows = m->nitems;
	/* row w * P + o counts worker w's clocks applied on shard o */
	specs[T_CLOCK] = (struct frr_table_spec){
		.name = "clock",
		.rows = (uint64_t)m->job.nworkers * m->job.nranks,
		.cols = 1,
		.rule = FRR_UPDATE_ADD,
	};
	return 3;
}

/* cap[r] = steps / (ratings of row r among n ratings' field), 1 if none */
static float *row_caps(const struct mf_rating *r, uint64_t n, uint32_t rows,
		       int item, double steps)
{
	float *cap = malloc(sizeof(float) * ((size_t)rows + 1));
	uint32_t *cnt = calloc((size_t)rows + 1, sizeof(uint32_t));

	if (cap && cnt) {
		for (uint64_t j = 0; j < n; j++)
			cnt[item ? r[j].item : r[j].user]++;
		for (uint32_t k = 0; k < rows; k++)
			cap[k] = cnt[k] ? (float)(steps / cnt[k]) : 1.0f;
	} else {
		free(cap);
		cap = NULL;
	}
	free(cnt);
	return cap;
}

/* Per worker and clock, the step sizes applied to one row add up to at most
 * --steps: step = min(lr, steps / the row's ratings in the partition).  A
 * row with many ratings would otherwise move all the way to the worker's
 * local optimum in one clock: averaged item rows and stale SSP views then
 * disagree with what the users were fitted to (measured: test RMSE stuck
 * 20% above BSP's). */
static int row_caps_all(struct mf_app *m, int worker)
{
	const struct mf_part *p = &m->parts[worker];
	float *ic = row_caps(p->train, p->ntrain, m->nitems, 1, m->o.steps);
	float *uc = row_caps(p->train, p->ntrain, p->nusers, 0, m->o.steps);

	if (!ic || !uc) {
		free(ic);
		free(uc);
		frr_err("mf: out of memory for worker %d's step caps", worker);
		return -ENOMEM;
	}
	free(m->icap[worker]);
	free(m->ucap[worker]);
	m->icap[worker] = ic;
	m->ucap[worker] = uc;
	return 0;
}

static int mf_load_partition(void *app, int worker, uint64_t *nitems)
{
	struct mf_app *m = app;
	int ret = 0;

	if (worker < 0 || worker >= m->job.nworkers)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	if (m->loaded[worker])
		goto out_unlock;
	if (m->o.synthetic) {
		ret = mf_synth_partition(&m->o.synth, worker, m->job.nworkers,
					 m->o.test_frac, m->o.data_seed,
					 &m->parts[worker]);
	} else {
		/* the data is dropped after the first clock: a late call
		 * reads the files again */
		if (!m->have_data)
			ret = load_data(m);
		if (!ret)
			ret = mf_data_partition(&m->data, worker,
						m->o.data_seed, m->o.test_frac,
						&m->parts[worker]);
	}
	if (!ret)
		ret = row_caps_all(m, worker);
	if (!ret)
		m->loaded[worker] = 1;
out_unlock:
	pthread_mutex_unlock(&m->lock);
	if (!ret)
		*nitems = m->parts[worker].ntrain;
	return ret;
}

/* ---- the SGD loop ------------------------------------------------------ */
static int side_reserve(struct mf_side *s, uint32_t n, int cols, int ring)
{
	if (n <= s->cap && ring == s->ring)
		return 0;
	side_free(s);
	memset(s, 0, sizeof(*s));
	s->val = malloc(sizeof(float) * (size_t)n * cols);
	s->acc = calloc((size_t)n * cols, sizeof(float));
	s->stamp = calloc(n, sizeof(uint32_t));
	s->dstamp = calloc(n, sizeof(uint32_t));
	s->dirty = malloc(sizeof(uint32_t) * n);
	if (ring) {
		s->pend = malloc(sizeof(float) * (size_t)n * ring * cols);
		s->ptag = malloc(sizeof(int32_t) * (size_t)n * ring);
	}
	if (!s->val || !s->acc || !s->stamp || !s->dstamp || !s->dirty ||
	    (ring && (!s->pend || !s->ptag))) {
		side_free(s);
		memset(s, 0, sizeof(*s));
		frr_err(
		    "mf: out of memory for a worker's working rows (%" PRIu32
		    " x %d)",
		    n, cols);
		return -ENOMEM;
	}
	if (ring)
		memset(s->ptag, 0xff, sizeof(int32_t) * (size_t)n * ring);
	s->cap = n;
	s->ring = ring;
	return 0;
}

/* Is my clock c in what shard o has applied, given its stamp m? */
static inline int applied(const struct mf_view *v, int c, uint64_t m)
{
	int r = c % MF_MAX_RING;

	/* a clock with no stamp pushed nothing either */
	return v->stamp_clock[r] != c || v->stamp_k[r] < m;
}

/* Row l (global id 'row') of one side, read on first touch in the clock. */
static float *side_row(struct mf_view *v, struct mf_side *s,
		       struct frr_wctx *wc, const struct frr_job_info *job,
		       int table, uint32_t l, uint64_t row, int cols)
{
	float *val = s->val + (size_t)l * cols;

	if (s->stamp[l] != v->gen) {
		const float *src, *st = NULL;

		/* the stamp first: a row is never older than its stamp */
		if (s->ring)
			st = frr_row_read(wc, T_CLOCK,
					  (uint64_t)v->owner * job->nranks +
					      row % (uint64_t)job->nranks);
		src = frr_row_read(wc, table, row);
		if (!src || (s->ring && !st))
			return NULL;
		memcpy(val, src, sizeof(float) * cols);
		for (int r = 0; r < s->ring; r++) {
			int32_t c = s->ptag[(size_t)l * s->ring + r];
			const float *p =
			    s->pend + ((size_t)l * s->ring + r) * cols;

			if (c < 0 || c >= v->clock ||
			    applied(v, c, (uint64_t)st[0]))
				continue;
			for (int f = 0; f < cols; f++)
				val[f] += p[f];
		}
		s->stamp[l] = v->gen;
	}
	if (s->dstamp[l] != v->call) {
		s->dstamp[l] = v->call;
		s->dirty[s->ndirty++] = l;
	}
	return val;
}

static void side_push(struct mf_view *v, struct mf_side *s, struct frr_wctx *wc,
		      int table, const uint32_t *ids, int cols, float scale)
{
	const int slot = v->clock % (s->ring ? s->ring : 1);

	for (uint32_t k = 0; k < s->ndirty; k++) {
		uint32_t l = s->dirty[k];
		float *acc = s->acc + (size_t)l * cols;

		if (scale != 1.0f)
			for (int f = 0; f < cols; f++)
				acc[f] *= scale;
		frr_row_update(wc, table, ids ? ids[l] : l, acc);
		if (s->ring) {
			size_t at = (size_t)l * s->ring + slot;
			float *p = s->pend + at * cols;

			if (s->ptag[at] != v->clock) {
				s->ptag[at] = v->clock;
				memset(p, 0, sizeof(float) * cols);
			}
			for (int f = 0; f < cols; f++)
				p[f] += acc[f];
		}
		memset(acc, 0, sizeof(float) * cols);
	}
	s->ndirty = 0;
}

/* Make v current for (owner, clock); home views also push the stamp. */
static int view_enter(struct mf_app *m, struct mf_view *v, struct frr_wctx *wc,
		      int owner, int clock, int home)
{
	const struct mf_part *p = &m->parts[owner];
	const struct frr_job_info *job = &m->job;
	int ring = 0, ret;

	if (home) {
		ring = (job->mode == FRR_MODE_ASYNC ? 16 : job->slack) + 2;
		ring = ring > MF_MAX_RING ? MF_MAX_RING : ring;
	}
	/* item rows: no pending log, see mf_side */
	if ((ret = side_reserve(&v->user, p->nusers, m->cols, ring)) ||
	    (ret = side_reserve(&v->item, m->nitems, m->cols, 0)))
		return ret;
	if (v->owner != owner || v->clock != clock || v->part != p || !v->gen) {
		if (!v->gen)
			for (int r = 0; r < MF_MAX_RING; r++)
				v->stamp_clock[r] = -1;
		v->owner = owner;
		v->clock = clock;
		v->part = p;
		if (!++v->gen) { /* wrapped: clear every stamp */
			memset(v->user.stamp, 0,
			       sizeof(uint32_t) * v->user.cap);
			memset(v->item.stamp, 0,
			       sizeof(uint32_t) * v->item.cap);
			v->gen = 1;
		}
	}
	if (!++v->call) {
		memset(v->user.dstamp, 0, sizeof(uint32_t) * v->user.cap);
		memset(v->item.dstamp, 0, sizeof(uint32_t) * v->item.cap);
		v->call = 1;
	}
	if (home && v->last_stamp != clock + 1) {
		v->last_stamp = clock + 1;
		v->stamp_clock[clock % MF_MAX_RING] = clock;
		v->stamp_k[clock % MF_MAX_RING] = v->nstamps++;
		for (int o = 0; o < job->nranks; o++)
			frr_cell_update(wc, T_CLOCK,
					(uint64_t)owner * job->nranks + o, 0,
					1.0f);
	}
	return 0;
}

static int mf_process(void *app, struct frr_wctx *wc, int owner, int clock,
		      uint64_t begin, uint64_t end)
{
	struct mf_app *m = app;
	const int cols = m->cols;
	const int self = frr_wctx_worker(wc);
	const int t = self - m->job.rank * m->job.threads;
	const struct mf_part *p = &m->parts[owner];
	const float *icap, *ucap;
	const float lr = (float)(m->o.lr * pow(m->o.lr_decay, clock));
	struct mf_view *v;
	struct mf_hyper h = {
		.rank = m->o.rank,
		.lr = lr,
		.lr_item = lr,
		.reg = (float)m->o.reg,
		.breg = (float)m->o.bias_reg,
		.mu = m->mu,
	};
	double sse = 0.0;
	int ret;

	if (t < 0 || t >= m->job.threads || owner < 0 ||
	    owner >= m->job.nworkers || !m->loaded[owner] || end > p->ntrain ||
	    begin > end) {
		frr_err("mf: process(owner %d, [%" PRIu64 ", %" PRIu64
			")) on worker %d: no such items (a runtime bug)",
			owner, begin, end, self);
		return -EINVAL;
	}
	icap = m->icap[owner];
	ucap = m->ucap[owner];
	v = owner == self ? &m->scratch[t].home : &m->scratch[t].away;
	ret = view_enter(m, v, wc, owner, clock, owner == self);
	if (ret)
		return ret;
	for (uint64_t j = begin; j < end; j++) {
		const struct mf_rating *x = &p->train[j];
		float *pu = side_row(v, &v->user, wc, &m->job, T_USER, x->user,
				     p->users[x->user], cols);
		float *qi = side_row(v, &v->item, wc, &m->job, T_ITEM, x->item,
				     x->item, cols);

		if (!pu || !qi) {
			ret = -EIO;
			break;
		}
		h.lr = lr < ucap[x->user] ? lr : ucap[x->user];
		h.lr_item = lr < icap[x->item] ? lr : icap[x->item];
		float e =
		    mf_sgd_step(pu, qi, v->user.acc + (size_t)x->user * cols,
				v->item.acc + (size_t)x->item * cols, &h, x->r);
		sse += (double)e * e;
	}
	side_push(v, &v->user, wc, T_USER, p->users, cols, 1.0f);
	side_push(v, &v->item, wc, T_ITEM, NULL, cols, m->item_scale);
	frr_stat_add(wc, S_TRAIN_SSE, sse);
	frr_stat_add(wc, S_TRAIN_N, (double)(end - begin));
	if (ret)
		frr_err("mf: reading a row failed in clock %d", clock);
	return ret;
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
	const int w0 = m->job.rank * m->job.threads;
	int ret;

	(void)clock;
	/* every load_partition happens at start-up: the whole data set is
	 * not needed any more */
	if (m->have_data) {
		mf_data_free(&m->data);
		m->have_data = 0;
	}
	if (!m->eval_items) {
		m->eval_items =
		    malloc(sizeof(float) * ((size_t)m->nitems + 1) * m->cols);
		if (!m->eval_items)
			return -ENOMEM;
	}
	ret = read_rows(ec, T_ITEM, NULL, m->nitems, m->eval_items, m->cols);
	if (ret)
		return ret;
	for (int w = w0; w < w0 + m->job.threads; w++) {
		const struct mf_part *p = &m->parts[w];

		if (!m->loaded[w] || !p->ntest)
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
	struct mf_app *m = app;
	struct mf_model_hdr h = {
		.rank = (uint32_t)m->o.rank,
		.cols = (uint32_t)m->cols,
		.nusers = m->nusers,
		.nitems = m->nitems,
		.mu = m->mu,
	};
	float *row = malloc(sizeof(float) * m->cols);
	char *tmp = NULL;
	FILE *f = NULL;
	int ret = 0;

	/* write beside it and rename, so a failed save keeps the old model
	 * (as frr_model_save does for mlr and lda) */
	if (asprintf(&tmp, "%s.tmp", path) < 0)
		tmp = NULL;
	else
		f = fopen(tmp, "wb");
	memcpy(h.magic, MF_MODEL_MAGIC, sizeof(h.magic));
	if (!tmp || !f || !row) {
		ret = f ? -ENOMEM : -errno;
		frr_err("mf: cannot write the model to '%s': %s", path,
			strerror(-ret));
		goto out;
	}
	if (fwrite(&h, sizeof(h), 1, f) != 1)
		ret = -EIO;
	for (int t = T_USER; !ret && t <= T_ITEM; t++) {
		uint64_t n = t == T_USER ? m->nusers : m->nitems;

		for (uint64_t r = 0; !ret && r < n; r++) {
			ret = frr_eval_row_read(ec, t, r, row);
			if (!ret && fwrite(row, sizeof(float), (size_t)m->cols,
					   f) != (size_t)m->cols)
				ret = -EIO;
		}
	}
	if (fclose(f) && !ret)
		ret = -EIO;
	f = NULL;
	if (!ret && rename(tmp, path)) {
		ret = -errno;
		frr_err("mf: cannot rename '%s' to '%s': %s", tmp, path,
			strerror(errno));
	}
	if (ret == -EIO)
		frr_err("mf: writing the model to '%s' failed (disk full?)",
			path);
out:
	if (f)
		fclose(f);
	if (ret && tmp)
		unlink(tmp);
	free(tmp);
	free(row);
	return ret;
}

static int mf_load(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct mf_app *m = app;
	const struct frr_job_info *job = frr_eval_job(ec);
	int ret;

	free(m->model);
	m->model = NULL;
	ret = model_read(m, path);
	for (int t = T_USER; !ret && t <= T_ITEM; t++) {
		uint64_t n = t == T_USER ? m->nusers : m->nitems;
		size_t base = t == T_USER ? 0 : m->nusers;

		for (uint64_t r = (uint64_t)job->rank; !ret && r < n;
		     r += (uint64_t)job->nranks)
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
};
