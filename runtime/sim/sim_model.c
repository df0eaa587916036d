// SPDX-License-Identifier: MIT
/*
 * The tables behind the simulated items (docs/simulator.md "Table
 * models") and the sizes of the messages that move their rows, by the
 * runtime's own rules (table/sizes.h, table.h's frr_seg_bytes):
 *
 *   update batch  per table and shard the written rows' ids and values, or
 *                 one dense range where that is smaller (table/batch.c
 *                 table_fill), in chunks of the slot's capacity
 *                 (job/setup.c frr_rt_chunk_cap), each chunk a write of
 *                 header + payload, a seq word and a flush (slot_write)
 *   replica push  after a clock, each shard's written range [lo, hi) to
 *                 every rank holding rows of it, one write per run
 *                 (table/push.c frr_rt_push_rows); a rank holds its shard,
 *                 the previous rank's as standby, and the rows its
 *                 partitions declare (docs/runtime.md "Rows a rank holds");
 *                 the rows only the partitions it may help declare from
 *                 the first range it runs that writes rows of their owner
 *                 (the runtime: that reads one), when the owner also sends
 *                 them whole once (push.c serve_wake), with the next push
 *                 (sim_push.c)
 *   placement     a row that one rank's own partitions declare lives on
 *                 that rank, the others on row % P: table/place.c's
 *                 frr_place itself, from the same declarations
 *
 * Rows by generator, per item i of partition v (W partitions of n items):
 *   mf   users U x k: v's block of U / W users, rating i by user i mod
 *        block; items I x k: item (i x 2654435761 + v x 40503) mod I
 *        (spread evenly, no popularity skew); mf declares every item
 *   lda  words V x K: L tokens a document, each word Zipf-like (rank
 *        floor((V + 1)^u) - 1, u uniform); totals 1 x K: every document
 *   mlr  F x C: every example reads and writes every row (no part_rows)
 * The control flow of the chunking below follows batch.c; the sizes are
 * the shared functions', so a change of the rules changes both.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "sim_int.h"
#include "sim_model.h"
#include "table.h"

/* Zipf draws by table: exp() per token cost lda at 1,024 workers most of
 * a minute; linear interpolation between 65,537 points of the convex
 * curve is off by a relative 1e-8 at most (V = 10^5) */
#define ZTAB 65536

int frr_sim_model_parse(const char *spec, struct frr_sim_model *m)
{
	static const char *const kinds[] = { "none", "mf", "lda", "mlr" };
	const char *colon = strchr(spec, ':'), *p;
	uint64_t x[3] = { 0, 0, 0 };
	int nx = 0, k;

	memset(m, 0, sizeof(*m));
	if (!strcmp(spec, "none"))
		return 0;
	for (k = 1; colon && k < 4; k++)
		if (strlen(kinds[k]) == (size_t)(colon - spec) &&
		    !strncmp(spec, kinds[k], (size_t)(colon - spec)))
			break;
	for (p = colon; colon && k < 4 && nx < 3 && (*p == ':' || *p == ',');
	     nx++) {
		char *end;

		x[nx] = strtoull(p + 1, &end, 10);
		if (end == p + 1 || !x[nx])
			break;
		p = end;
	}
	if (colon && k < 4 && !*p && nx >= 2 && x[0] < 1ull << 32 &&
	    x[1] < (k == FRR_SIM_MODEL_MF ? 1ull << 32 : 1ull << 20) &&
	    x[2] < 1ull << 20 &&
	    (k == FRR_SIM_MODEL_MF ? nx == 3
				   : k == FRR_SIM_MODEL_LDA || nx == 2)) {
		*m = (struct frr_sim_model){ (enum frr_sim_model_kind)k, x[0],
					     x[1], x[2] };
		if (k == FRR_SIM_MODEL_LDA && !m->c)
			m->c = 100;
		return 0;
	}
	frr_err("simulate: model '%s': give none, mf:USERS,ITEMS,RANK, "
		"lda:WORDS,TOPICS[,TOKENS] or mlr:FEATURES,CLASSES (counts "
		"> 0, rows < 2^32, columns and tokens < 2^20)",
		spec);
	return -EINVAL;
}

