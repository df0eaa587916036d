// SPDX-License-Identifier: MIT
/*
 * Rank 0's side of every clock: the ranks' stats summed, the app's
 * clock_global (objective and metrics), the progress line, the --target
 * check, the --metrics file; and the summary line at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/file.h"
#include "flexrr/log.h"
#include "eval.h"
#include "worker.h"
#include "stats.h"

static void write_metrics(struct frr_rt *rt, int c, int r, const double *d)
{
	if (!rt->ev->metrics_f)
		return;
	for (int t = 0; t < rt->T; t++) {
		const double *m = d + FRR_MAX_STATS + t * FRR_RT_NMETRICS;

		if (rt->ev->metrics_json) {
			fprintf(rt->ev->metrics_f,
				"{\"clock\":%d,\"worker\":%d,\"rank\":%d",
				frr_rt_app_clock(rt, c), r * rt->T + t, r);
			for (int i = 0; i < FRR_RT_NMETRICS; i++)
				fprintf(rt->ev->metrics_f, ",\"%s\":%.9g",
					frr_metric_name(i), m[i]);
			fprintf(rt->ev->metrics_f, "}\n");
			continue;
		}
		fprintf(rt->ev->metrics_f,
			"%d,%d,%d,%.6f,%.6f,%.6f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,"
			"%.0f,%.0f,%.0f,%.0f,%.6f,%.0f\n",
			frr_rt_app_clock(rt, c), r * rt->T + t, r, m[0], m[1],
			m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10],
			m[11], m[12], m[13], m[14]);
	}
}

static size_t stats_off(const struct frr_rt *rt, int r, int c)
{
	return rt->off_stats +
	       ((size_t)r * FRR_RT_STATS_SLOTS + c % FRR_RT_STATS_SLOTS) *
		   rt->stats_rec;
}

/* The slowest worker of clock c, the stale reads and (mode backup) the
 * items dropped, from the records. */
struct clock_sum {
	double stats[FRR_MAX_STATS];
	double slowest;
	int slow_w;
	uint64_t stale, dropped, moved;
};

/* Rank r's record of clock c, copied once out of the slot r writes and
 * checked (stats.h): 0, or the job fails naming r. */
static int take_record(struct frr_rt *rt, int r, int c)
{
	char why[160];

	memcpy(rt->ev->stats_copy, rt->ctlp + stats_off(rt, r, c) + 8,
	       frr_stats_len(rt->T) * sizeof(double));
	if (!frr_stats_check(rt->ev->stats_copy, rt->T, why, sizeof(why)))
		return 0;
	return frr_rt_fail(rt, -EPROTO,
			   "rank %d sent rank 0 a bad stats record for clock "
			   "%d: %s; a rank of this job is corrupt or not "
			   "flexrr: stopping rank %d",
			   r, c, why, rt->rank);
}

static int sum_records(struct frr_rt *rt, int c, struct clock_sum *s)
{
	const double *d = rt->ev->stats_copy;

	memset(s, 0, sizeof(*s));
	s->slowest = -1;
	s->slow_w = -1;
	for (int r = 0; r < rt->P; r++) {
		int err = take_record(rt, r, c);

		if (err)
			return err;
		for (int i = 0; i < FRR_MAX_STATS; i++)
			s->stats[i] += d[i];
		for (int t = 0; t < rt->T; t++) {
			const double *m =
			    d + FRR_MAX_STATS + t * FRR_RT_NMETRICS;

			if (m[FRR_M_COMPUTE_S] > s->slowest) {
				s->slowest = m[FRR_M_COMPUTE_S];
				s->slow_w = r * rt->T + t;
			}
			s->stale += (uint64_t)m[FRR_M_STALE_READS];
			s->dropped += (uint64_t)m[FRR_M_DROPPED];
			/* lb-bsp counts its planned tails there */
			s->moved += (uint64_t)m[FRR_M_RR_ITEMS];
		}
		write_metrics(rt, c, r, d);
	}
	return 0;
}

/* --target reached: every rank stops after clock c + s + 1 (rank 0 writes
 * the stop clock before its next done word: docs/runtime.md). */
static int check_target(struct frr_rt *rt, int c)
{
	bool hit;
	int end;

	if (!rt->prm->have_target || c + 1 >= frr_rt_stop_clock(rt))
		return 0;
	hit = rt->app->maximize ? rt->ev->objective >= rt->prm->target
				: rt->ev->objective <= rt->prm->target;
	end = c + rt->eff_slack + 2;
	if (!hit || end >= frr_rt_stop_clock(rt))
		return 0;
	atomic_store(&rt->end_clock, end);
	return frr_rt_ctl_broadcast(rt, rt->off_stop, (uint64_t)end);
}

