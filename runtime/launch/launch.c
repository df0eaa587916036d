// SPDX-License-Identifier: MIT
/*
 * Starting or joining a job (flexrr/job.h): a local job forks P ranks that
 * meet at a loopback rendezvous; a rank started by a launcher (mpirun, srun,
 * ...) meets the others through the launcher's PMIx server when it offers
 * one, else at rank 0's rendezvous address.  Either way each rank runs
 * frr_rt_job_run.  Nothing here ends the calling process: errors
 * are returned (usage: -EINVAL, the job: its negative errno) after logging.
 */
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "launch.h"

/* Run the job as rank oob->rank: 0 or a negative errno (logged). */
static int run_rank(struct frr_run_opts *o, struct frr_oob *oob)
{
	int err = frr_rt_job_run(oob, &o->p);

	/* the runtime returns a negative errno with the reason logged; any
	 * other non-zero value is a failure too */
	return err < 0 ? err : err ? -EIO : 0;
}

/* Rank 0 of a launcher's job says how the ranks met (stderr, like the
 * progress lines); every rank logs it at info level. */
static void say_bootstrap(const struct frr_run_opts *o,
			  const struct frr_oob *oob, const char *how)
{
	frr_info("rank %d of %d met the others through %s", oob->rank,
		 oob->size, how);
	if (!oob->rank && !o->p.quiet)
		fprintf(stderr, "flexrr: bootstrap %s: %d ranks\n", how,
			oob->size);
}

int frr_launch_rank_tcp(struct frr_job *job, struct frr_run_opts *o, int rank,
			int size, const char *addr, int lfd,
			const struct frr_rank_hooks *h)
{
	struct frr_tcp_cfg tcp = {
		.addr = addr,
		.listen_fd = lfd,
		.rank = rank,
		.size = size,
		.secret = &o->secret,
		.binary_hash = frr_binary_hash(),
		.args_hash = o->args_hash,
		.timeout_ms = (int)(job->rdv_timeout * 1000),
		.addr_hint = "--rendezvous HOST:PORT",
		.timeout_hint = "raise --rendezvous-timeout",
		.abandon = h ? h->abandon : NULL,
		.abandon_arg = h ? h->arg : NULL,
	};
	struct frr_oob *oob = NULL;
	int err;

	frr_log_set_rank(rank);
	err = frr_tcp_open(&tcp, &oob);
	if (err)
		return err;
	if (lfd < 0) { /* launcher-started, not a local job */
		char how[96];

		snprintf(how, sizeof(how), "tcp (rendezvous %s)", addr);
		say_bootstrap(o, oob, how);
	}
	err = frr_launch_rank_met(o, oob, h);
	frr_oob_close(oob);
	return err;
}

int frr_launch_rank_met(struct frr_run_opts *o, struct frr_oob *oob,
			const struct frr_rank_hooks *h)
{
	int err = h && h->met ? h->met(h->arg, oob) : 0;

	return err ? err : run_rank(o, oob);
}

/* One rank: meet the others at the TCP rendezvous, run the job. */
static int rank_main(struct frr_job *job, int rank, int size, const char *addr,
		     int lfd)
{
	return frr_launch_rank_tcp(job, &job->o, rank, size, addr, lfd, NULL);
}

struct local_job {
	struct frr_job *job;
	char addr[64];
	int lfd;
	struct frr_board *board; /* --on-failure recover */
};

/* In a child forked by frr_launch (it ends the child with our result). */
static int local_rank(struct frr_oob *oob, void *arg)
{
	struct local_job *j = arg;

	/* frr_launch drew it for this job; the child has it in memory */
	j->job->o.secret = oob->secret;
	/* every survivor keeps the socket: whoever runs rank 0 next serves */
	if (j->board)
		return frr_recover_rank(j->job, j->board, oob->rank, j->addr,
					j->lfd);
	if (oob->rank)
		close(j->lfd);
	return rank_main(j->job, oob->rank, oob->size, j->addr,
			 oob->rank ? -1 : j->lfd);
}

/* A loopback socket bound before the fork: its port is known to every
 * rank and nobody else can take it. */
