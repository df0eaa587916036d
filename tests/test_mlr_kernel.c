// SPDX-License-Identifier: MIT
/* MLR kernels on plain arrays (no runtime): learning on real Fashion-MNIST
 * and on a tiny separable problem; gradient check by finite differences. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/simd.h"
#include "mlr/mlr_data.h"
#include "mlr/mlr_model.h"

TestSuite(mlr_kernel, .timeout = 120);

#define FMNIST "/usr/share/datasets/fashion-mnist/"

Test(mlr_kernel, fashion_mnist_80_percent)
{
	struct mlr_data tr, te;
	struct mlr_sgd s;
	uint64_t hits = 0, c0 = 0, c1 = 0;
	double loss0 = 0, loss1 = 0, tl = 0;
	float *model, **w;
	size_t nw;

	if (access(FMNIST "train-images-idx3-ubyte.gz", R_OK))
		cr_skip_test("dataset-fashion-mnist not installed");
	cr_assert_eq(mlr_load_idx(FMNIST "train-images-idx3-ubyte.gz",
				  FMNIST "train-labels-idx1-ubyte.gz", 20000, 0,
				  &tr),
		     0);
	cr_assert_eq(mlr_load_idx(FMNIST "t10k-images-idx3-ubyte.gz",
				  FMNIST "t10k-labels-idx1-ubyte.gz", 0,
				  tr.classes, &te),
		     0);
	cr_assert_eq(tr.n, 20000);
	cr_assert_eq(te.n, 10000);
	cr_assert_eq(tr.dim, 784);
	cr_assert_eq(tr.classes, 10);
	nw = (size_t)(tr.dim + 1) * tr.classes;
	model = calloc(nw, sizeof(*model));
	w = malloc(((size_t)tr.dim + 1) * sizeof(*w));
	mlr_rows(model, tr.dim, tr.classes, w);
	cr_assert_eq(mlr_sgd_init(&s, tr.dim, tr.classes, 16), 0);
	/* two epochs, the loss measured along the way must fall */
	mlr_sgd_run(&s, &tr, 0, tr.n, w, 0.2f, 1e-5f, &loss0, &c0);
	mlr_sgd_run(&s, &tr, 0, tr.n, w, 0.1f, 1e-5f, &loss1, &c1);
	cr_assert_lt(loss1, loss0);
	mlr_eval(&te, 0, te.n, w, tr.classes, &tl, &hits);
	cr_log_info("train loss %.4f -> %.4f, test accuracy %.4f\n",
		    loss0 / tr.n, loss1 / tr.n, (double)hits / te.n);
	cr_assert_geq((double)hits / te.n, 0.80);
	mlr_sgd_free(&s);
	free(w);
	free(model);
	mlr_data_free(&tr);
	mlr_data_free(&te);
}

/* A small fixed problem: n examples of dim features, 11 classes (a vector
 * width of 8 or 4 leaves a tail), dense pixels or the same as sparse. */
#define SM_N 300
#define SM_DIM 37
#define SM_K 11
static void small_problem(struct mlr_data *d, int dense)
{
	static uint8_t pix[SM_N * SM_DIM];
	static uint64_t rowptr[SM_N + 1];
	static uint32_t col[SM_N * SM_DIM], label[SM_N];
	static float val[SM_N * SM_DIM];
	uint64_t e = 0;

	memset(d, 0, sizeof(*d));
	for (uint32_t i = 0; i < SM_N; i++) {
		label[i] = (i * 7) % SM_K;
		rowptr[i] = e;
		for (uint32_t j = 0; j < SM_DIM; j++) {
			uint32_t v = (i * 31 + j * 17 + label[i] * j) % 256;

			pix[i * SM_DIM + j] = (uint8_t)(v % 3 ? v : 0);
			if (pix[i * SM_DIM + j]) {
				col[e] = j;
				val[e++] = pix[i * SM_DIM + j] / 255.0f;
			}
		}
	}
	rowptr[SM_N] = e;
	d->n = SM_N;
	d->dim = SM_DIM;
	d->classes = SM_K;
	d->dense = dense;
	d->pix = pix;
	d->rowptr = rowptr;
	d->col = col;
	d->val = val;
	d->label = label;
}

/* Two epochs of minibatch SGD and an evaluation at a simd.h level:
 * the model in out[], the losses in loss[3]. */
static void small_run(enum frr_simd_level level, const struct mlr_data *d,
		      float *out, double *loss)
{
	float *w[SM_DIM + 1];
	struct mlr_sgd s;
	uint64_t c = 0;

	cr_assert_eq(frr_simd_set(level), 0);
	memset(out, 0, sizeof(float) * (SM_DIM + 1) * SM_K);
	mlr_rows(out, SM_DIM, SM_K, w);
	cr_assert_eq(mlr_sgd_init(&s, SM_DIM, SM_K, 4), 0);
	loss[0] = loss[1] = loss[2] = 0;
	mlr_sgd_run(&s, d, 0, d->n, w, 0.5f, 1e-3f, &loss[0], &c);
	mlr_sgd_run(&s, d, 0, d->n, w, 0.3f, 1e-3f, &loss[1], &c);
	mlr_eval(d, 0, d->n, w, SM_K, &loss[2], &c);
	mlr_sgd_free(&s);
}

/* The baseline and the AVX2 + FMA variant (where the CPU has it) agree up
 * to FMA rounding on dense and sparse input; a variant that dropped a
 * class of the tail or a feature would be off by whole gradient terms. */
Test(mlr_kernel, simd_variants_agree)
{
	static float m0[(SM_DIM + 1) * SM_K], m1[(SM_DIM + 1) * SM_K];
	struct mlr_data d;
	double l0[3], l1[3];

	if (frr_simd_host() < FRR_SIMD_AVX2)
		cr_skip_test("this CPU has no AVX2 + FMA: one variant only");
	for (int dense = 0; dense < 2; dense++) {
		small_problem(&d, dense);
		small_run(FRR_SIMD_BASE, &d, m0, l0);
		small_run(FRR_SIMD_AVX2, &d, m1, l1);
		cr_assert_lt(l0[1], l0[0], "dense %d: no learning", dense);
		for (int j = 0; j < 3; j++)
			cr_assert(fabs(l0[j] - l1[j]) <= 1e-5 * l0[j],
				  "dense %d loss %d: %.9g vs %.9g", dense, j,
				  l0[j], l1[j]);
		for (int j = 0; j < (SM_DIM + 1) * SM_K; j++)
			cr_assert(fabsf(m0[j] - m1[j]) <= 1e-5f,
				  "dense %d w[%d]: %.9g vs %.9g", dense, j,
				  m0[j], m1[j]);
	}
}
