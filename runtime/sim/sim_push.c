// SPDX-License-Identifier: MIT
/*
 * The simulator's replica pushes, by the runtime's rules (table/hold.c,
 * table/push.c): after a clock each shard's written range to every rank
 * holding rows of it, one write per run; a rank holds its shard, the
 * previous rank's as standby and the rows its partitions declare, and the
 * rows only the partitions it may help declare once a range it ran woke
 * them: per owner and helpee rank, the owner's rows any partition of that
 * rank declares (a one-time burst then, with the owner's next push).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "sim_model.h"
#include "table.h"

/* collect the rows of the current set (a rank's declared rows) */
static void collect(struct sim_model *md, int t, uint64_t row)
{
	struct sim_mtab *tb = &md->t[t];
	uint64_t P = (uint64_t)md->P, k, li;

	if (tb->stamp[row] == md->gen)
		return;
	tb->stamp[row] = md->gen;
	sim_row_home(md, t, row, &k, &li);
	if (md->nlist == md->caplist) {
		size_t cap = md->caplist ? md->caplist * 2 : 4096;
		uint64_t *l = realloc(md->list, cap * sizeof(uint64_t));
		uint64_t *lr =
		    l ? realloc(md->lrow, cap * sizeof(uint64_t)) : NULL;

		if (l)
			md->list = l;
		if (!l || !lr) {
			md->list_err = -ENOMEM;
			return;
		}
		md->lrow = lr;
		md->caplist = cap;
	}
	/* by (shard, local row): the order of a shard's slots */
	md->lrow[md->nlist] = row;
	md->list[md->nlist++] = (k - (uint64_t)t * P) << 40 | li;
}