static int loopback_listen(struct local_job *j)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int err;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	j->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (j->lfd < 0 || bind(j->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(j->lfd, 64) ||
	    getsockname(j->lfd, (struct sockaddr *)&sa, &sl)) {
		err = -errno;
		frr_err("cannot open a loopback socket for the local job: %s",
			strerror(errno));
		if (j->lfd >= 0)
			close(j->lfd);
		return err;
	}
	snprintf(j->addr, sizeof(j->addr), "127.0.0.1:%d", ntohs(sa.sin_port));
	return 0;
}

/* Runnable threads per core above which a local job is oversubscribed:
 * a rank's server may then wait seconds for a core, and its heartbeats
 * with it, so the default deadlines would declare healthy peers dead. */
#define FRR_OVERSUB 16
#define FRR_OVERSUB_MAX_MS 120000

/* A default deadline scaled by the oversubscription (> FRR_OVERSUB), up
 * to FRR_OVERSUB_MAX_MS; never shortened. */
static int scaled_ms(int ms, double over)
{
	double s = ms * over / FRR_OVERSUB;

	if (s < FRR_OVERSUB_MAX_MS)
		return (int)s;
	return ms > FRR_OVERSUB_MAX_MS ? ms : FRR_OVERSUB_MAX_MS;
}

/*
 * A local job's P x (T workers + 1 server) threads against the cores this
 * process may use: far above, warn, and scale the failure-detection
 * deadlines the user did not set (else say which option to raise).
 */
static void check_oversubscription(struct frr_job *job)
{
	struct frr_run_opts *o = &job->o;
	cpu_set_t set;
	int cores =
	    sched_getaffinity(0, sizeof(set), &set) ? 0 : CPU_COUNT(&set);
	double over =
	    cores ? (double)o->nprocs * (o->p.threads + 1) / cores : 0;

	if (over <= FRR_OVERSUB)
		return;
	if (!(job->have_timeouts & 2))
		o->p.dead_ms = scaled_ms(o->p.dead_ms, over);
	if (!(job->have_timeouts & 1))
		o->p.timeout_ms = scaled_ms(o->p.timeout_ms, over);
	fprintf(stderr,
		"%s: warning: -n %d x (-t %d + 1 server) = %d threads on %d "
		"cores (%.0fx oversubscribed): heartbeats may come late; "
		"--dead-timeout %g s and --timeout %g s%s (use fewer -n or "
		"-t, or raise them if a rank is still declared dead or hung)\n",
		job->prog, o->nprocs, o->p.threads,
		o->nprocs * (o->p.threads + 1), cores, over,
		o->p.dead_ms / 1000.0, o->p.timeout_ms / 1000.0,
		job->have_timeouts == 3 ? " as given"
		: job->have_timeouts	? " (the one not given scaled)"
					: " (scaled)");
}

/* After a rank failed, how long the others get to end on their own: they
 * see a peer gone at once and a silent one after the --dead-timeout, so a
 * rank still there after three of those and 2 s is stopped or hung (or
 * fenced, continued and not ended): killed then, and at most after 15 s. */
static int grace_ms(const struct frr_job *job)
{
	long long g = 3LL * job->o.p.dead_ms + 2000;

	return g < 15000 ? (int)g : 15000;
}

/* Fork P ranks once; they meet at a loopback socket bound before. */
static int launch_once(struct frr_job *job, struct frr_launch_result *res,
		       struct frr_board *board)
{
	/* no deadline: jobs run as long as they make progress (--timeout) */
	struct frr_launch_cfg cfg = { .nprocs = job->o.nprocs,
				      .grace_ms = grace_ms(job),
				      .flags = FRR_LAUNCH_NO_RELAY |
					       FRR_LAUNCH_QUIET_EXITS,
				      .result = res };

