// SPDX-License-Identifier: MIT
/*
 * Progress words and worker mailboxes (rr/rr_hooks.h "Progress",
 * "Mailboxes"): the runtime's side of what RapidReassignment sends between
 * workers.  Progress words also feed the stall detector of every wait.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "rr_hooks.h"

int frr_rt_msg_send(struct frr_rt *rt, int from, int to,
		    const struct frr_rr_msg *m)
{
	int fl = from - rt->rank * rt->T, tr;
	struct frr_worker *wk;
	uint64_t seq, acked;
	size_t slot;
	struct frr_rr_msg *dst;
	int err;

	if (fl < 0 || fl >= rt->T || to < 0 || to >= rt->W)
		return -EINVAL;
	if (frr_rt_failed(rt))
		return frr_rt_failed(rt);
	wk = &rt->ws->wk[fl];
	tr = to / rt->T;
	acked = frr_tp_load_u64(
	    ctl_u64(rt, rt->off_mack + ((size_t)fl * rt->W + to) * 8));
	if (wk->mbox_sent[to] - acked >= FRR_RR_MBOX_DEPTH)
		return -EAGAIN;
	seq = ++wk->mbox_sent[to];
	slot = rt->off_mbox +
	       (((size_t)(to % rt->T) * rt->W + from) * FRR_RR_MBOX_DEPTH +
		(seq - 1) % FRR_RR_MBOX_DEPTH) *
		   64;
	if (tr == rt->rank) {
		dst = (struct frr_rr_msg *)(rt->ctlp + slot);
		memcpy(dst, m, offsetof(struct frr_rr_msg, seq));
		dst->from = from;
		dst->to = to;
		atomic_store_explicit((_Atomic uint64_t *)&dst->seq, seq,
				      memory_order_release);
		return 0;
	}
	dst =
	    (struct frr_rr_msg *)(rt->ctlp + rt->off_mstage + (size_t)fl * 64);
	*dst = *m;
	dst->from = from;
	dst->to = to;
	dst->seq = 0;
	pthread_mutex_lock(&rt->tp_lock);
	err =
	    frr_tp_write(rt->eps[tr], rt->ctl, rt->off_mstage + (size_t)fl * 64,
			 rt->rctl[tr], slot, 64, 0, 0);
	if (!err)
		err = frr_tp_write_u64(rt->eps[tr], rt->rctl[tr],
				       slot + offsetof(struct frr_rr_msg, seq),
				       seq, 0, 0);
	if (!err)
		err = frr_tp_flush(rt->eps[tr], rt->flush_ms);
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		return frr_rt_peer_fail(rt, tr,
					"sending a message to it failed");
	return 0;
}

static int mbox_ack(struct frr_rt *rt, int w, int from, uint64_t n)
{
	int fr = from / rt->T, err;
	size_t off = rt->off_mack + ((size_t)(from % rt->T) * rt->W + w) * 8;

	if (fr == rt->rank) {
		atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, off), n,
				      memory_order_release);
		return 0;
	}
	pthread_mutex_lock(&rt->tp_lock);
	err = frr_tp_write_u64(rt->eps[fr], rt->rctl[fr], off, n, 0, 0);
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		return frr_rt_peer_fail(rt, fr,
					"acknowledging its messages failed");
	return 0;
}

/* The next message of sender v's ring for local worker wl, if any. */
static int ring_take(struct frr_rt *rt, int wl, int v, struct frr_rr_msg *m)
{
	struct frr_worker *wk = &rt->ws->wk[wl];
	uint64_t want = wk->mbox_recv[v] + 1;
	struct frr_rr_msg *s =
	    (struct frr_rr_msg *)(rt->ctlp + rt->off_mbox +
				  (((size_t)wl * rt->W + v) *
				       FRR_RR_MBOX_DEPTH +
				   (want - 1) % FRR_RR_MBOX_DEPTH) *
				      64);

	if (frr_tp_load_u64(&s->seq) != want)
		return 0;
	*m = *s;
	m->from = v; /* never trust a remote-written id */
	m->to = rt->rank * rt->T + wl;
	wk->mbox_recv[v] = want;
	if (want % (FRR_RR_MBOX_DEPTH / 4) == 0) {
		int err = mbox_ack(rt, m->to, v, want);

		if (err)
			return err;
	}
	return 1;
}

int frr_rt_msg_recv(struct frr_rt *rt, int w, struct frr_rr_msg *m,
		    int timeout_ms)
{
	int wl = w - rt->rank * rt->T;
	double t0 = frr_rt_clock_now();

	if (wl < 0 || wl >= rt->T)
		return -EINVAL;
	for (;;) {
		for (int v = 0; v < rt->W; v++) {
			int got = ring_take(rt, wl, v, m);

			if (got)
				return got;
		}
		/* the job failed elsewhere: rr's waits end here */
		if (frr_rt_failed(rt))
			return frr_rt_failed(rt);
		if ((frr_rt_clock_now() - t0) * 1000 >= timeout_ms)
			return 0;
		frr_nap_us(20);
	}
}
