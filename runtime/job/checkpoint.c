// SPDX-License-Identifier: MIT
/*
 * Taking checkpoints (docs/runtime.md "Checkpoints").  The cut of clock C
 * is taken where each piece is exactly "after C" without stopping the job:
 * a worker copies its partition's item state at the end of its clock C
 * (before its batch leaves: no shard can apply C before that); the server
 * copies its shard right after applying C (it alone changes the shard, and
 * it applies C + 1 only after the copy); the app's own state is captured
 * after the rank's clock_local(C) (rank 0: clock_global(C)).  The writer
 * thread (job/checkpoint_write.c) writes the copies while the job runs on;
 * each rank tells the others when its files of C are on disk, and rank 0,
 * once every rank's are, has its writer write the manifest, DIR/latest,
 * and remove the previous checkpoint.  One cut at a time: the server
 * holds the next cut's apply until the last checkpoint is written.
 */
#include <errno.h>
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

void frr_ckpt_name(char *buf, size_t len, const char *kind, int index,
		   unsigned epoch)
{
	if (epoch)
		snprintf(buf, len, "%s-%d.e%u", kind, index, epoch);
	else
		snprintf(buf, len, "%s-%d", kind, index);
}

void frr_ckpt_id_of(const struct frr_rt *rt, struct frr_ckpt_id *id)
{
	const struct frr_rt_params *o = rt->prm;
	size_t at = 0;

	memset(id, 0, sizeof(*id));
	id->procs = rt->P;
	id->threads = rt->T;
	id->mode = o->mode;
	id->slack = o->slack;
	id->seed = o->seed;
	id->ntables = rt->tb->ntables;
	id->app_state = frr_ckpt_has_app_state(rt);
	id->epoch = o->epoch;
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
	for (int t = 0; t < rt->tb->ntables; t++) {
		id->rows[t] = rt->tb->spec[t].rows;
		id->cols[t] = rt->tb->spec[t].cols;
		id->rule[t] = rt->tb->spec[t].rule;
	}
	id->glob.nglob = rt->nglob;
	/* the data set, as far as the runtime sees it */
	for (int v = 0; v < rt->W; v++)
		id->data_hash = frr_fnv1a64(&rt->ws->nitems[v],
					    sizeof(uint64_t), id->data_hash);
}

void frr_ckpt_glob_take(const struct frr_rt *rt, int ac,
			struct frr_ckpt_glob *g)
{
	g->nglob = rt->nglob;
	g->n = 0;
	for (int a = ac - rt->eff_slack; rt->nglob && a <= ac; a++)
		if (a >= 0 && !frr_rt_globals_get(rt, a, g->v[g->n]))
			g->ac[g->n++] = a;
}

/* The verdict of every rank, so that all stop together, before any of them
 * tears its regions down under a peer still setting up. */
int frr_ckpt_agree(struct frr_rt *rt, int err)
{
	int32_t st = err, *all = calloc((size_t)rt->P, sizeof(int32_t));
	int e;

	if (!all)
		return -ENOMEM;
	e = frr_rt_allgather(rt, "agreeing that the checkpoint is written", &st,
			     sizeof(st), all);
	for (int r = 0; r < rt->P && !e; r++)
		e = all[r];
	free(all);
	return err ? err : e;
}

/* Is internal clock c a checkpoint's cut?  The same answer on every rank
 * and thread: a clock count, or the clock rank 0 planned (time-based). */
static int ck_due(const struct frr_rt *rt, int c)
{
	const struct frr_ckpt *k = rt->js->ck;
	int ac = frr_rt_app_clock(rt, c);

	if (!k || ac + 1 >= rt->prm->clocks)
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
	k->kill_self = e && (strstr(e, ":self") || strstr(e, ":stop"));
	k->kill_stop = e && strstr(e, ":stop");
	k->kill_file = e && strstr(e, ":file");
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

	if (rt->prm->resume_dir &&
	    !strcmp(rt->prm->resume_dir, rt->prm->ckpt_dir))
		return 0;
	snprintf(p, sizeof(p), "%s/latest", rt->prm->ckpt_dir);
	if (lstat(p, &st))
		return 0;
	if (rt->rank == 0)
		frr_err(
		    "--checkpoint %s already holds a job's checkpoints (%s): "
		    "continue it with --resume %s, or give an empty "
		    "directory",
		    rt->prm->ckpt_dir, p, rt->prm->ckpt_dir);
	return -EEXIST;
}

/* The shard file: its header, then per table its header, rows and
 * AdaGrad sums. */
