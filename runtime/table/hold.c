// SPDX-License-Identifier: MIT
/*
 * Which rows a rank keeps a copy of, and where (docs/runtime.md "Rows a
 * rank holds").  A rank holds its own shard, the shard of the rank before
 * it (the standby copy: every shard is whole on one other rank; not with
 * --no-standby), and the
 * rows the app's part_rows declares for the partitions the rank holds;
 * without part_rows (or on the leader when it saves the model) every row.
 * The replica region keeps them compact: per table, the held rows of each
 * owner in owner order then local-row order, then room for rows pulled
 * later.  Every rank learns every other rank's set once, at start-up, so
 * an owner pushes a changed row only into the ranks that hold it, at the
 * slot each keeps it in.  A row read that no one declared is pulled: the
 * reader takes a slot of its pull room and asks the row's owner, whose
 * server writes the row there, keeps pushing it from then on, and acks
 * (the pushes, pulls and wakes: table/push.c).
 *
 * On use: the rows a rank holds only for the partitions its workers may
 * help (RapidReassignment's helpees; not its own partitions', its shard's
 * or the standby's) start dormant: slots are laid out, but their owner
 * does not push them and the pages stay untouched.  They wake per owner
 * and helpee rank: the rank's first read of a dormant row of owner o while
 * it runs a range of rank q's partition asks o once for those of its rows
 * that q declares (one request, the rows written, an ack), and o pushes
 * them every clock from then on.  So a rank whose workers never help
 * receives none of its helpees' rows, and one that helps receives those
 * of the helpees it helped, from the owners it read them from.
 * --rr-rows-from-start keeps them live from the start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "table.h"

#define NT FRR_MAX_TABLES

static inline void bit_set(uint64_t *b, uint64_t i)
{
	b[i >> 6] |= 1ull << (i & 63);
}

int frr_rows_add(struct frr_rowset *rs, int table, uint64_t row, uint64_t n)
{
	if (!rs || table < 0 || table >= rs->rt->tb->ntables ||
	    row > rs->rt->tb->spec[table].rows ||
	    n > rs->rt->tb->spec[table].rows - row) {
		frr_err("app %s: part_rows: table %d rows [%llu, +%llu) out of "
			"range (an app bug)",
			rs ? rs->rt->app->name : "?", table,
			(unsigned long long)row, (unsigned long long)n);
		return -EINVAL;
	}
	for (uint64_t r = row; r < row + n; r++)
		bit_set(rs->bits[table], r);
	return 0;
}

static int hold_all_env(void)
{
	const char *e = getenv("FLEXRR_HOLD_ALL");

	return e && strcmp(e, "0") != 0 && *e;
}

/* Whether rank r keeps every row: the app declares none, or r is the
 * leader and writes the model at the end (--save reads every row after
 * the servers stopped, when nothing could be pulled). */
static int holds_all(const struct frr_rt *rt, int r)
{
	const struct frr_app_ops *a = rt->app;

	/* FLEXRR_HOLD_ALL=1: the data plane from before part_rows, for
	 * measuring against it in one run (bench/bytes.sh); every rank of a
	 * job must see the same value (launchers pass the environment) */
	if (!frr_rt_has_part_rows(a) || rt->P == 1 || hold_all_env())
		return 1;
	return r == 0 && rt->prm->save_path && frr_rt_app_saves(a);
}

/* Whether rank r's rows of owner o that only the partitions r may help
 * declare start dormant: not o's own, not r's standby of o, not on a rank
 * that holds every row. */
static int dormant_ok(const struct frr_rt *rt, int r, int o)
{
	int sb = rt->prm->no_standby ? r : (r + rt->P - 1) % rt->P;

	return rt->tb->hold->on_use && o != r && o != sb && !holds_all(rt, r);
}

int frr_rt_has_part_rows(const struct frr_app_ops *a)
{
	return a->size >= offsetof(struct frr_app_ops, part_rows) +
			      sizeof(a->part_rows) &&
	       a->part_rows;
}

