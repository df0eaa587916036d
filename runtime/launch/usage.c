// SPDX-License-Identifier: MIT
/*
 * What `flexrr run --help` prints (the standard run options, grouped by
 * what they apply to) and the hints of usage errors.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "launch.h"

void frr_job_usage(const struct frr_job *job, FILE *out)
{
	const char *p = job->prog;

	fprintf(out,
		"usage: %s [options] APP [app options]\n"
		"       %s -n P APP --help     (the app's options)\n",
		p, p);
	fprintf(
	    out,
	    "\n"
	    "Runs APP for --clocks clocks as a job of P processes x T worker "
	    "threads.\n"
	    "Started by a launcher (mpirun, srun, ...) each process joins as "
	    "one rank\n"
	    "(rank/size from FLEXRR_RANK/FLEXRR_SIZE, "
	    "OMPI_COMM_WORLD_RANK/SIZE,\n"
	    "PMIX_RANK, PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS); "
	    "otherwise it\n"
	    "forks P local processes.\n"
	    "\n"
	    "job:\n"
	    "  -n, --procs P          processes (local job; default 1)\n"
	    "  -t, --threads T        worker threads per process (default 1)\n"
	    "  --backend B            shm | verbs | auto (default auto)\n"
	    "  --mode M               bsp | ssp | async | flexrr | rr (default "
	    "bsp;\n"
	    "                         ssp when --slack is given)\n"
	    "  --slack S              SSP slack, 0..%d (ssp: default 1)\n"
	    "  --clocks N             clocks to run (default 10)\n"
	    "  --target V             stop early once the objective reaches V\n"
	    "  --seed S               random seed (default 1)\n"
	    "  -q, --quiet            no per-clock progress line on stderr\n"
	    "  --metrics FILE         per worker per clock CSV (rank 0 writes "
	    "it)\n"
	    "  --save FILE            save the model at the end (apps that "
	    "can)\n"
	    "  --load FILE            start from a saved model (apps that "
	    "can)\n"
	    "  --checkpoint DIR       write a consistent checkpoint into DIR "
	    "(a directory\n"
	    "                         every rank shares) every "
	    "--checkpoint-every\n"
	    "  --checkpoint-every N   N clocks (default 10), or Ns: a clock "
	    "boundary\n"
	    "                         about every N seconds\n"
	    "  --resume DIR           continue from DIR's newest complete "
	    "checkpoint\n"
	    "                         (same app, options, data, -n and -t)\n"
	    "  --no-pin               do not pin worker threads to cores\n"
	    "  --allow-nonfinite      run on when the objective is nan or inf\n"
	    "                         (default: the run fails at that clock)\n"
	    "  --timeout S            fail when no worker of the job made "
	    "progress\n"
	    "                         for S s (60)\n"
	    "  --dead-timeout S       a silent peer is declared dead after S s "
	    "(5)\n"
	    "  --delay-worker W,E,F   bench: worker W sleeps F x its clock "
	    "time every\n"
	    "                         E-th clock (W = -1: a different worker\n"
	    "                         each time)\n",
	    FRR_RT_MAX_SLACK);
	fprintf(
	    out,
	    "launcher-started ranks:\n"
	    "  --rendezvous HOST:PORT rank 0's address (env "
	    "FLEXRR_RENDEZVOUS); on one\n"
	    "                         host a port is derived from the "
	    "launcher's job id\n"
	    "  (job secret: env FLEXRR_JOB_TOKEN or FLEXRR_JOB_TOKEN_FILE, "
	    "the same on\n"
	    "   every rank; pmix without it: a random one from rank 0; "
	    "local jobs: random)\n"
	    "  --rendezvous-timeout S how long ranks wait for each other (20)\n"
	    "  --bootstrap B          how the ranks meet: pmix (through the "
	    "launcher's\n"
	    "                         PMIx server: mpirun, srun --mpi=pmix), "
	    "tcp (the\n"
	    "                         rendezvous above) or auto (default: pmix "
	    "when the\n"
	    "                         launcher offers it and no rendezvous "
	    "address is\n"
	    "                         given, else tcp); rank 0 says which on "
	    "stderr\n"
	    "any mode:\n"
	    "  --stragglers SPEC      inject stragglers, e.g. "
	    "slow-worker:0.1,1.0 (a bad\n"
	    "                         SPEC lists the forms)\n"
	    "  --trace FILE           write a Chrome/Perfetto timeline of the "
	    "job\n"
	    "RapidReassignment (modes flexrr, rr; docs/rapidreassignment.md):\n"
	    "  --rr-group G           helpers per worker (default 4, at most "
	    "W-1, 16)\n"
	    "  --rr-threshold F       offer work to a helper ahead by more "
	    "than F of a\n"
	    "                         clock (default 0.2)\n"
	    "  --rr-min-share F       ... if more than F of the clock is still "
	    "unstarted\n"
	    "                         (default 0.05)\n"
	    "  --rr-report N          progress reports per clock (default "
	    "16; more adds\n"
	    "                         reports every 1/N)\n"
	    "  --rr-max-helpers N     open offers a worker has at once "
	    "(default G)\n"
	    "\n"
	    "When the job ends rank 0 prints one line on stdout:\n"
	    "  flexrr: done mode=M backend=B procs=P threads=T clocks=N "
	    "time_s=S "
	    "objective=V <app metrics>\n");
	fprintf(out, "\napps:\n");
	for (const struct frr_app_ops *const *a = job->apps; a && *a; a++)
		fprintf(out, "  %-8s %s\n", (*a)->name, (*a)->summary);
}

/* getopt said "unrecognized option": most often an app's option given
 * before the app's name, so say where those go.  (optopt is 0 for an
 * unknown long option; a known short one got '?' for its missing value.) */
void frr_job_hint_unknown(const struct frr_job *job, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";

	if (optopt ? optopt > 127 || strchr("ntqh", optopt)
		   : strncmp(arg, "--", 2))
		return;
	if (optopt)
		fprintf(stderr, "%s: -%c", job->prog, optopt);
	else
		fprintf(stderr, "%s: %.*s", job->prog, (int)strcspn(arg, "="),
			arg);
	fprintf(stderr,
		" is not a run option; app options go after the app name: "
		"%s [run options] APP [app options]\n",
		job->prog);
}
