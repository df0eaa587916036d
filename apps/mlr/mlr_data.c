// SPDX-License-Identifier: MIT
/* MLR loaders: IDX (MNIST family) and LIBSVM/SVMlight text. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reader.h"
#include "flexrr/log.h"
#include "mlr_data.h"

#define IDX_MAGIC_IMAGES 0x00000803u
#define IDX_MAGIC_LABELS 0x00000801u

void mlr_data_free(struct mlr_data *d)
{
	free(d->pix);
	free(d->rowptr);
	free(d->col);
	free(d->val);
	free(d->label);
	memset(d, 0, sizeof(*d));
}

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

/* Read the header of an IDX file: magic and ndims sizes. */
static int idx_header(struct frr_reader *r, uint32_t magic, int ndims,
		      uint32_t *dims)
{
	unsigned char b[16];
	int rc;

	rc = frr_reader_bytes(r, b, 4 + 4 * (size_t)ndims);
	if (rc)
		return rc;
	/* filled on every path that read the header: callers never see (and
	 * gcc -O3 never suspects) uninitialized sizes */
	for (int i = 0; i < ndims; i++)
		dims[i] = be32(b + 4 + 4 * i);
	if (be32(b) != magic)
		return frr_reader_fail(
		    r,
		    "expected IDX magic 0x%08x (%s), found 0x%08x; "
		    "is this the right file?",
		    magic,
		    magic == IDX_MAGIC_IMAGES ? "unsigned-byte images, 3 dims"
					      : "unsigned-byte labels, 1 dim",
		    be32(b));
	return 0;
}

/* Bytes read per step of idx_body: a header that claims more than the file
 * holds costs at most this much beyond the file's own size. */
#define IDX_STEP (16u << 20)

/* Read count records of unit bytes into a buffer grown as the data arrives
 * (never sized from the header alone).  0, or -errno with a message naming
 * the file, byte and how many records the file really holds. */
static int idx_body(struct frr_reader *r, uint64_t count, uint64_t unit,
		    const char *what, unsigned char **out)
{
	uint64_t have = 0, cap = 0,
		 step = IDX_STEP / unit ? IDX_STEP / unit : 1;
	unsigned char *buf = NULL;
	int rc = 0;

	while (have < count) {
		uint64_t want = count - have < step ? count - have : step;
		size_t got;

		if (have + want > cap) {
			uint64_t c =
			    cap * 2 > have + want ? cap * 2 : have + want;
			unsigned char *p;

			c = c < count ? c : count;
			p = realloc(buf, c * unit);
			if (!p) {
				rc = frr_reader_oom(r, what, c * unit);
				goto fail;
			}
			buf = p;
			cap = c;
		}
		rc = frr_reader_read(r, buf + have * unit, want * unit, &got);
		if (rc)
			goto fail;
		have += got / unit;
		if (got < want * unit) {
			rc = frr_reader_fail(
			    r,
			    "the header declares %llu %s, the file ends "
			    "after %llu; it is truncated or the header is "
			    "wrong",
			    (unsigned long long)count, what,
			    (unsigned long long)have);
			goto fail;
		}
	}
	*out = buf;
	return 0;
fail:
	free(buf);
	return rc;
}

/* (dim + 1) x classes weights must stay below MLR_MAX_WEIGHTS; where says
 * "FILE:LINE: what" made the model that large. */
static int model_size_check(const char *where, uint64_t dim, uint64_t classes)
{
	if ((dim + 1) * classes <= MLR_MAX_WEIGHTS)
		return 0;
	frr_err("%s and %llu classes make a model of %llu weights, more than "
		"the %llu flexrr's mlr supports; use fewer features",
		where, (unsigned long long)classes,
		(unsigned long long)((dim + 1) * classes), MLR_MAX_WEIGHTS);
	return -EINVAL;
}

