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
 *                 (table/hold.c frr_rt_push_rows); a rank holds its shard,
 *                 the previous rank's as standby, and the rows its
 *                 partitions declare (docs/runtime.md "Rows a rank holds");
 *                 the rows only the partitions it may help declare from
 *                 the first range it runs that writes rows of their owner
 *                 (the runtime: that reads one), when the owner also sends
 *                 them whole once (hold.c serve_wake), with the next push
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
#include "table.h"

#define MT 2 /* tables of a model at most */

struct sim_mtab {
	uint64_t rows;
	uint32_t cols;
	int all;	     /* every item writes every row */
	int held_all;	     /* every rank holds every row */
	uint32_t *stamp;     /* [rows]: == gen when in the current set */
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
	 * may help, counted once r is awake to o (awake[r * P + o]); what a
	 * wake sends once, with o's next push */
	struct sim_bsz *hpush;
	uint8_t *awake;
	uint64_t *wake_extra;
	uint64_t wakes;
	uint64_t *list; /* scratch: a rank's declared rows */
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
static void item_rows(struct sim_model *md, int t, int v, uint64_t i,
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
static uint64_t visit_end(const struct sim_model *md, int t, int v, uint64_t a,
			  uint64_t b)
{
	uint64_t n = period(md, t, v);

	return n && b - a > n ? a + n : b;
}

/* Where row lives: k = t * P + its shard, li its local index there. */
static void row_home(const struct sim_model *md, int t, uint64_t row,
		     uint64_t *k, uint64_t *li)
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
	row_home(md, t, row, &k, &li);
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

static void set_begin(struct sim_model *md)
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
	set_begin(md);
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
				      e = visit_end(md, t, v, i, rg[r][1]);
			     i < e; i++)
				item_rows(md, t, v, i, mark);
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

struct sim_bsz sim_model_push(const struct sim *s, int o, int r)
{
	const struct sim_model *md = s->mdl;
	size_t k = (size_t)o * md->P + r;
	struct sim_bsz b = md->push[k];

