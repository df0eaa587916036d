// SPDX-License-Identifier: MIT
/*
 * k-means (Lloyd's algorithm) as a flexrr app, written only against the
 * installed headers: a program of its own that registers the app and runs
 * a job.  docs/writing-an-app.md walks through this file.
 *
 *   kmeans -n 2 -t 2 --mode flexrr --stragglers persistent:0,3 --clocks 20 \
 *          --save centroids.txt kmeans --points 100000 --k 8
 *
 * One clock is one Lloyd iteration: every point moves to its nearest
 * centroid.  The work items are the points.
 *
 * Table "sums": 2k rows of dim + 1 floats, for each parity of the clock and
 * each cluster the sum of its points' coordinates and their count.  A point
 * remembers, as its item state, the cluster it is counted in for each
 * parity; at clock c it reads the centroids from the parity of c - 1 (the
 * previous iteration's clusters; clock 0 starts from k-means++ seeds) and
 * moves its own contribution in the parity of c (minus x from the cluster
 * it left, plus x on the one it joined).  Reads never see this clock's
 * moves, as Lloyd's algorithm wants; the rows only ever change by
 * increments, so the runtime can run any point on any thread and the counts
 * stay exact: after clock c the parity of c holds every point once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flexrr/flexrr.h>
#include <flexrr/job.h>

#include "km.h"

enum { T_SUMS };
enum { ST_SSE, ST_POINTS, ST_MOVED, ST_COUNT };

/* load_partition's data: a partition's points */
struct km_part {
	uint64_t first; /* index of its first point */
	float *x;	/* its points, dim floats each */
};

/* Item state: the cluster a point is counted in, per clock parity. */
struct km_item {
	uint32_t in[2];
};

/* Per worker thread (frr_scratch): the centroids of the clock being run. */
struct km_thread {
	float *cent; /* k x dim */
};

struct km_app {
	struct km_shape s;
	double *centers; /* blob centres, for km_point */
	float *init;	 /* k x dim initial centroids */
	int nparts;
	struct km_part *parts;
};

static void km_usage(FILE *out)
{
	fprintf(out, "usage: kmeans [run options] [kmeans] [options]\n"
		     "k-means by Lloyd's algorithm: one clock is one "
		     "iteration, the work items are\nthe points.\n\n");
	km_shape_usage(out);
	fprintf(out,
		"\nprinted per clock: sse_per_point (mean squared distance "
		"of a point to its\nnearest centroid, the objective: "
		"--target V stops once it is <= V) and moved\n(points that "
		"changed cluster).  The run option --save FILE writes the "
		"final\ncentroids: a line 'flexrr-kmeans 1 K DIM POINTS "
		"CLOCK', then per cluster its\npoint count and centroid.\n");
}

static void km_destroy(void *app)
{
	struct km_app *a = app;

	if (!a)
		return;
	for (int p = 0; a->parts && p < a->nparts; p++)
		free(a->parts[p].x);
	free(a->parts);
	free(a->init);
	free(a->centers);
	free(a);
}

static int km_create(const struct frr_job_info *job, int argc, char **argv,
		     void **app)
{
	struct km_app *a = calloc(1, sizeof(*a));
	int rc = 0;

	if (!a)
		return -ENOMEM;
	km_shape_default(&a->s);
	for (int i = 1; i < argc && !rc; i++) {
		rc = km_shape_option(&a->s, argc, argv, &i);
		if (rc == 0) {
			frr_err("kmeans: unknown option '%s' (see 'kmeans "
				"--help')",
				argv[i]);
			rc = -EINVAL;
		}
		rc = rc < 0 ? rc : 0;
	}
	if (!rc && a->s.points < (uint64_t)job->nparts) {
		frr_err("kmeans: %llu points cannot fill %d data partitions: "
			"give more --points or run fewer processes/threads",
			(unsigned long long)a->s.points, job->nparts);
		rc = -EINVAL;
	}
	a->nparts = job->nparts;
	a->parts = calloc((size_t)job->nparts, sizeof(*a->parts));
	a->init = malloc((size_t)a->s.k * a->s.dim * sizeof(*a->init));
	if (!rc && (!a->parts || !a->init))
		rc = -ENOMEM;
	if (!rc)
		rc = km_centers(&a->s, &a->centers);
	if (!rc)
		rc = km_init(&a->s, a->centers, a->init);
	if (rc) {
		km_destroy(a);
		return rc;
	}
	*app = a;
	return 0;
}

