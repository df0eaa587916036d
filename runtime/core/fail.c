// SPDX-License-Identifier: MIT
/*
 * Failing the job (never exiting the process) and dead peers: the notice
 * words by which ranks tell each other who failed first, so that every
 * survivor names the rank that really failed (docs/runtime.md "Failures").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "flexrr/log.h"
#include "core.h"

/* A notice word, [writer rank]: the failed rank + 1, and how it failed:
 * NOTICE_HUNG when the writer found it unresponsive rather than gone,
 * NOTICE_SELF when the writer stops after its own error (the rank is the
 * writer), with NOTICE_STALL when that error was a stall (a wait past
 * --timeout): the readers then name the worker the job waited for too.
 * Peer-written: read once, checked by notice_read. */
#define NOTICE_HUNG (1ull << 32)
#define NOTICE_SELF (1ull << 33)
#define NOTICE_STALL (1ull << 34)
#define NOTICE_KIND (NOTICE_HUNG | NOTICE_SELF | NOTICE_STALL)

/* Whether notify_dead writes to rank r: every other rank but the failed
 * peer, and the unresponsive rank itself, which may only be slow (a busy
 * machine): told it was declared unresponsive, it says so when it sees us
 * go, instead of "rank <us> has died". */
static int noticed(const struct frr_rt *rt, int r, int dead, int peer,
		   uint64_t kind)
{
	if (r == rt->rank || !rt->rctl[r] || frr_tp_ep_alive(rt->eps[r]) <= 0)
		return 0;
	if (r == dead && (kind & NOTICE_HUNG))
		return 1;
	return r != dead && r != peer;
}

/* Tell the other ranks that `dead` failed (a counter write into its notice
 * slot for us).  The transport lock is recursive (this thread may hold it
 * already); another thread may hold it in a flush to the dead peer,
 * bounded by flush_ms: wait that long, the notice is what lets the others
 * name `dead`. */
static void notify_dead(struct frr_rt *rt, int dead, int peer, uint64_t kind)
{
	struct timespec dl = frr_deadline_ts(rt->flush_ms + 300);
	uint64_t v = ((uint64_t)dead + 1) | kind;

	if (!rt->eps || !rt->rctl || pthread_mutex_timedlock(&rt->tp_lock, &dl))
		return;
	for (int r = 0; r < rt->P; r++)
		if (noticed(rt, r, dead, peer, kind))
			frr_tp_write_u64(rt->eps[r], rt->rctl[r],
					 rt->off_notice + (size_t)rt->rank * 64,
					 v, 0, 0);
	for (int r = 0; r < rt->P; r++)
		if (noticed(rt, r, dead, peer, kind))
			frr_tp_flush(rt->eps[r], 500);
	pthread_mutex_unlock(&rt->tp_lock);
}

/* The notice rank q left us, copied once: 1 and *dead, *kind set if it
 * names a rank of the job, 0 if none (or garbage, which names nobody). */
static int notice_read(const struct frr_rt *rt, int q, int *dead,
		       uint64_t *kind)
{
	uint64_t v =
	    frr_tp_load_u64(ctl_u64(rt, rt->off_notice + (size_t)q * 64));
	uint64_t r = (v & ~NOTICE_KIND) - 1;

	if ((v & ~NOTICE_KIND) == 0 || r >= (uint64_t)rt->P ||
	    ((v & NOTICE_SELF) && r != (uint64_t)q) ||
	    ((v & NOTICE_STALL) && !(v & NOTICE_SELF)))
		return 0;
	*dead = (int)r;
	*kind = v & NOTICE_KIND;
	return 1;
}

static int fail_v(struct frr_rt *rt, int err, int self, const char *fmt,
		  va_list ap)
{
	int none = 0;

	if (err >= 0)
		err = -EIO;
	/* rr (additive) records the failure before any worker can see it,
	 * so each names its helpers as it unwinds; the first record counts */
	if (rt->on_fail)
		rt->on_fail(rt, -1, "was lost");
	/* one message per rank even if several threads detect it: the
	 * others are consequences of the first */
	if (atomic_compare_exchange_strong(&rt->failed, &none, err)) {
		char buf[512];

		vsnprintf(buf, sizeof(buf), fmt, ap);
		frr_err("%s", buf);
		/* the others report our error, not a crash, when we go */
		if (self)
			notify_dead(rt, rt->rank, -1,
				    NOTICE_SELF |
					(err == -ETIMEDOUT ? NOTICE_STALL : 0));
	}
	return frr_rt_failed(rt);
}

