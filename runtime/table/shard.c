// SPDX-License-Identifier: MIT
/*
 * A rank's shard of every table (row r lives on rank r % P at local index
 * r / P): initial rows, applying a whole clock's batches in worker order
 * (BSP is bit-for-bit deterministic whatever the timing), and pushing the
 * fresh rows into the ranks that hold them (table/hold.c).  Runs on the
 * server thread.
 *
 * A push of clock c: "pushing" word = c + 1 to every rank (and flushed:
 * visible before any row), the rows, then "done" = c + 1 (G3: after the
 * rows).  Caches use the pair to take copies of an exact clock
 * (table/cache.c).
 *
 * Eager (--eager, SSP only): a read may show newer updates than the bound
 * guarantees, so the shard applies each batch as soon as all of its chunks
 * are here, in arrival order, and pushes the rows it changed at once (as
 * Bosen's ESSP does): reads see every update the shard has, not only those
 * of complete clocks.  Clock c is still "done" only once every batch of it
 * is applied, so the SSP waits and the stale-read check do not change.
 * Read-my-writes stays exact: a worker adds what it pushed that its copy
 * does not hold, which is then its own batches the shard has not applied
 * rather than its clocks not done.  So around each round that applies an
 * own batch of worker v, the shard writes v's "applying" word (flushed,
 * before any row changes) and, after the rows are pushed, its "applied"
 * word (G3): a seqlock per (shard, worker), read by table/cache.c.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "table.h"
#include "trace.h"

int frr_rt_owner_rank(const struct frr_rt *rt, int t, uint64_t row)
{
	return frr_place_owner(rt->tb->hold, rt->P, t, row);
}

uint64_t frr_rt_local_index(const struct frr_rt *rt, int t, uint64_t row)
{
	return frr_place_local(rt->tb->hold, rt->P, t, row);
}

int frr_rt_tables_init(struct frr_rt *rt)
{
	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t n = rt->tb->shard_rows[t * rt->P + rt->rank];
		uint32_t cols = rt->tb->spec[t].cols;

		/* the shard's rows are this rank's replica of them: the
		 * remote pushes read them from there (one copy, not two) */
		rt->tb->master[t] =
		    (float *)(rt->tb->replp +
			      rt->tb->repl_off[t * rt->P + rt->rank]);
		memset(rt->tb->master[t], 0, n * cols * sizeof(float));
		if (rt->tb->spec[t].rule == FRR_UPDATE_ADAGRAD) {
			rt->tb->accum[t] = calloc(n * cols + 1, sizeof(float));
			if (!rt->tb->accum[t])
				return -ENOMEM;
		}
		/* the shard's compensation (not checkpointed: a resumed run
		 * starts from the rounded values, one rounding off) */
		if ((rt->tb->spec[t].flags & FRR_TABLE_COMPENSATED) &&
		    !(rt->tb->comp[t] = calloc(n * cols + 1, sizeof(float))))
			return -ENOMEM;
		if (rt->tb->spec[t].init_row)
			for (uint64_t li = 0; li < n; li++)
				rt->tb->spec[t].init_row(
				    rt->app_state, t,
				    frr_place_row(rt->tb->hold, rt->P, t,
						  rt->rank, li),
				    rt->tb->master[t] + li * cols, cols);
	}
	return 0;
}

void frr_rt_tables_fini(struct frr_rt *rt)
{
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		free(rt->tb->accum[t]);
		free(rt->tb->comp[t]);
		rt->tb->master[t] = rt->tb->accum[t] = rt->tb->comp[t] = NULL;
	}
	frr_rt_inbox_fini(rt);
	frr_direct_fini(rt);
	frr_rt_hold_fini(rt);
}

/* ---- applying a clock -----------------------------------------------------
 */
/* Rows [a, a + n) of g (n x cols) into row li.. of table t's shard. */
static void apply_rows(struct frr_rt *rt, int t, uint64_t li, const float *g,
		       uint64_t n)
{
	uint32_t cols = rt->tb->spec[t].cols;
	float *m = rt->tb->master[t] + li * cols;

	if (rt->tb->spec[t].rule == FRR_UPDATE_ADAGRAD) {
		float *acc = rt->tb->accum[t] + li * cols;
		float lr = rt->tb->spec[t].lr, eps = rt->tb->spec[t].eps;

		for (uint64_t i = 0; i < n * cols; i++) {
			if (g[i] == 0.0f)
				continue;
			acc[i] += g[i] * g[i];
			m[i] -= lr * g[i] / sqrtf(eps + acc[i]);
		}
	} else if (rt->tb->spec[t].rule == FRR_UPDATE_SET) {
		/* the batch's values: the last batch in apply order wins */
		memcpy(m, g, n * cols * sizeof(float));
	} else if (rt->tb->comp[t]) { /* FRR_TABLE_COMPENSATED */
		float *k = rt->tb->comp[t] + li * cols;

		for (uint64_t i = 0; i < n * cols; i++)
			frr_kahan_add(&m[i], &k[i], g[i]);
	} else {
		for (uint64_t i = 0; i < n * cols; i++)
			m[i] += g[i];
	}
}

