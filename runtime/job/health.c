// SPDX-License-Identifier: MIT
/*
 * A rank's health: failing the job (never exiting the process), dead peers,
 * heartbeats and the stall detector of every wait (docs/runtime.md
 * "Failures").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "flexrr/log.h"
#include "rt.h"

int frr_rt_fail(struct frr_rt *rt, int err, const char *fmt, ...)
{
	int none = 0;

	if (err >= 0)
		err = -EIO;
	/* one message per rank even if several threads detect it: the
	 * others are consequences of the first */
	if (atomic_compare_exchange_strong(&rt->failed, &none, err)) {
		char buf[512];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		frr_err("%s", buf);
		/* rr (additive): name the helpers we were waiting on */
		if (FRR_RR_HAS(rt->rr, peer_dead) && rt->rr_state)
			rt->rr->peer_dead(rt, rt->rr_state, -1);
	}
	return frr_rt_failed(rt);
}

/* Tell every other rank that `dead` died (a counter write into its notice
 * slot for us).  The transport lock is recursive (this thread may hold it
 * already); another thread may hold it in a flush to the dead peer, bounded
 * by flush_ms: wait that long, the notice is what lets the others name
 * `dead`. */
static void notify_dead(struct frr_rt *rt, int dead, int peer)
{
	struct timespec dl = frr_deadline_ts(rt->flush_ms + 300);

	if (pthread_mutex_timedlock(&rt->tp_lock, &dl))
		return;
	for (int r = 0; r < rt->P; r++)
		if (r != rt->rank && r != dead && r != peer)
			frr_tp_write_u64(rt->eps[r], rt->rctl[r],
					 rt->off_notice + (size_t)rt->rank * 64,
					 (uint64_t)dead + 1, 0, 0);
	for (int r = 0; r < rt->P; r++)
		if (r != rt->rank && r != dead && r != peer)
			frr_tp_flush(rt->eps[r], 500);
	pthread_mutex_unlock(&rt->tp_lock);
}

/*
 * A peer is gone.  Before failing, tell every other rank which one: a rank
 * that then sees *us* disappear reports the rank that really died, not us.
 */
int frr_rt_peer_fail(struct frr_rt *rt, int peer, const char *how)
{
	int dead = peer, reporter = -1;

	/* already failing: errors while stopping are consequences */
	if (frr_rt_failed(rt))
		return frr_rt_failed(rt);
	for (int q = 0; q < rt->P; q++) {
		uint64_t v = frr_tp_load_u64(
		    ctl_u64(rt, rt->off_notice + (size_t)q * 64));

		if (v && (reporter < 0 || q == peer)) {
			dead = (int)(v - 1);
			reporter = q;
		}
	}
	if (dead < 0 || dead >= rt->P)
		dead = peer;
	/* rr names the helpers that were helping on the dead rank */
	if (FRR_RR_HAS(rt->rr, peer_dead) && rt->rr_state)
		rt->rr->peer_dead(rt, rt->rr_state, dead);
	notify_dead(rt, dead, peer);
	if (reporter >= 0 && dead != peer)
		return frr_rt_fail(
		    rt, -ENOTCONN,
		    "rank %d has gone (crashed or was killed), as rank %d "
		    "reported before it stopped too; stopping rank %d",
		    dead, reporter, rt->rank);
	return frr_rt_fail(rt, -ENOTCONN,
			   "rank %d has gone (%s: it crashed or was killed); "
			   "stopping rank %d",
			   dead, how, rt->rank);
}

/* ---- stalls ---------------------------------------------------------------
 */
static uint64_t progress_sig(const struct frr_rt *rt)
{
	uint64_t sig = 0;

	for (int v = 0; v < rt->W; v++)
		sig =
		    sig * 31 +
		    frr_tp_load_u64(ctl_u64(rt, rt->off_prog + (size_t)v * 64));
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
	return (now - s->since) * 1000 > rt->o->timeout_ms;
}

/* ---- heartbeats ------------------------------------------------------------
 */
#define HB_FINISHED UINT64_MAX

/* Our heartbeat into every peer; 0 or the job's error. */
static int beat(struct frr_rt *rt, int finished)
{
	uint64_t v = finished ? HB_FINISHED : ++rt->hb_count;
	size_t off = rt->off_hb + (size_t)rt->rank * 64;
	int err = 0;

	for (int r = 0; r < rt->P && !err; r++) {
		if (r == rt->rank)
			continue;
		if (!finished && !frr_tp_ep_alive(rt->eps[r]))
			err = frr_rt_peer_fail(rt, r, "its connection dropped");
		else
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
	int err = 0;

	if ((now >= rt->hb_next || finished) &&
	    (finished ? !pthread_mutex_lock(&rt->tp_lock)
		      : !pthread_mutex_trylock(&rt->tp_lock))) {
		rt->hb_next = now + 0.2;
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
		if (v != rt->hb_last[r]) {
			rt->hb_last[r] = v;
			rt->hb_seen[r] = now;
		} else if ((now - rt->hb_seen[r]) * 1000 > rt->o->dead_ms) {
			char how[64];

			snprintf(how, sizeof(how), "no heartbeat for %d ms",
				 rt->o->dead_ms);
			err = frr_rt_peer_fail(rt, r, how);
		}
	}
	return err;
}
