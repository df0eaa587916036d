// SPDX-License-Identifier: MIT
/* MF loaders: every format, plain and gzip, detected or told; bad input
 * fails with file, line (or byte offset) and what was expected. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "flexrr/log.h"
#include "mf/mf.h"
#include "test_util.h"

TestSuite(mf_load, .timeout = 60);

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/frr-mf-load-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Write text to DIR/name (gzip-compressed if gz); returns the path. */
static const char *put(const char *name, const char *text, int gz)
{
	static char path[8][128];
	static int next;
	char *p = path[next++ % 8];
	size_t n = strlen(text);

	snprintf(p, 128, "%s/%s", dir, name);
	if (gz) {
		gzFile g = gzopen(p, "wb");

		cr_assert_not_null(g);
		if (n)
			cr_assert_eq(gzwrite(g, text, (unsigned)n), (int)n);
		gzclose(g);
	} else {
		FILE *f = fopen(p, "wb");

		cr_assert_not_null(f);
		cr_assert_eq(fwrite(text, 1, n, f), n);
		fclose(f);
	}
	return p;
}

/* Load one file, capturing what is logged to stderr into msg. */
static int load(const char *path, enum mf_format fmt, struct mf_data *d,
		char *msg, size_t len)
{
	int saved, ret;
	FILE *cap = frr_test_stderr_begin(&saved);

	cr_assert_not_null(cap);

	ret = mf_load_files(&path, 1, fmt, d);
	frr_test_stderr_end(cap, saved, msg, len);
	return ret;
}

/* the same 5 ratings in every format: raw users 7, 3, 1000000 and items
 * 20, 10; dense ids follow raw id order */
static const char netflix[] = "10:\n7,4,2005-09-06\n3,5,2004-01-01\n"
			      "20:\n7,2,2005-09-06\n1000000,1,2003-02-02\n"
			      "3,3,2005-01-01\n";
static const char ml_dat[] = "7::10::4::1\n3::10::5::1\n7::20::2::1\n"
			     "1000000::20::1::1\n3::20::3::1\n";
static const char ml_csv[] = "userId,movieId,rating,timestamp\n"
			     "7,10,4.0,1\n3,10,5.0,1\n7,20,2.0,1\n"
			     "1000000,20,1.0,1\n3,20,3.0,1\n";
static const char triples[] = "# user item rating\n7 10 4\n3\t10  5\n"
			      "7 20 2\n1000000 20 1\n3 20 3\n";

/* The data every format above must give, as (user, item, rating), in
 * file order. */
static void check_data(const struct mf_data *d)
{
	static const struct mf_rating want[] = {
		{ 1, 0, 4 }, { 0, 0, 5 }, { 1, 1, 2 }, { 2, 1, 1 }, { 0, 1, 3 },
	};
	double sum = 0;

	cr_assert_eq(d->n, 5);
	cr_assert_eq(d->nusers, 3);
	cr_assert_eq(d->nitems, 2);
	for (int j = 0; j < 5; j++) {
		/* Netflix lists by movie, the others by line: compare as sets
		 */
		int found = 0;

		for (int k = 0; k < 5; k++)
			found += d->ratings[k].user == want[j].user &&
				 d->ratings[k].item == want[j].item &&
				 d->ratings[k].r == want[j].r;
		cr_assert_eq(found, 1, "rating %d (%u, %u, %g)", j,
			     want[j].user, want[j].item, want[j].r);
		sum += want[j].r;
	}
	cr_assert_float_eq(d->mean, sum / 5, 1e-9);
}

static void check_format(const char *text, enum mf_format fmt)
{
	struct mf_data d;
	char msg[1024];

	make_dir();
	for (int gz = 0; gz <= 1; gz++) {
		const char *p = put(gz ? "r.gz" : "r.txt", text, gz);

		/* told, and detected */
		cr_assert_eq(load(p, fmt, &d, msg, sizeof(msg)), 0, "%s", msg);
		check_data(&d);
		mf_data_free(&d);
		cr_assert_eq(load(p, MF_FMT_AUTO, &d, msg, sizeof(msg)), 0,
			     "%s", msg);
		check_data(&d);
		mf_data_free(&d);
	}
	remove_dir();
}