int frr_rt_part_rows(struct frr_rt *rt, int v, struct frr_rowset *rs)
{
	int err = rt->app->part_rows(rt->app_state, v, rs);

	if (err)
		frr_err("app %s: part_rows(partition %d) failed (%d)",
			rt->app->name, v, err);
	return err > 0 ? -EINVAL : err;
}

/* This rank's declarations (part_rows): into own[t] the rows its own
 * partitions use (where rows live: table/place.c), into all[t] those and
 * the rows of the other partitions it holds (rr's replicas). */
static int declare(struct frr_rt *rt, const uint8_t *held, uint64_t *const *all,
		   uint64_t *const *own)
{
	struct frr_rowset rs = { .rt = rt };

	for (int v = 0; v < rt->W; v++) {
		int err;

		if (!held[v])
			continue;
		for (int t = 0; t < rt->tb->ntables; t++)
			rs.bits[t] = v / rt->T == rt->rank ? own[t] : all[t];
		err = frr_rt_part_rows(rt, v, &rs);
		if (err)
			return err;
	}
	return 0;
}

/* Rank r's set in bits (its declarations): plus what it holds whatever it
 * declared, its own shard and the standby shard (the previous rank's; not
 * with --no-standby: sb is then r itself), or every row. */
static void complete_set(struct frr_rt *rt, int r, uint64_t *const *bits,
			 uint64_t *const *own)
{
	const struct frr_hold *h = rt->tb->hold;
	int P = rt->P, sb = rt->prm->no_standby ? r : (r + P - 1) % P;

	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t rows = rt->tb->spec[t].rows;

		if (holds_all(rt, r)) {
			memset(bits[t], 0xff, frr_bit_words(rows) * 8);
			continue;
		}
		for (uint64_t w = 0; w < frr_bit_words(rows); w++)
			bits[t][w] |= own[t][w];
		for (int o = r;; o = sb) {
			for (uint64_t li = 0;
			     li < rt->tb->shard_rows[t * P + o]; li++)
				bit_set(bits[t], frr_place_row(h, P, t, o, li));
			if (o == sb || P == 1)
				break;
		}
	}
}

/* Rank r's layout from its bitmaps: per table its offset in r's replica,
 * its slot base per owner, its pull room.  cnt: [t * P + o] held rows. */
static void layout_of(struct frr_rt *rt, int r, uint64_t *const *bits,
		      uint64_t *cnt, uint64_t *base, uint64_t *len)
{
	struct frr_hold *h = rt->tb->hold;
	int P = rt->P;
	uint64_t off = 0;

	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t rows = rt->tb->spec[t].rows, held = 0, room;

		for (int o = 0; o < P; o++)
			cnt[t * P + o] = 0;
		for (uint64_t w = 0; w < frr_bit_words(rows); w++)
			for (uint64_t m = bits[t][w]; m; m &= m - 1) {
				uint64_t row =
				    w * 64 + (uint64_t)__builtin_ctzll(m);

				if (row < rows)
					cnt[t * P +
					    frr_place_owner(h, P, t, row)]++;
			}
		for (int o = 0; o < P; o++) {
			base[t * P + o] = held;
			held += cnt[t * P + o];
		}
		/* room for rows read but not declared: an eighth of the set,
		 * at least 256 rows, at most every row not held */
		room = held / 8 > 256 ? held / 8 : 256;
		if (room > rows - held)
			room = rows - held;
		if (room > FRR_REQ_SLOT_MAX)
			room = FRR_REQ_SLOT_MAX;
		h->tbl_off[r * NT + t] = off;
		h->pull_base[r * NT + t] = (uint32_t)held;
		h->pull_cap[r * NT + t] = (uint32_t)room;
		off += ((held + room) * rt->tb->spec[t].cols * sizeof(float) +
			63) &
		       ~(uint64_t)63;
	}
	*len = off;
}

