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
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "rt.h"

int frr_rt_owner_rank(const struct frr_rt *rt, int t, uint64_t row)
{
	return frr_place_owner(rt->hold, rt->P, t, row);
}

uint64_t frr_rt_local_index(const struct frr_rt *rt, int t, uint64_t row)
{
	return frr_place_local(rt->hold, rt->P, t, row);
}

int frr_rt_tables_init(struct frr_rt *rt)
{
	for (int t = 0; t < rt->ntables; t++) {
		uint64_t n = rt->shard_rows[t * rt->P + rt->rank];
		uint32_t cols = rt->spec[t].cols;

		/* the shard's rows are this rank's replica of them: the
		 * remote pushes read them from there (one copy, not two) */
		rt->master[t] =
		    (float *)(rt->replp + rt->repl_off[t * rt->P + rt->rank]);
		memset(rt->master[t], 0, n * cols * sizeof(float));
		if (rt->spec[t].rule == FRR_UPDATE_ADAGRAD) {
			rt->accum[t] = calloc(n * cols + 1, sizeof(float));
			if (!rt->accum[t])
				return -ENOMEM;
		}
		if (rt->spec[t].init_row)
			for (uint64_t li = 0; li < n; li++)
				rt->spec[t].init_row(
				    rt->app_state, t,
				    frr_place_row(rt->hold, rt->P, t, rt->rank,
						  li),
				    rt->master[t] + li * cols, cols);
	}
	return 0;
}

void frr_rt_tables_fini(struct frr_rt *rt)
{
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		free(rt->accum[t]);
		rt->master[t] = rt->accum[t] = NULL;
	}
	frr_rt_inbox_fini(rt);
	frr_rt_hold_fini(rt);
}

/* ---- applying a clock -----------------------------------------------------
 */
/* Rows [a, a + n) of g (n x cols) into row li.. of table t's shard. */
static void apply_rows(struct frr_rt *rt, int t, uint64_t li, const float *g,
		       uint64_t n)
{
	uint32_t cols = rt->spec[t].cols;
	float *m = rt->master[t] + li * cols;

	if (rt->spec[t].rule == FRR_UPDATE_ADAGRAD) {
		float *acc = rt->accum[t] + li * cols;
		float lr = rt->spec[t].lr, eps = rt->spec[t].eps;

		for (uint64_t i = 0; i < n * cols; i++) {
			if (g[i] == 0.0f)
				continue;
			acc[i] += g[i] * g[i];
			m[i] -= lr * g[i] / sqrtf(eps + acc[i]);
		}
	} else if (rt->spec[t].rule == FRR_UPDATE_SET) {
		/* the batch's values: the last batch in apply order wins */
		memcpy(m, g, n * cols * sizeof(float));
	} else {
		for (uint64_t i = 0; i < n * cols; i++)
			m[i] += g[i];
	}
}

/* One drained chunk (validated when drained: table/inbox.c). */
static void apply_chunk(struct frr_rt *rt, const struct frr_chunk *ck,
			uint64_t *dlo, uint64_t *dhi)
{
	const uint8_t *p = ck->pay;

	for (uint64_t at = 0; at < ck->h.bytes;) {
		struct frr_seg sg;
		uint32_t cols;
		const uint8_t *d;

		memcpy(&sg, p + at, sizeof(sg));
		cols = rt->spec[sg.table].cols;
		d = p + at + sizeof(sg);
		if (sg.kind == FRR_SEG_DENSE) {
			apply_rows(rt, (int)sg.table, sg.lo, (const float *)d,
				   sg.n);
			if (sg.lo < dlo[sg.table])
				dlo[sg.table] = sg.lo;
			if (sg.lo + sg.n > dhi[sg.table])
				dhi[sg.table] = sg.lo + sg.n;
		} else {
			const uint64_t *id = (const uint64_t *)d;
			const float *g = (const float *)(id + sg.n);

			for (uint64_t i = 0; i < sg.n; i++) {
				apply_rows(rt, (int)sg.table, id[i],
					   g + i * cols, 1);
				if (id[i] < dlo[sg.table])
					dlo[sg.table] = id[i];
				if (id[i] + 1 > dhi[sg.table])
					dhi[sg.table] = id[i] + 1;
			}
		}
		at += frr_seg_bytes(sg.kind, sg.n, cols);
	}
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

int frr_rt_try_apply(struct frr_rt *rt, int c)
{
	uint64_t dlo[FRR_MAX_TABLES], dhi[FRR_MAX_TABLES];
	size_t n = frr_rt_inbox_select(rt, c);
	double t0;
	int err;

	if (!n)
		return 0;
	t0 = frr_rt_clock_now();
	qsort(rt->sel, n, sizeof(*rt->sel), cmp_chunk);
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
		apply_chunk(rt, &rt->sel[i], dlo, dhi);
	frr_rt_inbox_release(rt, n);
	rt->hold->push_now = 0;
	for (int t = 0; t < rt->ntables && !err; t++)
		err = frr_rt_push_rows(rt, t, dlo[t], dhi[t]);
	rt->hold->push_ring[c % FRR_RT_STAT_RING] = rt->hold->push_now;
	/* G3: shard_done travels after the rows on each endpoint */
	if (!err)
		err = frr_rt_ctl_broadcast(
		    rt, rt->off_done + (size_t)rt->rank * 64, (uint64_t)c + 1);
	rt->hold->apply_ring[c % FRR_RT_STAT_RING] = frr_rt_clock_now() - t0;
	return err ? err : 1;
}
