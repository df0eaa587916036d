/* SPDX-License-Identifier: MIT */
/*
 * The toy app (runtime/app_toy.c): distributed linear regression with a known
 * answer, for tests and benches.  Worker w's item i is a point x in [-1, 1]^D
 * drawn from (seed, w, i) with label y = x . w*, w*_d = (d % 5) - 1.5.  One
 * clock is one full-batch gradient step in BSP:
 *     w_d -= lr * mean over all items of (x . w - y) x_d
 * Table 0 "w": D rows x 1 col.  With --check-ssp, table 1 "count" (1 row x W
 * cols) counts the items processed per owner, so every read can prove which
 * clocks it saw: a read in clock c must find every owner's count at least
 * (c - s) * items (a violation adds to the metric ssp_violations).
 */
#ifndef FLEXRR_RUNTIME_APP_TOY_H
#define FLEXRR_RUNTIME_APP_TOY_H

#include <stdint.h>

struct frr_toy_params {
	uint64_t seed;
	int nworkers;
	uint64_t items; /* per worker */
	uint64_t total; /* 0, or items split across workers (--total) */
	int dim;
	float lr;
};

/* The exact sequential BSP answer after `clocks` clocks (same float
 * operations in the same order as the runtime): w[0..dim). */
int frr_toy_reference(const struct frr_toy_params *p, int clocks, float *w);

#endif /* FLEXRR_RUNTIME_APP_TOY_H */