Test(mf_load, netflix)
{
	check_format(netflix, MF_FMT_NETFLIX);
}
Test(mf_load, movielens_dat)
{
	check_format(ml_dat, MF_FMT_ML_DAT);
}
/* --format movielens covers ratings.csv too */
Test(mf_load, movielens_csv)
{
	check_format(ml_csv, MF_FMT_ML_DAT);
}
Test(mf_load, triples)
{
	check_format(triples, MF_FMT_TRIPLES);
}

Test(mf_load, format_names)
{
	enum mf_format f;

	cr_assert_eq(mf_format_parse("netflix", &f), 0);
	cr_assert_eq(f, MF_FMT_NETFLIX);
	cr_assert_eq(mf_format_parse("movielens", &f), 0);
	cr_assert_eq(mf_format_parse("triples", &f), 0);
	cr_assert_eq(f, MF_FMT_TRIPLES);
	cr_assert_eq(mf_format_parse("csv", &f), -EINVAL);
}

Test(mf_load, several_files)
{
	struct mf_data d;
	const char *paths[2];

	make_dir();
	paths[0] = put("a.txt", "7 10 4\n3 10 5\n7 20 2\n", 0);
	paths[1] = put("b.gz", "1000000 20 1\n3 20 3\n", 1);
	cr_assert_eq(mf_load_files(paths, 2, MF_FMT_AUTO, &d), 0);
	check_data(&d);
	mf_data_free(&d);
	remove_dir();
}

/* A bad file must fail (never crash) and the message must contain each
 * of the wanted substrings. */
static void check_bad(const char *name, const char *text, int gz,
		      enum mf_format fmt, const char *want1, const char *want2)
{
	struct mf_data d;
	char msg[2048];
	const char *p;
	int ret;

	make_dir();
	p = put(name, text, gz);
	ret = load(p, fmt, &d, msg, sizeof(msg));
	cr_assert_lt(ret, 0, "loading bad file '%s' succeeded", name);
	cr_assert_not_null(strstr(msg, want1), "message '%s' lacks '%s'", msg,
			   want1);
	if (want2)
		cr_assert_not_null(strstr(msg, want2),
				   "message '%s' lacks '%s'", msg, want2);
	remove_dir();
}

Test(mf_load, text_rating)
{
	check_bad("t.txt", "1 2 3\n1 3 abc\n", 0, MF_FMT_AUTO,
		  "t.txt:2:", "numeric rating");
	check_bad("n.txt", "1:\n5,4,2005\n6,four,2005\n", 0, MF_FMT_NETFLIX,
		  "n.txt:3:", "numeric rating");
	check_bad("m.dat", "1::2::3::4\n1::2\n", 0, MF_FMT_ML_DAT,
		  "m.dat:2:", "USER::ITEM::RATING");
	check_bad("c.csv", "userId,movieId,rating\n1,2,x\n", 0, MF_FMT_AUTO,
		  "c.csv:2:", "numeric rating");
	check_bad("g.gz", "1 2 3\n\n1 2 3.5x\n", 1, MF_FMT_AUTO,
		  "g.gz:3:", "numeric rating");
	check_bad("inf.txt", "1 2 inf\n", 0, MF_FMT_AUTO,
		  "inf.txt:1:", "numeric rating");
}

/* Issue 24: a field the format does not have, or a rating it cannot
 * have, is refused with file:line, not ignored. */
