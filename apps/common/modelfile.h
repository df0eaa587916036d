/* SPDX-License-Identifier: MIT */
/*
 * Model files for --save / --load: a text header naming the app and each
 * table's shape, then each table's rows as little-endian float32.
 *
 *   flexrr-model 1 APP NTABLES\n
 *   table NAME ROWS COLS\n  <ROWS*COLS floats>   (NTABLES times)
 *
 * Written to PATH.tmp and renamed, so a reader never sees half a model.
 */
#ifndef FLEXRR_APPS_MODELFILE_H
#define FLEXRR_APPS_MODELFILE_H

#include <stdint.h>

struct frr_model_table {
	const char *name;
	uint64_t rows;
	uint32_t cols;
};

/* row(ctx, t, r, out) fills row r of table t; a negative return aborts. */
int frr_model_save(const char *path, const char *app,
		   const struct frr_model_table *t, int ntables,
		   int (*row)(void *ctx, int t, uint64_t r, float *out),
		   void *ctx);
/* Check the header against t[] (same app, names and shapes) and return
 * each table's rows*cols floats in data[i] (malloc'ed). */
int frr_model_load(const char *path, const char *app,
		   const struct frr_model_table *t, int ntables, float **data);

#endif
