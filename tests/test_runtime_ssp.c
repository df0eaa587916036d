// SPDX-License-Identifier: MIT
/*
 * The SSP bound is never violated: 2 processes x 2 threads, randomly
 * delayed workers (toy --jitter-us, one worker also delayed by
 * --delay-worker), slack 0, 1, 3.  Two independent checkers:
 *   - the runtime records, for every read, the clock its shard had completed
 *     (metrics CSV: stale_reads, min_data_clock per worker per clock);
 *   - the toy app proves it from the values it reads (--check-ssp: a count
 *     table whose value says which clocks are in; summary ssp_violations=).
 * A control run with the SSP wait switched off (FLEXRR_TEST_BREAK_SSP) must
 * be caught by both checkers, so this test can fail.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

TestSuite(runtime_ssp, .timeout = 180);

struct check {
	long rows;
	long stale;
	long below_bound; /* min_data_clock < clock - slack - 1 */
	long behind;	  /* reads that saw an older clock than c - 1 */
	int workers_seen;
};

static void check_metrics(const char *path, int slack, struct check *ck)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int seen[64] = { 0 };

	memset(ck, 0, sizeof(*ck));
	cr_assert(f, "no metrics file %s", path);
	cr_assert(fgets(line, sizeof(line), f), "empty metrics file");
	cr_assert(strstr(line, "stale_reads,min_data_clock"), "header: %s",
		  line);
	while (fgets(line, sizeof(line), f)) {
		int c, w, r;
		double comp, wait, fl, upd, bytes, stale, mdc;

		cr_assert_eq(
		    sscanf(line, "%d,%d,%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &c, &w,
			   &r, &comp, &wait, &fl, &upd, &bytes, &stale, &mdc),
		    10, "bad metrics line %s", line);
		ck->rows++;
		ck->stale += (long)stale;
		if (mdc < c - slack - 1)
			ck->below_bound++;
		if (mdc < c - 1)
			ck->behind++;
		if (w >= 0 && w < 64 && !seen[w]) {
			seen[w] = 1;
			ck->workers_seen++;
		}
	}
	fclose(f);
}

/* eager: with --eager (the shards apply batches as they arrive) */
static void ssp_run_(struct rt_run *r, const char *backend, int slack,
		     const char *path, char *const env[], int clocks, int eager)
{
	char s[16], c[16];
	const char *mode = slack ? "ssp" : "bsp";
	struct rt_argv a;

	snprintf(s, sizeof(s), "%d", slack);
	snprintf(c, sizeof(c), "%d", clocks);
	if (eager)
		rt_run_argv(&a, 2, 2, backend, "--mode", mode, "--slack", s,
			    "--eager", "--clocks", c, "-q", "--metrics", path,
			    "--delay-worker", "1,3,4", "toy", "--items", "64",
			    "--work-us", "20", "--jitter-us", "200",
			    "--check-ssp");
	else
		rt_run_argv(&a, 2, 2, backend, "--mode", mode, "--slack", s,
			    "--clocks", c, "-q", "--metrics", path,
			    "--delay-worker", "1,3,4", "toy", "--items", "64",
			    "--work-us", "20", "--jitter-us", "200",
			    "--check-ssp");
	rt_exec(r, a.v, env, 120);
}

static void ssp_run(struct rt_run *r, const char *backend, int slack,
		    const char *path, char *const env[], int clocks)
{
	ssp_run_(r, backend, slack, path, env, clocks, 0);
}

Test(runtime_ssp, bound_holds_under_random_delays)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	static const int slacks[] = { 0, 1, 3 };
	int clocks = frr_test_quick() ? 8 : 20;
	char path[128];

	snprintf(path, sizeof(path), "/tmp/frr-rt-ssp-%d.csv", getpid());
	for (int i = 0; i < nb; i++)
		for (int k = 0; k < 3; k++) {
			struct rt_run *r = calloc(1, sizeof(*r));
			struct check ck;
			const char *be = frr_tp_backend_name(bs[i]);

			ssp_run(r, be, slacks[k], path, NULL, clocks);
			cr_assert_eq(r->code, 0, "%s slack %d: exit %d", be,
				     slacks[k], r->code);
			cr_assert_eq(rt_summary_value(r->out, "clocks"),
				     clocks);
			cr_assert_eq(rt_summary_value(r->out, "ssp_violations"),
				     0,
				     "%s slack %d: the toy saw stale data: %s",
				     be, slacks[k], r->out);
			check_metrics(path, slacks[k], &ck);
			cr_assert_eq(ck.rows, 4L * clocks);
			cr_assert_eq(ck.workers_seen, 4);
			cr_assert_eq(ck.stale, 0,
				     "%s slack %d: %ld stale reads", be,
				     slacks[k], ck.stale);
			cr_assert_eq(ck.below_bound, 0);
			cr_log_info("%s slack %d: %ld worker-clocks read "
				    "data older than clock c-1",
				    be, slacks[k], ck.behind);
			free(r);
		}
	unlink(path);
}

