// SPDX-License-Identifier: MIT
/*
 * Where rows live (docs/runtime.md "Rows where they are written").  A row
 * that the partitions of exactly one rank declare (part_rows of the rank's
 * own partitions: MF's user rows, a document's own state) is stored by that
 * rank, so its updates never leave it and nothing is pushed back; every
 * other row (read or written by several ranks: MF's items, LDA's words)
 * stays spread, row r on rank r % P.  Each shard keeps its rows in row
 * order (local index = rank among the shard's rows).  The decision is a
 * function of the declarations only, the same on every rank and in a
 * resumed job of the same shape.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "table.h"

/* Table t's owners from every rank's declaration bitmap (own[r]): rows
 * declared by one rank go to it (counted in solo[rank]; those of rank
 * me - 1 also set in mine, when me), the others to row % P. */
static void owners(int P, uint64_t rows, uint64_t *const *own, uint16_t *owner,
		   uint64_t *solo, int me, uint64_t *mine)
{
	for (uint64_t r = 0; r < rows; r++)
		owner[r] = (uint16_t)(r % (uint64_t)P);
	for (uint64_t w = 0; w < frr_bit_words(rows); w++) {
		uint64_t once = 0, twice = 0;

		for (int q = 0; q < P; q++) {
			twice |= once & own[q][w];
			once |= own[q][w];
		}
		once &= ~twice;
		for (int q = 0; q < P && once; q++)
			for (uint64_t m = own[q][w] & once; m; m &= m - 1) {
				uint64_t r =
				    w * 64 + (uint64_t)__builtin_ctzll(m);

				if (r < rows) {
					owner[r] = (uint16_t)q;
					solo[q]++;
				}
				if (r < rows && q + 1 == me)
					mine[w] |= m & -m;
			}
	}
}

/* Local indexes in row order, each owner's rows, and the shards' sizes. */
static int index_rows(struct frr_hold *h, int P, int t, uint64_t rows,
		      uint64_t *shard_rows)
{
	uint64_t *at;

	h->lidx[t] = malloc(rows * sizeof(uint32_t) + 4);
	h->lrow[t] = malloc(rows * sizeof(uint32_t) + 4);
	h->obase[t] = calloc((size_t)P + 1, sizeof(uint64_t));
	at = calloc((size_t)P, sizeof(uint64_t));
	if (!h->lidx[t] || !h->lrow[t] || !h->obase[t] || !at) {
		free(at);
		return -ENOMEM;
	}
	for (uint64_t r = 0; r < rows; r++)
		h->obase[t][h->owner[t][r] + 1]++;
	for (int o = 0; o < P; o++) {
		shard_rows[t * P + o] = h->obase[t][o + 1];
		h->obase[t][o + 1] += h->obase[t][o];
	}
	for (uint64_t r = 0; r < rows; r++) {
		int o = h->owner[t][r];
		uint64_t li = at[o]++;

		h->lidx[t][r] = (uint32_t)li;
		h->lrow[t][h->obase[t][o] + li] = (uint32_t)r;
	}
	free(at);
	return 0;
}

int frr_place(struct frr_hold *h, int P, int ntables, const uint64_t *rows,
	      uint64_t *shard_rows, uint64_t *const *own)
{
	uint64_t moved = 0;
	int err = 0;

	if (P > UINT16_MAX + 1)
		return 0; /* owners are 16-bit: spread, as without part_rows */
	for (int t = 0; t < ntables && !err; t++) {
		h->owner[t] = malloc(rows[t] * sizeof(uint16_t) + 2);
		h->solo[t] = calloc((size_t)P, sizeof(uint64_t));
		h->mine[t] =
		    h->me ? calloc(frr_bit_words(rows[t]) + 1, 8) : NULL;
		if (!h->owner[t] || !h->solo[t] || (h->me && !h->mine[t]))
			return -ENOMEM;
		owners(P, rows[t], own + (size_t)t * P, h->owner[t], h->solo[t],
		       h->me, h->mine[t]);
		for (uint64_t r = 0; r < rows[t]; r++)
			moved += h->owner[t][r] != r % (uint64_t)P;
		err = index_rows(h, P, t, rows[t], shard_rows);
	}
	frr_dbg("%llu rows placed with their only writer (not on row %% P)",
		(unsigned long long)moved);
	return err;
}

void frr_place_fini(struct frr_hold *h)
{
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		free(h->owner[t]);
		free(h->lidx[t]);
		free(h->lrow[t]);
		free(h->obase[t]);
		free(h->solo[t]);
		free(h->mine[t]);
	}
}
