// SPDX-License-Identifier: MIT
/*
 * The checks of the run options that need them all (flexrr/job.h
 * frr_job_finalize), made before anything starts: a bad combination is a
 * usage error (exit 2), said once by the launcher, not a failed job.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexrr/base.h"
#include "launch.h"
#include "straggler.h"

/* The rr layer (RapidReassignment, stragglers, trace) runs in modes flexrr
 * and rr, and whenever stragglers or a trace are asked for. */
static void engage_rr(struct frr_run_opts *o)
{
	o->rr_engaged = o->p.mode == FRR_MODE_FLEXRR ||
			o->p.mode == FRR_MODE_RR || o->p.rr.stragglers ||
			o->p.rr.trace_path;
}

/* Files can be created in directory dir (the output opt names): not
 * access(2), which says yes to root in /proc, but a file made there (and
 * removed; mkstemp's: exclusive, a random name). */
static int probe_dir(const struct frr_job *job, const char *opt,
		     const char *path, const char *dir)
{
	char probe[4200];
	int fd;

	if (snprintf(probe, sizeof(probe), "%s%s.flexrr-probe-XXXXXX", dir,
		     dir[strlen(dir) - 1] == '/' ? "" : "/") >=
		(int)sizeof(probe) ||
	    (fd = mkstemp(probe)) < 0) {
		fprintf(stderr,
			"%s: %s '%s': cannot create files in '%s' (%s); pick a "
			"writable directory\n",
			job->prog, opt, path, dir, strerror(errno));
		return -EINVAL;
	}
	close(fd);
	unlink(probe);
	return 0;
}

/* An output file (--metrics, --save, --trace, an app's --save) must be
 * creatable before the job trains, not after: its directory exists and is
 * writable, and the path is not a directory. */
static int check_out_path(const struct frr_job *job, const char *opt,
			  const char *path)
{
	char dir[4096];
	const char *slash;
	struct stat st;

	if (!path)
		return 0;
	slash = strrchr(path, '/');
	if (!*path || (slash && !slash[1]) ||
	    (!stat(path, &st) && S_ISDIR(st.st_mode))) {
		fprintf(stderr,
			"%s: %s '%s' is a directory; give a file name\n",
			job->prog, opt, path);
		return -EINVAL;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
		 slash ? path : ".");
	return probe_dir(job, opt, path, dir);
}

/* An output directory (lda's --write-uci) exists, is one, and takes
 * files. */
static int check_out_dir(const struct frr_job *job, const char *opt,
			 const char *path)
{
	const char *why = NULL;
	struct stat st;

	if (!*path)
		why = "an empty name";
	else if (stat(path, &st))
		why = strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "not a directory";
	if (why) {
		fprintf(stderr,
			"%s: %s '%s': %s; give an existing directory to write "
			"into\n",
			job->prog, opt, path, why);
		return -EINVAL;
	}
	return probe_dir(job, opt, path, path);
}

/* The app's own outputs (options flagged FRR_OPT_OUTFILE / _OUTDIR), as
 * the runtime's: checked here, before any input is read. */
static int app_output(void *ctx, const struct frr_opt *o, const char *value)
{
	const struct frr_job *job = ctx;
	char opt[128];

	snprintf(opt, sizeof(opt), "%s --%s", job->o.p.app->name, o->name);
	return (o->flags & FRR_OPT_OUTDIR) ? check_out_dir(job, opt, value)
					   : check_out_path(job, opt, value);
}

/* The app's options, before anything starts: a bad one is a usage error
 * (exit 2), not a failed job; then its outputs, as the run's are checked
 * (one parse of its table does both where it keeps no check_args of its
 * own).  Apps built against an older flexrr.h have no such fields. */
static int app_check_args(const struct frr_job *job)
{
	const struct frr_app_ops *a = job->o.p.app;
	int argc = job->o.p.app_argc, err;
	char **argv = job->o.p.app_argv;

	if (FRR_APP_HAS(a, check_args) && a->check_args) {
		err = a->check_args(argc, argv);
		if (err)
			return err;
	}
	if (FRR_APP_HAS(a, opts) && a->opts)
		return frr_opt_outputs(a->opts, argc, argv, app_output,
				       (void *)job);
	return 0;
}

static int check_ckpt_opts(const struct frr_job *job)
{
	const struct frr_run_opts *o = &job->o;

	/* with --on-failure, a job without DIR checkpoints in memory
	 * (ckpt_mem.c; launched ranks on rank 0's host only, recover.c) */
	if (job->have_ckpt_every && !o->p.ckpt_dir &&
	    job->on_failure == FRR_ON_FAILURE_FAIL) {
		fprintf(stderr,
			"%s: --checkpoint-every needs --checkpoint DIR (where "
			"to write them)\n",
			job->prog);
		return -EINVAL;
	}
	if (o->p.resume_dir && o->p.load_path) {
		fprintf(stderr,
			"%s: --resume and --load both set the model: a resumed "
			"job starts from its checkpoint; drop --load\n",
			job->prog);
		return -EINVAL;
	}
	if ((o->p.ckpt_dir && !*o->p.ckpt_dir) ||
	    (o->p.resume_dir && !*o->p.resume_dir)) {
		fprintf(stderr,
			"%s: --checkpoint and --resume want a "
			"directory, got an empty name\n",
			job->prog);
		return -EINVAL;
	}
	return 0;
}