Test(runtime_ssp, checkers_catch_a_broken_bound)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	char *env[] = { "FLEXRR_TEST_BREAK_SSP=1", NULL };
	char path[128];
	struct rt_run *r = calloc(1, sizeof(*r));
	struct check ck;

	frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	snprintf(path, sizeof(path), "/tmp/frr-rt-ssp-bad-%d.csv", getpid());
	ssp_run(r, frr_tp_backend_name(bs[0]), 0, path, env, 12);
	cr_assert_eq(r->code, 0);
	cr_assert_gt(rt_summary_value(r->out, "ssp_violations"), 0,
		     "the toy's value checker missed stale reads: %s", r->out);
	check_metrics(path, 0, &ck);
	cr_assert_gt(ck.stale, 0, "the runtime's read stamps missed them");
	cr_assert_gt(ck.below_bound, 0);
	unlink(path);
	free(r);
}

/* --eager: the shards apply batches as they arrive; the bound still holds
 * (the toy's own check and the runtime's stamps), and so do the counts. */
Test(runtime_ssp, eager_keeps_the_bound)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	int clocks = frr_test_quick() ? 8 : 20;
	char path[128];

	snprintf(path, sizeof(path), "/tmp/frr-rt-ssp-eager-%d.csv", getpid());
	for (int i = 0; i < nb; i++)
		for (int slack = 1; slack <= 3; slack += 2) {
			struct rt_run *r = calloc(1, sizeof(*r));
			struct check ck;
			const char *be = frr_tp_backend_name(bs[i]);

			ssp_run_(r, be, slack, path, NULL, clocks, 1);
			cr_assert_eq(r->code, 0,
				     "%s eager slack %d: exit %d %s", be, slack,
				     r->code, r->err);
			cr_assert_eq(rt_summary_value(r->out, "clocks"),
				     clocks);
			cr_assert_eq(rt_summary_value(r->out, "ssp_violations"),
				     0, "%s eager slack %d: stale data: %s", be,
				     slack, r->out);
			check_metrics(path, slack, &ck);
			cr_assert_eq(ck.rows, 4L * clocks);
			cr_assert_eq(ck.stale, 0);
			cr_assert_eq(ck.below_bound, 0);
			free(r);
		}
	unlink(path);
}

/* --eager where it cannot work is a usage error, said once. */
Test(runtime_ssp, eager_refused_where_reads_are_exact)
{
	static const struct {
		const char *mode, *opt, *msg;
	} bad[] = {
		{ "bsp", "--seed", "--mode bsp" },
		{ "rr", "--seed", "--mode rr" },
		{ "ssp", "--checkpoint",
		  "cannot be combined with --checkpoint" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rt_run *r = calloc(1, sizeof(*r));
		char dir[64];
		struct rt_argv a;

		snprintf(dir, sizeof(dir), "/tmp/frr-rt-eager-%d", getpid());
		rt_run_argv(&a, 2, 1, "shm", "--mode", bad[i].mode, "--eager",
			    bad[i].opt,
			    !strcmp(bad[i].opt, "--seed") ? "3" : dir, "toy");
		rt_exec(r, a.v, NULL, 60);
		RT_ASSERT_USAGE_ERROR(r, bad[i].msg);
		free(r);
	}
}

/* --mode backup from the command line: the cut is reported per clock and
 * in the summary; what cannot work is a usage error said once. */
Test(runtime_ssp, backup_mode_reports_and_refuses)
{
	static const struct {
		int np, nt;
		const char *a[4], *msg;
	} bad[] = {
		{ 2,
		  2,
		  { "--seed", "3", "--backups", "1" },
		  "--backups is for --mode backup" },
		{ 1,
		  1,
		  { "--seed", "3", "--mode", "backup" },
		  "needs 2 workers or more" },
		{ 2,
		  2,
		  { "--mode", "backup", "--backups", "4" },
		  "leaves no worker" },
		{ 2,
		  2,
		  { "--mode", "backup", "--slack", "1" },
		  "--mode backup has slack 0" },
	};
	struct rt_run *r = calloc(1, sizeof(*r));
	struct rt_argv a;

	rt_run_argv(&a, 2, 2, "shm", "--mode", "backup", "--clocks", "3",
		    "--stragglers", "persistent:0,4", "toy");
	rt_exec(r, a.v, NULL, 60);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert_eq(rt_count(r->err, " dropped="), 3, "%s", r->err);
	cr_assert(strstr(r->out, "mode=backup") &&
		      strstr(r->out, " backups=1 dropped=") &&
		      strstr(r->out, " dropped_share="),
		  "%s", r->out);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rt_run_argv(&a, bad[i].np, bad[i].nt, "shm", bad[i].a[0],
			    bad[i].a[1], bad[i].a[2], bad[i].a[3], "toy");
		rt_exec(r, a.v, NULL, 60);
		RT_ASSERT_USAGE_ERROR(r, bad[i].msg);
	}
	free(r);
}
