/* SPDX-License-Identifier: MIT */
/*
 * Program entry (flexrr/job.h) internals: options.c turns the standard run
 * options into a struct frr_job, launch.c starts or joins the job and runs
 * it through frr_rt_job_run.
 */
#ifndef FLEXRR_RUNTIME_LAUNCH_H
#define FLEXRR_RUNTIME_LAUNCH_H

#include <errno.h>

#include "flexrr/job.h"
#include "job.h"

/* Options of `flexrr run` (the launcher parses them): what it needs to
 * start or join the job, and the runtime's parameters (p), which it hands
 * to frr_rt_job_run as they are. */
struct frr_run_opts {
	int nprocs;
	const char *rendezvous; /* HOST:PORT of rank 0 */
	int rendezvous_fd;	/* inherited listening socket (local jobs) */
	/* the job secret (FLEXRR_JOB_TOKEN[_FILE], or drawn by the local
	 * launcher); all zero = none given yet */
	struct frr_job_secret secret;
	int rr_engaged;	    /* unused: the mode decides */
	uint64_t args_hash; /* app name + options: must match on every rank */
	struct frr_rt_params p;
};

/* how launcher-started ranks meet (--bootstrap) */
enum frr_boot { FRR_BOOT_AUTO, FRR_BOOT_PMIX, FRR_BOOT_TCP };

struct frr_job {
	struct frr_run_opts o;
	const char *prog; /* names the program in messages ("flexrr run") */
	const struct frr_app_ops *const *apps; /* NULL-terminated */
	int have_procs, have_slack, have_mode, have_ckpt_every;
	int have_timeouts;  /* 1: --timeout given, 2: --dead-timeout given */
	int joined;	    /* frr_job_join_launched succeeded */
	double rdv_timeout; /* s */
	enum frr_boot boot;
	char **app_argv;   /* owned copy when the app's name was implied */
	char rdv_addr[64]; /* derived from the launcher's job id */
	/* --on-failure (FRR_ON_FAILURE_*) and --max-restarts: a local job
	 * restarted from its newest checkpoint when a rank dies */
	int on_failure;
	int max_restarts;
	/* the checkpoint directory the launcher made in memory for a local
	 * job with --on-failure but no --checkpoint (ckpt_mem.c), or NULL */
	char *mem_ckpt;
	int mem_janitor; /* with mem_ckpt: the pipe to its janitor */
};

enum { FRR_ON_FAILURE_FAIL, FRR_ON_FAILURE_RESTART, FRR_ON_FAILURE_RECOVER };
/* "fail", "restart" or "recover" */
const char *frr_job_on_failure_name(int on_failure);
/* A local job with --on-failure restart or recover and no --checkpoint:
 * make its checkpoint directory in memory (/dev/shm, mode 0700, a fresh
 * name) and point --checkpoint at it: 0 or a negative errno (said). */
int frr_job_mem_ckpt(struct frr_job *job);
/* Launched ranks with --on-failure recover and no --checkpoint: rank 0
 * makes the directory (no janitor: its process may be lost while the
 * others carry on) and the others on its host take its name; 0 or a
 * negative errno (said). */
int frr_job_mem_ckpt_launched(struct frr_job *job);
int frr_job_mem_ckpt_adopt(struct frr_job *job, const char *dir);
/* The job ended (err 0: well): remove that directory, or keep it and say
 * where.  Nothing when there is none. */
void frr_job_mem_ckpt_end(struct frr_job *job, int err);

void frr_job_init(struct frr_job *job, const char *prog,
		  const struct frr_app_ops *const *apps);
void frr_job_fini(struct frr_job *job);
/* The run options' table (run_opts.c) as the set that parses for job:
 * its messages name job->prog (see holds "'PROG --help'"); job NULL: the
 * set as `flexrr run` has it (for the defaults). */
void frr_job_opt_set(const struct frr_job *job, struct frr_opt_set *s,
		     char *see, size_t len);
/* Print the run options (and the apps of job->apps) to out. */
void frr_job_usage(const struct frr_job *job, FILE *out);
/* Parse argv (frr_run_main): 0 = run it, 1 = help was printed, -EINVAL =
 * usage error (said on stderr). */
int frr_job_parse_argv(struct frr_job *job, int argc, char **argv);
/* Check the options together and derive what follows from them (mode from
 * --slack, the rr layer): 0 or -EINVAL (said). */
int frr_job_finalize(struct frr_job *job);
/* The checks that need the job's shape (P x T workers: --stragglers'
 * worker indices), made once before any rank starts: 0 or -EINVAL (said). */
