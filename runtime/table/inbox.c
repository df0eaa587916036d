// SPDX-License-Identifier: MIT
/*
 * The server's side of the inbox: every sender worker has K slots in this
 * rank's inbox; each holds one chunk of an update batch (table/batch.c).
 * The server drains a chunk as soon as it is published, in each sender's
 * seq order: copies its header and payload out of the remotely writable
 * slot once, validates the copy, and acknowledges the slot so the sender
 * can reuse it.  The copies wait in rt->tb->store until their clock is applied
 * (table/shard.c), so the inbox is sized by what is in flight on the wire,
 * not by the model: the store holds the changed rows of the clocks not yet
 * applied, which is what SSP must keep anyway.
 *
 * Owners: the slots' seq words are written by the senders (remote writes or
 * a local release store) and read here with acquire loads; rt->tb->consumed,
 * rt->tb->store and rt->tb->sel belong to the server thread.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "table.h"

static struct frr_slot_hdr *slot_hdr(struct frr_rt *rt, int v, int k)
{
	return (struct frr_slot_hdr *)(rt->tb->inboxp +
				       frr_rt_slot_off(rt, rt->rank, v, k));
}

static int corrupt(struct frr_rt *rt, const struct frr_slot_hdr *h, int v,
		   const char *why)
{
	return frr_rt_fail(rt, -EPROTO,
			   "corrupt update batch from worker %d of rank %d "
			   "(sender %d, owner %d, clock %d): %s; mismatched "
			   "binaries or memory corruption",
			   v, v / rt->T, h->sender, h->owner, h->clock, why);
}

/* Every segment in bounds and the payload exactly covered. */
static bool payload_ok(const struct frr_rt *rt, const uint8_t *p, uint64_t n)
{
	uint64_t at = 0, rows;

	while (at < n) {
		struct frr_seg sg;
		uint32_t cols;

		if (n - at < sizeof(sg))
			return false;
		memcpy(&sg, p + at, sizeof(sg));
		if (sg.table >= (uint32_t)rt->tb->ntables ||
		    (sg.kind != FRR_SEG_DENSE && sg.kind != FRR_SEG_SPARSE))
			return false;
		cols = rt->tb->spec[sg.table].cols;
		rows = rt->tb->shard_rows[sg.table * rt->P + rt->rank];
		if (!sg.n || sg.n > rows ||
		    frr_seg_bytes(sg.kind, sg.n, cols) > n - at)
			return false;
		if (sg.kind == FRR_SEG_DENSE && sg.lo > rows - sg.n)
			return false;
		if (sg.kind == FRR_SEG_SPARSE) {
			const uint64_t *id =
			    (const uint64_t *)(p + at + sizeof(sg));

			for (uint64_t i = 0; i < sg.n; i++)
				if (id[i] >= rows)
					return false;
		}
		at += frr_seg_bytes(sg.kind, sg.n, cols);
	}
	return at == n;
}

/*
 * The payload pool.  A drained chunk's copy was a malloc and a free of up
 * to a slot's payload (1 MiB) each; glibc hands such blocks back to the
 * kernel and maps them again at the next clock, so every page of every
 * copy faulted in again (on this VM a fifth of the server's and workers'
 * time in mf's clock, perf, 2026-12-04).  Freed buffers now wait in a free
 * list per size class for the next chunk of their class: a class is an
 * eighth of a power of two (a buffer wastes under 1/8 of its bytes), and
 * the pool holds at most what the store held at its peak, per class.
 */
static unsigned pay_class(uint64_t n, uint64_t *cap)
{
	unsigned e, sub;

	if (n <= 64) {
		*cap = 64;
		return 0;
	}
	e = 63u - (unsigned)__builtin_clzll(n - 1); /* 2^e < n <= 2^(e+1) */
	sub = (unsigned)((n - 1) >> (e - 3)) & 7u;
	*cap = (uint64_t)(9 + sub) << (e - 3);
	return (e - 5) * 8 + sub - 7;
}

void *frr_rt_pay_get(struct frr_rt *rt, uint64_t n)
{
	uint64_t cap;
	unsigned c = pay_class(n, &cap);
	void *p = rt->tb->pay_free[c];

	if (p) {
		memcpy(&rt->tb->pay_free[c], p, sizeof(void *));
		return p;
	}
	return malloc(cap);
}

void frr_rt_chunk_free(struct frr_rt *rt, struct frr_chunk *ck)
{
	if (!ck->lent)
		frr_rt_pay_put(rt, ck->pay, ck->h.bytes);
	ck->pay = NULL;
}

void frr_rt_pay_put(struct frr_rt *rt, void *p, uint64_t n)
{
	uint64_t cap;
	unsigned c = pay_class(n, &cap);

	if (!p)
		return;
	memcpy(p, &rt->tb->pay_free[c], sizeof(void *));
	rt->tb->pay_free[c] = p;
}

