// SPDX-License-Identifier: MIT
/*
 * The standard run options of every program built on flexrr (flexrr/job.h):
 * parsing from argv or one at a time (frr_job_set), both by the table of
 * run_opts.c; the app's name and options after them.  `flexrr run --help`
 * prints them (usage.c), checks.c checks them together.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/base.h"
#include "launch.h"

void frr_job_init(struct frr_job *job, const char *prog,
		  const struct frr_app_ops *const *apps)
{
	struct frr_opt_set s;
	char see[8];

	/* every default is the table's (or its defaults hook's) */
	frr_job_opt_set(NULL, &s, see, sizeof(see));
	frr_opt_defaults(&s, job);
	job->prog = prog && *prog ? prog : "flexrr";
	job->apps = apps;
}

void frr_job_fini(struct frr_job *job)
{
	free(job->app_argv);
	job->app_argv = NULL;
	free(job->mem_ckpt);
	job->mem_ckpt = NULL;
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

	o->p.app = first < argc ? app_named(job, argv[first]) : NULL;
	if (o->p.app) {
		o->p.app_argc = argc - first;
		o->p.app_argv = argv + first;
		return 0;
	}
	if (napps(job) == 1) { /* implied: its options follow the run's */
		o->p.app = job->apps[0];
		o->p.app_argc = argc - first + 1;
		job->app_argv =
		    calloc((size_t)o->p.app_argc + 1, sizeof(char *));
		if (!job->app_argv)
			return -ENOMEM;
		job->app_argv[0] = (char *)o->p.app->name;
		memcpy(job->app_argv + 1, argv + first,
		       (size_t)(argc - first) * sizeof(char *));
		o->p.app_argv = job->app_argv;
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
	    FRR_APP_HAS(o->p.app, opts) ? o->p.app->opts : NULL;

	for (int i = 1; i < o->p.app_argc; i++)
		if (t && !strcmp(o->p.app_argv[i], "--help=md")) {
			frr_opt_markdown(t, stdout);
			return 1;
		} else if (!strcmp(o->p.app_argv[i], "--help") ||
			   !strcmp(o->p.app_argv[i], "-h")) {
			if (o->p.app->usage)
				o->p.app->usage(stdout);
			else if (t)
				frr_opt_usage(t, stdout);
			else
				printf("app %s has no options\n",
				       o->p.app->name);
			return 1;
		}
	return 0;
}

int frr_job_parse_argv(struct frr_job *job, int argc, char **argv)
{
	struct frr_opt_set s;
	char see[256];
	int first, err;

	frr_job_opt_set(job, &s, see, sizeof(see));
	/* s.stop: the app's name ends the run options; first is its index */
	err = frr_opt_parse(&s, job, argc, argv, &first);
	if (err == FRR_OPT_HELP)
		frr_job_usage(job, stdout);
	else if (err == FRR_OPT_HELP_MD)
		frr_opt_markdown(&s, stdout);
	if (err)
		return err > 0 ? 1 : err;
	err = pick_app(job, argc, argv, first);
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
	job->o.p.app = app;
	job->o.p.app_argc = 1;
	job->app_argv = calloc(2, sizeof(char *));
	if (!job->app_argv) {
		free(job);
		return -ENOMEM;
	}
	job->app_argv[0] = (char *)app->name;
	job->o.p.app_argv = job->app_argv;
	job->o.args_hash = frr_fnv1a64(app->name, strlen(app->name) + 1, 0);
	*out = job;
	return 0;
}

int frr_job_set(struct frr_job *job, const char *name, const char *value)
{
	const struct frr_opt *opt;
	struct frr_opt_set s;
	char see[256];

	frr_job_opt_set(job, &s, see, sizeof(see));
	opt = frr_opt_find(&s, name ? name : "");
	if (!opt || (opt->kind != FRR_OPT_FLAG) != (value != NULL)) {
		frr_err("frr_job_set: '%s' is not a run option%s; see '%s "
			"--help'",
			name ? name : "(null)",
			opt ? " with that kind of value" : "", job->prog);
		return -EINVAL;
	}
	/* the rendezvous compares this hash across ranks */
	job->o.args_hash =
	    frr_fnv1a64(name, strlen(name) + 1, job->o.args_hash);
	if (value)
		job->o.args_hash =
		    frr_fnv1a64(value, strlen(value) + 1, job->o.args_hash);
	return frr_opt_set_one(&s, job, name, value);
}

int frr_job_set_app_args(struct frr_job *job, int argc, char **argv)
{
	char **args = calloc((size_t)argc + 2, sizeof(char *));

	if (argc < 0 || !args) {
		free(args);
		return argc < 0 ? -EINVAL : -ENOMEM;
	}
	args[0] = (char *)job->o.p.app->name;
	for (int i = 0; i < argc; i++) {
		args[i + 1] = argv[i];
		job->o.args_hash =
		    frr_fnv1a64(argv[i], strlen(argv[i]) + 1, job->o.args_hash);
	}
	free(job->app_argv);
	job->app_argv = args;
	job->o.p.app_argv = args;
	job->o.p.app_argc = argc + 1;
	return 0;
}

void frr_job_free(struct frr_job *job)
{
	if (!job)
		return;
	frr_job_fini(job);
	free(job);
}