/* ---- rows of an item ----------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Visit every row of table t that item i of partition v touches. */
void sim_item_rows(struct sim_model *md, int t, int v, uint64_t i,
		   void (*fn)(struct sim_model *, int, uint64_t))
{
	const struct frr_sim_model *m = &md->m;
	uint64_t W = (uint64_t)md->W, lo, n;

	if (m->kind == FRR_SIM_MODEL_MF && t == 0) {
		lo = m->a * (uint64_t)v / W;
		n = m->a * (uint64_t)(v + 1) / W - lo;
		if (n)
			fn(md, t, lo + i % n);
	} else if (m->kind == FRR_SIM_MODEL_MF) {
		fn(md, t,
		   ((i % m->b) * (2654435761ull % m->b) + (uint64_t)v * 40503) %
		       m->b);
	} else if (m->kind == FRR_SIM_MODEL_LDA && t == 0) {
		for (uint64_t k = 0; k < m->c; k++) {
			uint64_t h = mix(((uint64_t)v << 40) ^ (i << 12) ^ k);
			/* u = (h >> 11) / 2^53 = (j + f) / ZTAB */
			uint64_t j = h >> 48;
			double f = (double)((h >> 11) & ((1ull << 37) - 1)) *
				   0x1.0p-37;
			uint64_t r =
			    (uint64_t)(md->ztab[j] +
				       f * (md->ztab[j + 1] - md->ztab[j]));

			r = r > m->a ? m->a : r; /* rounding at the top */
			fn(md, t, r ? r - 1 : 0);
		}
	} else if (m->kind == FRR_SIM_MODEL_LDA) {
		fn(md, t, 0);
	}
}

/* Items of partition v whose rows of table t repeat after this many (0:
 * never): mf's rating i touches user i mod block and an item of i mod
 * ITEMS only.  A loop that adds rows to a set (which drops repeats) stops
 * after a period: the same set, without visiting the 98 k ratings of a
 * Netflix partition one by one. */
static uint64_t period(const struct sim_model *md, int t, int v)
{
	const struct frr_sim_model *m = &md->m;
	uint64_t W = (uint64_t)md->W;

	if (m->kind != FRR_SIM_MODEL_MF)
		return 0;
	if (t == 1)
		return m->b;
	return m->a * (uint64_t)(v + 1) / W - m->a * (uint64_t)v / W;
}

/* the end of [a, b) that visits every distinct row of table t */
uint64_t sim_visit_end(const struct sim_model *md, int t, int v, uint64_t a,
		       uint64_t b)
{
	uint64_t n = period(md, t, v);

	return n && b - a > n ? a + n : b;
}

/* Where row lives: k = t * P + its shard, li its local index there. */
void sim_row_home(const struct sim_model *md, int t, uint64_t row, uint64_t *k,
		  uint64_t *li)
{
	uint64_t P = (uint64_t)md->P;
	const uint16_t *owner = md->place ? md->place->owner[t] : NULL;

	*k = (uint64_t)t * P + (owner ? owner[row] : row % P);
	*li = owner ? md->place->lidx[t][row] : row / P;
}

/* add a row to the current set: per shard count and local range */
static void mark(struct sim_model *md, int t, uint64_t row)
{
	struct sim_mtab *tb = &md->t[t];
	uint64_t k, li;

	/* most rows repeat (Zipf): no division for them */
	if (tb->stamp[row] == md->gen)
		return;
	tb->stamp[row] = md->gen;
	sim_row_home(md, t, row, &k, &li);
	md->cnt[k]++;
	if (li < md->lo[k])
		md->lo[k] = li;
	if (li + 1 > md->hi[k])
		md->hi[k] = li + 1;
}

static uint64_t shard_rows(const struct sim_model *md, int t, int o)
{
	uint64_t rows = md->t[t].rows;

	if (md->place && md->place->owner[t])
		return md->srows[t * md->P + o];
	return rows > (uint64_t)o ? (rows - (uint64_t)o + md->P - 1) / md->P
				  : 0;
}

