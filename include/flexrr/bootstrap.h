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
 *   oob.c    frr_oob_allgather[v]: any size, in rounds every backend
 *            takes
 *   env.c    frr_launcher_env: rank, size and job id from a launcher's
 *            environment (mpirun, srun, PMI/PMIx, FLEXRR_*)
 *   auth.c   the job secret (random, FLEXRR_JOB_TOKEN[_FILE]) and the
 *            HMAC-SHA256 challenge-response every layer proves it with
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

/* The job secret: 32 bytes that only the job's processes know (auth.c). */
#define FRR_JOB_SECRET_LEN 32
struct frr_job_secret {
	unsigned char b[FRR_JOB_SECRET_LEN];
};

struct frr_oob_ops {
	size_t size; /* sizeof(struct frr_oob_ops): the table may grow */
	/* all[r*len .. (r+1)*len) receives rank r's 'mine'; collective.
	 * Called by frr_oob_allgather[v] with len x size <= 48 MiB. */
	int (*allgather)(struct frr_oob *oob, const void *mine, size_t len,
			 void *all, int timeout_ms);
	int (*barrier)(struct frr_oob *oob, int timeout_ms);
	void (*close)(struct frr_oob *oob);
};

struct frr_oob {
	const struct frr_oob_ops *ops;
	int rank;
	int size;
	/* public tag of the job (frr_job_secret_tag): names it in
	 * addresses and descriptors; proves nothing */
	uint64_t job_token;
	struct frr_job_secret secret; /* never sent, logged or printed */
};

/*
 * Collective: all[r*len .. (r+1)*len) receives rank r's 'mine' (len bytes,
 * the same len on every rank).  Any len: a large one goes through the
 * backend in rounds of at most 48 MiB for all ranks together (oob.c), each
 * round waiting up to timeout_ms.  0 or a negative errno (logged).
 */
int frr_oob_allgather(struct frr_oob *oob, const void *mine, size_t len,
		      void *all, int timeout_ms);

/*
 * Collective with a length per rank: rank r contributes lens[r] bytes and
 * 'all' receives them in rank order, rank r's at lens[0] + .. + lens[r-1].
 * Every rank passes the same lens (exchange them first, e.g. with
 * frr_oob_allgather); rounds as above.  0 or a negative errno (logged).
 */
int frr_oob_allgatherv(struct frr_oob *oob, const void *mine,
		       const size_t *lens, void *all, int timeout_ms);

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

/* How a failed local launch failed (frr_launch_cfg.result). */
struct frr_launch_result {
	int failed_rank; /* the rank that failed first (most surely its own
			  * failure, not a consequence), or -1: none did */
	int signal;	 /* it was killed by this signal, or 0 */
	int exit_code;	 /* else its exit code */
	int timed_out;	 /* a rank was killed at cfg->timeout_ms */
	int hung_rank;	 /* the first rank still running after the grace
			  * period, killed then, or -1 */
	int lost;	 /* FRR_LAUNCH_SURVIVE: ranks lost (cfg.on_lost) */
};

struct frr_launch_cfg {
	int nprocs;
	/* kill every rank still running after timeout_ms; 0 = no limit */
	int timeout_ms;
	/* after a rank fails, the others get grace_ms to end on their own
	 * (e.g. to report the dead peer) before they are killed; 0 = 2000 */
	int grace_ms;
	/* FRR_LAUNCH_* flags */
	unsigned flags;
	/* optional: filled when frr_launch returns */
	struct frr_launch_result *result;
	/* FRR_LAUNCH_SURVIVE: told, in the caller's process, of each rank
	 * lost (status as waitpid gave it: killed or stopped by a signal) */
	void (*on_lost)(void *lost_arg, int rank, int status);
	void *lost_arg;
	/* FRR_LAUNCH_SURVIVE, optional: asked at every poll (20 ms) for a
	 * rank the caller found lost although no signal said so (its peers
	 * found it alive but silent), or -1.  The launcher counts it lost
	 * (on_lost is not told: the caller knows), gives it 1 s to end on
	 * its own (it may see it was fenced and say so), then kills it. */
	int (*watch)(void *lost_arg);
};

