// SPDX-License-Identifier: MIT
/*
 * Straggler injection (--stragglers, straggler/) and the timeline trace
 * (--trace, trace/) in the worker loop, in every mode: the loop calls these
 * directly, RapidReassignment is not involved (it adds its own events to
 * the same trace buffers, frr_rt_trace_buf).
 *
 * Stragglers: the thread that runs a chunk of items owes (factor - 1) x the
 * chunk's wall time (measured around process(), so waits and hooks are
 * excluded) and sleeps it off (straggler.h); a helper runs another worker's
 * items at its own factor.  Trace spans per worker: "clock N", "ssp wait",
 * "work" (own items), "flush" (its final batch), "waiting for helpers";
 * per rank's server, in the extra buffer rt->tb->trace: "apply"
 * (table/shard.c), "evaluate" and "clock_global" (job/server.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "worker.h"
#include "straggler/straggler.h"
#include "trace/trace.h"

struct frr_inst_worker {
	struct frr_strag_worker sw;
	struct frr_trace_buf *tb;
	int started; /* the straggler state (and its hog) runs */
	uint64_t t_clock, t_work;
} __attribute__((aligned(64)));

struct frr_inst {
	struct frr_stragglers strag;
	struct frr_trace *trace;
	struct frr_inst_worker *iw; /* T, this rank's workers */
	int trace_written;
};

static struct frr_inst_worker *iw_of(const struct frr_worker *wk)
{
	return wk->rt->ws->inst ? &wk->rt->ws->inst->iw[wk->dp.local] : NULL;
}

int frr_inst_init(struct frr_rt *rt)
{
	const struct frr_rr_opts *o = &rt->prm->rr;
	struct frr_inst *in;
	int err;

	if (!o->stragglers && !o->trace_path)
		return 0;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	rt->ws->inst = in;
	err = frr_stragglers_parse(o->stragglers, &in->strag);
	if (!err)
		err = frr_stragglers_setup(&in->strag, rt->prm->seed, rt->T,
					   rt->W);
	/* the workers' buffers, then the server's */
	if (!err && o->trace_path)
		err = frr_trace_create(o->trace_path, rt->rank, rt->P,
				       rt->rank * rt->T, rt->T + 1, 0,
				       &in->trace);
	if (err)
		return err;
	rt->tb->trace = frr_trace_buf(in->trace, rt->T);
	if (rt->tb->trace)
		rt->tb->trace->worker = -1;
	in->iw = aligned_alloc(64, sizeof(*in->iw) * (size_t)rt->T);
	if (!in->iw)
		return -ENOMEM;
	memset(in->iw, 0, sizeof(*in->iw) * (size_t)rt->T);
	for (int l = 0; l < rt->T; l++)
		in->iw[l].tb = frr_trace_buf(in->trace, l);
	if (frr_stragglers_active(&in->strag) && rt->rank == 0) {
		char buf[256];

		frr_stragglers_format(&in->strag, buf, sizeof(buf));
		frr_info("stragglers: %s (seed %llu)", buf,
			 (unsigned long long)rt->prm->seed);
	}
	return 0;
}

/* After the workers are joined: totals, and the trace file.  0, or the
 * error of writing the trace (it said which). */
int frr_inst_fini(struct frr_rt *rt)
{
	struct frr_inst *in = rt->ws->inst;
	uint64_t delayed = 0, inj = 0;
	int err = 0;

	if (!in)
		return 0;
	for (int l = 0; in->iw && l < rt->T; l++) {
		frr_strag_worker_stop(&in->iw[l].sw);
		delayed += in->iw[l].sw.delayed_clocks;
		inj += in->iw[l].sw.injected_ns;
	}
	if (frr_stragglers_active(&in->strag))
		frr_info("stragglers: rank %d: %llu worker-clocks slowed, "
			 "%.3f s injected",
			 rt->rank, (unsigned long long)delayed,
			 (double)inj / 1e9);
	/* not written at a clean end (the job failed): rank 0 merges the
	 * parts there are; after a failure some never come */
	if (in->trace && !in->trace_written)
		err = frr_trace_write(in->trace, frr_rt_failed(rt) ? 0 : 10000,
				      NULL);
	rt->tb->trace = NULL;
	frr_trace_destroy(in->trace);
	free(in->iw);
	free(in);
	rt->ws->inst = NULL;
	return err;
}

