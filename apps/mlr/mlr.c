// SPDX-License-Identifier: MIT
/*
 * Multinomial logistic regression (softmax, minibatch SGD, L2) as a flexrr
 * app.  Work items are training examples; partition p is the contiguous
 * slice [n*p/N, n*(p+1)/N) of the training set (N partitions).
 *
 * Parameter table "weights": one row per feature (dim rows) plus a bias row,
 * each row `classes` floats.  Why per feature and not per class: a sparse
 * example (LIBSVM) then reads and updates only the rows of its non-zero
 * features, rows are small and many so the runtime spreads them evenly, and
 * a dense example touches all rows just as a per-class layout would.
 *
 * A partition's items of a clock run local SGD on the calling thread's
 * cached rows: the runtime's cache shows the thread its own steps at once
 * and pushes their net change after the clock.  The N partitions all
 * start a clock from (nearly) the same model, so summing their changes
 * would take N steps where one was meant and oscillates; by default the
 * table averages them (--combine average, FRR_COMBINE_MEAN: parameter
 * averaging of local SGD runs, each partition weighing 1/N however
 * reassignment split it); --combine sum keeps the raw sum (the classic
 * parameter-server convention, for small --lr).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/modelfile.h"
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "mlr_data.h"
#include "mlr_model.h"

#define MLR_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

enum mlr_stat {
	ST_TRAIN_LOSS,
	ST_TRAIN_N,
	ST_TRAIN_HIT,
	ST_TEST_LOSS,
	ST_TEST_HIT,
	ST_TEST_N,
	ST_COUNT,
};

/* A worker thread's scratch (frr_scratch). */
struct mlr_thread {
	struct mlr_sgd sgd;
	float **w; /* dim + 1 row pointers into the thread's cached rows */
};

/* Everything the options set (mlr_table below) */
struct mlr_opts {
	const char *data, *train, *test, *train_labels, *test_labels;
	int format; /* MLR_FMT_* */
	uint64_t train_limit, test_limit;
	const char *load;
	double lr, lr_decay, l2;
	uint64_t batch;
	int sum;      /* --combine sum */
	int progress; /* print the metrics every clock */
	const char *save_path;
};

enum { MLR_FMT_AUTO, MLR_FMT_IDX, MLR_FMT_LIBSVM };

struct mlr_app {
	struct mlr_opts o;
	struct mlr_data train, test;
	int have_test, nparts;
	uint32_t dim, classes;
	float *loaded; /* --load: initial rows */
	uint64_t *lo;  /* nparts + 1: partition p is [lo[p], lo[p + 1]) */
	float *eval;   /* clock_local's copy of the model, and its rows */
	float **eval_w;
};

/* "x/train-images-idx3-ubyte.gz" -> "x/train-labels-idx1-ubyte.gz" */
static char *mlr_labels_name(const char *images)
{
	const char *p = strstr(images, "images-idx3");
	char *s;

	if (!p)
		return NULL;
	s = strdup(images);
	if (s)
		memcpy(s + (p - images), "labels-idx1", 11);
	return s;
}

/* DIR/base(.gz): the .gz if it exists, else the plain name. */
static char *mlr_find(const char *dir, const char *base)
{
	char *s = NULL;

	if (asprintf(&s, "%s/%s.gz", dir, base) < 0)
		return NULL;
	if (!access(s, R_OK))
		return s;
	free(s);
	if (asprintf(&s, "%s/%s", dir, base) < 0)
		return NULL;
	return s;
}

static const char *const mlr_formats[] = { "auto", "idx", "libsvm", NULL };
static const char *const mlr_combines[] = { "average", "sum", NULL };