enum frr_launch_flags {
	/* The ranks bring their own channel (e.g. frr_tcp_open): the oob
	 * that fn gets carries only rank, size and a fresh random job
	 * secret (inherited through fork, never in argv or the
	 * environment); its collectives fail with -ENOTSUP. */
	FRR_LAUNCH_NO_RELAY = 1u << 0,
	/* The ranks log their own errors: report only ranks that were killed
	 * by a signal or by the timeout, not every non-zero exit. */
	FRR_LAUNCH_QUIET_EXITS = 1u << 1,
	/* After a failure, kill at once the ranks left if all are stopped by
	 * a signal (SIGSTOP, ^Z), instead of waiting grace_ms: for a caller
	 * that restarts the job (a stopped rank that is continued later can
	 * no longer report its own verdict). */
	FRR_LAUNCH_KILL_STOPPED = 1u << 2,
	/* A rank killed or stopped by a signal is lost, not a failure: the
	 * others are not killed (they carry on without it), cfg.on_lost is
	 * told, and the launch succeeds when every other rank exits 0.  A
	 * lost rank that is stopped is continued (SIGCONT) once only lost
	 * ranks are left, so it can see it was fenced and say so; it is
	 * killed grace_ms later if it has not ended. */
	FRR_LAUNCH_SURVIVE = 1u << 3,
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

/* ---- who is left after a loss (members.c) ------------------------------ */
/* Listen for the other ranks on the interface that reaches toward
 * (HOST:PORT, e.g. the rendezvous address; *:PORT: the address this
 * host's name resolves to): *fd, and its address as HOST:PORT in addr.  0 or a
 * negative errno (logged). */
int frr_members_listen(const char *toward, int *fd, char *addr, size_t len);

struct frr_members_cfg {
	int rank, size;
	unsigned epoch;	 /* the epoch whose job failed */
	uint64_t run_id; /* the same on every rank of one run of the job */
	const struct frr_job_secret *secret;
	char (*addrs)[64]; /* every rank's frr_members_listen address */
	int listen_fd;	   /* ours */
	/* how long a live rank may take to answer: its job fails within the
	 * dead-peer timeout of ours, then it asks or answers */
	int answer_ms;
	/* the coordinator claims epoch + 1 before it says who is lost: 0, or
	 * -EEXIST when another rank coordinated it (this one was left
	 * behind) */
	int (*lease)(void *lease_arg, unsigned epoch);
	void *lease_arg;
};

/*
 * After this rank's job failed: the ranks agree who is left.  Each asks the
 * ranks below it in order; the first that answers is the coordinator (the
 * lowest live rank, which serves the next epoch's rendezvous on its
 * listen_fd).  Returns 1 when ranks were lost (lost[r] = 1 for each; a new
 * epoch follows), 0 when nobody was (the job failed on its own), -ESTALE
 * when this rank is not in the next epoch (it was left behind), or another
 * negative errno.
 */
int frr_members_agree(const struct frr_members_cfg *cfg, unsigned char *lost);

/* Whether the process that listened at addr (frr_members_listen) is gone:
 * 1 when a connection there is refused (nobody listens), 0 when it is
 * taken, a negative errno when nothing answered within ms (-ETIMEDOUT: a
 * host that is down, or a network that drops; the caller decides how long
 * a silence it takes for gone). */
int frr_members_gone(const char *addr, int ms);

/* ---- TCP rendezvous (tcp.c) -------------------------------------------- */
struct frr_tcp_cfg {
	/* HOST:PORT of rank 0 ([v6addr]:PORT for IPv6 literals).  Rank 0
	 * listens there (HOST "*": every IPv4 interface), the others
	 * connect, retrying until the timeout. */
	const char *addr;
	int listen_fd; /* rank 0: a socket already listening, else -1 */
	int rank;
	int size;
	/* Shared by every rank: ranks prove they know it by HMAC
	 * challenge-response (both ways); connections that fail are
	 * refused and logged, the job goes on waiting.  NULL: an
	 * unauthenticated pairing with a well-known key (`flexrr bench`,
	 * perftest-style; every side must pass NULL). */
	const struct frr_job_secret *secret;
	/* A rank with another binary (frr_binary_hash()) or other run
	 * arguments is refused (that connection only, logged naming it);
	 * 0 = not checked (every rank must agree on that too). */
	uint64_t binary_hash;
	uint64_t args_hash;
	int timeout_ms; /* how long the ranks wait for each other */
	/* What the user changes when the address is wrong or taken, in the
	 * caller's words, shown in errors (e.g. "--rendezvous HOST:PORT");
	 * NULL = "frr_tcp_cfg.addr". */
	const char *addr_hint;
	/* What the user changes to wait longer for the ranks to meet, in the
	 * caller's words (e.g. "raise --rendezvous-timeout"); NULL = "raise
	 * frr_tcp_cfg.timeout_ms". */
	const char *timeout_hint;
	/* Optional: asked at least every 100 ms while rank 0 waits for the
	 * others (missing: the lowest rank that has not joined yet), or a
	 * rank for rank 0's verdict (missing -1); nonzero gives the meeting
	 * up (-ECANCELED, not logged): a rank that was to come is known
	 * lost, so waiting out timeout_ms would only delay the next try. */
	int (*abandon)(void *arg, int missing);
	void *abandon_arg;
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
	/* NULL: rank 0 draws a random secret and hands it to every rank
	 * through the launcher's store (readable only by the job's
	 * processes, which the PMIx server authenticates) */
	const struct frr_job_secret *secret;
	int timeout_ms; /* fences (every collective given none); 0 = 30 s */
	/* What the user changes, in the caller's words, shown in errors (as
	 * frr_tcp_cfg's addr_hint): to meet through the TCP rendezvous
	 * instead (e.g. "use --bootstrap tcp"; NULL = "meet through the TCP
	 * rendezvous (frr_tcp_open)") and to wait longer for slow starts
	 * (e.g. "raise --rendezvous-timeout"; NULL = "raise
	 * frr_pmix_cfg.timeout_ms"). */
	const char *tcp_hint;
	const char *timeout_hint;
};

/* 1 when a PMIx launcher started this process (PMIX_NAMESPACE and
 * PMIX_RANK are set), built with PMIx or not. */
int frr_pmix_launched(void);
/* 1 when frr_pmix_open can work here: launched by PMIx and built with it. */
int frr_pmix_offered(void);
/* PMIx_Init and meet every rank of the namespace; *oob has the launcher's
 * rank and size and the job secret (cfg's or rank 0's).  Collectives are
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
	/* this rank's index among the job's ranks on its node (threads pin
	 * by it): the launcher's OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID,
	 * PMIX_LOCAL_RANK, MPI_LOCALRANKID or PMI_LOCAL_RANK; -1 = unknown */
	int local_rank;
};

