// SPDX-License-Identifier: MIT
/* Control words and flushes every part of a rank uses (under tp_lock). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

int frr_rt_tp_check(struct frr_rt *rt, int err, int peer, const char *what)
{
	char how[288];

	if (!err)
		return 0;
	/* which deadline expired, and the option that raises it */
	snprintf(how, sizeof(how), "%s to rank %d failed: %s%s", what, peer,
		 strerror(-err),
		 err == -ETIMEDOUT
		     ? " (the transport waits a third of the --dead-timeout "
		       "while the job runs, the --timeout at its start and "
		       "end; raise them on a busy machine)"
		     : "");
	return frr_rt_peer_fail(rt, peer, how);
}

int frr_rt_ctl_broadcast(struct frr_rt *rt, size_t off, uint64_t v)
{
	int err = 0;

	pthread_mutex_lock(&rt->tp_lock);
	for (int r = 0; r < rt->P && !err; r++) {
		if (r == rt->rank)
			continue;
		err = frr_rt_tp_check(
		    rt, frr_tp_write_u64(rt->eps[r], rt->rctl[r], off, v, 0, 0),
		    r, "a counter write");
	}
	pthread_mutex_unlock(&rt->tp_lock);
	atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, off), v,
			      memory_order_release);
	return err;
}

/* timeout_ms: flush_ms while the job runs (the server must get back to
 * its heartbeats), the long --timeout at start-up and at the end. */
int frr_rt_flush_all(struct frr_rt *rt, int timeout_ms)
{
	int err = 0;

	pthread_mutex_lock(&rt->tp_lock);
	for (int r = 0; r < rt->P && !err; r++)
		if (r != rt->rank)
			err = frr_rt_tp_check(
			    rt, frr_tp_flush(rt->eps[r], timeout_ms), r,
			    "flushing writes");
	pthread_mutex_unlock(&rt->tp_lock);
	return err;
}

int frr_rt_progress_publish(struct frr_rt *rt, int w, int clock, uint64_t done,
			    uint64_t total)
{
	uint64_t v = frr_prog_pack(clock, done >> rt->prog_shift,
				   total >> rt->prog_shift);
	size_t off = rt->off_prog + (size_t)w * 64;
	const int t = w - rt->rank * rt->T, *subs = rt->prog_subs + t * rt->P;
	const struct frr_prog_lane *l;
	int err = 0, bad = -1;

	atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, off), v,
			      memory_order_release);
	if (!rt->prog_nsubs[t])
		return 0;
	/* only the ranks whose workers read it (rr's helper group), on the
	 * thread's own lane where it has one: under tp_lock a word waited
	 * for the server to post a clock's push */
	l = &rt->prog_lane[t];
	if (l->lock)
		pthread_mutex_lock(l->lock);
	for (int i = 0; i < rt->prog_nsubs[t] && !err; i++) {
		bad = subs[i];
		err = frr_tp_write_u64(l->ep[bad], l->ctl[bad], off, v, 0, 0);
	}
	if (l->lock)
		pthread_mutex_unlock(l->lock);
	if (err)
		return frr_rt_peer_fail(rt, bad,
					"publishing progress to it failed");
	return 0;
}
