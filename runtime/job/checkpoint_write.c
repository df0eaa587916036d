// SPDX-License-Identifier: MIT
/*
 * The checkpoint writer (docs/runtime.md "Checkpoints"): one thread per
 * rank that writes, fsyncs and renames the files of a cut the server has
 * copied (job/checkpoint.c), so the server goes on applying, serving rows
 * and beating while the disk works.  Its tasks, in the order posted:
 * FILES (this rank's item state copies and shard), APP (a rank's app
 * state, other than rank 0's), COMMIT (rank 0, once every rank's files of
 * the cut are on disk: its app state, the manifest, DIR/latest, then the
 * older checkpoints removed).  It touches only the checkpoint's own
 * buffers and the file system, never the live rows.  Every file goes
 * through frr_file_write_atomic.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "flexrr/file.h"
#include "flexrr/log.h"

struct blob {
	const void *a, *b; /* a header (or NULL), then the bytes */
	size_t alen, blen;
};

static int fill_blob(FILE *f, void *arg)
{
	const struct blob *b = arg;

	/* one big fwrite goes straight to write(2): no copy through stdio */
	if (b->alen)
		fwrite(b->a, 1, b->alen, f);
	if (b->blen)
		fwrite(b->b, 1, b->blen, f);
	return ferror(f) ? -EIO : 0;
}

/* A rank the others carried on without (stopped, then continued) writes
 * nothing more into DIR: its cut is of an epoch that is over, and the new
 * epoch's checkpoints and DIR/latest are not its to replace or remove
 * (launch/recover.c). */
static int epoch_over(const struct frr_rt *rt)
{
	const struct frr_rt_watch *w = rt->prm->watch;

	return w && w->current && !w->current(w->arg);
}

/* 0, or -ESTALE said, when the epoch is over. */
static int ck_fenced(const struct frr_rt *rt, int ac, const char *what)
{
	if (!epoch_over(rt))
		return 0;
	frr_err("checkpoint: not writing %s of clock %d: a rank was lost and "
		"this epoch of the job is over (the ranks carried on from the "
		"newest complete checkpoint in %s, which are theirs now)",
		what, ac, rt->prm->ckpt_dir);
	return -ESTALE;
}

/* FLEXRR_TEST_CKPT_KILL=C:file:stop: the first rank to write a file of C
 * stops past its epoch check; continued, it writes that file garbled after
 * its header (as a fenced rank's late file of another cut would differ
 * under SSP, but such that reading it cannot pass unseen).  NULL: as is. */
static void *test_late_file(const struct frr_rt *rt, int ac,
			    const struct blob *b, struct blob *out)
{
	const struct frr_ckpt *k = rt->js->ck;
	char p[4096];
	size_t keep = b->alen ? 0 : sizeof(struct frr_ckpt_hdr);
	uint8_t *g;

	if (!k->kill_file || k->kill_clock != ac || b->blen <= keep)
		return NULL;
	snprintf(p, sizeof(p), "%s/.test-ckpt-file", rt->prm->ckpt_dir);
	if (frr_file_claim(p) != 1)
		return NULL;
	raise(SIGSTOP);
	g = malloc(b->blen);
	if (!g)
		return NULL;
	memcpy(g, b->b, b->blen);
	for (size_t i = keep; i < b->blen; i++)
		g[i] ^= 0x5a;
	*out = (struct blob){ b->a, g, b->alen, b->blen };
	return g;
}

static int ck_write(struct frr_rt *rt, const struct frr_ckpt_task *t,
		    const char *name, const struct blob *b)
{
	char p[4096];
	struct blob late;
	void *g = NULL;
	int err = frr_ckpt_path(p, sizeof(p), rt->prm->ckpt_dir, t->ac, name);

	if (!err)
		err = ck_fenced(rt, t->ac, name);
	if (!err && (g = test_late_file(rt, t->ac, b, &late)))
		b = &late;
	if (!err)
		err = frr_file_write_atomic(p, "--checkpoint", fill_blob,
					    (void *)b);
	free(g);
	if (!err)
		rt->js->ck->cuts[t->seq % 2].bytes += b->alen + b->blen;
	return err;
}

/* DIR/ckpt-ac: made here or by another rank of this job, never a link or
 * another user's directory planted in a shared DIR. */