	/* restarting: a stopped rank is killed at once, not waited for */
	if (job->on_failure == FRR_ON_FAILURE_RESTART)
		cfg.flags |= FRR_LAUNCH_KILL_STOPPED;
	/* recovering: a lost rank is marked on the board, not avenged */
	if (board) {
		cfg.flags |= FRR_LAUNCH_SURVIVE;
		cfg.on_lost = frr_board_lost;
		cfg.watch = frr_board_watch;
		cfg.lost_arg = board;
	}
	struct local_job j = { .job = job, .board = board };
	int err = loopback_listen(&j);

	if (err)
		return err;
	err = frr_launch(&cfg, local_rank, &j);
	close(j.lfd);
	return err;
}

/* The first failure was a rank giving up on a peer: it lost one
 * (ENOTCONN) or waited for one past a deadline (ETIMEDOUT). */
static int gave_up(const struct frr_launch_result *r)
{
	return frr_launch_peer_lost(-r->exit_code);
}

/* A rank died or hung (killed by a signal, by the --timeout, or the ranks
 * gave up on a peer): what a restart can mend, unlike a rank's own error,
 * which it would repeat. */
static int died(const struct frr_launch_result *r)
{
	return r->signal || r->timed_out || gave_up(r);
}

/* What happened, naming the rank: the silent one when its peers stopped
 * over it. */
static void what_happened(const struct frr_launch_result *r, char *buf,
			  size_t len)
{
	int hung = !r->signal && r->hung_rank >= 0 && gave_up(r);
	int rank = hung ? r->hung_rank : r->failed_rank;
	int n = rank >= 0 ? snprintf(buf, len, "rank %d ", rank)
			  : snprintf(buf, len, "the job ");

	buf += n;
	len -= (size_t)n;
	if (r->signal)
		snprintf(buf, len, "was killed by signal %d (%s)", r->signal,
			 strsignal(r->signal));
	else if (hung)
		snprintf(buf, len,
			 "stopped answering (its peers gave up on "
			 "it, then it was killed)");
	else if (r->timed_out)
		snprintf(buf, len, "hung (killed at the --timeout)");
	else if (r->failed_rank < 0)
		snprintf(buf, len,
			 "did not start (its message above says why)");
	else if (gave_up(r))
		snprintf(buf, len,
			 "gave up on a peer (%s: its message above "
			 "names it)",
			 strerror(r->exit_code));
	else
		snprintf(buf, len, "failed with its own error (%s)",
			 strerror(r->exit_code));
}

/*
 * --on-failure restart: after a rank died, the whole local job starts
 * again from --checkpoint DIR's newest complete checkpoint (from clock 0,
 * or the user's --resume, when there is none yet), at most --max-restarts
 * times.  A BSP job with a fixed seed ends as the uninterrupted one would
 * (resume's guarantee); the clocks since that checkpoint run again.
 */
static int restart_or_not(struct frr_job *job,
			  const struct frr_launch_result *r, int n)
{
	char what[192];
	int clock, named, err;

	what_happened(r, what, sizeof(what));
	if (!died(r)) {
		fprintf(stderr,
			"%s: not restarting: %s, which a restart would repeat "
			"(its message above says what to fix)\n",
			job->prog, what);
		return 0;
	}
	if (n >= job->max_restarts) {
		fprintf(stderr,
			"%s: %s; the %d restart(s) of --max-restarts are used "
			"up: giving up\n",
			job->prog, what, job->max_restarts);
		return 0;
	}
	err = frr_ckpt_latest(job->o.p.ckpt_dir, &clock, &named);
	if (err && err != -ENOENT) {
		fprintf(stderr,
			"%s: %s, and %s/latest cannot be read (%s): not "
			"restarting\n",
			job->prog, what, job->o.p.ckpt_dir, strerror(-err));
		return 0;
	}
	if (!err)
		job->o.p.resume_dir = job->o.p.ckpt_dir;
	fprintf(stderr, "%s: %s; restarting the job (restart %d of %d) ",
		job->prog, what, n + 1, job->max_restarts);
	if (!err)
		fprintf(stderr, "from %s/ckpt-%d: clocks after %d run again\n",
			job->o.p.ckpt_dir, clock, clock);
	else
		fprintf(stderr, "%s\n",
			job->o.p.resume_dir
			    ? "from its --resume checkpoint: it wrote none of "
			      "its own yet"
			    : "from clock 0: it wrote no checkpoint yet");
	return 1;
}

