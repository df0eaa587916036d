/* SPDX-License-Identifier: MIT */
/*
 * Program entry: how a program built on flexrr runs a job.  Every such
 * program accepts the same run options (`flexrr run --help` lists them) and
 * passes its own table of apps: there is no global registry.
 *
 *   static const struct frr_app_ops *const apps[] = { &my_app, NULL };
 *   int main(int argc, char **argv)
 *   {
 *           return frr_run_main(argc, argv, apps);
 *   }
 *
 * With -n P the program forks P local ranks; started by a launcher (mpirun,
 * srun, ...) each process joins the job as one rank (flexrr/bootstrap.h).
 */
#ifndef FLEXRR_JOB_H
#define FLEXRR_JOB_H

#include "flexrr/bootstrap.h"
#include "flexrr/flexrr.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

/*
 * Parse the run options in argv[1..] (argv[0] names the program in messages
 * and usage), then the app's name (optional when apps holds one app) and
 * the app's own options; start or join the job; run the app from apps (a
 * NULL-terminated array).  Rank 0 prints the summary line on stdout.
 * Returns 0 when the job succeeded (or help was printed), 1 when it failed
 * (the reason is logged), 2 on a usage error (the message says what to
 * fix).  Never exits the calling process.
 */
int frr_run_main(int argc, char **argv, const struct frr_app_ops *const *apps);

/*
 * The structured form, for programs that set the options themselves:
 *
 *   struct frr_job *job;
 *   int err = frr_job_create(&my_app, &job);
 *   if (!err) err = frr_job_set(job, "procs", "2");
 *   if (!err) err = frr_job_set(job, "mode", "flexrr");
 *   if (!err) err = frr_job_run(job);
 *   frr_job_free(job);
 *
 * Every function returns 0 or a negative errno and logs why.
 * -ENOTRECOVERABLE from frr_job_run or frr_job_run_rank: a worker stuck in
 * the app's code after the job failed was abandoned, still running; the
 * process is no longer clean to reuse and should exit.
 */
struct frr_job;

/* A job of app with the default run options. */
int frr_job_create(const struct frr_app_ops *app, struct frr_job **job);
/* One run option by its long name, as `flexrr run --help` lists it, with
 * its value ("clocks", "20"), or NULL for a flag ("quiet", NULL): looked up
 * in the table the command line is parsed by, so the names, ranges and
 * messages are the same.  -EINVAL for an unknown option or a bad value.
 * value must outlive the job. */
int frr_job_set(struct frr_job *job, const char *option, const char *value);
/* The app's own options (without the app's name); they must outlive the
 * job. */
int frr_job_set_app_args(struct frr_job *job, int argc, char **argv);
/* Start the job (fork the "procs" ranks here) or, started by a launcher,
 * join it as one rank; run it to the end. */
int frr_job_run(struct frr_job *job);
/* Run this process as rank oob->rank of oob->size of a job whose ranks the
 * program brought up itself (e.g. inside frr_launch_local, or with its own
 * struct frr_oob backend). */
int frr_job_run_rank(struct frr_job *job, struct frr_oob *oob);
void frr_job_free(struct frr_job *job);

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_JOB_H */
