// SPDX-License-Identifier: MIT
/*
 * `flexrr bench write_bw --span`: the writes rotate over a region larger
 * than the message (bench/comm.sh's memory-bandwidth baseline on shm), the
 * row is printed as without it, and a span too large is refused naming
 * the option.
 */
#include <criterion/criterion.h>

#include "test_runtime_util.h"

TestSuite(bench_cli, .timeout = 120);

Test(bench_cli, write_bw_span_rotates_and_reports)
{
	static struct rt_run r;
	char *argv[] = { (char *)rt_bin(),
			 "bench",
			 "write_bw",
			 "--backend",
			 "shm",
			 "-s",
			 "64K",
			 "-n",
			 "200",
			 "--span",
			 "8M",
			 NULL };

	rt_exec(&r, argv, NULL, 60);
	cr_assert_eq(r.code, 0, "write_bw --span failed:\n%s", r.err);
	cr_assert_gt(rt_bw_row_avg(r.out, 65536), 0,
		     "no 65536-byte row in:\n%s", r.out);
}

Test(bench_cli, write_bw_span_too_large_is_refused)
{
	static struct rt_run r;
	char *argv[] = {
		(char *)rt_bin(), "bench", "write_bw", "--backend", "shm",
		"--span",	  "8G",	   NULL
	};

	rt_exec(&r, argv, NULL, 30);
	cr_assert_eq(r.code, 2, "exit %d, want 2 (usage):\n%s", r.code, r.err);
	cr_assert(strstr(r.err, "span"), "the message names no span:\n%s",
		  r.err);
}
