/* SPDX-License-Identifier: MIT */
/*
 * Parameter tables inside the runtime: shards, replicas and the worker
 * cache.  docs/runtime.md ("Data layout", "The worker cache").
 *
 * Row r of a table is stored by rank r % P (its shard: master rows, plus
 * AdaGrad's sums) at local index r / P; every rank has a replica of every
 * row, written by the rows' shard after each clock it applies.  Workers
 * never read the replica directly: each worker thread has caches
 * (struct frr_cache) that copy a row at its first access in a batch.
 */
#ifndef FLEXRR_RUNTIME_TABLE_H
#define FLEXRR_RUNTIME_TABLE_H

#include <stdint.h>

#include "flexrr/flexrr.h"

/*
 * One table in one worker cache.  Per row: val (the worker's copy), snap
 * (ADD: val at the fetch; ADAGRAD: the gradient sum of the batch), stamp
 * (gen << 1 | written).  Dense, indexed by row: the arrays are calloc'ed
 * (untouched pages cost nothing; 2 MB ones for val and snap of 8 MB and
 * more, see cache_calloc), so memory follows the rows a worker touches.  Used
 * by one thread only.
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
	float scale; /* push_scale (0 = 1) */
	float *val, *snap;
	uint8_t *stamp;
	uint64_t *lo, *hi; /* per shard rank: written local rows [lo, hi) */
	/* FRR_TABLE_SEE_OWN_PENDING, own cache only: what the last `ring`
	 * clocks pushed, per row; ptag = clock + 1 of the entry (0 = none) */
	float *pend;
	int32_t *ptag;
};

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

/* The ring of pending clocks for a job with (effective) slack s: fetches
 * in clock c need clocks [c - s, c), see table/cache.c. */
static inline int frr_cache_ring(int eff_slack)
{
	return eff_slack + 2;
}

#endif /* FLEXRR_RUNTIME_TABLE_H */