static int idx_labels(struct frr_reader *rl, const unsigned char *lab,
		      uint64_t n, uint32_t classes, struct mlr_data *d)
{
	uint32_t maxlab = 0;

	d->label = malloc(n * sizeof(*d->label));
	if (!d->label)
		return frr_reader_oom(rl, "the labels", n * sizeof(*d->label));
	for (uint64_t i = 0; i < n; i++) {
		if (classes && lab[i] >= classes) {
			frr_err("%s: byte %llu: label %u out of range: the "
				"model has %u classes (0..%u)",
				frr_reader_path(rl),
				(unsigned long long)(8 + i), lab[i], classes,
				classes - 1);
			return -EINVAL;
		}
		d->label[i] = lab[i];
		if (lab[i] > maxlab)
			maxlab = lab[i];
	}
	d->classes = classes ? classes : maxlab + 1;
	if (d->classes < 2) {
		frr_err("%s: all labels are %u: need at least two classes",
			frr_reader_path(rl), maxlab);
		return -EINVAL;
	}
	return 0;
}

int mlr_load_idx(const char *images, const char *labels, uint64_t limit,
		 uint32_t classes, struct mlr_data *d)
{
	struct frr_reader *ri = NULL, *rl = NULL;
	uint32_t idim[3] = { 0 }, ldim[1] = { 0 };
	unsigned char *lab = NULL;
	char what[64], where[4200];
	uint64_t n, dim;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = frr_reader_open(images, &ri);
	if (rc)
		return rc;
	rc = frr_reader_open(labels, &rl);
	if (rc)
		goto close_ri;
	rc = idx_header(ri, IDX_MAGIC_IMAGES, 3, idim);
	if (rc)
		goto close_rl;
	rc = idx_header(rl, IDX_MAGIC_LABELS, 1, ldim);
	if (rc)
		goto close_rl;
	if (idim[0] != ldim[0]) {
		frr_err("%s has %u images but %s has %u labels; pass the "
			"matching pair",
			images, idim[0], labels, ldim[0]);
		rc = -EINVAL;
		goto close_rl;
	}
	dim = (uint64_t)idim[1] * idim[2];
	if (!idim[0] || !dim || dim > (1u << 24)) {
		rc = frr_reader_fail(ri,
				     "expected a non-empty image set, header "
				     "says %u images of %ux%u",
				     idim[0], idim[1], idim[2]);
		goto close_rl;
	}
	n = idim[0];
	if (limit && limit < n)
		n = limit;
	snprintf(what, sizeof(what), "images of %ux%u", idim[1], idim[2]);
	rc = idx_body(ri, n, dim, what, &d->pix);
	if (!rc)
		rc = idx_body(rl, n, 1, "labels", &lab);
	/* a whole file must end where its header says */
	if (!rc && n == idim[0])
		rc = frr_reader_end(ri, "the last image");
	if (!rc && n == idim[0])
		rc = frr_reader_end(rl, "the last label");
	if (!rc)
		rc = idx_labels(rl, lab, n, classes, d);
	snprintf(where, sizeof(where), "%s: %s", images, what);
	if (!rc)
		rc = model_size_check(where, dim, d->classes);
	if (rc)
		goto free_d;
	d->n = n;
	d->dim = (uint32_t)dim;
	d->dense = 1;
	goto close_rl;

free_d:
	mlr_data_free(d);
close_rl:
	free(lab);
	frr_reader_close(rl);
close_ri:
	frr_reader_close(ri);
	return rc;
}

/* ---- LIBSVM ------------------------------------------------------------ */

struct csr_build {
	uint64_t n, cap_n, nnz, cap_nnz;
	uint64_t *rowptr;
	uint32_t *col;
	float *val;
	double *y;
	uint32_t maxidx;  /* largest feature index kept */
	uint64_t maxline; /* and the line it is on */
};

