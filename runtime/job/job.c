// SPDX-License-Identifier: MIT
/*
 * One rank's job: set-up (app, tables, partitions, regions, descriptor
 * exchange), the run (workers + the server loop, job/server.c) and
 * teardown.  Returns 0 or a negative errno; never exits the process: a
 * failure anywhere (core/fail.c) stops every thread of the rank, frees
 * what was set up and returns the error.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "flexrr/log.h"
#include "job.h"
#include "stats.h"

/* This rank's workers' partitions; every worker needs work. */
static int parts_load_own(struct frr_rt *rt)
{
	for (int t = 0; t < rt->T; t++) {
		int w = rt->rank * rt->T + t, err = frr_rt_part_load(rt, w);

		if (err)
			return err;
		if (rt->ws->parts[w].n == 0) {
			frr_err("worker %d has no work items (%d workers in "
				"all): use fewer processes or threads (-n, "
				"-t) or more data",
				w, rt->W);
			return -EINVAL;
		}
	}
	return 0;
}

static void test_forge_init(struct frr_rt *rt, const char *e)
{
	rt->test_forge_stats = rt->test_forge_batch = -1;
	rt->test_forge_lane = rt->test_forge_lane_connect = -1;
	if (e && !strncmp(e, "stats:", 6))
		rt->test_forge_stats = atoi(e + 6);
	else if (e && !strncmp(e, "batch:", 6))
		rt->test_forge_batch = atoi(e + 6);
	else if (e && !strncmp(e, "lane:", 5))
		rt->test_forge_lane = atoi(e + 5);
	else if (e && !strncmp(e, "lane-connect:", 13))
		rt->test_forge_lane_connect = atoi(e + 13);
}

/* A rank's memory: the core and each floor's state, one allocation. */
struct frr_rank {
	struct frr_rt rt;
	struct frr_rt_params prm;
	struct frr_tables tb;
	struct frr_workers ws;
	struct frr_evals ev;
	struct frr_jobstate js;
};

/* rr (additive) records a failure before any worker can see it, so each
 * names its helpers as it unwinds (core/fail.c). */
static void rr_failed(struct frr_rt *rt, int rank, const char *what)
{
	if (rt->ws->rr_state)
		rt->ws->rr->peer_dead(rt, rt->ws->rr_state, rank, what);
}

static void test_die_init(struct frr_rt *rt, const char *e)
{
	char *save = NULL, *s;

	rt->test_die_n = 0;
	atomic_init(&rt->test_hung, 0);
	/* 0: hang (the worker sleeps, the server stops beating) */
	rt->test_die_sig = getenv("FLEXRR_TEST_DIE_HANG")   ? 0
			   : getenv("FLEXRR_TEST_DIE_STOP") ? SIGSTOP
							    : SIGKILL;
	if (!e || strlen(e) >= sizeof(rt->test_die_buf))
		return;
	strcpy(rt->test_die_buf, e);
	for (s = strtok_r(rt->test_die_buf, ",", &save);
	     s && rt->test_die_n <
		      (int)(sizeof(rt->test_die) / sizeof(rt->test_die[0]));
	     s = strtok_r(NULL, ",", &save)) {
		char *c = strchr(s, ':'), *f = c ? strchr(c + 1, ':') : NULL;

		if (!f || !f[1])
			continue;
		rt->test_die[rt->test_die_n++] = (struct frr_test_die){
			.rank = atoi(s), .clock = atoi(c + 1), .file = f + 1
		};
	}
}

