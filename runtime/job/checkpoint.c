// SPDX-License-Identifier: MIT
/*
 * Writing checkpoints (docs/runtime.md "Checkpoints").  The cut of clock C
 * is taken where each piece is exactly "after C" without stopping the job:
 * a worker copies its partition's item state at the end of its clock C
 * (before its batch leaves: no shard can apply C before that); the server
 * writes its shard right after applying C (it alone changes the shard, and
 * it applies C + 1 only after the write) and the copies with it; the app's
 * own state follows the rank's clock_local(C), before its stats of C leave
 * for rank 0.  So when rank 0 has processed clock C every rank's files are
 * on disk, and rank 0 writes the manifest, then DIR/latest, then removes
 * the previous checkpoint.  Every file goes through frr_file_write_atomic.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "flexrr/file.h"
#include "flexrr/log.h"

int frr_ckpt_path(char *buf, size_t len, const char *dir, int clock,
		  const char *name)
{
	int n = name ? snprintf(buf, len, "%s/ckpt-%d/%s", dir, clock, name)
		     : snprintf(buf, len, "%s/ckpt-%d", dir, clock);

	if (n < 0 || (size_t)n >= len) {
		frr_err("checkpoint: the path under %s is too long; use a "
			"shorter --checkpoint / --resume directory",
			dir);
		return -ENAMETOOLONG;
	}
	return 0;
}

int frr_ckpt_has_app_state(const struct frr_rt *rt)
{
	const struct frr_app_ops *a = rt->app;

	return a->size >= offsetof(struct frr_app_ops, checkpoint_load) +
			      sizeof(a->checkpoint_load) &&
	       a->checkpoint_save && a->checkpoint_load;
}

void frr_ckpt_id_of(const struct frr_rt *rt, struct frr_ckpt_id *id)
{
	const struct frr_run_opts *o = rt->o;
	size_t at = 0;

	memset(id, 0, sizeof(*id));
	id->procs = rt->P;
	id->threads = rt->T;
	id->mode = o->mode;
	id->slack = o->slack;
	id->seed = o->seed;
	id->ntables = rt->ntables;
	id->app_state = frr_ckpt_has_app_state(rt);
	snprintf(id->app, sizeof(id->app), "%s", rt->app->name);
	for (int i = 1; i < o->app_argc; i++) {
		const char *a = o->app_argv[i];

		id->app_hash = frr_fnv1a64(a, strlen(a) + 1, id->app_hash);
		if (at + 2 < sizeof(id->app_args))
			at += (size_t)snprintf(id->app_args + at,
					       sizeof(id->app_args) - at,
					       "%s%s", at ? " " : "", a);
	}
	for (char *p = id->app_args; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = '?';
	for (int t = 0; t < rt->ntables; t++) {
		id->rows[t] = rt->spec[t].rows;
		id->cols[t] = rt->spec[t].cols;
		id->rule[t] = rt->spec[t].rule;
	}
	/* the data set, as far as the runtime sees it */
	for (int v = 0; v < rt->W; v++)
		id->data_hash = frr_fnv1a64(&rt->nitems[v], sizeof(uint64_t),
					    id->data_hash);
}

/* The verdict of every rank, so that all stop together, before any of them
 * tears its regions down under a peer still setting up. */
int frr_ckpt_agree(struct frr_rt *rt, int err)
{
	int32_t st = err, *all = calloc((size_t)rt->P, sizeof(int32_t));
	int e;

	if (!all)
		return -ENOMEM;
	e = frr_oob_allgather(rt->oob, &st, sizeof(st), all, rt->o->timeout_ms);
	for (int r = 0; r < rt->P && !e; r++)
		e = all[r];
	free(all);
	return err ? err : e;
}

/* Is internal clock c a checkpoint's cut?  The same answer on every rank
 * and thread: a clock count, or the clock rank 0 planned (time-based). */
static int ck_due(const struct frr_rt *rt, int c)
{
	const struct frr_ckpt *k = rt->ck;
	int ac = frr_rt_app_clock(rt, c);

	if (!k || ac + 1 >= rt->o->clocks)
		return 0; /* the last clock: the job's end is its result */
	if (k->every)
		return (ac + 1) % k->every == 0;
	return frr_tp_load_u64(ctl_u64(rt, rt->off_stop + 8)) ==
	       (uint64_t)c + 1;
}

