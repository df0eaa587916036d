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
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
	char *bad_app_opt[] = {
		"prog", "-n", "2", "-q", "toy", "--bogus", NULL
	};
	/* diverges: fails inside the ranks (the objective is nan) */
	char *fails[] = { "prog", "-n", "2", "-q", "toy", "--lr", "1e5", NULL };

	cr_assert_eq(run_main(help), 0);
	cr_assert_eq(run_main(app_help), 0);
	/* one app in the table: its name may be left out */
	cr_assert_eq(run_main(no_app), 0);
	cr_assert_eq(run_main(bad_mode), 2);
	cr_assert_eq(run_main(slack_bsp), 2);
	/* app options are checked before any rank starts (check_args) */
	cr_assert_eq(run_main(bad_app_opt), 2);
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

/* All of the redirected stderr so far. */
static const char *stderr_text(void)
{
	static char buf[1 << 16];
	FILE *f = cr_get_redirected_stderr();
	size_t n;

	fflush(stderr);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	return buf;
}

/* Issue 24, item 6: a job far above the cores it may use warns and scales
 * the deadlines it was not given, before it starts. */
Test(runtime_launch, oversubscribed_job_warns_and_scales_deadlines,
     .init = cr_redirect_stderr)
{
	char *argv[] = { "prog",     "-n", "2",	  "-t",	     "20", "-q",
			 "--clocks", "1",  "toy", "--items", "5",  NULL };
	cpu_set_t one;
	const char *err;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cr_assert_eq(run_main(argv), 0);
	err = stderr_text();
	cr_assert(strstr(err, "42 threads on 1 cores (42x oversubscribed)") &&
		      strstr(err, "--dead-timeout 13.125 s") &&
		      strstr(err, "(scaled)"),
		  "%s", err);
}

/* Ranks 1 and 3 stop because rank 2 failed ("a peer failed") and exit
 * before it does, as they may on a loaded single core (CI's VM failed so):
 * the launcher names rank 2, not the first rank reaped nor the
 * lowest-numbered one that stopped. */
static int blame_rank(struct frr_oob *oob, void *arg)
{
	int *fd = arg;
	char c = 0;

	if (oob->rank == 2) {
		(void)!write(fd[1], "xx", 2);
		usleep(300 * 1000); /* let ranks 1 and 3 exit first */
		return -EINVAL;
	}
	if (oob->rank == 0)
		return 0;
	(void)!read(fd[0], &c, 1); /* rank 1: waits for rank 2's failure */
	return -ENOTCONN;
}

Test(runtime_launch, launcher_names_the_rank_that_failed_first,
     .init = cr_redirect_stderr)
{
	struct frr_launch_cfg cfg = { .nprocs = 3,
				      .timeout_ms = 30000,
				      .flags = FRR_LAUNCH_NO_RELAY };
	int fd[2];
	const char *err;

	cr_assert_eq(pipe(fd), 0);
	cr_assert_lt(frr_launch(&cfg, blame_rank, fd), 0);
	close(fd[0]);
	close(fd[1]);
	err = stderr_text();
	cr_assert(strstr(err, "launch: rank 2 failed first"), "%s", err);
}

/* Rank 1 hangs; rank 0 gives up on it (ENOTCONN), rank 2 is killed by a
 * signal: the result names rank 2 first (a signal is surely its own), and
 * rank 1 as the one killed after the grace period. */
static int hang_rank(struct frr_oob *oob, void *arg)
{
	(void)arg;
	if (oob->rank == 1)
		pause();
	if (oob->rank == 2)
		raise(SIGKILL);
	usleep(100 * 1000);
	return -ENOTCONN;
}

Test(runtime_launch, launch_result_says_who_died_and_who_hung,
     .init = cr_redirect_stderr)
{
	struct frr_launch_result res;
	struct frr_launch_cfg cfg = { .nprocs = 3,
				      .timeout_ms = 30000,
				      .grace_ms = 300,
				      .flags = FRR_LAUNCH_NO_RELAY,
				      .result = &res };

	cr_assert_lt(frr_launch(&cfg, hang_rank, NULL), 0);
	cr_assert_eq(res.failed_rank, 2);
	cr_assert_eq(res.signal, SIGKILL);
	cr_assert_eq(res.hung_rank, 1);
	cr_assert_eq(res.timed_out, 0);
}

