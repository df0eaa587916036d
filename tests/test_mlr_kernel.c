// SPDX-License-Identifier: MIT
/* MLR kernels on plain arrays (no runtime): learning on real Fashion-MNIST
 * and on a tiny separable problem; gradient check by finite differences. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
