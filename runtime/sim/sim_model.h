/* SPDX-License-Identifier: MIT */
/*
 * The simulator's table models (sim_model.c: the generators, batch sizes,
 * where rows live; sim_push.c: the replica pushes and the wakes of
 * helpees' rows), shared by the two files only.
 */
#ifndef FLEXRR_SIM_MODEL_H
#define FLEXRR_SIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "sim_int.h"

#define MT 2	    /* tables of a model at most */
#define SIM_HMAX 64 /* helpee ranks of a rank told apart */

struct sim_mtab {
	uint64_t rows;
	uint32_t cols;
	int all;	 /* every item writes every row */
	int held_all;	 /* every rank holds every row */
	uint32_t *stamp; /* [rows]: == gen when in the current set */
	/* on use: per row, the helpee ranks (bits of hrank) declaring it,
	 * valid where hgen == the model's hgen (sim_push.c) */
	uint64_t *hmask;
	uint32_t *hgen;
	uint64_t *dlo, *dhi; /* [P]: rows written in a clock, per shard */
};

struct sim_model {
	struct frr_sim_model m;
	int nt, P, T, W;
	uint64_t n; /* items of a partition */
	struct sim_mtab t[MT];
	uint32_t gen;
	uint64_t *cap;		 /* [P]: payload bytes of a chunk to o */
	uint64_t *cnt, *lo, *hi; /* [MT * P] scratch: one set */
	struct sim_bsz *full;	 /* [W * P]: a whole partition's batch */
	struct sim_bsz *push;	 /* [P * P]: o's push to r */
	/* [P * P]: o's push to r of the rows r holds only for partitions it
	 * may help and has woken (all of them with rows from the start);
	 * what a wake sends once, with o's next push */
	struct sim_bsz *hpush;
	uint64_t *wake_extra;
	uint64_t wakes;
	/* on use: r's helpee ranks (hrank[r * SIM_HMAX + i], nh[r] of them;
	 * a rank with more shares the last bit), and per (r, o) the bits of
	 * those it woke owner o's rows of (hawake[r * P + o]) */
	int from_start, *nh, *hrank;
	uint64_t *hawake, *old; /* old: [P] scratch */
	uint64_t hbit;		/* the helpee bit collect marks with */
	uint32_t hgen;
	uint64_t *list; /* scratch: a rank's declared rows (and lrow: ids) */
	uint64_t *lrow;
	size_t nlist, caplist;
	int list_err;
	/* where rows live (frr_place); NULL or an owner[t] of NULL: row r
	 * on rank r % P at local index r / P */
	struct frr_hold *place;
	uint64_t *srows; /* [t * P + o]: shard sizes, placed */
	uint64_t **own;	 /* set-up only: [t * P + q] rank q's declared rows */
	int own_rank;	 /* set-up only: whose declarations item_rows adds */
	double *ztab;	 /* lda: (V + 1)^(j / ZTAB), j = 0..ZTAB */
	int dense;	 /* the data plane before issue 21 */
};

/* Visit every row of table t that item i of partition v touches. */
void sim_item_rows(struct sim_model *md, int t, int v, uint64_t i,
		   void (*fn)(struct sim_model *, int, uint64_t));
/* The end of [a, b) that visits every distinct row of table t. */
uint64_t sim_visit_end(const struct sim_model *md, int t, int v, uint64_t a,
		       uint64_t b);
/* Where row lives: *k = t * P + its shard, *li its local index there. */
void sim_row_home(const struct sim_model *md, int t, uint64_t row, uint64_t *k,
		  uint64_t *li);
/* A new, empty set of rows (the stamps' generation). */
void sim_set_begin(struct sim_model *md);
/* Each rank's pushes per clock (md->push, md->hpush), at set-up. */
int sim_push_plan(struct sim_model *md, const struct sim *s);
void sim_push_fini(struct sim_model *md);

#endif
