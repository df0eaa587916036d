// SPDX-License-Identifier: MIT
/* MLR loaders: IDX and LIBSVM, plain and gzip, and every kind of bad input
 * ending in a message naming file and position, never a crash. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "mlr/mlr_data.h"
#include "app_run_util.h"

TestSuite(mlr_data, .timeout = 30);

static void put(const char *name, const void *buf, size_t n, int gz)
{
	if (gz) {
		gzFile g = gzopen(tmp(name), "wb");

		cr_assert_not_null(g);
		cr_assert_eq(gzwrite(g, buf, (unsigned)n), (int)n);
		gzclose(g);
	} else {
		FILE *f = fopen(tmp(name), "wb");

		cr_assert_not_null(f);
		cr_assert_eq(fwrite(buf, 1, n, f), n);
		fclose(f);
	}
}

static void be32(unsigned char *b, uint32_t v)
{
	b[0] = v >> 24;
	b[1] = v >> 16;
	b[2] = v >> 8;
	b[3] = v;
}

/* 3 images of 2x2 and their labels {0, 2, 1} */
static void put_idx(const char *img, const char *lab, uint32_t imagic, int gz)
{
	unsigned char ib[16 + 12], lb[8 + 3] = { 0 };

	be32(ib, imagic);
	be32(ib + 4, 3);
	be32(ib + 8, 2);
	be32(ib + 12, 2);
	for (int i = 0; i < 12; i++)
		ib[16 + i] = (unsigned char)(i * 20);
	be32(lb, 0x801);
	be32(lb + 4, 3);
	lb[8] = 0;
	lb[9] = 2;
	lb[10] = 1;
	put(img, ib, sizeof(ib), gz);
	put(lab, lb, sizeof(lb), gz);
}

/* stderr captured by criterion contains every needle */
static void stderr_has(const char *a, const char *b)
{
	char buf[4096] = { 0 };
	FILE *f;

	fflush(stderr);
	f = cr_get_redirected_stderr();
	fread(buf, 1, sizeof(buf) - 1, f);
	cr_assert_not_null(strstr(buf, a), "no '%s' in: %s", a, buf);
	if (b)
		cr_assert_not_null(strstr(buf, b), "no '%s' in: %s", b, buf);
}

Test(mlr_data, idx_plain_and_gzip)
{
	struct mlr_data d;

	for (int gz = 0; gz < 2; gz++) {
		put_idx("i", "l", 0x803, gz);
		cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), 0);
		cr_assert_eq(d.n, 3);
		cr_assert_eq(d.dim, 4);
		cr_assert_eq(d.classes, 3);
		cr_assert(d.dense);
		cr_assert_eq(d.pix[5], 100);
		cr_assert_eq(d.label[1], 2);
		mlr_data_free(&d);
		cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 2, 0, &d), 0);
		cr_assert_eq(d.n, 2);
		cr_assert_eq(d.classes, 3);
		mlr_data_free(&d);
	}
	rm_tmp();
}

Test(mlr_data, idx_wrong_magic, .init = cr_redirect_stderr)
{
	struct mlr_data d;

	put_idx("i", "l", 0x801, 1);
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), -EINVAL);
	stderr_has(tmp("i"), "expected IDX magic 0x00000803");
	rm_tmp();
}

Test(mlr_data, idx_count_mismatch, .init = cr_redirect_stderr)
{
	unsigned char lb[8 + 2] = { 0 };
	struct mlr_data d;

	put_idx("i", "l", 0x803, 1);
	be32(lb, 0x801);
	be32(lb + 4, 2);
	put("l", lb, sizeof(lb), 1);
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), -EINVAL);
	stderr_has("3 images", "2 labels");
	rm_tmp();
}

Test(mlr_data, idx_truncated_gzip_body, .init = cr_redirect_stderr)
{
	unsigned char big[16 + 4 * 100000], lab[8 + 100000] = { 0 };
	struct mlr_data d;
	long sz;
	char *raw;
	FILE *f;

	be32(big, 0x803);
	be32(big + 4, 100000);
	be32(big + 8, 2);
	be32(big + 12, 2);
	for (size_t i = 16; i < sizeof(big); i++)
		big[i] = (unsigned char)((i * 2654435761u) >> 11);
	be32(lab, 0x801);
	be32(lab + 4, 100000);
	lab[9] = 1;
	put("l", lab, sizeof(lab), 1);
	put("i", big, sizeof(big), 1);
	f = fopen(tmp("i"), "rb");
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	raw = malloc((size_t)sz);
	cr_assert_eq(fread(raw, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	put("i", raw, (size_t)sz * 2 / 3, 0);
	free(raw);
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), -EIO);
	stderr_has(tmp("i"), "truncated");
	rm_tmp();
}

