// SPDX-License-Identifier: MIT
/* MF without the runtime: the synthetic generator, partitions and the SGD
 * kernel on plain arrays. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/simd.h"
#include "mf/mf.h"

TestSuite(mf_kernel, .timeout = 60);

static struct mf_synth small(void)
{
	struct mf_synth s;

	mf_synth_defaults(&s);
	cr_assert_eq(mf_synth_parse("1000,300,40000", &s), 0);
	s.rank = 4;
	s.noise = 0.3;
	s.seed = 42;
	return s;
}

static int cmp_rating(const void *a, const void *b)
{
	const struct mf_rating *x = a, *y = b;

	if (x->user != y->user)
		return x->user < y->user ? -1 : 1;
	if (x->item != y->item)
		return x->item < y->item ? -1 : 1;
	return x->r < y->r ? -1 : x->r > y->r;
}

/* All ratings (train + test, global user ids) of W partitions, sorted. */
static struct mf_rating *gather(const struct mf_synth *s, int W, uint64_t *n,
				uint64_t *ntest)
{
	struct mf_rating *all = NULL;

	*n = *ntest = 0;
	for (int w = 0; w < W; w++) {
		struct mf_part p;

		cr_assert_eq(mf_synth_partition(s, w, W, 0.1, 7, &p), 0);
		all =
		    realloc(all, sizeof(*all) * (*n + p.ntrain + p.ntest + 1));
		cr_assert_not_null(all);
		for (uint64_t j = 0; j < p.ntrain + p.ntest; j++) {
			struct mf_rating x =
			    j < p.ntrain ? p.train[j] : p.test[j - p.ntrain];

			cr_assert_lt(x.user, p.nusers);
			cr_assert_lt(x.item, s->items);
			x.user = p.users[x.user];
			cr_assert_eq(x.user % (uint32_t)W, (uint32_t)w);
			all[(*n)++] = x;
		}
		*ntest += p.ntest;
		mf_part_free(&p);
	}
	qsort(all, *n, sizeof(*all), cmp_rating);
	return all;
}

Test(mf_kernel, synthetic_deterministic_and_worker_independent)
{
	struct mf_synth s = small();
	uint64_t n1, n3, t1, t3, n1b, t1b;
	struct mf_rating *a = gather(&s, 1, &n1, &t1);
	struct mf_rating *b = gather(&s, 3, &n3, &t3);
	struct mf_rating *c = gather(&s, 1, &n1b, &t1b);

	/* the data set is a function of the seed, not of the worker count */
	cr_assert_eq(n1, n3);
	cr_assert_eq(t1, t3);
	cr_assert_eq(memcmp(a, b, sizeof(*a) * n1), 0);
	cr_assert_eq(n1, n1b);
	cr_assert_eq(memcmp(a, c, sizeof(*a) * n1), 0);
	/* close to the requested count, and about 10% held out */
	cr_assert(fabs((double)n1 - 40000) < 0.05 * 40000, "n = %lu",
		  (unsigned long)n1);
	cr_assert(fabs((double)t1 / n1 - 0.1) < 0.01, "test %lu of %lu",
		  (unsigned long)t1, (unsigned long)n1);
	free(a);
	free(b);
	free(c);

	/* another seed, another data set */
	struct mf_synth s0 = small();

	s.seed = 43;
	a = gather(&s, 1, &n1b, &t1b);
	b = gather(&s0, 1, &n1, &t1);
	cr_assert(n1 != n1b || memcmp(a, b, sizeof(*a) * n1));
	free(a);
	free(b);
}

Test(mf_kernel, synthetic_popularity_is_skewed)
{
	struct mf_synth s = small();
	struct mf_part p;
	uint64_t head = 0;

	cr_assert_eq(mf_synth_partition(&s, 0, 1, 0, 7, &p), 0);
	/* density x^-0.4: the first 10% of items get 0.1^0.6 = 25% of the
	 * ratings, against 10% for uniform popularity */
	for (uint64_t j = 0; j < p.ntrain; j++)
		head += p.train[j].item < s.items / 10;
	cr_assert(head > 0.2 * p.ntrain && head < 0.3 * p.ntrain,
		  "head %lu of %lu", (unsigned long)head,
		  (unsigned long)p.ntrain);
	mf_part_free(&p);
}

Test(mf_kernel, bad_synthetic_spec)
{
	struct mf_synth s;
	const char *bad[] = {
		"",	 "10,10",     "10,10,-5",	"0,10,10",
		"a,b,c", "10,10,10,", "5000000000,1,1", "10, 10,10"
	};

	mf_synth_defaults(&s);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		cr_assert_eq(mf_synth_parse(bad[k], &s), -EINVAL, "'%s'",
			     bad[k]);
	cr_assert_eq(mf_synth_parse("netflix", &s), 0);
	cr_assert_eq(s.users, 480189);
	cr_assert_eq(s.items, 17770);
}

