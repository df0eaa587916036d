// SPDX-License-Identifier: MIT
/*
 * A rank's heartbeats: written into every peer with the rank's progress
 * aggregate, read to find dead or silent peers (docs/runtime.md
 * "Failures", "Control plane").
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "flexrr/log.h"
#include "job.h"

/* ---- heartbeats ------------------------------------------------------------
 */
#define HB_FINISHED UINT64_MAX

/* (clock, done) order of two progress words: < 0 if a is behind b. */
static int progress_cmp(struct frr_progress a, struct frr_progress b)
{
	if (a.clock != b.clock)
		return a.clock < b.clock ? -1 : 1;
	return a.done < b.done ? -1 : a.done > b.done;
}

/* This rank's worker furthest behind: its progress word, and its id with
 * HB_TIE when another local worker is exactly as far. */
#define HB_TIE ((uint64_t)1 << 32)
static void local_laggard(const struct frr_rt *rt, uint64_t *word,
			  uint64_t *who)
{
	int v0 = rt->rank * rt->T;

	*word = frr_tp_load_u64(ctl_u64(rt, rt->off_prog + (size_t)v0 * 64));
	*who = (uint64_t)v0;
	for (int v = v0 + 1; v < v0 + rt->T; v++) {
		uint64_t x =
		    frr_tp_load_u64(ctl_u64(rt, rt->off_prog + (size_t)v * 64));
		int cmp =
		    progress_cmp(frr_prog_unpack(x), frr_prog_unpack(*word));

		if (cmp < 0) {
			*word = x;
			*who = (uint64_t)v;
		} else if (!cmp) {
			*who |= HB_TIE;
		}
	}
}

int frr_rt_rank_laggard(const struct frr_rt *rt, int r, int *v, int *tie,
			struct frr_progress *p)
{
	uint64_t word, who;

	if (r == rt->rank) {
		local_laggard(rt, &word, &who);
	} else {
		size_t off = rt->off_hb + (size_t)r * 64;

		word = frr_tp_load_u64(ctl_u64(rt, off + 16));
		who = frr_tp_load_u64(ctl_u64(rt, off + 24));
	}
	*v = (int)(who & (HB_TIE - 1));
	*tie = (who & HB_TIE) != 0;
	*p = frr_prog_unpack(word);
	/* a peer's words: only a worker of that rank counts */
	return *v >= r * rt->T && *v < (r + 1) * rt->T ? 0 : -EPROTO;
}

/* Our heartbeat into every peer, and our workers' aggregate progress
 * (a hash, and the worker furthest behind) when it changed; 0 or the
 * job's error.  O(P) writes per rank per 200 ms: docs/runtime.md "Control
 * plane" has the cost at 256 ranks. */
static int beat(struct frr_rt *rt, int finished)
{
	uint64_t v = finished ? HB_FINISHED : ++rt->js->hb_count;
	uint64_t agg = frr_rt_local_sig(rt), lag[2];
	size_t off = rt->off_hb + (size_t)rt->rank * 64;
	int err = 0, send_agg = agg != rt->js->hb_agg;

	local_laggard(rt, &lag[0], &lag[1]);
	rt->js->hb_agg = agg;
	for (int r = 0; r < rt->P && !err; r++) {
		if (r == rt->rank)
			continue;
		if (!finished && !frr_tp_ep_alive(rt->eps[r])) {
			err = frr_rt_peer_fail(rt, r, "its connection dropped");
			break;
		}
		for (int i = 0; i < 3 && send_agg && !err; i++)
			err = frr_rt_tp_check(
			    rt,
			    frr_tp_write_u64(rt->eps[r], rt->rctl[r],
					     off + 8 + 8 * (size_t)i,
					     i ? lag[i - 1] : agg, 0, 0),
			    r, "a progress aggregate");
		if (!err)
			err = frr_rt_tp_check(rt,
					      frr_tp_write_u64(rt->eps[r],
							       rt->rctl[r], off,
							       v, 0, 0),
					      r, "a heartbeat");
	}
	return err;
}

/*
 * Every 200 ms: write our heartbeat into every peer and ask the transport
 * whether each peer is alive.  Both need the transport lock; a worker may
 * hold it in a flush to a dead peer, so they are skipped (trylock) rather
 * than waited for.  Reading the peers' heartbeats is lock-free and runs on
 * every call, so a silent peer is always noticed after dead_ms.
 */
int frr_rt_heartbeat(struct frr_rt *rt, double now, int finished)
{
	struct timespec hung = { 1, 0 };
	int err = 0;

	while (rt->test_die_n && atomic_load(&rt->test_hung)) /* _DIE_HANG */
		nanosleep(&hung, NULL);
	if ((now >= rt->js->hb_next || finished) &&
	    (finished ? !pthread_mutex_lock(&rt->tp_lock)
		      : !pthread_mutex_trylock(&rt->tp_lock))) {
		rt->js->hb_next = now + 0.2;
		err = beat(rt, finished);
		pthread_mutex_unlock(&rt->tp_lock);
	}
	for (int r = 0; r < rt->P && !err && !finished; r++) {
		uint64_t v;

		if (r == rt->rank)
			continue;
		v = frr_tp_load_u64(ctl_u64(rt, rt->off_hb + (size_t)r * 64));
		if (v == HB_FINISHED)
			continue;
		if (v != rt->js->hb_last[r]) {
			rt->js->hb_last[r] = v;
			rt->js->hb_seen[r] = now;
		} else if ((now - rt->js->hb_seen[r]) * 1000 >
			   rt->prm->dead_ms) {
			char how[128];

			snprintf(how, sizeof(how),
				 "no heartbeat for %d ms (the --dead-timeout; "
				 "raise it on a busy machine)",
				 rt->prm->dead_ms);
			err = frr_rt_peer_fail(rt, r, how);
		}
	}
	return err;
}
