/* SPDX-License-Identifier: MIT */
/*
 * The bootstrap layer: how the ranks of one job find each other.
 *
 * struct frr_oob is an out-of-band channel between the ranks: used only at
 * set-up (address and descriptor exchange, barriers, failure notice), never
 * on the data path.  Backends are structs of function pointers; today:
 *   local.c  frr_launch_local / frr_launch: fork the ranks on this host,
 *            collectives relayed by the launching process
 *   tcp.c    frr_tcp_open: TCP rendezvous at rank 0 (launcher-started
 *            ranks, local jobs, the benchmarks)
 *   pmix.c   frr_pmix_open: through a PMIx launcher's key-value store
 *            (mpirun, srun --mpi=pmix; when built with libpmix)
 *   env.c    frr_launcher_env: rank, size and job id from a launcher's
 *            environment (mpirun, srun, PMI/PMIx, FLEXRR_*)
 * A new backend is one more file that fills a struct frr_oob.
 */
#ifndef FLEXRR_BOOTSTRAP_H
#define FLEXRR_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "flexrr/export.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

struct frr_oob;

struct frr_oob_ops {
	size_t size; /* sizeof(struct frr_oob_ops): the table may grow */
	/* all[r*len .. (r+1)*len) receives rank r's 'mine'; collective. */
	int (*allgather)(struct frr_oob *oob, const void *mine, size_t len,
			 void *all, int timeout_ms);
	int (*barrier)(struct frr_oob *oob, int timeout_ms);
	void (*close)(struct frr_oob *oob);
};

struct frr_oob {
	const struct frr_oob_ops *ops;
	int rank;
	int size;
	uint64_t job_token;
};

static inline int frr_oob_allgather(struct frr_oob *oob, const void *mine,
				    size_t len, void *all, int timeout_ms)
{
	return oob->ops->allgather(oob, mine, len, all, timeout_ms);
}

static inline int frr_oob_barrier(struct frr_oob *oob, int timeout_ms)
{
	return oob->ops->barrier(oob, timeout_ms);
}

static inline void frr_oob_close(struct frr_oob *oob)
{
	if (oob)
		oob->ops->close(oob);
}

/* ---- local fork launch (local.c) --------------------------------------- */
/* The body of one rank: 0 on success, else a negative errno. */
typedef int (*frr_launch_fn)(struct frr_oob *oob, void *arg);

struct frr_launch_cfg {
	int nprocs;
	/* kill every rank still running after timeout_ms; 0 = no limit */
	int timeout_ms;
	/* after a rank fails, the others get grace_ms to end on their own
	 * (e.g. to report the dead peer) before they are killed; 0 = 2000 */
	int grace_ms;
	/* FRR_LAUNCH_* flags */
	unsigned flags;
};

enum frr_launch_flags {
	/* The ranks bring their own channel (e.g. frr_tcp_open): the oob
	 * that fn gets carries only rank, size and a fresh random job token;
	 * its collectives fail with -ENOTSUP. */
	FRR_LAUNCH_NO_RELAY = 1u << 0,
	/* The ranks log their own errors: report only ranks that were killed
	 * by a signal or by the timeout, not every non-zero exit. */
	FRR_LAUNCH_QUIET_EXITS = 1u << 1,
};

/*
 * Fork cfg->nprocs children; child r runs fn(oob, arg) with an oob of rank r
 * and ends with fn's return value (0 = success; negative errno mapped to
 * exit codes 1..255).  The caller waits for all of them: a rank that fails
 * or dies makes pending collectives fail at once and the others are killed
 * after the grace period, so nothing hangs.  Returns 0 if every child
 * exited 0, else a negative errno, and logs which rank failed and how.
 * The calling process never exits; each child ends inside this call.
 */
int frr_launch(const struct frr_launch_cfg *cfg, frr_launch_fn fn, void *arg);

/* frr_launch with collectives relayed by the caller, a 2 s grace period and
 * a deadline (timeout_ms > 0): tests and single-host tools. */
int frr_launch_local(int nprocs, frr_launch_fn fn, void *arg, int timeout_ms);