int frr_rt_fail(struct frr_rt *rt, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = fail_v(rt, err, 1, fmt, ap);
	va_end(ap);
	return err;
}

/* frr_rt_fail for a peer's failure (notify_dead told the others). */
static int fail_peer(struct frr_rt *rt, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = fail_v(rt, err, 0, fmt, ap);
	va_end(ap);
	return err;
}

static int report(struct frr_rt *rt, int dead, uint64_t kind, int reporter,
		  const char *how)
{
	const char *what =
	    kind & NOTICE_STALL
		? "stopped after the job stalled (its own message says "
		  "which wait)"
	    : kind & NOTICE_SELF
		? "stopped after an error (its own message says which)"
	    : kind & NOTICE_HUNG ? "is unresponsive (hung, stopped or "
				   "overloaded: its connection is open but it "
				   "does not answer in time)"
				 : "has died (crashed or was killed)";

	if (reporter >= 0 && reporter != dead)
		return fail_peer(rt, -ENOTCONN,
				 "rank %d %s, as rank %d reported before it "
				 "stopped too%s; stopping rank %d",
				 dead, what, reporter,
				 kind & NOTICE_HUNG ? " (if it was only slow: "
						      "raise --dead-timeout)"
						    : "",
				 rt->rank);
	/* a stall anywhere is -ETIMEDOUT here too, so that this rank also
	 * names the worker the job waited for (job.c name_laggard) */
	return fail_peer(
	    rt, kind & (NOTICE_HUNG | NOTICE_STALL) ? -ETIMEDOUT : -ENOTCONN,
	    "rank %d %s: %s; stopping rank %d", dead, what, how, rt->rank);
}

/*
 * A peer failed us.  It is unresponsive (hung) if its transport connection
 * is still open, dead if it is closed.  Before failing, tell every other
 * rank which one: a rank that then sees *us* disappear reports the rank
 * that really failed, not us.
 */
int frr_rt_peer_fail(struct frr_rt *rt, int peer, const char *how)
{
	return frr_rt_peer_fail_on(rt, peer, NULL, how);
}

int frr_rt_peer_fail_on(struct frr_rt *rt, int peer, struct frr_tp_ep *seen,
			const char *how)
{
	int dead = peer, reporter = -1;
	uint64_t own, kind;

	/* already failing: errors while stopping are consequences */
	if (frr_rt_failed(rt))
		return frr_rt_failed(rt);
	/* alive but silent: hung; an endpoint that saw it go: died (a
	 * thread's lane may learn it before the main endpoint does) */
	own = frr_tp_ep_alive(rt->eps[peer]) > 0 &&
		      (!seen || frr_tp_ep_alive(seen) > 0)
		  ? NOTICE_HUNG
		  : 0;
	kind = own;
	for (int q = 0; q < rt->P; q++) {
		int d;
		uint64_t k;

		if (q != rt->rank && notice_read(rt, q, &d, &k) &&
		    (reporter < 0 || q == peer)) {
			dead = d;
			kind = k;
			reporter = q;
		}
	}
	/* a peer found *us* unresponsive and stopped: the same verdict as
	 * its own, from this side (we are alive, so only slow) */
	if (reporter >= 0 && dead == rt->rank && (kind & NOTICE_HUNG)) {
		notify_dead(rt, dead, peer, kind);
		return fail_peer(rt, -ETIMEDOUT,
				 "rank %d declared this rank (%d) unresponsive "
				 "(it saw no heartbeat from it for %d ms, the "
				 "--dead-timeout) and stopped: this rank was "
				 "too slow to answer; on a busy machine raise "
				 "--dead-timeout; stopping rank %d",
				 reporter, rt->rank, rt->prm->dead_ms,
				 rt->rank);
	}
	if (reporter >= 0 && dead == peer && !(kind & NOTICE_SELF)) {
		reporter = -1; /* our own view of the peer */
		kind = own;
	}
	/* alive but silent: its launcher sees no signal, the watcher (if
	 * any) learns it here and can cut it off */
	if ((kind & NOTICE_HUNG) && !(kind & NOTICE_SELF) && dead != rt->rank &&
	    rt->prm->watch && rt->prm->watch->peer_hung)
		rt->prm->watch->peer_hung(rt->prm->watch->arg, dead);
	/* rr names the helpers and helpees involved with the failed rank */
	if (rt->on_fail)
		rt->on_fail(rt, dead,
			    kind & NOTICE_SELF	 ? "stopped"
			    : kind & NOTICE_HUNG ? "stopped responding"
						 : "died");
	notify_dead(rt, dead, peer, kind);
	return report(rt, dead, kind, reporter, how);
}
