// SPDX-License-Identifier: MIT
/*
 * Data a peer writes is copied once and checked (issue 10, item 4): a
 * rank's stats record with a NaN or out-of-range metric fails the job
 * with a message naming that rank, never a crash or a silent NaN.  (Forged
 * update-batch headers: below; mailbox messages:
 * test_rr_proto.c; LDA topics: test_lda_kernel.c.)
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "job.h"
#include "stats.h"
#include "test_runtime_util.h"

TestSuite(runtime_forge, .timeout = 120);

Test(runtime_forge, stats_check_refuses_bad_metrics)
{
	enum { T = 2 };
	double d[FRR_MAX_STATS + T * FRR_RT_NMETRICS];
	double *m1 = d + FRR_MAX_STATS + FRR_RT_NMETRICS;
	const double bad[] = { NAN, INFINITY, -INFINITY, -1, 1e300 };
	char why[160];

	cr_assert_eq(frr_stats_len(T), sizeof(d) / sizeof(*d));
	memset(d, 0, sizeof(d));
	d[0] = NAN; /* an app stat: the app's to judge (a diverged model) */
	m1[FRR_M_MIN_DATA_CLOCK] = -1;
	cr_assert_eq(frr_stats_check(d, T, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		m1[FRR_M_STALE_READS] = bad[i];
		cr_assert_eq(frr_stats_check(d, T, why, sizeof(why)), -EPROTO,
			     "stale_reads = %g accepted", bad[i]);
		cr_assert(strstr(why, "stale_reads of its worker 1"),
			  "message: %s", why);
	}
	m1[FRR_M_STALE_READS] = 0;
	m1[FRR_M_MIN_DATA_CLOCK] = -2;
	cr_assert_eq(frr_stats_check(d, T, why, sizeof(why)), -EPROTO);
}

/* A 3-rank job run with FLEXRR_TEST_FORGE=forge must fail (not crash,
 * not succeed) with every string of want[] in its errors, and never
 * (when not NULL) in none. */
static void forged_run(const char *forge, const char *const want[], int n,
		       const char *never)
{
	struct rt_run *res = calloc(1, sizeof(*res));
	char env0[64];
	char *env[] = { env0, NULL };
	struct rt_argv a;

	snprintf(env0, sizeof(env0), "FLEXRR_TEST_FORGE=%s", forge);
	rt_run_argv(&a, 3, 2, NULL, "--clocks", "6", "-q", "toy", "--work-us",
		    "50");
	rt_exec(res, a.v, env, 60);
	cr_assert(res->code > 0 && res->code < 128,
		  "%s: exit %d (want an error, not a crash or success): %s",
		  forge, res->code, res->err);
	for (int i = 0; i < n; i++)
		cr_assert(strstr(res->err, want[i]), "%s: no \"%s\" in: %s",
			  forge, want[i], res->err);
	cr_assert(!never || !strstr(res->err, never), "%s: \"%s\" in: %s",
		  forge, never, res->err);
	/* well within the start-up --timeout (60 s) the others would wait */
	cr_assert(res->secs < 30, "%s: took %.1f s", forge, res->secs);
	free(res);
}

/* Rank 1's thread 0 connects its lane to one peer, then fails to connect
 * it to the next (as a device refusing a QP): rank 1 says so, and the
 * peers, which wait for its lanes, stop at the barrier after the
 * connections, not at --timeout (60 s).  Rank 2 learns from rank 0 that
 * rank 1 left the barrier: it does not call rank 0, which stopped the
 * exchange, dead. */
Test(runtime_forge, a_lane_that_cannot_connect_fails_the_job_promptly)
{
	const char *w[] = { "thread 0 of rank 1 could not connect its own "
			    "transport",
			    "the barrier after the threads' connections "
			    "failed",
			    "rank 0 stopped the exchange: rank 1 did not send "
			    "its share" };

	forged_run("lane-connect:1", w, 3, "exchange with rank 0 failed");
}

/* Rank R sends rank 0 a NaN metric: named with the metric. */
Test(runtime_forge, forged_stats_name_the_rank)
{
	const char *w1[] = { "rank 1 sent rank 0 a bad stats", "wait_s" };
	const char *w2[] = { "rank 2 sent rank 0 a bad stats", "wait_s" };

	forged_run("stats:1", w1, 2, NULL);
	forged_run("stats:2", w2, 2, NULL);
}

/* Rank 1 cannot open its threads' own transport contexts (a device's
 * limits): it says so with the way around it, and its peers, waiting to
 * connect their lanes, stop at once, not at --timeout (60 s). */
Test(runtime_forge, a_lane_that_cannot_open_fails_the_job_promptly)
{
	const char *w[] = { "thread 0 of rank 1 could not open its own "
			    "transport",
			    "--shared-transport" };

	forged_run("lane:1", w, 2, NULL);
}

/* Rank 1's workers send update batches attributed to a worker that does
 * not exist: every receiver refuses the header, naming rank 1, and nothing
 * is applied out of bounds (ASan build). */
Test(runtime_forge, forged_batch_header_names_the_rank)
{
	const char *w[] = { "corrupt update batch from worker",
			    "of rank 1 (sender" };

	forged_run("batch:1", w, 2, NULL);
}