static void rt_setup_shape(struct frr_rt *rt, struct frr_oob *oob,
			   const struct frr_rt_params *o)
{
	rt->prm = o;
	rt->oob = oob;
	rt->app = o->app;
	rt->rank = oob->rank;
	rt->P = oob->size;
	rt->T = o->threads;
	rt->W = rt->P * rt->T;
	rt->t0 = frr_rt_clock_now();
	rt->job = (struct frr_job_info){
		.nparts = rt->W,
		.leader = rt->rank == 0,
		.seed = o->seed,
	};
	rt->shape = (struct frr_rt_shape){
		.rank = rt->rank,
		.nranks = rt->P,
		.threads = rt->T,
		.nworkers = rt->W,
		.slack = o->slack,
		.seed = o->seed,
	};
	/* data-path flushes: a live peer answers in ms; a dead one must not
	 * hold the transport lock for long (see frr_rt_peer_fail) */
	rt->flush_ms = o->dead_ms / 3 > 200 ? o->dead_ms / 3 : 200;
	rt->eff_slack =
	    o->mode == FRR_MODE_ASYNC ? FRR_RT_ASYNC_WINDOW : o->slack;
	rt->job.slack = rt->eff_slack;		   /* the bound reads do hold */
	rt->eager = o->eager && rt->eff_slack > 0; /* checked at launch */
	atomic_init(&rt->end_clock, o->clocks);
	atomic_init(&rt->failed, 0);
	/* tests prove the staleness checker can fail by breaking SSP */
	rt->test_break_ssp = getenv("FLEXRR_TEST_BREAK_SSP") != NULL;
	test_forge_init(rt, getenv("FLEXRR_TEST_FORGE"));
	test_die_init(rt, getenv("FLEXRR_TEST_DIE"));
	if (o->mode == FRR_MODE_FLEXRR || o->mode == FRR_MODE_RR) {
		rt->ws->rr = &frr_rr_ops;
		rt->rr_reassign = 1;
		rt->on_fail = rr_failed;
	}
	/* the job's steps the floors below call back into */
	rt->ws->clock_items_done = frr_rt_ckpt_snap;
	rt->ev->clock_evaluated = frr_rt_ckpt_app;
	/* 1 <= backups < W: checked at launch and in rt_init */
	if (o->mode == FRR_MODE_BACKUP)
		rt->backups =
		    o->backups > 0 ? o->backups : frr_backups_default(rt->W);
	/* lb-bsp runs the helpers' ranges through rr's seam (help caches,
	 * replicas, run_range) with its own plan instead of rr's protocol */
	if (o->mode == FRR_MODE_LB_BSP) {
		rt->ws->rr = &frr_lb_ops;
		rt->rr_reassign = 1;
		rt->lb_history =
		    o->lb_history > 0 ? o->lb_history : FRR_LB_HISTORY_DEFAULT;
	}
}

static int rt_alloc(struct frr_rt *rt)
{
	pthread_mutexattr_t ma;

	/* recursive: a failure path may re-take it to send a notice */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rt->tp_lock, &ma);
	pthread_mutexattr_destroy(&ma);
	rt->ws->parts = calloc((size_t)rt->W, sizeof(*rt->ws->parts));
	rt->ws->nitems = calloc((size_t)rt->W, sizeof(uint64_t));
	rt->ws->wk = calloc((size_t)rt->T, sizeof(*rt->ws->wk));
	rt->js->hb_last = calloc((size_t)rt->P, sizeof(uint64_t));
	rt->js->hb_seen = calloc((size_t)rt->P, sizeof(double));
	rt->ev->stats_copy = calloc(frr_stats_len(rt->T), sizeof(double));
	rt->prog_subs = calloc((size_t)rt->T * rt->P, sizeof(int));
	rt->prog_nsubs = calloc((size_t)rt->T, sizeof(int));
	rt->prog_read = calloc((size_t)rt->W, 1);
	if (rt->lb_history) {
		rt->lb_item =
		    calloc((size_t)rt->W * FRR_LB_RING, sizeof(*rt->lb_item));
		if (!rt->lb_item)
			return -ENOMEM;
	}
	if (!rt->ws->parts || !rt->ws->nitems || !rt->ws->wk ||
	    !rt->js->hb_last || !rt->js->hb_seen || !rt->ev->stats_copy ||
	    !rt->prog_subs || !rt->prog_nsubs || !rt->prog_read)
		return -ENOMEM;
	return 0;
}

