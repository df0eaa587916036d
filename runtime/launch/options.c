// SPDX-License-Identifier: MIT
/*
 * The standard run options of every program built on flexrr (flexrr/job.h):
 * usage, parsing from argv or one at a time (frr_job_set), and the checks
 * that need them all.  `flexrr run --help` prints them.
 */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "launch.h"
#include "straggler.h"

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
	OPT_NONFINITE,
	OPT_TIMEOUT,
	OPT_DEAD,
	OPT_DELAY,
	OPT_RDV,
	OPT_TOKEN,
	OPT_RDV_TIMEOUT,
	OPT_BOOTSTRAP,
	OPT_RR_GROUP,
	OPT_RR_THRESH,
	OPT_RR_MIN,
	OPT_RR_REPORT,
	OPT_RR_MAXH,
	OPT_STRAGGLERS,
	OPT_TRACE,
	OPT_CKPT,
	OPT_CKPT_EVERY,
	OPT_RESUME,
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
	{ "allow-nonfinite", no_argument, NULL, OPT_NONFINITE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "dead-timeout", required_argument, NULL, OPT_DEAD },
	{ "delay-worker", required_argument, NULL, OPT_DELAY },
	{ "rendezvous", required_argument, NULL, OPT_RDV },
	{ "job-token", required_argument, NULL, OPT_TOKEN },
	{ "rendezvous-timeout", required_argument, NULL, OPT_RDV_TIMEOUT },
	{ "bootstrap", required_argument, NULL, OPT_BOOTSTRAP },
	{ "rr-group", required_argument, NULL, OPT_RR_GROUP },
	{ "rr-threshold", required_argument, NULL, OPT_RR_THRESH },
	{ "rr-min-share", required_argument, NULL, OPT_RR_MIN },
	{ "rr-report", required_argument, NULL, OPT_RR_REPORT },
	{ "rr-max-helpers", required_argument, NULL, OPT_RR_MAXH },
	{ "stragglers", required_argument, NULL, OPT_STRAGGLERS },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "checkpoint", required_argument, NULL, OPT_CKPT },
	{ "checkpoint-every", required_argument, NULL, OPT_CKPT_EVERY },
	{ "resume", required_argument, NULL, OPT_RESUME },
	{ 0 },
};

static int parse_long(const struct frr_job *job, const char *s, const char *opt,
		      long lo, long hi, long *out)
{
	int64_t v;

	if (frr_parse_i64(s, 0, lo, hi, &v)) {
		fprintf(stderr,
			"%s: %s wants an integer in [%ld, %ld], got '%s'\n",
			job->prog, opt, lo, hi, s);
		return -EINVAL;
	}
	*out = (long)v;
	return 0;
}

/* A finite number in [lo, hi] (strtod alone takes "nan" and "inf"). */
static int parse_double(const struct frr_job *job, const char *s,
			const char *opt, double lo, double hi, double *out)
{
	if (frr_parse_double(s, lo, hi, out)) {
		if (lo == -DBL_MAX && hi == DBL_MAX)
			fprintf(stderr,
				"%s: %s wants a finite number, got '%s'\n",
				job->prog, opt, s);
		else
			fprintf(stderr,
				"%s: %s wants a number in [%g, %g], got '%s'\n",
				job->prog, opt, lo, hi, s);
		return -EINVAL;
	}
	return 0;
}

static int parse_mode(const struct frr_job *job, const char *s,
		      enum frr_mode *m)
{
	static const char *const names[] = { "bsp", "ssp", "async", "flexrr",
					     "rr" };

	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i])) {
			*m = (enum frr_mode)i;
			return 0;
		}
	fprintf(stderr,
		"%s: unknown mode '%s': use bsp, ssp, async, flexrr or rr\n",
		job->prog, s);
	return -EINVAL;
}

