// SPDX-License-Identifier: MIT
/*
 * Flushing a worker cache: one update batch per shard, written into a slot
 * of the shard's inbox that the sender owns (docs/runtime.md "One clock").
 * A written row's update is push_scale x (value - value at the fetch) for
 * ADD tables (no per-step delta stores in the app's loop), the gradient sum
 * for AdaGrad.  The own end-of-clock batch of a FRR_TABLE_SEE_OWN_PENDING
 * table also records what it pushed, for later fetches (table/cache.c).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "flexrr/log.h"
#include "rt.h"

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * A free slot of ours in shard o's inbox (its last batch taken), waiting
 * for one if all K hold batches.  Any free slot, not the ring's next: a
 * shard takes batches clock by clock, and a worker sends them out of clock
 * order (help for an older clock after its own newer batches).  Ring order
 * made a helper's batch of clock c wait for the slot of a batch of clock
 * c or later, which the shard takes only once clock c is complete, that
 * is, after this very batch: a deadlock (issue 14, seen in 2 of 100 loop
 * runs under load).  With any free slot a sender waits only when it has K
 * batches untaken, which the rr engine's help-slot budget prevents.
 */
static int free_slot(struct frr_rt *rt, struct frr_worker *wk, int o, int *out)
{
	const uint64_t *last = wk->slot_seq + (size_t)o * rt->K;
	size_t off = rt->off_ack + ((size_t)o * rt->T + wk->local) * rt->K * 8;
	struct frr_stall st;

	frr_rt_stall_init(rt, &st);
	for (;;) {
		for (int k = 0; k < rt->K; k++)
			if (!last[k] ||
			    frr_tp_load_u64(ctl_u64(rt, off + (size_t)k * 8)) >=
				last[k]) {
				*out = k;
				return 0;
			}
		if (frr_rt_failed(rt))
			return frr_rt_failed(rt);
		if (frr_rt_stalled(rt, &st))
			return frr_rt_fail(rt, -ETIMEDOUT,
					   "worker %d waited %d ms for rank %d "
					   "to take one of its %d update "
					   "batches: rank %d hangs",
					   wk->id, rt->o->timeout_ms, o, rt->K,
					   o);
		nap_us(50);
	}
}

/* The scale of this batch's changes to table tc. */
static float batch_scale(const struct frr_ctx *c, const struct frr_tcache *tc)
{
	float s = tc->scale;

	if (tc->flags & FRR_TABLE_SCALE_BY_SHARE)
		s *= (float)c->cache->items / (float)c->rt->parts[c->part].n;
	return s;
}

/* Payload rows [lo, hi) of shard o: updates of written rows, zeros else. */
static void fill_rows(struct frr_ctx *c, struct frr_tcache *tc, int o,
		      uint64_t lo, uint64_t hi, float *pay, int own)
{
	const uint32_t cols = tc->cols, want = (c->cache->gen << 1) | 1;
	const int P = c->rt->P, ring = c->cache->ring;
	const float scale = batch_scale(c, tc);
	const int add = tc->rule == FRR_UPDATE_ADD;

	for (uint64_t li = lo; li < hi; li++) {
		uint64_t row = li * (uint64_t)P + (uint64_t)o;
		float *out = pay + li * cols;
		const float *v = tc->val + row * cols,
			    *s = tc->snap + row * cols;

		if (tc->stamp[row] != want) {
			memset(out, 0, cols * sizeof(float));
			continue;
		}
		if (!add)
			memcpy(out, s, cols * sizeof(float));
		else if (scale == 1.0f)
			for (uint32_t j = 0; j < cols; j++)
				out[j] = v[j] - s[j];
		else
			for (uint32_t j = 0; j < cols; j++)
				out[j] = (v[j] - s[j]) * scale;
		if (own && tc->ptag) {
			uint64_t at =
			    row * (uint64_t)ring + (uint64_t)(c->clock % ring);

			memcpy(tc->pend + at * cols, out, cols * sizeof(float));
			tc->ptag[at] = c->clock + 1;
		}
	}
}

