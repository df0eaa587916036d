// SPDX-License-Identifier: MIT
/*
 * `flexrr run`: parse the common run options, then either start a local job
 * (fork P ranks that meet over a loopback rendezvous) or, when a launcher
 * (mpirun, srun, ...) started us, join the job as one rank.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"
#include "flexrr/job.h"
#include "rt.h"

static void usage(FILE *out, const struct frr_app_ops *const *apps)
{
	fprintf(
	    out,
	    "usage: flexrr run [options] APP [app options]\n"
	    "       flexrr run -n P APP --help     (the app's options)\n"
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
	    "  --no-pin               do not pin worker threads to cores\n"
	    "  --timeout S            fail when no worker of the job made "
	    "progress\n"
	    "                         for S s (60)\n"
	    "  --dead-timeout S       a silent peer is declared dead after S s "
	    "(5)\n"
	    "  --delay-worker W,E,F   bench: worker W sleeps F x its clock "
	    "time every\n"
	    "                         E-th clock (W = -1: a different worker\n"
	    "                         each time)\n"
	    "launcher-started ranks:\n"
	    "  --rendezvous HOST:PORT rank 0's address (env "
	    "FLEXRR_RENDEZVOUS); on one\n"
	    "                         host a port is derived from the "
	    "launcher's job id\n"
	    "  --job-token X          shared secret of the job (env "
	    "FLEXRR_JOB_TOKEN;\n"
	    "                         default: derived from the launcher's job "
	    "id)\n"
	    "  --rendezvous-timeout S how long ranks wait for each other (20)\n"
	    "RapidReassignment (modes flexrr, rr):\n"
	    "  --rr-group G  --rr-threshold F  --rr-min-share F  --rr-report "
	    "N\n"
	    "  --rr-max-helpers N  --stragglers SPEC  --trace FILE\n"
	    "\n"
	    "When the job ends rank 0 prints one line on stdout:\n"
	    "  flexrr: done mode=M backend=B procs=P threads=T clocks=N "
	    "time_s=S "
	    "objective=V <app metrics>\n",
	    FRR_RT_MAX_SLACK);
	fprintf(out, "\napps:\n");
	for (const struct frr_app_ops *const *a = apps; a && *a; a++)
		fprintf(out, "  %-8s %s\n", (*a)->name, (*a)->summary);
}

enum {
	OPT_BACKEND = 256,
	OPT_MODE,
	OPT_SLACK,
	OPT_CLOCKS,
	OPT_TARGET,
	OPT_SEED,
	OPT_METRICS,
	OPT_SAVE,
	OPT_LOAD,
	OPT_NOPIN,
	OPT_TIMEOUT,
	OPT_DEAD,
	OPT_DELAY,
	OPT_RDV,
	OPT_TOKEN,
	OPT_RDV_TIMEOUT,
	OPT_RR_GROUP,
	OPT_RR_THRESH,
	OPT_RR_MIN,
	OPT_RR_REPORT,
	OPT_RR_MAXH,
	OPT_STRAGGLERS,
	OPT_TRACE,
};

static const struct option long_opts[] = {
	{ "procs", required_argument, NULL, 'n' },
	{ "threads", required_argument, NULL, 't' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "slack", required_argument, NULL, OPT_SLACK },
	{ "clocks", required_argument, NULL, OPT_CLOCKS },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "save", required_argument, NULL, OPT_SAVE },
	{ "load", required_argument, NULL, OPT_LOAD },
	{ "no-pin", no_argument, NULL, OPT_NOPIN },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "dead-timeout", required_argument, NULL, OPT_DEAD },
	{ "delay-worker", required_argument, NULL, OPT_DELAY },
	{ "rendezvous", required_argument, NULL, OPT_RDV },
	{ "job-token", required_argument, NULL, OPT_TOKEN },
	{ "rendezvous-timeout", required_argument, NULL, OPT_RDV_TIMEOUT },
	{ "rr-group", required_argument, NULL, OPT_RR_GROUP },
	{ "rr-threshold", required_argument, NULL, OPT_RR_THRESH },
	{ "rr-min-share", required_argument, NULL, OPT_RR_MIN },
	{ "rr-report", required_argument, NULL, OPT_RR_REPORT },
	{ "rr-max-helpers", required_argument, NULL, OPT_RR_MAXH },
	{ "stragglers", required_argument, NULL, OPT_STRAGGLERS },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ 0 },
};

static int parse_long(const char *s, const char *opt, long lo, long hi,
		      long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr,
			"flexrr run: %s wants an integer in [%ld, %ld], got "
			"'%s'\n",
			opt, lo, hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_double(const char *s, const char *opt, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end) {
		fprintf(stderr, "flexrr run: %s wants a number, got '%s'\n",
			opt, s);
		return -EINVAL;
	}
	return 0;
}

static int parse_mode(const char *s, enum frr_mode *m)
{
	static const char *const names[] = { "bsp", "ssp", "async", "flexrr",
					     "rr" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i])) {
			*m = (enum frr_mode)i;
			return 0;
		}
	fprintf(stderr,
		"flexrr run: unknown mode '%s': use bsp, ssp, async, flexrr "
		"or rr\n",
		s);
	return -EINVAL;
}

struct cli {
	struct frr_run_opts o;
	int have_procs, have_slack, have_mode;
	double rdv_timeout;
};

static int parse_opt(struct cli *c, int opt, const char *arg)
{
	struct frr_run_opts *o = &c->o;
	long v;
	double d;
	int err = 0;

	switch (opt) {
	case 'n':
		err = parse_long(arg, "-n", 1, 4096, &v);
		o->nprocs = (int)v;
		c->have_procs = 1;
		break;
	case 't':
		err = parse_long(arg, "-t", 1, 1024, &v);
		o->threads = (int)v;
		break;
	case 'q':
		o->quiet = 1;
		break;
	case OPT_BACKEND:
		err = frr_tp_backend_parse(arg, &o->backend);
		if (err)
			fprintf(stderr,
				"flexrr run: unknown backend '%s': use shm, "
				"verbs or auto\n",
				arg);
		break;
	case OPT_MODE:
		err = parse_mode(arg, &o->mode);
		c->have_mode = 1;
		break;
	case OPT_SLACK:
		errno = 0;
		v = strtol(arg, NULL, 0);
		if (v < 0) {
			fprintf(stderr,
				"flexrr run: --slack must be >= 0 "
				"(0 = BSP), got %s\n",
				arg);
			return -EINVAL;
		}
		err = parse_long(arg, "--slack", 0, FRR_RT_MAX_SLACK, &v);
		o->slack = (int)v;
		c->have_slack = 1;
		break;
	case OPT_CLOCKS:
		err = parse_long(arg, "--clocks", 1, 1000000, &v);
		o->clocks = (int)v;
		break;
	case OPT_TARGET:
		err = parse_double(arg, "--target", &o->target);
		o->have_target = 1;
		break;
	case OPT_SEED:
		o->seed = strtoull(arg, NULL, 0);
		break;
	case OPT_METRICS:
		o->metrics_path = arg;
		break;
	case OPT_SAVE:
		o->save_path = arg;
		break;
	case OPT_LOAD:
		o->load_path = arg;
		break;
	case OPT_NOPIN:
		o->pin = 0;
		break;
	case OPT_TIMEOUT:
		err = parse_double(arg, "--timeout", &d);
		if (!err && d <= 0)
			err = -EINVAL;
		o->timeout_ms = (int)(d * 1000);
		break;
	case OPT_DEAD:
		err = parse_double(arg, "--dead-timeout", &d);
		if (!err && d <= 0)
			err = -EINVAL;
		o->dead_ms = (int)(d * 1000);
		break;
	case OPT_DELAY:
		if (sscanf(arg, "%d,%d,%lf", &o->delay_worker, &o->delay_every,
			   &o->delay_factor) != 3 ||
		    o->delay_worker < -1 || o->delay_every < 1 ||
		    o->delay_factor < 0) {
			fprintf(stderr, "flexrr run: --delay-worker wants "
					"W,EVERY,FACTOR (e.g. 0,5,1.0; W = -1: "
					"a different worker each time)\n");
			err = -EINVAL;
		}
		break;
	case OPT_RDV:
		o->rendezvous = arg;
		break;
	case OPT_TOKEN:
		o->job_token = frr_job_token_from(arg);
		break;
	case OPT_RDV_TIMEOUT:
		err =
		    parse_double(arg, "--rendezvous-timeout", &c->rdv_timeout);
		break;
	case OPT_RR_GROUP:
		err = parse_long(arg, "--rr-group", 1, 64, &v);
		o->rr.group_size = (int)v;
		break;
	case OPT_RR_THRESH:
		err = parse_double(arg, "--rr-threshold", &o->rr.threshold);
		break;
	case OPT_RR_MIN:
		err = parse_double(arg, "--rr-min-share", &o->rr.min_share);
		break;
	case OPT_RR_REPORT:
		err = parse_long(arg, "--rr-report", 1, 1024, &v);
		o->rr.report_interval = (int)v;
		break;
	case OPT_RR_MAXH:
		err = parse_long(arg, "--rr-max-helpers", 0, 64, &v);
		o->rr.max_helpers = (int)v;
		break;
	case OPT_STRAGGLERS:
		o->rr.stragglers = arg;
		break;
	case OPT_TRACE:
		o->rr.trace_path = arg;
		break;
	default:
		fprintf(stderr, "flexrr run: see 'flexrr run --help'\n");
		return -EINVAL;
	}
	if (err && (opt == OPT_TIMEOUT || opt == OPT_DEAD))
		fprintf(stderr, "flexrr run: --%s wants seconds > 0\n",
			opt == OPT_TIMEOUT ? "timeout" : "dead-timeout");
	return err;
}

/* One rank: meet the others at the TCP rendezvous, run the job.  0 or a
 * negative errno (already logged). */
