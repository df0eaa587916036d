// SPDX-License-Identifier: MIT
/*
 * The sequential reference of the k-means example: Lloyd's algorithm on the
 * same data from the same initial centroids, in one thread with sums in
 * double; with --compare FILE it checks what a flexrr run saved
 * (kmeans --save FILE) against its own answer.  It uses flexrr only for
 * the RNG and the log that define the data (km.c).
 *
 *   kmeans-ref --points 100000 --k 8 --iters 20 --compare centroids.txt
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flexrr/base.h>

#include "km.h"

struct ref_opts {
	struct km_shape s;
	uint64_t iters;
	const char *compare;
	double tol, ctol;
};

static void ref_usage(FILE *out)
{
	fprintf(out,
		"usage: kmeans-ref [data options] [--iters N] [--compare FILE "
		"[--tol F] [--ctol D]]\n"
		"Sequential Lloyd's algorithm from the same seeds as the "
		"kmeans app.\n\n");
	km_shape_usage(out);
	fprintf(out,
		"\n  --iters N       iterations at most (default 20; stops "
		"once no point moves)\n"
		"  --compare FILE  check a run's saved centroids (kmeans "
		"--save FILE): their\n"
		"                  counts add up to the points, their mean "
		"squared distance\n"
		"                  is within --tol (relative, default 1e-4) of "
		"ours and each\n"
		"                  of our centroids has its own saved one "
		"within --ctol\n"
		"                  (default 1e-3); exit 1 when not\n");
}

/* One of our options with its value v; -EINVAL (logged) if bad. */
static int ref_option(struct ref_opts *o, const char *a, const char *v)
{
	char *end;
	double *d = !strcmp(a, "--tol") ? &o->tol : &o->ctol;

	if (!strcmp(a, "--compare")) {
		o->compare = v;
		return 0;
	}
	if (!strcmp(a, "--iters")) {
		o->iters = strtoull(v, &end, 10);
		if (end != v && !*end && o->iters > 0 && v[0] != '-')
			return 0;
		frr_err("kmeans-ref: --iters wants a positive integer, got "
			"'%s'",
			v);
		return -EINVAL;
	}
	*d = strtod(v, &end);
	if (end != v && !*end && *d >= 0)
		return 0;
	frr_err("kmeans-ref: %s wants a number >= 0, got '%s'", a, v);
	return -EINVAL;
}

/* 0 ok, 1 help printed, -EINVAL bad (logged) */
static int ref_parse(struct ref_opts *o, int argc, char **argv)
{
	km_shape_default(&o->s);
	o->iters = 20;
	o->tol = 1e-4;
	o->ctol = 1e-3;
	for (int i = 1; i < argc; i++) {
		int rc = km_shape_option(&o->s, argc, argv, &i);
		const char *a = argv[i];

		if (rc)
			rc = rc < 0 ? rc : 0;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			rc = 1;
		else if (strcmp(a, "--iters") && strcmp(a, "--compare") &&
			 strcmp(a, "--tol") && strcmp(a, "--ctol"))
			frr_err("kmeans-ref: unknown option '%s' (see --help)",
				a),
			    rc = -EINVAL;
		else if (i + 1 >= argc)
			frr_err("kmeans-ref: %s needs a value", a),
			    rc = -EINVAL;
		else
			rc = ref_option(o, a, argv[++i]);
		if (rc == 1)
			ref_usage(stdout);
		if (rc)
			return rc;
	}
	return 0;
}

/* Mean squared distance of every point to its nearest centroid. */
static double ref_sse(const struct km_shape *s, const float *x,
		      const float *cent)
{
	double sse = 0, d2;

	for (uint64_t i = 0; i < s->points; i++) {
		km_nearest(s, cent, x + i * s->dim, &d2);
		sse += d2;
	}
	return sse / (double)s->points;
}

/* Lloyd until no point moves or o->iters iterations; leaves the final
 * centroids (the means of the last assignment) in cent, counts in n. */
static int ref_lloyd(const struct ref_opts *o, const float *x,
		     const float *init, float *cent, double *n)
{
	const struct km_shape *s = &o->s;
	uint32_t k = s->k, dim = s->dim;
	uint32_t *in = malloc(s->points * sizeof(*in));
	double *sum = malloc((size_t)k * dim * sizeof(*sum));

	if (!in || !sum) {
		free(in);
		free(sum);
		return -ENOMEM;
	}
	memcpy(cent, init, (size_t)k * dim * sizeof(*cent));
	memset(in, 0xff, s->points * sizeof(*in)); /* KM_NONE */
	for (uint64_t t = 0; t < o->iters; t++) {
		uint64_t moved = 0;
		double sse = 0, d2;

		memset(sum, 0, (size_t)k * dim * sizeof(*sum));
		memset(n, 0, k * sizeof(*n));
		for (uint64_t i = 0; i < s->points; i++) {
			const float *p = x + i * dim;
			uint32_t j = km_nearest(s, cent, p, &d2);

			sse += d2;
			moved += j != in[i];
			in[i] = j;
			n[j] += 1;
			for (uint32_t d = 0; d < dim; d++)
				sum[(size_t)j * dim + d] += p[d];
		}
		for (size_t j = 0; j < k; j++)
			for (uint32_t d = 0; d < dim; d++)
				cent[j * dim + d] =
				    n[j] > 0 ? (float)(sum[j * dim + d] / n[j])
					     : init[j * dim + d];
		printf("iter %llu moved=%llu sse_per_point=%.6f\n",
		       (unsigned long long)t, (unsigned long long)moved,
		       sse / (double)s->points);
		if (!moved)
			break;
	}
	free(in);
	free(sum);
	return 0;
}

