// SPDX-License-Identifier: MIT
/*
 * What a launcher (mpirun, srun, a PMI/PMIx runtime, a script) tells a rank
 * through its environment, and the defaults derived from it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"

/* A launcher's rank or size: decimal, 0 .. 2^20; -1 (said) otherwise, which
 * the caller refuses as a rank outside the job. */
static int env_rank(const char *name, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > (1L << 20)) {
		frr_err(
		    "%s='%.40s' is not a rank or rank count (0..%ld); check "
		    "what the launcher (or you) set",
		    name, s, 1L << 20);
		return -1;
	}
	return (int)v;
}

/* The rank on this node: the variable of the launcher that gave the rank
 * (pair's own), else the first one set (a FLEXRR_RANK script under some
 * launcher; srun --mpi=pmi2 sets PMI_RANK but only SLURM_LOCALID).  The own
 * one first: mpirun inside an sbatch script inherits the batch step's
 * SLURM_LOCALID.  -1 when none is set (or one is not a rank). */
static int local_rank(const char *own)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_LOCAL_RANK",
		"SLURM_LOCALID",
		"PMIX_LOCAL_RANK",
		"MPI_LOCALRANKID",
		"PMI_LOCAL_RANK",
	};
	const char *name = own && getenv(own) ? own : NULL;

	for (size_t i = 0; !name && i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			name = vars[i];
	return name ? env_rank(name, getenv(name)) : -1;
}

int frr_launcher_env(struct frr_launcher_env *env)
{
	/* first match wins: an explicit FLEXRR_* beats what a launcher set;
	 * [2] is that launcher's node-local rank (NULL: any) */
	static const char *const pairs[][3] = {
		{ "FLEXRR_RANK", "FLEXRR_SIZE", NULL },
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
		  "OMPI_COMM_WORLD_LOCAL_RANK" },
		{ "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_LOCAL_RANK" },
		{ "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID" },
		{ "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
	};
	static const char *const job_ids[] = { "FLEXRR_JOB_ID",
					       "PMIX_NAMESPACE",
					       "OMPI_MCA_ess_base_jobid",
					       "SLURM_JOB_ID", "PMI_JOBID" };
	size_t i;

	*env = (struct frr_launcher_env){ .local_rank = -1 };
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const char *r = getenv(pairs[i][0]), *s = getenv(pairs[i][1]);

		if (r && s) {
			env->rank = env_rank(pairs[i][0], r);
			env->size = env_rank(pairs[i][1], s);
			env->local_rank = local_rank(pairs[i][2]);
			break;
		}
	}
	if (i == sizeof(pairs) / sizeof(pairs[0]))
		return 0;
	for (i = 0; i < sizeof(job_ids) / sizeof(job_ids[0]); i++)
		if (getenv(job_ids[i])) {
			env->job_id = getenv(job_ids[i]);
			break;
		}
	env->rendezvous = getenv("FLEXRR_RENDEZVOUS");
	env->job_token = getenv("FLEXRR_JOB_TOKEN");
	return 1;
}

void frr_rendezvous_from_job_id(const char *job_id, char *addr, size_t len)
{
	unsigned port =
	    20000u + (unsigned)(frr_fnv1a64(job_id, strlen(job_id), 0) % 20000);

	snprintf(addr, len, "127.0.0.1:%u", port);
}
