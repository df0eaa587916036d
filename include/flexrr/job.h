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

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_JOB_H */
