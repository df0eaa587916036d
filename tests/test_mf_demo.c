// SPDX-License-Identifier: MIT
/* `flexrr demo` on a tiny problem: a table with one row per mode, FlexRR
 * either measured or marked NOT AVAILABLE with the reason, never missing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

TestSuite(mf_demo, .timeout = 120);

static int run(char *out, size_t len, const char *args)
{
	char cmd[1024];
	size_t n = 0, got;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s demo %s 2>&1", FLEXRR_BIN, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (n < len - 1 && (got = fread(out + n, 1, len - 1 - n, p)) > 0)
		n += got;
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The table row of a mode: the line starting with " MODE ". */
static const char *row(const char *out, const char *mode)
{
	char key[32];
	const char *s;

	snprintf(key, sizeof(key), "\n %s ", mode);
	s = strstr(out, key);
	cr_assert_not_null(s, "no %s row in:\n%s", mode, out);
	return s + 1;
}

Test(mf_demo, table_has_every_mode)
{
	static char out[1 << 16];
	double t, rmse;
	char name[16];

	cr_assert_eq(run(out, sizeof(out),
			 "--size 2000,300,30000 --rank 4 --clocks 4 "
			 "--target 1.5 --steps 6 -v"),
		     0, "%s", out);
	cr_assert_not_null(strstr(out, "time_N_s"), "%s", out);
	/* the runs got the demo's --steps (-v shows their command lines) and
	 * the header says so */
	cr_assert_not_null(strstr(out, "mf --synthetic 2000,300,30000 --rank 4 "
				       "--steps 6\n"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "--steps 6,"), "%s", out);
	/* bsp and ssp always run: time and RMSE are numbers */
	cr_assert_eq(sscanf(row(out, "bsp"), "%15s %*s %lf %*f %*s %lf", name,
			    &t, &rmse),
		     3, "%s", out);
	cr_assert_gt(t, 0);
	cr_assert(rmse > 0 && rmse < 1.5, "%s", out);
	cr_assert_eq(sscanf(row(out, "ssp"), "%15s %*s %lf", name, &t), 2, "%s",
		     out);
	/* flexrr: measured, or said to be unavailable and why */
	if (strstr(row(out, "flexrr"), "NOT AVAILABLE"))
		cr_assert_not_null(strstr(out, "flexrr is NOT AVAILABLE"), "%s",
				   out);
	else
		cr_assert_eq(
		    sscanf(row(out, "flexrr"), "%15s %*s %lf", name, &t), 2,
		    "%s", out);
	/* the target (1.5) is above the first clock's RMSE: reached */
	cr_assert_null(strstr(row(out, "bsp"), "not reached"), "%s", out);
}

Test(mf_demo, help_and_bad_options)
{
	static char out[1 << 14];

	cr_assert_eq(run(out, sizeof(out), "--help"), 0);
	cr_assert_not_null(strstr(out, "--stragglers"));
	cr_assert_not_null(strstr(out, "--modes"));
	cr_assert_eq(run(out, sizeof(out), "--modes bsp,fast"), 2);
	cr_assert_not_null(strstr(out, "'fast'"), "%s", out);
	cr_assert_eq(run(out, sizeof(out), "--clocks x"), 2);
	cr_assert_eq(run(out, sizeof(out), "--bogus 1"), 2);
	cr_assert_eq(run(out, sizeof(out), "--steps 0"), 2);
	cr_assert_not_null(strstr(out, "--steps must be > 0"), "%s", out);
}