static int run_local(struct frr_job *job)
{
	/* once here, not once per forked rank (frr_job_run callers too) */
	int err = frr_job_check_shape(job), n = 0;
	double t0 = frr_now_s();
	struct frr_board *board = NULL;

	if (!err)
		err = frr_job_mem_ckpt(job);
	if (err)
		return err;
	check_oversubscription(job);
	if (job->on_failure == FRR_ON_FAILURE_RECOVER) {
		struct frr_launch_result res = { .failed_rank = -1,
						 .hung_rank = -1 };

		err = frr_board_new(job, &board);
		if (!err)
			err = launch_once(job, &res, board);
		if (!err && res.lost)
			fprintf(stderr,
				"%s: done: %d rank(s) lost, the others carried "
				"on (--on-failure recover), %.1f s in all\n",
				job->prog, res.lost, frr_now_s() - t0);
		frr_board_free(board);
		frr_job_mem_ckpt_end(job, err);
		return err;
	}
	for (;;) {
		struct frr_launch_result res = { .failed_rank = -1,
						 .hung_rank = -1 };

		err = launch_once(job, &res, NULL);
		if (!err || job->on_failure != FRR_ON_FAILURE_RESTART ||
		    !restart_or_not(job, &res, n))
			break;
		n++;
	}
	if (n && !err)
		fprintf(stderr, "%s: done after %d restart(s), %.1f s in all\n",
			job->prog, n, frr_now_s() - t0);
	frr_job_mem_ckpt_end(job, err);
	return err;
}

int frr_job_join_launched(struct frr_job *job,
			  const struct frr_launcher_env *env)
{
	struct frr_run_opts *o = &job->o;

	if (env->rank < 0 || env->size < 1 || env->rank >= env->size) {
		fprintf(stderr, "%s: the launcher gave rank %d of %d\n",
			job->prog, env->rank, env->size);
		return -EINVAL;
	}
	if (job->have_procs && o->nprocs != env->size) {
		fprintf(stderr,
			"%s: -n %d but the launcher started %d ranks; drop -n "
			"or make them agree\n",
			job->prog, o->nprocs, env->size);
		return -EINVAL;
	}
	o->nprocs = env->size;
	if (!o->rendezvous)
		o->rendezvous = env->rendezvous;
	if (!o->rendezvous && env->size > 1) {
		if (!env->job_id) {
			fprintf(stderr,
				"%s: rank %d of %d: no rendezvous address; "
				"give --rendezvous HOST:PORT (rank 0's host) "
				"or set FLEXRR_RENDEZVOUS\n",
				job->prog, env->rank, env->size);
			return -EINVAL;
		}
		frr_rendezvous_from_job_id(env->job_id, job->rdv_addr,
					   sizeof(job->rdv_addr));
		o->rendezvous = job->rdv_addr;
	}
	/* a secret only the job's ranks know: never derived from the
	 * launcher's job id, which every local user can read */
	if (!frr_job_secret_is_set(&o->secret)) {
		/* one rank has nobody to prove it to: any secret will do */
		int err = env->size == 1 && !getenv("FLEXRR_JOB_TOKEN") &&
				  !getenv("FLEXRR_JOB_TOKEN_FILE")
			      ? frr_job_secret_random(&o->secret)
			      : frr_job_secret_require(&o->secret, env->rank);

		if (err)
			return err;
	}
	job->joined = 1;
	return 0;
}

/* A PMIx launcher started us: meet through its key-value store (the
 * secret too: rank 0's random one unless one is given), run the job. */