#define F(x) offsetof(struct mlr_opts, x)
#define DATA "data (one of):"
#define TRAIN "training:"
static const struct frr_opt mlr_table[] = {
	FRR_OPT("data", 0, FRR_OPT_STRING, F(data), 0, 0, .group = DATA,
		.arg = "fashion-mnist|DIR",
		.help = "IDX files {train,t10k}-{images-idx3,labels-idx1}-"
			"ubyte[.gz]\nin DIR (fashion-mnist = " MLR_DEFAULT_DIR
			",\nor $FLEXRR_FASHION_MNIST)"),
	FRR_OPT("train", 0, FRR_OPT_STRING, F(train), 0, 0, .group = DATA,
		.arg = "FILE",
		.help = "IDX images (labels found by replacing\n'images-idx3' "
			"with 'labels-idx1' in the name,\nor --train-labels) "
			"or LIBSVM text"),
	FRR_OPT("test", 0, FRR_OPT_STRING, F(test), 0, 0, .group = DATA,
		.arg = "FILE", .help = "the test set, as --train (optional)"),
	FRR_OPT("train-labels", 0, FRR_OPT_STRING, F(train_labels), 0, 0,
		.group = DATA, .arg = "FILE", .help = "IDX labels of --train"),
	FRR_OPT("test-labels", 0, FRR_OPT_STRING, F(test_labels), 0, 0,
		.group = DATA, .arg = "FILE", .help = "IDX labels of --test"),
	FRR_OPT("format", 0, FRR_OPT_CHOICE, F(format), 0, 0, .group = DATA,
		.arg = "idx|libsvm", .choices = mlr_formats,
		.help = "auto: idx if the name contains 'idx3', else libsvm"),
	FRR_OPT("train-limit", 0, FRR_OPT_U64, F(train_limit), 0, UINT32_MAX,
		.group = DATA, .arg = "N",
		.help = "use the first N training examples",
		.def_text = "0 = all"),
	FRR_OPT("test-limit", 0, FRR_OPT_U64, F(test_limit), 0, UINT32_MAX,
		.group = DATA, .arg = "N",
		.help = "use the first N test examples", .def_text = "0 = all"),
	FRR_OPT("lr", 0, FRR_OPT_DOUBLE, F(lr), 1e-9, 1e3, .group = TRAIN,
		.def.d = 0.2, .arg = "F",
		.help = "SGD step, clock c uses F/(1+decay*c)"),
	FRR_OPT("lr-decay", 0, FRR_OPT_DOUBLE, F(lr_decay), 0, 1e3,
		.group = TRAIN, .def.d = 0.5, .arg = "F",
		.help = "the decay of --lr"),
	FRR_OPT("batch", 0, FRR_OPT_U64, F(batch), 1, 1 << 20, .group = TRAIN,
		.def.u = 16, .arg = "N", .help = "minibatch size"),
	FRR_OPT("l2", 0, FRR_OPT_DOUBLE, F(l2), 0, 1e3, .group = TRAIN,
		.def.d = 1e-5, .arg = "F",
		.help = "L2 penalty on the feature weights"),
	FRR_OPT("combine", 0, FRR_OPT_CHOICE, F(sum), 0, 0, .group = TRAIN,
		.arg = "average|sum", .choices = mlr_combines,
		.help = "how the partitions' changes of a clock add up:\n"
			"average: each scaled by 1/partitions, a run\nover "
			"part of a partition's items by that part;\nsum: only "
			"for a very small --lr"),
	FRR_OPT("save", 0, FRR_OPT_STRING, F(save_path), 0, 0, .group = TRAIN,
		.flags = FRR_OPT_OUTFILE, .arg = "FILE",
		.help = "write the model after every clock (one process)"),
	FRR_OPT("load", 0, FRR_OPT_STRING, F(load), 0, 0, .group = TRAIN,
		.arg = "FILE",
		.help = "start from a saved model (same data shape)"),
	FRR_OPT("no-progress", 0, FRR_OPT_FLAG, F(progress), 0, 0,
		.group = TRAIN, .def.i = 1,
		.help = "no 'mlr: clock N <metrics>' line per clock on stderr"),
	{ 0 },
};
#undef TRAIN
#undef DATA
#undef F

/* What the options mean together */
static int mlr_check(void *obj)
{
	const struct mlr_opts *o = obj;

	if (!!o->data == !!o->train) {
		frr_err("mlr: give either --data fashion-mnist|DIR or --train "
			"FILE (see 'mlr --help')");
		return -EINVAL;
	}
	return 0;
}

static const struct frr_opt_set mlr_opts = {
	.prog = "mlr",
	.see = "'mlr --help'",
	.opts = mlr_table,
	.size = sizeof(struct mlr_opts),
	.check = mlr_check,
	.head = "usage: flexrr run [run options] mlr [options]\n"
		"Multinomial logistic regression (softmax) by minibatch SGD "
		"with L2.\n"
		"Work items are training examples; the weights are one table "
		"row per feature\n(plus a bias row), `classes` floats each.\n",
	.tail = "\ngzip input is read directly (detected by magic).\n"
		"\nprinted per clock: train_loss (mean cross-entropy of the "
		"examples as they\nwere visited), train_accuracy, test_loss, "
		"test_accuracy (full test set).\nThe objective is "
		"test_accuracy (train_accuracy without a test set): "
		"--target\nis reached when it is >= the value.\n",
};

