// SPDX-License-Identifier: MIT
/* Softmax regression: forward pass, gradient, minibatch SGD. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlr_model.h"

void mlr_rows(float *model, uint32_t dim, uint32_t classes, float **w)
{
	for (uint64_t j = 0; j <= dim; j++)
		w[j] = model + j * classes;
}

int mlr_sgd_init(struct mlr_sgd *s, uint32_t dim, uint32_t classes,
		 uint32_t batch)
{
	size_t rows = (size_t)dim + 1;

	memset(s, 0, sizeof(*s));
	s->dim = dim;
	s->classes = classes;
	s->batch = batch ? batch : 1;
	s->grad = calloc(rows * classes, sizeof(*s->grad));
	s->tlist = malloc(rows * sizeof(*s->tlist));
	s->touched = calloc(rows, 1);
	s->p = malloc(classes * sizeof(*s->p));
	if (!s->grad || !s->tlist || !s->touched || !s->p) {
		mlr_sgd_free(s);
		return -ENOMEM;
	}
	return 0;
}

void mlr_sgd_free(struct mlr_sgd *s)
{
	free(s->grad);
	free(s->tlist);
	free(s->touched);
	free(s->p);
	memset(s, 0, sizeof(*s));
}

/* z = logits of example i under the rows w[0..dim]. */
static void mlr_logits(const struct mlr_data *d, uint64_t i, float *const *w,
		       uint32_t K, float *z)
{
	const float *bias = w[d->dim];

	for (uint32_t k = 0; k < K; k++)
		z[k] = bias[k];
	if (d->dense) {
		const uint8_t *x = d->pix + i * d->dim;

		for (uint32_t j = 0; j < d->dim; j++) {
			const float *wj = w[j];
			float xf;

			if (!x[j])
				continue;
			xf = (float)x[j] * (1.0f / 255.0f);
			for (uint32_t k = 0; k < K; k++)
				z[k] += xf * wj[k];
		}
		return;
	}
	for (uint64_t e = d->rowptr[i]; e < d->rowptr[i + 1]; e++) {
		const float *wj;
		float xf = d->val[e];

		if (d->col[e] >= d->dim)
			continue;
		wj = w[d->col[e]];
		for (uint32_t k = 0; k < K; k++)
			z[k] += xf * wj[k];
	}
}

/* Turn logits into probabilities; returns -log p[y] and the argmax. */
static double mlr_softmax(float *z, uint32_t K, uint32_t y, uint32_t *argmax)
{
	float m = z[0];
	uint32_t am = 0;
	double sum = 0, zy;

	for (uint32_t k = 1; k < K; k++)
		if (z[k] > m) {
			m = z[k];
			am = k;
		}
	zy = (double)z[y] - m;
	for (uint32_t k = 0; k < K; k++) {
		z[k] = expf(z[k] - m);
		sum += z[k];
	}
	for (uint32_t k = 0; k < K; k++)
		z[k] = (float)(z[k] / sum);
	*argmax = am;
	return log(sum) - zy;
}

static void mlr_touch(struct mlr_sgd *s, uint32_t row)
{
	if (!s->touched[row]) {
		s->touched[row] = 1;
		s->tlist[s->ntouched++] = row;
	}
}

/* grad += x_i (p - e_y) */
static void mlr_accumulate(struct mlr_sgd *s, const struct mlr_data *d,
			   uint64_t i, const float *g)
{
	uint32_t K = s->classes;
	float *gb = s->grad + (size_t)d->dim * K;

	mlr_touch(s, d->dim);
	for (uint32_t k = 0; k < K; k++)
		gb[k] += g[k];
	if (d->dense) {
		const uint8_t *x = d->pix + i * d->dim;

		for (uint32_t j = 0; j < d->dim; j++) {
			float *gj = s->grad + (size_t)j * K;
			float xf;

			if (!x[j])
				continue;
			mlr_touch(s, j);
			xf = (float)x[j] * (1.0f / 255.0f);
			for (uint32_t k = 0; k < K; k++)
				gj[k] += xf * g[k];
		}
		return;
	}
	for (uint64_t e = d->rowptr[i]; e < d->rowptr[i + 1]; e++) {
		uint32_t j = d->col[e];
		float *gj = s->grad + (size_t)j * K;

		if (j >= d->dim)
			continue;
		mlr_touch(s, j);
		for (uint32_t k = 0; k < K; k++)
			gj[k] += d->val[e] * g[k];
	}
}

static void mlr_step(struct mlr_sgd *s, float *const *w, float lr, float l2,
		     uint32_t bsz)
{
	uint32_t K = s->classes;
	float scale = lr / (float)bsz;

	for (uint32_t t = 0; t < s->ntouched; t++) {
		uint32_t j = s->tlist[t];
		float *wj = w[j], *gj = s->grad + (size_t)j * K;
		float decay = j == s->dim ? 0.0f : lr * l2;

		for (uint32_t k = 0; k < K; k++) {
			wj[k] -= scale * gj[k] + decay * wj[k];
			gj[k] = 0;
		}
		s->touched[j] = 0;
	}
	s->ntouched = 0;
}

void mlr_sgd_run(struct mlr_sgd *s, const struct mlr_data *d, uint64_t begin,
		 uint64_t end, float *const *w, float lr, float l2,
		 double *loss, uint64_t *correct)
{
	uint32_t K = s->classes, bsz = 0, am;

	for (uint64_t i = begin; i < end; i++) {
		uint32_t y = d->label[i];

		mlr_logits(d, i, w, K, s->p);
		*loss += mlr_softmax(s->p, K, y, &am);
		*correct += am == y;
		s->p[y] -= 1.0f;
		mlr_accumulate(s, d, i, s->p);
		if (++bsz == s->batch) {
			mlr_step(s, w, lr, l2, bsz);
			bsz = 0;
		}
	}
	if (bsz)
		mlr_step(s, w, lr, l2, bsz);
}

void mlr_eval(const struct mlr_data *d, uint64_t begin, uint64_t end,
	      float *const *w, uint32_t classes, double *loss,
	      uint64_t *correct)
{
	float z[MLR_MAX_CLASSES];
	uint32_t am;

	for (uint64_t i = begin; i < end; i++) {
		uint32_t y = d->label[i];

		if (y >= classes) /* a class the model has no weights for */
			continue;
		mlr_logits(d, i, w, classes, z);
		*loss += mlr_softmax(z, classes, y, &am);
		*correct += am == y;
	}
}