static void test_kill_init(struct frr_ckpt *k)
{
	const char *e = getenv("FLEXRR_TEST_CKPT_KILL");

	k->kill_clock = e ? atoi(e) : -1;
	k->kill_before_manifest = e && strstr(e, ":manifest");
}

/* DIR exists (made if not) and is a directory of ours, not a link. */
static int ck_dir_ok(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		int err = -errno;

		frr_err("checkpoint: cannot create directory %s: %s; pick a "
			"writable place",
			dir, strerror(-err));
		return err;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		frr_err("checkpoint: %s is not a directory of this user (a "
			"link, a file or someone else's): give a directory of "
			"your own",
			dir);
		return -EPERM;
	}
	return 0;
}

/* A fresh job must not overwrite another job's checkpoints. */
static int ck_check_fresh(struct frr_rt *rt)
{
	char p[4096];
	struct stat st;

	if (rt->o->resume_dir && !strcmp(rt->o->resume_dir, rt->o->ckpt_dir))
		return 0;
	snprintf(p, sizeof(p), "%s/latest", rt->o->ckpt_dir);
	if (lstat(p, &st))
		return 0;
	if (rt->rank == 0)
		frr_err(
		    "--checkpoint %s already holds a job's checkpoints (%s): "
		    "continue it with --resume %s, or give an empty "
		    "directory",
		    rt->o->ckpt_dir, p, rt->o->ckpt_dir);
	return -EEXIST;
}

int frr_rt_ckpt_init(struct frr_rt *rt)
{
	struct frr_ckpt *k;
	int err;

	if (!rt->o->ckpt_dir)
		return 0;
	k = rt->ck = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->every = rt->o->ckpt_every_s > 0 ? 0 : rt->o->ckpt_every;
	k->every_s = rt->o->ckpt_every_s;
	k->last_t = frr_rt_clock_now();
	test_kill_init(k);
	k->snap = calloc((size_t)rt->T, sizeof(*k->snap));
	k->snap_clock = calloc((size_t)rt->T, sizeof(*k->snap_clock));
	if (!k->snap || !k->snap_clock)
		return -ENOMEM;
	for (int t = 0; t < rt->T; t++) {
		const struct frr_part *p = &rt->parts[rt->rank * rt->T + t];

		if (p->state && !(k->snap[t] = malloc(p->state_off[p->n])))
			return -ENOMEM;
	}
	err = ck_dir_ok(rt->o->ckpt_dir);
	if (!err)
		err = ck_check_fresh(rt);
	return frr_ckpt_agree(rt, err);
}

void frr_rt_ckpt_fini(struct frr_rt *rt)
{
	struct frr_ckpt *k = rt->ck;

	if (!k)
		return;
	if (rt->rank == 0 && k->count && !rt->o->quiet)
		fprintf(stderr,
			"flexrr: %d checkpoints in %s: rank 0 paused %.4f s "
			"each on average, %.4f s at most\n",
			k->count, rt->o->ckpt_dir, k->pause_sum / k->count,
			k->pause_max);
	for (int t = 0; k->snap && t < rt->T; t++)
		free(k->snap[t]);
	free(k->snap);
	free((void *)k->snap_clock);
	free(k);
	rt->ck = NULL;
}

/* Under SSP a worker may reach its next cut before the server has written
 * the last one: it waits for the copy to be free (the server needs nothing
 * more of it for that clock, so this ends). */
