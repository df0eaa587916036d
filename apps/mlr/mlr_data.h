/* SPDX-License-Identifier: MIT */
/*
 * MLR input: labelled examples, either dense bytes (IDX images, x = b/255)
 * or sparse rows (LIBSVM/SVMlight), with labels mapped to 0..classes-1.
 */
#ifndef FLEXRR_APPS_MLR_DATA_H
#define FLEXRR_APPS_MLR_DATA_H

#include <stdint.h>

#define MLR_MAX_CLASSES 1024
/* Input bounds, checked before anything is sized from them: a feature index
 * (kdd2012, the widest LIBSVM set we know, has 54.7M features) and the
 * model's (features + 1) x classes weights (1 GiB of floats per copy, and
 * every worker thread keeps several copies). */
#define MLR_MAX_FEATURES (1u << 26)
#define MLR_MAX_WEIGHTS (1ull << 28)

struct mlr_data {
	uint64_t n;   /* examples */
	uint32_t dim; /* features, bias not counted */
	uint32_t classes;
	int dense;	  /* 1: pix, 0: rowptr/col/val */
	uint8_t *pix;	  /* n * dim */
	uint64_t *rowptr; /* n + 1 */
	uint32_t *col;	  /* 0-based feature index */
	float *val;
	uint32_t *label; /* 0..classes-1 */
};

/* LIBSVM labels are arbitrary numbers: the training file fixes the map
 * (sorted distinct values -> 0..k-1) and the test file must use it. */
struct mlr_labels {
	uint32_t n;
	double v[MLR_MAX_CLASSES];
};

/* IDX images (magic 0x803) and labels (0x801), plain or gzip.  Reads at
 * most limit examples (0 = all).  classes: 0 = infer (max label + 1), else
 * every label must be below it. */
int mlr_load_idx(const char *images, const char *labels, uint64_t limit,
		 uint32_t classes, struct mlr_data *d);
/* LIBSVM "label idx:val ..." (1-based ascending indices, '#' comments).
 * map: filled when map->n == 0 (training file), else used (test file).
 * dim: 0 = max index seen, else features past it are dropped. */
int mlr_load_libsvm(const char *path, uint64_t limit, uint32_t dim,
		    struct mlr_labels *map, struct mlr_data *d);
void mlr_data_free(struct mlr_data *d);

#endif