/* Files: users go to workers whole; every rating lands in exactly one
 * partition; loads are balanced. */
Test(mf_kernel, data_partitions_cover_once)
{
	struct mf_data d = { 0 };
	struct mf_rng r = { 5 };
	const int W = 3;
	uint64_t total = 0, train = 0, load[3] = { 0 };

	d.n = 5000;
	d.nusers = 200;
	d.nitems = 50;
	d.ratings = malloc(sizeof(*d.ratings) * d.n);
	for (uint64_t j = 0; j < d.n; j++)
		d.ratings[j] =
		    (struct mf_rating){ (uint32_t)mf_rng_below(&r, d.nusers),
					(uint32_t)mf_rng_below(&r, d.nitems),
					(float)j };
	cr_assert_eq(mf_data_assign(&d, W), 0);
	for (int w = 0; w < W; w++) {
		struct mf_part p;

		cr_assert_eq(mf_data_partition(&d, w, 9, 0.2, &p), 0);
		for (uint64_t j = 0; j < p.ntrain + p.ntest; j++) {
			const struct mf_rating *x =
			    j < p.ntrain ? &p.train[j] : &p.test[j - p.ntrain];
			uint64_t orig = (uint64_t)x->r;

			/* r carries the original index */
			cr_assert_eq(d.ratings[orig].user, p.users[x->user]);
			cr_assert_eq(d.user_part[p.users[x->user]], w);
		}
		total += p.ntrain + p.ntest;
		train += p.ntrain;
		load[w] = p.ntrain + p.ntest;
		mf_part_free(&p);
	}
	cr_assert_eq(total, d.n);
	cr_assert(fabs((double)(d.n - train) / d.n - 0.2) < 0.03);
	for (int w = 0; w < W; w++)
		cr_assert(fabs((double)load[w] - d.n / 3.0) < 60, "load %lu",
			  (unsigned long)load[w]);
	mf_data_free(&d);
}

/*
 * SGD on a synthetic rank-4 problem with noise sigma = 0.3 and signal
 * standard deviation 1: predicting the mean gives RMSE sqrt(1 + 0.09) =
 * 1.04, the true model sigma = 0.3 (a least-squares fit a little less on
 * the training set).  A model still missing a fraction f of the signal
 * variance has RMSE >= sqrt(0.09 + f), so train RMSE < 1.2 sigma = 0.36
 * means f < 0.04: SGD recovered over 96% of the low-rank structure.  The
 * held-out RMSE (< 1.5 sigma) shows it generalizes, not memorizes.
 */
Test(mf_kernel, sgd_recovers_low_rank_truth)
{
	struct mf_synth s = small();
	struct mf_part p;
	const int k = 4, cols = k + 1;
	struct mf_hyper h = {
		.rank = k,
		.lr = 0.03f,
		.lr_item = 0.03f,
		.reg = 0.02f,
		.breg = 0.02f,
		.mu = (float)s.mean,
	};
	float *P = malloc(sizeof(float) * cols * s.users);
	float *Q = malloc(sizeof(float) * cols * s.items);
	double first = 0, train, test;

	cr_assert_eq(mf_synth_partition(&s, 0, 1, 0.1, 7, &p), 0);
	for (uint32_t u = 0; u < p.nusers; u++)
		mf_init_row(1, 0, u, P + (size_t)u * cols, k);
	for (uint32_t i = 0; i < s.items; i++)
		mf_init_row(1, 1, i, Q + (size_t)i * cols, k);
	for (int c = 0; c < 30; c++) {
		double sse = mf_sgd_pass(P, Q, p.train, p.ntrain, &h);

		if (!c)
			first = sqrt(sse / p.ntrain);
		h.lr *= 0.95f;
		h.lr_item = h.lr;
	}
	train = sqrt(mf_sse(P, Q, p.train, p.ntrain, k, h.mu) / p.ntrain);
	test = sqrt(mf_sse(P, Q, p.test, p.ntest, k, h.mu) / p.ntest);
	cr_assert(first > 0.9, "first pass RMSE %g", first);
	cr_assert_lt(train, 1.2 * s.noise, "train RMSE %g", train);
	cr_assert_lt(test, 1.5 * s.noise, "test RMSE %g", test);
	mf_part_free(&p);
	free(P);
	free(Q);
}