Test(mf_load, extra_fields_and_ratings_out_of_range)
{
	check_bad("x.txt", "1 2 3\n3 20 3 4\n", 0, MF_FMT_AUTO,
		  "x.txt:2:", "a 4th field is not data");
	check_bad("x.dat", "1::2::3::4::5\n", 0, MF_FMT_AUTO,
		  "x.dat:1:", "with nothing after it");
	check_bad("n9.txt", "1:\n5,4,2005\n6,9,2005\n", 0, MF_FMT_AUTO,
		  "n9.txt:3:", "rating 9 out of range");
	check_bad("nh.txt", "1:\n5,3.5,2005\n", 0, MF_FMT_NETFLIX,
		  "nh.txt:2:", "whole stars 1..5");
	check_bad("m0.csv", "userId,movieId,rating\n1,2,0\n", 0, MF_FMT_AUTO,
		  "m0.csv:2:", "rating 0 out of range");
	check_bad("m6.dat", "1::2::6::1\n", 0, MF_FMT_AUTO,
		  "m6.dat:1:", "movielens ratings are stars 0.5..5");
}

/* A UTF-8 BOM opens a file the same way in every format: skipped; an
 * invisible character elsewhere is shown as \xHH in the refusal. */
Test(mf_load, bom_skipped_and_refusals_readable)
{
	static const char *const with_bom[] = {
		"\xef\xbb\xbf"
		"7 10 4\n3 10 5\n7 20 2\n1000000 20 1\n3 20 3\n",
		"\xef\xbb\xbf"
		"7::10::4::1\n3::10::5::1\n7::20::2::1\n"
		"1000000::20::1::1\n3::20::3::1\n",
		"\xef\xbb\xbfuserId,movieId,rating,timestamp\n7,10,4.0,1\n"
		"3,10,5.0,1\n7,20,2.0,1\n1000000,20,1.0,1\n3,20,3.0,1\n",
		"\xef\xbb\xbf"
		"10:\n7,4,2005-09-06\n3,5,2004-01-01\n20:\n"
		"7,2,2005-09-06\n1000000,1,2003-02-02\n3,3,2005-01-01\n",
	};

	for (size_t k = 0; k < sizeof(with_bom) / sizeof(with_bom[0]); k++)
		check_format(with_bom[k], MF_FMT_AUTO);
	check_bad("z.txt",
		  "1 2 \xe2\x80\x8b"
		  "3\n",
		  0, MF_FMT_AUTO, "z.txt:1:", "'1 2 \\xe2\\x80\\x8b3'");
	check_bad("b2.txt",
		  "1 2 3\n\xef\xbb\xbf"
		  "1 3 4\n",
		  0, MF_FMT_AUTO, "b2.txt:2:", "\\xef\\xbb\\xbf");
}

Test(mf_load, ids_out_of_range)
{
	check_bad("big.txt", "1 2 3\n4294967296 2 3\n", 0, MF_FMT_AUTO,
		  "big.txt:2:", "user id '4294967296' out of range");
	check_bad("bigi.txt", "1::99999999999999999999999::3\n", 0, MF_FMT_AUTO,
		  "bigi.txt:1:", "item id");
	check_bad("bigm.txt", "5000000000:\n1,2,2005\n", 0, MF_FMT_NETFLIX,
		  "bigm.txt:1:", "movie id");
	check_bad("neg.txt", "-1 2 3\n", 0, MF_FMT_TRIPLES,
		  "neg.txt:1:", "user id");
}

Test(mf_load, netflix_without_movie)
{
	check_bad("nm.txt", "5,4,2005\n", 0, MF_FMT_NETFLIX,
		  "nm.txt:1:", "MOVIE_ID:");
}

Test(mf_load, empty_files)
{
	check_bad("e.txt", "", 0, MF_FMT_AUTO, "e.txt", "no ratings");
	check_bad("e.gz", "", 1, MF_FMT_AUTO, "e.gz", "no ratings");
	check_bad("c.txt", "# only a comment\n\n", 0, MF_FMT_TRIPLES, "c.txt",
		  "no ratings");
	check_bad("h.csv", "userId,movieId,rating,timestamp\n", 0, MF_FMT_AUTO,
		  "h.csv", "no ratings");
}

Test(mf_load, missing_file)
{
	struct mf_data d;
	char msg[1024];

	cr_assert_lt(
	    load("/nonexistent/r.txt", MF_FMT_AUTO, &d, msg, sizeof(msg)), 0);
	cr_assert_not_null(strstr(msg, "/nonexistent/r.txt"), "%s", msg);
}