/* A dormant row of owner o: each helpee declaring it has rows of o to
 * wake. */
static void mark_pairs(struct frr_hold *h, int t, uint64_t row, int o)
{
	for (int i = 0; i < h->nh; i++)
		if (frr_bit_get(h->hbits[i * NT + t], row))
			h->dormant[o * h->nh + i] = 1;
}

/* Reader side: this rank's slot of every row it holds (dormant where
 * only the partitions it may help declare it). */
static int fill_rslot(struct frr_rt *rt, uint64_t *const *bits,
		      uint64_t *const *own, const uint64_t *base)
{
	struct frr_hold *h = rt->tb->hold;
	int P = rt->P;

	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t rows = rt->tb->spec[t].rows;

		h->rslot[t] = malloc(rows * sizeof(uint32_t) + 4);
		if (!h->rslot[t])
			return -ENOMEM;
		memset(h->rslot[t], 0xff, rows * sizeof(uint32_t));
		for (int o = 0; o < P; o++) {
			uint64_t k = base[t * P + o];
			int dok = dormant_ok(rt, rt->rank, o);

			for (uint64_t li = 0;
			     li < rt->tb->shard_rows[t * P + o]; li++) {
				uint64_t row = frr_place_row(h, P, t, o, li);
				uint32_t s = (uint32_t)k;

				if (!frr_bit_get(bits[t], row))
					continue;
				k++;
				if (dok && !frr_bit_get(own[t], row)) {
					s |= FRR_HOLD_DORMANT;
					mark_pairs(h, t, row, o);
					h->dormant_bytes +=
					    rt->tb->spec[t].cols *
					    sizeof(float);
				}
				h->rslot[t][row] = s;
			}
		}
	}
	return 0;
}

/* Owner side: reader r's slot of each row of this rank's shard (dormant
 * as fill_rslot marks it on r). */
static int fill_oslot(struct frr_rt *rt, int r, uint64_t *const *bits,
		      uint64_t *const *own, const uint64_t *base)
{
	struct frr_hold *h = rt->tb->hold;
	int P = rt->P;

	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t S = rt->tb->shard_rows[t * P + rt->rank];
		uint64_t k = base[t * P + rt->rank];
		int dok = dormant_ok(rt, r, rt->rank);
		uint32_t *os;

		if (!h->oslot[t]) {
			h->oslot[t] =
			    malloc((size_t)P * S * sizeof(uint32_t) + 4);
			if (!h->oslot[t])
				return -ENOMEM;
		}
		os = h->oslot[t] + (uint64_t)r * S;
		for (uint64_t li = 0; li < S; li++) {
			uint64_t row = frr_place_row(h, P, t, rt->rank, li);

			os[li] = FRR_HOLD_NONE;
			if (!frr_bit_get(bits[t], row))
				continue;
			os[li] = (uint32_t)k++;
			if (dok && !frr_bit_get(own[t], row))
				os[li] |= FRR_HOLD_DORMANT;
		}
	}
	return 0;
}

/* Bitmaps of rank r inside an exchange record. */
static void rec_bits(const struct frr_rt *rt, uint64_t *rec, uint64_t **bits)
{
	uint64_t at = 0;

	for (int t = 0; t < rt->tb->ntables; t++) {
		bits[t] = rec + at;
		at += frr_bit_words(rt->tb->spec[t].rows);
	}
}

/* Rank q's own partitions' declarations in the exchange record. */
static void own_bits(const struct frr_rt *rt, uint64_t *all, size_t rec, int q,
		     uint64_t **own)
{
	rec_bits(rt, all + (size_t)q * rec * 2 + rec, own);
}