Test(mlr_data, idx_empty_file, .init = cr_redirect_stderr)
{
	struct mlr_data d;

	put_idx("i", "l", 0x803, 0);
	put("i", "", 0, 0);
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), -EIO);
	stderr_has(tmp("i"), "unexpected end of file after 0 bytes");
	rm_tmp();
}

Test(mlr_data, idx_label_out_of_range, .init = cr_redirect_stderr)
{
	struct mlr_data d;

	put_idx("i", "l", 0x803, 0);
	/* a test set checked against a 2-class model: label 2 is too big */
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 2, &d), -EINVAL);
	stderr_has(tmp("l"), "label 2 out of range");
	rm_tmp();
}

static const char svm[] = "# comment line\n"
			  "+1 1:0.5 3:2 # trailing comment\n"
			  "\n"
			  "-1 2:1.5 qid:3 4:-1e-1\n"
			  "1 4:1\n";

Test(mlr_data, libsvm_plain_and_gzip)
{
	struct mlr_labels map = { 0 };
	struct mlr_data d;

	for (int gz = 0; gz < 2; gz++) {
		memset(&map, 0, sizeof(map));
		put("s", svm, sizeof(svm) - 1, gz);
		cr_assert_eq(mlr_load_libsvm(tmp("s"), 0, 0, &map, &d), 0);
		cr_assert_eq(d.n, 3);
		cr_assert_eq(d.dim, 4);
		cr_assert_eq(d.classes, 2);
		cr_assert_not(d.dense);
		cr_assert_eq(d.label[0], 1); /* -1 -> 0, +1 -> 1 */
		cr_assert_eq(d.label[1], 0);
		cr_assert_eq(d.rowptr[3], 5);
		cr_assert_eq(d.col[3], 3);
		cr_assert_float_eq(d.val[3], -0.1f, 1e-7);
		mlr_data_free(&d);
	}
	/* test file against the training map and dim: feature 9 dropped */
	put("t", "1 1:1 9:3\n-1 2:2\n", 17, 0);
	cr_assert_eq(mlr_load_libsvm(tmp("t"), 0, 4, &map, &d), 0);
	cr_assert_eq(d.n, 2);
	cr_assert_eq(d.dim, 4);
	cr_assert_eq(d.rowptr[1], 1);
	mlr_data_free(&d);
	rm_tmp();
}

static void svm_bad_n(const char *text, size_t n, const char *needle)
{
	struct mlr_labels map = { 0 };
	struct mlr_data d;

	put("bad", text, n, 1);
	cr_assert_eq(mlr_load_libsvm(tmp("bad"), 0, 0, &map, &d), -EINVAL);
	stderr_has(tmp("bad"), needle);
	rm_tmp();
}

static void svm_bad(const char *text, const char *needle)
{
	svm_bad_n(text, strlen(text), needle);
}

Test(mlr_data, libsvm_junk_value, .init = cr_redirect_stderr)
{
	svm_bad("1 1:2\n0 3:x\n", ":2: expected a number after '3:'");
}

Test(mlr_data, libsvm_junk_token, .init = cr_redirect_stderr)
{
	svm_bad("1 1:2\n1 2:1\n0 abc\n", ":3: expected 'index:value'");
}

Test(mlr_data, libsvm_index_zero, .init = cr_redirect_stderr)
{
	svm_bad("1 0:2\n", ":1: expected 'index:value' with a 1-based");
}

Test(mlr_data, libsvm_indices_decrease, .init = cr_redirect_stderr)
{
	svm_bad("1 5:2 3:1\n", ":1: feature indices must increase");
}

Test(mlr_data, libsvm_bad_label, .init = cr_redirect_stderr)
{
	svm_bad("cat 1:2\n", ":1: expected a numeric label");
}

Test(mlr_data, libsvm_empty, .init = cr_redirect_stderr)
{
	svm_bad("# nothing\n\n", "no examples");
}

Test(mlr_data, libsvm_one_class, .init = cr_redirect_stderr)
{
	svm_bad("1 1:2\n1 2:2\n", "need at least two classes");
}