static int snap_wait(struct frr_worker *wk)
{
	struct frr_rt *rt = wk->rt;
	struct frr_ckpt *k = rt->ck;
	struct frr_stall st;

	frr_rt_stall_init(rt, &st);
	while (atomic_load_explicit(&k->snap_clock[wk->local],
				    memory_order_acquire) > 0) {
		if (frr_rt_failed(rt))
			return frr_rt_failed(rt);
		if (frr_rt_stalled(rt, &st))
			return frr_rt_fail(rt, -ETIMEDOUT,
					   "worker %d waited %d ms (the "
					   "--timeout) for its rank to write "
					   "the last checkpoint; raise "
					   "--timeout if checkpoints take "
					   "that long",
					   wk->id, rt->o->timeout_ms);
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	return 0;
}

int frr_rt_ckpt_snap(struct frr_worker *wk, int c)
{
	struct frr_rt *rt = wk->rt;
	const struct frr_part *p = &rt->parts[wk->id];
	int err;

	if (!ck_due(rt, c) || !p->state)
		return 0;
	err = snap_wait(wk);
	if (err)
		return err;
	memcpy(rt->ck->snap[wk->local], p->state, p->state_off[p->n]);
	atomic_store_explicit(&rt->ck->snap_clock[wk->local], c + 1,
			      memory_order_release);
	return 0;
}

/* ---- the files ---------------------------------------------------------- */
struct fill_blob {
	const struct frr_rt *rt;
	struct frr_ckpt_hdr h;
	const void *data; /* state */
};

static int fill_shard(FILE *f, void *arg)
{
	const struct fill_blob *b = arg;
	const struct frr_rt *rt = b->rt;

	/* big writes: the pause is the disk's time, not the syscalls' */
	setvbuf(f, NULL, _IOFBF, (size_t)1 << 20);
	fwrite(&b->h, sizeof(b->h), 1, f);
	for (int t = 0; t < rt->ntables; t++) {
		uint64_t n = rt->shard_rows[t * rt->P + rt->rank];
		struct frr_ckpt_table th = { n, rt->spec[t].cols,
					     rt->accum[t] != NULL };

		fwrite(&th, sizeof(th), 1, f);
		fwrite(rt->master[t], sizeof(float), n * th.cols, f);
		if (th.accum)
			fwrite(rt->accum[t], sizeof(float), n * th.cols, f);
	}
	return ferror(f) ? -EIO : 0;
}

static int fill_state(FILE *f, void *arg)
{
	const struct fill_blob *b = arg;

	fwrite(&b->h, sizeof(b->h), 1, f);
	fwrite(b->data, 1, b->h.bytes, f);
	return ferror(f) ? -EIO : 0;
}

struct fill_app {
	struct frr_rt *rt;
	int clock;
};

static int fill_app(FILE *f, void *arg)
{
	const struct fill_app *a = arg;
	int err = a->rt->app->checkpoint_save(a->rt->app_state, f, a->clock);

	if (err)
		frr_err("app %s: checkpoint_save(clock %d) failed (%d)",
			a->rt->app->name, a->clock, err);
	return err;
}

static int ck_write(struct frr_rt *rt, int ac, const char *name,
		    int (*fill)(FILE *, void *), void *arg)
{
	char p[4096];
	struct stat st;
	double t0 = frr_rt_clock_now();
	int err = frr_ckpt_path(p, sizeof(p), rt->o->ckpt_dir, ac, name);

	if (!err)
		err = frr_file_write_atomic(p, "--checkpoint", fill, arg);
	if (!err && !stat(p, &st))
		rt->ck->bytes += (uint64_t)st.st_size;
	rt->ck->write_s += frr_rt_clock_now() - t0;
	return err;
}

/* This rank's item state copies of clock c, then its shard. */
static int write_shard(struct frr_rt *rt, int c, int ac)
{
	struct fill_blob b = { .rt = rt };
	char name[64], p[4096];
	int err = frr_ckpt_path(p, sizeof(p), rt->o->ckpt_dir, ac, NULL);

	/* made here or by another rank of this job, never a link or
	 * another user's directory planted in a shared DIR */
	if (!err)
		err = ck_dir_ok(p);
	if (err)
		return frr_rt_fail(rt, err, "checkpoint: cannot use %s (%d)", p,
				   err);
	memcpy(b.h.magic, FRR_CKPT_MAGIC, 8);
	b.h.clock = ac;
	b.h.kind = 2;
	for (int t = 0; t < rt->T && !err; t++) {
		int v = rt->rank * rt->T + t;
		const struct frr_part *pt = &rt->parts[v];

		if (!pt->state)
			continue;
		if (atomic_load_explicit(&rt->ck->snap_clock[t],
					 memory_order_acquire) != c + 1)
			return frr_rt_fail(rt, -EPROTO,
					   "checkpoint of clock %d: worker "
					   "%d's item state copy is missing",
					   ac, v);
		b.h.index = v;
		b.h.bytes = pt->state_off[pt->n];
		b.data = rt->ck->snap[t];
		snprintf(name, sizeof(name), "state-%d", v);
		err = ck_write(rt, ac, name, fill_state, &b);
		/* the copy is free for the worker's next cut */
		atomic_store_explicit(&rt->ck->snap_clock[t], 0,
				      memory_order_release);
	}
	b.h.kind = 1;
	b.h.index = rt->rank;
	b.h.ntables = rt->ntables;
	b.h.bytes = 0;
	snprintf(name, sizeof(name), "shard-%d", rt->rank);
	return err ? err : ck_write(rt, ac, name, fill_shard, &b);
}

int frr_rt_ckpt_shard(struct frr_rt *rt, int c)
{
	double t0 = frr_rt_clock_now();
	int err;

	if (!ck_due(rt, c))
		return 0;
	rt->ck->bytes = 0;
	rt->ck->write_s = 0;
	err = write_shard(rt, c, frr_rt_app_clock(rt, c));
	rt->ck->pause_s = frr_rt_clock_now() - t0;
	return err ? frr_rt_fail(rt, err,
				 "checkpoint of clock %d: writing rank %d's "
				 "shard failed (%d); see above",
				 frr_rt_app_clock(rt, c), rt->rank, err)
		   : 0;
}

static int write_app(struct frr_rt *rt, int ac)
{
	struct fill_app a = { rt, ac };
	char name[64];

	if (!frr_ckpt_has_app_state(rt))
		return 0;
	snprintf(name, sizeof(name), "app-%d", rt->rank);
	return ck_write(rt, ac, name, fill_app, &a);
}

int frr_rt_ckpt_app(struct frr_rt *rt, int c)
{
	double t0 = frr_rt_clock_now();
	int err;

	/* rank 0's state is complete after clock_global: commit writes it */
	if (rt->rank == 0 || !ck_due(rt, c))
		return 0;
	err = write_app(rt, frr_rt_app_clock(rt, c));
	rt->ck->pause_s += frr_rt_clock_now() - t0;
	return err ? frr_rt_fail(rt, err,
				 "checkpoint of clock %d: writing rank %d's "
				 "app state failed (%d)",
				 frr_rt_app_clock(rt, c), rt->rank, err)
		   : 0;
}

/* ---- rank 0: the manifest, latest, the previous one ---------------------- */
static int fill_manifest(FILE *f, void *arg)
{
	const struct frr_ckpt_id *id = arg;

	fprintf(f,
		"flexrr-checkpoint %d\nclock %d\napp %s\napp_hash %016" PRIx64
		"\napp_args %s\nprocs %d\nthreads %d\nmode %d\nslack %d\n"
		"seed %" PRIu64 "\ndata_hash %016" PRIx64 "\napp_state %d\n"
		"tables %d\n",
		FRR_CKPT_VERSION, id->clock, id->app, id->app_hash,
		id->app_args, id->procs, id->threads, id->mode, id->slack,
		id->seed, id->data_hash, id->app_state, id->ntables);
	for (int t = 0; t < id->ntables; t++)
		fprintf(f, "table %d %" PRIu64 " %u %d\n", t, id->rows[t],
			id->cols[t], id->rule[t]);
	fprintf(f, "end\n");
	return ferror(f) ? -EIO : 0;
}

static int fill_latest(FILE *f, void *arg)
{
	fprintf(f, "ckpt-%d\n", *(const int *)arg);
	return ferror(f) ? -EIO : 0;
}

/* Every rank's shard file is where rank 0 looks: DIR is shared. */
static int check_shards(struct frr_rt *rt, int ac)
{
	for (int r = 0; r < rt->P; r++) {
		char name[64], p[4096];
		struct stat st;
		int err;

		snprintf(name, sizeof(name), "shard-%d", r);
		err = frr_ckpt_path(p, sizeof(p), rt->o->ckpt_dir, ac, name);
		if (err)
			return err;
		if (stat(p, &st)) {
			frr_err("checkpoint of clock %d: rank 0 cannot see "
				"rank %d's %s: --checkpoint %s must be a "
				"directory every rank shares",
				ac, r, p, rt->o->ckpt_dir);
			return -ENOENT;
		}
	}
	return 0;
}

/* One checkpoint directory: best effort (a leftover costs space, not
 * correctness: latest decides). */
static void remove_ckpt(struct frr_rt *rt, int ac)
{
	char p[4096];
	DIR *d;
	int fd;

	if (frr_ckpt_path(p, sizeof(p), rt->o->ckpt_dir, ac, NULL))
		return;
	fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(fd, e->d_name, 0);
	closedir(d);
	if (rmdir(p))
		frr_warn("checkpoint: could not remove the previous "
			 "checkpoint %s (%s); delete it by hand",
			 p, strerror(errno));
}

/* Once ckpt-ac is complete: every older one (the previous one, and one a
 * crash left).  Newer ones are other ranks' next checkpoint under SSP, or
 * a crashed run's partial one, which its clock will overwrite. */
static void remove_others(struct frr_rt *rt, int ac)
{
	DIR *d = opendir(rt->o->ckpt_dir);
	int n = 0, *old = NULL;

	for (struct dirent *e; d && (e = readdir(d));) {
		int c, used = 0, *o;

		if (sscanf(e->d_name, "ckpt-%d%n", &c, &used) != 1 ||
		    e->d_name[used] || c >= ac)
			continue;
		o = realloc(old, (size_t)(n + 1) * sizeof(int));
		if (!o)
			break;
		old = o;
		old[n++] = c;
	}
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)
		remove_ckpt(rt, old[i]);
	free(old);
}

