// SPDX-License-Identifier: MIT
/*
 * PageRank as a flexrr app, written only against the installed headers,
 * with ONE copy of its values: the rank table is read and written in the
 * same clock.  docs/writing-an-app.md ("PageRank: one copy of its values")
 * explains the design.
 *
 *   pagerank -n 2 -t 2 --mode flexrr --stragglers persistent:0,3 \
 *            --clocks 200 --target 1e-6 --save ranks.txt pagerank \
 *            --vertices 20000 --avg-degree 8
 *
 * The work items are the vertices (each with its out-edges); partition p
 * is a range of vertex ids.  Push ("delta") PageRank: every vertex u
 * remembers, as its item state, the value p_u whose share it has already
 * pushed along its edges.  Tables (ADD rule, one value per row):
 *
 *   rank      R_v = (1 - d) / N + d * sum over edges u->v of p_u / deg(u)
 *   dangling  D   = sum over vertices without edges of p_u
 *
 * and the value of v is r_v = R_v + d * D / N.  Each clock, vertex u reads
 * r_u, pushes d * (r_u - p_u) / deg(u) to each target (or r_u - p_u to D)
 * and sets p_u = r_u.  The tables only change by these increments, so
 * once all are applied the two sums above hold, and the only fixed point,
 * r_u = p_u for every u, is PageRank.  It is reached when every read shows,
 * of each vertex's pushes, all up to some clock (an old p_u): others' are
 * applied in clock order, and read-my-writes (the default on ADD tables)
 * adds all of the worker's own, so a read never shows this clock's push of
 * a vertex without its last ones.  Without it (--no-own-pending) SSP runs
 * diverge.  FRR_TABLE_SEE_OWN_PENDING (rank rows are written mostly by
 * their own partition: most edges are local) adds the pushes helpers made
 * for the partition last clock.
 *
 * A value is a double kept as two floats, hi + lo (tables hold floats):
 * late in the run a push is far below a float's precision of its target
 * (D sums ~2,000 ranks) and would round away; one float per row loses
 * ~1e-4 of the mass so.  FRR_TABLE_COMPENSATED would keep the sums exact
 * but not the reads: a read is one float, and a residual of 1e-9 over
 * 20,000 vertices needs more than a float's ulp of each (~4e-12 each,
 * ~7e-8 summed).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <flexrr/file.h>
#include <flexrr/flexrr.h>
#include <flexrr/job.h>
#include <flexrr/opt.h>

#include "pr.h"

enum { T_RANK, T_DANGLING };
enum { ST_RESIDUAL, ST_MASS, ST_VERTICES, ST_ACTIVE, ST_COUNT };

struct pr_opts {
	struct pr_graph g;
	int no_own_pending;
	int uniform_cost;
};

#define F(x) offsetof(struct pr_opts, x)
static const struct frr_opt pr_table[] = {
	PR_GRAPH_OPTS(struct pr_opts, g),
	FRR_OPT("no-own-pending", 0, FRR_OPT_FLAG, F(no_own_pending), 0, 0,
		.help = "opt the tables out of read-my-writes across\nclocks "
			"(FRR_TABLE_NO_OWN_PENDING), to compare",
		.group = "run"),
	FRR_OPT("uniform-cost", 0, FRR_OPT_FLAG, F(uniform_cost), 0, 0,
		.help = "give every vertex the same cost (item_cost):\n"
			"reassignment then splits by vertex count, to compare",
		.group = "run"),
	{ 0 },
};
#undef F

static const struct frr_opt_set pr_opts_set = {
	.prog = "pagerank",
	.see = "'pagerank pagerank --help'",
	.opts = pr_table,
	.size = sizeof(struct pr_opts),
	.head = "usage: pagerank [run options] [pagerank] [options]\n"
		"PageRank on a synthetic power-law graph: one clock is one "
		"push of every\nvertex's change, the work items are the "
		"vertices.\n",
	.tail = "\nprinted per clock: residual (sum over the vertices of "
		"|r_u - p_u| as read:\nthe L1 change of the pushed vector, "
		"the objective: --target V stops once it\nis <= V), mass (sum "
		"of p_u, 1 at the fixed point) and active (vertices that\n"
		"pushed).  The run option --save FILE writes the final ranks: "
		"a line\n'flexrr-pagerank 1 N', then one value per vertex.\n",
};

/* load_partition's data: a range of vertices and their out-edges */
struct pr_part {
	uint64_t first, n;
	uint64_t *off; /* n + 1: vertex first + i has dst[off[i] .. off[i+1]) */
	uint32_t *dst;
};

struct pr_app {
	struct pr_opts o;
	int nparts;
	struct pr_part *parts;
};

static void pr_destroy(void *app)
{
	struct pr_app *a = app;

	if (!a)
		return;
	for (int p = 0; a->parts && p < a->nparts; p++) {
		free(a->parts[p].off);
		free(a->parts[p].dst);
	}
	free(a->parts);
	free(a);
}