/* Options of the job's shape and its run. */
static int set_job_opt(struct frr_job *job, int opt, const char *arg)
{
	struct frr_run_opts *o = &job->o;
	long v = 0;
	int err = 0;

	switch (opt) {
	case 'n':
		err = parse_long(job, arg, "-n", 1, 4096, &v);
		o->nprocs = (int)v;
		job->have_procs = 1;
		break;
	case 't':
		err = parse_long(job, arg, "-t", 1, 1024, &v);
		o->threads = (int)v;
		break;
	case 'q':
		o->quiet = 1;
		break;
	case OPT_BACKEND:
		err = frr_tp_backend_parse(arg, &o->backend);
		if (err)
			fprintf(stderr,
				"%s: unknown backend '%s': use shm, verbs or "
				"auto\n",
				job->prog, arg);
		break;
	case OPT_MODE:
		err = parse_mode(job, arg, &o->mode);
		job->have_mode = 1;
		break;
	case OPT_SLACK:
		if (strtol(arg, NULL, 0) < 0) {
			fprintf(stderr,
				"%s: --slack must be >= 0 (0 = BSP), got %s\n",
				job->prog, arg);
			return -EINVAL;
		}
		err = parse_long(job, arg, "--slack", 0, FRR_RT_MAX_SLACK, &v);
		o->slack = (int)v;
		job->have_slack = 1;
		break;
	case OPT_CLOCKS:
		err = parse_long(job, arg, "--clocks", 1, 1000000, &v);
		o->clocks = (int)v;
		break;
	case OPT_TARGET:
		err = parse_double(job, arg, "--target", -DBL_MAX, DBL_MAX,
				   &o->target);
		o->have_target = 1;
		break;
	case OPT_SEED:
		if (frr_parse_u64(arg, 0, 0, UINT64_MAX, &o->seed)) {
			fprintf(stderr,
				"%s: --seed wants an integer in [0, 2^64), "
				"got '%s'\n",
				job->prog, arg);
			return -EINVAL;
		}
		break;
	default:
		return 1; /* not one of these */
	}
	return err;
}

/* Seconds: 1 ms .. FRR_MAX_SECONDS (a deadline in int milliseconds). */
#define FRR_MAX_SECONDS 1e6
static int parse_seconds(struct frr_job *job, const char *arg, const char *name,
			 int *ms)
{
	double d;
	int err = parse_double(job, arg, name, 0.001, FRR_MAX_SECONDS, &d);

	if (err)
		return err;
	*ms = (int)llround(d * 1000);
	return 0;
}

/* --checkpoint-every N (clocks) or Ns (seconds). */
static int parse_ckpt_every(struct frr_job *job, const char *arg)
{
	struct frr_run_opts *o = &job->o;
	size_t n = strlen(arg);
	long v = 0;
	int err;

	job->have_ckpt_every = 1;
	if (n > 1 && arg[n - 1] == 's') {
		char num[64];
		int ms = 0;

		snprintf(num, sizeof(num), "%.*s", (int)(n - 1), arg);
		err = parse_seconds(job, num, "--checkpoint-every", &ms);
		if (err)
			return err;
		o->ckpt_every_s = ms / 1000.0;
		o->ckpt_every = 0;
		return err;
	}
	err = parse_long(job, arg, "--checkpoint-every", 1, 1000000, &v);
	o->ckpt_every = (int)v;
	o->ckpt_every_s = 0;
	return err;
}