static void test_kill(const struct frr_ckpt *k, int ac, int before_manifest)
{
	if (k->kill_clock == ac && k->kill_before_manifest == before_manifest)
		kill(0, SIGKILL); /* the test runs the job in its own group */
}

static int commit(struct frr_rt *rt, int ac)
{
	struct frr_ckpt *k = rt->ck;
	struct frr_ckpt_id id;
	char p[4096];
	int err = write_app(rt, ac);

	if (!err)
		err = check_shards(rt, ac);
	test_kill(k, ac, 1);
	frr_ckpt_id_of(rt, &id);
	id.clock = ac;
	if (!err)
		err = frr_ckpt_path(p, sizeof(p), rt->o->ckpt_dir, ac,
				    "MANIFEST");
	if (!err)
		err = frr_file_write_atomic(p, "--checkpoint", fill_manifest,
					    &id);
	if (!err && snprintf(p, sizeof(p), "%s/latest", rt->o->ckpt_dir) >=
			(int)sizeof(p))
		err = -ENAMETOOLONG;
	if (!err)
		err =
		    frr_file_write_atomic(p, "--checkpoint", fill_latest, &ac);
	if (err)
		return err;
	test_kill(k, ac, 0);
	remove_others(rt, ac);
	return 0;
}

/* Time-based: a clock far enough ahead that no worker has reached it (as
 * for --target's stop clock, docs/runtime.md "Failures"), written before
 * rank 0's next done word. */
