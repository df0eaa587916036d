// SPDX-License-Identifier: MIT
/*
 * Every app's options go through the checked parsers (issue 24, item 4):
 * a table of good and bad values per app, run through each app's
 * check_args in this process; then through `flexrr run`, where every bad
 * value is a usage error (exit 2) before any rank starts.
 */
#include <criterion/criterion.h>

#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

extern const struct frr_app_ops frr_app_toy, frr_app_mf, frr_app_mlr,
    frr_app_lda;

TestSuite(app_opts, .timeout = 120);

struct opt_case {
	const struct frr_app_ops *app;
	const char *args; /* space-separated, after the app's name */
	int ok;
};

#define MF "--synthetic 100,100,1000 "
#define MLR "--data fashion-mnist "
#define LDA "--uci docword.txt "

static const struct opt_case cases[] = {
	{ &frr_app_toy, "", 1 },
	{ &frr_app_toy, "--items 5 --dim 1024 --lr 0 --total 7", 1 },
	{ &frr_app_toy, "--work-us 1e12 --sleep-us 0 --jitter-us 2.5", 1 },
	{ &frr_app_toy, "--items=9 --table-rows 0 --adagrad --check-ssp", 1 },
	{ &frr_app_toy, "--items -1", 0 },
	{ &frr_app_toy, "--items 0", 0 },
	{ &frr_app_toy, "--items 5x", 0 },
	{ &frr_app_toy, "--items 1.5", 0 },
	{ &frr_app_toy, "--dim 4294967297", 0 },
	{ &frr_app_toy, "--dim 1025", 0 },
	{ &frr_app_toy, "--dim 0", 0 },
	{ &frr_app_toy, "--lr nan", 0 },
	{ &frr_app_toy, "--lr inf", 0 },
	{ &frr_app_toy, "--lr -0.1", 0 },
	{ &frr_app_toy, "--lr 0.5junk", 0 },
	{ &frr_app_toy, "--work-us inf", 0 },
	{ &frr_app_toy, "--work-us -1", 0 },
	{ &frr_app_toy, "--sleep-us nan", 0 },
	{ &frr_app_toy, "--jitter-us 1e13", 0 },
	{ &frr_app_toy, "--total 0", 0 },
	{ &frr_app_toy, "--table-rows -5", 0 },
	{ &frr_app_toy, "--bogus 1", 0 },
	{ &frr_app_toy, "stray", 0 },
	{ &frr_app_mf, MF, 1 },
	{ &frr_app_mf, MF "--data-seed 7 --rank 4 --lr 0.01 --reg 0", 1 },
	{ &frr_app_mf, MF "--data-seed 1.5", 0 },
	{ &frr_app_mf, MF "--data-seed -1", 0 },
	{ &frr_app_mf, MF "--data-seed nan", 0 },
	{ &frr_app_mf, MF "--lr nan", 0 },
	{ &frr_app_mf, MF "--lr inf", 0 },
	{ &frr_app_mf, MF "--lr 0", 0 },
	{ &frr_app_mf, MF "--rank 0", 0 },
	{ &frr_app_mf, MF "--rank 4x", 0 },
	{ &frr_app_mf, MF "--test-frac 1", 0 },
	{ &frr_app_mf, MF "--reg -1", 0 },
	{ &frr_app_mf, MF "--steps inf", 0 },
	{ &frr_app_mf, MF "--synth-noise nan", 0 },
	{ &frr_app_mf, "--synthetic 100,100,nan", 0 },
	{ &frr_app_mlr, MLR, 1 },
	{ &frr_app_mlr, MLR "--lr 0.1 --l2 0 --batch 4 --train-limit 10", 1 },
	{ &frr_app_mlr, MLR "--lr nan", 0 },
	{ &frr_app_mlr, MLR "--lr inf", 0 },
	{ &frr_app_mlr, MLR "--lr 0", 0 },
	{ &frr_app_mlr, MLR "--l2 -1", 0 },
	{ &frr_app_mlr, MLR "--l2 1e4", 0 },
	{ &frr_app_mlr, MLR "--batch 0", 0 },
	{ &frr_app_mlr, MLR "--batch 2.5", 0 },
	{ &frr_app_mlr, MLR "--train-limit -1", 0 },
	{ &frr_app_mlr, MLR "--combine max", 0 },
	{ &frr_app_lda, LDA, 1 },
	{ &frr_app_lda, LDA "--topics 5 --alpha 0.5 --beta 0.1 --heldout 0",
	  1 },
	{ &frr_app_lda, LDA "--topics 1", 0 },
	{ &frr_app_lda, LDA "--topics 5.5", 0 },
	{ &frr_app_lda, LDA "--alpha nan", 0 },
	{ &frr_app_lda, LDA "--beta inf", 0 },
	{ &frr_app_lda, LDA "--beta 0", 0 },
	{ &frr_app_lda, LDA "--heldout 0.9", 0 },
	{ &frr_app_lda, LDA "--min-count 0", 0 },
	{ &frr_app_lda, LDA "--max-doc-frac 2", 0 },
	{ &frr_app_lda, LDA "--sampler fast", 0 },
};

