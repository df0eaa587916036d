/* SPDX-License-Identifier: MIT */
/*
 * Parameter tables inside the runtime: shards, replicas and the worker
 * cache.  docs/runtime.md ("Data layout", "The worker cache").
 *
 * Row r of a table is stored by rank r % P (its shard: master rows, plus
 * AdaGrad's sums) at local index r / P; a rank holds a copy of the rows
 * it reads (table/hold.c), written by the rows' shard after each clock it
 * applies.  Workers
 * never read the replica directly: each worker thread has caches
 * (struct frr_cache) that copy a row at its first access in a batch.
 */
#ifndef FLEXRR_RUNTIME_TABLE_H
#define FLEXRR_RUNTIME_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "flexrr/flexrr.h"
#include "sizes.h"

/*
 * One table in one worker cache.  Per row, dense: stamp (gen << 1 |
 * written) and slot.  Per row fetched in this batch, compact (slot k at
 * k x cols, in order of first access, restarting at every batch): val (the
 * worker's copy) and snap (ADD: val at the fetch; ADAGRAD: the gradient
 * sum of the batch).  The arrays are calloc'ed to the table's size but only
 * the first slots are touched, so memory follows the rows a batch touches,
 * not where they lie in the table (a partition's rows are spread over it:
 * dense copies cost a whole table per thread).  Used by one thread only.
 *
 * The stamp is loaded at every access, before the row can be handed out:
 * a byte per row keeps the array small enough to stay in L2 (480 KB for
 * Netflix's users; 32-bit stamps missed L2 at 17% of MF's samples there).
 * Keeping the stamp inside the row measured slower: its load then waits
 * for the row's own miss, which the app's prefetch otherwise overlaps.
 */
struct frr_tcache {
	uint64_t rows;
	uint32_t cols;
	uint32_t flags;
	enum frr_update_rule rule;
	/* a batch's change x scale (1; 1 / nparts: combine MEAN*), times its
	 * share of the partition's items if by_share (MEAN) */
	float scale;
	int by_share;
	float *val, *snap; /* compact: slot x cols */
	uint8_t *stamp;
	uint32_t *slot;	   /* per row: its slot, valid while stamp's gen is */
	uint32_t nslot;	   /* slots used in this batch */
	uint64_t *lo, *hi; /* per shard rank: written local rows [lo, hi) */
	/* the rows written in this batch, in order of first write (nw of
	 * them), and at the flush the same grouped by shard (wby, wstart[o]
	 * .. wstart[o + 1]); rows x 8 bytes each, calloc'ed: only the
	 * entries used are ever touched */
	uint64_t *wrows, *wby, *wstart;
	uint64_t nw;
	/* FRR_TABLE_SEE_OWN_PENDING, own cache only: what the last `ring`
	 * clocks pushed, per row ever pushed (pslot[row] = record + 1, 0 =
	 * none; records compact, in order of first push): record r holds
	 * ring entries of cols floats in pend and their ptag = clock + 1 of
	 * the entry (0 = none) */
	float *pend;
	int32_t *ptag;
	uint32_t *pslot;
	uint32_t npend;
	/* FRR_TABLE_COMPENSATED: per slot x cols, the running compensation
	 * of the batch's updates (the value's lost low part, negated) */
	float *comp;
};

/* FRR_TABLE_COMPENSATED: *v += d by Kahan's sum; *comp keeps minus what
 * the adds lost (the cache's batch and the shard each keep their own). */
static inline void frr_kahan_add(float *v, float *comp, float d)
{
	float y = d - *comp, t = *v + y;

	*comp = (t - *v) - y;
	*v = t;
}

/* The cached copy of a row fetched in the current batch. */
static inline float *frr_tcache_val(const struct frr_tcache *tc, uint64_t row)
{
	return tc->val + (uint64_t)tc->slot[row] * tc->cols;
}

/*
 * An update batch on the wire: the payload of each inbox slot (a chunk of
 * one batch) is a sequence of segments, each a segment header, then for
 * FRR_SEG_SPARSE n local row ids (u64), then n x cols floats, padded to 8
 * bytes.  FRR_SEG_DENSE carries rows [lo, lo + n) of the shard (rows not
 * written: zeros), FRR_SEG_SPARSE the listed rows only; the sender picks
 * the smaller per table and shard.  A batch larger than a slot is split
 * over several slots (chunks), each with whole segments.
 */
enum frr_seg_kind { FRR_SEG_DENSE = 1, FRR_SEG_SPARSE = 2 };
struct frr_seg {
	uint32_t table;
	uint32_t kind;
	uint64_t lo; /* DENSE: first local row */
	uint64_t n;  /* rows */
};
_Static_assert(sizeof(struct frr_seg) == FRR_SEG_HDR, "sizes.h");

/* Payload bytes of a segment of n rows of cols floats. */
static inline uint64_t frr_seg_bytes(uint32_t kind, uint64_t n, uint32_t cols)
{
	uint64_t b = sizeof(struct frr_seg) + n * cols * sizeof(float);

	if (kind == FRR_SEG_SPARSE)
		b += n * sizeof(uint64_t);
	return (b + 7) & ~(uint64_t)7;
}

