// SPDX-License-Identifier: MIT
/* The toy app: linear regression with a known answer (see toy.h). */
#include <errno.h>
#include <float.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flexrr/base.h"
#include "flexrr/file.h"
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "toy.h"

#define TOY_MAX_DIM 1024

enum { ST_SQERR, ST_COUNT, ST_VIOL, ST_NSTATS };

struct toy {
	struct frr_toy_params p;
	struct frr_job_info job;
	int check_ssp;
	int adagrad;
	double work_us;
	double sleep_us; /* --sleep-us (rr engineer): work as a sleep */
	double jitter_us;
	uint64_t pad_rows; /* --table-rows: an extra, unused table */
};

static void point(const struct frr_toy_params *p, int w, uint64_t i, float *x,
		  float *y)
{
	struct frr_rng r;
	float s = 0;

	frr_rng_seed(&r,
		     p->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)w << 40) ^ i);
	for (int d = 0; d < p->dim; d++) {
		x[d] = (float)(2.0 * frr_rng_uniform(&r) - 1.0);
		s += x[d] * ((float)(d % 5) - 1.5f);
	}
	*y = s;
}

static uint64_t reference_items(const struct frr_toy_params *p, int v)
{
	uint64_t n = (uint64_t)p->nparts;

	if (p->total)
		return p->total / n + ((uint64_t)v < p->total % n);
	return p->items;
}

/* Gradient contribution of one item at parameters wv; returns err^2. */
static double item_grad(const struct frr_toy_params *p, int w, uint64_t i,
			const float *wv, float *g)
{
	float x[TOY_MAX_DIM], y, pred = 0, err, scale;

	point(p, w, i, x, &y);
	for (int d = 0; d < p->dim; d++)
		pred += x[d] * wv[d];
	err = pred - y;
	scale = -p->lr * err /
		(float)(p->total ? p->total : p->items * (uint64_t)p->nparts);
	for (int d = 0; d < p->dim; d++)
		g[d] = scale * x[d];
	return (double)err * err;
}

/* Worker v's pass over its items in one clock, from w: SGD on a copy (the
 * runtime's cache: every read shows the pass's own updates); returns the
 * change it pushes (value - value fetched), same float operations. */
static void reference_pass(const struct frr_toy_params *p, int v,
			   const float *w, float *local, float *delta)
{
	float g[TOY_MAX_DIM];

	memcpy(local, w, (size_t)p->dim * sizeof(float));
	for (uint64_t i = 0; i < reference_items(p, v); i++) {
		item_grad(p, v, i, local, g);
		for (int d = 0; d < p->dim; d++)
			local[d] += g[d];
	}
	for (int d = 0; d < p->dim; d++)
		delta[d] = local[d] - w[d];
}

int frr_toy_reference(const struct frr_toy_params *p, int clocks, float *w)
{
	float local[TOY_MAX_DIM], delta[TOY_MAX_DIM], next[TOY_MAX_DIM];

	if (p->dim < 1 || p->dim > TOY_MAX_DIM)
		return -EINVAL;
	memset(w, 0, (size_t)p->dim * sizeof(float));
	for (int c = 0; c < clocks; c++) {
		memcpy(next, w, (size_t)p->dim * sizeof(float));
		/* the shard applies the partitions' changes in order */
		for (int v = 0; v < p->nparts; v++) {
			reference_pass(p, v, w, local, delta);
			for (int d = 0; d < p->dim; d++)
				next[d] += delta[d];
		}
		memcpy(w, next, (size_t)p->dim * sizeof(float));
	}
	return 0;
}

/* Ranges: bounds that keep every count and product finite and in range
 * (--items -1 hung, --dim 4294967297 overflowed an int). */
#define TOY_MAX_ITEMS (1ull << 40)
#define TOY_MAX_US 1e12 /* 11.6 days of work per item: a hang on purpose */
#define TOY_STR(x) TOY_STR2(x)
#define TOY_STR2(x) #x