void sim_set_begin(struct sim_model *md)
{
	size_t k = (size_t)MT * md->P;

	if (++md->gen == UINT32_MAX) { /* stamps wrap: clear them */
		for (int t = 0; t < md->nt; t++)
			memset(md->t[t].stamp, 0,
			       md->t[t].rows * sizeof(uint32_t));
		md->gen = 1;
	}
	memset(md->cnt, 0, k * sizeof(uint64_t));
	memset(md->hi, 0, k * sizeof(uint64_t));
	for (size_t j = 0; j < k; j++)
		md->lo[j] = UINT64_MAX;
}

/* the rows partition v's items in rg touch, into cnt / lo / hi */
static void set_of(struct sim_model *md, int v, const uint64_t (*rg)[2],
		   int nrg)
{
	sim_set_begin(md);
	for (int t = 0; t < md->nt; t++) {
		if (md->t[t].all) {
			for (int o = 0; o < md->P; o++) {
				uint64_t k = (uint64_t)t * md->P + o;

				md->cnt[k] = md->hi[k] = shard_rows(md, t, o);
				md->lo[k] = 0;
			}
			continue;
		}
		for (int r = 0; r < nrg; r++)
			for (uint64_t i = rg[r][0],
				      e = sim_visit_end(md, t, v, i, rg[r][1]);
			     i < e; i++)
				sim_item_rows(md, t, v, i, mark);
	}
}

/* ---- a batch to one shard, as table/batch.c cuts it -----------------------
 */

static void chunk_close(struct sim_bsz *b, uint64_t used)
{
	/* the chunk (header + payload), then its seq word */
	b->bytes += FRR_SLOT_HDR + used + 8;
	b->n++;
}

static struct sim_bsz shard_batch(const struct sim_model *md, int o)
{
	struct sim_bsz b = { 0, 0 };
	uint64_t cap = md->cap[o], used = 0;
	int open = 0;

	for (int t = 0; t < md->nt; t++) {
		uint64_t k = (uint64_t)t * md->P + o, n = md->cnt[k];
		uint32_t cols = md->t[t].cols, kind = FRR_SEG_SPARSE;

		if (!n)
			continue;
		/* the dense plane sent one dense range, whatever it held */
		if (md->dense ||
		    frr_seg_bytes(FRR_SEG_DENSE, md->hi[k] - md->lo[k], cols) <=
			frr_seg_bytes(FRR_SEG_SPARSE, n, cols)) {
			kind = FRR_SEG_DENSE;
			n = md->hi[k] - md->lo[k];
		}
		while (n) {
			uint64_t fit;

			if (!open) {
				open = 1;
				used = 0;
			}
			fit = frr_seg_fit(cap - used, kind == FRR_SEG_SPARSE,
					  cols);
			if (fit > n)
				fit = n;
			if (!fit && !used)
				break; /* cannot happen: a slot holds a row */
			if (!fit) {
				chunk_close(&b, used);
				open = 0;
				continue;
			}
			used += frr_seg_bytes(kind, fit, cols);
			n -= fit;
		}
	}
	/* the batch's last chunk (an empty batch still sends one) */
	chunk_close(&b, open ? used : 0);
	return b;
}

void sim_model_batch(struct sim *s, int v, const uint64_t (*rg)[2], int nrg,
		     struct sim_bsz *out)
{
	struct sim_model *md = s->mdl;

	if (nrg == 1 && rg[0][0] == 0 && rg[0][1] == md->n) {
		memcpy(out, md->full + (size_t)v * md->P,
		       (size_t)md->P * sizeof(*out));
		return;
	}
	set_of(md, v, rg, nrg);
	for (int o = 0; o < md->P; o++)
		out[o] = shard_batch(md, o);
}

uint64_t sim_model_state_bytes(const struct sim *s, uint64_t items)
{
	const struct sim_model *md = s->mdl;

	/* lda's item state: a uint16 topic per token (apps/lda) */
	if (!md || md->m.kind != FRR_SIM_MODEL_LDA)
		return 0;
	return items * md->m.c * sizeof(uint16_t);
}

/* ---- set-up: tables, chunk sizes, whole partitions' batches, pushes ---- */