/* Files, timeouts, benchmarking aids and the launcher-started ranks. */
static int set_run_opt(struct frr_job *job, int opt, const char *arg)
{
	struct frr_run_opts *o = &job->o;

	switch (opt) {
	case OPT_METRICS:
		o->metrics_path = arg;
		return 0;
	case OPT_SAVE:
		o->save_path = arg;
		return 0;
	case OPT_LOAD:
		o->load_path = arg;
		return 0;
	case OPT_CKPT:
		o->ckpt_dir = arg;
		return 0;
	case OPT_CKPT_EVERY:
		return parse_ckpt_every(job, arg);
	case OPT_RESUME:
		o->resume_dir = arg;
		return 0;
	case OPT_NOPIN:
		o->pin = 0;
		return 0;
	case OPT_NONFINITE:
		o->allow_nonfinite = 1;
		return 0;
	case OPT_TIMEOUT:
		job->have_timeouts |= 1;
		return parse_seconds(job, arg, "--timeout", &o->timeout_ms);
	case OPT_DEAD:
		job->have_timeouts |= 2;
		return parse_seconds(job, arg, "--dead-timeout", &o->dead_ms);
	case OPT_DELAY: {
		int used = 0;

		if (sscanf(arg, "%d,%d,%lf%n", &o->delay_worker,
			   &o->delay_every, &o->delay_factor, &used) != 3 ||
		    arg[used] || o->delay_worker < -1 || o->delay_every < 1 ||
		    !(o->delay_factor >= 0 && o->delay_factor <= 1e6)) {
			fprintf(stderr,
				"%s: --delay-worker wants W,EVERY,FACTOR (e.g. "
				"0,5,1.0; W = -1: a different worker each "
				"time)\n",
				job->prog);
			return -EINVAL;
		}
		return 0;
	}
	case OPT_RDV:
		o->rendezvous = arg;
		return 0;
	case OPT_TOKEN:
		/* any local user reads a command line (/proc/PID/cmdline) */
		fprintf(
		    stderr,
		    "%s: --job-token would show the job secret to every "
		    "local user (ps, /proc/PID/cmdline): set "
		    "FLEXRR_JOB_TOKEN or FLEXRR_JOB_TOKEN_FILE instead, "
		    "e.g. export FLEXRR_JOB_TOKEN=$(openssl rand -hex 32)\n",
		    job->prog);
		return -EINVAL;
	case OPT_RDV_TIMEOUT: {
		int ms,
		    err = parse_seconds(job, arg, "--rendezvous-timeout", &ms);

		if (!err)
			job->rdv_timeout = ms / 1000.0;
		return err;
	}
	case OPT_BOOTSTRAP:
		job->boot = !strcmp(arg, "pmix")  ? FRR_BOOT_PMIX
			    : !strcmp(arg, "tcp") ? FRR_BOOT_TCP
						  : FRR_BOOT_AUTO;
		if (job->boot == FRR_BOOT_AUTO && strcmp(arg, "auto")) {
			fprintf(stderr,
				"%s: --bootstrap wants auto, pmix or tcp, got "
				"'%s'\n",
				job->prog, arg);
			return -EINVAL;
		}
		return 0;
	}
	return 1; /* not one of these */
}

/* RapidReassignment, stragglers and the trace. */
static int set_rr_opt(struct frr_job *job, int opt, const char *arg)
{
	struct frr_rr_opts *rr = &job->o.rr;
	long v = 0;
	int err;

	switch (opt) {
	case OPT_RR_GROUP:
		err = parse_long(job, arg, "--rr-group", 1, 64, &v);
		rr->group_size = (int)v;
		return err;
	case OPT_RR_THRESH:
		return parse_double(job, arg, "--rr-threshold", 0, 1000,
				    &rr->threshold);
	case OPT_RR_MIN:
		return parse_double(job, arg, "--rr-min-share", 0, 1,
				    &rr->min_share);
	case OPT_RR_REPORT:
		err = parse_long(job, arg, "--rr-report", 1, 1024, &v);
		rr->report_interval = (int)v;
		return err;
	case OPT_RR_MAXH:
		err = parse_long(job, arg, "--rr-max-helpers", 0, 64, &v);
		rr->max_helpers = (int)v;
		return err;
	case OPT_STRAGGLERS:
		if (!*arg) {
			fprintf(stderr,
				"%s: --stragglers wants a spec (or 'none'), "
				"got an empty one; see --help\n",
				job->prog);
			return -EINVAL;
		}
		/* a usage error, said once here, not once per rank */
		if (frr_stragglers_parse(arg, &(struct frr_stragglers){ 0 }))
			return -EINVAL;
		rr->stragglers = arg;
		return 0;
	case OPT_TRACE:
		rr->trace_path = arg;
		return 0;
	}
	return 1; /* not one of these */
}