Test(mf_kernel, init_rows_deterministic)
{
	float a[9], b[9], c[9];

	mf_init_row(3, 0, 17, a, 8);
	mf_init_row(3, 0, 17, b, 8);
	mf_init_row(3, 1, 17, c, 8);
	cr_assert_eq(memcmp(a, b, sizeof(a)), 0);
	cr_assert_neq(memcmp(a, c, sizeof(a)), 0);
	cr_assert_eq(a[8], 0.0f); /* bias starts at zero */
}

/* One SGD pass and the SSE after it at a simd.h level; *P, *Q malloc'ed. */
static double simd_pass(enum frr_simd_level level, const struct mf_part *p,
			uint32_t items, int k, float **P, float **Q)
{
	const int cols = k + 1;
	struct mf_hyper h = {
		.rank = k,
		.lr = 0.05f,
		.lr_item = 0.04f,
		.reg = 0.02f,
		.breg = 0.01f,
		.mu = 3.5f,
	};

	cr_assert_eq(frr_simd_set(level), 0);
	*P = malloc(sizeof(float) * cols * p->nusers);
	*Q = malloc(sizeof(float) * cols * items);
	cr_assert(*P && *Q);
	for (uint32_t u = 0; u < p->nusers; u++)
		mf_init_row(5, 0, u, *P + (size_t)u * cols, k);
	for (uint32_t i = 0; i < items; i++)
		mf_init_row(5, 1, i, *Q + (size_t)i * cols, k);
	mf_sgd_pass(*P, *Q, p->train, p->ntrain, &h);
	return mf_sse(*P, *Q, p->train, p->ntrain, k, h.mu);
}

/* The same SGD pass on the baseline and on the AVX2 + FMA variant (where
 * the CPU has it): equal up to FMA rounding.  Rank 19 = two blocks of 8
 * and a tail of 3, so a variant that drops or misplaces a lane is off by
 * whole products (>= 1e-3 here), far outside the tolerance. */
Test(mf_kernel, simd_variants_agree)
{
	struct mf_synth s = small();
	struct mf_part p;
	const int k = 19;
	float *P0, *Q0, *P1, *Q1;
	double sse0, sse1;

	if (frr_simd_host() < FRR_SIMD_AVX2)
		cr_skip_test("this CPU has no AVX2 + FMA: one variant only");
	cr_assert_eq(mf_synth_partition(&s, 0, 1, 0.0, 7, &p), 0);
	sse0 = simd_pass(FRR_SIMD_BASE, &p, s.items, k, &P0, &Q0);
	sse1 = simd_pass(FRR_SIMD_AVX2, &p, s.items, k, &P1, &Q1);
	cr_assert(fabs(sse0 - sse1) <= 1e-5 * sse0, "SSE %.9g vs %.9g", sse0,
		  sse1);
	for (size_t j = 0; j < (size_t)(k + 1) * p.nusers; j++)
		cr_assert(fabsf(P0[j] - P1[j]) <= 1e-5f, "P[%zu] %.9g vs %.9g",
			  j, P0[j], P1[j]);
	for (size_t j = 0; j < (size_t)(k + 1) * s.items; j++)
		cr_assert(fabsf(Q0[j] - Q1[j]) <= 1e-5f, "Q[%zu] %.9g vs %.9g",
			  j, Q0[j], Q1[j]);
	mf_part_free(&p);
	free(P0);
	free(Q0);
	free(P1);
	free(Q1);
}

/* mf_dot against a sequential double-precision sum, ranks around the
 * 8-lane blocks (each suite process decides its level afresh). */
Test(mf_kernel, dot_matches_reference)
{
	float p[37], q[37];

	for (int f = 0; f < 37; f++) {
		p[f] = (float)((f * 7919) % 113) / 113.0f - 0.5f;
		q[f] = (float)((f * 104729) % 97) / 97.0f - 0.5f;
	}
	for (int k = 0; k <= 37; k++) {
		double ref = 0;

		for (int f = 0; f < k; f++)
			ref += (double)p[f] * q[f];
		cr_assert(fabs(mf_dot(p, q, k) - ref) <= 1e-6,
			  "rank %d: %.9g vs %.9g", k, mf_dot(p, q, k), ref);
	}
}

/* FLEXRR_SIMD=off, read at the first use, forces the baseline; unset
 * takes the best the CPU has (Criterion runs each test in its own
 * process, so the level is decided here). */
Test(mf_kernel, simd_env_off_forces_baseline)
{
	cr_assert_eq(setenv("FLEXRR_SIMD", "off", 1), 0);
	cr_assert_eq(frr_simd_level(), FRR_SIMD_BASE);
}

Test(mf_kernel, simd_default_is_host_best)
{
	cr_assert_eq(unsetenv("FLEXRR_SIMD"), 0);
	cr_assert_eq(frr_simd_level(), frr_simd_host());
	cr_assert_eq(frr_simd_set((enum frr_simd_level)7), -EINVAL);
}