static void add_table(struct sim_model *md, uint64_t rows, uint64_t cols,
		      int all, int held_all)
{
	md->t[md->nt++] = (struct sim_mtab){ .rows = rows,
					     .cols = (uint32_t)cols,
					     .all = all,
					     .held_all = held_all };
}

static int alloc_all(struct sim_model *md)
{
	size_t P = (size_t)md->P, k = MT * P;

	md->cap = calloc(P, sizeof(uint64_t));
	md->cnt = calloc(k, sizeof(uint64_t));
	md->lo = calloc(k, sizeof(uint64_t));
	md->hi = calloc(k, sizeof(uint64_t));
	md->full = calloc((size_t)md->W * P, sizeof(struct sim_bsz));
	md->push = calloc(P * P, sizeof(struct sim_bsz));
	md->hpush = calloc(P * P, sizeof(struct sim_bsz));
	md->wake_extra = calloc(P * P, sizeof(uint64_t));
	if (!md->cap || !md->cnt || !md->lo || !md->hi || !md->full ||
	    !md->push || !md->hpush || !md->wake_extra)
		return -ENOMEM;
	for (int t = 0; t < md->nt; t++) {
		struct sim_mtab *tb = &md->t[t];

		tb->stamp = tb->all ? NULL : calloc(tb->rows, sizeof(uint32_t));
		tb->dlo = malloc(P * sizeof(uint64_t));
		tb->dhi = calloc(P, sizeof(uint64_t));
		if ((!tb->all && !tb->stamp) || !tb->dlo || !tb->dhi)
			return -ENOMEM;
		for (size_t o = 0; o < P; o++)
			tb->dlo[o] = UINT64_MAX;
	}
	return 0;
}

/* job/setup.c frr_rt_chunk_cap's numbers, through the shared rule */
static void chunk_caps(struct sim_model *md)
{
	uint32_t max_cols = 0;

	for (int t = 0; t < md->nt; t++)
		if (md->t[t].cols > max_cols)
			max_cols = md->t[t].cols;
	for (int o = 0; o < md->P; o++) {
		uint64_t whole = 0;

		for (int t = 0; t < md->nt; t++)
			whole += frr_seg_bytes(
			    FRR_SEG_DENSE, shard_rows(md, t, o), md->t[t].cols);
		md->cap[o] = frr_slot_bytes(frr_chunk_cap(
				 whole, (uint64_t)md->W,
				 frr_seg_bytes(FRR_SEG_SPARSE, 1, max_cols))) -
			     FRR_SLOT_HDR;
		/* the dense plane's slots held the whole shard: a batch
		 * was one chunk */
		if (md->dense)
			md->cap[o] = frr_slot_bytes(whole) - FRR_SLOT_HDR;
	}
}

/* every partition's whole batch, and the rows a clock writes per shard */
static void whole_batches(struct sim_model *md)
{
	const uint64_t rg[1][2] = { { 0, md->n } };

	for (int v = 0; v < md->W; v++) {
		set_of(md, v, rg, 1);
		for (int o = 0; o < md->P; o++)
			md->full[(size_t)v * md->P + o] = shard_batch(md, o);
		for (int t = 0; t < md->nt; t++)
			for (int o = 0; o < md->P; o++) {
				uint64_t k = (uint64_t)t * md->P + o;
				struct sim_mtab *tb = &md->t[t];

				if (!md->cnt[k])
					continue;
				if (md->lo[k] < tb->dlo[o])
					tb->dlo[o] = md->lo[k];
				if (md->hi[k] > tb->dhi[o])
					tb->dhi[o] = md->hi[k];
			}
	}
}

/* the row into the declarations of md->own_rank */
static void declare(struct sim_model *md, int t, uint64_t row)
{
	md->own[(size_t)t * md->P + md->own_rank][row / 64] |= 1ull
							       << (row % 64);
}

/*
 * Where rows live, as the runtime places them: every rank's declarations
 * (its own partitions' rows; a table every partition reads entirely stays
 * spread: declared by every rank) into frr_place.  A single rank has
 * nothing to place.
 */
