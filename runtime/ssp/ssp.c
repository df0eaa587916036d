// SPDX-License-Identifier: MIT
/*
 * The staleness rule (docs/runtime.md "SSP"): worker w may start clock c
 * once every shard has applied clock c - s - 1 (done[o] >= c - s), so a row
 * fetched in clock c holds every update of clocks <= c - s - 1.  async
 * waits on a window of FRR_RT_ASYNC_WINDOW clocks (the inbox rings' reach)
 * but checks no bound.  Every wait gives up with the job when it fails,
 * and fails it when no worker anywhere progresses for --timeout.
 */
#include <errno.h>

#include "ssp.h"
#include "table.h"

int64_t frr_rt_read_bound(const struct frr_rt *rt, int clock)
{
	return rt->prm->mode == FRR_MODE_ASYNC
		   ? INT64_MIN
		   : (int64_t)clock - rt->prm->slack - 1;
}

/* One turn of any wait here: the waiter's (rr's help), then the job's
 * failure (0: wait on). */
static int wait_turn(struct frr_rt *rt, const struct frr_ssp_waiter *wt, int c)
{
	int err = wt->turn ? wt->turn(wt->arg, c) : 0;

	return err ? err : frr_rt_failed(rt);
}

/*
 * Read-my-writes covers the writes made for us: a worker whose clock c - 1
 * was partly run by helpers waits, for FRR_TABLE_SEE_OWN_PENDING tables, until
 * clock c - 1 is applied everywhere.  Its pending ring holds only what it
 * pushed itself, so a row fetched earlier would lack the helpers' changes to
 * the rows it alone writes (mf's user rows) and the next step would repeat
 * theirs.  The helped worker is the one behind, so this wait is short.
 */
static int64_t need_clock(const struct frr_rt *rt,
			  const struct frr_ssp_waiter *wt, int c)
{
	int64_t need = (int64_t)c - rt->eff_slack;

	if (rt->tb->own_pending && wt->helped_clock == c - 1 && need < c)
		need = c;
	return need;
}

/* The app's globals clock c reads (core/globals.c), after the rows: they
 * come from rank 0 once it has processed clock c - s - 1. */
static int globals_wait(struct frr_rt *rt, const struct frr_ssp_waiter *wt,
			int c)
{
	struct frr_stall st;
	int err;

	frr_rt_stall_init(rt, &st);
	while ((err = frr_rt_globals_ready(rt, c)) == 0) {
		if (c >= frr_rt_cur_end(rt))
			return 0;
		err = wait_turn(rt, wt, c);
		if (err)
			return err;
		if (frr_rt_stalled(rt, &st))
			return frr_rt_fail(
			    rt, -ETIMEDOUT,
			    "worker %d waited %d ms to start clock %d for the "
			    "app's globals of clock %d from rank 0: rank 0 "
			    "hangs; raise --timeout if its clock_global takes "
			    "that long",
			    wt->w, rt->prm->timeout_ms, frr_rt_app_clock(rt, c),
			    frr_rt_app_clock(rt, c) - rt->eff_slack - 1);
		frr_nap_us(50);
	}
	return err < 0 ? err : 0;
}

int frr_rt_ssp_wait(struct frr_rt *rt, const struct frr_ssp_waiter *wt, int c)
{
	int64_t need = need_clock(rt, wt, c);
	struct frr_stall st;
	int err;

	if (need <= 0 || rt->test_break_ssp)
		return globals_wait(rt, wt, c);
	frr_rt_stall_init(rt, &st);
	for (;;) {
		if (frr_rt_all_done_ge(rt, (uint64_t)need) ||
		    c >= frr_rt_cur_end(rt))
			return globals_wait(rt, wt, c);
		err = wait_turn(rt, wt, c);
		if (err)
			return err;
		if (frr_rt_stalled(rt, &st))
			return frr_rt_fail(
			    rt, -ETIMEDOUT,
			    "worker %d waited %d ms to start clock %d (needs "
			    "clock %lld applied everywhere): a worker hangs; "
			    "raise --timeout if clocks are that long",
			    wt->w, rt->prm->timeout_ms, c, (long long)need - 1);
		frr_nap_us(100);
	}
}

/*
 * Before its clock-c batch leaves, this rank must have evaluated clock
 * c - s - 1.  In BSP (s = 0) that keeps clock c's updates out of the
 * replicas while clock_local(c - 1) reads them: a deterministic objective.
 * With slack it is only back-pressure on a slow evaluation (it keeps the
 * per-clock records ring from being overtaken), never a tighter bound
 * than SSP's own.
 */
int frr_rt_wait_eval(struct frr_rt *rt, const struct frr_ssp_waiter *wt, int c)
{
	int need = c - rt->eff_slack;
	struct frr_stall st;
	int err;

	frr_rt_stall_init(rt, &st);
	while (atomic_load_explicit(&rt->eval_done, memory_order_acquire) <
	       need) {
		if (frr_rt_stalled(rt, &st))
			return frr_rt_fail(rt, -ETIMEDOUT,
					   "worker %d waited %d ms (the "
					   "--timeout) for the evaluation "
					   "of clock %d: it hangs; raise "
					   "--timeout if evaluations take "
					   "that long",
					   wt->w, rt->prm->timeout_ms,
					   need - 1);
		/* rr: a helpee may wait on us (CancelHelp) for that clock */
		err = wait_turn(rt, wt, c);
		if (err)
			return err;
		frr_nap_us(50);
	}
	return 0;
}