static void mlr_usage(FILE *out)
{
	frr_opt_usage(&mlr_opts, out);
}

static int mlr_load_pair(const char *images, const char *labels, uint64_t limit,
			 uint32_t classes, struct mlr_data *d)
{
	char *guess = NULL;
	int rc;

	if (!labels) {
		guess = mlr_labels_name(images);
		if (!guess) {
			frr_err("mlr: cannot guess the labels file of '%s' "
				"(no 'images-idx3' in the name); pass "
				"--train-labels/--test-labels",
				images);
			return -EINVAL;
		}
		labels = guess;
	}
	rc = mlr_load_idx(images, labels, limit, classes, d);
	free(guess);
	return rc;
}

static int mlr_load_data(struct mlr_app *a, struct mlr_opts *o)
{
	char *tri = NULL, *tei = NULL, *trl = NULL, *tel = NULL;
	struct mlr_labels map = { 0 };
	const char *dir;
	int idx, rc;

	if (o->data) {
		dir = o->data;
		if (!strcmp(dir, "fashion-mnist")) {
			dir = getenv("FLEXRR_FASHION_MNIST");
			if (!dir)
				dir = MLR_DEFAULT_DIR;
		}
		tri = mlr_find(dir, "train-images-idx3-ubyte");
		trl = mlr_find(dir, "train-labels-idx1-ubyte");
		tei = mlr_find(dir, "t10k-images-idx3-ubyte");
		tel = mlr_find(dir, "t10k-labels-idx1-ubyte");
		if (!tri || !trl || !tei || !tel) {
			rc = -ENOMEM;
			goto free_names;
		}
		if (access(tri, R_OK)) {
			frr_err("mlr: no IDX training set in '%s' (looked for "
				"%s[.gz]); install Debian's "
				"dataset-fashion-mnist or pass --data DIR / "
				"--train FILE",
				dir, "train-images-idx3-ubyte");
			rc = -ENOENT;
			goto free_names;
		}
		o->train = tri;
		o->train_labels = trl;
		o->test = tei;
		o->test_labels = tel;
		o->format = MLR_FMT_IDX;
	}
	idx = o->format ? o->format == MLR_FMT_IDX
			: strstr(o->train, "idx3") != NULL;
	if (idx) {
		rc = mlr_load_pair(o->train, o->train_labels, o->train_limit, 0,
				   &a->train);
		if (!rc && o->test)
			rc = mlr_load_pair(o->test, o->test_labels,
					   o->test_limit, a->train.classes,
					   &a->test);
		if (!rc && o->test && a->test.dim != a->train.dim) {
			frr_err("mlr: test images have %u pixels, training "
				"images %u; pass a matching pair",
				a->test.dim, a->train.dim);
			rc = -EINVAL;
		}
	} else {
		rc = mlr_load_libsvm(o->train, o->train_limit, 0, &map,
				     &a->train);
		if (!rc && o->test)
			rc = mlr_load_libsvm(o->test, o->test_limit,
					     a->train.dim, &map, &a->test);
	}
	a->have_test = o->test != NULL;
free_names:
	free(tri);
	free(trl);
	free(tei);
	free(tel);
	o->train = o->test = o->train_labels = o->test_labels = NULL;
	return rc;
}

static void mlr_destroy(void *app)
{
	struct mlr_app *a = app;

	if (!a)
		return;
	free(a->loaded);
	free(a->lo);
	free(a->eval);
	free(a->eval_w);
	mlr_data_free(&a->train);
	mlr_data_free(&a->test);
	free(a);
}

static const struct frr_model_table *mlr_shape(const struct mlr_app *a,
					       struct frr_model_table *t)
{
	t->name = "weights";
	t->rows = (uint64_t)a->dim + 1;
	t->cols = a->classes;
	return t;
}

/* Partition bounds, and the model copy clock_local evaluates. */
static int mlr_alloc(struct mlr_app *a)
{
	uint64_t N = (uint64_t)a->nparts;

	if (a->train.n < N) {
		frr_err("mlr: %llu training examples cannot fill %llu data "
			"partitions: run fewer processes or threads (-n, "
			"-t) or give more examples",
			(unsigned long long)a->train.n, (unsigned long long)N);
		return -EINVAL;
	}
	a->lo = malloc((N + 1) * sizeof(*a->lo));
	if (!a->lo)
		return -ENOMEM;
	for (uint64_t p = 0; p <= N; p++)
		a->lo[p] = a->train.n * p / N;
	if (!a->have_test)
		return 0;
	a->eval = malloc(((size_t)a->dim + 1) * a->classes * sizeof(float));
	a->eval_w = malloc(((size_t)a->dim + 1) * sizeof(*a->eval_w));
	if (!a->eval || !a->eval_w)
		return -ENOMEM;
	mlr_rows(a->eval, a->dim, a->classes, a->eval_w);
	return 0;
}

