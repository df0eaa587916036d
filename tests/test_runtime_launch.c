// SPDX-License-Identifier: MIT
/*
 * The library's program entry (flexrr/job.h) driven directly, as a program
 * built on flexrr would: frr_run_main's return codes, the structured form
 * (frr_job_create / frr_job_set / frr_job_run), a job run inside ranks the
 * program launched itself (frr_job_run_rank), and a failing job returning
 * a negative errno instead of ending the process.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>

#include "flexrr/job.h"

TestSuite(runtime_launch, .timeout = 120);

extern const struct frr_app_ops frr_app_toy; /* runtime/app_toy.c */
static const struct frr_app_ops *const apps[] = { &frr_app_toy, NULL };

static int run_main(char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return frr_run_main(argc, argv, apps);
}

Test(runtime_launch, run_main_says_help_usage_and_failure,
     .init = cr_redirect_stdout)
{
	char *help[] = { "prog", "--help", NULL };
	char *app_help[] = { "prog", "toy", "--help", NULL };
	char *no_app[] = { "prog", "-n", "2", "-q", NULL };
	char *bad_mode[] = { "prog", "--mode", "fast", "toy", NULL };
	char *slack_bsp[] = { "prog", "--mode", "bsp", "--slack",
			      "2",    "toy",	NULL };
	char *ok[] = { "prog", "-n", "2", "-q", "--clocks", "3", NULL };
	char *fails[] = { "prog", "-n", "2", "-q", "toy", "--bogus", NULL };

	cr_assert_eq(run_main(help), 0);
	cr_assert_eq(run_main(app_help), 0);
	/* one app in the table: its name may be left out */
	cr_assert_eq(run_main(no_app), 0);
	cr_assert_eq(run_main(bad_mode), 2);
	cr_assert_eq(run_main(slack_bsp), 2);
	cr_assert_eq(run_main(ok), 0);
	/* the job fails in its ranks: 1, and this process is still here */
	cr_assert_eq(run_main(fails), 1);
}

Test(runtime_launch, job_set_checks_names_and_values)
{
	struct frr_job *job;

	cr_assert_eq(frr_job_create(&frr_app_toy, &job), 0);
	cr_assert_eq(frr_job_set(job, "procs", "2"), 0);
	cr_assert_eq(frr_job_set(job, "quiet", NULL), 0);
	cr_assert_eq(frr_job_set(job, "procs", "zero"), -EINVAL);
	cr_assert_eq(frr_job_set(job, "procs", NULL), -EINVAL);
	cr_assert_eq(frr_job_set(job, "quiet", "1"), -EINVAL);
	cr_assert_eq(frr_job_set(job, "no-such-option", "1"), -EINVAL);
	cr_assert_eq(frr_job_set(job, "help", NULL), -EINVAL);
	cr_assert_eq(frr_job_set(job, "mode", "ssp"), 0);
	cr_assert_eq(frr_job_set(job, "slack", "30"), -EINVAL);
	frr_job_free(job);
}

Test(runtime_launch, structured_job_runs_and_fails_with_an_errno,
     .init = cr_redirect_stdout)
{
	char *bad[] = { "--bogus" };
	struct frr_job *job;

	cr_assert_eq(frr_job_create(&frr_app_toy, &job), 0);
	cr_assert_eq(frr_job_set(job, "procs", "2"), 0);
	cr_assert_eq(frr_job_set(job, "threads", "2"), 0);
	cr_assert_eq(frr_job_set(job, "mode", "flexrr"), 0);
	cr_assert_eq(frr_job_set(job, "clocks", "4"), 0);
	cr_assert_eq(frr_job_set(job, "quiet", NULL), 0);
	cr_assert_eq(frr_job_run(job), 0);
	cr_assert_eq(frr_job_set_app_args(job, 1, bad), 0);
	cr_assert_lt(frr_job_run(job), 0);
	frr_job_free(job);
}

static int one_rank(struct frr_oob *oob, void *arg)
{
	return frr_job_run_rank(arg, oob);
}

Test(runtime_launch, job_runs_in_ranks_the_program_launched,
     .init = cr_redirect_stdout)
{
	struct frr_job *job;

	cr_assert_eq(frr_job_create(&frr_app_toy, &job), 0);
	cr_assert_eq(frr_job_set(job, "backend", "shm"), 0);
	cr_assert_eq(frr_job_set(job, "clocks", "3"), 0);
	cr_assert_eq(frr_job_set(job, "quiet", NULL), 0);
	cr_assert_eq(frr_launch_local(3, one_rank, job, 60000), 0);
	frr_job_free(job);
}