static size_t shard_bytes(const struct frr_rt *rt)
{
	size_t n = sizeof(struct frr_ckpt_hdr);

	for (int t = 0; t < rt->tb->ntables; t++)
		n += sizeof(struct frr_ckpt_table) +
		     rt->tb->shard_rows[t * rt->P + rt->rank] *
			 rt->tb->spec[t].cols * sizeof(float) *
			 (rt->tb->accum[t] ? 2 : 1);
	return n;
}

size_t frr_ckpt_durable_off(const struct frr_rt *rt, int r)
{
	return rt->off_fin + (size_t)r * 64 + 8;
}

int frr_rt_ckpt_init(struct frr_rt *rt)
{
	struct frr_ckpt *k;
	int err;

	if (!rt->prm->ckpt_dir)
		return 0;
	k = rt->js->ck = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->every = rt->prm->ckpt_every_s > 0 ? 0 : rt->prm->ckpt_every;
	k->every_s = rt->prm->ckpt_every_s;
	k->last_t = frr_rt_clock_now();
	test_kill_init(k);
	k->app_state = frr_ckpt_has_app_state(rt);
	k->shard_len = shard_bytes(rt);
	/* touched now: page faults at the cut would be part of the pause
	 * (not with 0: malloc + memset 0 may become a calloc's fresh pages) */
	k->shard = malloc(k->shard_len);
	if (k->shard)
		memset(k->shard, 0xff, k->shard_len);
	k->snap = calloc((size_t)rt->T, sizeof(*k->snap));
	k->snap_clock = calloc((size_t)rt->T, sizeof(*k->snap_clock));
	if (!k->shard || !k->snap || !k->snap_clock)
		return -ENOMEM;
	for (int t = 0; t < rt->T; t++) {
		const struct frr_part *p = &rt->ws->parts[rt->rank * rt->T + t];

		if (p->state && !(k->snap[t] = malloc(p->state_off[p->n])))
			return -ENOMEM;
	}
	err = ck_dir_ok(rt->prm->ckpt_dir);
	if (!err)
		err = ck_check_fresh(rt);
	if (!err)
		err = frr_ckpt_writer_start(rt);
	err = frr_ckpt_agree(rt, err);
	return err ? err : frr_ckpt_dir_shared(rt);
}

void frr_rt_ckpt_fini(struct frr_rt *rt)
{
	struct frr_ckpt *k = rt->js->ck;

	if (!k)
		return;
	frr_ckpt_writer_stop(rt);
	if (rt->rank == 0 && k->count && !rt->prm->quiet)
		fprintf(stderr,
			"flexrr: %d checkpoints in %s: rank 0 paused %.4f s "
			"each on average, %.4f s at most\n",
			k->count, rt->prm->ckpt_dir, k->pause_sum / k->count,
			k->pause_max);
	for (int t = 0; k->snap && t < rt->T; t++)
		free(k->snap[t]);
	free(k->snap);
	free((void *)k->snap_clock);
	free(k->shard);
	free(k->cuts[0].app);
	free(k->cuts[1].app);
	free(k);
	rt->js->ck = NULL;
}

/* Before worker wk copies its item states of cut c: under SSP it may reach
 * the cut before its rank's writer has written the last one (the copy must
 * be free; the writer needs nothing more of this worker for that, so this
 * ends); under lb-bsp (items_done_late) a helper returns the states of its
 * tail of c before its batch, so once every shard applied c they are home.
 * One wait for both, naming what it still waits for.  It serves rr's help
 * meanwhile: the writer's last cut needs a clock applied that may wait for
 * a helpee, which waits for this worker's answer to its CancelHelp. */
static int snap_wait(struct frr_worker *wk, int c)
{
	struct frr_rt *rt = wk->rt;
	struct frr_ckpt *k = rt->js->ck;
	struct frr_stall st;
	int busy, late, err;

	frr_rt_stall_init(rt, &st);
	for (;;) {
		busy = atomic_load_explicit(&k->snap_clock[wk->dp.local],
					    memory_order_acquire) > 0;
		late = rt->ws->items_done_late &&
		       !frr_rt_all_done_ge(rt, (uint64_t)c + 1);
		if (!busy && !late)
			return 0;
		if (frr_rt_failed(rt))
			return frr_rt_failed(rt);
		if (frr_rt_stalled(rt, &st))
			return frr_rt_fail(
			    rt, -ETIMEDOUT,
			    "worker %d waited %d ms (the --timeout) %s before "
			    "copying its item states of clock %d for a "
			    "checkpoint; raise --timeout if %s take that long",
			    wk->dp.id, rt->prm->timeout_ms,
			    busy ? "for its rank to write the last checkpoint"
				 : "for the clock to be applied everywhere",
			    frr_rt_app_clock(rt, c),
			    busy ? "checkpoints" : "clocks");
		err = frr_rt_worker_idle(wk, c);
		if (err)
			return err;
		frr_nap_us(100);
	}
}