/*
 * The rows a rank holds (table/hold.c): per table, this rank's slot of
 * each row it holds in its replica region (FRR_HOLD_NONE: not held,
 * FRR_HOLD_BUSY: a pull is in flight; loaded and set atomically: worker
 * threads pull), and as an owner, each rank's slot of each row of this
 * rank's shard ([t][r * shard + li]; server thread only).  Every rank's
 * layout: [r * FRR_MAX_TABLES + t].
 */
#define FRR_HOLD_NONE UINT32_MAX
#define FRR_HOLD_BUSY (UINT32_MAX - 1)
struct frr_hold {
	uint32_t *rslot[FRR_MAX_TABLES];
	uint32_t *oslot[FRR_MAX_TABLES];
	uint64_t *tbl_off;		/* byte offset of the table's slots */
	uint32_t *pull_base, *pull_cap; /* first pull slot, how many */
	uint64_t *pull_seen;		/* [requester]: last request served */
	uint64_t served;		/* rows served to pulls */
	/* what this rank sent each other rank after each clock (row pushes
	 * and pulls served, the start-up fill excluded) and the batch
	 * payload it drained: the job's end line of bytes received */
	uint64_t *sent_to, batch_recv;
	uint64_t push_now, *push_ring; /* [clock % FRR_RT_STAT_RING] */
	double *apply_ring; /* seconds the server took to apply and push */
	double apply_now;   /* eager: those seconds of the clock so far */
	int may_pull;	    /* some rank holds fewer than all */
	int too_long;	    /* 1 + a table with more rows than slots can name */
	/* where rows live (table/place.c): per table, NULL when row r is on
	 * rank r % P at local index r / P, else each row's owner rank and
	 * local index, and the rows of each owner in local order (lrow from
	 * obase[o]) */
	uint16_t *owner[FRR_MAX_TABLES];
	uint32_t *lidx[FRR_MAX_TABLES], *lrow[FRR_MAX_TABLES];
	uint64_t *obase[FRR_MAX_TABLES];
	/* per table and owner: rows of its shard that only the owner's own
	 * partitions declare (other ranks' batches never carry them: the
	 * memory plan's inbox), NULL when nothing was placed */
	uint64_t *solo[FRR_MAX_TABLES];
	_Alignas(64) _Atomic uint64_t npull[FRR_MAX_TABLES];
};

/* 64-bit words of a bitmap of n rows (hold.c's and place.c's row sets). */
static inline uint64_t frr_bit_words(uint64_t n)
{
	return (n + 63) / 64;
}

/* Where rows live (table/place.c) from every rank's bitmap of the rows its
 * own partitions declare (own[t * P + q]): h's placement arrays, and
 * shard_rows[t * P + o] (rows[t]: table t's rows). */
int frr_place(struct frr_hold *h, int P, int ntables, const uint64_t *rows,
	      uint64_t *shard_rows, uint64_t *const *own);
void frr_place_fini(struct frr_hold *h);

/* The rank that stores row `row` of table t, its index there, and the
 * row at local index li of rank o's shard. */
static inline int frr_place_owner(const struct frr_hold *h, int P, int t,
				  uint64_t row)
{
	return h->owner[t] ? h->owner[t][row] : (int)(row % (uint64_t)P);
}

static inline uint64_t frr_place_local(const struct frr_hold *h, int P, int t,
				       uint64_t row)
{
	return h->lidx[t] ? h->lidx[t][row] : row / (uint64_t)P;
}

static inline uint64_t frr_place_row(const struct frr_hold *h, int P, int t,
				     int o, uint64_t li)
{
	return h->lrow[t] ? h->lrow[t][h->obase[t][o] + li]
			  : li * (uint64_t)P + (uint64_t)o;
}

/* Generations a stamp holds (7 bits): then every stamp is cleared. */
#define FRR_STAMP_GENS 127u

/* A worker thread's cache for one kind of batch (its own clocks, or the
 * ranges it runs for other partitions). */
struct frr_cache {
	struct frr_tcache t[FRR_MAX_TABLES];
	uint32_t gen;	  /* the current batch's stamp (1 .. FRR_STAMP_GENS) */
	int ring;	  /* pending clocks kept (0: none, help caches) */
	uint64_t items;	  /* items run in this batch */
	uint64_t updates; /* write/update calls in this batch */
};

/* The ring of pending clocks for a job with (effective) slack s: a fetch
 * in clock c holds clocks < d with d >= c - s (ssp/ssp.c), so it needs
 * this worker's pushes of clocks [c - s, c): s entries.  The entry of
 * clock c is written at c's own flush, after the last fetch of c, over
 * that of clock c - s, which clock c + 1 no longer needs.  With s = 0
 * every own push is applied before a fetch: none. */
static inline int frr_cache_ring(int eff_slack)
{
	return eff_slack;
}

#endif /* FLEXRR_RUNTIME_TABLE_H */
