// SPDX-License-Identifier: MIT
/* The mf app through `flexrr run` (shm, small inputs): it learns, it is
 * deterministic in BSP across backends, it saves and loads, and bad input
 * fails with a message naming file and line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "test_util.h"

TestSuite(mf_app, .timeout = 240);

#define SYN "--synthetic 1000,300,40000 --rank 4 --synth-noise 0.3"

/* Run 'flexrr ARGS' (stdout and stderr into out); returns the exit code. */
static int flexrr(char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int flexrr(char *out, size_t len, const char *fmt, ...)
{
	char cmd[2048];
	size_t n = 0, got;
	va_list ap;
	FILE *p;
	int st, k;

	k = snprintf(cmd, sizeof(cmd), "%s ", FLEXRR_BIN);
	va_start(ap, fmt);
	vsnprintf(cmd + k, sizeof(cmd) - (size_t)k - 8, fmt, ap);
	va_end(ap);
	strcat(cmd, " 2>&1");
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	while (n < len - 1 && (got = fread(out + n, 1, len - 1 - n, p)) > 0)
		n += got;
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The summary line, with what legitimately differs (time, backend) cut. */
static void summary(const char *out, char *line, size_t len)
{
	const char *s = strstr(out, "flexrr: done ");
	char *t;

	cr_assert_not_null(s, "no summary line in:\n%s", out);
	snprintf(line, len, "%.*s", (int)strcspn(s, "\n"), s);
	if ((t = strstr(line, " backend=")))
		memmove(t, t + strcspn(t + 1, " ") + 1,
			strlen(t + strcspn(t + 1, " ") + 1) + 1);
	if ((t = strstr(line, " time_s=")))
		memmove(t, t + strcspn(t + 1, " ") + 1,
			strlen(t + strcspn(t + 1, " ") + 1) + 1);
}

static double metric(const char *out, const char *name)
{
	const char *s = strstr(out, "flexrr: done ");
	char key[64];

	cr_assert_not_null(s, "no summary line in:\n%s", out);
	snprintf(key, sizeof(key), " %s=", name);
	s = strstr(s, key);
	cr_assert_not_null(s, "no %s in:\n%s", name, out);
	return strtod(s + strlen(key), NULL);
}

/*
 * A rank-4 truth with noise sigma = 0.3 and signal standard deviation 1:
 * predicting the mean gives RMSE sqrt(1 + 0.09) = 1.04, the truth 0.3.  A
 * model missing a fraction f of the signal variance has RMSE at least
 * sqrt(0.09 + f): train RMSE (the error before each step of the last pass,
 * a little above the post-pass error) under 1.25 sigma = 0.375 means
 * f < 0.05, i.e. SGD through the runtime recovered 95% of the structure;
 * held-out under 1.5 sigma shows it generalizes.
 */
Test(mf_app, learns_low_rank_truth)
{
	static char out[1 << 16];
	double train, test;

	/* 30 clocks even under FLEXRR_TEST_QUICK: the job takes well under a
	 * second, and fewer clocks do not reach the bar */
	cr_assert_eq(
	    flexrr(out, sizeof(out),
		   "run -n 2 -t 1 --backend shm --clocks 30 -q mf " SYN),
	    0, "%s", out);
	train = metric(out, "train_rmse");
	test = metric(out, "test_rmse");
	cr_assert_lt(train, 1.25 * 0.3, "%s", out);
	cr_assert_lt(test, 1.5 * 0.3, "%s", out);
	/* the summary line ends with the held-out RMSE */
	cr_assert_not_null(strstr(out, "train_rmse="));
	cr_assert_eq(strcspn(strstr(out, "test_rmse="), " \n"),
		     strcspn(strstr(out, "test_rmse="), "\n"));
}

/*
 * SSP must learn too, not diverge (see the read-my-writes of user rows in
 * mf_app.c: without it SGD diverges here).  Stale item rows make it need
 * more clocks than BSP, so the bar is lower: test RMSE under 2 sigma = 0.6
 * still means over 70% of the signal variance explained (predicting the
 * mean gives 1.04).
 */
Test(mf_app, ssp_converges)
{
	static char out[1 << 16];

	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 2 -t 1 --backend shm --mode ssp --slack 2 "
			    "--clocks 30 -q mf " SYN),
		     0, "%s", out);
	cr_assert_lt(metric(out, "test_rmse"), 2 * 0.3, "%s", out);
}

/* BSP, fixed seed, one thread per process: the same summary line on every
 * backend under test (twice on one backend when only one is). */
