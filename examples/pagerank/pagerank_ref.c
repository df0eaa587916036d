// SPDX-License-Identifier: MIT
/*
 * The sequential reference for the PageRank example: the same graph
 * (pr.c), power iteration in double until the L1 change is below 1e-13,
 * and with --compare FILE a check of a run's --save file against it.
 *
 *   pagerank-ref --vertices 20000 --compare ranks.txt --tol 1e-4
 *
 * Checks: the file holds N values, their sum (the mass) is within --tol of
 * 1 and their L1 distance to the reference vector is at most --tol.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flexrr/base.h>
#include <flexrr/opt.h>

#include "pr.h"

struct ref_opts {
	struct pr_graph g;
	const char *compare;
	double tol;
	int iters;
};

#define F(x) offsetof(struct ref_opts, x)
static const struct frr_opt ref_table[] = {
	PR_GRAPH_OPTS(struct ref_opts, g),
	FRR_OPT("iters", 0, FRR_OPT_INT, F(iters), 1, 100000, .def.i = 2000,
		.arg = "I", .help = "at most I power iterations",
		.group = "reference"),
	FRR_OPT("compare", 0, FRR_OPT_STRING, F(compare), 0, 0, .arg = "FILE",
		.help = "check a pagerank --save file against the reference"),
	FRR_OPT("tol", 0, FRR_OPT_DOUBLE, F(tol), 0, 1, .def.d = 1e-4,
		.arg = "F", .help = "largest L1 distance and mass error"),
	{ 0 },
};
#undef F

static const struct frr_opt_set ref_set = {
	.prog = "pagerank-ref",
	.see = "'pagerank-ref --help'",
	.opts = ref_table,
	.size = sizeof(struct ref_opts),
	.head = "usage: pagerank-ref [options]\nPageRank of the example's "
		"graph by sequential power iteration (double).\n",
	.plain = 1,
};

/* The graph whole, in compressed rows: u's targets dst[off[u] .. off[u+1]) */
static int ref_graph(const struct pr_graph *g, uint64_t **off, uint32_t **dst)
{
	uint64_t N = g->vertices;

	*off = malloc((N + 1) * sizeof(**off));
	if (!*off)
		return -ENOMEM;
	(*off)[0] = 0;
	for (uint64_t u = 0; u < N; u++)
		(*off)[u + 1] = (*off)[u] + pr_degree(g, u);
	*dst = malloc(((*off)[N] + 1) * sizeof(**dst));
	if (!*dst)
		return -ENOMEM;
	for (uint64_t u = 0; u < N; u++)
		pr_edges(g, u, (uint32_t)((*off)[u + 1] - (*off)[u]),
			 *dst + (*off)[u]);
	return 0;
}

/* x = (1 - d) / N + d * (P^T x + dangling mass / N), from x = 1 / N */
static int ref_pagerank(const struct ref_opts *o, const uint64_t *off,
			const uint32_t *dst, double *x, double *y)
{
	uint64_t N = o->g.vertices;
	double d = o->g.damping, change = 1;
	int it;

	for (uint64_t v = 0; v < N; v++)
		x[v] = 1.0 / (double)N;
	for (it = 0; it < o->iters && change > 1e-13; it++) {
		double dang = 0;

		for (uint64_t v = 0; v < N; v++)
			y[v] = 0;
		for (uint64_t u = 0; u < N; u++) {
			uint64_t deg = off[u + 1] - off[u];

			if (!deg)
				dang += x[u];
			for (uint64_t e = off[u]; e < off[u + 1]; e++)
				y[dst[e]] += x[u] / (double)deg;
		}
		change = 0;
		for (uint64_t v = 0; v < N; v++) {
			double nv = (1 - d) / (double)N + d * (y[v] + dang / N);

			change += fabs(nv - x[v]);
			x[v] = nv;
		}
	}
	return it;
}

static int ref_compare(const struct ref_opts *o, const double *x)
{
	FILE *f = fopen(o->compare, "r");
	unsigned long long n;
	double l1 = 0, mass = 0, v, worst = 0;
	uint64_t at = 0;

	if (!f) {
		fprintf(stderr, "pagerank-ref: %s: %s\n", o->compare,
			strerror(errno));
		return 1;
	}
	if (fscanf(f, "flexrr-pagerank 1 %llu", &n) != 1 ||
	    n != o->g.vertices) {
		fprintf(stderr,
			"pagerank-ref: %s is not a --save file of %llu "
			"vertices\n",
			o->compare, (unsigned long long)o->g.vertices);
		fclose(f);
		return 1;
	}
	for (uint64_t u = 0; u < n && fscanf(f, "%lf", &v) == 1; u++, at++) {
		mass += v;
		l1 += fabs(v - x[u]);
		if (fabs(v - x[u]) > worst)
			worst = fabs(v - x[u]);
	}
	fclose(f);
	if (at != n) {
		fprintf(stderr, "pagerank-ref: %s: %llu values, not %llu\n",
			o->compare, (unsigned long long)at, n);
		return 1;
	}
	printf("pagerank-ref: %s: l1=%.3e max=%.3e mass=%.9f (tol %g)\n",
	       o->compare, l1, worst, mass, o->tol);
	if (l1 > o->tol || fabs(mass - 1) > o->tol) {
		fprintf(stderr,
			"pagerank-ref: MISMATCH: L1 distance %.3e or "
			"mass error %.3e above %g\n",
			l1, fabs(mass - 1), o->tol);
		return 1;
	}
	printf("pagerank-ref: match\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct ref_opts o;
	uint64_t *off = NULL, dang = 0, top = 0;
	uint32_t *dst = NULL;
	double *x = NULL, *y = NULL;
	int rc, it;

	frr_opt_defaults(&ref_set, &o);
	rc = frr_opt_parse(&ref_set, &o, argc, argv, NULL);
	if (rc)
		return frr_opt_print_help(&ref_set, rc, stdout) ? 0 : 2;
	x = malloc(o.g.vertices * sizeof(*x));
	y = malloc(o.g.vertices * sizeof(*y));
	if (!x || !y || ref_graph(&o.g, &off, &dst)) {
		fprintf(stderr, "pagerank-ref: out of memory\n");
		return 1;
	}
	it = ref_pagerank(&o, off, dst, x, y);
	for (uint64_t u = 0; u < o.g.vertices; u++) {
		dang += off[u + 1] == off[u];
		top = x[u] > x[top] ? u : top;
	}
	printf("pagerank-ref: %llu vertices, %llu edges, %llu dangling; %d "
	       "iterations; top vertex %llu (%.6g)\n",
	       (unsigned long long)o.g.vertices,
	       (unsigned long long)off[o.g.vertices], (unsigned long long)dang,
	       it, (unsigned long long)top, x[top]);
	rc = o.compare ? ref_compare(&o, x) : 0;
	free(x), free(y), free(off), free(dst);
	return rc;
}