static int rt_init(struct frr_rt *rt, struct frr_oob *oob,
		   const struct frr_rt_params *o)
{
	struct frr_loading loading;
	uint64_t mx = 0;
	int err;

	rt_setup_shape(rt, oob, o);
	frr_log_set_rank(rt->rank);
	if (o->delay_worker >= rt->W) {
		frr_err("--delay-worker %d: the job has %d workers (0..%d); "
			"pick one of them, or -1 for a different one each time",
			o->delay_worker, rt->W, rt->W - 1);
		return -EINVAL;
	}
	/* checked at launch, but a PMIx job learns its size only here */
	if (rt->backups >= rt->W) {
		frr_err("--mode backup with %d backups: the job has %d "
			"workers, and a clock must wait for one at least; give "
			"--backups %d or fewer, or more workers",
			rt->backups, rt->W, rt->W - 1);
		return -EINVAL;
	}
	err = rt_alloc(rt);
	frr_rt_loading_begin(rt, &loading);
	if (!err)
		err = frr_rt_app_create(rt);
	if (!err)
		err = frr_rt_globals_init(rt);
	if (!err)
		err = frr_rt_app_gather(rt);
	if (!err)
		err = frr_rt_tables_declare(rt);
	if (!err)
		err = parts_load_own(rt);
	if (!err)
		err = frr_inst_init(rt);
	if (!err && rt->ws->rr)
		err = rt->ws->rr->job_init(rt, &o->rr, &rt->ws->rr_state);
	frr_rt_loading_end(&loading);
	if (!err)
		err = frr_rt_layout(rt);
	if (!err)
		err = frr_rt_check_memory(rt);
	if (!err)
		err = frr_rt_hold_check(rt);
	if (!err)
		err = frr_rt_tp_setup(rt);
	/* same decision on every rank: it is collective */
	if (!err && rt->rr_reassign && rt->app->item_state_size)
		err = frr_rt_state_setup(rt);
	if (err)
		return err;
	/* the longest list sets the progress words' unit */
	for (int w = 0; w < rt->W; w++)
		if (rt->ws->nitems[w] > mx)
			mx = rt->ws->nitems[w];
	rt->prog_shift = frr_prog_shift(mx);
	rt->tb->consumed = calloc((size_t)rt->W, sizeof(uint64_t));
	rt->tb->lhand =
	    calloc((size_t)rt->T * rt->tb->K, sizeof(*rt->tb->lhand));
	rt->tb->scratch = calloc(3 * (size_t)rt->W, sizeof(int));
	rt->tb->eager_last = calloc((size_t)rt->W, 2 * sizeof(size_t));
	if (!rt->tb->consumed || !rt->tb->lhand || !rt->tb->scratch ||
	    !rt->tb->eager_last)
		return -ENOMEM;
	return frr_rt_tables_init(rt);
}

/* 0, or the error of writing an output at the end (trace, metrics) */
static int rt_fini(struct frr_rt *rt)
{
	int err, merr;

	if (rt->ws->rr && rt->ws->rr_state)
		rt->ws->rr->job_fini(rt, rt->ws->rr_state);
	err = frr_inst_fini(rt);
	frr_rt_workers_fini(rt);
	frr_rt_tp_teardown(rt);
	frr_rt_tables_fini(rt);
	frr_rt_ckpt_fini(rt);
	frr_rt_parts_fini(rt);
	if (rt->app_state)
		rt->app->destroy(rt->app_state);
	merr = frr_rt_metrics_close(rt); /* still open if the job failed */
	free(rt->ws->nitems);
	free(rt->ws->wk);
	free(rt->js->hb_last);
	free(rt->js->hb_seen);
	free(rt->ev->stats_copy);
	free(rt->prog_subs);
	free(rt->prog_nsubs);
	free(rt->prog_read);
	free(rt->lb_item);
	free(rt->tb->consumed);
	free(rt->tb->lhand);
	free(rt->tb->scratch);
	free(rt->tb->eager_last);
	free(rt->tb->shard_rows);
	free(rt->tb->repl_off);
	free(rt->tb->slot_bytes);
	free(rt->tb->rslot_bytes);
	pthread_mutex_destroy(&rt->tp_lock);
	return err ? err : merr;
}

/* Test hook: every last progress word this rank receives (its own
 * workers', and those rr reads here) says the worker finished the job's
 * last clock with its whole list done. */
