/* SPDX-License-Identifier: MIT */
/*
 * What the k-means app (kmeans.c) and the sequential reference
 * (kmeans_ref.c) must agree on: the data set, the initial centroids, the
 * nearest-centroid rule and how a cluster's sums give its centroid.  Nothing
 * here knows about flexrr's tables or clocks; it uses only flexrr/base.h
 * (the RNG and the log).
 *
 * The data set: `points` points in `dim` dimensions drawn around k blob
 * centres (uniform in [-10, 10]^dim) with a normal spread.  Point i depends
 * only on (data_seed, i), so any process can make any part of it.
 */
#ifndef KM_H
#define KM_H

#include <stdint.h>
#include <stdio.h>

#define KM_MAX_K 256
#define KM_MAX_DIM 256
#define KM_NONE UINT32_MAX /* no cluster yet */

struct km_shape {
	uint64_t points;
	uint32_t dim, k;
	double spread; /* standard deviation of a blob, per coordinate */
	uint64_t data_seed;
};

void km_shape_default(struct km_shape *s);
void km_shape_usage(FILE *out);
/* If argv[*i] is a data option, parse it (and its value, advancing *i):
 * 1 = taken, 0 = not a data option, -EINVAL = bad value (logged). */
int km_shape_option(struct km_shape *s, int argc, char **argv, int *i);

/* Blob centres (k x dim) for km_point; free() them. */
int km_centers(const struct km_shape *s, double **centers);
/* Point i into x[0..dim). */
void km_point(const struct km_shape *s, const double *centers, uint64_t i,
	      float *x);
/* Initial centroids (k x dim): k-means++ seeding over the first
 * min(points, 4096) points, deterministic in data_seed. */
int km_init(const struct km_shape *s, const double *centers, float *init);
/* The centroid nearest to x (lowest index on a tie) and the squared
 * distance to it. */
uint32_t km_nearest(const struct km_shape *s, const float *cent, const float *x,
		    double *d2);
/* Centroid of a cluster from its sums (dim coordinate sums, then the
 * count); a cluster with no point keeps its initial centroid. */
void km_centroid(const struct km_shape *s, const float *sums, const float *init,
		 float *out);

#endif