static int store_push(struct frr_rt *rt, const struct frr_chunk *ck)
{
	if (rt->tb->nstore == rt->tb->store_cap) {
		size_t cap = rt->tb->store_cap ? 2 * rt->tb->store_cap : 64;
		struct frr_chunk *s = realloc(rt->tb->store, cap * sizeof(*s));
		struct frr_chunk *l = realloc(rt->tb->sel, cap * sizeof(*l));

		if (s)
			rt->tb->store = s;
		if (l)
			rt->tb->sel = l;
		if (!s || !l)
			return frr_rt_fail(rt, -ENOMEM,
					   "rank %d: out of memory keeping %zu "
					   "update batches in flight",
					   rt->rank, rt->tb->nstore);
		rt->tb->store_cap = cap;
	}
	rt->tb->store[rt->tb->nstore++] = *ck;
	rt->tb->ndrained++;
	rt->tb->hold->batch_recv += ck->h.bytes;
	return 0;
}

/* Tell the sender's rank that slot k of worker v is free again. */
static int slot_ack(struct frr_rt *rt, int v, int k, uint64_t seq)
{
	int sr = v / rt->T, err;
	size_t off =
	    rt->off_ack +
	    (((size_t)rt->rank * rt->T + v % rt->T) * rt->tb->K + k) * 8;

	if (sr == rt->rank) {
		atomic_store_explicit((_Atomic uint64_t *)ctl_u64(rt, off), seq,
				      memory_order_release);
		return 0;
	}
	pthread_mutex_lock(&rt->tp_lock);
	err = frr_rt_tp_check(
	    rt, frr_tp_write_u64(rt->eps[sr], rt->rctl[sr], off, seq, 0, 0), sr,
	    "acknowledging a batch");
	pthread_mutex_unlock(&rt->tp_lock);
	return err;
}

/* Mode backup: one more worker's final batch of clock c is here (a whole
 * one: its chunks drain in order).  Under slack 0 no worker starts clock
 * c + 1 before every shard applied c, so the finals of c + 1 reach this
 * shard only after all of c's: one count, of the newest clock, is enough.
 * Every shard gets every worker's final batch, so each rank's server cuts
 * the clock by itself, without a message more. */
static void backup_count(struct frr_rt *rt, const struct frr_slot_hdr *h)
{
	if (!rt->backups || !h->final || !h->last ||
	    h->clock < rt->tb->bk_clock)
		return;
	if (h->clock > rt->tb->bk_clock) {
		rt->tb->bk_clock = h->clock;
		rt->tb->bk_finals = 0;
	}
	if (++rt->tb->bk_finals == rt->W - rt->backups)
		atomic_store_explicit(&rt->tb->bk_cut, h->clock + 1,
				      memory_order_release);
}

/* Sender v's slot k: a worker of this rank's (struct frr_lhand), else the
 * inbox's; its seq word. */
static const _Atomic uint64_t *slot_seq(struct frr_rt *rt, int v, int k)
{
	if (v / rt->T == rt->rank)
		return &rt->tb->lhand[(size_t)(v % rt->T) * rt->tb->K + k].seq;
	return (const _Atomic uint64_t *)&slot_hdr(rt, v, k)->seq;
}

/* Mode lb-bsp: keep the owner's per-item time of its clock (a final batch
 * reaches every shard, so every rank keeps the same word); read by rr/lb.c
 * once this rank's shard applied the clock. */
static void lb_record(struct frr_rt *rt, const struct frr_slot_hdr *h)
{
	float t = (float)h->item_s;
	uint32_t bits;

	if (!rt->lb_history || !h->final || !h->last)
		return;
	memcpy(&bits, &t, sizeof(bits));
	atomic_store_explicit(&rt->lb_item[(size_t)h->owner * FRR_LB_RING +
					   (size_t)h->clock % FRR_LB_RING],
			      ((uint64_t)(uint32_t)h->clock + 1) << 32 | bits,
			      memory_order_relaxed);
}

/* Copy slot k of sender v (its next seq) into the store and free it.  A
 * chunk of a worker of this rank is in a buffer of that worker's (struct
 * frr_lbufs), which stays until its clock is applied: the store keeps it
 * there, without a copy (lent). */
