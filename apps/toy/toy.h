/* SPDX-License-Identifier: MIT */
/*
 * The toy app (apps/toy/toy.c): distributed linear regression with a known
 * answer, for tests and benches.  Partition v's item i is a point x in
 * [-1, 1]^D drawn from (seed, v, i) with label y = x . w*,
 * w*_d = (d % 5) - 1.5.  In one clock each partition runs SGD over its items
 * on its cached copy of w (reads show its own updates), step
 *     w_d -= lr / N * (x . w - y) x_d       (N items in the job)
 * and the table adds the partitions' changes: in BSP a clock is about one
 * full-batch gradient step.  Table 0 "w": D rows x 1 col.  With
 * --check-ssp, table 1 "count" (1 row x nparts cols) counts the items
 * processed per partition, so every read can prove which clocks it saw: a
 * read in clock c must find every partition's count at least (c - s) *
 * items (a violation adds to the metric ssp_violations).
 */
#ifndef FLEXRR_APPS_TOY_H
#define FLEXRR_APPS_TOY_H

#include <stdint.h>

struct frr_toy_params {
	uint64_t seed;
	int nparts;
	uint64_t items; /* per worker */
	uint64_t total; /* 0, or items split across workers (--total) */
	int dim;
	float lr;
};

/* The exact sequential BSP answer after `clocks` clocks (same float
 * operations in the same order as the runtime): w[0..dim). */
int frr_toy_reference(const struct frr_toy_params *p, int clocks, float *w);

#endif /* FLEXRR_APPS_TOY_H */
