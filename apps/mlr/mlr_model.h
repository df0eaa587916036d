/* SPDX-License-Identifier: MIT */
/*
 * Softmax regression kernels, independent of the runtime.  A model is
 * dim + 1 rows of `classes` floats given as row pointers: w[j] holds feature
 * j's weight for every class, w[dim] is the bias.  That is also the
 * parameter table's layout (one row per feature, see mlr.c for why); rows
 * need not be contiguous (in the app they are the runtime's cached rows).
 */
#ifndef FLEXRR_APPS_MLR_MODEL_H
#define FLEXRR_APPS_MLR_MODEL_H

#include <stdint.h>

#include "mlr_data.h"

/* Scratch for minibatch SGD; one per thread. */
struct mlr_sgd {
	uint32_t dim, classes, batch;
	float *grad;	  /* (dim + 1) * classes, zero between batches */
	uint32_t *tlist;  /* rows touched by the current batch */
	uint8_t *touched; /* dim + 1 */
	uint32_t ntouched;
	float *p; /* classes */
};

/* w[j] = the row j of a contiguous (dim + 1) x classes model, j <= dim. */
void mlr_rows(float *model, uint32_t dim, uint32_t classes, float **w);
int mlr_sgd_init(struct mlr_sgd *s, uint32_t dim, uint32_t classes,
		 uint32_t batch);
void mlr_sgd_free(struct mlr_sgd *s);
/* Minibatch SGD over examples [begin, end) of d in order, updating the rows
 * w[0..dim] in place: w -= lr * (mean cross-entropy gradient + l2 * w) per
 * batch, L2 on the feature rows a batch touches (bias excluded).  Adds each
 * example's loss and hit, measured before its batch's step, to *loss and
 * *correct. */
void mlr_sgd_run(struct mlr_sgd *s, const struct mlr_data *d, uint64_t begin,
		 uint64_t end, float *const *w, float lr, float l2,
		 double *loss, uint64_t *correct);
/* Cross-entropy sum and hits of w over examples [begin, end). */
void mlr_eval(const struct mlr_data *d, uint64_t begin, uint64_t end,
	      float *const *w, uint32_t classes, double *loss,
	      uint64_t *correct);

#endif
