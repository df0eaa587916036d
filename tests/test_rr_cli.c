// SPDX-License-Identifier: MIT
/*
 * RapidReassignment from the command line: `flexrr run --mode flexrr|rr`,
 * --stragglers (bad SPEC shows the grammar; injected delays are logged),
 * --trace (a Perfetto / Chrome JSON file with workers, clocks, help and
 * delays) and the rr counters in the metrics file.
 */
#include <criterion/criterion.h>

#include "test_runtime_util.h"

TestSuite(rr_cli, .timeout = 180);

Test(rr_cli, invalid_stragglers_spec_shows_the_grammar)
{
	static struct rt_run r;
	char *argv[] = { (char *)rt_bin(),
			 "run",
			 "-n",
			 "1",
			 "--mode",
			 "flexrr",
			 "--stragglers",
			 "slow-worker:2,1",
			 "toy",
			 NULL };

	rt_exec(&r, argv, NULL, 60);
	cr_assert_neq(r.code, 0, "a bad spec was accepted");
	cr_assert(strstr(r.err, "slow-worker:p,d") &&
		      strstr(r.err, "disrupted-machine:p,d,len") &&
		      strstr(r.err, "power-law:alpha") &&
		      strstr(r.err, "persistent:w,f") &&
		      strstr(r.err, "contention"),
		  "no grammar in:\n%s", r.err);
	cr_assert(strstr(r.err, "0 <= p <= 1"), "no reason in:\n%s", r.err);
}

Test(rr_cli, flexrr_run_with_trace_and_metrics)
{
	static struct rt_run r;
	struct rt_argv a;
	char trace[128], metrics[128], cmd[768];
	char *env[] = { "FLEXRR_LOG=info", NULL };

	snprintf(trace, sizeof(trace), "/tmp/rr-cli-%d.json", getpid());
	snprintf(metrics, sizeof(metrics), "/tmp/rr-cli-%d.csv", getpid());
	rt_run_argv(&a, 2, 2, frr_test_backend0(), "--mode", "flexrr",
		    "--slack", "1", "--clocks", "6", "--no-pin", "-q",
		    "--stragglers", "persistent:0,4", "--trace", trace,
		    "--metrics", metrics, "toy", "--items", "64", "--work-us",
		    "100", "--check-ssp");
	rt_exec(&r, a.v, env, 120);
	cr_assert_eq(r.code, 0, "flexrr run failed:\n%s", r.err);
	cr_assert(strstr(r.out, "mode=flexrr"), "%s", r.out);
	cr_assert_eq(rt_summary_value(r.out, "ssp_violations"), 0);
	/* injected delays are logged */
	cr_assert(strstr(r.err, "stragglers: worker 0 clock 0 slowed x4.00"),
		  "no delay log in:\n%s", r.err);
	/* the trace: valid JSON with worker tracks, clocks, delays, help,
	 * flushes, and each rank's server track with its applies */
	snprintf(cmd, sizeof(cmd),
		 "python3 -c \"import json,sys; e=json.load(open('%s')); "
		 "n=set(x['name'] for x in e); "
		 "t=set(x['args']['name'] for x in e if x['name']=="
		 "'thread_name'); "
		 "sys.exit(0 if {'worker 0','worker 3','server'} <= t and "
		 "'injected delay' in n and 'work' in n and "
		 "'flush' in n and 'apply' in n and "
		 "any(s.startswith('clock ') for s in n) and "
		 "any(s.startswith('help w0') for s in n) and "
		 "'DoThis' in n else 1)\"",
		 trace);
	cr_assert_eq(system(cmd), 0,
		     "trace %s lacks workers/help/delays/flushes/applies",
		     trace);
	/* rr counters in the metrics file */
	cr_assert(frr_test_metrics_reassigned(metrics),
		  "no reassigned items in %s", metrics);
	unlink(trace);
	unlink(metrics);
}

/* --rr-link-weight takes the share of a clock from the worker's own record
 * (rr.c rr_hook_clock_end): in rr mode (slack 0) the helpers of a 4x
 * straggler wait for it at every clock and need a long lead to offer,
 * while the straggler, whose clock is its compute, keeps a short one and
 * still hands its tails over.  The leads come from the log (info). */
Test(rr_cli, link_weight_raises_the_lead_of_waiters_not_of_the_straggler)
{
	static struct rt_run r;
	struct rt_argv a;
	char *env[] = { "FLEXRR_LOG=info", NULL };
	double sum[4] = { 0 }, lead, share;
	int n[4] = { 0 }, w, c;
	const char *p;

	rt_run_argv(&a, 2, 2, frr_test_backend0(), "--mode", "rr", "--clocks",
		    "6", "--no-pin", "-q", "--stragglers", "persistent:0,4",
		    "--rr-link-weight", "10", "toy", "--items", "64",
		    "--work-us", "100");
	rt_exec(&r, a.v, env, 120);
	cr_assert_eq(r.code, 0, "flexrr run failed:\n%s", r.err);
	for (p = r.err; (p = strstr(p, "rr: worker ")); p++)
		if (sscanf(p,
			   "rr: worker %d clock %d: offers need a lead of %lf "
			   "of a clock (%lf%%",
			   &w, &c, &lead, &share) == 4 &&
		    w >= 0 && w < 4 && c >= 1) {
			cr_assert(lead >= 0.2 - 1e-9 && lead <= 10.2 + 1e-9,
				  "worker %d clock %d: lead %g", w, c, lead);
			sum[w] += lead;
			n[w]++;
		}
	for (w = 0; w < 4; w++)
		cr_assert_eq(n[w], 5,
			     "worker %d: %d clocks' leads logged in:\n%s", w,
			     n[w], r.err);
	for (w = 1; w < 4; w++)
		cr_assert(sum[0] < sum[w],
			  "the straggler's mean lead %.3f is not below worker "
			  "%d's %.3f:\n%s",
			  sum[0] / 5, w, sum[w] / 5, r.err);
	/* worker 0 is rank 0's: its rank's offers moved items */
	p = strstr(r.err, "rr: rank 0: offers");
	p = p ? strstr(p, "items reassigned ") : NULL;
	cr_assert(p && atoi(p + strlen("items reassigned ")) > 0,
		  "the straggler handed nothing over:\n%s", r.err);
}