static int run_pmix(struct frr_job *job)
{
	struct frr_run_opts *o = &job->o;
	struct frr_pmix_cfg px = { .binary_hash = frr_binary_hash(),
				   .args_hash = o->args_hash,
				   .timeout_ms = (int)(job->rdv_timeout * 1000),
				   .tcp_hint = "use --bootstrap tcp",
				   .timeout_hint =
				       "raise --rendezvous-timeout" };
	struct frr_oob *oob = NULL;
	int err = 0;

	if (!frr_job_secret_is_set(&o->secret))
		err = frr_job_secret_from_env(&o->secret);
	if (err < 0)
		return err;
	if (frr_job_secret_is_set(&o->secret))
		px.secret = &o->secret;
	err = frr_pmix_open(&px, &oob);
	if (err)
		return err;
	if (job->have_procs && o->nprocs != oob->size) {
		fprintf(stderr,
			"%s: -n %d but the launcher started %d ranks; drop -n "
			"or make them agree\n",
			job->prog, o->nprocs, oob->size);
		frr_oob_close(oob);
		return -EINVAL;
	}
	o->nprocs = oob->size;
	o->secret = oob->secret;
	frr_log_set_home(oob->rank);
	say_bootstrap(o, oob, "pmix (the launcher's key-value store)");
	err = job->on_failure == FRR_ON_FAILURE_RECOVER
		  ? frr_recover_launched(job, oob->rank, oob->size, NULL, oob)
		  : run_rank(o, oob);
	frr_oob_close(oob);
	return err;
}

int frr_job_wants_pmix(const struct frr_job *job)
{
	if (job->joined || job->boot == FRR_BOOT_TCP)
		return 0;
	if (job->boot == FRR_BOOT_PMIX)
		return 1;
	return frr_pmix_offered() && !job->o.rendezvous &&
	       !getenv("FLEXRR_RENDEZVOUS");
}

int frr_job_start(struct frr_job *job)
{
	struct frr_launcher_env env;
	int launched = frr_launcher_env(&env), err;

	/* threads pin by it; -1 (a local job): by the rank */
	job->o.p.local_rank = launched ? env.local_rank : -1;
	if (!launched && !frr_job_wants_pmix(job))
		return run_local(job);
	if (job->on_failure == FRR_ON_FAILURE_RESTART) {
		/* every rank says it: each exits, and the launcher shows the
		 * first */
		fprintf(stderr,
			"%s: --on-failure restart restarts a local -n P job; "
			"this rank was started by a launcher (srun, mpirun, "
			"PMIx): let it restart the job (docs/cluster.md, e.g. "
			"sbatch --requeue) with --resume DIR\n",
			job->prog);
		return -EINVAL;
	}
	if (frr_job_wants_pmix(job))
		return run_pmix(job);
	err = job->joined ? 0 : frr_job_join_launched(job, &env);
	if (err)
		return err;
	frr_log_set_home(env.rank);
	if (job->on_failure == FRR_ON_FAILURE_RECOVER)
		return frr_recover_launched(job, env.rank, env.size,
					    job->o.rendezvous, NULL);
	return rank_main(job, env.rank, env.size, job->o.rendezvous, -1);
}

int frr_job_run(struct frr_job *job)
{
	int err = frr_job_finalize(job);

	return err ? err : frr_job_start(job);
}

int frr_job_run_rank(struct frr_job *job, struct frr_oob *oob)
{
	int err = frr_job_finalize(job);

	if (err)
		return err;
	job->o.nprocs = oob->size;
	return run_rank(&job->o, oob);
}

int frr_run_main(int argc, char **argv, const struct frr_app_ops *const *apps)
{
	struct frr_launcher_env env;
	struct frr_job job;
	int err;

	frr_job_init(&job, argc > 0 ? argv[0] : NULL, apps);
	err = frr_job_parse_argv(&job, argc, argv);
	if (!err)
		err = frr_job_finalize(&job);
	/* the PMIx path takes rank, size and token from the launcher */
	if (!err && !frr_job_wants_pmix(&job) && frr_launcher_env(&env))
		err = frr_job_join_launched(&job, &env);
	/* PMIx tells the size only once the ranks meet */
	if (!err && !frr_job_wants_pmix(&job))
		err = frr_job_check_shape(&job);
	if (err) { /* 1: help printed; -EINVAL: usage error, said */
		frr_job_fini(&job);
		return err == 1 ? 0 : 2;
	}
	err = frr_job_start(&job);
	frr_job_fini(&job);
	return err ? 1 : 0;
}