/* One option by its getopt code: 0 or -EINVAL (said on stderr). */
static int set_opt(struct frr_job *job, int opt, const char *arg)
{
	int err = set_job_opt(job, opt, arg);

	if (err == 1)
		err = set_run_opt(job, opt, arg);
	if (err == 1)
		err = set_rr_opt(job, opt, arg);
	if (err == 1) {
		fprintf(stderr, "%s: see '%s --help'\n", job->prog, job->prog);
		err = -EINVAL;
	}
	return err;
}

void frr_job_init(struct frr_job *job, const char *prog,
		  const struct frr_app_ops *const *apps)
{
	struct frr_run_opts *o = &job->o;

	memset(job, 0, sizeof(*job));
	job->prog = prog && *prog ? prog : "flexrr";
	job->apps = apps;
	job->rdv_timeout = 20;
	o->nprocs = 1;
	o->threads = 1;
	o->local_rank = -1;
	o->backend = FRR_TP_BACKEND_AUTO;
	o->mode = FRR_MODE_BSP;
	o->slack = -1;
	o->clocks = 10;
	o->seed = 1;
	o->pin = 1;
	o->timeout_ms = 60000;
	o->dead_ms = 5000;
	o->delay_worker = -1;
	o->ckpt_every = 10;
	o->rr = (struct frr_rr_opts){ .group_size = 4,
				      .threshold = 0.2,
				      .min_share = 0.05,
				      .report_interval = 16 };
}

void frr_job_fini(struct frr_job *job)
{
	free(job->app_argv);
	job->app_argv = NULL;
}

static const struct frr_app_ops *app_named(const struct frr_job *job,
					   const char *name)
{
	for (const struct frr_app_ops *const *a = job->apps; a && *a; a++)
		if (!strcmp((*a)->name, name))
			return *a;
	return NULL;
}

static int napps(const struct frr_job *job)
{
	int n = 0;

	for (const struct frr_app_ops *const *a = job->apps; a && *a; a++)
		n++;
	return n;
}

/* argv[first..] names the app and holds its options; a program with one
 * app may leave its name out. */
static int pick_app(struct frr_job *job, int argc, char **argv, int first)
{
	struct frr_run_opts *o = &job->o;

	o->app = first < argc ? app_named(job, argv[first]) : NULL;
	if (o->app) {
		o->app_argc = argc - first;
		o->app_argv = argv + first;
		return 0;
	}
	if (napps(job) == 1) { /* implied: its options follow the run's */
		o->app = job->apps[0];
		o->app_argc = argc - first + 1;
		job->app_argv = calloc((size_t)o->app_argc + 1, sizeof(char *));
		if (!job->app_argv)
			return -ENOMEM;
		job->app_argv[0] = (char *)o->app->name;
		memcpy(job->app_argv + 1, argv + first,
		       (size_t)(argc - first) * sizeof(char *));
		o->app_argv = job->app_argv;
		return 0;
	}
	if (first >= argc) {
		fprintf(stderr,
			"%s: no app given; '%s --help' lists the options and "
			"apps\n",
			job->prog, job->prog);
		return -EINVAL;
	}
	fprintf(stderr, "%s: unknown app '%s'; known apps:", job->prog,
		argv[first]);
	for (const struct frr_app_ops *const *a = job->apps; a && *a; a++)
		fprintf(stderr, " %s", (*a)->name);
	fprintf(stderr, "\n");
	return -EINVAL;
}

/* The app's own --help, anywhere in its options: 1 when printed.
 * --help=md: its table as Markdown (for the docs), if it has one. */
static int app_help(const struct frr_run_opts *o)
{
	const struct frr_opt_set *t =
	    FRR_APP_HAS(o->app, opts) ? o->app->opts : NULL;

	for (int i = 1; i < o->app_argc; i++)
		if (t && !strcmp(o->app_argv[i], "--help=md")) {
			frr_opt_markdown(t, stdout);
			return 1;
		} else if (!strcmp(o->app_argv[i], "--help") ||
			   !strcmp(o->app_argv[i], "-h")) {
			if (o->app->usage)
				o->app->usage(stdout);
			else if (t)
				frr_opt_usage(t, stdout);
			else
				printf("app %s has no options\n", o->app->name);
			return 1;
		}
	return 0;
}

