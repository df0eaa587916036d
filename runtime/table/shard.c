// SPDX-License-Identifier: MIT
/*
 * A rank's shard of every table (row r lives on rank r % P at local index
 * r / P): initial rows, applying a whole clock's batches in worker order
 * (BSP is bit-for-bit deterministic whatever the timing), and pushing the
 * fresh rows into every rank's replica.  Runs on the server thread.
 *
 * A push of clock c: "pushing" word = c + 1 to every rank (and flushed:
 * visible before any row), the rows, then "done" = c + 1 (G3: after the
 * rows).  Caches use the pair to take copies of an exact clock
 * (table/cache.c).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "rt.h"

int frr_rt_owner_rank(const struct frr_rt *rt, uint64_t row)
{
	return (int)(row % (uint64_t)rt->P);
}

const float *frr_rt_replica_row(const struct frr_rt *rt, int t, uint64_t row)
{
	int o = frr_rt_owner_rank(rt, row);
	uint64_t li = row / (uint64_t)rt->P;

	return (const float *)(rt->replp + rt->repl_off[t * rt->P + o] +
			       li * rt->spec[t].cols * sizeof(float));
}

int frr_rt_tables_init(struct frr_rt *rt)
{
	for (int t = 0; t < rt->ntables; t++) {
		uint64_t n = rt->shard_rows[t * rt->P + rt->rank];
		uint32_t cols = rt->spec[t].cols;

		rt->master[t] = calloc(n * cols + 1, sizeof(float));
		if (!rt->master[t])
			return -ENOMEM;
		if (rt->spec[t].rule == FRR_UPDATE_ADAGRAD) {
			rt->accum[t] = calloc(n * cols + 1, sizeof(float));
			if (!rt->accum[t])
				return -ENOMEM;
		}
		if (rt->spec[t].init_row)
			for (uint64_t li = 0; li < n; li++)
				rt->spec[t].init_row(
				    rt->app_state, t, li * rt->P + rt->rank,
				    rt->master[t] + li * cols, cols);
	}
	rt->sel = malloc((size_t)rt->W * rt->K * sizeof(*rt->sel));
	return rt->sel ? 0 : -ENOMEM;
}

void frr_rt_tables_fini(struct frr_rt *rt)
{
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		free(rt->master[t]);
		free(rt->accum[t]);
		rt->master[t] = rt->accum[t] = NULL;
	}
	free(rt->sel);
	rt->sel = NULL;
}

/*
 * The local replica is overwritten while this rank's workers may copy from
 * it: the same benign race peers cause with their one-sided writes, which
 * TSan cannot see.  So this copy is not instrumented either, and must not
 * become a memcpy call.
 */
__attribute__((no_sanitize("thread"), FRR_NO_MEMCPY_IDIOM)) static void
replica_copy(void *dst, const void *src, size_t n)
{
	uint32_t *d = dst;
	const uint32_t *s = src;

	for (size_t i = 0; i < n / 4; i++)
		d[i] = s[i];
}

int frr_rt_push_rows(struct frr_rt *rt, int t, uint64_t lo, uint64_t hi)
{
	size_t rb = rt->spec[t].cols * sizeof(float);
	size_t off = rt->repl_off[t * rt->P + rt->rank] + lo * rb;
	int err = 0;

	if (hi <= lo)
		return 0;
	replica_copy(rt->replp + off, rt->master[t] + lo * rt->spec[t].cols,
		     (hi - lo) * rb);
	pthread_mutex_lock(&rt->tp_lock);
	for (int r = 0; r < rt->P && !err; r++) {
		if (r == rt->rank)
			continue;
		err = frr_rt_tp_check(rt,
				      frr_tp_write(rt->eps[r], rt->repl, off,
						   rt->rrepl[r], off,
						   (hi - lo) * rb, 0, 0),
				      r, "pushing rows");
	}
	pthread_mutex_unlock(&rt->tp_lock);
	return err;
}

/* ---- applying a clock -----------------------------------------------------
 */
static struct frr_slot_hdr *slot_hdr(struct frr_rt *rt, int v, int k)
{
	return (struct frr_slot_hdr *)(rt->inboxp +
				       ((size_t)v * rt->K + k) *
					   rt->slot_bytes[rt->rank]);
}

static void apply_slot(struct frr_rt *rt, const struct frr_slot_sel *s,
		       uint64_t *dlo, uint64_t *dhi)
{
	const uint8_t *base = (const uint8_t *)slot_hdr(rt, s->v, s->k);
	const struct frr_slot_hdr *h = &s->h; /* the validated copy */

	for (int t = 0; t < rt->ntables; t++) {
		uint32_t cols = rt->spec[t].cols;
		const float *g =
		    (const float *)(base +
				    rt->pay_off[rt->rank * FRR_MAX_TABLES + t]);
		float *m = rt->master[t];
		uint64_t lo = h->lo[t], hi = h->hi[t];

		if (hi <= lo)
			continue;
		if (lo < dlo[t])
			dlo[t] = lo;
		if (hi > dhi[t])
			dhi[t] = hi;
		if (rt->spec[t].rule == FRR_UPDATE_ADAGRAD) {
			float *acc = rt->accum[t];
			float lr = rt->spec[t].lr, eps = rt->spec[t].eps;

			for (uint64_t i = lo * cols; i < hi * cols; i++) {
				if (g[i] == 0.0f)
					continue;
				acc[i] += g[i] * g[i];
				m[i] -= lr * g[i] / sqrtf(eps + acc[i]);
			}
		} else {
			for (uint64_t i = lo * cols; i < hi * cols; i++)
				m[i] += g[i];
		}
	}
}