static int km_tables(void *app, struct frr_table_spec *specs, int max)
{
	struct km_app *a = app;

	if (max < 1)
		return -EINVAL;
	specs[T_SUMS] = (struct frr_table_spec){
		.name = "sums",
		.rows = 2 * (uint64_t)a->s.k,
		.cols = a->s.dim + 1,
		.rule = FRR_UPDATE_ADD, /* starts at zero: no init_row */
	};
	return 1;
}

/* Partition p: points [n*p/N, n*(p+1)/N), made here (a real app would
 * read its part of a file). */
static int km_load_partition(void *app, int part, uint64_t *nitems, void **data)
{
	struct km_app *a = app;
	struct km_part *p = &a->parts[part];
	uint64_t N = (uint64_t)a->nparts, n = a->s.points;
	uint64_t lo = n * (uint64_t)part / N, hi = n * (part + 1ull) / N;

	p->first = lo;
	p->x = malloc((hi - lo) * a->s.dim * sizeof(*p->x));
	if (!p->x)
		return -ENOMEM;
	for (uint64_t i = lo; i < hi; i++)
		km_point(&a->s, a->centers, i, p->x + (i - lo) * a->s.dim);
	*nitems = hi - lo;
	*data = p;
	return 0;
}

static size_t km_item_size(void *app, int part, uint64_t item)
{
	(void)app, (void)part, (void)item;
	return sizeof(struct km_item);
}

static void km_item_init(void *app, int part, uint64_t item, void *state)
{
	(void)app, (void)part, (void)item;
	*(struct km_item *)state = (struct km_item){ { KM_NONE, KM_NONE } };
}

static int km_thread_init(void *app, void *scratch)
{
	struct km_app *a = app;
	struct km_thread *t = scratch;

	t->cent = malloc((size_t)a->s.k * a->s.dim * sizeof(*t->cent));
	return t->cent ? 0 : -ENOMEM;
}

static void km_thread_fini(void *app, void *scratch)
{
	(void)app;
	free(((struct km_thread *)scratch)->cent);
}

/* The centroids clock c assigns against: the clusters of clock c - 1. */
static void km_centroids(const struct km_app *a, struct frr_ctx *c, float *cent)
{
	int clock = frr_clock(c);
	uint32_t k = a->s.k, dim = a->s.dim;

	for (uint32_t j = 0; j < k; j++) {
		const float *init = a->init + (size_t)j * dim;

		if (clock == 0)
			memcpy(cent + (size_t)j * dim, init,
			       dim * sizeof(*cent));
		else
			km_centroid(
			    &a->s,
			    frr_row_read(c, T_SUMS, ((clock - 1) & 1) * k + j),
			    init, cent + (size_t)j * dim);
	}
}

/* Add sign * (x, 1) to cluster j's sums in parity `par`. */
static void km_add(const struct km_app *a, struct frr_ctx *c, int par,
		   uint32_t j, const float *x, float sign)
{
	float *row = frr_row_write(c, T_SUMS, (uint64_t)par * a->s.k + j);

	for (uint32_t d = 0; d < a->s.dim; d++)
		row[d] += sign * x[d];
	row[a->s.dim] += sign;
}