static int mlr_create(const struct frr_job_info *job, int argc, char **argv,
		      void **app)
{
	struct frr_model_table t;
	struct mlr_app *a;
	int rc;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->nparts = job->nparts;
	frr_opt_defaults(&mlr_opts, &a->o);
	rc = frr_opt_parse(&mlr_opts, &a->o, argc, argv, NULL);
	if (rc > 0) { /* help: printed by frr_run_main */
		rc = -ECANCELED;
		goto destroy;
	}
	if (rc)
		goto destroy;
	rc = mlr_load_data(a, &a->o);
	if (rc)
		goto destroy;
	a->dim = a->train.dim;
	a->classes = a->train.classes;
	if (a->o.load) {
		rc = frr_model_load(a->o.load, "mlr", mlr_shape(a, &t), 1,
				    &a->loaded);
		if (rc)
			goto destroy;
	}
	rc = mlr_alloc(a);
	if (rc)
		goto destroy;
	if (job->leader)
		frr_info("mlr: %llu training examples, %u features, %u "
			 "classes, %llu test examples",
			 (unsigned long long)a->train.n, a->dim, a->classes,
			 (unsigned long long)a->test.n);
	*app = a;
	return 0;

destroy:
	mlr_destroy(a);
	return rc;
}

static void mlr_init_row(void *app, int table, uint64_t row, float *out,
			 uint32_t cols)
{
	struct mlr_app *a = app;

	(void)table;
	if (a->loaded)
		memcpy(out, a->loaded + row * cols, cols * sizeof(float));
	else
		memset(out, 0, cols * sizeof(float));
}

static int mlr_tables(void *app, struct frr_table_spec *specs, int max)
{
	struct mlr_app *a = app;

	if (max < 1)
		return -EINVAL;
	specs[0] = (struct frr_table_spec){
		.name = "weights",
		.rows = (uint64_t)a->dim + 1,
		.cols = a->classes,
		.rule = FRR_UPDATE_ADD,
		.combine = a->o.sum ? FRR_COMBINE_SUM : FRR_COMBINE_MEAN,
		.init_row = mlr_init_row,
	};
	return 1;
}

static int mlr_load_partition(void *app, int part, uint64_t *nitems,
			      void **data)
{
	struct mlr_app *a = app;

	/* the whole training set is parsed once per process in create() */
	*nitems = a->lo[part + 1] - a->lo[part];
	*data = &a->lo[part];
	return 0;
}

static int mlr_thread_init(void *app, void *scratch)
{
	struct mlr_app *a = app;
	struct mlr_thread *t = scratch;

	t->w = malloc(((size_t)a->dim + 1) * sizeof(*t->w));
	if (!t->w)
		return -ENOMEM;
	return mlr_sgd_init(&t->sgd, a->dim, a->classes, (uint32_t)a->o.batch);
}

static void mlr_thread_fini(void *app, void *scratch)
{
	struct mlr_thread *t = scratch;

	(void)app;
	free(t->w);
	mlr_sgd_free(&t->sgd);
}

static int mlr_process(void *app, struct frr_ctx *c, uint64_t begin,
		       uint64_t end)
{
	struct mlr_app *a = app;
	struct mlr_thread *t = frr_scratch(c);
	uint64_t lo = *(const uint64_t *)frr_part(c), hits = 0;
	double loss = 0, lr = a->o.lr / (1.0 + a->o.lr_decay * frr_clock(c));

	/* the clock's cached rows: earlier calls' steps are in them */
	for (uint64_t j = 0; j <= a->dim; j++)
		t->w[j] = frr_row_write(c, 0, j);
	mlr_sgd_run(&t->sgd, &a->train, lo + begin, lo + end, t->w, (float)lr,
		    (float)a->o.l2, &loss, &hits);
	frr_stat_add(c, ST_TRAIN_LOSS, loss);
	frr_stat_add(c, ST_TRAIN_N, (double)(end - begin));
	frr_stat_add(c, ST_TRAIN_HIT, (double)hits);
	return 0;
}