Test(mf_load, truncated_gzip)
{
	struct mf_data d;
	char text[64 * 1024], msg[2048], path[160];
	FILE *f;
	long size;
	size_t k = 0;

	/* enough lines that the cut falls inside the compressed stream */
	for (int j = 0; k < sizeof(text) - 32; j++)
		k += (size_t)snprintf(text + k, sizeof(text) - k, "%d %d %d\n",
				      j, j * 7 % 1000, j % 5 + 1);
	make_dir();
	snprintf(path, sizeof(path), "%s", put("cut.gz", text, 1));
	f = fopen(path, "rb+");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	cr_assert_eq(ftruncate(fileno(f), size / 2), 0);
	fclose(f);
	cr_assert_lt(load(path, MF_FMT_AUTO, &d, msg, sizeof(msg)), 0);
	cr_assert_not_null(strstr(msg, "cut.gz"), "%s", msg);
	cr_assert_not_null(strstr(msg, "byte"), "%s", msg);
	remove_dir();
}

/* Dense ids of sparse raw ids (the sort path) match the direct path. */
Test(mf_load, sparse_ids)
{
	struct mf_data d;
	char msg[1024];

	make_dir();
	cr_assert_eq(load(put("s.txt",
			      "4000000000 10 1\n5 4000000001 2\n"
			      "4000000000 4000000001 3\n",
			      0),
			  MF_FMT_AUTO, &d, msg, sizeof(msg)),
		     0, "%s", msg);
	cr_assert_eq(d.nusers, 2);
	cr_assert_eq(d.nitems, 2);
	cr_assert_eq(d.ratings[0].user, 1);
	cr_assert_eq(d.ratings[0].item, 0);
	cr_assert_eq(d.ratings[1].user, 0);
	cr_assert_eq(d.ratings[1].item, 1);
	mf_data_free(&d);
	remove_dir();
}

/* A partition's training order (issue 11): each user's ratings together,
 * users in a seeded random order, nothing lost or repeated. */