int frr_rt_ckpt_snap(struct frr_worker *wk, int c)
{
	struct frr_rt *rt = wk->rt;
	const struct frr_part *p = &rt->ws->parts[wk->dp.id];
	int err;

	if (!ck_due(rt, c) || !p->state)
		return 0;
	err = snap_wait(wk, c);
	if (err)
		return err;
	memcpy(rt->js->ck->snap[wk->dp.local], p->state, p->state_off[p->n]);
	atomic_store_explicit(&rt->js->ck->snap_clock[wk->dp.local], c + 1,
			      memory_order_release);
	return 0;
}

/* ---- the server: taking the cut ------------------------------------------ */
/* Is the last checkpoint still being written?  Then the server does not
 * apply the next cut's clock (its copy buffer is one): it goes on serving
 * rows and beating meanwhile.  Rank 0 also waits while two cuts await
 * their manifests (it keeps the figures of two for its log lines). */
static int writer_busy(struct frr_rt *rt)
{
	struct frr_ckpt *k = rt->js->ck;
	int busy;

	if (!k->cut)
		return 0;
	pthread_mutex_lock(&k->w.lock);
	busy = k->w.durable < k->cut;
	pthread_mutex_unlock(&k->w.lock);
	return busy || (rt->rank == 0 && k->ncut - k->chead >= 2);
}

int frr_rt_ckpt_hold(struct frr_rt *rt, int c)
{
	struct frr_ckpt *k = rt->js->ck;
	int held;

	if (!k || !ck_due(rt, c))
		return 0;
	held = writer_busy(rt);
	if (held && !k->hold_t0)
		k->hold_t0 = frr_rt_clock_now();
	return held;
}

/* A time-based cut's clock word (plan()) can arrive between the hold's look
 * and the apply: then the server waits here for the writer, still beating
 * and committing (the copy buffer must not change under the writer). */
static int wait_writer(struct frr_rt *rt)
{
	struct frr_ckpt *k = rt->js->ck;
	double t0 = frr_rt_clock_now();
	int err = 0;

	if (!k->hold_t0)
		k->hold_t0 = t0;
	while (!err && writer_busy(rt)) {
		double now = frr_rt_clock_now();

		err = frr_rt_ckpt_poll(rt);
		if (err >= 0)
			err = frr_rt_failed(rt);
		if (!err)
			err = frr_rt_heartbeat(rt, now, 0);
		if (!err && (now - t0) * 1000 > rt->prm->timeout_ms)
			err = frr_rt_fail(rt, -ETIMEDOUT,
					  "checkpoint: the last checkpoint "
					  "was not written within %d ms (the "
					  "--timeout); raise it for a slow "
					  "disk",
					  rt->prm->timeout_ms);
		if (!err)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return err < 0 ? err : 0;
}

/* The shard laid out as its file, by memcpy: the only part of writing it
 * the server waits for. */
static void copy_shard(struct frr_rt *rt, int ac)
{
	struct frr_ckpt_hdr h = { .kind = 1,
				  .index = rt->rank,
				  .clock = ac,
				  .ntables = rt->tb->ntables };
	uint8_t *o = rt->js->ck->shard;

	memcpy(h.magic, FRR_CKPT_MAGIC, 8);
	memcpy(o, &h, sizeof(h));
	o += sizeof(h);
	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t n = rt->tb->shard_rows[t * rt->P + rt->rank];
		struct frr_ckpt_table th = { n, rt->tb->spec[t].cols,
					     rt->tb->accum[t] != NULL };
		size_t len = n * th.cols * sizeof(float);

		memcpy(o, &th, sizeof(th));
		o += sizeof(th);
		memcpy(o, rt->tb->master[t], len);
		o += len;
		if (th.accum) {
			memcpy(o, rt->tb->accum[t], len);
			o += len;
		}
	}
}

