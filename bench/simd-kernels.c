// SPDX-License-Identifier: MIT
/* Hot kernels alone (no runtime): MF's SGD pass at each simd.h level in
 * turn and LDA's dense draw, passes alternating; CPU seconds of this
 * thread per pass, min and median over the passes.  Built and run by
 * bench/simd-kernels.sh; with -DNO_SIMD (a build from before simd.h) the
 * one level there is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lda/lda_model.h"
#include "mf/mf.h"
#ifndef NO_SIMD
#include "common/simd.h"
#endif

#define MAXP 64

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, const char *level, double *t, int n,
		   double items)
{
	qsort(t, n, sizeof(*t), cmp_d);
	printf("%-26s %-9s min %.4f s  median %.4f s  (%.3g items/CPU-s at "
	       "the median)\n",
	       what, level, t[0], t[n / 2], items / t[n / 2]);
}

/* state shared by the kernels: MF on 20000 x 2000, 2 M ratings */
static struct mf_rating *R;
static float *P, *Q;
static struct mf_hyper H = { .rank = 16,
			     .lr = 0.01f,
			     .lr_item = 0.01f,
			     .reg = 0.05f,
			     .breg = 0.05f,
			     .mu = 3 };
static const uint64_t NR = 2000000;

static void mf_setup(void)
{
	uint64_t s = 1;

	R = malloc(NR * sizeof(*R));
	P = malloc(sizeof(float) * 20000 * 17);
	Q = malloc(sizeof(float) * 2000 * 17);
	for (uint32_t u = 0; u < 20000; u++)
		mf_init_row(1, 0, u, P + u * 17, 16);
	for (uint32_t i = 0; i < 2000; i++)
		mf_init_row(1, 1, i, Q + i * 17, 16);
	for (uint64_t j = 0; j < NR; j++) {
		R[j].user = (uint32_t)(frr_splitmix64(&s) % 20000);
		R[j].item = (uint32_t)(frr_splitmix64(&s) % 2000);
		R[j].r = (float)(1 + frr_splitmix64(&s) % 5);
	}
}

static double mf_pass(void)
{
	double t = cpu_now(), sse = mf_sgd_pass(P, Q, R, NR, &H);

	if (!isfinite(sse))
		abort();
	return cpu_now() - t;
}

/* LDA: the dense draw at K topics, 20000 draws on fixed counts */
static double lda_pass(uint32_t K)
{
	struct lda_hyper h = { .K = K, .V = 12000, .alpha = 0.1, .beta = 0.01 };
	float *row = malloc(K * sizeof(float)), *nk = malloc(K * sizeof(float));
	double *ndk = malloc(K * sizeof(double)), *cdf = malloc(K * 8), t;
	uint64_t rng = 5, sum = 0;

	for (uint32_t k = 0; k < K; k++) {
		row[k] = (float)(k % 7 == 0 ? k % 5 : 0);
		nk[k] = (float)(100 + k);
		ndk[k] = k % 11 == 0;
	}
	t = cpu_now();
	for (int i = 0; i < 20000; i++)
		sum += lda_dense_draw(&h, row, nk, ndk, cdf, &rng);
	t = cpu_now() - t;
	free(row);
	free(nk);
	free(ndk);
	free(cdf);
	return sum ? t : -1;
}

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 9;
	int nl = 1;
	double t[4][MAXP];
	const char *names[2] = { "build", "avx2+fma" };

	if (passes < 1 || passes > MAXP)
		passes = 9;
#ifndef NO_SIMD
	nl = frr_simd_host() + 1;
	names[0] = "baseline";
#endif
	mf_setup();
	for (int p = 0; p < passes; p++) {
		for (int l = 0; l < nl; l++) {
#ifndef NO_SIMD
			frr_simd_set((enum frr_simd_level)l);
#endif
			t[l][p] = mf_pass();
		}
		t[2][p] = lda_pass(200);
		t[3][p] = lda_pass(1000);
	}
	for (int l = 0; l < nl; l++)
		report("mf_sgd_pass 2M rank 16", names[l], t[l], passes, 2e6);
	report("lda_dense_draw K=200", "", t[2], passes, 2e4);
	report("lda_dense_draw K=1000", "", t[3], passes, 2e4);
	return 0;
}