static int hold_alloc(struct frr_rt *rt)
{
	struct frr_hold *h = calloc(1, sizeof(*h));
	size_t n = (size_t)rt->P * NT;

	if (!h)
		return -ENOMEM;
	rt->tb->hold = h;
	h->me = rt->rank + 1; /* place.c: this rank's solo rows */
	h->tbl_off = calloc(n, sizeof(uint64_t));
	h->pull_base = calloc(n, sizeof(uint32_t));
	h->pull_cap = calloc(n, sizeof(uint32_t));
	h->pull_seen = calloc((size_t)rt->W + rt->P, sizeof(uint64_t));
	h->sent_to = calloc((size_t)rt->P, sizeof(uint64_t));
	h->hidx = malloc((size_t)rt->P * sizeof(int));
	h->push_ring = calloc(FRR_RT_STAT_RING, sizeof(uint64_t));
	h->apply_ring = calloc(FRR_RT_STAT_RING, sizeof(double));
	if (!h->tbl_off || !h->pull_base || !h->pull_cap || !h->pull_seen ||
	    !h->sent_to || !h->hidx || !h->push_ring || !h->apply_ring)
		return -ENOMEM;
	for (int q = 0; q < rt->P; q++)
		h->hidx[q] = -1;
	return 0;
}

/* A table too long for 32-bit slots: the plan is the whole model (so the
 * memory check, which runs first, refuses what cannot fit with its
 * figures), and frr_rt_hold_check refuses the rest. */
static int too_long(struct frr_rt *rt)
{
	uint64_t off = 0;

	for (int t = 0; t < rt->tb->ntables; t++)
		if (rt->tb->spec[t].rows >= FRR_HOLD_BUSY)
			rt->tb->hold->too_long = t + 1;
	if (!rt->tb->hold->too_long)
		return 0;
	for (int t = 0; t < rt->tb->ntables; t++) {
		rt->tb->repl_off[t * rt->P + rt->rank] = off;
		off +=
		    rt->tb->spec[t].rows * rt->tb->spec[t].cols * sizeof(float);
	}
	rt->tb->repl_len = off;
	return 1;
}

int frr_rt_hold_check(const struct frr_rt *rt)
{
	const struct frr_table_spec *s;

	if (!rt->tb->hold->too_long)
		return 0;
	s = &rt->tb->spec[rt->tb->hold->too_long - 1];
	frr_err("table %s has %llu rows: at most %u are supported; split it "
		"into tables",
		s->name, (unsigned long long)s->rows, FRR_HOLD_BUSY - 1);
	return -E2BIG;
}

/*
 * Every rank's set: each builds its bitmaps, and all are exchanged once
 * (P x rows / 8 bytes per table on each rank, at start-up only).  Sets
 * this rank's replica layout (repl_off, repl_len), its slot of every row
 * it holds, and each other rank's slot of this rank's rows.
 */
/* This rank's declarations into its record of `all` (2 x rec words per
 * rank), every rank's exchanged, and where rows live decided from them. */
static int exchange(struct frr_rt *rt, const uint8_t *held, uint64_t *all,
		    size_t rec)
{
	int P = rt->P, err;
	uint64_t *mine = all + (size_t)rt->rank * rec * 2, *copy;
	uint64_t *bits[NT], *own[NT], **ownq, rows[NT];

	rec_bits(rt, mine, bits);
	rec_bits(rt, mine + rec, own);
	err = declare(rt, held, bits, own);
	if (err)
		return err;
	copy = malloc(rec * 16 + 8);
	ownq = calloc((size_t)NT * P + 1, sizeof(*ownq));
	err = copy && ownq ? 0 : -ENOMEM;
	if (!err) {
		memcpy(copy, mine, rec * 16);
		err = frr_rt_allgather(rt,
				       "exchanging which rows each rank "
				       "holds",
				       copy, rec * 16, all);
	}
	for (int q = 0; q < P && !err; q++) {
		own_bits(rt, all, rec, q, own);
		for (int t = 0; t < rt->tb->ntables; t++)
			ownq[(size_t)t * P + q] = own[t];
	}
	for (int t = 0; t < rt->tb->ntables; t++)
		rows[t] = rt->tb->spec[t].rows;
	if (!err)
		err = frr_place(rt->tb->hold, P, rt->tb->ntables, rows,
				rt->tb->shard_rows, ownq);
	free(copy);
	free(ownq);
	return err;
}