static int by_user_item(const void *a, const void *b)
{
	const struct mf_rating *x = a, *y = b;

	if (x->user != y->user)
		return x->user < y->user ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

Test(mf_load, partition_order_groups_users)
{
	enum { NU = 60, N = 6000 };
	static struct mf_rating r[N], a[N], b[N];
	struct mf_rng g = { 7 };
	uint32_t seen[NU] = { 0 }, prev = UINT32_MAX, runs = 0, ascending = 1;

	for (uint32_t j = 0; j < N; j++)
		r[j] = (struct mf_rating){ (uint32_t)mf_rng_below(&g, NU), j,
					   (float)(j % 5) };
	memcpy(a, r, sizeof(r));
	memcpy(b, r, sizeof(r));
	cr_assert_eq(mf_order_by_user(a, N, NU, 42), 0);
	cr_assert_eq(mf_order_by_user(b, N, NU, 42), 0);
	cr_assert_eq(memcmp(a, b, sizeof(a)), 0, "not deterministic");
	for (uint32_t j = 0; j < N; j++) {
		if (a[j].user == prev)
			continue;
		cr_assert_eq(seen[a[j].user], 0,
			     "user %u's ratings are not together", a[j].user);
		seen[a[j].user] = 1;
		if (prev != UINT32_MAX && a[j].user < prev)
			ascending = 0;
		prev = a[j].user;
		runs++;
	}
	cr_assert_eq(runs, NU);
	cr_assert_eq(ascending, 0, "users left in id order");
	qsort(a, N, sizeof(*a), by_user_item);
	qsort(r, N, sizeof(*r), by_user_item);
	cr_assert_eq(memcmp(a, r, sizeof(a)), 0, "ratings lost or changed");
	b[N / 2].user = NU;
	cr_assert_eq(mf_order_by_user(b, N, NU, 42), -EINVAL);
}

/* ---- model files ------------------------------------------------------- */
static const struct mf_model_hdr model_shape = {
	.magic = MF_MODEL_MAGIC,
	.rank = 2,
	.cols = 3,
	.nusers = 2,
	.nitems = 1,
	.mu = 3.5,
};

/* A model of model_shape with value 'bad' at float index at (at < 0: none)
 * and extra trailing bytes; returns its path. */
static const char *put_model(const struct mf_model_hdr *h, int at, float bad,
			     size_t extra, size_t cut)
{
	static char p[128];
	float v[9];
	FILE *f;

	for (int j = 0; j < 9; j++)
		v[j] = j == at ? bad : 0.25f * (float)j;
	snprintf(p, sizeof(p), "%s/model", dir);
	f = fopen(p, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(h, sizeof(*h), 1, f), 1);
	cr_assert_eq(fwrite(v, 1, sizeof(v) - cut, f), sizeof(v) - cut);
	for (size_t j = 0; j < extra; j++)
		fputc('x', f);
	fclose(f);
	return p;
}

static int model_read(const char *path, float **rows, char *msg, size_t len)
{
	int saved, ret;
	FILE *cap = frr_test_stderr_begin(&saved);

	cr_assert_not_null(cap);

	ret = mf_model_read(path, &model_shape, rows);
	frr_test_stderr_end(cap, saved, msg, len);
	return ret;
}

Test(mf_load, model_round_trip)
{
	char msg[1024];
	float *rows;

	make_dir();
	cr_assert_eq(model_read(put_model(&model_shape, -1, 0, 0, 0), &rows,
				msg, sizeof(msg)),
		     0, "%s", msg);
	cr_assert_float_eq(rows[8], 2.0f, 0);
	free(rows);
	remove_dir();
}

/* each damaged model fails with the file, the byte and what is wrong */
Test(mf_load, model_damaged)
{
	struct mf_model_hdr h = model_shape;
	char msg[1024];
	float *rows;

	make_dir();
	cr_assert_eq(
	    model_read(put_model(&h, 4, NAN, 0, 0), &rows, msg, sizeof(msg)),
	    -EINVAL);
	cr_assert_not_null(strstr(msg, "model: byte 76: user row 1, column 1: "
				       "nan is not a finite number"),
			   "%s", msg);
	cr_assert_null(rows);
	cr_assert_eq(model_read(put_model(&h, 7, -INFINITY, 0, 0), &rows, msg,
				sizeof(msg)),
		     -EINVAL);
	cr_assert_not_null(strstr(msg, "item row 0, column 1: -inf"), "%s",
			   msg);
	cr_assert_eq(
	    model_read(put_model(&h, -1, 0, 1, 0), &rows, msg, sizeof(msg)),
	    -EINVAL);
	cr_assert_not_null(strstr(msg, "model: byte 76: unexpected data after "
				       "the last item row"),
			   "%s", msg);
	cr_assert_eq(
	    model_read(put_model(&h, -1, 0, 0, 1), &rows, msg, sizeof(msg)),
	    -EIO);
	cr_assert_not_null(strstr(msg, "truncated"), "%s", msg);
	h.mu = NAN;
	cr_assert_eq(
	    model_read(put_model(&h, -1, 0, 0, 0), &rows, msg, sizeof(msg)),
	    -EINVAL);
	cr_assert_not_null(strstr(msg, "mean rating is nan"), "%s", msg);
	h = model_shape;
	h.nusers = 3;
	cr_assert_eq(
	    model_read(put_model(&h, -1, 0, 0, 0), &rows, msg, sizeof(msg)),
	    -EINVAL);
	cr_assert_not_null(strstr(msg, "model is rank 2 with 3 users"), "%s",
			   msg);
	h = model_shape;
	h.magic[0] = 'X';
	cr_assert_eq(
	    model_read(put_model(&h, -1, 0, 0, 0), &rows, msg, sizeof(msg)),
	    -EINVAL);
	cr_assert_not_null(strstr(msg, "not an mf model"), "%s", msg);
	remove_dir();
}

/* The whole-file load and the joined shards must give identical data and
 * identical partitions (the users' assignment, the held-out split and the
 * shuffled training order all follow from the data). */
static void check_shards_equal(const char *p, int nshards)
{
	struct mf_data whole, joined, sh[8];
	int ret;

	cr_assert_eq(mf_load_files(&p, 1, MF_FMT_AUTO, &whole), 0);
	for (int k = 0; k < nshards; k++) {
		ret = mf_load_shard(&p, 1, MF_FMT_AUTO, k, nshards, &sh[k]);
		cr_assert_eq(ret, 0, "shard %d of %d", k, nshards);
	}
	cr_assert_eq(mf_data_join(sh, nshards, &joined), 0);
	cr_assert_eq(joined.n, whole.n, "%d shards", nshards);
	cr_assert_eq(joined.nusers, whole.nusers);
	cr_assert_eq(joined.nitems, whole.nitems);
	cr_assert_eq(joined.mean, whole.mean);
	cr_assert_eq(memcmp(joined.ratings, whole.ratings,
			    sizeof(*whole.ratings) * whole.n),
		     0, "%d shards", nshards);
	cr_assert_eq(mf_data_assign(&whole, 3), 0);
	cr_assert_eq(mf_data_assign(&joined, 3), 0);
	for (int w = 0; w < 3; w++) {
		struct mf_part a, b;

		cr_assert_eq(mf_data_partition(&whole, w, 5, 0.3, &a), 0);
		cr_assert_eq(mf_data_partition(&joined, w, 5, 0.3, &b), 0);
		cr_assert_eq(a.ntrain, b.ntrain);
		cr_assert_eq(a.ntest, b.ntest);
		cr_assert_eq(a.nusers, b.nusers);
		cr_assert_eq(
		    memcmp(a.train, b.train, sizeof(*a.train) * a.ntrain), 0);
		cr_assert_eq(memcmp(a.test, b.test, sizeof(*a.test) * a.ntest),
			     0);
		cr_assert_eq(
		    memcmp(a.users, b.users, sizeof(*a.users) * a.nusers), 0);
		mf_part_free(&a);
		mf_part_free(&b);
	}
	mf_data_free(&whole);
	mf_data_free(&joined);
}

/* Some 200 ratings per format with CRLF line ends, blank lines and
 * comments, and no final newline: every shard count splits records,
 * CRLFs and blank lines somewhere. */
static char *many_ratings(const char *fmt_line, int header)
{
	size_t cap = 16384, n = 0;
	char *t = malloc(cap);

	cr_assert_not_null(t);
	if (header)
		n += (size_t)snprintf(t, cap, "userId,movieId,rating,ts\r\n");
	for (int j = 0; j < 200; j++) {
		n += (size_t)snprintf(t + n, cap - n, fmt_line,
				      (j * 37) % 53 + 1, (j * 11) % 17 + 100,
				      (double)(j % 9) * 0.5 + 1);
		if (j % 7 == 0)
			n += (size_t)snprintf(t + n, cap - n, "\r\n");
		if (j % 13 == 0)
			n += (size_t)snprintf(t + n, cap - n, "\n# note\n");
		n += (size_t)snprintf(t + n, cap - n, j % 2 ? "\r\n" : "\n");
	}
	t[n - 2] = t[n - 1] == '\n' && t[n - 2] == '\r' ? '\0' : t[n - 2];
	t[n - 1] = '\0';
	return t;
}

Test(mf_load, shards_equal_whole_file)
{
	static const struct {
		const char *line;
		int header;
	} f[] = {
		{ "%d %d %.1f", 0 },
		{ "%d::%d::%.1f::123", 0 },
		{ "%d,%d,%.1f,123", 1 },
	};

	make_dir();
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		char *text = many_ratings(f[i].line, f[i].header);
		const char *p = put("s.txt", text, 0);

		for (int n = 1; n <= 8; n++)
			check_shards_equal(p, n);
		free(text);
	}
	remove_dir();
}

