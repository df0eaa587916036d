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
			rt->rr->peer_dead(rt, rt->rr_state, -1, "was lost");
	}
	return frr_rt_failed(rt);
}

/* A notice word, [writer rank]: dead rank + 1, NOTICE_HUNG set when the
 * writer found it unresponsive rather than gone.  Peer-written: read once,
 * checked by notice_read. */
#define NOTICE_HUNG (1ull << 32)

/* Tell every other rank that `dead` failed (a counter write into its notice
 * slot for us).  The transport lock is recursive (this thread may hold it
 * already); another thread may hold it in a flush to the dead peer, bounded
 * by flush_ms: wait that long, the notice is what lets the others name
 * `dead`. */
static void notify_dead(struct frr_rt *rt, int dead, int peer, int hung)
{
	struct timespec dl = frr_deadline_ts(rt->flush_ms + 300);
	uint64_t v = ((uint64_t)dead + 1) | (hung ? NOTICE_HUNG : 0);

	if (pthread_mutex_timedlock(&rt->tp_lock, &dl))
		return;
	for (int r = 0; r < rt->P; r++)
		if (r != rt->rank && r != dead && r != peer)
			frr_tp_write_u64(rt->eps[r], rt->rctl[r],
					 rt->off_notice + (size_t)rt->rank * 64,
					 v, 0, 0);
	for (int r = 0; r < rt->P; r++)
		if (r != rt->rank && r != dead && r != peer)
			frr_tp_flush(rt->eps[r], 500);
	pthread_mutex_unlock(&rt->tp_lock);
}

/* The notice rank q left us, copied once: 1 and *dead, *hung set if it
 * names a rank of the job, 0 if none (or garbage, which names nobody). */
static int notice_read(const struct frr_rt *rt, int q, int *dead, int *hung)
{
	uint64_t v =
	    frr_tp_load_u64(ctl_u64(rt, rt->off_notice + (size_t)q * 64));
	uint64_t r = (v & ~NOTICE_HUNG) - 1;

	if (!v || (v & ~NOTICE_HUNG) == 0 || r >= (uint64_t)rt->P)
		return 0;
	*dead = (int)r;
	*hung = (v & NOTICE_HUNG) != 0;
	return 1;
}

static int report(struct frr_rt *rt, int dead, int hung, int reporter,
		  const char *how)
{
	const char *what = hung ? "is unresponsive (hung or stopped: its "
				  "connection is open but it does not answer)"
				: "has died (crashed or was killed)";

	if (reporter >= 0)
		return frr_rt_fail(rt, -ENOTCONN,
				   "rank %d %s, as rank %d reported before "
				   "it stopped too; stopping rank %d",
				   dead, what, reporter, rt->rank);
	return frr_rt_fail(rt, hung ? -ETIMEDOUT : -ENOTCONN,
			   "rank %d %s: %s; stopping rank %d", dead, what, how,
			   rt->rank);
}

/*
 * A peer failed us.  It is unresponsive (hung) if its transport connection
 * is still open, dead if it is closed.  Before failing, tell every other
 * rank which one: a rank that then sees *us* disappear reports the rank
 * that really failed, not us.
 */
int frr_rt_peer_fail(struct frr_rt *rt, int peer, const char *how)
{
	int dead = peer, hung, own, reporter = -1;

	/* already failing: errors while stopping are consequences */
	if (frr_rt_failed(rt))
		return frr_rt_failed(rt);
	own = frr_tp_ep_alive(rt->eps[peer]) > 0;
	hung = own;
	for (int q = 0; q < rt->P; q++) {
		int d, h;

		if (q != rt->rank && notice_read(rt, q, &d, &h) &&
		    (reporter < 0 || q == peer)) {
			dead = d;
			hung = h;
			reporter = q;
		}
	}
	if (reporter >= 0 && dead == peer) {
		reporter = -1; /* our own view of the peer */
		hung = own;
	}
	/* rr names the helpers and helpees involved with the failed rank */
	if (FRR_RR_HAS(rt->rr, peer_dead) && rt->rr_state)
		rt->rr->peer_dead(rt, rt->rr_state, dead,
				  hung ? "stopped responding" : "died");
	notify_dead(rt, dead, peer, hung);
	return report(rt, dead, hung, reporter, how);
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