#define F(x) offsetof(struct toy, x)
static const struct frr_opt toy_table[] = {
	FRR_OPT("items", 0, FRR_OPT_U64, F(p.items), 1, TOY_MAX_ITEMS,
		.def.u = 200, .arg = "N", .help = "items per worker"),
	FRR_OPT("dim", 0, FRR_OPT_INT, F(p.dim), 1, TOY_MAX_DIM, .def.i = 16,
		.arg = "D",
		.help = "parameters, rows of table 'w' (max " TOY_STR(
		    TOY_MAX_DIM) ")"),
	FRR_OPT("lr", 0, FRR_OPT_FLOAT, F(p.lr), 0, 1e6, .def.d = 0.5,
		.arg = "F", .help = "step size"),
	FRR_OPT("adagrad", 0, FRR_OPT_FLAG, F(adagrad), 0, 0,
		.help = "AdaGrad update rule instead of add"),
	FRR_OPT("work-us", 0, FRR_OPT_DOUBLE, F(work_us), 0, TOY_MAX_US,
		.arg = "U",
		.help = "extra CPU work per item, microseconds of\nthread CPU "
			"time"),
	FRR_OPT("sleep-us", 0, FRR_OPT_DOUBLE, F(sleep_us), 0, TOY_MAX_US,
		.arg = "U",
		.help = "work per item: a sleep of U us\n(one core per worker, "
			"emulated)"),
	FRR_OPT("jitter-us", 0, FRR_OPT_DOUBLE, F(jitter_us), 0, TOY_MAX_US,
		.arg = "J",
		.help =
		    "random sleep per chunk of items, up to J us\n(and 20 J "
		    "at a quarter of the clock starts)"),
	FRR_OPT("total", 0, FRR_OPT_U64, F(p.total), 1, TOY_MAX_ITEMS,
		.arg = "N", .help = "N items split across the workers instead",
		.flags = FRR_OPT_NODEF),
	FRR_OPT("table-rows", 0, FRR_OPT_U64, F(pad_rows), 0, TOY_MAX_ITEMS,
		.arg = "N", .help = "add an unused N x 64 table (memory tests)",
		.flags = FRR_OPT_NODEF),
	FRR_OPT("check-ssp", 0, FRR_OPT_FLAG, F(check_ssp), 0, 0,
		.help = "prove from the values read that no read is\nstaler "
			"than the slack (metric ssp_violations)"),
	{ 0 },
};
#undef F

static const struct frr_opt_set toy_opts = {
	.prog = "toy",
	.see = "'flexrr run toy --help'",
	.opts = toy_table,
	.size = sizeof(struct toy),
	.head = "usage: flexrr run [run options] toy [options]\n"
		"Linear regression with a known answer (tests, benches).\n",
};

static void toy_usage(FILE *out)
{
	frr_opt_usage(&toy_opts, out);
}

static int toy_parse(struct toy *t, const struct frr_job_info *job, int argc,
		     char **argv)
{
	frr_opt_defaults(&toy_opts, t);
	t->job = *job;
	t->p.seed = job->seed;
	t->p.nparts = job->nparts;
	return frr_opt_parse(&toy_opts, t, argc, argv, NULL);
}

static int toy_check_args(int argc, char **argv)
{
	return frr_opt_check(&toy_opts, argc, argv);
}

static int toy_create(const struct frr_job_info *job, int argc, char **argv,
		      void **app)
{
	struct toy *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	err = toy_parse(t, job, argc, argv);
	if (err) { /* 1: --help, printed by frr_run_main */
		err = err > 0 ? -ECANCELED : err;
		free(t);
		return err;
	}
	*app = t;
	return 0;
}

static void toy_destroy(void *app)
{
	free(app);
}

static int toy_tables(void *app, struct frr_table_spec *s, int max)
{
	struct toy *t = app;

	int n = 1;

	if (max < 3)
		return -EINVAL;
	s[0] = (struct frr_table_spec){
		.name = "w",
		.rows = (uint64_t)t->p.dim,
		.cols = 1,
		.rule = t->adagrad ? FRR_UPDATE_ADAGRAD : FRR_UPDATE_ADD,
		.lr = t->p.lr,
		.eps = 1e-6f,
	};
	if (t->check_ssp) /* must stay table 1: process() uses it */
		s[n++] =
		    (struct frr_table_spec){ .name = "count",
					     .rows = 1,
					     .cols = (uint32_t)t->job.nparts };
	if (t->pad_rows)
		s[n++] = (struct frr_table_spec){ .name = "pad",
						  .rows = t->pad_rows,
						  .cols = 64 };
	return n;
}

static int toy_load_partition(void *app, int part, uint64_t *n, void **data)
{
	struct toy *t = app;

	*n = reference_items(&t->p, part);
	*data = NULL;
	return 0;
}

/* CPU work, not wall time: a preempted worker still owes its work */
static void spin_us(double us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 <
	       us);
}

static void jitter(struct toy *t, struct frr_ctx *c, uint64_t a)
{
	struct frr_rng r;
	double us;

	frr_rng_seed(&r, frr_item_rng(c, a) ^ 0x7177);
	us = frr_rng_uniform(&r) * t->jitter_us;
	if (a == 0 && frr_rng_uniform(&r) < 0.25)
		us += 20 * t->jitter_us;
	struct timespec ts = { (time_t)(us / 1e6),
			       (long)((us - (time_t)(us / 1e6) * 1e6) * 1e3) };
	nanosleep(&ts, NULL);
}

/* --sleep-us: one sleep per chunk; a waiting worker leaves the CPU */
static void sleep_chunk(double us)
{
	struct timespec ts = { (time_t)(us / 1e6),
			       (long)((us - (double)(time_t)(us / 1e6) * 1e6) *
				      1e3) };

	nanosleep(&ts, NULL);
}

