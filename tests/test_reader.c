// SPDX-License-Identifier: MIT
/* apps/common/reader: plain and gzip input alike, positions, and errors. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/modelfile.h"
#include "common/reader.h"

TestSuite(reader, .timeout = 30);

static char *tmp_path(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/frr-reader-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	return path;
}

static void write_plain(const char *path, const void *buf, size_t n)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
}

static void write_gz(const char *path, const void *buf, size_t n)
{
	gzFile g = gzopen(path, "wb");

	cr_assert_not_null(g);
	cr_assert_eq(gzwrite(g, buf, (unsigned)n), (int)n);
	gzclose(g);
}

static const char text[] = "alpha 1\r\nbeta 22\n\ngamma 333";

static void check_lines(const char *path)
{
	struct frr_reader *r;
	char *line;
	size_t len;

	cr_assert_eq(frr_reader_open(path, &r), 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_str_eq(line, "alpha 1"); /* CR stripped */
	cr_assert_eq(len, 7);
	cr_assert_eq(frr_reader_lineno(r), 1);
	cr_assert_eq(frr_reader_offset(r), 9);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_str_eq(line, "beta 22");
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_str_eq(line, "");
	cr_assert_eq(len, 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_str_eq(line, "gamma 333"); /* no final newline */
	cr_assert_eq(frr_reader_lineno(r), 4);
	cr_assert_eq(frr_reader_line(r, &line, &len), 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 0);
	cr_assert_eq(frr_reader_offset(r), sizeof(text) - 1);
	cr_assert_str_eq(frr_reader_path(r), path);
	frr_reader_close(r);
}

Test(reader, plain_lines)
{
	char *p = tmp_path();

	write_plain(p, text, sizeof(text) - 1);
	check_lines(p);
	unlink(p);
}

Test(reader, gzip_detected_by_magic_not_name)
{
	char *p = tmp_path(); /* no .gz suffix */

	write_gz(p, text, sizeof(text) - 1);
	check_lines(p);
	unlink(p);
}

Test(reader, long_line_across_chunks)
{
	size_t n = (1u << 20) + 17;
	char *buf = malloc(n + 3), *line;
	char *p = tmp_path();
	struct frr_reader *r;
	size_t len;

	memset(buf, 'x', n);
	memcpy(buf + n, "\ny", 3);
	write_gz(p, buf, n + 2);
	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_eq(len, n);
	cr_assert_eq(line[n - 1], 'x');
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_str_eq(line, "y");
	frr_reader_close(r);
	free(buf);
	unlink(p);
}

Test(reader, bytes_and_short_read)
{
	unsigned char data[300000], got[300000];
	char *p = tmp_path();
	struct frr_reader *r;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 3);
	write_gz(p, data, sizeof(data));
	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_bytes(r, got, 16), 0);
	cr_assert_eq(frr_reader_bytes(r, got + 16, sizeof(data) - 16), 0);
	cr_assert_arr_eq(got, data, sizeof(data));
	cr_assert_eq(frr_reader_offset(r), sizeof(data));
	cr_assert_eq(frr_reader_bytes(r, got, 1), -EIO);
	frr_reader_close(r);
	unlink(p);
}

Test(reader, truncated_gzip_is_an_error)
{
	unsigned char data[200000], *gzbuf;
	char *p = tmp_path(), *line;
	struct frr_reader *r;
	FILE *f;
	long sz;
	size_t len;
	int rc;

	/* incompressible-ish so the cut lands inside the deflate stream */
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)((i * 2654435761u) >> 13);
	write_gz(p, data, sizeof(data));
	f = fopen(p, "rb");
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	gzbuf = malloc((size_t)sz);
	cr_assert_eq(fread(gzbuf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	write_plain(p, gzbuf, (size_t)sz / 2);

	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_bytes(r, data, sizeof(data)), -EIO);
	frr_reader_close(r);

	cr_assert_eq(frr_reader_open(p, &r), 0);
	while ((rc = frr_reader_line(r, &line, &len)) == 1)
		;
	cr_assert_eq(rc, -EIO);
	frr_reader_close(r);
	free(gzbuf);
	unlink(p);
}

Test(reader, empty_and_missing)
{
	char *p = tmp_path(), *line;
	struct frr_reader *r;
	size_t len;

	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 0);
	cr_assert_eq(frr_reader_bytes(r, &len, 1), -EIO);
	frr_reader_close(r);
	unlink(p);
	cr_assert_eq(frr_reader_open("/nonexistent/frr-reader", &r), -ENOENT);
}

Test(reader, fail_names_position)
{
	char *p = tmp_path(), *line;
	struct frr_reader *r;
	size_t len;

	write_plain(p, text, sizeof(text) - 1);
	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_fail(r, "expected %s", "a header"), -EINVAL);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_eq(frr_reader_fail(r, "expected %d fields", 3), -EINVAL);
	frr_reader_close(r);
	unlink(p);
}

/* stderr captured by criterion contains needle */
static void stderr_has(const char *needle)
{
	char buf[4096] = { 0 };
	FILE *f;

	fflush(stderr);
	f = cr_get_redirected_stderr();
	fread(buf, 1, sizeof(buf) - 1, f);
	cr_assert_not_null(strstr(buf, needle), "no '%s' in: %s", needle, buf);
}