static int mlr_save_row(void *ctx, int t, uint64_t r, float *out)
{
	(void)t;
	return frr_eval_row_read(ctx, 0, r, out);
}

static int mlr_save(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct mlr_app *a = app;
	struct frr_model_table t;

	return frr_model_save(path, "mlr", mlr_shape(a, &t), 1, mlr_save_row,
			      ec);
}

static int mlr_clock_local(void *app, struct frr_eval_ctx *ec, int clock)
{
	struct mlr_app *a = app;
	uint64_t lo, hi, hits = 0;
	double loss = 0;
	int rc = 0;

	(void)clock;
	if (a->o.save_path && frr_eval_job(ec)->leader)
		rc = mlr_save(a, ec, a->o.save_path);
	if (rc || !a->have_test)
		return rc;
	for (uint64_t j = 0; j <= a->dim && !rc; j++)
		rc = frr_eval_row_read(ec, 0, j, a->eval_w[j]);
	if (rc)
		return rc;
	/* the shares of all processes cover the test set once */
	frr_eval_share(ec, a->test.n, &lo, &hi);
	mlr_eval(&a->test, lo, hi, a->eval_w, a->classes, &loss, &hits);
	frr_eval_stat_add(ec, ST_TEST_LOSS, loss);
	frr_eval_stat_add(ec, ST_TEST_HIT, (double)hits);
	frr_eval_stat_add(ec, ST_TEST_N, (double)(hi - lo));
	return 0;
}

static int mlr_clock_global(void *app, const double *st, int nstats, int clock,
			    double *objective, char *metrics, size_t len)
{
	struct mlr_app *a = app;
	double n = st[ST_TRAIN_N] > 0 ? st[ST_TRAIN_N] : 1;
	double tn = st[ST_TEST_N] > 0 ? st[ST_TEST_N] : 1;

	(void)nstats;
	if (a->have_test) {
		*objective = st[ST_TEST_HIT] / tn;
		snprintf(metrics, len,
			 "train_loss=%.5f train_accuracy=%.4f test_loss=%.5f "
			 "test_accuracy=%.4f",
			 st[ST_TRAIN_LOSS] / n, st[ST_TRAIN_HIT] / n,
			 st[ST_TEST_LOSS] / tn, *objective);
	} else {
		*objective = st[ST_TRAIN_HIT] / n;
		snprintf(metrics, len, "train_loss=%.5f train_accuracy=%.4f",
			 st[ST_TRAIN_LOSS] / n, *objective);
	}
	/* the runtime's progress line shows the objective only */
	if (a->o.progress)
		fprintf(stderr, "mlr: clock %d %s\n", clock, metrics);
	/* a diverged model still "hits" a class by chance: the runtime fails
	 * the run on a non-finite objective, so pass the loss on then */
	if (!isfinite(st[ST_TRAIN_LOSS] +
		      (a->have_test ? st[ST_TEST_LOSS] : 0)))
		*objective = NAN;
	return 0;
}

static int mlr_load_model(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct mlr_app *a = app;
	struct frr_model_table t;
	float *w;
	int rc;

	rc = frr_model_load(path, "mlr", mlr_shape(a, &t), 1, &w);
	if (rc)
		return rc;
	for (uint64_t j = 0; j <= a->dim && !rc; j++)
		rc = frr_eval_row_write(ec, 0, j, w + j * a->classes);
	free(w);
	return rc;
}

/* No input is read: the table's parse and check only. */
static int mlr_check_args(int argc, char **argv)
{
	return frr_opt_check(&mlr_opts, argc, argv);
}

const struct frr_app_ops frr_app_mlr = {
	.size = sizeof(struct frr_app_ops),
	.name = "mlr",
	.summary = "multinomial logistic regression (softmax SGD): "
		   "Fashion-MNIST, IDX, LIBSVM",
	.usage = mlr_usage,
	.create = mlr_create,
	.destroy = mlr_destroy,
	.tables = mlr_tables,
	.load_partition = mlr_load_partition,
	.scratch_size = sizeof(struct mlr_thread),
	.thread_init = mlr_thread_init,
	.thread_fini = mlr_thread_fini,
	.process = mlr_process,
	.clock_local = mlr_clock_local,
	.clock_global = mlr_clock_global,
	.save = mlr_save,
	.load = mlr_load_model,
	.nstats = ST_COUNT,
	.maximize = 1,
	.check_args = mlr_check_args,
	.opts = &mlr_opts,
};