/* Rows [li, li + n) of a batch (header h) into table t's shard; where
 * the table has rows their own worker adds in place (table/direct.c), one
 * by one, skipping those, which only a helper's batch of the rows' own
 * partition may change. */
static void apply_some(struct frr_rt *rt, int t, uint64_t li, const float *g,
		       uint64_t n, const struct frr_slot_hdr *h)
{
	uint32_t cols = rt->tb->spec[t].cols;

	if (!frr_direct_has(rt, t)) {
		apply_rows(rt, t, li, g, n);
		return;
	}
	for (uint64_t i = 0; i < n; i++)
		if (!frr_direct_skip(rt, t, li + i, g + i * cols, h->owner,
				     !h->final))
			apply_rows(rt, t, li + i, g + i * cols, 1);
}

/* One drained chunk (validated when drained: table/inbox.c). */
static void apply_chunk(struct frr_rt *rt, const struct frr_chunk *ck,
			uint64_t *dlo, uint64_t *dhi)
{
	const uint8_t *p = ck->pay;
	int q = frr_direct_lock(rt, &ck->h);

	for (uint64_t at = 0; at < ck->h.bytes;) {
		struct frr_seg sg;
		uint32_t cols;
		const uint8_t *d;

		memcpy(&sg, p + at, sizeof(sg));
		cols = rt->tb->spec[sg.table].cols;
		d = p + at + sizeof(sg);
		if (sg.kind == FRR_SEG_DENSE) {
			apply_some(rt, (int)sg.table, sg.lo, (const float *)d,
				   sg.n, &ck->h);
			if (sg.lo < dlo[sg.table])
				dlo[sg.table] = sg.lo;
			if (sg.lo + sg.n > dhi[sg.table])
				dhi[sg.table] = sg.lo + sg.n;
		} else {
			const uint64_t *id = (const uint64_t *)d;
			const float *g = (const float *)(id + sg.n);

			for (uint64_t i = 0; i < sg.n; i++) {
				apply_some(rt, (int)sg.table, id[i],
					   g + i * cols, 1, &ck->h);
				if (id[i] < dlo[sg.table])
					dlo[sg.table] = id[i];
				if (id[i] + 1 > dhi[sg.table])
					dhi[sg.table] = id[i] + 1;
			}
		}
		at += frr_seg_bytes(sg.kind, sg.n, cols);
	}
	frr_direct_unlock(rt, q);
}

/* The apply order, whatever the arrival order: owner, its own batch first,
 * sender, seq (a batch's chunks in order).  BSP is bit-for-bit
 * deterministic. */
static int cmp_chunk(const void *a, const void *b)
{
	const struct frr_slot_hdr *h = &((const struct frr_chunk *)a)->h;
	const struct frr_slot_hdr *g = &((const struct frr_chunk *)b)->h;

	if (h->owner != g->owner)
		return h->owner - g->owner;
	if (h->final != g->final)
		return g->final - h->final; /* owner's own batch first */
	if (h->sender != g->sender)
		return h->sender - g->sender;
	return h->seq < g->seq ? -1 : h->seq > g->seq;
}

/* Eager: worker v's word `end` (0 applying, 1 applied) of this shard. */
static int eapp_write(struct frr_rt *rt, int v, int end, uint64_t val)
{
	int r = v / rt->T, err;
	uint64_t *w = frr_rt_eapp_word(rt, rt->rank, v % rt->T, end);

	if (r == rt->rank) {
		atomic_store_explicit((_Atomic uint64_t *)w, val,
				      memory_order_release);
		return 0;
	}
	pthread_mutex_lock(&rt->tp_lock);
	err = frr_rt_tp_check(
	    rt,
	    frr_tp_write_u64(rt->eps[r], rt->rctl[r],
			     (size_t)((uint8_t *)w - rt->ctlp), val, 0, 0),
	    r, "telling a worker its batch is applied");
	pthread_mutex_unlock(&rt->tp_lock);
	return err;
}

/* Eager: stored chunk i is to be applied now: not yet, and its batch is
 * whole (its sender's last "last" chunk is at last[sender], or later). */
static bool eager_due(const struct frr_rt *rt, const size_t *last, size_t i)
{
	const struct frr_chunk *ck = &rt->tb->store[i];

	return ck->pay && last[ck->h.sender] != SIZE_MAX &&
	       i <= last[ck->h.sender];
}

/* Eager: find the whole batches drained and not applied yet (each
 * sender's chunks up to its last "last" chunk: they drain in seq order),
 * and in own[v] 1 + the newest own clock of v among them: how many. */
static size_t eager_pick(struct frr_rt *rt, size_t *last, size_t *own)
{
	size_t n = 0;

	for (int v = 0; v < rt->W; v++)
		last[v] = SIZE_MAX, own[v] = 0;
	for (size_t i = 0; i < rt->tb->nstore; i++)
		if (rt->tb->store[i].pay && rt->tb->store[i].h.last)
			last[rt->tb->store[i].h.sender] = i;
	for (size_t i = 0; i < rt->tb->nstore; i++) {
		const struct frr_slot_hdr *h = &rt->tb->store[i].h;

		if (!eager_due(rt, last, i))
			continue;
		n++;
		if (h->final && (size_t)h->clock + 1 > own[h->sender])
			own[h->sender] = (size_t)h->clock + 1;
	}
	return n;
}