Test(mf_app, bsp_deterministic_across_backends)
{
	enum frr_tp_backend be[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(be, FRR_TEST_MAX_BACKENDS);
	static char out[1 << 16];
	char first[512] = "", line[512];
	int runs = nb > 1 ? nb : 2;

	for (int k = 0; k < runs; k++) {
		const char *name = frr_tp_backend_name(be[k % nb]);

		cr_assert_eq(flexrr(out, sizeof(out),
				    "run -n 2 -t 1 --backend %s --clocks 8 "
				    "--seed 7 -q mf " SYN,
				    name),
			     0, "%s: %s", name, out);
		summary(out, line, sizeof(line));
		if (!k)
			snprintf(first, sizeof(first), "%s", line);
		else
			cr_assert_str_eq(line, first, "backend %s differs",
					 name);
	}
}

/* A whole file, malloc'ed; *len its size. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;

	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	*len = (size_t)ftell(f);
	rewind(f);
	b = malloc(*len ? *len : 1);
	cr_assert_not_null(b);
	cr_assert_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/* The SGD loop's portable variant (FLEXRR_SIMD=off) is as reproducible as
 * the default one (the same model, bit for bit), and both learn the same
 * model up to rounding (rank 19: a vector tail; where the CPU has no
 * AVX2 + FMA all three runs take the baseline). */
Test(mf_app, simd_off_reproducible_and_close)
{
	static char out[1 << 16];
	char path[3][64];
	double rmse[3];
	char *m[3];
	size_t len[3];

	for (int k = 0; k < 3; k++) {
		int fd;

		snprintf(path[k], sizeof(path[k]), "/tmp/frr-mf-simd-XXXXXX");
		fd = mkstemp(path[k]);
		cr_assert_geq(fd, 0);
		close(fd);
		cr_assert_eq(setenv("FLEXRR_SIMD", k < 2 ? "off" : "auto", 1),
			     0);
		cr_assert_eq(
		    flexrr(out, sizeof(out),
			   "run -n 1 -t 1 --backend shm --clocks 6 "
			   "--seed 3 -q --save %s mf --synthetic "
			   "1000,300,40000 --rank 19 --synth-noise 0.3",
			   path[k]),
		    0, "%s", out);
		rmse[k] = metric(out, "test_rmse");
		m[k] = slurp(path[k], &len[k]);
		unlink(path[k]);
	}
	cr_assert(len[0] == len[1] && !memcmp(m[0], m[1], len[0]),
		  "FLEXRR_SIMD=off: two runs saved different models");
	cr_assert_eq(len[2], len[0]);
	cr_assert(fabs(rmse[0] - rmse[2]) <= 1e-3 * rmse[0],
		  "test RMSE off %.6f vs auto %.6f", rmse[0], rmse[2]);
	for (int k = 0; k < 3; k++)
		free(m[k]);
	cr_assert_eq(unsetenv("FLEXRR_SIMD"), 0);
}

Test(mf_app, save_and_load)
{
	static char out[1 << 16];
	char path[64];
	double end, again;
	int fd;

	snprintf(path, sizeof(path), "/tmp/frr-mf-model-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 2 -t 1 --backend shm --clocks 15 -q "
			    "--save %s mf " SYN,
			    path),
		     0, "%s", out);
	end = metric(out, "test_rmse");
	/* one more clock from the saved model starts where it ended; from
	 * scratch one clock is far worse */
	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 2 -t 1 --backend shm --clocks 1 -q mf " SYN
			    " --load %s --lr 0.001",
			    path),
		     0, "%s", out);
	again = metric(out, "test_rmse");
	cr_assert_lt(again, end + 0.02, "%s", out);
	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 1 -t 1 --backend shm --clocks 1 -q mf " SYN
			    " --lr 0.001"),
		     0, "%s", out);
	cr_assert_gt(metric(out, "test_rmse"), end + 0.3, "%s", out);
	/* a model of another shape is refused, naming the file */
	cr_assert_neq(flexrr(out, sizeof(out),
			     "run -n 1 --backend shm --clocks 1 -q mf "
			     "--synthetic 1000,300,40000 --rank 5 --load %s",
			     path),
		      0);
	cr_assert_not_null(strstr(out, path), "%s", out);
	cr_assert_not_null(strstr(out, "--rank"), "%s", out);
	unlink(path);
}

static void write_file(const char *path, const char *text, int gz)
{
	if (gz) {
		gzFile g = gzopen(path, "wb");

		cr_assert_not_null(g);
		gzwrite(g, text, (unsigned)strlen(text));
		gzclose(g);
	} else {
		FILE *f = fopen(path, "w");

		cr_assert_not_null(f);
		fputs(text, f);
		fclose(f);
	}
}

/* Ratings of a planted rank-1 model, in Netflix format, gzip: the app reads
 * them and learns. */