/* ---- TCP rendezvous (tcp.c) -------------------------------------------- */
struct frr_tcp_cfg {
	/* HOST:PORT of rank 0 ([v6addr]:PORT for IPv6 literals).  Rank 0
	 * listens there (HOST "*": every IPv4 interface), the others
	 * connect, retrying until the timeout. */
	const char *addr;
	int listen_fd; /* rank 0: a socket already listening, else -1 */
	int rank;
	int size;
	/* Shared by every rank; connections with another token are refused.
	 * 0 on a joining rank: take the token rank 0 hands out (two-process
	 * tools such as `flexrr bench`; not a secret then). */
	uint64_t job_token;
	/* A rank with another binary (frr_binary_hash()) or other run
	 * arguments fails the job with a message naming it; 0 = not checked
	 * (every rank must agree on that too). */
	uint64_t binary_hash;
	uint64_t args_hash;
	int timeout_ms; /* how long the ranks wait for each other */
	/* What the user changes when the address is wrong or taken, shown in
	 * errors; NULL = "--rendezvous HOST:PORT". */
	const char *addr_hint;
};

/* Meet the other ranks; *oob is ready for collectives on return.  A
 * collective with timeout_ms <= 0 waits up to 30 s. */
int frr_tcp_open(const struct frr_tcp_cfg *cfg, struct frr_oob **oob);

/* Hash of the running program (and of libflexrr when it is a shared
 * object): ranks of one job must run the same build.  Env
 * FLEXRR_TEST_BINHASH overrides it (tests). */
uint64_t frr_binary_hash(void);

/* ---- PMIx (pmix.c) ------------------------------------------------------ */
struct frr_pmix_cfg {
	/* Checked like the TCP rendezvous's: a rank with another binary or
	 * other run arguments than rank 0 fails the job, named. */
	uint64_t binary_hash;
	uint64_t args_hash;
	/* 0: rank 0 draws a random token and hands it to every rank through
	 * the launcher's store (readable only by the job's processes) */
	uint64_t job_token;
	int timeout_ms; /* fences (every collective given none); 0 = 30 s */
};

/* 1 when a PMIx launcher started this process (PMIX_NAMESPACE and
 * PMIX_RANK are set), built with PMIx or not. */
int frr_pmix_launched(void);
/* 1 when frr_pmix_open can work here: launched by PMIx and built with it. */
int frr_pmix_offered(void);
/* PMIx_Init and meet every rank of the namespace; *oob has the launcher's
 * rank and size and the job token (cfg's or rank 0's).  Collectives are
 * put/commit/fence/get, the barrier a fence; close finalizes PMIx.
 * -ENOTSUP (logged) when built without PMIx. */
int frr_pmix_open(const struct frr_pmix_cfg *cfg, struct frr_oob **oob);

/* ---- launcher environment (env.c) -------------------------------------- */
struct frr_launcher_env {
	int rank;
	int size;
	/* the launcher's job id (FLEXRR_JOB_ID, PMIX_NAMESPACE,
	 * OMPI_MCA_ess_base_jobid, SLURM_JOB_ID, PMI_JOBID) or NULL */
	const char *job_id;
	const char *rendezvous; /* FLEXRR_RENDEZVOUS or NULL */
	const char *job_token;	/* FLEXRR_JOB_TOKEN or NULL */
};

/* 1 and *env filled when a launcher started this process as one rank of a
 * job (FLEXRR_RANK/FLEXRR_SIZE, OMPI_COMM_WORLD_RANK/SIZE, PMIX_RANK,
 * PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS); 0 if not.  Rank and size
 * are as given: the caller checks their range. */
int frr_launcher_env(struct frr_launcher_env *env);

/* A 64-bit job token from a secret string (--job-token, FLEXRR_JOB_TOKEN):
 * never 0. */
uint64_t frr_job_token_from(const char *secret);
/* The token ranks derive when no secret is given: from the launcher's job
 * id (NULL: a one-rank job).  Anyone who can read the job id can join:
 * give a secret for multi-user hosts. */
uint64_t frr_job_token_from_job_id(const char *job_id);
/* A fresh random token (getrandom), never 0. */
uint64_t frr_job_token_random(void);

/* Default rendezvous address of ranks that share one host and a launcher
 * job id: 127.0.0.1 and a port in 20000..39999 derived from the id. */
void frr_rendezvous_from_job_id(const char *job_id, char *addr, size_t len);

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_BOOTSTRAP_H */