int frr_rt_ckpt_shard(struct frr_rt *rt, int c)
{
	struct frr_ckpt *k = rt->js->ck;
	struct frr_ckpt_cut *cut;
	int ac = frr_rt_app_clock(rt, c), err;
	double t0;

	if (!ck_due(rt, c))
		return 0;
	err = wait_writer(rt);
	if (err)
		return err;
	t0 = frr_rt_clock_now();
	/* each worker copied its item states before its batch of c left,
	 * or copies them later (items_done_late: the writer waits) */
	for (int t = 0; t < rt->T && !rt->ws->items_done_late; t++)
		if (rt->ws->parts[rt->rank * rt->T + t].state &&
		    atomic_load_explicit(&k->snap_clock[t],
					 memory_order_acquire) != c + 1)
			return frr_rt_fail(rt, -EPROTO,
					   "checkpoint of clock %d: worker "
					   "%d's item state copy is missing",
					   ac, rt->rank * rt->T + t);
	copy_shard(rt, ac);
	k->cut = c + 1;
	cut = &k->cuts[k->ncut % 2];
	*cut = (struct frr_ckpt_cut){ .c = c };
	cut->held_s = k->hold_t0 ? t0 - k->hold_t0 : 0;
	cut->pause_s = frr_rt_clock_now() - t0 + cut->held_s;
	frr_dbg("checkpoint of clock %d: copied %zu bytes of the shard in "
		"%.4f s, after holding the cut %.4f s",
		ac, k->shard_len, cut->pause_s - cut->held_s, cut->held_s);
	k->hold_t0 = 0;
	err = frr_ckpt_post(rt, &(struct frr_ckpt_task){ .kind = FRR_CKPT_FILES,
							 .c = c,
							 .ac = ac,
							 .seq = k->ncut++ });
	return err ? frr_rt_fail(rt, err,
				 "checkpoint of clock %d: the writer's queue "
				 "is full",
				 ac)
		   : 0;
}

/* The app's state of the cut, into memory (the writer writes it). */
static int app_capture(struct frr_rt *rt, int ac, void **buf, size_t *len)
{
	char *b = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&b, &n);
	int err;

	if (!f)
		return -errno;
	err = rt->app->checkpoint_save(rt->app_state, f, ac);
	if (err)
		frr_err("app %s: checkpoint_save(clock %d) failed (%d)",
			rt->app->name, ac, err);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = n;
	return 0;
}

int frr_rt_ckpt_app(struct frr_rt *rt, int c)
{
	struct frr_ckpt *k = rt->js->ck;
	struct frr_ckpt_task t = { .kind = FRR_CKPT_APP, .c = c };
	double t0 = frr_rt_clock_now();
	int err;

	/* rank 0's state is complete after clock_global: commit takes it */
	if (rt->rank == 0 || !ck_due(rt, c) || !k->app_state)
		return 0;
	t.ac = frr_rt_app_clock(rt, c);
	t.seq = k->ncut - 1; /* the cut of c: the next waits for this task */
	err = app_capture(rt, t.ac, &t.app, &t.app_len);
	if (!err && (err = frr_ckpt_post(rt, &t)))
		free(t.app);
	k->cuts[t.seq % 2].pause_s += frr_rt_clock_now() - t0;
	return err ? frr_rt_fail(rt, err,
				 "checkpoint of clock %d: rank %d's app "
				 "state failed (%d)",
				 t.ac, rt->rank, err)
		   : 0;
}

/* ---- rank 0: the commit -------------------------------------------------- */
/* Time-based: a clock far enough ahead that no worker has reached it (as
 * for --target's stop clock, docs/runtime.md "Failures"), written before
 * rank 0's next done word. */
static int plan(struct frr_rt *rt, int c)
{
	struct frr_ckpt *k = rt->js->ck;
	double now = frr_rt_clock_now();
	int at = c + rt->eff_slack + 2;

	if (k->every || (k->planned && k->planned > c) ||
	    now - k->last_t < k->every_s || at >= frr_rt_cur_end(rt))
		return 0;
	k->planned = at + 1;
	k->last_t = now;
	return frr_rt_ctl_broadcast(rt, rt->off_stop + 8, (uint64_t)at + 1);
}

/* Clock c processed for the whole job: rank 0's app state is that of the
 * cut; the manifest follows once every rank's files are on disk. */
int frr_rt_ckpt_commit(struct frr_rt *rt, int c)
{
	struct frr_ckpt *k = rt->js->ck;
	struct frr_ckpt_cut *cut;
	double t0 = frr_rt_clock_now();
	int err, i;

	if (!k || rt->rank != 0)
		return 0;
	if (ck_due(rt, c)) {
		/* its cut is the oldest not yet wanted: clocks come in order */
		for (i = k->chead; i < k->ncut && k->cuts[i % 2].wanted; i++)
			;
		cut = &k->cuts[i % 2];
		if (i == k->ncut || cut->c != c)
			return frr_rt_fail(rt, -EPROTO,
					   "checkpoint of clock %d: rank 0 "
					   "took no cut of it",
					   frr_rt_app_clock(rt, c));
		if (k->app_state) {
			err = app_capture(rt, frr_rt_app_clock(rt, c),
					  &cut->app, &cut->app_len);
			if (err)
				return frr_rt_fail(
				    rt, err,
				    "checkpoint of clock %d: rank 0's app "
				    "state failed (%d)",
				    frr_rt_app_clock(rt, c), err);
		}
		/* now: the ring moves on with the clocks */
		frr_ckpt_glob_take(rt, frr_rt_app_clock(rt, c), &cut->glob);
		cut->wanted = 1;
		cut->pause_s += frr_rt_clock_now() - t0;
	}
	return plan(rt, c);
}

