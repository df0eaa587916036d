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

#include "flexrr/log.h"
#include "rt.h"

int frr_cmd_run(int argc, char **argv);

extern const struct frr_rr_ops frr_rr_ops __attribute__((weak));
/* The toy app lives in this static library: a strong reference makes the
 * linker keep it for apps/registry.c's weak one. */
extern const struct frr_app_ops frr_app_toy;
__attribute__((used)) static const struct frr_app_ops *const keep_toy =
    &frr_app_toy;

static void usage(FILE *out)
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
	for (const struct frr_app_ops *const *a = frr_app_list(); *a; a++)
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
		o->job_token = frr_fnv1a64(arg, strlen(arg), 0) | 1;
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

/* Rank and size from a launcher's environment; 0 = not launcher-started. */
static int launcher_rank(int *rank, int *size)
{
	static const char *const pairs[][2] = {
		{ "FLEXRR_RANK", "FLEXRR_SIZE" },
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMIX_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const char *r = getenv(pairs[i][0]), *s = getenv(pairs[i][1]);

		if (r && s) {
			*rank = atoi(r);
			*size = atoi(s);
			return 1;
		}
	}
	return 0;
}

static const char *launcher_job_id(void)
{
	static const char *const vars[] = { "FLEXRR_JOB_ID", "PMIX_NAMESPACE",
					    "OMPI_MCA_ess_base_jobid",
					    "SLURM_JOB_ID", "PMI_JOBID" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return getenv(vars[i]);
	return NULL;
}

static int rank_main(struct frr_run_opts *o, int rank, int size,
		     const char *addr, int lfd, int timeout_ms)
{
	struct frr_oob *oob = NULL;
	int err;

	frr_log_set_rank(rank);
	err =
	    frr_rdv_open(addr, lfd, rank, size, o->job_token,
			 frr_rdv_binary_hash(), o->args_hash, timeout_ms, &oob);
	if (err)
		return 1;
	err = frr_rt_job_run(oob, o);
	frr_oob_close(oob);
	return err ? 1 : 0;
}

/* Fork P ranks; they meet at a loopback socket the parent already bound. */
static int run_local(struct frr_run_opts *o, int timeout_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char addr[64];
	pid_t *pids;
	int lfd, rc = 0, left;
	double kill_at = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 64) || getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
		frr_err("cannot open a loopback socket for the local job: %s",
			strerror(errno));
		return 1;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sa.sin_port));
	if (!o->job_token &&
	    getrandom(&o->job_token, sizeof(o->job_token), 0) < 0)
		o->job_token = (uint64_t)time(NULL) * 2654435761u ^ getpid();
	pids = calloc((size_t)o->nprocs, sizeof(pid_t));
	if (!pids)
		return 1;
	fflush(NULL);
	for (int r = 0; r < o->nprocs; r++) {
		pid_t p = fork();

		if (p < 0) {
			frr_err("fork failed: %s", strerror(errno));
			rc = 1;
			break;
		}
		if (!p) {
			if (r)
				close(lfd);
			_exit(rank_main(o, r, o->nprocs, addr, r ? -1 : lfd,
					timeout_ms));
		}
		pids[r] = p;
	}
	close(lfd);
	left = o->nprocs;
	for (int r = 0; r < o->nprocs; r++)
		if (!pids[r])
			left--;
	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;

			for (int r = 0; r < o->nprocs; r++)
				if (pids[r] == p) {
					pids[r] = 0;
					if (code) {
						if (WIFSIGNALED(st))
							frr_err("rank %d was "
								"killed by "
								"signal %d",
								r,
								WTERMSIG(st));
						if (!rc)
							rc = code;
						if (!kill_at)
							kill_at =
							    frr_rt_clock_now() +
							    15;
					}
				}
			left--;
			continue;
		}
		if (p < 0 && errno != EINTR)
			break;
		if (kill_at && frr_rt_clock_now() > kill_at) {
			for (int r = 0; r < o->nprocs; r++)
				if (pids[r])
					kill(pids[r], SIGKILL);
			kill_at = frr_rt_clock_now() + 3600;
		}
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
	free(pids);
	return rc;
}