Test(mf_app, netflix_gzip_file)
{
	static char out[1 << 16], text[1 << 20];
	char path[64];
	size_t n = 0;

	snprintf(path, sizeof(path), "/tmp/frr-mf-nf-%d.gz", (int)getpid());
	for (int i = 1; i <= 60; i++) {
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%d:\n", i);
		for (int u = 1; u <= 300; u++)
			if ((u * 7 + i * 13) % 3) /* two thirds rated */
				n += (size_t)snprintf(
				    text + n, sizeof(text) - n,
				    "%d,%d,2005-01-01\n", 1000 + u,
				    1 + (u % 5 + i % 5) % 5);
	}
	write_file(path, text, 1);
	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 2 -t 1 --backend shm --clocks 20 -q mf "
			    "--data %s --rank 4 --lr 0.02",
			    path),
		     0, "%s", out);
	/* ratings spread 1..5 (sd ~1.4); the planted structure is learnable */
	cr_assert_lt(metric(out, "test_rmse"), 0.8, "%s", out);
	unlink(path);
}

/* A ratings text of n triples: sparse raw ids, users in no order (so
 * every user's ratings are spread over every byte range). */
static size_t triples_text(char *text, size_t cap, int n, int salt)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(salt + 1);
	size_t len = 0;

	for (int j = 0; j < n && len + 64 < cap; j++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		len += (size_t)snprintf(text + len, cap - len, "%u %u %.1f\n",
					(unsigned)(x >> 40) % 1500 * 13 + 2,
					(unsigned)(x >> 20) % 200 + 7,
					1 + (double)((x >> 8) % 9) / 2);
	}
	return len;
}

/* BSP, the same seed: reading the files in byte ranges (default) gives the
 * same summary line as every process reading them whole, for one file on 2
 * processes and two files on 3 (the pieces are joined in file order). */
Test(mf_app, pieces_equal_whole_file)
{
	static char out[1 << 16], text[1 << 20];
	char path[2][64], whole[512], line[512];

	for (int f = 0; f < 2; f++) {
		snprintf(path[f], sizeof(path[f]), "/tmp/frr-mf-piece%d-%d.txt",
			 f, (int)getpid());
		triples_text(text, sizeof(text), 20000, f);
		write_file(path[f], text, 0);
	}
	for (int c = 0; c < 2; c++) {
		const char *files = c ? "--data %s --data %s" : "--data %s";
		char args[256], cmd[512];

		snprintf(args, sizeof(args), files, path[0], path[1]);
		snprintf(cmd, sizeof(cmd),
			 "run -n %d -t 1 --backend shm --clocks 6 --seed 5 -q "
			 "mf %s --rank 4",
			 2 + c, args);
		cr_assert_eq(flexrr(out, sizeof(out), "%s --read whole", cmd),
			     0, "%s", out);
		summary(out, whole, sizeof(whole));
		setenv("FLEXRR_LOG", "info", 1);
		cr_assert_eq(flexrr(out, sizeof(out), "%s --read pieces", cmd),
			     0, "%s", out);
		unsetenv("FLEXRR_LOG");
		cr_assert_not_null(strstr(out, "read in"), "%s", out);
		summary(out, line, sizeof(line));
		cr_assert_str_eq(line, whole, "%s: pieces differ", args);
	}
	unlink(path[0]);
	unlink(path[1]);
}

/* Files that cannot be split (gzip; the Netflix format, whose rating lines
 * do not name their movie) say so and are read whole: the same result as
 * the plain file in pieces. */
Test(mf_app, unsplittable_files_read_whole)
{
	static char out[1 << 16], text[1 << 20];
	char plain[64], gz[64], nf[64], a[512], b[512];

	snprintf(plain, sizeof(plain), "/tmp/frr-mf-pl-%d.txt", (int)getpid());
	snprintf(gz, sizeof(gz), "/tmp/frr-mf-pl-%d.gz", (int)getpid());
	snprintf(nf, sizeof(nf), "/tmp/frr-mf-nf2-%d.txt", (int)getpid());
	triples_text(text, sizeof(text), 20000, 3);
	write_file(plain, text, 0);
	write_file(gz, text, 1);
	write_file(nf,
		   "1:\n10,3,2005-01-01\n11,4,2005-01-01\n2:\n"
		   "10,2,2005-01-02\n12,5,2005-01-02\n",
		   0);
	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 2 -t 1 --backend shm --clocks 4 --seed 3 "
			    "-q mf --data %s --rank 4",
			    plain),
		     0, "%s", out);
	summary(out, a, sizeof(a));
	setenv("FLEXRR_LOG", "info", 1);
	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 2 -t 1 --backend shm --clocks 4 --seed 3 "
			    "-q mf --data %s --rank 4",
			    gz),
		     0, "%s", out);
	cr_assert_not_null(strstr(out, "gzip input cannot be split"), "%s",
			   out);
	summary(out, b, sizeof(b));
	cr_assert_str_eq(a, b);
	cr_assert_eq(flexrr(out, sizeof(out),
			    "run -n 2 -t 1 --backend shm --clocks 2 -q mf "
			    "--data %s --rank 2",
			    nf),
		     0, "%s", out);
	unsetenv("FLEXRR_LOG");
	cr_assert_not_null(strstr(out, "the Netflix format cannot be split"),
			   "%s", out);
	unlink(plain);
	unlink(gz);
	unlink(nf);
}