static int km_process(void *app, struct frr_ctx *c, uint64_t begin,
		      uint64_t end)
{
	struct km_app *a = app;
	const struct km_part *p = frr_part(c);
	struct km_thread *t = frr_scratch(c);
	int now = frr_clock(c) & 1;
	uint64_t moved = 0;
	double sse = 0;

	km_centroids(a, c, t->cent);
	for (uint64_t i = begin; i < end; i++) {
		const float *x = p->x + i * a->s.dim;
		struct km_item *it = frr_item_state(c, i);
		double d2;
		uint32_t j = km_nearest(&a->s, t->cent, x, &d2);

		sse += d2;
		moved += j != it->in[!now]; /* its cluster of clock c - 1 */
		if (j == it->in[now])
			continue;
		if (it->in[now] != KM_NONE)
			km_add(a, c, now, it->in[now], x, -1.0f);
		km_add(a, c, now, j, x, 1.0f);
		it->in[now] = j;
	}
	frr_stat_add(c, ST_SSE, sse);
	frr_stat_add(c, ST_POINTS, (double)(end - begin));
	frr_stat_add(c, ST_MOVED, (double)moved);
	return 0;
}

static int km_clock_global(void *app, const double *st, int nstats, int clock,
			   double *objective, char *metrics, size_t len)
{
	struct km_app *a = app;

	(void)nstats;
	/* every point once per clock, whoever ran it */
	if (st[ST_POINTS] != (double)a->s.points) {
		frr_err("kmeans: clock %d ran %.0f points, not %llu: items "
			"were lost or run twice",
			clock, st[ST_POINTS], (unsigned long long)a->s.points);
		return -EPROTO;
	}
	*objective = st[ST_SSE] / st[ST_POINTS];
	snprintf(metrics, len, "moved=%.0f sse_per_point=%.6f", st[ST_MOVED],
		 *objective);
	return 0;
}

/* The clusters of the last clock: count and centroid per line. */
static int km_write(struct km_app *a, struct frr_eval_ctx *ec, int clock,
		    FILE *f)
{
	uint32_t k = a->s.k, dim = a->s.dim;
	float sums[KM_MAX_DIM + 1], cent[KM_MAX_DIM];
	int rc;

	fprintf(f, "flexrr-kmeans 1 %u %u %llu %d\n", k, dim,
		(unsigned long long)a->s.points, clock);
	for (uint32_t j = 0; j < k; j++) {
		rc = frr_eval_row_read(ec, T_SUMS,
				       (uint64_t)(clock & 1) * k + j, sums);
		if (rc)
			return rc;
		km_centroid(&a->s, sums, a->init + (size_t)j * dim, cent);
		fprintf(f, "%.0f", sums[dim]);
		for (uint32_t d = 0; d < dim; d++)
			fprintf(f, " %.9g", cent[d]);
		fprintf(f, "\n");
	}
	return 0;
}

struct km_fill {
	struct km_app *a;
	struct frr_eval_ctx *ec;
	int clock;
};

static int km_fill(FILE *f, void *arg)
{
	struct km_fill *k = arg;

	return km_write(k->a, k->ec, k->clock, f);
}

/* frr_file_write_atomic: a failed save keeps the old file, and nothing
 * another user plants beside it redirects the write */
static int km_save(void *app, struct frr_eval_ctx *ec, const char *path,
		   int clock)
{
	struct km_fill k = { app, ec, clock };

	return frr_file_write_atomic(path, "kmeans: --save", km_fill, &k);
}

static const struct frr_app_ops kmeans_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "kmeans",
	.summary = "k-means (Lloyd) on synthetic blobs: an out-of-tree "
		   "example",
	.usage = km_usage,
	.create = km_create,
	.destroy = km_destroy,
	.tables = km_tables,
	.load_partition = km_load_partition,
	.item_state_size = km_item_size,
	.item_state_init = km_item_init,
	.scratch_size = sizeof(struct km_thread),
	.thread_init = km_thread_init,
	.thread_fini = km_thread_fini,
	.process = km_process,
	.clock_global = km_clock_global,
	.save_at = km_save, /* the last clock's parity holds the clusters */
	.nstats = ST_COUNT,
	.maximize = 0,
};

int main(int argc, char **argv)
{
	static const struct frr_app_ops *const apps[] = { &kmeans_app, NULL };

	return frr_run_main(argc, argv, apps);
}