int frr_job_parse_argv(struct frr_job *job, int argc, char **argv)
{
	int opt, err;

	/* 0, not 1: glibc's full reset, which also forgets the state of an
	 * earlier parse (a position inside grouped short options like -qn2,
	 * the '+' of the option string) */
	optind = 0;
	opterr = 1;
	/* '+': stop at the app name; the rest belongs to the app */
	while ((opt = getopt_long(argc, argv, "+n:t:qh", long_opts, NULL)) !=
	       -1) {
		if (opt == 'h') {
			frr_job_usage(job, stdout);
			return 1;
		}
		if (opt == '?')
			frr_job_hint_unknown(job, argc, argv);
		err = set_opt(job, opt, optarg);
		if (err)
			return err;
	}
	err = pick_app(job, argc, argv, optind);
	if (err)
		return err;
	if (app_help(&job->o))
		return 1;
	/* every rank must run the same options: the rendezvous checks it */
	job->o.args_hash = 0;
	for (int i = 0; i < argc; i++)
		job->o.args_hash =
		    frr_fnv1a64(argv[i], strlen(argv[i]) + 1, job->o.args_hash);
	return 0;
}

/* ---- the structured form (flexrr/job.h) -------------------------------- */

int frr_job_create(const struct frr_app_ops *app, struct frr_job **out)
{
	struct frr_job *job;

	if (!app || !out) {
		frr_err("frr_job_create: needs an app and a result pointer");
		return -EINVAL;
	}
	job = malloc(sizeof(*job));
	if (!job)
		return -ENOMEM;
	frr_job_init(job, app->name, NULL);
	job->o.app = app;
	job->o.app_argc = 1;
	job->app_argv = calloc(2, sizeof(char *));
	if (!job->app_argv) {
		free(job);
		return -ENOMEM;
	}
	job->app_argv[0] = (char *)app->name;
	job->o.app_argv = job->app_argv;
	job->o.args_hash = frr_fnv1a64(app->name, strlen(app->name) + 1, 0);
	*out = job;
	return 0;
}

int frr_job_set(struct frr_job *job, const char *name, const char *value)
{
	const struct option *opt = long_opts;

	while (opt->name && strcmp(opt->name, name ? name : ""))
		opt++;
	if (!opt->name || opt->val == 'h' ||
	    (opt->has_arg == required_argument) != (value != NULL)) {
		frr_err("frr_job_set: '%s' is not a run option%s; see '%s "
			"--help'",
			name ? name : "(null)",
			opt->name && opt->val != 'h'
			    ? " with that kind of value"
			    : "",
			job->prog);
		return -EINVAL;
	}
	/* the rendezvous compares this hash across ranks */
	job->o.args_hash =
	    frr_fnv1a64(name, strlen(name) + 1, job->o.args_hash);
	if (value)
		job->o.args_hash =
		    frr_fnv1a64(value, strlen(value) + 1, job->o.args_hash);
	return set_opt(job, opt->val, value);
}

int frr_job_set_app_args(struct frr_job *job, int argc, char **argv)
{
	char **args = calloc((size_t)argc + 2, sizeof(char *));

	if (argc < 0 || !args) {
		free(args);
		return argc < 0 ? -EINVAL : -ENOMEM;
	}
	args[0] = (char *)job->o.app->name;
	for (int i = 0; i < argc; i++) {
		args[i + 1] = argv[i];
		job->o.args_hash =
		    frr_fnv1a64(argv[i], strlen(argv[i]) + 1, job->o.args_hash);
	}
	free(job->app_argv);
	job->app_argv = args;
	job->o.app_argv = args;
	job->o.app_argc = argc + 1;
	return 0;
}

void frr_job_free(struct frr_job *job)
{
	if (!job)
		return;
	frr_job_fini(job);
	free(job);
}
