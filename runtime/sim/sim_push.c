// SPDX-License-Identifier: MIT
/*
 * The simulator's replica pushes, by the runtime's rules (table/hold.c,
 * table/push.c): after a clock each shard's written range to every rank
 * holding rows of it, one write per run; a rank holds its shard, the
 * previous rank's as standby and the rows its partitions declare, and the
 * rows only the partitions it may help declare once a range it ran woke
 * their owner (a one-time burst then, with the owner's next push).
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
	for (uint64_t i = 0, e = sim_visit_end(md, t, v, 0, md->n); i < e; i++)
		sim_item_rows(md, t, v, i, collect);
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
	sim_set_begin(md);
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

void sim_push_plan(struct sim_model *md, const struct sim *s)
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