	if (md->awake[(size_t)r * md->P + o]) {
		b.bytes += md->hpush[k].bytes;
		b.n += md->hpush[k].n;
	}
	if (md->wake_extra[k]) {
		b.bytes += md->wake_extra[k];
		b.n++;
	}
	return b;
}

void sim_model_pushed(struct sim *s)
{
	struct sim_model *md = s->mdl;

	if (md)
		memset(md->wake_extra, 0,
		       (size_t)md->P * md->P * sizeof(uint64_t));
}

void sim_model_wake(struct sim *s, int r, const struct sim_bsz *batch)
{
	struct sim_model *md = s->mdl;

	for (int o = 0; o < md->P; o++) {
		size_t k = (size_t)o * md->P + r;

		/* a batch of no rows to o is its last chunk alone */
		if (o == r || md->awake[(size_t)r * md->P + o] ||
		    !md->hpush[k].bytes || batch[o].bytes <= FRR_SLOT_HDR + 8)
			continue;
		md->awake[(size_t)r * md->P + o] = 1;
		md->wake_extra[k] += md->push[k].bytes + md->hpush[k].bytes;
		md->wakes++;
	}
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
	md->awake = calloc(P * P, 1);
	md->wake_extra = calloc(P * P, sizeof(uint64_t));
	if (!md->cap || !md->cnt || !md->lo || !md->hi || !md->full ||
	    !md->push || !md->hpush || !md->awake || !md->wake_extra)
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

/* collect the rows of the current set (a rank's declared rows) */
static void collect(struct sim_model *md, int t, uint64_t row)
{
	struct sim_mtab *tb = &md->t[t];
	uint64_t P = (uint64_t)md->P, k, li;

	if (tb->stamp[row] == md->gen)
		return;
	tb->stamp[row] = md->gen;
	row_home(md, t, row, &k, &li);
	if (md->nlist == md->caplist) {
		size_t cap = md->caplist ? md->caplist * 2 : 4096;
		uint64_t *l = realloc(md->list, cap * sizeof(uint64_t));

		if (!l) {
			md->list_err = -ENOMEM;
			return;
		}
		md->list = l;
		md->caplist = cap;
	}
	/* by (shard, local row): the order of a shard's slots */
	md->list[md->nlist++] = (k - (uint64_t)t * P) << 40 | li;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* table t's push from every shard to rank r: the rows r declares in the
 * shard's written range, one write per run of consecutive rows */
/* the rows of partition v into the rank's set */
static void collect_part(struct sim_model *md, int t, int v)
{
	for (uint64_t i = 0, e = visit_end(md, t, v, 0, md->n); i < e; i++)
		item_rows(md, t, v, i, collect);
}

/* list[a, e) (sorted) into the pushes to r (out: md->push or hpush) */
static void push_list(struct sim_model *md, int t, int r, size_t a, size_t e,
		      struct sim_bsz *out)
{
	const struct sim_mtab *tb = &md->t[t];
	uint64_t prev = UINT64_MAX;

	qsort(md->list + a, e - a, sizeof(uint64_t), cmp_u64);
	for (size_t j = a; j < e; j++) {
		int o = (int)(md->list[j] >> 40);
		uint64_t li = md->list[j] & ((1ull << 40) - 1);
		struct sim_bsz *b = &out[(size_t)o * md->P + r];

		if (o == r || o == (r + md->P - 1) % md->P || li < tb->dlo[o] ||
		    li >= tb->dhi[o])
			continue;
		b->bytes += tb->cols * sizeof(float);
		b->n += md->list[j] != prev + 1;
		prev = md->list[j];
	}
}

static void push_declared(struct sim_model *md, const struct sim *s, int t,
			  int r)
{
	size_t nown;

	md->nlist = 0;
	set_begin(md);
	/* its partitions, then (rows not in theirs) with reassignment those
	 * its workers may run as helpers (docs/runtime.md "Rows a rank
	 * holds") */
	for (int v = r * md->T; v < (r + 1) * md->T; v++)
		collect_part(md, t, v);
	nown = md->nlist;
	for (int v = r * md->T; v < (r + 1) * md->T; v++) {
		const struct rr_worker *rw = &s->ws[v].rw;

		/* a helpee of its own rank is one of its partitions */
		for (int k = 0; s->ws[v].rw_ok && k < rw->nhelpees; k++)
			if (rw->helpees[k] / md->T != r)
				collect_part(md, t, rw->helpees[k]);
	}
	push_list(md, t, r, 0, nown, md->push);
	push_list(md, t, r, nown, md->nlist, md->hpush);
}

static void push_plan(struct sim_model *md, const struct sim *s)
{
	for (int r = 0; r < md->P; r++)
		for (int t = 0; t < md->nt; t++) {
			const struct sim_mtab *tb = &md->t[t];

			for (int o = 0; o < md->P; o++) {
				struct sim_bsz *b =
				    &md->push[(size_t)o * md->P + r];
				uint64_t rows = tb->dhi[o] > tb->dlo[o]
						    ? tb->dhi[o] - tb->dlo[o]
						    : 0;

				/* its shard (not pushed), the standby copy
				 * and tables held whole: the written range */
				if (o == r || !rows ||
				    (!tb->held_all &&
				     o != (r + md->P - 1) % md->P))
					continue;
				b->bytes += rows * tb->cols * sizeof(float);
				b->n++;
			}
			if (!tb->held_all && md->P > 2)
				push_declared(md, s, t, r);
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
			for (uint64_t i = 0, e = visit_end(md, t, v, 0, md->n);
			     i < e; i++)
				item_rows(md, t, v, i, declare);
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
	push_plan(md, s);
	if (s->cfg->rr_rows_from_start)
		memset(md->awake, 1, (size_t)md->P * md->P);
	return md->list_err;
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
	free(md->awake);
	free(md->wake_extra);
	free(md->list);
	free(md->ztab);
	free(md);
	s->mdl = NULL;
}
