// SPDX-License-Identifier: MIT
/* The toy app: linear regression with a known answer (see toy.h). */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/opts.h"
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

static void toy_usage(FILE *out)
{
	fprintf(out,
		"usage: flexrr run [run options] toy [options]\n"
		"Linear regression with a known answer (tests, benches).\n"
		"  --items N      items per worker (default 200)\n"
		"  --dim D        parameters, rows of table 'w' (default 16, "
		"max %d)\n"
		"  --lr F         step size (default 0.5)\n"
		"  --adagrad      AdaGrad update rule instead of add\n"
		"  --work-us U    extra CPU work per item, microseconds of\n"
		"                 thread CPU time\n"
		"  --sleep-us U   work per item: a sleep of U us\n"
		"                 (one core per worker, emulated)\n"
		"  --jitter-us J  random sleep per chunk of items, up to J us\n"
		"                 (and 20 J at a quarter of the clock starts)\n"
		"  --total N      N items split across the workers instead\n"
		"  --table-rows N add an unused N x 64 table (memory tests)\n"
		"  --check-ssp    prove from the values read that no read is\n"
		"                 staler than the slack (metric "
		"ssp_violations)\n",
		TOY_MAX_DIM);
}

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

static int toy_u64(const char *name, const char *arg, uint64_t lo, uint64_t hi,
		   uint64_t *out)
{
	return frr_opt_u64("toy", name, arg, lo, hi, out);
}

static int toy_us(const char *name, const char *arg, double *out)
{
	return frr_opt_double("toy", name, arg, 0, TOY_MAX_US, out);
}

/* One option with a value (getopt's code opt); 1 for an unknown one. */
static int toy_value_opt(struct toy *t, int opt, const char *arg)
{
	uint64_t u = 0;
	double d = 0;
	int err;

	switch (opt) {
	case 'i':
		return toy_u64("--items", arg, 1, TOY_MAX_ITEMS, &t->p.items);
	case 'd':
		err = toy_u64("--dim", arg, 1, TOY_MAX_DIM, &u);
		t->p.dim = (int)u;
		return err;
	case 'l':
		err = frr_opt_double("toy", "--lr", arg, 0, 1e6, &d);
		/* strtof, not (float)d: a double rounded again may differ
		 * in the last bit, and BSP results must stay bit-identical */
		t->p.lr = strtof(arg, NULL);
		return err;
	case 'w':
		return toy_us("--work-us", arg, &t->work_us);
	case 's':
		return toy_us("--sleep-us", arg, &t->sleep_us);
	case 'j':
		return toy_us("--jitter-us", arg, &t->jitter_us);
	case 'T':
		return toy_u64("--total", arg, 1, TOY_MAX_ITEMS, &t->p.total);
	case 'R':
		return toy_u64("--table-rows", arg, 0, TOY_MAX_ITEMS,
			       &t->pad_rows);
	default:
		return 1;
	}
}

/* One option; 1 for an unknown one, -EINVAL for a bad value (said). */
static int toy_opt(struct toy *t, int opt, const char *arg)
{
	switch (opt) {
	case 'a':
		t->adagrad = 1;
		return 0;
	case 'c':
		t->check_ssp = 1;
		return 0;
	default:
		return toy_value_opt(t, opt, arg);
	}
}

static int toy_parse(struct toy *t, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "items", required_argument, NULL, 'i' },
		{ "dim", required_argument, NULL, 'd' },
		{ "lr", required_argument, NULL, 'l' },
		{ "adagrad", no_argument, NULL, 'a' },
		{ "work-us", required_argument, NULL, 'w' },
		{ "sleep-us", required_argument, NULL, 's' },
		{ "jitter-us", required_argument, NULL, 'j' },
		{ "check-ssp", no_argument, NULL, 'c' },
		{ "total", required_argument, NULL, 'T' },
		{ "table-rows", required_argument, NULL, 'R' },
		{ 0 },
	};
	int opt;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int err = toy_opt(t, opt, optarg);

		if (err > 0)
			frr_err("toy: unknown or incomplete option '%s'; see "
				"'flexrr run toy --help'",
				argv[optind - 1]);
		if (err)
			return -EINVAL;
	}
	if (optind < argc) {
		frr_err("toy: unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void toy_defaults(struct toy *t, const struct frr_job_info *job)
{
	t->job = *job;
	t->p = (struct frr_toy_params){ .seed = job->seed,
					.nparts = job->nparts,
					.items = 200,
					.dim = 16,
					.lr = 0.5f };
}

static int toy_check_args(int argc, char **argv)
{
	struct toy t = { 0 };

	toy_defaults(&t, &(struct frr_job_info){ 0 });
	return toy_parse(&t, argc, argv);
}

static int toy_create(const struct frr_job_info *job, int argc, char **argv,
		      void **app)
{
	struct toy *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	toy_defaults(t, job);
	err = toy_parse(t, argc, argv);
	if (err) {
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

	if (t->job.mode == FRR_MODE_ASYNC)
		return;
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
};
