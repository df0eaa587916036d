// SPDX-License-Identifier: MIT
/*
 * Evaluation between clocks (server thread): the process context of
 * flexrr.h (clock_local, save, load), and this rank's per-clock stats and
 * metrics, sent to rank 0 (eval/metrics.c sums them).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "eval.h"
#include "worker.h"
#include "stats.h"

struct frr_eval_ctx {
	struct frr_rt *rt;
	double stats[FRR_MAX_STATS];
};

int frr_eval_row_read(struct frr_eval_ctx *ec, int table, uint64_t row,
		      float *out)
{
	struct frr_rt *rt = ec->rt;

	int err;

	if (table < 0 || table >= rt->tb->ntables ||
	    row >= rt->tb->spec[table].rows)
		return -EINVAL;
	/* on the server thread (clock_local) or the leader's main thread
	 * after the last clock (save: the leader holds every row then) */
	err = frr_rt_row_hold(rt, table, row, rt->T, -1);
	if (err < 0)
		return err;
	memcpy(out, frr_rt_replica_row(rt, table, row),
	       rt->tb->spec[table].cols * sizeof(float));
	return 0;
}

int frr_eval_row_write(struct frr_eval_ctx *ec, int table, uint64_t row,
		       const float *in)
{
	struct frr_rt *rt = ec->rt;
	uint32_t cols;

	if (table < 0 || table >= rt->tb->ntables ||
	    row >= rt->tb->spec[table].rows)
		return -EINVAL;
	/* every process writes every row; the row's shard keeps it */
	if (frr_rt_owner_rank(rt, table, row) != rt->rank)
		return 0;
	cols = rt->tb->spec[table].cols;
	memcpy(rt->tb->master[table] +
		   frr_rt_local_index(rt, table, row) * cols,
	       in, cols * sizeof(float));
	return 0;
}

void frr_eval_stat_add(struct frr_eval_ctx *ec, int idx, double v)
{
	if (idx >= 0 && idx < FRR_MAX_STATS)
		ec->stats[idx] += v;
}

const struct frr_job_info *frr_eval_job(const struct frr_eval_ctx *ec)
{
	return &ec->rt->job;
}

int frr_eval_nlocal(const struct frr_eval_ctx *ec)
{
	return ec->rt->T;
}

void *frr_eval_local(const struct frr_eval_ctx *ec, int i, int *part)
{
	const struct frr_rt *rt = ec->rt;
	int v = rt->rank * rt->T + i;

	if (i < 0 || i >= rt->T)
		return NULL;
	if (part)
		*part = v;
	return rt->ws->parts[v].data;
}

void frr_eval_share(const struct frr_eval_ctx *ec, uint64_t n, uint64_t *lo,
		    uint64_t *hi)
{
	const struct frr_rt *rt = ec->rt;
	unsigned __int128 p = (unsigned)rt->P, r = (unsigned)rt->rank;

	*lo = (uint64_t)(n * r / p);
	*hi = (uint64_t)(n * (r + 1) / p);
}

/* The per-thread metrics of clock c, in the stats record's layout. */
static void clock_metrics(struct frr_rt *rt, int c, double *stats, double *d)
{
	for (int t = 0; t < rt->T; t++) {
		struct frr_wclock *rc =
		    &rt->ws->wk[t].rec[c % FRR_RT_STAT_RING];
		double *m = d + FRR_MAX_STATS + t * FRR_RT_NMETRICS;

		for (int i = 0; i < FRR_MAX_STATS; i++)
			stats[i] += rc->stats[i];
		m[0] = rc->compute_s;
		m[1] = rc->wait_s;
		m[2] = rc->flush_s;
		m[3] = (double)rc->updates;
		m[4] = (double)rc->bytes;
		m[5] = (double)rc->stale_reads;
		m[6] = rc->min_data_clock == INT64_MAX
			   ? -1
			   : (double)rc->min_data_clock;
		for (int i = 0; i < FRR_RT_NRR; i++)
			m[7 + i] = rc->rr[i];
		m[7 + FRR_RT_NRR] = (double)rc->pulls;
		/* the rank's, once: after applying c its shard pushed these
		 * row bytes to the ranks holding them */
		m[8 + FRR_RT_NRR] =
		    t ? 0
		      : (double)rt->tb->hold->push_ring[c % FRR_RT_STAT_RING];
		m[9 + FRR_RT_NRR] =
		    t ? 0 : rt->tb->hold->apply_ring[c % FRR_RT_STAT_RING];
		m[FRR_M_DROPPED] = (double)rc->dropped;
	}
}