/* On use, woken per owner and helpee rank (table/push.c wake): the ranks
 * whose partitions this rank holds (held[v]) and their declarations (a
 * copy: `all` goes after set-up), the pairs' states, and as an owner
 * every rank's declared rows of its shard. */
static int helpees(struct frr_rt *rt, const uint8_t *held, uint64_t *all,
		   size_t rec)
{
	struct frr_hold *h = rt->tb->hold;
	int P = rt->P, T = rt->T;
	uint64_t *own[NT];

	for (int v = 0; v < rt->W; v++)
		if (held[v] && v / T != rt->rank && h->hidx[v / T] < 0)
			h->hidx[v / T] = h->nh++;
	h->hrank = malloc((size_t)(h->nh + 1) * sizeof(int));
	h->hbits = calloc((size_t)h->nh * NT + 1, sizeof(uint64_t *));
	h->dormant = calloc((size_t)P * h->nh + 1, 1);
	if (!h->hrank || !h->hbits || !h->dormant)
		return -ENOMEM;
	for (int q = 0; q < P; q++) {
		int i = h->hidx[q];

		own_bits(rt, all, rec, q, own);
		for (int t = 0; i >= 0 && t < rt->tb->ntables; t++) {
			size_t b = frr_bit_words(rt->tb->spec[t].rows) * 8;

			h->hrank[i] = q;
			if (!(h->hbits[i * NT + t] = malloc(b)))
				return -ENOMEM;
			memcpy(h->hbits[i * NT + t], own[t], b);
		}
	}
	/* each table's bits in rank 0's record, the others' rec * 2 words on */
	own_bits(rt, all, rec, 0, own);
	for (int t = 0; t < rt->tb->ntables; t++) {
		uint64_t S = rt->tb->shard_rows[t * P + rt->rank];
		uint64_t nw = frr_bit_words(S);
		const uint64_t *o0 = own[t];

		if (!(h->qdecl[t] = calloc((size_t)P * nw + 1, 8)))
			return -ENOMEM;
		for (uint64_t li = 0; li < S; li++) {
			uint64_t row = frr_place_row(h, P, t, rt->rank, li);

			for (int q = 0; q < P; q++)
				if (frr_bit_get(o0 + (size_t)q * rec * 2, row))
					bit_set(h->qdecl[t] + (uint64_t)q * nw,
						li);
		}
	}
	return 0;
}

static int rows_fit_dormant(const struct frr_rt *rt)
{
	for (int t = 0; t < rt->tb->ntables; t++)
		if (rt->tb->spec[t].rows >= FRR_HOLD_DORMANT / 2)
			return 0;
	return 1;
}