/* 1 and *env filled when a launcher started this process as one rank of a
 * job (FLEXRR_RANK/FLEXRR_SIZE, OMPI_COMM_WORLD_RANK/SIZE, PMIX_RANK,
 * PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS); 0 if not.  Rank and size
 * are as given: the caller checks their range. */
int frr_launcher_env(struct frr_launcher_env *env);

/* ---- job authentication (auth.c) -------------------------------------- */
#define FRR_AUTH_NONCE_LEN 16
#define FRR_AUTH_MAC_LEN 32 /* HMAC-SHA256 */

/* 32 fresh random bytes (getrandom): 0 or a negative errno (logged). */
int frr_job_secret_random(struct frr_job_secret *s);
/* 1 unless every byte is 0 (no secret given). */
int frr_job_secret_is_set(const struct frr_job_secret *s);
/* The secret from FLEXRR_JOB_TOKEN (at least 32 characters) or
 * FLEXRR_JOB_TOKEN_FILE (a regular file of ours, mode 0600 or stricter):
 * 1 = found, 0 = neither is set, < 0 = refused (logged, saying how to fix). */
int frr_job_secret_from_env(struct frr_job_secret *s);
/* frr_job_secret_from_env, and an error saying how to give one when there
 * is none (-EACCES). */
int frr_job_secret_require(struct frr_job_secret *s, int rank);
/* The job's public tag (never 0): a MAC, it does not reveal the secret. */
uint64_t frr_job_secret_tag(const struct frr_job_secret *s);
/* A fresh random nonce: 0 or a negative errno (logged). */
int frr_auth_nonce(unsigned char nonce[FRR_AUTH_NONCE_LEN]);
/* HMAC-SHA256(secret, role NUL || na || nb || params).  role names the
 * protocol and the side ("rdv rank0", "shm client", ...), so a proof is
 * never valid for another; params bind what was negotiated (ranks, sizes,
 * hashes); at most ~400 bytes in all. */
void frr_auth_mac(const struct frr_job_secret *s, const char *role,
		  const unsigned char na[FRR_AUTH_NONCE_LEN],
		  const unsigned char nb[FRR_AUTH_NONCE_LEN],
		  const void *params, size_t plen,
		  unsigned char mac[FRR_AUTH_MAC_LEN]);
/* 1 when mac (its first mac_len bytes, 16..32: rdma_cm private data is
 * short) is the MAC of these inputs; compared in constant time. */
int frr_auth_verify(const struct frr_job_secret *s, const char *role,
		    const unsigned char na[FRR_AUTH_NONCE_LEN],
		    const unsigned char nb[FRR_AUTH_NONCE_LEN],
		    const void *params, size_t plen, const unsigned char *mac,
		    size_t mac_len);

/* Default rendezvous address of ranks that share one host and a launcher
 * job id: 127.0.0.1 and a port in 20000..39999 derived from the id. */
void frr_rendezvous_from_job_id(const char *job_id, char *addr, size_t len);

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_BOOTSTRAP_H */