int frr_rt_eager_apply(struct frr_rt *rt)
{
	uint64_t dlo[FRR_MAX_TABLES], dhi[FRR_MAX_TABLES];
	size_t *last = rt->tb->eager_last, *own = last + rt->W;
	int err = 0, owns = 0;
	double t0;

	if (!eager_pick(rt, last, own))
		return 0;
	t0 = frr_rt_clock_now();
	for (int v = 0; v < rt->W && !err; v++)
		if (own[v]) {
			err = eapp_write(rt, v, 0, own[v]);
			owns = 1;
		}
	/* the applying words before any row changes, and the previous
	 * push's writes (which read these rows) settled */
	atomic_thread_fence(memory_order_seq_cst);
	if (!err && owns)
		err = frr_rt_flush_all(rt, rt->flush_ms);
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		dlo[t] = UINT64_MAX;
		dhi[t] = 0;
	}
	for (size_t i = 0; i < rt->tb->nstore && !err; i++) {
		struct frr_chunk *ck = &rt->tb->store[i];

		if (!eager_due(rt, last, i))
			continue;
		apply_chunk(rt, ck, dlo, dhi);
		frr_rt_chunk_free(rt, ck); /* applied */
	}
	for (int t = 0; t < rt->tb->ntables && !err; t++)
		err = frr_rt_push_rows(rt, t, dlo[t], dhi[t]);
	/* G3: each applied word travels after the rows */
	for (int v = 0; v < rt->W && !err; v++)
		if (own[v])
			err = eapp_write(rt, v, 1, own[v]);
	rt->tb->hold->apply_now += frr_rt_clock_now() - t0;
	return err ? err : 1;
}

/* Clock c is applied on this shard and its rows pushed: its stats (the
 * row bytes pushed; the seconds spent, `spent` before t0), then done =
 * c + 1 (G3: after the rows on each endpoint).  1, or the error. */
static int clock_done(struct frr_rt *rt, int c, double t0, double spent)
{
	int err;

	rt->tb->hold->push_ring[c % FRR_RT_STAT_RING] = rt->tb->hold->push_now;
	rt->tb->hold->push_now = 0;
	err = frr_rt_ctl_broadcast(rt, rt->off_done + (size_t)rt->rank * 64,
				   (uint64_t)c + 1);
	rt->tb->hold->apply_ring[c % FRR_RT_STAT_RING] =
	    spent + frr_rt_clock_now() - t0;
	return err ? err : 1;
}

/* Eager: clock c's batches are all applied; say it (done = c + 1). */
static int eager_complete(struct frr_rt *rt, int c)
{
	size_t n;
	double spent;
	int err = frr_rt_eager_apply(rt);

	if (err < 0)
		return err;
	n = frr_rt_inbox_select(rt, c);
	if (!n)
		return 0;
	frr_rt_inbox_release(rt, n);
	spent = rt->tb->hold->apply_now;
	rt->tb->hold->apply_now = 0;
	return clock_done(rt, c, frr_rt_clock_now(), spent);
}

int frr_rt_try_apply(struct frr_rt *rt, int c)
{
	uint64_t dlo[FRR_MAX_TABLES], dhi[FRR_MAX_TABLES], tr0;
	size_t n;
	double t0;
	int err;

	if (rt->eager)
		return eager_complete(rt, c);
	n = frr_rt_inbox_select(rt, c);
	if (!n)
		return 0;
	t0 = frr_rt_clock_now();
	tr0 = frr_trace_now();
	qsort(rt->tb->sel, n, sizeof(*rt->tb->sel), cmp_chunk);
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		dlo[t] = UINT64_MAX;
		dhi[t] = 0;
	}
	/* "pushing" before any row changes (the shard's rows are the local
	 * replica): the flush also settles the previous push's writes, which
	 * read these rows, before the apply overwrites them */
	err = frr_rt_ctl_broadcast(rt, rt->off_push + (size_t)rt->rank * 64,
				   (uint64_t)c + 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!err)
		err = frr_rt_flush_all(rt, rt->flush_ms);
	for (size_t i = 0; i < n && !err; i++)
		apply_chunk(rt, &rt->tb->sel[i], dlo, dhi);
	frr_rt_inbox_release(rt, n);
	/* and the rows this rank's workers added in place in clock c */
	frr_direct_range(rt, c, dlo, dhi);
	if (!err)
		err = frr_direct_check(rt);
	rt->tb->hold->push_now = 0;
	for (int t = 0; t < rt->tb->ntables && !err; t++)
		err = frr_rt_push_rows(rt, t, dlo[t], dhi[t]);
	err = err ? err : clock_done(rt, c, t0, 0);
	frr_trace_rec(rt->tb->trace, FRR_TR_APPLY, tr0, frr_trace_now(), c, -1,
		      n, 0);
	return err;
}