static void commit_done(struct frr_rt *rt, struct frr_ckpt_cut *cut)
{
	struct frr_ckpt *k = rt->js->ck;
	int ac = frr_rt_app_clock(rt, cut->c);

	k->count++;
	k->pause_sum += cut->pause_s;
	if (cut->pause_s > k->pause_max)
		k->pause_max = cut->pause_s;
	if (!rt->prm->quiet)
		fprintf(stderr,
			"flexrr: checkpoint of clock %d in %s/ckpt-%d: rank 0 "
			"wrote %.1f MiB in %.4f s (files), paused %.4f s "
			"(of which %.4f s holding the cut until the last "
			"checkpoint was written; the files, the manifest "
			"and removing the previous one took %.4f s in the "
			"background)\n",
			ac, rt->prm->ckpt_dir, ac,
			(double)cut->bytes / (1 << 20), cut->write_s,
			cut->pause_s, cut->held_s,
			cut->write_s + cut->commit_s);
	k->chead++;
}

/* The oldest cut's commit: 1 if it moved on, 0 if it waits, < 0 the
 * job's error. */
static int commit_step(struct frr_rt *rt, int committed)
{
	struct frr_ckpt *k = rt->js->ck;
	struct frr_ckpt_cut *cut = &k->cuts[k->chead % 2];
	struct frr_ckpt_task t = { .kind = FRR_CKPT_COMMIT };
	int err;

	if (k->chead == k->ncut || !cut->wanted)
		return 0;
	if (cut->posted) {
		if (committed < cut->c + 1)
			return 0;
		commit_done(rt, cut);
		return 1;
	}
	for (int r = 0; r < rt->P; r++)
		if (frr_tp_load_u64(ctl_u64(rt, frr_ckpt_durable_off(rt, r))) <
		    (uint64_t)cut->c + 1)
			return 0;
	t.c = cut->c;
	t.ac = frr_rt_app_clock(rt, t.c);
	t.seq = k->chead;
	frr_ckpt_id_of(rt, &t.id);
	t.id.clock = t.ac;
	t.id.glob = cut->glob;
	t.app = cut->app;
	t.app_len = cut->app_len;
	cut->app = NULL;
	err = frr_ckpt_post(rt, &t);
	if (err) {
		free(t.app);
		return frr_rt_fail(rt, err,
				   "checkpoint of clock %d: the writer's "
				   "queue is full",
				   t.ac);
	}
	cut->posted = 1;
	return 1;
}

int frr_rt_ckpt_poll(struct frr_rt *rt)
{
	struct frr_ckpt *k = rt->js->ck;
	int err, err_ac, durable, committed, busy = 0;

	if (!k)
		return 0;
	pthread_mutex_lock(&k->w.lock);
	err = k->w.err;
	err_ac = k->w.err_ac;
	durable = k->w.durable;
	committed = k->w.committed;
	pthread_mutex_unlock(&k->w.lock);
	if (err)
		return frr_rt_fail(rt, err,
				   "checkpoint of clock %d failed (%d); see "
				   "above; the previous one stays the newest",
				   err_ac, err);
	if (durable > k->sent) {
		/* rank 0 reads every rank's word before its manifest */
		k->sent = durable;
		err = frr_rt_ctl_broadcast(
		    rt, frr_ckpt_durable_off(rt, rt->rank), (uint64_t)durable);
		if (err)
			return err;
		busy = 1;
	}
	if (rt->rank == 0 && (err = commit_step(rt, committed)) != 0)
		return err;
	return busy;
}

int frr_rt_ckpt_idle(struct frr_rt *rt)
{
	struct frr_ckpt *k = rt->js->ck;
	int busy;

	if (!k)
		return 1;
	pthread_mutex_lock(&k->w.lock);
	busy = k->w.n || k->w.running || k->w.durable != k->sent;
	pthread_mutex_unlock(&k->w.lock);
	/* rank 0: and every cut committed */
	return !busy && (rt->rank != 0 || k->chead == k->ncut);
}