Test(reader, read_short_and_end, .init = cr_redirect_stderr)
{
	char *p = tmp_path(), got[64];
	struct frr_reader *r;
	size_t n;

	write_gz(p, text, sizeof(text) - 1);
	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_read(r, got, 5, &n), 0);
	cr_assert_eq(n, 5);
	cr_assert_eq(frr_reader_end(r, "the header"), -EINVAL);
	cr_assert_eq(frr_reader_read(r, got, sizeof(got), &n), 0);
	cr_assert_eq(n, sizeof(text) - 1 - 5); /* short only at the end */
	cr_assert_eq(frr_reader_end(r, "the data"), 0);
	frr_reader_close(r);
	stderr_has(": byte 5: unexpected data after the header");
	unlink(p);
}

/* after bytes, a message gives the byte offset even when lines came
 * before: a line number would point into the text header */
Test(reader, fail_after_bytes_names_offset, .init = cr_redirect_stderr)
{
	char *p = tmp_path(), *line, got[4];
	struct frr_reader *r;
	size_t len;

	write_plain(p, text, sizeof(text) - 1);
	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_eq(frr_reader_bytes(r, got, 3), 0);
	cr_assert_eq(frr_reader_fail(r, "bad value"), -EINVAL);
	cr_assert_eq(frr_reader_oom(r, "a table", 3u << 20), -ENOMEM);
	frr_reader_close(r);
	stderr_has(": byte 12: bad value");
	unlink(p);
}

/* ---- model files (apps/common/modelfile) ------------------------------ */
static const struct frr_model_table model_t[2] = {
	{ .name = "w", .rows = 3, .cols = 2 },
	{ .name = "b", .rows = 1, .cols = 2 },
};

static float model_bad = 0; /* value written at table 0, row 1, col 1 */

static int model_row(void *ctx, int t, uint64_t r, float *out)
{
	(void)ctx;
	out[0] = (float)(t * 10 + (int)r);
	out[1] = t == 0 && r == 1 ? model_bad : 0.5f;
	return 0;
}

static int model_round(const char *tail, size_t n)
{
	char *p = tmp_path();
	float *data[2] = { NULL, NULL };
	FILE *f;
	int rc;

	cr_assert_eq(frr_model_save(p, "app", model_t, 2, model_row, NULL), 0);
	f = fopen(p, "ab");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(tail, 1, n, f), n);
	fclose(f);
	rc = frr_model_load(p, "app", model_t, 2, data);
	if (!rc) {
		cr_assert_float_eq(data[0][2], 1.0f, 0);
		cr_assert_float_eq(data[1][0], 10.0f, 0);
	} else {
		cr_assert_null(data[0]);
		cr_assert_null(data[1]);
	}
	free(data[0]);
	free(data[1]);
	unlink(p);
	return rc;
}

Test(reader, model_round_trip)
{
	model_bad = 0.25f;
	cr_assert_eq(model_round("", 0), 0);
}

Test(reader, model_not_finite, .init = cr_redirect_stderr)
{
	model_bad = NAN;
	cr_assert_eq(model_round("", 0), -EINVAL);
	stderr_has("table w, row 1, column 1: nan is not a finite number");
	model_bad = 0;
}

Test(reader, model_inf, .init = cr_redirect_stderr)
{
	model_bad = INFINITY;
	cr_assert_eq(model_round("", 0), -EINVAL);
	stderr_has("table w, row 1, column 1: inf is not a finite number");
	model_bad = 0;
}

Test(reader, model_trailing_bytes, .init = cr_redirect_stderr)
{
	model_bad = 0;
	cr_assert_eq(model_round("garbage", 7), -EINVAL);
	stderr_has("unexpected data after the last table");
}

Test(reader, model_wrong_shape, .init = cr_redirect_stderr)
{
	struct frr_model_table t[2] = { model_t[0], model_t[1] };
	float *data[2];
	char *p = tmp_path();

	cr_assert_eq(frr_model_save(p, "app", model_t, 2, model_row, NULL), 0);
	t[0].rows = 4;
	cr_assert_eq(frr_model_load(p, "app", t, 2, data), -EINVAL);
	stderr_has(":2: expected 'table w 4 2'");
	unlink(p);
}

/* Found by fuzz_libsvm and fuzz_text: a NUL byte silently ended a line for
 * the C-string parsers (and tripped a compare past a word's end). */