static int check_final_progress(struct frr_rt *rt)
{
	int last = frr_rt_stop_clock(rt) - 1, bad = 0;

	for (int v = 0; v < rt->W; v++) {
		struct frr_progress p = frr_rt_progress(rt, v);

		if (v / rt->T != rt->rank && !rt->prog_read[v])
			continue; /* its word is not sent here */
		uint64_t n = rt->ws->nitems[v] >> rt->prog_shift;

		if (p.clock != last || p.done != n || p.total != n) {
			frr_err(
			    "progress of worker %d seen on rank %d: clock %d "
			    "done %llu of %llu; expected clock %d, %llu of "
			    "%llu",
			    v, rt->rank, p.clock, (unsigned long long)p.done,
			    (unsigned long long)p.total, last,
			    (unsigned long long)n, (unsigned long long)n);
			bad = 1;
		}
	}
	return bad ? -EPROTO : 0;
}

/* Initial rows in every replica, then everyone is ready. */
/*
 * A recovered job's start-up barrier: every rank says the highest app
 * clock its process had started when the previous run failed; the clocks
 * from the one resumed (clock_base) to the highest of those run again
 * (the interrupted one counted whole).
 */
static int rerun_agree(struct frr_rt *rt)
{
	int32_t mine = rt->prm->failed_clock, *all, top = -1;
	int err;

	all = calloc((size_t)rt->P, sizeof(*all));
	if (!all)
		return -ENOMEM;
	err = frr_rt_allgather(rt, "agreeing on the clock to re-run", &mine,
			       sizeof(mine), all);
	for (int r = 0; r < rt->P && !err; r++)
		if (all[r] > top && all[r] < rt->prm->clocks)
			top = all[r]; /* peer-sent: only a clock of the job */
	if (!err && top >= rt->clock_base)
		rt->ev->rerun_clocks = top - rt->clock_base + 1;
	rt->ev->failed_at = top;
	free(all);
	return err;
}

static int job_start(struct frr_rt *rt)
{
	int err = frr_rt_ckpt_init(rt);

	if (!err && rt->prm->load_path)
		err = frr_rt_app_load(rt);
	if (!err)
		err = frr_rt_resume(rt);
	for (int t = 0; t < rt->tb->ntables && !err; t++)
		err = frr_rt_push_rows(
		    rt, t, 0, rt->tb->shard_rows[t * rt->P + rt->rank]);
	/* bytes received count the clocks' traffic, not the start-up fill */
	memset(rt->tb->hold->sent_to, 0, (size_t)rt->P * sizeof(uint64_t));
	if (!err)
		err = frr_rt_flush_all(rt, rt->prm->timeout_ms);
	if (err)
		return err;
	return rt->prm->recovered ? rerun_agree(rt)
				  : frr_rt_barrier(rt, "the start-up barrier");
}

/*
 * After a failure, how long a worker gets to unwind before it is abandoned:
 * one that is not in app code returns within a flush (flush_ms); one stuck
 * in app code never may, and must not keep a failed job (--timeout) alive.
 */
static int abandon_ms(const struct frr_rt *rt)
{
	int ms = 3 * rt->flush_ms + 1000;

	return ms < rt->prm->timeout_ms ? ms : rt->prm->timeout_ms;
}

/* Join worker t; after a failure only until dl: 1 if it was abandoned. */
static int join_worker(struct frr_rt *rt, int t, const struct timespec *dl)
{
	struct frr_worker *wk = &rt->ws->wk[t];

	if (!wk->thread_ok)
		return 0;
	if (dl ? pthread_timedjoin_np(wk->thread, NULL, dl)
	       : pthread_join(wk->thread, NULL)) {
		pthread_detach(wk->thread);
		frr_err("rank %d: worker %d did not return within %d ms of "
			"the failure (stuck in app %s's code?): it is "
			"abandoned, still running; this process is no longer "
			"clean to reuse (exit it)",
			rt->rank, wk->dp.id, abandon_ms(rt), rt->app->name);
		return 1;
	}
	wk->thread_ok = 0;
	return 0;
}

