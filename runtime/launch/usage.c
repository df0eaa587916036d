// SPDX-License-Identifier: MIT
/*
 * What `flexrr run --help` prints: what a job is, the standard run options
 * from their table (run_opts.c, grouped by what they apply to, each with
 * the default parsing starts from), the summary line and the apps.
 */
#include <stdio.h>

#include "launch.h"

void frr_job_usage(const struct frr_job *job, FILE *out)
{
	const char *p = job->prog;
	struct frr_opt_set s;
	char see[256];

	fprintf(out,
		"usage: %s [options] APP [app options]\n"
		"       %s -n P APP --help     (the app's options)\n",
		p, p);
	fputs("\n"
	      "Runs APP for --clocks clocks as a job of P processes x T worker "
	      "threads.\n"
	      "Started by a launcher (mpirun, srun, ...) each process joins as "
	      "one rank\n"
	      "(rank/size from FLEXRR_RANK/FLEXRR_SIZE, "
	      "OMPI_COMM_WORLD_RANK/SIZE,\n"
	      "PMIX_RANK, PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS); "
	      "otherwise it\n"
	      "forks P local processes.\n",
	      out);
	frr_job_opt_set(job, &s, see, sizeof(see));
	frr_opt_usage(&s, out);
	fputs("\n"
	      "When the job ends rank 0 prints one line on stdout:\n"
	      "  flexrr: done mode=M backend=B procs=P threads=T clocks=N "
	      "time_s=S objective=V <app metrics>\n",
	      out);
	fprintf(out, "\napps:\n");
	for (const struct frr_app_ops *const *a = job->apps; a && *a; a++)
		fprintf(out, "  %-8s %s\n", (*a)->name, (*a)->summary);
}