/* mark a row as declared by the helpee rank of md->hbit */
static void mark(struct sim_model *md, int t, uint64_t row)
{
	struct sim_mtab *tb = &md->t[t];

	if (tb->hgen[row] != md->hgen) {
		tb->hgen[row] = md->hgen;
		tb->hmask[row] = 0;
	}
	tb->hmask[row] |= md->hbit;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* every row of table t that partition v touches, to fn */
static void collect_rows(struct sim_model *md, int t, int v,
			 void (*fn)(struct sim_model *, int, uint64_t))
{
	for (uint64_t i = 0, e = sim_visit_end(md, t, v, 0, md->n); i < e; i++)
		sim_item_rows(md, t, v, i, fn);
}

/* the rows of partition v into the rank's set */
static void collect_part(struct sim_model *md, int t, int v)
{
	collect_rows(md, t, v, collect);
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

/* Where helpee rank q is among rank r's (nh[r]: not one). */
static int helpee_index(const struct sim_model *md, int r, int q)
{
	int i = 0;

	while (i < md->nh[r] && md->hrank[r * SIM_HMAX + i] != q)
		i++;
	return i;
}

/* The bit of helpee rank q among rank r's (0: not one). */
static uint64_t helpee_bit(const struct sim_model *md, int r, int q)
{
	int i = helpee_index(md, r, q);

	return i < md->nh[r] ? 1ull << i : 0;
}

/* Of list[a, e), the rows of a woken (owner, helpee rank) pair of r, at
 * the front; their end. */
static size_t woken_only(struct sim_model *md, int t, int r, size_t a, size_t e)
{
	const struct sim_mtab *tb = &md->t[t];
	uint64_t any = 0;
	size_t k = a;

	for (int o = 0; o < md->P; o++)
		any |= md->hawake[(size_t)r * md->P + o];
	if (++md->hgen == UINT32_MAX) {
		for (int u = 0; u < md->nt; u++)
			if (md->t[u].hgen)
				memset(md->t[u].hgen, 0,
				       md->t[u].rows * sizeof(uint32_t));
		md->hgen = 1;
	}
	/* what every partition of each helpee rank woken somewhere
	 * declares (the runtime's declarations are per rank) */
	for (int i = 0; i < md->nh[r]; i++) {
		int q = md->hrank[r * SIM_HMAX + i];

		if (!(any >> i & 1))
			continue;
		md->hbit = 1ull << i;
		for (int v = q * md->T; v < (q + 1) * md->T; v++)
			collect_rows(md, t, v, mark);
	}
	for (size_t j = a; j < e; j++) {
		uint64_t row = md->lrow[j];
		int o = (int)(md->list[j] >> 40);

		if (tb->hgen[row] == md->hgen &&
		    (tb->hmask[row] & md->hawake[(size_t)r * md->P + o]))
			md->list[k++] = md->list[j];
	}
	return k;
}

/* table t's pushes to r of the rows its partitions declare (md->push, own
 * 1) or of those only the partitions it may help declare (md->hpush, own
 * 0: every one from the start, else the woken ones) */
static void push_declared(struct sim_model *md, const struct sim *s, int t,
			  int r, int own)
{
	size_t nown, e;

	md->nlist = 0;
	sim_set_begin(md);
	/* its partitions, then (rows not in theirs) with reassignment those
	 * its workers may run as helpers (docs/runtime.md "Rows a rank
	 * holds") */
	for (int v = r * md->T; v < (r + 1) * md->T; v++)
		collect_part(md, t, v);
	nown = md->nlist;
	if (own) {
		push_list(md, t, r, 0, nown, md->push);
		return;
	}
	for (int v = r * md->T; v < (r + 1) * md->T; v++) {
		const struct rr_worker *rw = &s->ws[v].rw;

		/* a helpee of its own rank is one of its partitions */
		for (int k = 0; s->ws[v].rw_ok && k < rw->nhelpees; k++)
			if (rw->helpees[k] / md->T != r)
				collect_part(md, t, rw->helpees[k]);
	}
	e = md->from_start ? md->nlist : woken_only(md, t, r, nown, md->nlist);
	push_list(md, t, r, nown, e, md->hpush);
}

/* r's helpees' rows pushed to it now, from every owner (md->hpush) */
static void helpee_pushes(struct sim_model *md, const struct sim *s, int r)
{
	for (int o = 0; o < md->P; o++)
		md->hpush[(size_t)o * md->P + r] = (struct sim_bsz){ 0, 0 };
	for (int t = 0; t < md->nt; t++)
		if (!md->t[t].held_all && md->P > 2)
			push_declared(md, s, t, r, 0);
}

/* Each rank's helpee ranks (its workers' helpees' ranks), and the rows
 * they declare per table (hmask). */
static int helpee_ranks(struct sim_model *md, const struct sim *s)
{
	size_t P = (size_t)md->P;

	md->nh = calloc(P, sizeof(int));
	md->hrank = calloc(P * SIM_HMAX, sizeof(int));
	md->hawake = calloc(P * P, sizeof(uint64_t));
	md->old = calloc(P, sizeof(uint64_t));
	if (!md->nh || !md->hrank || !md->hawake || !md->old)
		return -ENOMEM;
	for (int t = 0; t < md->nt; t++) {
		struct sim_mtab *tb = &md->t[t];

		if (tb->held_all)
			continue;
		tb->hmask = malloc(tb->rows * sizeof(uint64_t));
		tb->hgen = calloc(tb->rows, sizeof(uint32_t));
		if (!tb->hmask || !tb->hgen)
			return -ENOMEM;
	}
	for (int r = 0; r < md->P; r++)
		for (int v = r * md->T; v < (r + 1) * md->T; v++) {
			const struct rr_worker *rw = &s->ws[v].rw;

			for (int k = 0; s->ws[v].rw_ok && k < rw->nhelpees;
			     k++) {
				int q = rw->helpees[k] / md->T;
				int i = helpee_index(md, r, q);

				if (q == r || i < md->nh[r])
					continue;
				/* never: helpers sit on the next at most
				 * RR_MAX_GROUP - 1 ranks (rr_helper_group) */
				if (i == SIM_HMAX)
					return -E2BIG;
				md->hrank[r * SIM_HMAX + md->nh[r]++] = q;
			}
		}
	return 0;
}

void sim_push_fini(struct sim_model *md)
{
	free(md->nh);
	free(md->hrank);
	free(md->hawake);
	free(md->old);
}

int sim_push_plan(struct sim_model *md, const struct sim *s)
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
				push_declared(md, s, t, r, 1);
		}
	if (!md->from_start)
		return helpee_ranks(md, s);
	for (int r = 0; r < md->P; r++)
		helpee_pushes(md, s, r);
	return 0;
}

struct sim_bsz sim_model_push(const struct sim *s, int o, int r)
{
	const struct sim_model *md = s->mdl;
	size_t k = (size_t)o * md->P + r;
	struct sim_bsz b = md->push[k];

	b.bytes += md->hpush[k].bytes;
	b.n += md->hpush[k].n;
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

void sim_model_wake(struct sim *s, int r, int v, const struct sim_bsz *batch)
{
	struct sim_model *md = s->mdl;
	uint64_t bit = md->from_start ? 0 : helpee_bit(md, r, v / md->T);
	int any = 0;

	for (int o = 0; bit && o < md->P; o++) {
		uint64_t *aw = &md->hawake[(size_t)r * md->P + o];

		/* a batch of no rows to o is its last chunk alone */
		md->old[o] = md->hpush[(size_t)o * md->P + r].bytes;
		if (o == r || (*aw & bit) || batch[o].bytes <= FRR_SLOT_HDR + 8)
			continue;
		*aw |= bit;
		any = 1;
	}
	if (!any)
		return;
	helpee_pushes(md, s, r);
	/* the rows newly live go once, whole, with the owner's next push
	 * (the runtime writes them at once: push.c serve_wake) */
	for (int o = 0; o < md->P; o++) {
		uint64_t now = md->hpush[(size_t)o * md->P + r].bytes;

		if (now > md->old[o]) {
			md->wake_extra[(size_t)o * md->P + r] +=
			    now - md->old[o];
			md->wakes++;
		}
	}
}