int frr_job_check_shape(const struct frr_job *job);
/* Launcher-started: check what the launcher says and take the rendezvous
 * address and token: 0 or -EINVAL (said). */
int frr_job_join_launched(struct frr_job *job,
			  const struct frr_launcher_env *env);
/* 1 when a launcher-started rank meets the others through PMIx (the
 * launcher offers it, --bootstrap allows it, no rendezvous address given,
 * not joined the TCP way already). */
int frr_job_wants_pmix(const struct frr_job *job);
/* Run a finalized job: 0 or a negative errno (logged). */
int frr_job_start(struct frr_job *job);

/* What a recovering rank adds to its meeting (launch/recover.c): met, a
 * collective every rank makes once they met; abandon, frr_tcp_cfg's. */
struct frr_rank_hooks {
	int (*met)(void *arg, struct frr_oob *oob);
	int (*abandon)(void *arg, int missing);
	void *arg;
};

/* A rank of a TCP rendezvous at addr (lfd: rank 0's listening socket,
 * closed by it; -1 = listen or dial addr): meet, then h->met (h may be
 * NULL), run the job with o.  0 or a negative errno (logged, but for
 * -ECANCELED: h->abandon gave the meeting up). */
int frr_launch_rank_tcp(struct frr_job *job, struct frr_run_opts *o, int rank,
			int size, const char *addr, int lfd,
			const struct frr_rank_hooks *h);
/* The ranks of oob met: h->met (h may be NULL), then run the job with o. */
int frr_launch_rank_met(struct frr_run_opts *o, struct frr_oob *oob,
			const struct frr_rank_hooks *h);

/* How a rank's job ends when it loses a peer, not by an error of its own:
 * the peer's connection dropped (-ENOTCONN, -ECONNRESET, -EPIPE), a wait
 * for it passed its deadline (-ETIMEDOUT), or, in a recovering job, its
 * epoch ended under it (-ESTALE: a checkpoint write refused; -ECANCELED:
 * a meeting given up).  A restart or
 * a recovery can mend these; a rank's own error they would repeat. */
static inline int frr_launch_peer_lost(int err)
{
	return err == -ENOTCONN || err == -ETIMEDOUT || err == -ECONNRESET ||
	       err == -EPIPE || err == -ESTALE || err == -ECANCELED;
}

/* ---- --on-failure recover (board.c, recover.c) ---- */
/* What the local launcher tells its ranks of lost ones: a page shared
 * with the forked ranks. */
struct frr_board;
int frr_board_new(const struct frr_job *job, struct frr_board **b);
void frr_board_free(struct frr_board *b);
/* frr_launch's on_lost (in the launcher's process) */
void frr_board_lost(void *board, int rank, int status);
/* The launcher's cfg.watch: a rank its peers found hung, now lost, or -1. */
int frr_board_watch(void *board);
/* The survivors' side: the epoch and the lost flags read together (a
 * loss between the reads is read again); the epoch after e once settled,
 * or e if none came in 3 s or a rank posted its own error; the epoch;
 * post this rank's own error (not a loss: nobody waits for one); post
 * process proc found silent by process by (the first post stays). */
unsigned frr_board_read(struct frr_board *b, unsigned char *lost);
unsigned frr_board_wait(struct frr_board *b, unsigned e);
unsigned frr_board_epoch(const struct frr_board *b);
void frr_board_own_error(struct frr_board *b);
void frr_board_hung(struct frr_board *b, int proc, int by);
/* Local rank me of a recovering job: run it, and after each loss carry on
 * with the survivors (lfd: the rendezvous socket, kept). */
int frr_recover_rank(struct frr_job *job, struct frr_board *b, int me,
		     const char *addr, int lfd);
/* Rank me of size, started by a launcher, meeting at addr (TCP) or, with
 * addr NULL, through oob0 (PMIx: the ranks met already): run it, and
 * after each loss agree with the others who is left and carry on, meeting
 * over TCP from then on. */
int frr_recover_launched(struct frr_job *job, int me, int size,
			 const char *addr, struct frr_oob *oob0);
/* Tests (recover_test.c): env FLEXRR_TEST_DIE_MEET=R makes the process
 * of rank R (me) die, or with R:silent go silent, on its way to epoch's
 * meeting, once per ckpt_dir; mfd: its members socket. */
void frr_test_die_meet(int me, const char *ckpt_dir, unsigned epoch, int *mfd);

#endif /* FLEXRR_RUNTIME_LAUNCH_H */