/* Room for rows examples and nnz entries: 0 or -ENOMEM, said. */
static int csr_grow(struct frr_reader *r, struct csr_build *b, uint64_t rows,
		    uint64_t nnz)
{
	if (rows + 1 > b->cap_n) {
		uint64_t c = b->cap_n ? b->cap_n * 2 : 1024;
		void *p, *q;

		while (c < rows + 1)
			c *= 2;
		p = realloc(b->rowptr, c * sizeof(*b->rowptr));
		if (p)
			b->rowptr = p;
		q = realloc(b->y, c * sizeof(*b->y));
		if (q)
			b->y = q;
		if (!p || !q)
			return frr_reader_oom(
			    r, "the examples",
			    c * (sizeof(*b->rowptr) + sizeof(*b->y)));
		b->cap_n = c;
	}
	if (nnz > b->cap_nnz) {
		uint64_t c = b->cap_nnz ? b->cap_nnz * 2 : 16384;
		void *p, *q;

		while (c < nnz)
			c *= 2;
		p = realloc(b->col, c * sizeof(*b->col));
		if (p)
			b->col = p;
		q = realloc(b->val, c * sizeof(*b->val));
		if (q)
			b->val = q;
		if (!p || !q)
			return frr_reader_oom(
			    r, "the features",
			    c * (sizeof(*b->col) + sizeof(*b->val)));
		b->cap_nnz = c;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The 'index:value' at *sp, its index above last; *sp steps past it.  line
 * is for the column in messages.  0 or -EINVAL, said. */
static int libsvm_feature(struct frr_reader *r, const char *line, char **sp,
			  uint32_t last, unsigned long *idx, double *v)
{
	char *s = *sp, *end, *tok = s;

	errno = 0;
	*idx = strtoul(s, &end, 10);
	if (end == s || *end != ':' || errno || *idx == 0 ||
	    *idx > UINT32_MAX || *s == '-' || *s == '+')
		return frr_reader_fail(r,
				       "expected 'index:value' with a "
				       "1-based integer index, got "
				       "'%.20s' (column %zu)",
				       tok, (size_t)(tok - line) + 1);
	if (*idx > MLR_MAX_FEATURES)
		return frr_reader_fail(
		    r,
		    "feature index %lu (column %zu) is above the %u "
		    "features flexrr's mlr supports",
		    *idx, (size_t)(tok - line) + 1, MLR_MAX_FEATURES);
	if (*idx <= last)
		return frr_reader_fail(
		    r,
		    "feature indices must increase: %lu after %u "
		    "(column %zu)",
		    *idx, last, (size_t)(tok - line) + 1);
	s = end + 1;
	*v = strtod(s, &end);
	/* features are stored as float: a larger double is inf */
	if (end == s || (*end && *end != ' ' && *end != '\t') ||
	    !(fabs(*v) <= FLT_MAX))
		return frr_reader_fail(
		    r,
		    "expected a number after '%lu:' (at most %g in "
		    "size), got '%.20s' (column %zu)",
		    *idx, FLT_MAX, s, (size_t)(s - line) + 1);
	*sp = end;
	return 0;
}

/* Feature idx (1-based) = v of the example being built: 0 or -ENOMEM, said. */
static int csr_add(struct frr_reader *r, struct csr_build *b, unsigned long idx,
		   double v)
{
	int rc;

	if (idx > b->maxidx) {
		b->maxidx = (uint32_t)idx;
		b->maxline = frr_reader_lineno(r);
	}
	rc = csr_grow(r, b, b->n + 1, b->nnz + 1);
	if (rc)
		return rc;
	b->col[b->nnz] = (uint32_t)(idx - 1);
	b->val[b->nnz] = (float)v;
	b->nnz++;
	return 0;
}

/* Parse one example line into b; 0 = added, 1 = blank/comment, <0 error. */
static int libsvm_line(struct frr_reader *r, char *line, uint32_t dim,
		       struct csr_build *b)
{
	char *s = line, *end, *hash = strchr(line, '#');
	uint32_t last = 0;
	double y;
	int rc;

	if (hash)
		*hash = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 1;
	y = strtod(s, &end);
	if (end == s || (*end && *end != ' ' && *end != '\t') || !isfinite(y))
		return frr_reader_fail(r,
				       "expected a numeric label at the start "
				       "of the line, got '%.20s'",
				       s);
	rc = csr_grow(r, b, b->n + 1, b->nnz + 64);
	if (rc)
		return rc;
	b->y[b->n] = y;
	s = end;
	for (;;) {
		unsigned long idx;
		double v = 0; /* gcc cannot see libsvm_feature sets it on 0 */

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (!strncmp(s, "qid:", 4)) {
			strtoul(s + 4, &end, 10);
			s = end;
			continue;
		}
		rc = libsvm_feature(r, line, &s, last, &idx, &v);
		if (rc)
			return rc;
		last = (uint32_t)idx;
		if (dim && idx > dim)
			continue; /* unknown to the model: no weight */
		rc = csr_add(r, b, idx, v);
		if (rc)
			return rc;
	}
	b->n++;
	b->rowptr[b->n] = b->nnz;
	return 0;
}

static int map_labels(struct frr_reader *r, struct csr_build *b,
		      struct mlr_labels *map, uint32_t *label)
{
	if (!map->n) {
		double *s = malloc(b->n * sizeof(*s));
		uint32_t k = 0;

		if (!s)
			return frr_reader_oom(r, "the labels",
					      b->n * sizeof(*s));
		memcpy(s, b->y, b->n * sizeof(*s));
		qsort(s, b->n, sizeof(*s), cmp_double);
		for (uint64_t i = 0; i < b->n; i++) {
			if (k && s[i] == map->v[k - 1])
				continue;
			if (k == MLR_MAX_CLASSES) {
				free(s);
				return frr_reader_fail(
				    r,
				    "more than %d distinct labels: is the "
				    "first column a class label?",
				    MLR_MAX_CLASSES);
			}
			map->v[k++] = s[i];
		}
		free(s);
		map->n = k;
	}
	for (uint64_t i = 0; i < b->n; i++) {
		double *hit = bsearch(&b->y[i], map->v, map->n,
				      sizeof(map->v[0]), cmp_double);

		if (!hit) {
			frr_err("%s: example %llu: label %g does not occur in "
				"the training file; the test set must use the "
				"training labels",
				frr_reader_path(r), (unsigned long long)i + 1,
				b->y[i]);
			return -EINVAL;
		}
		label[i] = (uint32_t)(hit - map->v);
	}
	return 0;
}

int mlr_load_libsvm(const char *path, uint64_t limit, uint32_t dim,
		    struct mlr_labels *map, struct mlr_data *d)
{
	struct csr_build b = { 0 };
	struct frr_reader *r;
	char *line, where[4200];
	size_t len;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = frr_reader_open(path, &r);
	if (rc)
		return rc;
	rc = csr_grow(r, &b, 1, 1);
	if (rc)
		goto free_b;
	b.rowptr[0] = 0;
	while ((!limit || b.n < limit) &&
	       (rc = frr_reader_line(r, &line, &len)) == 1) {
		rc = libsvm_line(r, line, dim, &b);
		if (rc < 0)
			goto free_b;
	}
	if (rc < 0)
		goto free_b;
	if (!b.n || (!dim && !b.maxidx)) {
		/* a training set without features would make dim 0, which
		 * the test set's loader reads as "take the largest index" */
		frr_err("%s: no %s (empty file or only comments); expected "
			"LIBSVM lines 'label index:value ...'",
			path, b.n ? "features" : "examples");
		rc = -EINVAL;
		goto free_b;
	}
	d->label = malloc(b.n * sizeof(*d->label));
	if (!d->label) {
		rc = frr_reader_oom(r, "the labels", b.n * sizeof(*d->label));
		goto free_b;
	}
	rc = map_labels(r, &b, map, d->label);
	if (rc)
		goto free_b;
	if (map->n < 2) {
		frr_err("%s: every example has label %g: need at least two "
			"classes",
			path, map->v[0]);
		rc = -EINVAL;
		goto free_b;
	}
	snprintf(where, sizeof(where), "%s:%llu: feature index %u", path,
		 (unsigned long long)b.maxline, b.maxidx);
	rc = model_size_check(where, dim ? dim : b.maxidx, map->n);
	if (rc)
		goto free_b;
	d->n = b.n;
	d->dim = dim ? dim : b.maxidx;
	d->classes = map->n;
	d->rowptr = b.rowptr;
	d->col = b.col;
	d->val = b.val;
	free(b.y);
	frr_reader_close(r);
	return 0;

free_b:
	free(d->label);
	d->label = NULL;
	free(b.rowptr);
	free(b.col);
	free(b.val);
	free(b.y);
	frr_reader_close(r);
	return rc;
}