/* "app a b c" as argv (pointers into buf); argc. */
static int split(const struct opt_case *c, char *buf, size_t len, char **argv,
		 int max)
{
	int argc = 0;

	snprintf(buf, len, "%s", c->args);
	argv[argc++] = (char *)c->app->name;
	for (char *t = strtok(buf, " "); t && argc < max - 1;
	     t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return argc;
}

Test(app_opts, every_app_checks_its_options)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct opt_case *c = &cases[i];
		char buf[256], *argv[32];
		int argc = split(c, buf, sizeof(buf), argv, 32);
		int rc;

		cr_assert_not_null(c->app->check_args, "%s has no check_args",
				   c->app->name);
		rc = c->app->check_args(argc, argv);
		cr_expect(c->ok ? rc == 0 : rc == -EINVAL,
			  "%s %s: check_args returned %d, want %s",
			  c->app->name, c->args, rc, c->ok ? "0" : "-EINVAL");
	}
}

/* Through the program: a bad value is a usage error, exit 2, with the
 * option named, before any rank starts (so quickly). */
Test(app_opts, bad_values_exit_2_for_every_app)
{
	static const char *bad[][3] = {
		{ "toy", "--items", "-1" },	  { "toy", "--lr", "nan" },
		{ "toy", "--dim", "4294967297" }, { "toy", "--work-us", "inf" },
		{ "mf", "--data-seed", "1.5" },	  { "mf", "--lr", "inf" },
		{ "mlr", "--lr", "nan" },	  { "mlr", "--l2", "1e30" },
		{ "lda", "--alpha", "inf" },	  { "lda", "--topics", "-3" },
	};
	struct rt_run *r = calloc(1, sizeof(*r));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *app = bad[i][0];
		const char *data = !strcmp(app, "mf")	 ? "--synthetic"
				   : !strcmp(app, "mlr") ? "--data"
				   : !strcmp(app, "lda") ? "--uci"
							 : "--items";
		const char *dval = !strcmp(app, "mf")	 ? "100,100,1000"
				   : !strcmp(app, "mlr") ? "fashion-mnist"
				   : !strcmp(app, "lda") ? "docword.txt"
							 : "5";
		char *argv[] = { (char *)rt_bin(),
				 "run",
				 "-n",
				 "2",
				 (char *)app,
				 (char *)data,
				 (char *)dval,
				 (char *)bad[i][1],
				 (char *)bad[i][2],
				 NULL };

		rt_exec(r, argv, NULL, 30);
		cr_expect_eq(r->code, 2, "%s %s %s: exit %d (want 2): %s", app,
			     bad[i][1], bad[i][2], r->code, r->err);
		cr_expect(strstr(r->err, bad[i][1]) && r->secs < 5,
			  "%s %s %s: not named, or slow (%.1f s): %s", app,
			  bad[i][1], bad[i][2], r->secs, r->err);
	}
	free(r);
}

/* A diverged objective (nan, inf) fails the run naming the clock and what
 * to change, unless --allow-nonfinite asks to run on. */
Test(app_opts, diverged_objective_fails_unless_allowed)
{
	char svm[] = "/tmp/frr-opts-XXXXXX";
	struct rt_run *r = calloc(1, sizeof(*r));
	struct rt_argv a;
	int fd = mkstemp(svm);
	FILE *f = fdopen(fd, "w");

	cr_assert_not_null(f);
	for (int i = 0; i < 40; i++) /* a huge feature: the loss overflows */
		fprintf(f, "%d 1:1e30 2:%d\n", i % 2, i);
	fclose(f);
	rt_exec(r, rt_run_argv(&a, 2, 1, NULL, "-q", "toy", "--lr", "1e5"),
		NULL, 60);
	cr_expect_eq(r->code, 1, "toy --lr 1e5: exit %d: %s", r->code, r->err);
	cr_expect(strstr(r->err, "clock 0: app toy's objective is") &&
		      strstr(r->err, "--lr") &&
		      strstr(r->err, "--allow-nonfinite"),
		  "%s", r->err);
	rt_exec(r,
		rt_run_argv(&a, 2, 1, NULL, "-q", "--allow-nonfinite", "toy",
			    "--lr", "1e5"),
		NULL, 60);
	cr_expect_eq(r->code, 0, "--allow-nonfinite: exit %d: %s", r->code,
		     r->err);
	cr_expect(strstr(r->out, "objective=") && strstr(r->out, "nan"), "%s",
		  r->out);
	rt_exec(r,
		rt_run_argv(&a, 1, 1, NULL, "-q", "mlr", "--no-progress",
			    "--train", svm),
		NULL, 60);
	cr_expect(r->code == 1 && strstr(r->err, "app mlr's objective is nan"),
		  "mlr diverged: exit %d: %s", r->code, r->err);
	unlink(svm);
	free(r);
}