int frr_inst_trace_write(struct frr_rt *rt, const int32_t *part_err)
{
	struct frr_inst *in = rt->ws->inst;

	if (!in || !in->trace)
		return 0;
	in->trace_written = 1;
	return frr_trace_write(in->trace, 0, part_err);
}

struct frr_trace_buf *frr_rt_trace_buf(const struct frr_rt *rt, int w)
{
	int l = w - rt->rank * rt->T;

	if (!rt->ws->inst || l < 0 || l >= rt->T)
		return NULL;
	return rt->ws->inst->iw[l].tb;
}

int frr_inst_clock_begin(struct frr_worker *wk, int c)
{
	struct frr_inst_worker *iw = iw_of(wk);
	int err;

	if (!iw)
		return 0;
	if (!iw->started) {
		/* on the worker's own thread: a contention hog shares its
		 * core */
		err = frr_strag_worker_start(&iw->sw, &wk->rt->ws->inst->strag,
					     wk->dp.id, iw->tb);
		if (err)
			return frr_rt_fail(wk->rt, err,
					   "stragglers: starting worker %d's "
					   "injection failed (%d)",
					   wk->dp.id, err);
		iw->started = 1;
	}
	iw->t_clock = frr_trace_now();
	frr_strag_clock_begin(&iw->sw, c);
	return 0;
}

void frr_inst_ssp_wait(struct frr_worker *wk, int c, uint64_t t0, uint64_t t1)
{
	struct frr_inst_worker *iw = iw_of(wk);

	if (!iw)
		return;
	/* a span only when the worker really waited */
	if (t1 - t0 > 20000)
		frr_trace_rec(iw->tb, FRR_TR_SSP_WAIT, t0, t1, c, -1, 0, 0);
	iw->t_work = t1;
}

void frr_inst_chunk(struct frr_worker *wk, uint64_t work_ns)
{
	struct frr_inst_worker *iw = iw_of(wk);

	if (iw)
		frr_strag_account(&iw->sw, work_ns);
}

void frr_inst_list_done(struct frr_worker *wk, int c, uint64_t a, uint64_t end)
{
	struct frr_inst_worker *iw = iw_of(wk);

	if (!iw)
		return;
	frr_strag_clock_end(&iw->sw);
	frr_trace_cost(frr_trace_rec(iw->tb, FRR_TR_WORK, iw->t_work,
				     frr_trace_now(), c, -1, a, end),
		       frr_rt_costs(wk->rt, wk->dp.id), a, end);
}

void frr_inst_help_wait(struct frr_worker *wk, int c, uint64_t t0)
{
	struct frr_inst_worker *iw = iw_of(wk);

	if (!iw)
		return;
	iw->t_work = frr_trace_now();
	frr_trace_rec(iw->tb, FRR_TR_HELP_WAIT, t0, iw->t_work, c, -1, 0, 0);
}

void frr_inst_flush(struct frr_worker *wk, int c, uint64_t t0)
{
	struct frr_inst_worker *iw = iw_of(wk);

	if (iw)
		frr_trace_rec(iw->tb, FRR_TR_FLUSH, t0, frr_trace_now(), c, -1,
			      0, 0);
}

void frr_inst_clock_end(struct frr_worker *wk, int c)
{
	struct frr_inst_worker *iw = iw_of(wk);

	if (iw)
		frr_trace_rec(iw->tb, FRR_TR_CLOCK, iw->t_clock,
			      frr_trace_now(), c, -1, 0, 0);
}

/* The hog competes with this thread: stop it on the same thread. */
void frr_inst_exit(struct frr_worker *wk)
{
	struct frr_inst_worker *iw = iw_of(wk);

	if (iw && iw->started)
		frr_strag_worker_stop(&iw->sw);
}
