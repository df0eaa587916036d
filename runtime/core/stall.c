// SPDX-License-Identifier: MIT
/*
 * The stall detector of every wait: progress anywhere in the job restarts
 * its deadline, so long clocks are not mistaken for hangs (docs/runtime.md
 * "Failures").
 */
#include "core.h"

/* This rank's workers' progress words, hashed. */
uint64_t frr_rt_local_sig(const struct frr_rt *rt)
{
	uint64_t sig = 0;

	for (int t = 0; t < rt->T; t++)
		sig = sig * 31 +
		      frr_tp_load_u64(
			  ctl_u64(rt, rt->off_prog +
					  (size_t)(rt->rank * rt->T + t) * 64));
	return sig;
}

/*
 * Progress anywhere in the job: our workers' words, the words rr sends
 * here, and every other rank's aggregate, which its server writes beside
 * its heartbeat when it changed (beat below).  So progress words need not
 * go to every rank for the stall detector: a rank's view of another lags
 * by at most one heartbeat period (200 ms), far below --timeout.
 */
static uint64_t progress_sig(const struct frr_rt *rt)
{
	uint64_t sig = frr_rt_local_sig(rt);

	for (int v = 0; v < rt->W; v++)
		if (rt->prog_read[v])
			sig = sig * 31 +
			      frr_tp_load_u64(
				  ctl_u64(rt, rt->off_prog + (size_t)v * 64));
	for (int r = 0; r < rt->P; r++)
		if (r != rt->rank)
			sig = sig * 31 +
			      frr_tp_load_u64(
				  ctl_u64(rt, rt->off_hb + (size_t)r * 64 + 8));
	return sig;
}

void frr_rt_stall_init(const struct frr_rt *rt, struct frr_stall *s)
{
	s->sig = progress_sig(rt);
	s->since = frr_rt_clock_now();
}

int frr_rt_stalled(const struct frr_rt *rt, struct frr_stall *s)
{
	double now = frr_rt_clock_now();
	uint64_t sig = progress_sig(rt);

	if (sig != s->sig) {
		s->sig = sig;
		s->since = now;
		return 0;
	}
	return (now - s->since) * 1000 > rt->prm->timeout_ms;
}