/* The node-local rank threads pin by comes from the launcher that gave the
 * rank (issue 25 item 5), not from Open MPI's variable alone. */
/* Rank 1 stops itself (SIGSTOP: a frozen node), rank 2 fails: nothing is
 * left to end on its own, so a launcher told FRR_LAUNCH_KILL_STOPPED (the
 * restart loop's) kills rank 1 at once, not after its grace, and names it.
 * Without the flag the grace is waited (test_runtime_hang continues such a
 * rank and reads its verdict). */
static int stop_rank(struct frr_oob *oob, void *arg)
{
	(void)arg;
	if (oob->rank == 1)
		raise(SIGSTOP);
	if (oob->rank == 2) {
		usleep(200 * 1000);
		return -EIO;
	}
	return -ENOTCONN;
}

Test(runtime_launch, a_stopped_rank_is_not_waited_for,
     .init = cr_redirect_stderr)
{
	struct frr_launch_result res;
	struct frr_launch_cfg cfg = { .nprocs = 3,
				      .timeout_ms = 120000,
				      .grace_ms = 60000,
				      .flags = FRR_LAUNCH_NO_RELAY |
					       FRR_LAUNCH_KILL_STOPPED,
				      .result = &res };
	long long t0 = frr_now_ms();

	cr_assert_lt(frr_launch(&cfg, stop_rank, NULL), 0);
	/* a bound on behaviour (the grace is 60 s), not a timing claim */
	cr_assert_lt(frr_now_ms() - t0, 30000,
		     "the launcher waited %lld ms for a stopped rank",
		     frr_now_ms() - t0);
	cr_assert_eq(res.failed_rank, 2);
	cr_assert_eq(res.hung_rank, 1);
}

Test(runtime_launch, local_rank_from_the_launcher_env)
{
	static const char *const vars[] = {
		"FLEXRR_RANK",
		"FLEXRR_SIZE",
		"OMPI_COMM_WORLD_RANK",
		"OMPI_COMM_WORLD_SIZE",
		"PMIX_RANK",
		"PMI_RANK",
		"PMI_SIZE",
		"SLURM_PROCID",
		"SLURM_NTASKS",
		"OMPI_COMM_WORLD_LOCAL_RANK",
		"SLURM_LOCALID",
		"PMIX_LOCAL_RANK",
		"MPI_LOCALRANKID",
		"PMI_LOCAL_RANK",
	};
	struct frr_launcher_env env;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	cr_assert_eq(frr_launcher_env(&env), 0);
	cr_assert_eq(env.local_rank, -1);
	/* srun: Slurm's */
	setenv("SLURM_PROCID", "5", 1);
	setenv("SLURM_NTASKS", "8", 1);
	setenv("SLURM_LOCALID", "1", 1);
	cr_assert_eq(frr_launcher_env(&env), 1);
	cr_assert_eq(env.rank, 5);
	cr_assert_eq(env.local_rank, 1);
	/* mpirun inside an sbatch script: Open MPI's, not the inherited
	 * SLURM_LOCALID */
	setenv("OMPI_COMM_WORLD_RANK", "6", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
	cr_assert_eq(frr_launcher_env(&env), 1);
	cr_assert_eq(env.local_rank, 2);
	/* MPICH's hydra */
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	setenv("PMI_RANK", "3", 1);
	setenv("PMI_SIZE", "4", 1);
	setenv("MPI_LOCALRANKID", "3", 1);
	cr_assert_eq(frr_launcher_env(&env), 1);
	cr_assert_eq(env.local_rank, 3);
	/* srun --mpi=pmi2: PMI's rank, Slurm's local rank */
	unsetenv("MPI_LOCALRANKID");
	setenv("SLURM_LOCALID", "0", 1);
	cr_assert_eq(frr_launcher_env(&env), 1);
	cr_assert_eq(env.local_rank, 0);
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}