int frr_rt_try_global(struct frr_rt *rt, int c)
{
	struct clock_sum s;
	char bk[40];
	double now;
	int err;

	for (int r = 0; r < rt->P; r++)
		if (frr_tp_load_u64(ctl_u64(rt, stats_off(rt, r, c))) !=
		    (uint64_t)c + 1)
			return 0;
	err = sum_records(rt, c, &s);
	if (err)
		return err;
	rt->ev->metrics[0] = 0;
	if (rt->app->clock_global) {
		err = rt->app->clock_global(
		    rt->app_state, s.stats, rt->app->nstats,
		    frr_rt_app_clock(rt, c), &rt->ev->objective,
		    rt->ev->metrics, sizeof(rt->ev->metrics));
		if (err)
			return frr_rt_fail(rt, err,
					   "app %s: clock_global(clock %d) "
					   "failed (%d)",
					   rt->app->name, c, err);
	}
	err = frr_rt_globals_publish(rt, c, s.stats);
	if (err)
		return err;
	rt->ev->dropped_sum += s.dropped;
	rt->ev->moved_sum += s.moved;
	bk[0] = 0;
	if (rt->backups)
		snprintf(bk, sizeof(bk), " dropped=%" PRIu64, s.dropped);
	else if (rt->lb_history)
		snprintf(bk, sizeof(bk), " moved=%" PRIu64, s.moved);
	now = frr_rt_clock_now();
	if (!rt->prm->quiet)
		fprintf(stderr,
			"flexrr: clock %d objective=%.6g clock_s=%.4f "
			"slowest=w%d (%.4f s)%s%s\n",
			frr_rt_app_clock(rt, c), rt->ev->objective,
			now - rt->ev->last_global_t, s.slow_w, s.slowest, bk,
			s.stale ? " STALE READS" : "");
	rt->ev->last_global_t = now;
	if (!isfinite(rt->ev->objective) && !rt->prm->allow_nonfinite)
		return frr_rt_fail(
		    rt, -EDOM,
		    "clock %d: app %s's objective is %g: the model diverged; "
		    "lower the app's --lr (and a large penalty such as --l2), "
		    "check the data for huge or wrong values, or pass "
		    "--allow-nonfinite to run on",
		    c, rt->app->name, rt->ev->objective);
	if (s.stale)
		frr_err("clock %d: %" PRIu64 " reads were staler than the "
			"slack allows: SSP bound violated",
			c, s.stale);
	err = check_target(rt, c);
	return err ? err : 1;
}

int frr_rt_metrics_open(struct frr_rt *rt)
{
	const char *path = rt->prm->metrics_path;
	int err;

	if (rt->rank != 0 || !path)
		return 0;
	/* a user-named final path: a symbolic link or another user's file
	 * there is refused, not written through (frr_file_create) */
	err = frr_file_create(path, "--metrics", &rt->ev->metrics_f);
	if (err)
		return err;
	/* FILE.json / FILE.jsonl: one JSON object per line */
	rt->ev->metrics_json = strstr(path, ".json") != NULL;
	if (!rt->ev->metrics_json)
		fprintf(rt->ev->metrics_f,
			"clock,worker,rank,compute_s,wait_s,"
			"flush_s,updates,bytes,stale_reads,"
			"min_data_clock,rr_offers,rr_accepted,"
			"rr_cancelled,rr_items_reassigned,pulls,"
			"pushed,apply_s,dropped\n");
	return 0;
}

/* The lines are not checked as they go: the stream keeps its first write
 * error, and closing it reports that, with the file. */
int frr_rt_metrics_close(struct frr_rt *rt)
{
	FILE *f = rt->ev->metrics_f;

	if (!f)
		return 0;
	rt->ev->metrics_f = NULL;
	return frr_file_close(f, rt->prm->metrics_path, "--metrics");
}

/* Mode backup: what the cuts dropped, of every item of the clocks run;
 * mode lb-bsp: what the plans moved to a helper. */
static void cut_summary(const struct frr_rt *rt, char *buf, size_t len)
{
	uint64_t all = 0;

	buf[0] = 0;
	if (!rt->backups && !rt->lb_history)
		return;
	for (int w = 0; w < rt->W; w++)
		all += rt->ws->nitems[w];
	all *= (uint64_t)frr_rt_stop_clock(rt);
	if (rt->backups)
		snprintf(buf, len,
			 " backups=%d dropped=%" PRIu64 " dropped_share=%.4f",
			 rt->backups, rt->ev->dropped_sum,
			 all ? (double)rt->ev->dropped_sum / (double)all : 0.0);
	else
		snprintf(buf, len,
			 " lb_history=%d moved=%" PRIu64 " moved_share=%.4f",
			 rt->lb_history, rt->ev->moved_sum,
			 all ? (double)rt->ev->moved_sum / (double)all : 0.0);
}

void frr_rt_print_summary(struct frr_rt *rt, double secs)
{
	char bk[96], rec[320] = "";

	cut_summary(rt, bk, sizeof(bk));
	if (rt->prm->recovered) {
		uint64_t items = 0;

		for (int w = 0; w < rt->W; w++)
			items += rt->ws->nitems[w];
		snprintf(
		    rec, sizeof(rec),
		    " recovered: %s from_clock=%d lost_ranks=%s "
		    "failed_at_clock=%d rerun_clocks=%d rerun_items=%" PRIu64
		    " recovery_s=%.3f",
		    rt->prm->recovered, rt->clock_base - 1,
		    rt->prm->lost_ranks ? rt->prm->lost_ranks : "?",
		    rt->ev->failed_at, rt->ev->rerun_clocks,
		    items * (uint64_t)rt->ev->rerun_clocks, rt->ev->recovery_s);
	}
	printf("flexrr: done mode=%s backend=%s procs=%d threads=%d "
	       "clocks=%d time_s=%.3f objective=%.9g%s%s%s%s\n",
	       frr_mode_name(rt->prm->mode),
	       frr_tp_backend_name(frr_tp_backend_of(rt->tp)), rt->P, rt->T,
	       frr_rt_app_clock(rt, frr_rt_stop_clock(rt)), secs,
	       rt->ev->objective, rt->ev->metrics[0] ? " " : "",
	       rt->ev->metrics, bk, rec);
	fflush(stdout);
}