/* --eager needs reads that may be newer than the bound (BSP's exact
 * clocks stay deterministic), and a shard that applies a clock at once
 * for a checkpoint's cut. */
static int check_eager(const struct frr_job *job)
{
	const struct frr_run_opts *o = &job->o;

	if (!o->p.eager)
		return 0;
	if (o->p.mode != FRR_MODE_ASYNC && o->p.slack == 0) {
		fprintf(stderr,
			"%s: --eager applies updates as they arrive, which "
			"--mode %s%s (slack 0: every read holds exactly the "
			"clocks before it) does not allow; use --mode ssp, "
			"flexrr or async, or drop --eager\n",
			job->prog, frr_mode_name(o->p.mode),
			frr_mode_exact(o->p.mode) ? "" : " --slack 0");
		return -EINVAL;
	}
	if (o->p.ckpt_dir || o->p.resume_dir) {
		fprintf(stderr,
			"%s: --eager cannot be combined with --checkpoint or "
			"--resume yet: a checkpoint is a cut at a clock "
			"boundary, and an eager shard already holds parts of "
			"later clocks; drop one of them\n",
			job->prog);
		return -EINVAL;
	}
	return 0;
}

int frr_job_finalize(struct frr_job *job)
{
	struct frr_run_opts *o = &job->o;

	if (!o->p.app) {
		fprintf(stderr, "%s: no app to run\n", job->prog);
		return -EINVAL;
	}
	if (app_check_args(job) ||
	    check_out_path(job, "--metrics", o->p.metrics_path) ||
	    check_out_path(job, "--save", o->p.save_path) ||
	    check_out_path(job, "--trace", o->p.rr.trace_path))
		return -EINVAL;
	if (check_ckpt_opts(job))
		return -EINVAL;
	if (job->have_slack && !job->have_mode)
		o->p.mode = FRR_MODE_SSP;
	if (frr_mode_exact(o->p.mode)) {
		if (job->have_slack && o->p.slack) {
			fprintf(stderr,
				"%s: --mode %s has slack 0; use --mode ssp or "
				"flexrr for --slack %d\n",
				job->prog, frr_mode_name(o->p.mode),
				o->p.slack);
			return -EINVAL;
		}
		o->p.slack = 0;
	} else if (o->p.slack < 0) {
		o->p.slack = o->p.mode == FRR_MODE_ASYNC ? 0 : 1;
	}
	if (check_eager(job))
		return -EINVAL;
	if (o->p.backups > 0 && o->p.mode != FRR_MODE_BACKUP) {
		fprintf(stderr,
			"%s: --backups is for --mode backup (BSP that does not "
			"wait for the slowest workers); add --mode backup or "
			"drop --backups\n",
			job->prog);
		return -EINVAL;
	}
	if (o->p.lb_history > 0 && o->p.mode != FRR_MODE_LB_BSP) {
		fprintf(stderr,
			"%s: --lb-history is for --mode lb-bsp (BSP with "
			"lists sized from measured speeds); add --mode lb-bsp "
			"or drop --lb-history\n",
			job->prog);
		return -EINVAL;
	}
	engage_rr(o);
	return 0;
}

/* Mode backup: a clock waits for W - backups workers, at least one. */
static int check_backups(const struct frr_job *job)
{
	const struct frr_run_opts *o = &job->o;
	int w = o->nprocs * o->p.threads;
	int b = o->p.backups > 0 ? o->p.backups : frr_backups_default(w);

	if (o->p.mode != FRR_MODE_BACKUP || b < w)
		return 0;
	if (w == 1)
		fprintf(stderr,
			"%s: --mode backup needs 2 workers or more (a clock "
			"waits for all but the backups); use -n or -t\n",
			job->prog);
	else
		fprintf(stderr,
			"%s: --backups %d leaves no worker for a clock to wait "
			"for: the job has %d workers; give at most %d\n",
			job->prog, b, w, w - 1);
	return -EINVAL;
}

int frr_job_check_shape(const struct frr_job *job)
{
	const struct frr_run_opts *o = &job->o;
	struct frr_stragglers s;

	if (check_backups(job))
		return -EINVAL;
	if (!o->p.rr.stragglers || frr_stragglers_parse(o->p.rr.stragglers, &s))
		return 0; /* none, or said when the option was set */
	return frr_stragglers_setup(&s, o->p.seed, o->p.threads,
				    o->nprocs * o->p.threads)
		   ? -EINVAL
		   : 0;
}