/* Read a saved result into cent/n; -EINVAL (logged) if it is not one of
 * this data's shape. */
static int ref_read(const struct ref_opts *o, float *cent, double *n)
{
	const struct km_shape *s = &o->s;
	unsigned k, dim;
	unsigned long long pts;
	int clock, rc = 0;
	FILE *f = fopen(o->compare, "r");

	if (!f) {
		frr_err("kmeans-ref: cannot read '%s': %s", o->compare,
			strerror(errno));
		return -ENOENT;
	}
	if (fscanf(f, "flexrr-kmeans 1 %u %u %llu %d", &k, &dim, &pts,
		   &clock) != 4 ||
	    k != s->k || dim != s->dim || pts != s->points) {
		frr_err("kmeans-ref: '%s' is not a saved result of this data "
			"(want 'flexrr-kmeans 1 %u %u %llu CLOCK' first): "
			"pass the same data options as the run",
			o->compare, s->k, s->dim,
			(unsigned long long)s->points);
		rc = -EINVAL;
	}
	for (uint32_t j = 0; j < s->k && !rc; j++) {
		rc = fscanf(f, "%lf", &n[j]) == 1 ? 0 : -EINVAL;
		for (uint32_t d = 0; d < dim && !rc; d++)
			rc = fscanf(f, "%f", &cent[(size_t)j * dim + d]) == 1
				 ? 0
				 : -EINVAL;
		if (rc)
			frr_err("kmeans-ref: '%s': cluster %u: expected a "
				"count and %u coordinates",
				o->compare, j, dim);
	}
	fclose(f);
	if (!rc)
		printf("kmeans-ref: %s: clock %d\n", o->compare, clock);
	return rc;
}

/* Each of our centroids must have its own saved centroid within ctol:
 * returns the largest such distance, or INFINITY when one has none. */
static double ref_match(const struct km_shape *s, const float *ours,
			const float *theirs)
{
	char used[KM_MAX_K] = { 0 };
	double worst = 0;

	for (uint32_t j = 0; j < s->k; j++) {
		double best = INFINITY;
		uint32_t bi = 0;

		for (uint32_t i = 0; i < s->k; i++) {
			double d2 = 0;

			for (uint32_t d = 0; d < s->dim && !used[i]; d++) {
				double e = (double)ours[j * s->dim + d] -
					   theirs[i * s->dim + d];

				d2 += e * e;
			}
			if (!used[i] && d2 < best) {
				best = d2;
				bi = i;
			}
		}
		used[bi] = 1;
		if (sqrt(best) > worst)
			worst = sqrt(best);
	}
	return worst;
}

static int ref_compare(const struct ref_opts *o, const float *x,
		       const float *cent, double sse)
{
	const struct km_shape *s = &o->s;
	float *got = malloc((size_t)s->k * s->dim * sizeof(*got));
	double *n = malloc(s->k * sizeof(*n)), total = 0, gsse, rel, dist;
	int ok;

	if (!got || !n || ref_read(o, got, n)) {
		free(got);
		free(n);
		return 2;
	}
	for (uint32_t j = 0; j < s->k; j++)
		total += n[j];
	gsse = ref_sse(s, x, got);
	rel = fabs(gsse - sse) / sse;
	dist = ref_match(s, cent, got);
	ok = total == (double)s->points && rel <= o->tol && dist <= o->ctol;
	printf("kmeans-ref: %s: points %.0f of %llu, sse_per_point %.6f vs "
	       "%.6f (relative difference %.2e, tolerance %.2e), centroids "
	       "within %.2e (tolerance %.2e)\n",
	       ok ? "match" : "MISMATCH", total, (unsigned long long)s->points,
	       gsse, sse, rel, o->tol, dist, o->ctol);
	if (total != (double)s->points)
		printf("kmeans-ref: the saved counts add up to %.0f, not "
		       "%llu: points were lost or counted twice\n",
		       total, (unsigned long long)s->points);
	free(got);
	free(n);
	return ok ? 0 : 1;
}

/* The whole data set and the initial centroids, as the app makes them. */
static int ref_data(const struct km_shape *s, float *x, float *init)
{
	double *centers;
	int rc = km_centers(s, &centers);

	if (rc)
		return rc;
	for (uint64_t i = 0; i < s->points; i++)
		km_point(s, centers, i, x + i * s->dim);
	rc = km_init(s, centers, init);
	free(centers);
	return rc;
}

int main(int argc, char **argv)
{
	struct ref_opts o = { 0 };
	float *x = NULL, *init = NULL, *cent = NULL;
	double *n = NULL, sse;
	int rc = ref_parse(&o, argc, argv);

	if (rc)
		return rc > 0 ? 0 : 2;
	x = malloc(o.s.points * o.s.dim * sizeof(*x));
	init = malloc((size_t)o.s.k * o.s.dim * sizeof(*init));
	cent = malloc((size_t)o.s.k * o.s.dim * sizeof(*cent));
	n = malloc(o.s.k * sizeof(*n));
	if (!x || !init || !cent || !n || ref_data(&o.s, x, init) ||
	    ref_lloyd(&o, x, init, cent, n)) {
		frr_err("kmeans-ref: out of memory for %llu points",
			(unsigned long long)o.s.points);
		rc = 2;
		goto out;
	}
	sse = ref_sse(&o.s, x, cent);
	printf("kmeans-ref: sse_per_point=%.6f\n", sse);
	if (o.compare)
		rc = ref_compare(&o, x, cent, sse);
out:
	free(x);
	free(init);
	free(cent);
	free(n);
	return rc;
}