static int ck_subdir(struct frr_rt *rt, int ac)
{
	char p[4096];
	struct stat st;
	int err = frr_ckpt_path(p, sizeof(p), rt->prm->ckpt_dir, ac, NULL);

	if (err)
		return err;
	if (mkdir(p, 0777) && errno != EEXIST) {
		err = -errno;
		frr_err("checkpoint: cannot create directory %s: %s", p,
			strerror(-err));
		return err;
	}
	if (lstat(p, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		frr_err("checkpoint: %s is not a directory of this user (a "
			"link, a file or someone else's)",
			p);
		return -EPERM;
	}
	return 0;
}

/* lb-bsp: worker i copies its item states of the cut once every shard
 * applied its clock (items_done_late), after the server's copy of the
 * shard: wait for it. */
static int snap_ready(struct frr_rt *rt, int i, const struct frr_ckpt_task *t)
{
	const struct frr_ckpt *k = rt->js->ck;
	int ms = rt->prm->timeout_ms > 0 ? rt->prm->timeout_ms : 60000;
	double t0 = frr_rt_clock_now();

	while (atomic_load_explicit(&k->snap_clock[i], memory_order_acquire) !=
	       t->c + 1) {
		if (frr_rt_failed(rt))
			return frr_rt_failed(rt);
		if ((frr_rt_clock_now() - t0) * 1000 >= ms) {
			frr_err("checkpoint of clock %d: worker %d did not "
				"copy its item states within %d ms (the "
				"--timeout) of its shard's copy; raise "
				"--timeout if clocks take that long",
				t->ac, rt->rank * rt->T + i, ms);
			return -ETIMEDOUT;
		}
		frr_nap_us(100);
	}
	return 0;
}

/* This rank's item state copies of the cut (each freed for its worker's
 * next cut once written), then its shard. */
static int run_files(struct frr_rt *rt, const struct frr_ckpt_task *t)
{
	struct frr_ckpt *k = rt->js->ck;
	struct frr_ckpt_hdr h = { .clock = t->ac, .kind = 2 };
	char name[64];
	int err = ck_subdir(rt, t->ac);

	memcpy(h.magic, FRR_CKPT_MAGIC, 8);
	for (int i = 0; i < rt->T && !err; i++) {
		int v = rt->rank * rt->T + i;
		const struct frr_part *pt = &rt->ws->parts[v];
		struct blob b = { &h, k->snap[i], sizeof(h), 0 };

		if (!pt->state)
			continue;
		if (rt->ws->items_done_late && (err = snap_ready(rt, i, t)))
			break;
		h.index = v;
		h.bytes = b.blen = pt->state_off[pt->n];
		frr_ckpt_name(name, sizeof(name), "state", v, rt->prm->epoch);
		err = ck_write(rt, t, name, &b);
		atomic_store_explicit(&k->snap_clock[i], 0,
				      memory_order_release);
	}
	frr_ckpt_name(name, sizeof(name), "shard", rt->rank, rt->prm->epoch);
	return err ? err
		   : ck_write(
			 rt, t, name,
			 &(struct blob){ NULL, k->shard, 0, k->shard_len });
}

static int run_app(struct frr_rt *rt, const struct frr_ckpt_task *t)
{
	char name[64];

	frr_ckpt_name(name, sizeof(name), "app", rt->rank, rt->prm->epoch);
	return ck_write(rt, t, name,
			&(struct blob){ NULL, t->app, 0, t->app_len });
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
	/* the app's globals, exactly (hex floats) */
	if (id->glob.nglob)
		fprintf(f, "globals %d %d\n", id->glob.nglob, id->glob.n);
	for (int i = 0; id->glob.nglob && i < id->glob.n; i++) {
		fprintf(f, "g %d", id->glob.ac[i]);
		for (int j = 0; j < id->glob.nglob; j++)
			fprintf(f, " %a", id->glob.v[i][j]);
		fprintf(f, "\n");
	}
	/* whose files (frr_ckpt_name): absent in epoch 0 */
	if (id->epoch)
		fprintf(f, "epoch %u\n", id->epoch);
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

		frr_ckpt_name(name, sizeof(name), "shard", r, rt->prm->epoch);
		err = frr_ckpt_path(p, sizeof(p), rt->prm->ckpt_dir, ac, name);
		if (err)
			return err;
		if (stat(p, &st)) {
			frr_err("checkpoint of clock %d: rank 0 cannot see "
				"rank %d's %s: --checkpoint %s must be a "
				"directory every rank shares",
				ac, r, p, rt->prm->ckpt_dir);
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

	if (frr_ckpt_path(p, sizeof(p), rt->prm->ckpt_dir, ac, NULL))
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
	DIR *d = opendir(rt->prm->ckpt_dir);
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

static void test_kill(const struct frr_rt *rt, int ac, int before_manifest)
{
	const struct frr_ckpt *k = rt->js->ck;
	char p[4096];

	if (k->kill_file || k->kill_clock != ac ||
	    k->kill_before_manifest != before_manifest)
		return;
	if (!k->kill_self)
		kill(0, SIGKILL); /* the test runs the job in its own group */
	/* once: the recovered job writes this one again; a stopped one,
	 * continued, must be fenced */
	snprintf(p, sizeof(p), "%s/%s", rt->prm->ckpt_dir,
		 k->kill_stop ? ".test-ckpt-stop" : ".test-ckpt-kill");
	/* raise (tgkill): this thread goes no further, as kill(getpid())
	 * could let it write on for a moment */
	if (frr_file_claim(p) == 1)
		raise(k->kill_stop ? SIGSTOP : SIGKILL);
}

static int run_commit(struct frr_rt *rt, const struct frr_ckpt_task *t)
{
	char p[4096];
	int err = t->app ? run_app(rt, t) : 0;

	if (!err)
		err = check_shards(rt, t->ac);
	test_kill(rt, t->ac, 1);
	if (!err)
		err = frr_ckpt_path(p, sizeof(p), rt->prm->ckpt_dir, t->ac,
				    "MANIFEST");
	if (!err)
		err = ck_fenced(rt, t->ac, "its MANIFEST");
	if (!err)
		err = frr_file_write_atomic(p, "--checkpoint", fill_manifest,
					    (void *)&t->id);
	if (!err && snprintf(p, sizeof(p), "%s/latest", rt->prm->ckpt_dir) >=
			(int)sizeof(p))
		err = -ENAMETOOLONG;
	if (!err)
		err = ck_fenced(rt, t->ac, "DIR/latest");
	if (!err)
		err = frr_file_write_atomic(p, "--checkpoint", fill_latest,
					    (void *)&t->ac);
	if (err)
		return err;
	test_kill(rt, t->ac, 0);
	/* the older ones may be the next epoch's to resume from */
	if (!epoch_over(rt))
		remove_others(rt, t->ac);
	return 0;
}

/* ---- the thread ---------------------------------------------------------- */
static int run_task(struct frr_rt *rt, const struct frr_ckpt_task *t)
{
	double t0 = frr_rt_clock_now();
	/* the server reads it only once the task is done (under the lock) */
	struct frr_ckpt_cut *cut = &rt->js->ck->cuts[t->seq % 2];
	int err;

	if (t->kind == FRR_CKPT_FILES)
		cut->bytes = 0;
	err = t->kind == FRR_CKPT_FILES ? run_files(rt, t)
	      : t->kind == FRR_CKPT_APP ? run_app(rt, t)
					: run_commit(rt, t);
	if (t->kind == FRR_CKPT_COMMIT)
		cut->commit_s = frr_rt_clock_now() - t0;
	else if (t->kind == FRR_CKPT_FILES)
		cut->write_s = frr_rt_clock_now() - t0;
	else
		cut->write_s += frr_rt_clock_now() - t0;
	return err;
}

/* What a finished task makes true, under the lock. */
static void task_done(struct frr_ckpt *k, const struct frr_ckpt_task *t,
		      int rank, int err)
{
	struct frr_ckpt_writer *w = &k->w;

	if (err) {
		if (!w->err) {
			w->err = err;
			w->err_ac = t->ac;
		}
		return;
	}
	/* a rank's files are all on disk after its app state (rank 0's
	 * goes with the manifest) */
	if (t->kind == FRR_CKPT_APP ||
	    (t->kind == FRR_CKPT_FILES && (rank == 0 || !k->app_state)))
		w->durable = t->c + 1;
	if (t->kind == FRR_CKPT_COMMIT)
		w->committed = t->c + 1;
}

static void *writer_main(void *arg)
{
	struct frr_rt *rt = arg;
	struct frr_ckpt_writer *w = &rt->js->ck->w;

	frr_log_thread_start(rt->rank, "ckpt");
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		struct frr_ckpt_task t;
		int err;

		if (!w->n) {
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		t = w->q[w->head];
		w->running = 1;
		pthread_mutex_unlock(&w->lock);
		/* after a failure nothing more is written: the job ends */
		err = w->err ? 0 : run_task(rt, &t);
		free(t.app);
		pthread_mutex_lock(&w->lock);
		w->head = (w->head + 1) % FRR_CKPT_QUEUE;
		w->n--;
		w->running = 0;
		task_done(rt->js->ck, &t, rt->rank, err);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int frr_ckpt_writer_start(struct frr_rt *rt)
{
	struct frr_ckpt_writer *w = &rt->js->ck->w;
	int err;

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	err = pthread_create(&w->thread, NULL, writer_main, rt);
	if (err) {
		frr_err("checkpoint: cannot start the writer thread: %s",
			strerror(err));
		return -err;
	}
	w->started = 1;
	return 0;
}

/* A task being written finishes (its files are complete or absent);
 * queued ones are dropped: the job is over. */
void frr_ckpt_writer_stop(struct frr_rt *rt)
{
	struct frr_ckpt_writer *w = &rt->js->ck->w;

	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	for (int i = 0; i < w->n; i++)
		free(w->q[(w->head + i) % FRR_CKPT_QUEUE].app);
	w->n = 0;
	w->started = 0;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

int frr_ckpt_post(struct frr_rt *rt, const struct frr_ckpt_task *t)
{
	struct frr_ckpt_writer *w = &rt->js->ck->w;
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (w->n < FRR_CKPT_QUEUE) {
		w->q[(w->head + w->n) % FRR_CKPT_QUEUE] = *t;
		w->n++;
		pthread_cond_signal(&w->cond);
	} else {
		err = -EOVERFLOW; /* a bug: the server holds the next cut */
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}