Test(mlr_data, libsvm_unknown_test_label, .init = cr_redirect_stderr)
{
	struct mlr_labels map = { 0 };
	struct mlr_data d;

	put("s", svm, sizeof(svm) - 1, 0);
	cr_assert_eq(mlr_load_libsvm(tmp("s"), 0, 0, &map, &d), 0);
	mlr_data_free(&d);
	put("t", "1 1:1\n7 2:2\n", 12, 0);
	cr_assert_eq(mlr_load_libsvm(tmp("t"), 0, 4, &map, &d), -EINVAL);
	stderr_has("example 2: label 7", "training");
	rm_tmp();
}

/* A header's count is checked against the file before memory is sized from
 * it: 2^32 - 1 images in a 3-image file is a message, not -ENOMEM. */
Test(mlr_data, idx_huge_image_count, .init = cr_redirect_stderr)
{
	unsigned char ib[16 + 12] = { 0 }, lb[8 + 3] = { 0 };
	struct mlr_data d;

	be32(ib, 0x803);
	be32(ib + 4, 0xffffffffu);
	be32(ib + 8, 2);
	be32(ib + 12, 2);
	be32(lb, 0x801);
	be32(lb + 4, 0xffffffffu);
	put("i", ib, sizeof(ib), 1);
	put("l", lb, sizeof(lb), 0);
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), -EINVAL);
	stderr_has(": byte 28: the header declares 4294967295 images of 2x2",
		   "the file ends after 3");
	rm_tmp();
}

Test(mlr_data, idx_huge_label_count, .init = cr_redirect_stderr)
{
	unsigned char lb[8 + 3] = { 0 };
	struct mlr_data d;

	put_idx("i", "l", 0x803, 0);
	be32(lb, 0x801);
	be32(lb + 4, 3);
	put("l", lb, 8 + 2, 0); /* one label short */
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), -EINVAL);
	stderr_has(": byte 10: the header declares 3 labels",
		   "the file ends after 2");
	rm_tmp();
}

Test(mlr_data, idx_trailing_bytes, .init = cr_redirect_stderr)
{
	unsigned char ib[16 + 12 + 1] = { 0 };
	struct mlr_data d;

	put_idx("i", "l", 0x803, 0);
	be32(ib, 0x803);
	be32(ib + 4, 3);
	be32(ib + 8, 2);
	be32(ib + 12, 2);
	put("i", ib, sizeof(ib), 1);
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 0, 0, &d), -EINVAL);
	stderr_has(": byte 28: unexpected data after the last image", NULL);
	/* a limit reads a prefix: the rest of the file is not an error */
	cr_assert_eq(mlr_load_idx(tmp("i"), tmp("l"), 2, 0, &d), 0);
	cr_assert_eq(d.n, 2);
	mlr_data_free(&d);
	rm_tmp();
}

Test(mlr_data, libsvm_huge_index, .init = cr_redirect_stderr)
{
	svm_bad("1 1:1\n2 4294967295:1\n",
		":2: feature index 4294967295 (column 3) is above the 67108864 "
		"features");
}

Test(mlr_data, libsvm_model_too_large, .init = cr_redirect_stderr)
{
	/* 2^26 features are allowed, but not with 5 classes: 5 x 2^26 > 2^28
	 * weights; the message names the line of the widest example */
	svm_bad("1 1:1\n2 67108864:1\n3 2:1\n4 3:1\n5 4:1\n",
		":2: feature index 67108864 and 5 classes make a model of "
		"335544325 weights");
}

/* Found by fuzz_libsvm: a training set without a single feature made dim
 * 0, and the test set was then read as if its own largest index were the
 * model's dimension (an out-of-bounds bias row in evaluation). */
Test(mlr_data, libsvm_no_features, .init = cr_redirect_stderr)
{
	svm_bad("0\n1 # none\n", "no features (empty file or only comments)");
}

Test(mlr_data, libsvm_nul_byte, .init = cr_redirect_stderr)
{
	static const char text[] = "1 1:2\n0 1:1\0 2:2\n";

	svm_bad_n(text, sizeof(text) - 1, ":2: NUL byte in a text line");
}

/* Found by fuzz_libsvm: 2.2e60 is a finite double but inf as the float a
 * feature is stored in. */
Test(mlr_data, libsvm_value_beyond_float, .init = cr_redirect_stderr)
{
	svm_bad("0 1:1\n1 1:2.2e60\n",
		":2: expected a number after '1:' (at most");
}