/* After a stall (-ETIMEDOUT): each rank names the one worker behind all
 * others, the one the job waited for (a worker stuck in app code), when
 * there is one.  Progress words go only where rr reads them; every rank's
 * furthest-behind worker comes with its heartbeat (job/health.c). */
static void name_laggard(const struct frr_rt *rt)
{
	struct frr_progress lp = { 0 };
	int lag = -1, unique = 1;

	for (int r = 0; r < rt->P; r++) {
		struct frr_progress p;
		int v, tie;

		if (frr_rt_rank_laggard(rt, r, &v, &tie, &p))
			return;
		if (lag < 0 || p.clock < lp.clock ||
		    (p.clock == lp.clock && p.done < lp.done)) {
			lag = v;
			lp = p;
			unique = !tie;
		} else if (p.clock == lp.clock && p.done == lp.done) {
			unique = 0; /* a tie: nobody is the one behind */
		}
	}
	if (rt->W < 2 || !unique)
		return;
	if (lp.clock < 0)
		frr_err("worker %d (rank %d) is the one behind: it had not "
			"started its first clock; the job waited for it",
			lag, lag / rt->T);
	else
		frr_err("worker %d (rank %d) is the one behind: clock %d, "
			"%llu of %llu items done; the job waited for it",
			lag, lag / rt->T, lp.clock,
			(unsigned long long)(lp.done << rt->prog_shift),
			(unsigned long long)(lp.total << rt->prog_shift));
}

/* Workers and server.  The workers are joined, within a bound once the job
 * has failed: -ENOTRECOVERABLE if one had to be abandoned. */
static int job_clocks(struct frr_rt *rt)
{
	int err = frr_rt_workers_start(rt), abandoned = 0;
	struct timespec dl;

	if (!err)
		err = frr_rt_server_loop(rt);
	if (err && !frr_rt_failed(rt))
		frr_rt_fail(rt, err, "rank %d: the job failed (%d)", rt->rank,
			    err);
	if (frr_rt_failed(rt) == -ETIMEDOUT)
		name_laggard(rt);
	/* frr_deadline_ts: CLOCK_REALTIME, pthread_timedjoin_np's clock */
	dl = frr_deadline_ts(abandon_ms(rt));
	for (int t = 0; t < rt->T; t++)
		abandoned |= join_worker(rt, t, frr_rt_failed(rt) ? &dl : NULL);
	return abandoned ? -ENOTRECOVERABLE : frr_rt_failed(rt);
}

/* What every rank received per clock: the batch payload it drained, and
 * the rows the others pushed or sent it (from their counts: writes are
 * one-sided, the receiver cannot count them). */
static void print_received(const struct frr_rt *rt, const uint64_t *all,
			   size_t n)
{
	double per =
	    rt->tb->next_apply > 0 ? 1024.0 * rt->tb->next_apply : 1024.0;

	fprintf(stderr, "flexrr: received per rank per clock (KiB, update "
			"batches + rows):");
	for (int r = 0; r < rt->P && r < 16; r++) {
		uint64_t rows = 0;

		for (int o = 0; o < rt->P; o++)
			rows += all[(size_t)o * n + 2 + (size_t)r];
		fprintf(stderr, " %d=%.0f+%.0f", r,
			all[(size_t)r * n + 1] / per, rows / per);
	}
	fprintf(stderr, "%s\n", rt->P > 16 ? " ..." : "");
}

/* Every rank's peak resident memory (getrusage: the high-water mark of
 * the process, shared transport regions included) and what it received
 * to rank 0, which lists them per rank on stderr unless -q (the summary
 * line's format stays: its app metrics end it). */