Test(mf_app, bad_input_names_file_and_line)
{
	static char out[1 << 16];
	char path[64];

	snprintf(path, sizeof(path), "/tmp/frr-mf-bad-%d.txt", (int)getpid());
	write_file(path, "1 2 3\n2 3 4\n3 4 five\n", 0);
	cr_assert_neq(flexrr(out, sizeof(out),
			     "run -n 2 --backend shm --clocks 2 -q mf --data "
			     "%s --read whole",
			     path),
		      0);
	cr_assert_not_null(strstr(out, ":3:"), "%s", out);
	cr_assert_not_null(strstr(out, "numeric rating"), "%s", out);
	/* read in pieces: the line is still the file's (rank 1's piece
	 * starts at line 3), and only the rank that read it reports it */
	cr_assert_neq(
	    flexrr(out, sizeof(out),
		   "run -n 2 --backend shm --clocks 2 -q mf --data %s", path),
	    0);
	cr_assert_not_null(strstr(out, ":3: expected"), "%s", out);
	cr_assert_null(strstr(out, "after byte"), "%s", out);
	cr_assert_not_null(strstr(out, "'3 4 five'"), "%s", out);
	cr_assert_null(strstr(out, "rendezvous"), "%s", out);
	write_file(path, "", 0);
	cr_assert_neq(
	    flexrr(out, sizeof(out),
		   "run -n 1 --backend shm --clocks 2 -q mf --data %s", path),
	    0);
	cr_assert_not_null(strstr(out, "no ratings"), "%s", out);
	unlink(path);
	cr_assert_neq(flexrr(out, sizeof(out),
			     "run -n 1 --backend shm -q mf --synthetic 10,10"),
		      0);
	cr_assert_not_null(strstr(out, "USERS,ITEMS,RATINGS"), "%s", out);
	cr_assert_neq(
	    flexrr(out, sizeof(out), "run -n 1 --backend shm -q mf --rank 4"),
	    0);
	cr_assert_not_null(strstr(out, "--data"), "%s", out);
}

/* --read chooses how files are read: with generated data it is a mistake
 * to say so, not an option to ignore */
Test(mf_app, read_with_synthetic_is_an_error)
{
	static char out[1 << 16];

	for (int whole = 0; whole < 2; whole++) {
		cr_assert_neq(flexrr(out, sizeof(out),
				     "run -n 1 --backend shm --clocks 1 -q mf "
				     "--synthetic 100,30,400 --read %s",
				     whole ? "whole" : "pieces"),
			      0);
		cr_assert_not_null(strstr(out, "--read applies to --data "
					       "files only"),
				   "%s", out);
		cr_assert_not_null(strstr(out, "drop --read"), "%s", out);
	}
}

/* the generator's options do nothing to a file: said, not ignored (the
 * options are checked before any file is opened) */
Test(mf_app, synth_options_with_data_are_an_error)
{
	static char out[1 << 16];

	cr_assert_neq(
	    flexrr(out, sizeof(out),
		   "run -n 1 --backend shm --clocks 1 -q mf "
		   "--data /nonexistent/ratings.txt --synth-skew 0.2"),
	    0);
	cr_assert_not_null(strstr(out, "--synth-skew applies to --synthetic "
				       "data only"),
			   "%s", out);
	cr_assert_null(strstr(out, "nonexistent"), "%s", out);
}

Test(mf_app, help_lists_every_option)
{
	static char out[1 << 16];
	const char *opts[] = {
		"--data",	"--format",	 "--synthetic",
		"--synth-rank", "--synth-noise", "--synth-signal",
		"--synth-mean", "--synth-skew",	 "--data-seed",
		"--rank",	"--lr",		 "--lr-decay",
		"--reg",	"--bias-reg",	 "--test-frac",
		"--load",	"--steps",	 "--read"
	};

	cr_assert_eq(flexrr(out, sizeof(out), "run mf --help"), 0, "%s", out);
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
		cr_assert_not_null(strstr(out, opts[k]), "%s missing", opts[k]);
}
