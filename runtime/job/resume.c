// SPDX-License-Identifier: MIT
/*
 * --resume DIR: the newest complete checkpoint (DIR/latest names it; its
 * MANIFEST exists only once every file is written, and the newest
 * manifest wins over a latest that names an older or missing one),
 * checked against this
 * job (app, app options, mode, slack, seed, shape, tables, data), then its
 * rows, item state and app state loaded where they were written: every
 * rank reads its own shard file and its partitions' state files, so the
 * job must have the checkpoint's -n and -t (partitions, their item state
 * and their random streams depend on them).  The run then counts its clocks
 * from the checkpoint's clock + 1 (rt->clock_base).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "flexrr/file.h"
#include "flexrr/log.h"

/* Every rank reaches the same verdict from the same files: rank 0 says it. */
__attribute__((format(printf, 2, 3))) static int refuse(const struct frr_rt *rt,
							const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rt->rank == 0)
		frr_err("--resume %s: %s", rt->prm->resume_dir, msg);
	else
		frr_dbg("--resume %s: %s", rt->prm->resume_dir, msg);
	return -EINVAL;
}

static int open_in(const struct frr_rt *rt, int clock, const char *name,
		   FILE **f, char *p, size_t len)
{
	int err = frr_ckpt_path(p, len, rt->prm->resume_dir, clock, name);

	if (!err)
		err = frr_file_open_own(p, "--resume", f);
	if (err == -ENOENT)
		refuse(
		    rt,
		    "%s is missing: the checkpoint is damaged; restore it or "
		    "start afresh",
		    p);
	return err;
}

/* DIR/latest's clock: 0, -ENOENT (none), -EINVAL (not ckpt-CLOCK). */
static int latest_in(FILE *f, int *clock)
{
	return fscanf(f, "ckpt-%d", clock) == 1 && *clock >= 0 ? 0 : -EINVAL;
}

static int latest_named(const char *dir, int *clock)
{
	char p[4096];
	FILE *f;
	int err = snprintf(p, sizeof(p), "%s/latest", dir) >= (int)sizeof(p)
		      ? -ENAMETOOLONG
		      : 0;

	if (!err)
		err = frr_file_open_own(p, "--checkpoint", &f);
	if (err)
		return err;
	err = latest_in(f, clock);
	fclose(f);
	return err;
}

/* DIR/ckpt-CLOCK has its MANIFEST, a file of ours: it is complete (the
 * manifest is written last, after every rank's files). */
