// SPDX-License-Identifier: MIT
/* The k-means problem shared by the app and the reference (km.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <flexrr/base.h>

#include "km.h"

#define KM_SAMPLE 4096 /* points k-means++ seeds from */
#define KM_GAP 5.0     /* blob centres at least this many spreads apart */

void km_shape_default(struct km_shape *s)
{
	*s = (struct km_shape){
		.points = 100000,
		.dim = 4,
		.k = 8,
		.spread = 2.0,
		.data_seed = 1,
	};
}

void km_shape_usage(FILE *out)
{
	fprintf(out,
		"data (synthetic: k blobs with centres uniform in "
		"[-10, 10]^dim):\n"
		"  --points N      points (default 100000)\n"
		"  --dim D         dimensions (default 4, max %d)\n"
		"  --k K           blobs and clusters (default 8, max %d)\n"
		"  --spread F      standard deviation of a blob (default 2)\n"
		"  --data-seed S   the data set and the initial centroids "
		"(default 1)\n",
		KM_MAX_DIM, KM_MAX_K);
}

static int km_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi,
		  uint64_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || v[0] == '-' || x < lo || x > hi) {
		frr_err("kmeans: %s wants an integer in [%llu, %llu], got "
			"'%s'",
			opt, (unsigned long long)lo, (unsigned long long)hi, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

int km_shape_option(struct km_shape *s, int argc, char **argv, int *i)
{
	const char *opt = argv[*i], *v;
	uint64_t u = 0;
	char *end;
	int rc = 0;

	if (strcmp(opt, "--points") && strcmp(opt, "--dim") &&
	    strcmp(opt, "--k") && strcmp(opt, "--spread") &&
	    strcmp(opt, "--data-seed"))
		return 0;
	if (*i + 1 >= argc) {
		frr_err("kmeans: %s needs a value", opt);
		return -EINVAL;
	}
	v = argv[++*i];
	if (!strcmp(opt, "--points")) {
		rc = km_u64(opt, v, 1, 1ull << 32, &s->points);
	} else if (!strcmp(opt, "--dim")) {
		rc = km_u64(opt, v, 1, KM_MAX_DIM, &u);
		s->dim = (uint32_t)u;
	} else if (!strcmp(opt, "--k")) {
		rc = km_u64(opt, v, 1, KM_MAX_K, &u);
		s->k = (uint32_t)u;
	} else if (!strcmp(opt, "--data-seed")) {
		rc = km_u64(opt, v, 0, UINT64_MAX, &s->data_seed);
	} else {
		s->spread = strtod(v, &end);
		if (end == v || *end || !(s->spread > 0 && s->spread < 1e6)) {
			frr_err("kmeans: --spread wants a number in (0, 1e6), "
				"got '%s'",
				v);
			rc = -EINVAL;
		}
	}
	return rc ? rc : 1;
}

/* Squared distance from c[0..dim) to the nearest of the n centres before
 * it (c - n * dim .. c). */
static double km_gap2(const double *c, uint32_t n, uint32_t dim)
{
	double best = INFINITY;

	for (uint32_t j = 1; j <= n; j++) {
		double d2 = 0;

		for (uint32_t d = 0; d < dim; d++) {
			double e = c[d] - c[d - (size_t)j * dim];

			d2 += e * e;
		}
		best = d2 < best ? d2 : best;
	}
	return best;
}

int km_centers(const struct km_shape *s, double **centers)
{
	double *c = malloc((size_t)s->k * s->dim * sizeof(*c));
	double gap2 = KM_GAP * s->spread * KM_GAP * s->spread;
	struct frr_rng r;

	if (!c)
		return -ENOMEM;
	frr_rng_seed(&r, s->data_seed);
	/* uniform, redrawn (a bounded number of times) while closer than
	 * KM_GAP spreads to another blob: distinct blobs, so that Lloyd's
	 * algorithm has one clear answer to check */
	for (uint32_t j = 0; j < s->k; j++) {
		double *cj = c + (size_t)j * s->dim;

		for (int tries = 0; tries < 1000; tries++) {
			for (uint32_t d = 0; d < s->dim; d++)
				cj[d] = 20.0 * frr_rng_uniform(&r) - 10.0;
			if (km_gap2(cj, j, s->dim) >= gap2)
				break;
		}
	}
	*centers = c;
	return 0;
}

void km_point(const struct km_shape *s, const double *centers, uint64_t i,
	      float *x)
{
	struct frr_rng r;
	const double *c;

	/* a stream per point: the same point whichever process makes it */
	frr_rng_seed(&r, frr_mix64(s->data_seed ^ frr_mix64(i)));
	c = centers + frr_rng_below(&r, s->k) * s->dim;
	for (uint32_t j = 0; j < s->dim; j++)
		x[j] = (float)(c[j] + s->spread * frr_rng_normal(&r));
}

static double km_dist2(const float *a, const float *b, uint32_t dim)
{
	double d2 = 0;

	for (uint32_t j = 0; j < dim; j++) {
		double d = (double)a[j] - b[j];

		d2 += d * d;
	}
	return d2;
}

uint32_t km_nearest(const struct km_shape *s, const float *cent, const float *x,
		    double *d2)
{
	uint32_t best = 0;
	double bd = DBL_MAX;

	for (uint32_t j = 0; j < s->k; j++) {
		double d = km_dist2(cent + (size_t)j * s->dim, x, s->dim);

		if (d < bd) {
			bd = d;
			best = j;
		}
	}
	*d2 = bd;
	return best;
}

/* A sample point drawn with probability proportional to d2[i]. */
static uint64_t km_draw(struct frr_rng *r, const double *d2, uint64_t m,
			double tot)
{
	double u = frr_rng_uniform(r) * tot;
	uint64_t i = 0;

	for (; i + 1 < m && u >= d2[i]; i++)
		u -= d2[i];
	return i;
}

/* What the potential sum_i d2[i] becomes with point c added as a centroid;
 * with keep, d2 is updated to it. */
static double km_try(const float *x, uint64_t m, uint32_t dim, const float *c,
		     double *d2, int keep)
{
	double tot = 0;

	for (uint64_t i = 0; i < m; i++) {
		double d = km_dist2(x + i * dim, c, dim);

		d = d < d2[i] ? d : d2[i];
		tot += d;
		if (keep)
			d2[i] = d;
	}
	return tot;
}

/* Greedy k-means++ (Arthur, Vassilvitskii 2007; scikit-learn's default):
 * each next centroid is the best, by the potential it leaves, of a few
 * sample points drawn with probability proportional to their squared
 * distance to the nearest centroid so far.  Plain k-means++ often puts two
 * seeds in one blob when blobs are close, and Lloyd's algorithm then
 * crawls for tens of iterations. */
static void km_seed(const float *x, uint64_t m, uint32_t k, uint32_t dim,
		    uint64_t seed, double *d2, float *init)
{
	int tries = 2 + (int)log((double)k);
	struct frr_rng r;
	double tot = 0;

	frr_rng_seed(&r, seed);
	memcpy(init, x + frr_rng_below(&r, m) * dim, dim * sizeof(*init));
	for (uint64_t i = 0; i < m; i++)
		d2[i] = INFINITY;
	tot = km_try(x, m, dim, init, d2, 1);
	for (uint32_t j = 1; j < k; j++) {
		uint64_t best = 0;
		double bpot = INFINITY;

		for (int t = 0; t < tries; t++) {
			uint64_t c = km_draw(&r, d2, m, tot);
			double pot = km_try(x, m, dim, x + c * dim, d2, 0);

			if (pot < bpot) {
				bpot = pot;
				best = c;
			}
		}
		memcpy(init + (size_t)j * dim, x + best * dim,
		       dim * sizeof(*init));
		tot = km_try(x, m, dim, x + best * dim, d2, 1);
	}
}

int km_init(const struct km_shape *s, const double *centers, float *init)
{
	uint64_t m = s->points < KM_SAMPLE ? s->points : KM_SAMPLE;
	float *x = malloc(m * s->dim * sizeof(*x));
	double *d2 = malloc(m * sizeof(*d2));

	if (x && d2) {
		for (uint64_t i = 0; i < m; i++)
			km_point(s, centers, i, x + i * s->dim);
		km_seed(x, m, s->k, s->dim, frr_mix64(s->data_seed + 1), d2,
			init);
	}
	free(x);
	free(d2);
	return x && d2 ? 0 : -ENOMEM;
}

void km_centroid(const struct km_shape *s, const float *sums, const float *init,
		 float *out)
{
	float n = sums[s->dim];

	if (n < 0.5f) { /* empty (or, under SSP, not yet filled) */
		memcpy(out, init, s->dim * sizeof(*out));
		return;
	}
	for (uint32_t j = 0; j < s->dim; j++)
		out[j] = sums[j] / n;
}