Test(mf_load, unsplittable_inputs_say_so)
{
	struct mf_data d;
	const char *p;
	char msg[1024];
	int saved;
	FILE *cap;

	make_dir();
	frr_log_set_level(FRR_LOG_INFO);
	p = put("n.txt", netflix, 0);
	cap = frr_test_stderr_begin(&saved);
	cr_assert_not_null(cap);
	cr_assert_eq(mf_load_shard(&p, 1, MF_FMT_AUTO, 1, 2, &d), -ENOTSUP);
	p = put("t.gz", triples, 1);
	cr_assert_eq(mf_load_shard(&p, 1, MF_FMT_AUTO, 0, 2, &d), -ENOTSUP);
	frr_test_stderr_end(cap, saved, msg, sizeof(msg));
	frr_log_set_level(FRR_LOG_WARN);
	cr_assert_not_null(strstr(msg, "Netflix format"), "%s", msg);
	cr_assert_not_null(strstr(msg, "gzip input"), "%s", msg);
	remove_dir();
}

/* A piece another process sent (mf_input_gather): one that does not parse
 * as a piece of these files is refused, never read past its length. */
static int gather_edited(const char *const *paths, const void *const *pieces,
			 const size_t *lens, size_t at, const void *val,
			 size_t vlen, size_t cut)
{
	struct mf_input g = { .paths = paths, .npaths = 1, .nparts = 2 };
	uint8_t *copy = malloc(lens[1]);
	const void *b[2] = { pieces[0], copy };
	size_t l[2] = { lens[0], lens[1] - cut };
	int ret;

	memcpy(copy, pieces[1], lens[1]);
	if (vlen)
		memcpy(copy + at, val, vlen);
	ret = mf_input_gather(&g, b, l, 2);
	mf_input_drop(&g);
	free(copy);
	return ret;
}