static int place_rows(struct sim_model *md)
{
	size_t P = (size_t)md->P;
	uint64_t rows[MT];
	int err = -ENOMEM;

	if (P < 2)
		return 0;
	md->own = calloc(MT * P, sizeof(uint64_t *));
	md->srows = calloc(MT * P, sizeof(uint64_t));
	md->place = aligned_alloc(64, (sizeof(struct frr_hold) + 63) / 64 * 64);
	if (!md->own || !md->srows || !md->place)
		goto out;
	memset(md->place, 0, sizeof(struct frr_hold));
	for (int t = 0; t < md->nt; t++) {
		rows[t] = md->t[t].rows;
		for (size_t q = 0; q < P; q++)
			if (!(md->own[t * P + q] = calloc(
				  frr_bit_words(rows[t]), sizeof(uint64_t))))
				goto out;
		if (md->t[t].held_all)
			continue;
		for (int v = 0; v < md->W; v++) {
			md->own_rank = v / md->T;
			for (uint64_t i = 0,
				      e = sim_visit_end(md, t, v, 0, md->n);
			     i < e; i++)
				sim_item_rows(md, t, v, i, declare);
		}
	}
	err = frr_place(md->place, md->P, md->nt, rows, md->srows, md->own);
out:
	for (size_t j = 0; md->own && j < MT * P; j++)
		free(md->own[j]);
	free(md->own);
	md->own = NULL;
	return err;
}

int sim_model_init(struct sim *s)
{
	const struct frr_sim_model *m = &s->cfg->model;
	struct sim_model *md = calloc(1, sizeof(*md));
	int err;

	if (!md)
		return -ENOMEM;
	s->mdl = md;
	md->m = *m;
	md->P = s->cfg->P;
	md->T = s->cfg->T;
	md->W = s->W;
	md->n = s->cfg->items;
	md->dense = s->cfg->dense_plane;
	if (m->kind == FRR_SIM_MODEL_MF) {
		add_table(md, m->a, m->c, 0, md->P == 1);
		add_table(md, m->b, m->c, 0, 1); /* mf declares every item */
	} else if (m->kind == FRR_SIM_MODEL_LDA) {
		add_table(md, m->a, m->b, 0, md->P == 1);
		add_table(md, 1, m->b, 0, md->P == 1);
		md->ztab = malloc((ZTAB + 1) * sizeof(double));
		if (!md->ztab)
			return -ENOMEM;
		for (int j = 0; j <= ZTAB; j++)
			md->ztab[j] =
			    exp((double)j / ZTAB * log((double)m->a + 1));
	} else if (m->kind == FRR_SIM_MODEL_MLR) {
		add_table(md, m->a, m->b, 1, 1);
	}
	/* the dense plane: every rank held every row, rows on row % P */
	for (int t = 0; md->dense && t < md->nt; t++)
		md->t[t].held_all = 1;
	err = alloc_all(md);
	if (!err && !md->dense)
		err = place_rows(md);
	if (err)
		return err;
	chunk_caps(md);
	whole_batches(md);
	md->from_start = s->cfg->rr_rows_from_start;
	err = sim_push_plan(md, s);
	return err ? err : md->list_err;
}

void sim_model_fini(struct sim *s)
{
	struct sim_model *md = s->mdl;

	if (!md)
		return;
	frr_dbg("sim: ranks woke %llu owners' rows for their helpers",
		(unsigned long long)md->wakes);
	for (int t = 0; t < md->nt; t++) {
		free(md->t[t].stamp);
		free(md->t[t].dlo);
		free(md->t[t].dhi);
		free(md->t[t].hmask);
		free(md->t[t].hgen);
	}
	if (md->place) {
		frr_place_fini(md->place);
		free(md->place);
	}
	free(md->srows);
	free(md->cap);
	free(md->cnt);
	free(md->lo);
	free(md->hi);
	free(md->full);
	free(md->push);
	free(md->hpush);
	free(md->wake_extra);
	sim_push_fini(md);
	free(md->list);
	free(md->lrow);
	free(md->ztab);
	free(md);
	s->mdl = NULL;
}