Test(reader, nul_byte_in_line, .init = cr_redirect_stderr)
{
	static const char t[] = "ok\nbad\0tail\n";
	char *p = tmp_path(), *line;
	struct frr_reader *r;
	size_t len;

	write_gz(p, t, sizeof(t) - 1);
	cr_assert_eq(frr_reader_open(p, &r), 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_eq(frr_reader_line(r, &line, &len), -EINVAL);
	frr_reader_close(r);
	stderr_has(":2: NUL byte in a text line");
	unlink(p);
}

/* Every line of the whole file, each ending in '\n', concatenated. */
static size_t all_lines(struct frr_reader *r, char *out)
{
	size_t n = 0, len;
	char *line;

	while (frr_reader_line(r, &line, &len) == 1) {
		memcpy(out + n, line, len);
		n += len;
		out[n++] = '\n';
	}
	return n;
}

/* CRLF, blank lines, a long line and no final newline: splitting at any
 * point (and into any number of ranges) gives every line exactly once,
 * in order, also when a split falls inside a CRLF or a blank line. */
static const char ranged[] = "1 2 3\r\n\r\n\n44 55 66\n"
			     "7777777777 8888888888 9999999999\r\n\n"
			     "x\ny\r\n\r\nlast line";

static size_t ranges_concat(const char *p, size_t size, int n, char *out)
{
	size_t got = 0;

	for (int k = 0; k < n; k++) {
		struct frr_reader *r;

		cr_assert_eq(frr_reader_open_range(p, size * k / n,
						   size * (k + 1) / n, &r),
			     0);
		got += all_lines(r, out + got);
		frr_reader_close(r);
	}
	return got;
}

Test(reader, ranges_give_every_line_once)
{
	size_t size = sizeof(ranged) - 1, want_n;
	char want[256], got[256];
	char *p = tmp_path();
	struct frr_reader *r;

	write_plain(p, ranged, size);
	cr_assert_eq(frr_reader_open(p, &r), 0);
	want_n = all_lines(r, want);
	frr_reader_close(r);
	/* two ranges split at every byte, then 1 .. size + 1 equal ranges */
	for (size_t at = 0; at <= size; at++) {
		size_t n = 0;

		for (int k = 0; k < 2; k++) {
			cr_assert_eq(frr_reader_open_range(p, k ? at : 0,
							   k ? size : at, &r),
				     0);
			n += all_lines(r, got + n);
			frr_reader_close(r);
		}
		cr_assert_eq(n, want_n, "split at %zu", at);
		cr_assert_eq(memcmp(got, want, n), 0, "split at %zu", at);
	}
	for (int n = 1; n <= (int)size + 1; n++) {
		cr_assert_eq(ranges_concat(p, size, n, got), want_n, "%d", n);
		cr_assert_eq(memcmp(got, want, want_n), 0, "%d ranges", n);
	}
	unlink(p);
}

Test(reader, range_of_gzip_is_not_supported)
{
	char *p = tmp_path();
	struct frr_reader *r = NULL;

	write_gz(p, ranged, sizeof(ranged) - 1);
	cr_assert_eq(frr_reader_open_range(p, 0, 10, &r), -ENOTSUP);
	cr_assert_null(r);
	unlink(p);
}

/* a range's error names the file's line, as a whole-file read would: the
 * range holding byte 9 starts at line 4 (line 3 straddles byte 9) */
Test(reader, range_error_names_the_file_line, .init = cr_redirect_stderr)
{
	static const char lines[] = "1 2\n\n3 4 5\n6 x\n7 8\n";
	char *p = tmp_path(), *line;
	struct frr_reader *r;
	size_t len;

	write_plain(p, lines, sizeof(lines) - 1);
	cr_assert_eq(frr_reader_open_range(p, 9, sizeof(lines) - 1, &r), 0);
	cr_assert_eq(frr_reader_line(r, &line, &len), 1);
	cr_assert_str_eq(line, "6 x");
	cr_assert_eq(frr_reader_lineno(r), 1); /* counted from the range */
	cr_assert_eq(frr_reader_fail(r, "bad field"), -EINVAL);
	frr_reader_close(r);
	stderr_has(":4: bad field");
	unlink(p);
}

/* Issue 24: a UTF-8 BOM is skipped at the start of a file (plain, gzip, a
 * range from byte 0) so every loader sees the same first line; elsewhere it
 * is data, shown as \xHH in a refusal. */
Test(reader, bom_skipped_at_the_start_only, .init = cr_redirect_stderr)
{
	static const char bom[] = "\xef\xbb\xbf"
				  "a 1\n\xef\xbb\xbf"
				  "b 2\n";
	char *p = tmp_path(), *line;
	struct frr_reader *r;
	size_t len;

	for (int mode = 0; mode < 3; mode++) {
		if (mode == 1)
			write_gz(p, bom, sizeof(bom) - 1);
		else
			write_plain(p, bom, sizeof(bom) - 1);
		cr_assert_eq(mode == 2 ? frr_reader_open_range(p, 0, 100, &r)
				       : frr_reader_open(p, &r),
			     0);
		cr_assert_eq(frr_reader_line(r, &line, &len), 1);
		cr_assert_str_eq(line, "a 1", "mode %d", mode);
		cr_assert_eq(len, 3);
		cr_assert_eq(frr_reader_line(r, &line, &len), 1);
		cr_assert_str_eq(line, "\xef\xbb\xbf"
				       "b 2");
		cr_assert_eq(frr_reader_fail(r, "got '%s'", line), -EINVAL);
		frr_reader_close(r);
	}
	stderr_has(":2: got '\\xef\\xbb\\xbfb 2'");
	unlink(p);
}