static bool complete(const char *dir, int clock)
{
	char p[4096];
	struct stat st;

	return !frr_ckpt_path(p, sizeof(p), dir, clock, "MANIFEST") &&
	       !lstat(p, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid();
}

/* The highest clock of DIR's complete checkpoints, or -1. */
static int newest_complete(const char *dir)
{
	DIR *d = opendir(dir);
	int best = -1;

	for (struct dirent *e; d && (e = readdir(d));) {
		int c, used = 0;

		if (sscanf(e->d_name, "ckpt-%d%n", &c, &used) == 1 &&
		    !e->d_name[used] && c > best && complete(dir, c))
			best = c;
	}
	if (d)
		closedir(d);
	return best;
}

int frr_ckpt_latest(const char *dir, int *clock, int *named)
{
	int err = latest_named(dir, named), best = newest_complete(dir);

	if (err)
		*named = -1;
	/* latest names the newest complete one, unless a rank fenced out of
	 * a recovery's earlier epoch wrote it late, or a crash came between
	 * a manifest and latest: the newest manifest decides then */
	if (best >= 0 && (err || best > *named || !complete(dir, *named))) {
		*clock = best;
		return 0;
	}
	if (!err)
		*clock = *named; /* its missing manifest is said on reading */
	return err;
}

static int read_latest(const struct frr_rt *rt, int *clock)
{
	const char *dir = rt->prm->resume_dir;
	int named, err = frr_ckpt_latest(dir, clock, &named);

	if (err == -ENOENT)
		return refuse(rt,
			      "%s/latest is missing: no complete checkpoint "
			      "there (the job wrote none, or this is not its "
			      "--checkpoint DIR)",
			      dir);
	if (err == -EINVAL)
		return refuse(rt,
			      "%s/latest does not name a checkpoint "
			      "(ckpt-CLOCK)",
			      dir);
	if (err)
		return refuse(rt, "%s/latest cannot be read: %s", dir,
			      strerror(-err));
	if (named >= 0 && named != *clock)
		frr_warn("--resume %s: latest names ckpt-%d, %s; resuming "
			 "ckpt-%d, the newest complete checkpoint (latest was "
			 "written late by a rank a recovery fenced, or a "
			 "crash came between a manifest and latest)",
			 dir, named,
			 complete(dir, named) ? "an older one"
					      : "which is incomplete or gone",
			 *clock);
	else if (named < 0)
		frr_warn("--resume %s: latest is missing or unreadable; "
			 "resuming ckpt-%d, the newest complete checkpoint",
			 dir, *clock);
	return 0;
}

/* Optional "globals N K" and K lines "g CLOCK v1 .. vN" (job/
 * checkpoint_write.c), before "end"; absent: the app has none. */
static int parse_globals(FILE *f, struct frr_ckpt_glob *g)
{
	int ok = 1;

	if (fscanf(f, " globals %d %d", &g->nglob, &g->n) != 2) {
		g->nglob = g->n = 0;
		return 0;
	}
	ok = g->nglob >= 1 && g->nglob <= FRR_MAX_GLOBALS && g->n >= 0 &&
	     g->n <= FRR_RT_GLOBALS_RING;
	for (int i = 0; ok && i < g->n; i++) {
		ok = fscanf(f, " g %d", &g->ac[i]) == 1 && g->ac[i] >= 0;
		for (int j = 0; ok && j < g->nglob; j++)
			ok = fscanf(f, " %la", &g->v[i][j]) == 1;
	}
	return ok ? 0 : -EINVAL;
}

static int parse_manifest(FILE *f, struct frr_ckpt_id *id)
{
	int v = 0, ok;

	ok = fscanf(f,
		    "flexrr-checkpoint %d clock %d app %63s app_hash %" SCNx64
		    " app_args",
		    &v, &id->clock, id->app, &id->app_hash) == 4;
	/* app_args: the rest of the line (for messages only) */
	if (ok && fgets(id->app_args, sizeof(id->app_args), f)) {
		char *s = id->app_args + (id->app_args[0] == ' ');

		memmove(id->app_args, s, strlen(s) + 1);
		id->app_args[strcspn(id->app_args, "\n")] = 0;
	}
	ok = ok && v == FRR_CKPT_VERSION &&
	     fscanf(f,
		    " procs %d threads %d mode %d slack %d seed %" SCNu64
		    " data_hash %" SCNx64 " app_state %d tables %d",
		    &id->procs, &id->threads, &id->mode, &id->slack, &id->seed,
		    &id->data_hash, &id->app_state, &id->ntables) == 8 &&
	     id->ntables >= 0 && id->ntables <= FRR_MAX_TABLES;
	for (int t = 0; ok && t < id->ntables; t++) {
		int ti;

		ok = fscanf(f, " table %d %" SCNu64 " %u %d", &ti, &id->rows[t],
			    &id->cols[t], &id->rule[t]) == 4 &&
		     ti == t;
	}
	if (ok)
		ok = !parse_globals(f, &id->glob);
	/* optional (epoch 0 writes none) */
	if (ok && fscanf(f, " epoch %u", &id->epoch) != 1)
		id->epoch = 0;
	return ok ? 0 : -EINVAL;
}

/* App options as a message shows them: quoted, or that there were none. */
static const char *args_text(const char *args, char *buf, size_t len)
{
	if (!*args)
		return "none (the defaults)";
	snprintf(buf, len, "'%s'", args);
	return buf;
}

/* The first difference between the checkpoint (s) and this job (j). */
static int compare(const struct frr_rt *rt, const struct frr_ckpt_id *s,
		   const struct frr_ckpt_id *j)
{
	if (strcmp(s->app, j->app))
		return refuse(rt,
			      "the checkpoint is of app %s, this job runs "
			      "%s",
			      s->app, j->app);
	if (s->app_hash != j->app_hash) {
		char sa[sizeof(s->app_args) + 2], ja[sizeof(j->app_args) + 2];

		return refuse(rt,
			      "app options differ: the checkpoint ran %s, this "
			      "job %s; give the same ones",
			      args_text(s->app_args, sa, sizeof(sa)),
			      args_text(j->app_args, ja, sizeof(ja)));
	}
	if (s->procs != j->procs || s->threads != j->threads)
		return refuse(rt,
			      "the checkpoint was written by -n %d -t %d, "
			      "this job is -n %d -t %d: resume with the "
			      "same shape (the partitions, their item "
			      "state and their random streams depend on "
			      "it)",
			      s->procs, s->threads, j->procs, j->threads);
	if (s->mode != j->mode || s->slack != j->slack)
		return refuse(rt,
			      "the checkpoint ran --mode %s --slack %d, "
			      "this job --mode %s --slack %d",
			      frr_mode_name(s->mode), s->slack,
			      frr_mode_name(j->mode), j->slack);
	if (s->seed != j->seed)
		return refuse(rt,
			      "the checkpoint ran --seed %" PRIu64
			      ", this job --seed %" PRIu64,
			      s->seed, j->seed);
	if (s->ntables != j->ntables)
		return refuse(rt, "the checkpoint has %d tables, this job %d",
			      s->ntables, j->ntables);
	for (int t = 0; t < s->ntables; t++)
		if (s->rows[t] != j->rows[t] || s->cols[t] != j->cols[t] ||
		    s->rule[t] != j->rule[t])
			return refuse(
			    rt,
			    "table %d (%s) is %" PRIu64
			    " x %u in the checkpoint, %" PRIu64
			    " x %u here (or another update "
			    "rule): not the same model or data",
			    t,
			    rt->tb->spec[t].name ? rt->tb->spec[t].name : "?",
			    s->rows[t], s->cols[t], j->rows[t], j->cols[t]);
	if (s->data_hash != j->data_hash)
		return refuse(rt, "the data set differs: the partitions' item "
				  "counts are not the checkpoint's");
	if (s->glob.nglob != j->glob.nglob)
		return refuse(rt,
			      "the checkpoint keeps %d globals per clock, "
			      "this app declares %d: not the same app",
			      s->glob.nglob, j->glob.nglob);
	if (s->app_state != j->app_state)
		return refuse(rt, "the checkpoint %s app state, this app %s",
			      s->app_state ? "has" : "has no",
			      j->app_state ? "keeps some" : "keeps none");
	return 0;
}

static int read_manifest(const struct frr_rt *rt, int clock,
			 struct frr_ckpt_id *sp)
{
	struct frr_ckpt_id s, j;
	char p[4096];
	FILE *f;
	int err = open_in(rt, clock, "MANIFEST", &f, p, sizeof(p));

	if (err)
		return err;
	memset(&s, 0, sizeof(s));
	err = parse_manifest(f, &s);
	fclose(f);
	if (err || s.clock != clock)
		return refuse(rt,
			      "%s is not a flexrr checkpoint manifest of "
			      "version %d for clock %d",
			      p, FRR_CKPT_VERSION, clock);
	frr_ckpt_id_of(rt, &j);
	*sp = s;
	return compare(rt, &s, &j);
}

/* A file's header: what it must be. */
static int read_hdr(const struct frr_rt *rt, FILE *f, const char *p, int kind,
		    int index, int clock, struct frr_ckpt_hdr *h)
{
	if (fread(h, sizeof(*h), 1, f) != 1 ||
	    memcmp(h->magic, FRR_CKPT_MAGIC, 8) || h->kind != kind ||
	    h->index != index || h->clock != clock)
		return refuse(rt,
			      "%s is not the checkpoint file it should be "
			      "(truncated, or of another checkpoint)",
			      p);
	return 0;
}

static int load_shard(struct frr_rt *rt, int clock, unsigned epoch)
{
	struct frr_ckpt_hdr h;
	char name[64], p[4096];
	FILE *f;
	int err;

	frr_ckpt_name(name, sizeof(name), "shard", rt->rank, epoch);
	err = open_in(rt, clock, name, &f, p, sizeof(p));
	if (err)
		return err;
	err = read_hdr(rt, f, p, 1, rt->rank, clock, &h);
	for (int t = 0; t < rt->tb->ntables && !err; t++) {
		uint64_t n = rt->tb->shard_rows[t * rt->P + rt->rank];
		struct frr_ckpt_table th;
		size_t cells;

		if (fread(&th, sizeof(th), 1, f) != 1 || th.rows != n ||
		    th.cols != rt->tb->spec[t].cols ||
		    th.accum != (rt->tb->accum[t] != NULL)) {
			err = refuse(rt, "%s: table %d does not match", p, t);
			break;
		}
		cells = (size_t)n * th.cols;
		if (fread(rt->tb->master[t], sizeof(float), cells, f) !=
			cells ||
		    (th.accum &&
		     fread(rt->tb->accum[t], sizeof(float), cells, f) != cells))
			err = refuse(rt, "%s is truncated", p);
	}
	fclose(f);
	return err;
}

/* Every partition this rank holds (its own; rr's replicas too). */
static int load_states(struct frr_rt *rt, int clock, unsigned epoch)
{
	int err = 0;

	for (int v = 0; v < rt->W && !err; v++) {
		struct frr_part *pt = &rt->ws->parts[v];
		struct frr_ckpt_hdr h;
		char name[64], p[4096];
		FILE *f;

		if (!pt->loaded || !pt->state)
			continue;
		frr_ckpt_name(name, sizeof(name), "state", v, epoch);
		err = open_in(rt, clock, name, &f, p, sizeof(p));
		if (err)
			break;
		err = read_hdr(rt, f, p, 2, v, clock, &h);
		if (!err && h.bytes != pt->state_off[pt->n])
			err = refuse(rt,
				     "partition %d's item state is %" PRIu64
				     " bytes in the checkpoint, %" PRIu64
				     " here: not the same data",
				     v, h.bytes, pt->state_off[pt->n]);
		if (!err && fread(pt->state, 1, h.bytes, f) != h.bytes)
			err = refuse(rt, "%s is truncated", p);
		fclose(f);
	}
	return err;
}

static int load_app(struct frr_rt *rt, int clock, unsigned epoch)
{
	char name[64], p[4096];
	FILE *f;
	int err;

	if (!frr_ckpt_has_app_state(rt))
		return 0;
	frr_ckpt_name(name, sizeof(name), "app", rt->rank, epoch);
	err = open_in(rt, clock, name, &f, p, sizeof(p));
	if (err)
		return err;
	err = rt->app->checkpoint_load(rt->app_state, f, clock);
	fclose(f);
	if (err)
		frr_err("app %s: checkpoint_load(%s) failed (%d)",
			rt->app->name, p, err);
	return err;
}

/* Every rank resumes rank 0's choice (a rank fenced out of a recovery's
 * earlier epoch may replace latest between two ranks' reads: docs/
 * runtime.md "A fenced rank's files"): only rank 0 reads DIR.  err, or the
 * first error of another rank. */
static int agree_clock(struct frr_rt *rt, int *clock)
{
	int32_t mine[2] = { 0, 0 }, *all = calloc((size_t)rt->P, 8);
	int err = rt->rank == 0 ? read_latest(rt, clock) : 0, e;

	if (!all)
		return -ENOMEM;
	mine[0] = err;
	mine[1] = *clock;
	e = frr_rt_allgather(rt, "agreeing on the checkpoint to resume", mine,
			     sizeof(mine), all);
	for (int r = 0; r < rt->P && !e; r++)
		e = all[2 * r];
	*clock = all[1];
	free(all);
	return err ? err : e;
}

int frr_rt_resume(struct frr_rt *rt)
{
	struct frr_ckpt_id s = { 0 };
	int clock = 0, err;

	if (!rt->prm->resume_dir)
		return 0;
	err = agree_clock(rt, &clock);
	if (!err)
		err = read_manifest(rt, clock, &s);
	if (!err && clock + 1 >= rt->prm->clocks)
		err = refuse(rt,
			     "its checkpoint is of clock %d, and --clocks "
			     "%d ends with clock %d: nothing left to run; "
			     "give a larger --clocks",
			     clock, rt->prm->clocks, rt->prm->clocks - 1);
	err = frr_ckpt_agree(rt, err);
	if (!err)
		err = load_shard(rt, clock, s.epoch);
	if (!err)
		err = load_states(rt, clock, s.epoch);
	if (!err)
		err = load_app(rt, clock, s.epoch);
	err = frr_ckpt_agree(rt, err);
	if (err)
		return err;
	/* the globals the first clocks read (core/globals.c) */
	for (int i = 0; i < s.glob.n; i++)
		frr_rt_globals_put(rt, s.glob.ac[i], s.glob.v[i]);
	rt->clock_base = clock + 1;
	atomic_store(&rt->end_clock, rt->prm->clocks - rt->clock_base);
	if (rt->rank == 0 && !rt->prm->quiet)
		fprintf(
		    stderr, "flexrr: resuming from %s/ckpt-%d: clocks %d..%d\n",
		    rt->prm->resume_dir, clock, clock + 1, rt->prm->clocks - 1);
	return 0;
}