static int rank_main(struct frr_run_opts *o, int rank, int size,
		     const char *addr, int lfd, int timeout_ms)
{
	struct frr_tcp_cfg tcp = { .addr = addr,
				   .listen_fd = lfd,
				   .rank = rank,
				   .size = size,
				   .job_token = o->job_token,
				   .binary_hash = frr_binary_hash(),
				   .args_hash = o->args_hash,
				   .timeout_ms = timeout_ms };
	struct frr_oob *oob = NULL;
	int err;

	frr_log_set_rank(rank);
	err = frr_tcp_open(&tcp, &oob);
	if (err)
		return err;
	err = frr_rt_job_run(oob, o);
	frr_oob_close(oob);
	return err < 0 ? err : err ? -EIO : 0;
}

struct local_job {
	struct frr_run_opts *o;
	const char *addr;
	int lfd;
	int timeout_ms;
};

static int local_rank(struct frr_oob *oob, void *arg)
{
	struct local_job *j = arg;

	if (oob->rank)
		close(j->lfd);
	return rank_main(j->o, oob->rank, oob->size, j->addr,
			 oob->rank ? -1 : j->lfd, j->timeout_ms);
}

/* Fork P ranks; they meet at a loopback socket the parent already bound. */
static int run_local(struct frr_run_opts *o, int timeout_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	/* no deadline: jobs run as long as they make progress (--timeout);
	 * after a rank fails the others get 15 s to name the dead peer */
	struct frr_launch_cfg cfg = { .nprocs = o->nprocs,
				      .grace_ms = 15000,
				      .flags = FRR_LAUNCH_NO_RELAY |
					       FRR_LAUNCH_QUIET_EXITS };
	char addr[64];
	struct local_job j = { o, addr, -1, timeout_ms };
	int err;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	j.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (j.lfd < 0 || bind(j.lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(j.lfd, 64) ||
	    getsockname(j.lfd, (struct sockaddr *)&sa, &sl)) {
		frr_err("cannot open a loopback socket for the local job: %s",
			strerror(errno));
		if (j.lfd >= 0)
			close(j.lfd);
		return 1;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sa.sin_port));
	if (!o->job_token)
		o->job_token = frr_job_token_random();
	err = frr_launch(&cfg, local_rank, &j);
	close(j.lfd);
	return err ? 1 : 0;
}