static int engage_rr(struct frr_run_opts *o)
{
	int want = o->mode == FRR_MODE_FLEXRR || o->mode == FRR_MODE_RR ||
		   o->rr.stragglers || o->rr.trace_path;

	if (!want)
		return 0;
	if (!&frr_rr_ops) {
		fprintf(stderr,
			"flexrr run: %s needs RapidReassignment / straggler "
			"support, which is not built into this binary "
			"(runtime/rr*.c is missing); use --mode bsp|ssp|async "
			"without --stragglers/--trace\n",
			o->mode >= FRR_MODE_FLEXRR ? "--mode flexrr|rr"
						   : "--stragglers/--trace");
		return -EINVAL;
	}
	o->rr_engaged = 1;
	return 0;
}

int frr_run_main(int argc, char **argv)
{
	struct cli c = { 0 };
	struct frr_run_opts *o = &c.o;
	int opt, rank = 0, size = 1, launched, timeout_ms;
	const char *env;

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
			usage(stdout);
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
	o->app = frr_app_find(argv[optind]);
	if (!o->app) {
		fprintf(stderr, "flexrr run: unknown app '%s'; known apps:",
			argv[optind]);
		for (const struct frr_app_ops *const *a = frr_app_list(); *a;
		     a++)
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
	if (engage_rr(o))
		return 2;
	o->args_hash = 0;
	for (int i = 0; i < argc; i++)
		o->args_hash =
		    frr_fnv1a64(argv[i], strlen(argv[i]) + 1, o->args_hash);
	timeout_ms = (int)(c.rdv_timeout * 1000);

	launched = launcher_rank(&rank, &size);
	if (!launched)
		return run_local(o, timeout_ms);
	if (rank < 0 || size < 1 || rank >= size) {
		fprintf(stderr, "flexrr run: the launcher gave rank %d of %d\n",
			rank, size);
		return 2;
	}
	if (c.have_procs && o->nprocs != size) {
		fprintf(stderr,
			"flexrr run: -n %d but the launcher started %d ranks; "
			"drop -n or make them agree\n",
			o->nprocs, size);
		return 2;
	}
	o->nprocs = size;
	env = getenv("FLEXRR_RENDEZVOUS");
	if (!o->rendezvous)
		o->rendezvous = env;
	env = getenv("FLEXRR_JOB_TOKEN");
	if (!o->job_token && env)
		o->job_token = frr_fnv1a64(env, strlen(env), 0) | 1;
	{
		static char addr[64];
		const char *jid = launcher_job_id();

		if (!o->rendezvous && size > 1) {
			if (!jid) {
				fprintf(stderr,
					"flexrr run: rank %d of %d: no "
					"rendezvous address; give --rendezvous "
					"HOST:PORT (rank 0's host) or set "
					"FLEXRR_RENDEZVOUS\n",
					rank, size);
				return 2;
			}
			snprintf(addr, sizeof(addr), "127.0.0.1:%u",
				 20000u + (unsigned)(frr_fnv1a64(
							 jid, strlen(jid), 0) %
						     20000));
			o->rendezvous = addr;
		}
		if (!o->job_token) {
			if (!jid && size > 1) {
				fprintf(stderr,
					"flexrr run: rank %d: no job token; "
					"give --job-token or set "
					"FLEXRR_JOB_TOKEN (the same on every "
					"rank)\n",
					rank);
				return 2;
			}
			o->job_token =
			    frr_fnv1a64(jid ? jid : "single",
					strlen(jid ? jid : "single"), 0x5eed) |
			    1;
		}
	}
	return rank_main(o, rank, size, o->rendezvous, -1, timeout_ms);
}

int frr_cmd_run(int argc, char **argv)
{
	return frr_run_main(argc, argv);
}
