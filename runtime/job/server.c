// SPDX-License-Identifier: MIT
/*
 * The server: a rank's main thread while its workers run.  In turn it
 * applies the next clock to the shard (table/shard.c; --eager: each batch
 * as it arrives, and says a clock is done once all are), evaluates clocks
 * every shard has applied (eval/eval.c), on rank 0 processes the clocks
 * whose stats are in (eval/metrics.c), beats and checks heartbeats, and
 * fails the job when nothing anywhere progresses for --timeout.
 */
#include <errno.h>
#include <time.h>

#include "job.h"
#include "table.h"
#include "trace.h"

/* One turn: 1 if something was done, 0 if idle, < 0 the job's error. */
static int server_step(struct frr_rt *rt, int end)
{
	int busy, err;

	/* batches first, every turn: their senders wait for the slots; and
	 * rows asked for, whose readers wait too */
	busy = frr_rt_inbox_drain(rt);
	/* --eager: each whole batch as it comes, not a clock at once */
	if (busy >= 0 && rt->eager && (err = frr_rt_eager_apply(rt)) != 0)
		busy = err < 0 ? err : 1;
	if (busy >= 0 && (err = frr_rt_pull_serve(rt)) != 0)
		busy = err < 0 ? err : 1;
	if (busy >= 0 && (err = frr_rt_ckpt_poll(rt)) != 0)
		busy = err < 0 ? err : 1;
	if (busy < 0)
		return busy;
	if (rt->tb->next_apply < end &&
	    (rt->rank != 0 || rt->ev->next_global >= rt->tb->next_apply) &&
	    !frr_rt_ckpt_hold(rt, rt->tb->next_apply)) {
		err = frr_rt_try_apply(rt, rt->tb->next_apply);
		if (err < 0)
			return err;
		if (err) {
			/* the cut's copy, before clock next_apply + 1
			 * changes the rows */
			err = frr_rt_ckpt_shard(rt, rt->tb->next_apply++);
			if (err)
				return err;
			busy = 1;
		}
	}
	if (rt->ev->next_eval < end && rt->ev->next_eval < rt->tb->next_apply &&
	    frr_rt_all_done_ge(rt, (uint64_t)rt->ev->next_eval + 1)) {
		uint64_t t0 = frr_trace_now();

		err = frr_rt_eval_local(rt, rt->ev->next_eval++);
		frr_trace_rec(rt->tb->trace, FRR_TR_EVAL, t0, frr_trace_now(),
			      rt->ev->next_eval - 1, -1, 0, 0);
		if (err)
			return err;
		busy = 1;
	}
	if (rt->rank == 0 && rt->ev->next_global < rt->ev->next_eval) {
		uint64_t t0 = frr_trace_now();

		err = frr_rt_try_global(rt, rt->ev->next_global);
		if (err > 0)
			frr_trace_rec(rt->tb->trace, FRR_TR_GLOBAL, t0,
				      frr_trace_now(), rt->ev->next_global, -1,
				      0, 0);
		if (err < 0)
			return err;
		if (err) {
			err = frr_rt_ckpt_commit(rt, rt->ev->next_global++);
			if (err)
				return err;
			busy = 1;
		}
	}
	return busy;
}

static int finished(struct frr_rt *rt, int end)
{
	/* and the last checkpoint written (rank 0: committed) */
	return rt->tb->next_apply >= end && rt->ev->next_eval >= end &&
	       (rt->rank != 0 || rt->ev->next_global >= end) &&
	       frr_rt_ckpt_idle(rt);
}

/* Where a rank may pull rows it does not hold (table/hold.c), its
 * evaluation of the last clock may still ask this rank for rows: so each
 * rank says when it has finished and keeps serving until every rank has
 * (*err: a failed broadcast). */
static int all_finished(struct frr_rt *rt, int *err)
{
	if (!rt->tb->hold->may_pull)
		return 1;
	if (!frr_tp_load_u64(ctl_u64(rt, rt->off_fin + (size_t)rt->rank * 64)))
		*err = frr_rt_ctl_broadcast(
		    rt, rt->off_fin + (size_t)rt->rank * 64, 1);
	for (int r = 0; r < rt->P; r++)
		if (!frr_tp_load_u64(ctl_u64(rt, rt->off_fin + (size_t)r * 64)))
			return 0;
	return 1;
}

/* The stop clock, lowered by rank 0's stop word (remote-written: only ever
 * an earlier end than ours). */
static int end_clock(struct frr_rt *rt)
{
	int end = frr_rt_stop_clock(rt);
	uint64_t stop = frr_tp_load_u64(ctl_u64(rt, rt->off_stop));

	if (stop && stop < (uint64_t)end) {
		end = (int)stop;
		atomic_store(&rt->end_clock, end);
	}
	return end;
}

/*
 * How long an idle server naps at most: 1/32 of the last clock's length,
 * between 200 us and 2 ms.  Each nap's end wakes the server on a core a
 * worker computes on (ranks share cores, and the server is not pinned),
 * and the wake preempts that worker: at a fixed 200 us, lda at 2 x 1 on
 * 2 cores ran 5-7% longer per clock under SSP and FlexRR than with 2 ms
 * naps.  A nap's end is also how soon the server takes a clock's first
 * batch, so the cap follows the clock: it costs a clock at most 1/32 of
 * its length, and short clocks (under 6.4 ms) keep 200 us.
 */
static long idle_cap_ns(struct frr_rt *rt, double now, int *seen, double *at,
			long cap)
{
	const long lo = 200000, hi = 2000000;

	if (rt->tb->next_apply == *seen)
		return cap;
	cap = *seen >= 0 ? (long)((now - *at) * 1e9 / 32) : lo;
	*seen = rt->tb->next_apply;
	*at = now;
	return cap < lo ? lo : cap > hi ? hi : cap;
}

int frr_rt_server_loop(struct frr_rt *rt)
{
	double last_check = frr_rt_clock_now(), applied_at = last_check;
	struct frr_stall stall;
	long idle_ns = 0, cap = 200000;
	int err = 0, applied = -1;

	for (int r = 0; r < rt->P; r++)
		rt->js->hb_seen[r] = last_check;
	frr_rt_stall_init(rt, &stall);
	while (!err) {
		int end = end_clock(rt), busy = server_step(rt, end);
		double now = frr_rt_clock_now();

		if (busy < 0 || frr_rt_failed(rt))
			break;
		if (finished(rt, end) && all_finished(rt, &err))
			return frr_rt_heartbeat(rt, frr_rt_clock_now(), 1);
		err = frr_rt_heartbeat(rt, now, 0);
		cap = idle_cap_ns(rt, now, &applied, &applied_at, cap);
		if (busy) {
			frr_rt_stall_init(rt, &stall);
			idle_ns = 0;
			continue;
		}
		if (now - last_check > 0.01) {
			last_check = now;
			if (frr_rt_stalled(rt, &stall))
				err = frr_rt_fail(
				    rt, -ETIMEDOUT,
				    "no worker made progress for %d ms "
				    "(waiting for clock %d): a worker hangs; "
				    "raise --timeout if one sixteenth of a "
				    "clock takes that long",
				    rt->prm->timeout_ms, rt->tb->next_apply);
		}
		/* idle: back off from 20 us to the cap */
		idle_ns =
		    idle_ns ? (idle_ns * 2 < cap ? idle_ns * 2 : cap) : 20000;
		nanosleep(&(struct timespec){ 0, idle_ns }, NULL);
	}
	return frr_rt_failed(rt) ? frr_rt_failed(rt) : err;
}