/* This rank's stats record of clock c into rank 0's slot for us. */
static int stats_send(struct frr_rt *rt, int c, uint8_t *stage)
{
	size_t dst = rt->off_stats + ((size_t)rt->rank * FRR_RT_STATS_SLOTS +
				      c % FRR_RT_STATS_SLOTS) *
					 rt->stats_rec;
	int err;

	if (rt->rank == 0) {
		memcpy(rt->ctlp + dst + 8, stage + 8, rt->stats_rec - 8);
		atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, dst),
				      (uint64_t)c + 1, memory_order_release);
		return 0;
	}
	pthread_mutex_lock(&rt->tp_lock);
	err = frr_tp_write(rt->eps[0], rt->ctl, (size_t)(stage - rt->ctlp),
			   rt->rctl[0], dst, rt->stats_rec, 0, 0);
	if (!err)
		err = frr_tp_write_u64(rt->eps[0], rt->rctl[0], dst,
				       (uint64_t)c + 1, 0, 0);
	/* the stage is reused next clock: flush before rewriting it */
	if (!err)
		err = frr_tp_flush(rt->eps[0], rt->flush_ms);
	pthread_mutex_unlock(&rt->tp_lock);
	return frr_rt_tp_check(rt, err, 0, "sending clock stats");
}

int frr_rt_eval_local(struct frr_rt *rt, int c)
{
	struct frr_eval_ctx ec = { .rt = rt };
	uint8_t *stage = rt->ctlp + rt->off_stats +
			 (size_t)rt->P * FRR_RT_STATS_SLOTS * rt->stats_rec;
	double *d = (double *)(stage + 8);
	int err;

	if (rt->app->clock_local) {
		err = rt->app->clock_local(rt->app_state, &ec,
					   frr_rt_app_clock(rt, c));
		if (err)
			return frr_rt_fail(rt, err,
					   "app %s: clock_local(clock %d) "
					   "failed (%d)",
					   rt->app->name,
					   frr_rt_app_clock(rt, c), err);
	}
	/* before the stats leave: rank 0 takes them as "files written"
	 * (the job's checkpoint of the app's state) */
	err = rt->ev->clock_evaluated ? rt->ev->clock_evaluated(rt, c) : 0;
	if (err)
		return err;
	clock_metrics(rt, c, ec.stats, d);
	memcpy(d, ec.stats, sizeof(ec.stats));
	if (rt->test_forge_stats == rt->rank && c == 1)
		d[FRR_MAX_STATS + FRR_M_WAIT_S] = NAN;
	*(uint64_t *)stage = 0;
	err = stats_send(rt, c, stage);
	if (err)
		return err;
	atomic_store_explicit(&rt->eval_done, c + 1, memory_order_release);
	return 0;
}

/* Every rank sets the rows it stores, before the initial push. */
int frr_rt_app_load(struct frr_rt *rt)
{
	struct frr_eval_ctx ec = { .rt = rt };
	const char *path = rt->prm->load_path;
	int err = rt->app->load ? rt->app->load(rt->app_state, &ec, path)
				: -EOPNOTSUPP;

	if (err)
		frr_err("app %s: loading the model from %s failed (%d)%s",
			rt->app->name, path, err,
			rt->app->load ? "" : ": the app cannot load");
	return err;
}

int frr_rt_app_save(struct frr_rt *rt)
{
	struct frr_eval_ctx ec = { .rt = rt };
	const char *path = rt->prm->save_path;
	int at = frr_rt_has_save_at(rt->app);
	/* the last clock run, counted as the app's callbacks saw it */
	int clock = frr_rt_app_clock(rt, frr_rt_stop_clock(rt) - 1);
	int err;

	if (!path || (!at && !rt->app->save))
		return 0;
	err = at ? rt->app->save_at(rt->app_state, &ec, path, clock)
		 : rt->app->save(rt->app_state, &ec, path);
	if (err)
		frr_err("app %s: saving the model to %s failed (%d)",
			rt->app->name, path, err);
	return err;
}
