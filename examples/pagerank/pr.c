// SPDX-License-Identifier: MIT
/* The PageRank graph shared by the app and the reference (pr.h). */
#include <math.h>

#include <flexrr/base.h>

#include "pr.h"

#define PR_MAX_DEGREE 100000u

/* Two independent streams per vertex: its degree and its targets. */
static void pr_rng(const struct pr_graph *g, uint64_t u, uint64_t stream,
		   struct frr_rng *r)
{
	frr_rng_seed(r, frr_mix64(g->seed * 0x9e3779b97f4a7c15ull ^
				  frr_mix64(2 * u + stream)));
}

uint32_t pr_degree(const struct pr_graph *g, uint64_t u)
{
	struct frr_rng r;
	double x, cap = fmin((double)g->vertices, PR_MAX_DEGREE);

	pr_rng(g, u, 0, &r);
	/* Lomax(2, avg): avg * (U^(-1/2) - 1), U in (0, 1] */
	x = g->avg_degree * (1.0 / sqrt(1.0 - frr_rng_uniform(&r)) - 1.0);
	x = floor(x + 0.5);
	return (uint32_t)(x < cap ? x : cap);
}

void pr_edges(const struct pr_graph *g, uint64_t u, uint32_t deg, uint32_t *out)
{
	struct frr_rng r;

	pr_rng(g, u, 1, &r);
	for (uint32_t j = 0; j < deg; j++) {
		double v = frr_rng_uniform(&r), w = frr_rng_uniform(&r);
		uint64_t N = g->vertices, t;

		if (v < g->local) { /* u +- k, P(k > x) = 1 / x */
			t = (uint64_t)fmin(1.0 / (1.0 - w), (double)(N - 1));
			t = v < g->local / 2 ? u + t : u + N - t;
			t %= N;
		} else {
			t = (uint64_t)((double)N * w * w);
		}
		out[j] = (uint32_t)(t < N ? t : N - 1);
	}
}