static void check_ssp(struct toy *t, struct frr_ctx *c, int clock)
{
	const float *cnt = frr_row_read(c, 1, 0);
	int64_t bound = (int64_t)clock - t->job.slack - 1;

	for (int v = 0; v < t->job.nparts; v++) {
		/* clocks fully seen for v = count / items */
		uint64_t nv = reference_items(&t->p, v);
		int64_t seen = nv ? (int64_t)(cnt[v] / (float)nv) - 1 : 1 << 30;

		if (seen < bound) {
			frr_stat_add(c, ST_VIOL, 1);
			return;
		}
	}
}

static int toy_process(void *app, struct frr_ctx *c, uint64_t a, uint64_t b)
{
	struct toy *t = app;
	const int part = frr_part_index(c), clock = frr_clock(c);
	float wv[TOY_MAX_DIM], g[TOY_MAX_DIM];

	if (t->jitter_us > 0)
		jitter(t, c, a);
	if (t->sleep_us > 0)
		sleep_chunk(t->sleep_us * (double)(b - a));
	if (t->check_ssp) {
		check_ssp(t, c, clock);
		frr_cell_update(c, 1, 0, (uint32_t)part, (float)(b - a));
	}
	for (uint64_t i = a; i < b; i++) {
		double e2;

		/* the cache: reads show this pass's own updates (SGD) */
		for (int d = 0; d < t->p.dim; d++)
			wv[d] = frr_row_read(c, 0, (uint64_t)d)[0];
		e2 = item_grad(&t->p, part, i, wv, g);
		for (int d = 0; d < t->p.dim; d++)
			frr_cell_update(c, 0, (uint64_t)d, 0, g[d]);
		frr_stat_add(c, ST_SQERR, e2);
		frr_stat_add(c, ST_COUNT, 1);
		if (t->work_us > 0)
			spin_us(t->work_us);
	}
	return 0;
}

static int toy_global(void *app, const double *stats, int nstats, int clock,
		      double *objective, char *metrics, size_t len)
{
	struct toy *t = app;

	(void)nstats;
	(void)clock;
	*objective =
	    stats[ST_COUNT] > 0 ? stats[ST_SQERR] / stats[ST_COUNT] : 0;
	if (t->check_ssp)
		snprintf(metrics, len, "mse=%.9g ssp_violations=%.0f",
			 *objective, stats[ST_VIOL]);
	else
		snprintf(metrics, len, "mse=%.9g", *objective);
	return 0;
}

struct toy_fill {
	const struct toy *t;
	struct frr_eval_ctx *ec;
};

static int toy_fill(FILE *f, void *arg)
{
	const struct toy_fill *a = arg;
	int err = 0;

	for (int d = 0; d < a->t->p.dim && !err; d++) {
		float v;

		err = frr_eval_row_read(a->ec, 0, (uint64_t)d, &v);
		fprintf(f, "%a\n", (double)v);
	}
	return err;
}

static int toy_save(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct toy_fill a = { app, ec };

	return frr_file_write_atomic(path, "toy: --save", toy_fill, &a);
}

/* Value d of a saved model (one finite number per line, as toy_save
 * writes): 0, -EINVAL with file:line, or 1 at the end of the file. */
static int load_value(FILE *f, const char *path, int d, float *x)
{
	char line[128];
	size_t n;
	double v;

	if (!fgets(line, sizeof(line), f))
		return 1;
	n = strcspn(line, "\r\n");
	line[n] = 0;
	if (frr_parse_double(line, -FLT_MAX, FLT_MAX, &v)) {
		frr_err("toy: %s:%d: '%.40s' is not a finite float (a model "
			"saved by toy has one per line)",
			path, d + 1, line);
		return -EINVAL;
	}
	*x = (float)v;
	return 0;
}

/* Every process writes every row; the runtime keeps the ones it stores. */
static int toy_load(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct toy *t = app;
	FILE *f = fopen(path, "r");
	int err = 0;
	float x;

	if (!f) {
		frr_err("toy: cannot read %s", path);
		return -errno;
	}
	for (int d = 0; d < t->p.dim && !err; d++) {
		err = load_value(f, path, d, &x);
		if (err > 0) {
			frr_err("toy: %s has fewer than %d values (--dim)",
				path, t->p.dim);
			err = -EINVAL;
		}
		if (!err)
			err = frr_eval_row_write(ec, 0, (uint64_t)d, &x);
	}
	if (!err && !load_value(f, path, t->p.dim, &x)) {
		frr_err("toy: %s has more than %d values (--dim)", path,
			t->p.dim);
		err = -EINVAL;
	}
	fclose(f);
	return err;
}

const struct frr_app_ops frr_app_toy = {
	.size = sizeof(struct frr_app_ops),
	.name = "toy",
	.summary = "linear regression with a known answer (tests, benches)",
	.usage = toy_usage,
	.create = toy_create,
	.destroy = toy_destroy,
	.tables = toy_tables,
	.load_partition = toy_load_partition,
	.process = toy_process,
	.clock_global = toy_global,
	.save = toy_save,
	.load = toy_load,
	.nstats = ST_NSTATS,
	.maximize = 0,
	.check_args = toy_check_args,
	.opts = &toy_opts,
};
