// SPDX-License-Identifier: MIT
/*
 * `flexrr bench write_bw --span`: the writes rotate over a region larger
 * than the message (bench/comm.sh's memory-bandwidth baseline on shm), the
 * row is printed as without it, and a span too large is refused naming
 * the option.
 */
#include <criterion/criterion.h>
#include <glob.h>

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

/* Every script of scripts/ and bench/ answers --help with what it does, at
 * once: scripts/demo.sh, the README's first command, installed and built
 * before its --help reached `flexrr demo`, and two took --help for a
 * binary to run. */
Test(bench_cli, every_script_answers_help_at_once)
{
	static struct rt_run r;
	glob_t g;
	int n = 0;

	if (frr_test_sanitizer() || frr_test_quick())
		cr_skip_test("scripts, not the binary: the plain stage");
	cr_assert_eq(glob(FLEXRR_SRC "/scripts/*.sh", 0, NULL, &g), 0);
	cr_assert_eq(glob(FLEXRR_SRC "/bench/*.sh", GLOB_APPEND, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *argv[] = { "/bin/bash", g.gl_pathv[i], "--help", NULL };

		if (strstr(g.gl_pathv[i], "/bench/lib.sh")) /* sourced */
			continue;
		rt_exec(&r, argv, NULL, 20);
		/* its usage names it; nothing ran, so nothing on stderr */
		cr_expect(r.code == 0 &&
			      strstr(r.out, strrchr(argv[1], '/') + 1) &&
			      !r.err[0],
			  "%s --help: exit %d\nstdout: %s\nstderr: %s",
			  g.gl_pathv[i], r.code, r.out, r.err);
		n++;
	}
	globfree(&g);
	cr_assert_gt(n, 30, "only %d scripts", n);
}
