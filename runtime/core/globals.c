// SPDX-License-Identifier: MIT
/*
 * The app's per-clock globals (flexrr.h frr_app_ops.globals): rank 0 asks
 * the app for them after clock_global(c) and writes them into a ring in
 * every rank's control region, record (c % FRR_RT_GLOBALS_RING): a stamp
 * word (app clock + 1) after nglobals doubles, the values first (G3: a
 * reader that sees the stamp sees them).  process() in clock c reads those
 * of c - slack - 1; a worker waits for them before it starts clock c (ssp/
 * ssp.c), and each thread copies them out once per clock it runs.  A slot
 * is reused for clock c + RING only after rank 0 has processed clock c +
 * RING, when every item of every clock that reads slot c has run (RING >
 * slack + 1).  Checkpoints keep the last slack + 1 of them (job/).  The
 * ring is control words (core/); what process() reads of it, frr_globals,
 * is worker/ctx.c.
 */
#include <errno.h>
#include <string.h>

#include "flexrr/log.h"
#include "core.h"

_Static_assert(FRR_RT_GLOBALS_RING >= FRR_RT_MAX_SLACK + 2 &&
		   FRR_RT_GLOBALS_RING >= FRR_RT_ASYNC_WINDOW + 2,
	       "the globals ring must outlast the largest slack");

int frr_rt_globals_init(struct frr_rt *rt)
{
	const struct frr_app_ops *a = rt->app;

	rt->nglob = 0;
	if (!FRR_APP_HAS(a, globals) || (!a->nglobals && !a->globals))
		return 0;
	if (!a->globals || a->nglobals < 1 || a->nglobals > FRR_MAX_GLOBALS) {
		frr_err("app %s: nglobals is %d and globals() is %s: set both, "
			"with 1 <= nglobals <= %d, or neither",
			a->name, a->nglobals, a->globals ? "set" : "NULL",
			FRR_MAX_GLOBALS);
		return -EINVAL;
	}
	rt->nglob = a->nglobals;
	return 0;
}

static size_t slot_off(const struct frr_rt *rt, int ac)
{
	return rt->off_glob + (size_t)(ac % FRR_RT_GLOBALS_RING) * rt->glob_rec;
}

static uint64_t stamp_of(const struct frr_rt *rt, int ac)
{
	return frr_tp_load_u64(
	    ctl_u64(rt, slot_off(rt, ac) + (size_t)rt->nglob * 8));
}

int frr_rt_globals_get(const struct frr_rt *rt, int ac, double *out)
{
	if (!rt->nglob || ac < 0 || stamp_of(rt, ac) != (uint64_t)ac + 1)
		return -ENOENT;
	memcpy(out, rt->ctlp + slot_off(rt, ac), (size_t)rt->nglob * 8);
	/* rewritten while copied: only a broken or hostile peer does that */
	return stamp_of(rt, ac) == (uint64_t)ac + 1 ? 0 : -EPROTO;
}

void frr_rt_globals_put(struct frr_rt *rt, int ac, const double *in)
{
	size_t off = slot_off(rt, ac);

	memcpy(rt->ctlp + off, in, (size_t)rt->nglob * 8);
	atomic_store_explicit(
	    (_Atomic uint64_t *)ctl_u64(rt, off + (size_t)rt->nglob * 8),
	    (uint64_t)ac + 1, memory_order_release);
}

/* The record at off (values, then stamp) from this rank's region into the
 * same place on every other rank that will still read it. */
static int send_all(struct frr_rt *rt, size_t off)
{
	size_t vlen = (size_t)rt->nglob * 8;
	uint64_t stamp = frr_tp_load_u64(ctl_u64(rt, off + vlen));
	int err = 0, r;

	pthread_mutex_lock(&rt->tp_lock);
	for (r = 0; r < rt->P && !err; r++) {
		if (r == rt->rank)
			continue;
		err = frr_tp_write(rt->eps[r], rt->ctl, off, rt->rctl[r], off,
				   vlen, 0, 0);
		if (!err)
			err = frr_tp_write_u64(rt->eps[r], rt->rctl[r],
					       off + vlen, stamp, 0, 0);
		/* the source is rewritten RING clocks later: flushed by then
		 * anyway, but a dead peer must be found now, not then */
		if (!err)
			err = frr_tp_flush(rt->eps[r], rt->flush_ms);
	}
	pthread_mutex_unlock(&rt->tp_lock);
	return err ? frr_rt_tp_check(rt, err, r - 1, "sending the globals") : 0;
}

int frr_rt_globals_publish(struct frr_rt *rt, int c, const double *stats)
{
	double v[FRR_MAX_GLOBALS] = { 0 };
	int ac = frr_rt_app_clock(rt, c), err;

	if (!rt->nglob)
		return 0;
	if (frr_rt_globals_get(rt, ac - 1, v))
		memset(v, 0, sizeof(v));
	err = rt->app->globals(rt->app_state, stats, rt->app->nstats, ac, v);
	if (err)
		return frr_rt_fail(rt, err,
				   "app %s: globals(clock %d) failed (%d)",
				   rt->app->name, ac, err);
	frr_rt_globals_put(rt, ac, v);
	/* no clock reads them: the ranks may have finished and gone */
	if (c + rt->eff_slack + 1 >= frr_rt_cur_end(rt))
		return 0;
	return send_all(rt, slot_off(rt, ac));
}

/* The app clock whose globals internal clock c reads (< 0: none yet). */
int frr_rt_globals_from(const struct frr_rt *rt, int c)
{
	return frr_rt_app_clock(rt, c) - rt->eff_slack - 1;
}

int frr_rt_globals_ready(struct frr_rt *rt, int c)
{
	int from = frr_rt_globals_from(rt, c);
	uint64_t st;

	if (!rt->nglob || from < 0)
		return 1;
	st = stamp_of(rt, from);
	if (st == (uint64_t)from + 1)
		return 1;
	if (from < rt->clock_base)
		/* a resumed job's first clocks read the checkpoint's */
		return frr_rt_fail(rt, -EPROTO,
				   "resumed at clock %d: the checkpoint holds "
				   "no globals of clock %d, which clock %d "
				   "reads; it was written by an older flexrr "
				   "or is damaged: resume from a newer one",
				   rt->clock_base, from,
				   frr_rt_app_clock(rt, c));
	if (st > (uint64_t)from + 1)
		return frr_rt_fail(rt, -EPROTO,
				   "the globals of clock %d were overwritten "
				   "by those of clock %lld before clock %d "
				   "ran: a rank of this job is corrupt",
				   from, (long long)st - 1,
				   frr_rt_app_clock(rt, c));
	return 0;
}