/* Fill the slot header and payload for shard o; returns payload bytes. */
static uint64_t fill_slot(struct frr_ctx *c, uint8_t *dst, int o, int final,
			  int nextra)
{
	struct frr_rt *rt = c->rt;
	struct frr_slot_hdr *h = (struct frr_slot_hdr *)dst;
	uint64_t bytes = 0;

	h->sender = c->wk->id;
	h->owner = c->part;
	if (rt->test_forge_batch == rt->rank && c->clock == 1)
		h->owner = rt->W + 3;
	h->clock = c->clock;
	h->final = final;
	h->nextra = nextra;
	h->ntables = rt->ntables;
	for (int t = 0; t < rt->ntables; t++) {
		struct frr_tcache *tc = &c->cache->t[t];
		uint64_t lo = tc->lo[o], hi = tc->hi[o];

		if (hi <= lo)
			lo = hi = 0;
		h->lo[t] = lo;
		h->hi[t] = hi;
		fill_rows(c, tc, o, lo, hi,
			  (float *)(dst + rt->pay_off[o * FRR_MAX_TABLES + t]),
			  final && c->cache == &c->wk->own);
		bytes += (hi - lo) * tc->cols * sizeof(float);
		tc->lo[o] = UINT64_MAX;
		tc->hi[o] = 0;
	}
	return bytes;
}

/* Write the staged slot into shard o's inbox, then its seq (G3). */
static int slot_write(struct frr_rt *rt, struct frr_worker *wk, int o,
		      size_t soff, uint64_t seq)
{
	const struct frr_slot_hdr *h = frr_tp_mr_ptr(wk->stage);
	int err = 0;

	pthread_mutex_lock(&rt->tp_lock);
	for (int t = 0; t < rt->ntables && !err; t++) {
		size_t rb = rt->spec[t].cols * sizeof(float);
		size_t po = rt->pay_off[o * FRR_MAX_TABLES + t];

		if (h->hi[t] > h->lo[t])
			err = frr_tp_write(rt->eps[o], wk->stage,
					   po + h->lo[t] * rb, rt->rinbox[o],
					   soff + po + h->lo[t] * rb,
					   (h->hi[t] - h->lo[t]) * rb, 0, 0);
	}
	if (!err)
		err = frr_tp_write(rt->eps[o], wk->stage, 0, rt->rinbox[o],
				   soff, sizeof(*h), 0, 0);
	if (!err)
		err = frr_tp_write_u64(rt->eps[o], rt->rinbox[o], soff, seq, 0,
				       0);
	if (!err)
		err = frr_tp_flush(rt->eps[o], rt->flush_ms);
	pthread_mutex_unlock(&rt->tp_lock);
	if (err)
		return frr_rt_peer_fail(rt, o, "sending updates to it failed");
	return 0;
}

int frr_rt_batch_send(struct frr_ctx *c, int final, int nextra)
{
	struct frr_rt *rt = c->rt;
	struct frr_worker *wk = c->wk;
	struct frr_wclock *rec = c->rec;
	/* rec belongs to the server once the local slot is published: every
	 * write to it happens before that release store */
	_Atomic uint64_t *local_seq = NULL;
	uint64_t lseq = 0, bytes = 0;
	double t0 = frr_rt_clock_now();
	int err = 0;

	for (int o = 0; o < rt->P && !err; o++) {
		uint64_t seq = ++wk->sent_seq[o];
		size_t soff;
		uint8_t *dst;
		int k = 0;

		err = free_slot(rt, wk, o, &k);
		if (err)
			break;
		wk->slot_seq[(size_t)o * rt->K + k] = seq;
		soff = ((size_t)wk->id * rt->K + k) * rt->slot_bytes[o];
		dst = o == rt->rank ? rt->inboxp + soff
				    : frr_tp_mr_ptr(wk->stage);
		if (o != rt->rank)
			((struct frr_slot_hdr *)dst)->seq = 0;
		bytes += fill_slot(c, dst, o, final, nextra);
		if (o == rt->rank) {
			local_seq =
			    (_Atomic uint64_t *)&((struct frr_slot_hdr *)dst)
				->seq;
			lseq = seq;
			continue;
		}
		err = slot_write(rt, wk, o, soff, seq);
	}
	rec->updates += c->cache->updates;
	rec->bytes += bytes;
	rec->flush_s += frr_rt_clock_now() - t0;
	frr_cache_next_batch(c->cache);
	if (!err && local_seq)
		atomic_store_explicit(local_seq, lseq, memory_order_release);
	return err;
}