int frr_rt_hold_plan(struct frr_rt *rt, const uint8_t *held)
{
	int P = rt->P, err;
	size_t rec = 0;
	uint64_t *all = NULL, *bits[NT], *own[NT], *cnt, *base, len;

	err = hold_alloc(rt);
	if (err || too_long(rt))
		return err;
	for (int t = 0; t < rt->tb->ntables; t++)
		rec += frr_bit_words(rt->tb->spec[t].rows);
	/* a record per rank: its declarations (all), then its own
	 * partitions' (own) */
	cnt = calloc((size_t)NT * P * 2, sizeof(uint64_t));
	all = calloc((size_t)P * rec * 2 + 1, sizeof(uint64_t));
	if (!cnt || !all) {
		err = -ENOMEM;
		goto out;
	}
	base = cnt + (size_t)NT * P;
	/* holds_all(-1): every rank holds all (the app declares nothing) */
	rt->tb->hold->may_pull = P > 1 && !holds_all(rt, -1);
	/* a slot with the dormant bit must still name its slot */
	rt->tb->hold->on_use = rt->tb->hold->may_pull &&
			       !rt->prm->rr_rows_from_start &&
			       rows_fit_dormant(rt);
	if (rt->tb->hold->may_pull)
		err = exchange(rt, held, all, rec);
	if (!err && rt->tb->hold->on_use)
		err = helpees(rt, held, all, rec);
	for (int r = P - 1; r >= 0 && !err; r--) {
		rec_bits(rt, all + (size_t)r * rec * 2, bits);
		own_bits(rt, all, rec, r, own);
		complete_set(rt, r, bits, own);
		layout_of(rt, r, bits, cnt, base, &len);
		if (r != rt->rank) {
			err = fill_oslot(rt, r, bits, own, base);
			continue;
		}
		rt->tb->repl_len = len ? len : 64;
		for (int t = 0; t < rt->tb->ntables; t++) {
			for (int o = 0; o < P; o++)
				rt->tb->repl_off[t * P + o] =
				    rt->tb->hold->tbl_off[r * NT + t] +
				    base[t * P + o] * rt->tb->spec[t].cols *
					sizeof(float);
		}
		err = fill_rslot(rt, bits, own, base);
		for (int k = 0; k < P * rt->tb->hold->nh && !err; k++)
			rt->tb->hold->dormant_pairs += rt->tb->hold->dormant[k];
	}
out:
	free(all);
	free(cnt);
	return err;
}

void frr_rt_hold_fini(struct frr_rt *rt)
{
	struct frr_hold *h = rt->tb->hold;
	uint64_t sent = 0;

	if (!h)
		return;
	for (int r = 0; r < rt->P; r++)
		sent += h->sent_to[r];
	frr_dbg(
	    "rank %d held %u rows of table 0 (of %llu), sent %llu bytes "
	    "of rows after start-up, served %llu pulls, woke %llu of the "
	    "%d (owner, helpee rank) pairs whose rows it held dormant",
	    rt->rank, rt->tb->ntables ? h->pull_base[rt->rank * NT] : 0,
	    (unsigned long long)(rt->tb->ntables ? rt->tb->spec[0].rows : 0),
	    (unsigned long long)sent, (unsigned long long)h->served,
	    (unsigned long long)atomic_load(&h->woken), h->dormant_pairs);
	for (int t = 0; t < NT; t++) {
		free(h->rslot[t]);
		free(h->oslot[t]);
		free(h->qdecl[t]);
	}
	frr_place_fini(h);
	free(h->tbl_off);
	free(h->pull_base);
	free(h->pull_cap);
	free(h->pull_seen);
	free(h->sent_to);
	free(h->dormant);
	for (int k = 0; h->hbits && k < h->nh * NT; k++)
		free(h->hbits[k]);
	free(h->hbits);
	free(h->hrank);
	free(h->hidx);
	free(h->push_ring);
	free(h->apply_ring);
	free(h);
	rt->tb->hold = NULL;
}

uint64_t frr_rt_shared_rows(const struct frr_rt *rt, int t, int o)
{
	uint64_t n = rt->tb->shard_rows[t * rt->P + o];
	const uint64_t *solo = rt->tb->hold ? rt->tb->hold->solo[t] : NULL;

	return solo ? n - solo[o] : n;
}

const float *frr_rt_replica_row(const struct frr_rt *rt, int t, uint64_t row)
{
	uint32_t s =
	    __atomic_load_n(&rt->tb->hold->rslot[t][row], __ATOMIC_ACQUIRE);

	return (const float *)(rt->tb->replp +
			       rt->tb->hold->tbl_off[rt->rank * NT + t] +
			       (uint64_t)s * rt->tb->spec[t].cols *
				   sizeof(float));
}