/* A launcher started this process: check what it says, take the
 * rendezvous address and job token from the options, its environment or
 * its job id.  0, or 2 (usage) with a message. */
static int join_launched(struct cli *c, const struct frr_launcher_env *env)
{
	struct frr_run_opts *o = &c->o;
	static char addr[64];

	if (env->rank < 0 || env->size < 1 || env->rank >= env->size) {
		fprintf(stderr, "flexrr run: the launcher gave rank %d of %d\n",
			env->rank, env->size);
		return 2;
	}
	if (c->have_procs && o->nprocs != env->size) {
		fprintf(stderr,
			"flexrr run: -n %d but the launcher started %d ranks; "
			"drop -n or make them agree\n",
			o->nprocs, env->size);
		return 2;
	}
	o->nprocs = env->size;
	if (!o->rendezvous)
		o->rendezvous = env->rendezvous;
	if (!o->job_token && env->job_token)
		o->job_token = frr_job_token_from(env->job_token);
	if (!o->rendezvous && env->size > 1) {
		if (!env->job_id) {
			fprintf(stderr,
				"flexrr run: rank %d of %d: no rendezvous "
				"address; give --rendezvous HOST:PORT (rank "
				"0's host) or set FLEXRR_RENDEZVOUS\n",
				env->rank, env->size);
			return 2;
		}
		frr_rendezvous_from_job_id(env->job_id, addr, sizeof(addr));
		o->rendezvous = addr;
	}
	if (!o->job_token) {
		if (!env->job_id && env->size > 1) {
			fprintf(stderr,
				"flexrr run: rank %d: no job token; give "
				"--job-token or set FLEXRR_JOB_TOKEN (the same "
				"on every rank)\n",
				env->rank);
			return 2;
		}
		o->job_token = frr_job_token_from_job_id(env->job_id);
	}
	return 0;
}

