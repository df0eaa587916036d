// SPDX-License-Identifier: MIT
/* apps/common/reader: plain and gzip input alike, positions, and errors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

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