static int drain_slot(struct frr_rt *rt, int v, int k, uint64_t seq)
{
	int lent = v / rt->T == rt->rank;
	const struct frr_slot_hdr *in =
	    lent ? (const struct frr_slot_hdr *)rt->tb
		       ->lhand[(size_t)(v % rt->T) * rt->tb->K + k]
		       .buf
		 : slot_hdr(rt, v, k);
	uint64_t cap = frr_rt_slot_size(rt, rt->rank, v) - FRR_SLOT_HDR;
	struct frr_chunk ck;
	const struct frr_slot_hdr *h = &ck.h;
	int err;

	/* copy once (after seq: the header is published before it), then
	 * check and use only the copy */
	memcpy(&ck.h, in, sizeof(ck.h));
	ck.h.seq = seq;
	if (h->sender != v || h->owner < 0 || h->owner >= rt->W ||
	    h->clock < 0 || h->final < 0 || h->final > 1 || h->nextra < 0 ||
	    h->nextra > rt->W * 64 || h->last < 0 || h->last > 1 ||
	    h->bytes > cap || (h->bytes & 7) ||
	    !(h->item_s >= 0 && h->item_s <= 1e6))
		return corrupt(rt, h, v, "bad header");
	if (h->clock < rt->tb->next_apply)
		return corrupt(rt, h, v, "a clock already applied");
	ck.lent = lent;
	ck.pay =
	    lent ? (uint8_t *)in + FRR_SLOT_HDR : frr_rt_pay_get(rt, h->bytes);
	if (!ck.pay)
		return frr_rt_fail(rt, -ENOMEM,
				   "rank %d: out of memory copying a %llu-byte "
				   "update batch",
				   rt->rank, (unsigned long long)h->bytes);
	if (!lent)
		memcpy(ck.pay, (const uint8_t *)in + FRR_SLOT_HDR, h->bytes);
	if (!payload_ok(rt, ck.pay, h->bytes)) {
		frr_rt_chunk_free(rt, &ck);
		return corrupt(rt, h, v, "bad segments");
	}
	err = store_push(rt, &ck);
	if (err) {
		frr_rt_chunk_free(rt, &ck);
		return err;
	}
	backup_count(rt, h);
	lb_record(rt, h);
	rt->tb->consumed[v] = seq;
	return slot_ack(rt, v, k, seq);
}

int frr_rt_inbox_drain(struct frr_rt *rt)
{
	int got = 0;

	for (int v = 0; v < rt->W; v++)
		for (int k = 0; k < rt->tb->K; k++) {
			uint64_t want = rt->tb->consumed[v] + 1;
			int err;

			if (frr_tp_load_u64(slot_seq(rt, v, k)) != want)
				continue;
			err = drain_slot(rt, v, k, want);
			if (err)
				return err;
			got = 1;
			k = -1; /* its next chunk may sit in any slot */
		}
	return got;
}

size_t frr_rt_inbox_select(struct frr_rt *rt, int c)
{
	int W = rt->W;
	/* per-worker tallies, allocated once: this runs every loop turn */
	int *finals = rt->tb->scratch, *extra = finals + W, *want = extra + W;
	size_t n = 0, keep = 0;

	if (rt->tb->ndrained == rt->tb->nchecked)
		return 0; /* as incomplete as at the last look */
	memset(rt->tb->scratch, 0, 3 * (size_t)W * sizeof(int));
	for (size_t i = 0; i < rt->tb->nstore; i++) {
		const struct frr_slot_hdr *h = &rt->tb->store[i].h;

		if (h->clock != c || !h->last)
			continue;
		if (h->final) {
			finals[h->owner]++;
			want[h->owner] = h->nextra;
		} else {
			extra[h->owner]++;
		}
	}
	for (int w = 0; w < W; w++)
		if (finals[w] != 1 || extra[w] != want[w]) {
			rt->tb->nchecked = rt->tb->ndrained;
			return 0;
		}
	/* complete (chunks of a sender drain in order, so a batch whose
	 * last chunk is here is whole): move clock c's chunks to sel */
	for (size_t i = 0; i < rt->tb->nstore; i++) {
		if (rt->tb->store[i].h.clock == c)
			rt->tb->sel[n++] = rt->tb->store[i];
		else
			rt->tb->store[keep++] = rt->tb->store[i];
	}
	rt->tb->nstore = keep;
	return n;
}

void frr_rt_inbox_release(struct frr_rt *rt, size_t n)
{
	for (size_t i = 0; i < n; i++)
		frr_rt_chunk_free(rt, &rt->tb->sel[i]);
}

void frr_rt_inbox_fini(struct frr_rt *rt)
{
	for (size_t i = 0; i < rt->tb->nstore; i++)
		if (!rt->tb->store[i].lent)
			free(rt->tb->store[i].pay);
	for (unsigned c = 0; c < FRR_PAY_CLASSES; c++)
		while (rt->tb->pay_free[c]) {
			void *p = rt->tb->pay_free[c];

			memcpy(&rt->tb->pay_free[c], p, sizeof(void *));
			free(p);
		}
	free(rt->tb->store);
	free(rt->tb->sel);
	rt->tb->store = rt->tb->sel = NULL;
	rt->tb->nstore = rt->tb->store_cap = 0;
}