static int plan(struct frr_rt *rt, int c)
{
	struct frr_ckpt *k = rt->ck;
	double now = frr_rt_clock_now();
	int at = c + rt->eff_slack + 2;

	if (k->every || (k->planned && k->planned > c) ||
	    now - k->last_t < k->every_s || at >= frr_rt_cur_end(rt))
		return 0;
	k->planned = at + 1;
	k->last_t = now;
	return frr_rt_ctl_broadcast(rt, rt->off_stop + 8, (uint64_t)at + 1);
}

int frr_rt_ckpt_commit(struct frr_rt *rt, int c)
{
	struct frr_ckpt *k = rt->ck;
	int ac = frr_rt_app_clock(rt, c), err = 0;
	double t0 = frr_rt_clock_now();

	if (!k || rt->rank != 0)
		return 0;
	if (ck_due(rt, c)) {
		err = commit(rt, ac);
		k->pause_s += frr_rt_clock_now() - t0;
		k->count++;
		k->pause_sum += k->pause_s;
		if (k->pause_s > k->pause_max)
			k->pause_max = k->pause_s;
		if (!err && !rt->o->quiet)
			fprintf(stderr,
				"flexrr: checkpoint of clock %d in "
				"%s/ckpt-%d: rank 0 wrote %.1f MiB in %.4f s "
				"(files), paused %.4f s (with the manifest "
				"and removing the previous one)\n",
				ac, rt->o->ckpt_dir, ac,
				(double)k->bytes / (1 << 20), k->write_s,
				k->pause_s);
		if (err)
			return frr_rt_fail(
			    rt, err,
			    "checkpoint of clock %d failed (%d); "
			    "the previous one stays the newest",
			    ac, err);
	}
	return plan(rt, c);
}