static int cmp_slot(const void *a, const void *b)
{
	const struct frr_slot_hdr *h = &((const struct frr_slot_sel *)a)->h;
	const struct frr_slot_hdr *g = &((const struct frr_slot_sel *)b)->h;

	if (h->owner != g->owner)
		return h->owner - g->owner;
	if (h->final != g->final)
		return g->final - h->final; /* owner's own batch first */
	if (h->sender != g->sender)
		return h->sender - g->sender;
	return h->seq < g->seq ? -1 : h->seq > g->seq;
}

static int validate_hdr(struct frr_rt *rt, const struct frr_slot_hdr *h, int v)
{
	bool ok = h->sender == v && h->owner >= 0 && h->owner < rt->W &&
		  h->clock >= 0 && h->final >= 0 && h->final <= 1 &&
		  h->nextra >= 0 && h->nextra <= rt->W * rt->K &&
		  h->ntables == rt->ntables;

	for (int t = 0; ok && t < rt->ntables; t++)
		ok = h->lo[t] <= h->hi[t] &&
		     h->hi[t] <= rt->shard_rows[t * rt->P + rt->rank];
	if (ok)
		return 0;
	return frr_rt_fail(rt, -EPROTO,
			   "corrupt update batch from worker %d of rank %d "
			   "(sender %d, owner %d, clock %d): mismatched "
			   "binaries or memory corruption",
			   v, v / rt->T, h->sender, h->owner, h->clock);
}

/* Select the unconsumed slots of clock c into rt->sel; returns how many, 0
 * if some batch of c is still missing, < 0 on a corrupt slot. */
static int select_clock(struct frr_rt *rt, int c)
{
	int W = rt->W, n = 0;
	/* per-worker tallies, allocated once: this runs every loop turn */
	int *finals = rt->scratch, *extra = finals + W, *want = extra + W;

	memset(rt->scratch, 0, 3 * (size_t)W * sizeof(int));
	for (int v = 0; v < W; v++)
		for (int k = 0; k < rt->K; k++) {
			const struct frr_slot_hdr *in = slot_hdr(rt, v, k);
			struct frr_slot_sel *s = &rt->sel[n];
			const struct frr_slot_hdr *h = &s->h;
			uint64_t seq = frr_tp_load_u64(&in->seq);
			int err;

			if (seq <= rt->consumed[v * rt->K + k])
				continue;
			/* copy once (after seq: the header is published
			 * before it), then check and use only the copy */
			memcpy(&s->h, in, sizeof(s->h));
			s->h.seq = seq;
			err = validate_hdr(rt, h, v);
			if (err)
				return err;
			if (h->clock != c)
				continue;
			s->v = v;
			s->k = k;
			n++;
			if (h->final) {
				finals[h->owner]++;
				want[h->owner] = h->nextra;
			} else {
				extra[h->owner]++;
			}
		}
	for (int w = 0; w < W; w++)
		if (finals[w] != 1 || extra[w] != want[w])
			return 0;
	return n;
}

/* Free the applied slots: acks go to the senders' ranks. */
static int ack_slots(struct frr_rt *rt, int n)
{
	int err = 0;

	for (int i = 0; i < n && !err; i++) {
		int v = rt->sel[i].v, k = rt->sel[i].k;
		const struct frr_slot_hdr *h = &rt->sel[i].h;
		int sr = v / rt->T;
		size_t off =
		    rt->off_ack +
		    (((size_t)rt->rank * rt->T + v % rt->T) * rt->K + k) * 8;

		rt->consumed[v * rt->K + k] = h->seq;
		if (sr == rt->rank) {
			atomic_store_explicit(
			    (_Atomic uint64_t *)ctl_u64(rt, off), h->seq,
			    memory_order_release);
			continue;
		}
		pthread_mutex_lock(&rt->tp_lock);
		err =
		    frr_rt_tp_check(rt,
				    frr_tp_write_u64(rt->eps[sr], rt->rctl[sr],
						     off, h->seq, 0, 0),
				    sr, "acknowledging a batch");
		pthread_mutex_unlock(&rt->tp_lock);
	}
	return err;
}

int frr_rt_try_apply(struct frr_rt *rt, int c)
{
	uint64_t dlo[FRR_MAX_TABLES], dhi[FRR_MAX_TABLES];
	int n = select_clock(rt, c), err;

	if (n <= 0)
		return n;
	qsort(rt->sel, (size_t)n, sizeof(*rt->sel), cmp_slot);
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		dlo[t] = UINT64_MAX;
		dhi[t] = 0;
	}
	for (int i = 0; i < n; i++)
		apply_slot(rt, &rt->sel[i], dlo, dhi);
	/* "pushing" before any row: the flush below also settles the
	 * previous push's source rows before we reuse them */
	err = frr_rt_ctl_broadcast(rt, rt->off_push + (size_t)rt->rank * 64,
				   (uint64_t)c + 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!err)
		err = frr_rt_flush_all(rt, rt->flush_ms);
	for (int t = 0; t < rt->ntables && !err; t++)
		err = frr_rt_push_rows(rt, t, dlo[t], dhi[t]);
	if (!err)
		err = ack_slots(rt, n);
	/* G3: shard_done travels after the rows on each endpoint */
	if (!err)
		err = frr_rt_ctl_broadcast(
		    rt, rt->off_done + (size_t)rt->rank * 64, (uint64_t)c + 1);
	return err ? err : 1;
}
