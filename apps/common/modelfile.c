// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/file.h"
#include "flexrr/log.h"
#include "modelfile.h"
#include "reader.h"

struct model_fill {
	const char *app;
	const struct frr_model_table *t;
	int ntables;
	int (*row)(void *ctx, int t, uint64_t r, float *out);
	void *ctx;
	float *buf;
};

static int model_fill(FILE *f, void *arg)
{
	const struct model_fill *m = arg;
	int rc = 0;

	fprintf(f, "flexrr-model 1 %s %d\n", m->app, m->ntables);
	for (int i = 0; i < m->ntables && !rc; i++) {
		const struct frr_model_table *t = &m->t[i];

		fprintf(f, "table %s %" PRIu64 " %u\n", t->name, t->rows,
			t->cols);
		for (uint64_t r = 0; r < t->rows && !rc; r++) {
			rc = m->row(m->ctx, i, r, m->buf);
			if (!rc && fwrite(m->buf, sizeof(*m->buf), t->cols,
					  f) != t->cols)
				rc = -EIO;
		}
	}
	return rc;
}

int frr_model_save(const char *path, const char *app,
		   const struct frr_model_table *t, int ntables,
		   int (*row)(void *ctx, int t, uint64_t r, float *out),
		   void *ctx)
{
	struct model_fill m = { app, t, ntables, row, ctx, NULL };
	uint32_t maxc = 1;
	char what[96];
	int rc;

	for (int i = 0; i < ntables; i++)
		if (t[i].cols > maxc)
			maxc = t[i].cols;
	m.buf = malloc(maxc * sizeof(*m.buf));
	if (!m.buf)
		return -ENOMEM;
	snprintf(what, sizeof(what), "%s: --save", app);
	/* a failed save keeps the old model */
	rc = frr_file_write_atomic(path, what, model_fill, &m);
	free(m.buf);
	return rc;
}

/* NaN or Inf in a saved model is a damaged file, not a model to start
 * from: it would only turn every later update into NaN. */
static int model_check_finite(struct frr_reader *r,
			      const struct frr_model_table *t, const float *v)
{
	for (uint64_t j = 0; j < t->rows * t->cols; j++)
		if (!isfinite(v[j]))
			return frr_reader_fail(
			    r,
			    "table %s, row %" PRIu64 ", column %" PRIu64
			    ": %g is not a finite number; the model file is "
			    "damaged",
			    t->name, j / t->cols, j % t->cols, (double)v[j]);
	return 0;
}

int frr_model_load(const char *path, const char *app,
		   const struct frr_model_table *t, int ntables, float **data)
{
	struct frr_reader *r;
	char *line, name[64], fapp[64];
	uint64_t rows;
	uint32_t cols;
	size_t len;
	int rc, v, n, i;

	for (i = 0; i < ntables; i++)
		data[i] = NULL;
	rc = frr_reader_open(path, &r);
	if (rc)
		return rc;
	rc = frr_reader_line(r, &line, &len);
	if (rc <= 0) {
		rc = rc ? rc
			: frr_reader_fail(r, "empty file; expected a "
					     "flexrr model");
		goto close_r;
	}
	if (sscanf(line, "flexrr-model %d %63s %d", &v, fapp, &n) != 3 ||
	    v != 1) {
		rc = frr_reader_fail(r, "expected 'flexrr-model 1 APP N': not "
					"a model written by --save");
		goto close_r;
	}
	if (strcmp(fapp, app) || n != ntables) {
		rc = frr_reader_fail(r,
				     "model of app '%s' with %d tables; "
				     "expected app '%s' with %d",
				     fapp, n, app, ntables);
		goto close_r;
	}
	for (i = 0; i < ntables; i++) {
		rc = frr_reader_line(r, &line, &len);
		if (rc <= 0) {
			rc = rc ? rc
				: frr_reader_fail(r, "expected table %s",
						  t[i].name);
			goto free_data;
		}
		if (sscanf(line, "table %63s %" SCNu64 " %u", name, &rows,
			   &cols) != 3 ||
		    strcmp(name, t[i].name) || rows != t[i].rows ||
		    cols != t[i].cols) {
			rc = frr_reader_fail(
			    r,
			    "expected 'table %s %" PRIu64 " %u' (the shape "
			    "this data needs), got '%.80s'; was the model "
			    "saved with other data or options?",
			    t[i].name, t[i].rows, t[i].cols, line);
			goto free_data;
		}
		data[i] = malloc(rows * cols * sizeof(float));
		if (!data[i]) {
			rc = frr_reader_oom(r, "the model", rows * cols * 4);
			goto free_data;
		}
		rc = frr_reader_bytes(r, data[i], rows * cols * sizeof(float));
		if (!rc)
			rc = model_check_finite(r, &t[i], data[i]);
		if (rc)
			goto free_data;
	}
	rc = frr_reader_end(r, "the last table");
	if (rc)
		goto free_data;
	frr_reader_close(r);
	return 0;

free_data:
	for (i = 0; i < ntables; i++) {
		free(data[i]);
		data[i] = NULL;
	}
close_r:
	frr_reader_close(r);
	return rc;
}