static int pr_create(const struct frr_job_info *job, int argc, char **argv,
		     void **app)
{
	struct pr_app *a = calloc(1, sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	frr_opt_defaults(&pr_opts_set, &a->o);
	rc = frr_opt_parse(&pr_opts_set, &a->o, argc, argv, NULL);
	if (rc == FRR_OPT_HELP || rc == FRR_OPT_HELP_MD)
		rc = -ECANCELED; /* frr_run_main printed it */
	if (!rc && a->o.g.vertices < (uint64_t)job->nparts) {
		frr_err("pagerank: %llu vertices cannot fill %d data "
			"partitions: give more --vertices",
			(unsigned long long)a->o.g.vertices, job->nparts);
		rc = -EINVAL;
	}
	a->nparts = job->nparts;
	a->parts = calloc((size_t)job->nparts, sizeof(*a->parts));
	if (!rc && !a->parts)
		rc = -ENOMEM;
	if (rc) {
		pr_destroy(a);
		return rc;
	}
	*app = a;
	return 0;
}

/* R_v starts at the teleport term: nothing is pushed yet */
static void pr_init_row(void *app, int table, uint64_t row, float *out,
			uint32_t cols)
{
	const struct pr_graph *g = &((struct pr_app *)app)->o.g;
	double v = (1.0 - g->damping) / (double)g->vertices;

	(void)row, (void)cols;
	out[0] = table == T_RANK ? (float)v : 0.0f;
	out[1] = table == T_RANK ? (float)(v - out[0]) : 0.0f;
}

/* a row's value, hi + lo */
static double pr_value(const float *row)
{
	return (double)row[0] + row[1];
}

/*
 * row += x: hi += x in float, and what that rounded off goes to lo.  lo is
 * never folded back into hi: with P writers of a row each would fold the
 * same lo in, the shard would add it P times and take it away P times,
 * and |lo| would grow (P - 1)-fold per clock.
 */
static void pr_add(struct frr_ctx *c, int table, uint64_t row, double x)
{
	float *w = frr_row_write(c, table, row);
	double sum = (double)w[0] + x;
	float hi = (float)sum;

	w[1] += (float)(sum - hi);
	w[0] = hi;
}

static int pr_tables(void *app, struct frr_table_spec *specs, int max)
{
	struct pr_app *a = app;
	uint32_t no = a->o.no_own_pending ? FRR_TABLE_NO_OWN_PENDING : 0;

	if (max < 2)
		return -EINVAL;
	specs[T_RANK] = (struct frr_table_spec){
		.name = "rank",
		.rows = a->o.g.vertices,
		.cols = 2,
		.rule = FRR_UPDATE_ADD,
		.flags = no ? no : FRR_TABLE_SEE_OWN_PENDING,
		.init_row = pr_init_row,
	};
	specs[T_DANGLING] = (struct frr_table_spec){
		.name = "dangling",
		.rows = 1,
		.cols = 2,
		.rule = FRR_UPDATE_ADD,
		.flags = no,
	};
	return 2;
}

/* Partition p: vertices [N*p/P, N*(p+1)/P) and their edges, made here (a
 * real app would read its part of an edge list). */
static int pr_load_partition(void *app, int part, uint64_t *nitems, void **data)
{
	struct pr_app *a = app;
	struct pr_part *p = &a->parts[part];
	uint64_t N = a->o.g.vertices, P = (uint64_t)a->nparts;
	uint64_t lo = N * (uint64_t)part / P, hi = N * (part + 1ull) / P;

	p->first = lo;
	p->n = hi - lo;
	p->off = malloc((p->n + 1) * sizeof(*p->off));
	if (!p->off)
		return -ENOMEM;
	p->off[0] = 0;
	for (uint64_t i = 0; i < p->n; i++)
		p->off[i + 1] = p->off[i] + pr_degree(&a->o.g, lo + i);
	p->dst = malloc((p->off[p->n] + 1) * sizeof(*p->dst));
	if (!p->dst)
		return -ENOMEM;
	for (uint64_t i = 0; i < p->n; i++)
		pr_edges(&a->o.g, lo + i, (uint32_t)(p->off[i + 1] - p->off[i]),
			 p->dst + p->off[i]);
	*nitems = p->n;
	*data = p;
	return 0;
}

/* What running the partition touches: its vertices' rows (read), their
 * targets' rows (written) and D (both).  Nothing else is held. */
static int pr_part_rows(void *app, int part, struct frr_rowset *rs)
{
	const struct pr_part *p = &((struct pr_app *)app)->parts[part];
	int err = frr_rows_add(rs, T_RANK, p->first, p->n);

	if (!err)
		err = frr_rows_add(rs, T_DANGLING, 0, 1);
	for (uint64_t e = 0; e < p->off[p->n] && !err; e++)
		err = frr_rows_add(rs, T_RANK, p->dst[e], 1);
	return err;
}

/* A vertex costs its out-edges (power-law: a few hubs hold many), plus
 * its own read: reassignment hands a helper a share of the edges, not of
 * the vertices. */
static double pr_item_cost(void *app, int part, uint64_t item)
{
	const struct pr_app *a = app;
	const struct pr_part *p = &a->parts[part];

	if (a->o.uniform_cost)
		return 1.0;
	return 1.0 + (double)(p->off[item + 1] - p->off[item]);
}

static size_t pr_item_size(void *app, int part, uint64_t item)
{
	(void)app, (void)part, (void)item;
	return sizeof(double); /* p_u, the value already pushed */
}

static void pr_item_init(void *app, int part, uint64_t item, void *state)
{
	(void)app, (void)part, (void)item;
	*(double *)state = 0.0;
}

static int pr_process(void *app, struct frr_ctx *c, uint64_t begin,
		      uint64_t end)
{
	const struct pr_graph *g = &((struct pr_app *)app)->o.g;
	const struct pr_part *p = frr_part(c);
	double d = g->damping, tele = d / (double)g->vertices;
	double resid = 0, mass = 0, active = 0;

	for (uint64_t i = begin; i < end; i++) {
		double *pushed = frr_item_state(c, i);
		double r = pr_value(frr_row_read(c, T_RANK, p->first + i)) +
			   tele * pr_value(frr_row_read(c, T_DANGLING, 0));
		double delta = r - *pushed;
		uint64_t deg = p->off[i + 1] - p->off[i];

		mass += r;
		if (delta == 0.0)
			continue;
		*pushed = r;
		resid += fabs(delta);
		active++;
		if (!deg) {
			pr_add(c, T_DANGLING, 0, delta);
			continue;
		}
		delta = d * delta / (double)deg;
		for (uint64_t e = p->off[i]; e < p->off[i + 1]; e++)
			pr_add(c, T_RANK, p->dst[e], delta);
	}
	frr_stat_add(c, ST_RESIDUAL, resid);
	frr_stat_add(c, ST_MASS, mass);
	frr_stat_add(c, ST_VERTICES, (double)(end - begin));
	frr_stat_add(c, ST_ACTIVE, active);
	return 0;
}

static int pr_clock_global(void *app, const double *st, int nstats, int clock,
			   double *objective, char *metrics, size_t len)
{
	struct pr_app *a = app;

	(void)nstats;
	/* every vertex once per clock, whoever ran it */
	if (st[ST_VERTICES] != (double)a->o.g.vertices) {
		frr_err("pagerank: clock %d ran %.0f vertices, not %llu: "
			"items were lost or run twice",
			clock, st[ST_VERTICES],
			(unsigned long long)a->o.g.vertices);
		return -EPROTO;
	}
	*objective = st[ST_RESIDUAL];
	snprintf(metrics, len, "residual=%.3e mass=%.7f active=%.0f",
		 st[ST_RESIDUAL], st[ST_MASS], st[ST_ACTIVE]);
	return 0;
}

struct pr_fill {
	struct pr_app *a;
	struct frr_eval_ctx *ec;
};

/* r_v = R_v + d * D / N for every vertex, after the last clock */
static int pr_fill(FILE *f, void *arg)
{
	struct pr_fill *k = arg;
	const struct pr_graph *g = &k->a->o.g;
	double tele = g->damping / (double)g->vertices;
	float dang[2], r[2];
	int rc = frr_eval_row_read(k->ec, T_DANGLING, 0, dang);

	fprintf(f, "flexrr-pagerank 1 %llu\n", (unsigned long long)g->vertices);
	for (uint64_t v = 0; v < g->vertices && !rc; v++) {
		rc = frr_eval_row_read(k->ec, T_RANK, v, r);
		fprintf(f, "%.12g\n", pr_value(r) + tele * pr_value(dang));
	}
	return rc;
}

static int pr_save(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct pr_fill k = { app, ec };

	return frr_file_write_atomic(path, "pagerank: --save", pr_fill, &k);
}

static const struct frr_app_ops pagerank_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "pagerank",
	.summary = "PageRank on a synthetic power-law graph, one copy of "
		   "its values: an out-of-tree example",
	.create = pr_create,
	.destroy = pr_destroy,
	.tables = pr_tables,
	.load_partition = pr_load_partition,
	.item_state_size = pr_item_size,
	.item_state_init = pr_item_init,
	.process = pr_process,
	.clock_global = pr_clock_global,
	.save = pr_save,
	.nstats = ST_COUNT,
	.maximize = 0,
	.part_rows = pr_part_rows,
	.opts = &pr_opts_set,
	.item_cost = pr_item_cost,
};

int main(int argc, char **argv)
{
	static const struct frr_app_ops *const apps[] = { &pagerank_app, NULL };

	return frr_run_main(argc, argv, apps);
}