/* The rr layer (RapidReassignment, stragglers, trace) runs in modes flexrr
 * and rr, and whenever stragglers or a trace are asked for. */
static void engage_rr(struct frr_run_opts *o)
{
	o->rr_engaged = o->mode == FRR_MODE_FLEXRR || o->mode == FRR_MODE_RR ||
			o->rr.stragglers || o->rr.trace_path;
}

int frr_run_main(int argc, char **argv, const struct frr_app_ops *const *apps)
{
	struct cli c = { 0 };
	struct frr_run_opts *o = &c.o;
	struct frr_launcher_env env;
	int opt, err, timeout_ms;

	o->nprocs = 1;
	o->threads = 1;
	o->backend = FRR_TP_BACKEND_AUTO;
	o->mode = FRR_MODE_BSP;
	o->clocks = 10;
	o->seed = 1;
	o->pin = 1;
	o->timeout_ms = 60000;
	o->dead_ms = 5000;
	o->delay_worker = -1;
	o->rr = (struct frr_rr_opts){ .group_size = 4,
				      .threshold = 0.2,
				      .min_share = 0.05,
				      .report_interval = 16 };
	c.rdv_timeout = 20;
	c.o.slack = -1;
	optind = 1;
	opterr = 1;
	/* '+': stop at the app name; the rest belongs to the app */
	while ((opt = getopt_long(argc, argv, "+n:t:qh", long_opts, NULL)) !=
	       -1) {
		if (opt == 'h') {
			usage(stdout, apps);
			return 0;
		}
		if (parse_opt(&c, opt, optarg))
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "flexrr run: no app given; 'flexrr run --help' "
				"lists the options and apps\n");
		return 2;
	}
	for (const struct frr_app_ops *const *a = apps; a && *a && !o->app; a++)
		if (!strcmp((*a)->name, argv[optind]))
			o->app = *a;
	if (!o->app) {
		fprintf(stderr, "flexrr run: unknown app '%s'; known apps:",
			argv[optind]);
		for (const struct frr_app_ops *const *a = apps; a && *a; a++)
			fprintf(stderr, " %s", (*a)->name);
		fprintf(stderr, "\n");
		return 2;
	}
	o->app_argc = argc - optind;
	o->app_argv = argv + optind;
	for (int i = 1; i < o->app_argc; i++)
		if (!strcmp(o->app_argv[i], "--help") ||
		    !strcmp(o->app_argv[i], "-h")) {
			if (o->app->usage)
				o->app->usage(stdout);
			else
				printf("app %s has no options\n", o->app->name);
			return 0;
		}
	if (c.have_slack && !c.have_mode)
		o->mode = FRR_MODE_SSP;
	if (o->mode == FRR_MODE_BSP || o->mode == FRR_MODE_RR) {
		if (c.have_slack && o->slack) {
			fprintf(stderr,
				"flexrr run: --mode %s has slack 0; "
				"use --mode ssp or flexrr for --slack "
				"%d\n",
				o->mode == FRR_MODE_BSP ? "bsp" : "rr",
				o->slack);
			return 2;
		}
		o->slack = 0;
	} else if (o->slack < 0) {
		o->slack = o->mode == FRR_MODE_ASYNC ? 0 : 1;
	}
	engage_rr(o);
	o->args_hash = 0;
	for (int i = 0; i < argc; i++)
		o->args_hash =
		    frr_fnv1a64(argv[i], strlen(argv[i]) + 1, o->args_hash);
	timeout_ms = (int)(c.rdv_timeout * 1000);

	if (!frr_launcher_env(&env))
		return run_local(o, timeout_ms);
	err = join_launched(&c, &env);
	if (err)
		return err;
	return rank_main(o, env.rank, env.size, o->rendezvous, -1, timeout_ms)
		   ? 1
		   : 0;
}