Test(mf_load, pieces_join_and_hostile_pieces)
{
	struct mf_input in[2];
	struct mf_data whole;
	const void *b[2];
	size_t l[2];
	const char *p;
	char *text;
	uint64_t big = 1u << 30;
	float nan = NAN;
	uint32_t one = 1;

	make_dir();
	text = many_ratings("%d %d %.1f", 0);
	p = put("h.txt", text, 0);
	free(text);
	cr_assert_eq(mf_load_files(&p, 1, MF_FMT_AUTO, &whole), 0);
	for (int k = 0; k < 2; k++) {
		in[k] =
		    (struct mf_input){ .paths = &p, .npaths = 1, .nparts = 2 };
		cr_assert_eq(mf_input_share(&in[k], k, 2, &b[k], &l[k]), 0);
	}
	/* intact: the whole file's data */
	{
		struct mf_input g = { .paths = &p, .npaths = 1, .nparts = 2 };

		cr_assert_eq(mf_input_gather(&g, b, l, 2), 0);
		cr_assert_eq(g.data.n, whole.n);
		cr_assert_eq(g.data.nusers, whole.nusers);
		cr_assert_eq(memcmp(g.data.ratings, whole.ratings,
				    sizeof(*whole.ratings) * whole.n),
			     0);
		mf_input_drop(&g);
	}
	cr_assert_eq(gather_edited(&p, b, l, 0, "BADMAGIC", 8, 0), -EPROTO);
	cr_assert_eq(gather_edited(&p, b, l, 0, NULL, 0, 1), -EPROTO);
	cr_assert_eq(gather_edited(&p, b, l, 0, NULL, 0, l[1] - 4), -EPROTO);
	cr_assert_eq(gather_edited(&p, b, l, 8, &one, 4, 0), -EPROTO);
	cr_assert_eq(gather_edited(&p, b, l, 12, &big, 4, 0), -EPROTO);
	cr_assert_eq(gather_edited(&p, b, l, 16, &big, 8, 0), -EPROTO);
	cr_assert_eq(gather_edited(&p, b, l, 24 + 8, &nan, 4, 0), -EPROTO);
	mf_data_free(&whole);
	mf_input_drop(&in[0]);
	mf_input_drop(&in[1]);
	remove_dir();
}