static int peak_memory(struct frr_rt *rt)
{
	struct rusage ru;
	size_t n = 2 + (size_t)rt->P;
	uint64_t *mine = calloc(n, sizeof(uint64_t));
	uint64_t *all = calloc((size_t)rt->P * n, sizeof(uint64_t));
	int err = -ENOMEM;

	if (!all || !mine)
		goto out;
	if (!getrusage(RUSAGE_SELF, &ru))
		mine[0] = (uint64_t)ru.ru_maxrss; /* KiB */
	mine[1] = rt->tb->hold->batch_recv;
	memcpy(mine + 2, rt->tb->hold->sent_to,
	       (size_t)rt->P * sizeof(uint64_t));
	err = frr_rt_allgather(rt, "gathering the ranks' peak memory", mine,
			       n * sizeof(uint64_t), all);
	if (err)
		goto out;
	if (rt->rank == 0 && !rt->prm->quiet) {
		uint64_t sum = 0, peak = 0;

		fprintf(stderr, "flexrr: peak memory per rank (MiB):");
		for (int r = 0; r < rt->P; r++) {
			uint64_t kb = all[(size_t)r * n];

			sum += kb;
			peak = kb > peak ? kb : peak;
			if (r < 16)
				fprintf(stderr, " %d=%.0f", r, kb / 1024.0);
		}
		fprintf(stderr, "%s; max %.0f, sum %.0f\n",
			rt->P > 16 ? " ..." : "", peak / 1024.0, sum / 1024.0);
		if (rt->P > 1)
			print_received(rt, all, n);
	}
out:
	free(mine);
	free(all);
	return err;
}

/* The ranks' last collective, a barrier that carries whether each rank's
 * trace part is in place: rank 0 then merges the trace without waiting
 * for a part that will never come.  *oerr gets a write's error. */
static int last_collective(struct frr_rt *rt, int *oerr)
{
	int32_t st = rt->rank ? frr_inst_trace_write(rt, NULL) : 0;
	int32_t *all = calloc((size_t)rt->P, sizeof(*all));
	int err = -ENOMEM;

	if (all)
		err = frr_rt_allgather(rt, "the last barrier", &st, sizeof(st),
				       all);
	if (!err && rt->rank == 0)
		st = frr_inst_trace_write(rt, all);
	if (st && !*oerr)
		*oerr = st;
	free(all);
	return err;
}

static int job_finish(struct frr_rt *rt, double t_start)
{
	int err = peak_memory(rt), oerr = 0;

	if (err)
		return err;
	/* a failed output fails the run, but the other outputs are still
	 * written and the ranks still end together */
	if (rt->rank == 0) {
		oerr = frr_rt_app_save(rt);
		err = frr_rt_metrics_close(rt);
		if (!oerr)
			oerr = err;
		if (!oerr)
			frr_rt_print_summary(rt, frr_rt_clock_now() - t_start);
	}
	err = frr_rt_lanes_flush(rt, rt->prm->timeout_ms);
	if (!err)
		err = frr_rt_flush_all(rt, rt->prm->timeout_ms);
	if (!err)
		err = last_collective(rt, &oerr);
	/* every peer flushed before it: all final words are in */
	if (!err && getenv("FLEXRR_TEST_CHECK_PROGRESS"))
		err = check_final_progress(rt);
	return err ? err : oerr;
}

int frr_rt_job_run(struct frr_oob *oob, const struct frr_rt_params *o)
{
	/* on the heap: an abandoned worker may still use it after we return */
	struct frr_rank *rk = calloc(1, sizeof(*rk));
	struct frr_rt *rt = &rk->rt;
	double t_start;
	int err, ferr;

	if (!rk)
		return -ENOMEM;
	rk->prm = *o;
	rt->tb = &rk->tb;
	rt->ws = &rk->ws;
	rt->ev = &rk->ev;
	rt->js = &rk->js;
	err = rt_init(rt, oob, &rk->prm);
	if (!err)
		err = frr_rt_metrics_open(rt);
	if (!err)
		err = job_start(rt);
	if (err)
		goto out;
	t_start = frr_rt_clock_now();
	rt->ev->last_global_t = t_start;
	if (o->recover_t0 > 0)
		rt->ev->recovery_s = t_start - o->recover_t0;
	err = job_clocks(rt);
	/* an abandoned worker still runs in the rank's memory, tables and
	 * transport: leave them all to it, the process is to exit */
	if (err == -ENOTRECOVERABLE)
		return err;
	if (!err)
		err = job_finish(rt, t_start);
out:
	ferr = rt_fini(rt);
	free(rk);
	return err ? err : ferr;
}
