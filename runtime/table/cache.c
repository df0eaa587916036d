// SPDX-License-Identifier: MIT
/*
 * The worker cache: every row an app reads or writes in process() is a copy
 * in the calling thread's cache (flexrr.h "Rows", docs/runtime.md "The
 * worker cache").
 *
 * A row is fetched at its first access in a batch: copied from this rank's
 * replica (loading the shard's done word first: the copy holds at least
 * every update of the clocks that word says are applied, which is what the
 * SSP accounting checks), plus, for FRR_TABLE_SEE_OWN_PENDING tables, the
 * changes this worker pushed in earlier clocks that the shard has not
 * applied yet.  Counting those exactly needs the exact clock the copy holds:
 * the shard writes its "pushing" word before it overwrites any row and its
 * "done" word after (table/shard.c), so a copy taken between two equal
 * readings of done and pushing holds exactly the clocks < done (a seqlock;
 * a copy that raced with a push is taken again).  Under --eager the shard
 * applies batches as they come, and the pair that counts is its words for
 * this thread's own batches (load_eager).
 *
 * Later accesses return the same memory; the app changes it in place.  The
 * flush (table/batch.c) pushes value - value at the fetch for written rows
 * and starts the next batch by bumping the generation: no clearing, no
 * allocation, no lock on any access.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "flexrr/log.h"
#include "table.h"

/*
 * Zeroed memory for a cache array; a large one is asked to be backed by
 * transparent huge pages (where the system has them on request): workers
 * touch rows at random, and with 4 KB pages most row accesses of a table
 * larger than the TLB's reach (a few MB) also missed the TLB.  The price is
 * memory in 2 MB steps instead of 4 KB ones for tables touched sparsely.
 */
static void *cache_calloc(size_t n, size_t size)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uint8_t *p = calloc(n, size);
	uintptr_t a, b;

	if (!p || n * size < 4 * huge)
		return p;
	a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	b = ((uintptr_t)p + n * size) & ~(huge - 1);
#ifdef MADV_HUGEPAGE
	/* advice only: without THP the memory stays as it is */
	(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#endif
	return p;
}

/*
 * Whether a cache keeps a snapshot of each row it reads.  SET sends the
 * value, not a change: never.  ADD takes its change against the replica
 * row itself in an exact job (BSP): every shard applies clock c only once
 * every worker's last batch of c is in, after this worker's flush, and
 * pushes to the replicas only then, so a row read in clock c is the same,
 * bit for bit, at the flush.  Not with slack (this worker's own earlier
 * batches land meanwhile), reassignment (a helper's batch of the same
 * rows), backups (a clock may be applied before a slow worker's flush) or
 * the test that breaks SSP.
 */
int frr_cache_keeps_snap(const struct frr_rt *rt,
			 const struct frr_table_spec *s, int ring)
{
	if (s->rule == FRR_UPDATE_SET)
		return 0;
	return s->rule != FRR_UPDATE_ADD || ring != 0 || rt->eff_slack != 0 ||
	       rt->eager || rt->rr_reassign || rt->backups != 0 ||
	       rt->test_break_ssp;
}

int frr_cache_init(struct frr_rt *rt, struct frr_cache *k, int ring)
{
	memset(k, 0, sizeof(*k));
	k->gen = 1;
	k->ring = ring;
	for (int t = 0; t < rt->tb->ntables; t++) {
		const struct frr_table_spec *s = &rt->tb->spec[t];
		struct frr_tcache *tc = &k->t[t];
		size_t n = (size_t)s->rows * s->cols;

		tc->rows = s->rows;
		tc->cols = s->cols;
		tc->flags = s->flags;
		tc->rule = s->rule;
		/* the same float arithmetic as the apps' former push_scale =
		 * 1.0f / nparts: BSP results stayed bit-identical */
		tc->scale = s->combine == FRR_COMBINE_SUM
				? 1.0f
				: 1.0f / (float)rt->job.nparts;
		tc->by_share = s->combine == FRR_COMBINE_MEAN;
		tc->nosnap = !frr_cache_keeps_snap(rt, s, ring);
		tc->val = cache_calloc(n, sizeof(float));
		tc->snap = cache_calloc(n, sizeof(float));
		tc->stamp = calloc(s->rows, 1);
		tc->slot = calloc(s->rows, sizeof(uint32_t));
		tc->lo = malloc((size_t)rt->P * sizeof(uint64_t));
		tc->hi = calloc((size_t)rt->P, sizeof(uint64_t));
		tc->wrows = calloc(s->rows, sizeof(uint64_t));
		tc->wby = calloc(s->rows, sizeof(uint64_t));
		tc->wstart = calloc((size_t)rt->P + 1, sizeof(uint64_t));
		if (!tc->val || !tc->snap || !tc->stamp || !tc->slot ||
		    !tc->lo || !tc->hi || !tc->wrows || !tc->wby || !tc->wstart)
			return -ENOMEM;
		for (int o = 0; o < rt->P; o++)
			tc->lo[o] = UINT64_MAX;
		if ((s->flags & FRR_TABLE_COMPENSATED) &&
		    !(tc->comp = cache_calloc(n, sizeof(float))))
			return -ENOMEM;
		if (ring && (s->flags & FRR_TABLE_SEE_OWN_PENDING) &&
		    s->rule != FRR_UPDATE_ADAGRAD) {
			tc->pend =
			    cache_calloc((size_t)ring * n, sizeof(float));
			tc->ptag =
			    calloc((size_t)ring * s->rows, sizeof(int32_t));
			tc->pslot = calloc(s->rows, sizeof(uint32_t));
			tc->lref = (const float **)calloc(
			    (size_t)ring * s->rows, sizeof(*tc->lref));
			tc->ltag =
			    calloc((size_t)ring * s->rows, sizeof(int32_t));
			if (!tc->pend || !tc->ptag || !tc->pslot || !tc->lref ||
			    !tc->ltag)
				return -ENOMEM;
		}
	}
	return 0;
}

void frr_cache_fini(struct frr_cache *k)
{
	for (int t = 0; t < FRR_MAX_TABLES; t++) {
		struct frr_tcache *tc = &k->t[t];

		free(tc->val);
		free(tc->snap);
		free(tc->stamp);
		free(tc->slot);
		free(tc->pslot);
		free(tc->lo);
		free(tc->hi);
		free(tc->wrows);
		free(tc->wby);
		free(tc->wstart);
		free(tc->pend);
		free(tc->ptag);
		free(tc->lref);
		free(tc->ltag);
		free(tc->comp);
	}
	memset(k, 0, sizeof(*k));
}

void frr_cache_next_batch(struct frr_cache *k)
{
	k->items = 0;
	k->updates = 0;
	for (int t = 0; t < FRR_MAX_TABLES; t++)
		k->t[t].nslot = k->t[t].ndslot = 0;
	/* 7 bits of generation (the low stamp bit is "written"): a clear
	 * every 127 batches, one byte per row, is less than the flushes of
	 * those batches walk */
	if (++k->gen <= FRR_STAMP_GENS)
		return;
	for (int t = 0; t < FRR_MAX_TABLES; t++)
		if (k->t[t].stamp)
			memset(k->t[t].stamp, 0, k->t[t].rows);
	k->gen = 1;
}

/*
 * The replica is overwritten while workers copy from it (SSP allows a copy
 * to hold newer rows, even part of a row: newer is allowed), by the local
 * server and by peers' one-sided writes that TSan cannot see; so this read
 * is not instrumented either (the writer's copy, table/shard.c, is not).
 */
__attribute__((no_sanitize("thread"), FRR_NO_MEMCPY_IDIOM)) static void
replica_load(float *dst, const float *src, uint32_t cols)
{
	for (uint32_t j = 0; j < cols; j++)
		dst[j] = src[j];
}

/* A seqlock read: copy the row between a reading of `after` (the word the
 * writer sets once its rows are out) and an equal one of `before` (set
 * before it changes any row); returns that value. */
static uint64_t load_stable(struct frr_rt *rt, const uint64_t *after,
			    const uint64_t *before, const float *src,
			    float *dst, uint32_t cols)
{
	for (int tries = 0;; tries++) {
		uint64_t d = frr_tp_load_u64(after);

		replica_load(dst, src, cols);
#ifdef __SANITIZE_THREAD__
		/* gcc refuses this fence under TSan, and the copy above is not
		 * instrumented anyway: a compiler barrier keeps the order (x86
		 * does not reorder loads with loads) */
		atomic_signal_fence(memory_order_seq_cst);
#else
		atomic_thread_fence(memory_order_acquire);
#endif
		if (frr_tp_load_u64(before) == d || frr_rt_failed(rt))
			return d;
		/* the writer is at it: a short while (its rows, then after) */
		if (tries > 8)
			sched_yield();
	}
}

/* Copy a row holding exactly the clocks < the returned done value (the
 * shard's pushing word is written before its rows, done after). */
static uint64_t load_exact(struct frr_rt *rt, int o, const float *src,
			   float *dst, uint32_t cols)
{
	return load_stable(rt, ctl_u64(rt, rt->off_done + (size_t)o * 64),
			   ctl_u64(rt, rt->off_push + (size_t)o * 64), src, dst,
			   cols);
}

/* Eager (table/shard.c): copy a row holding exactly this thread's own
 * batches of the clocks < the returned value, by shard o's seqlock words
 * for it; clocks < d (done, read before) are applied in any case. */
static uint64_t load_eager(struct frr_rt *rt, int o, int t, uint64_t d,
			   const float *src, float *dst, uint32_t cols)
{
	uint64_t a = load_stable(rt, frr_rt_eapp_word(rt, o, t, 1),
				 frr_rt_eapp_word(rt, o, t, 0), src, dst, cols);

	return a > d ? a : d;
}

/* Add what this worker pushed in clocks [d, clock) for this row (ADD), or
 * take the latest value it pushed in them (SET: a pushed value replaces).
 * here: the row is of this rank's shard, its changes are where its chunks
 * are (lref: table/batch.c), which stay until the shard has applied their
 * clock, that is until done > their clock, and d, read after, skips them. */
static void add_pending(const struct frr_cache *k, const struct frr_tcache *tc,
			uint64_t row, uint64_t d, int clock, int here,
			float *val)
{
	uint64_t r = tc->pslot[row];
	const int32_t *tag;
	const float *last = NULL;
	int64_t last_pc = -1;

	if (!r--)
		return; /* never pushed by this worker */
	tag = (here ? tc->ltag : tc->ptag) + r * (uint64_t)k->ring;
	for (int s = 0; s < k->ring; s++) {
		int64_t pc = (int64_t)tag[s] - 1;
		uint64_t at = r * (uint64_t)k->ring + (uint64_t)s;
		const float *p;

		if (pc < (int64_t)d || pc >= clock)
			continue;
		p = here ? tc->lref[at] : tc->pend + at * tc->cols;
		if (tc->rule == FRR_UPDATE_SET) {
			if (pc > last_pc) {
				last_pc = pc;
				last = p;
			}
			continue;
		}
		for (uint32_t j = 0; j < tc->cols; j++)
			val[j] += p[j];
	}
	if (last)
		memcpy(val, last, tc->cols * sizeof(float));
}

/* Not inlined: the hit path of an access stays a leaf without a frame. */
static __attribute__((noinline)) uint32_t
fetch(struct frr_ctx *c, struct frr_tcache *tc, int t, uint64_t row)
{
	struct frr_rt *rt = c->rt;
	struct frr_cache *k = c->cache;
	const struct frr_hold *h = rt->tb->hold;
	int o = frr_place_owner(h, rt->P, t, row), held = 0;
	uint32_t rs = __atomic_load_n(&h->rslot[t][row], __ATOMIC_ACQUIRE);
	const float *src;
	/* a row applied in place needs no snapshot: its slot from the top,
	 * so snap's pages stay those of the other rows (table/direct.c) */
	int in_place = frr_tcache_direct(tc, row) && !tc->dsnap;
	uint32_t slot =
	    in_place ? (uint32_t)(tc->rows - 1 - tc->ndslot++) : tc->nslot++;
	float *val = tc->val + (uint64_t)slot * tc->cols,
	      *snap = tc->snap + (uint64_t)slot * tc->cols;
	struct frr_wclock *rec = c->rec;
	uint64_t d;

	/* a row this rank does not hold yet, or holds dormant: pull it, or
	 * wake its owner's (table/hold.c) */
	if (!frr_hold_live(rs)) {
		held = frr_rt_row_hold(rt, t, row, c->snd->local, c->part);
	}
	if (held < 0) {
		/* the job failed (said why): a harmless row, the worker
		 * stops after this process() call */
		memset(val, 0, tc->cols * sizeof(float));
		src = val;
	} else {
		src = frr_rt_replica_row(rt, t, row);
		rec->pulls += (uint64_t)held;
	}
	if (tc->ptag && rt->eager) {
		d = frr_rt_shard_done(rt, o);
		add_pending(
		    k, tc, row,
		    load_eager(rt, o, c->snd->local, d, src, val, tc->cols),
		    c->clock, o == rt->rank, val);
	} else if (tc->ptag) {
		d = load_exact(rt, o, src, val, tc->cols);
		add_pending(k, tc, row, d, c->clock, o == rt->rank, val);
	} else {
		/* done first: the copy holds at least the clocks < d */
		d = frr_rt_shard_done(rt, o);
		replica_load(val, src, tc->cols);
	}
	if (tc->rule == FRR_UPDATE_ADAGRAD)
		memset(snap, 0, tc->cols * sizeof(float));
	else if (!tc->nosnap && !in_place)
		memcpy(snap, val, tc->cols * sizeof(float));
	if (tc->comp)
		memset(tc->comp + (uint64_t)slot * tc->cols, 0,
		       tc->cols * sizeof(float));
	rec->reads++;
	if ((int64_t)d - 1 < rec->min_data_clock)
		rec->min_data_clock = (int64_t)d - 1;
	if ((int64_t)d - 1 < c->bound)
		rec->stale_reads++;
	tc->slot[row] = slot;
	tc->stamp[row] = (uint8_t)(k->gen << 1);
	return k->gen << 1;
}

/* An app bug: fail the job once and hand out a harmless row, so process()
 * can return; the worker then stops. */
static __attribute__((cold)) float *bad_access(struct frr_ctx *c,
					       const char *what, int t,
					       uint64_t row, uint32_t col)
{
	struct frr_rt *rt = c->rt;
	const char *why = "not allowed on this table's update rule";
	char where[64] = "";

	if ((unsigned)t >= (unsigned)rt->tb->ntables)
		why = "no such table";
	else if (row >= rt->tb->spec[t].rows)
		why = "row out of range";
	else if (col != UINT32_MAX)
		why = "column out of range";
	if (col != UINT32_MAX)
		snprintf(where, sizeof(where), " col %u", col);
	frr_rt_fail(
	    rt, -EINVAL, "app %s: %s table %d row %llu%s: %s (an app bug)",
	    rt->app->name, what, t, (unsigned long long)row, where, why);
	return c->snd->bad_row;
}

static void mark_written(struct frr_ctx *c, struct frr_tcache *tc, uint64_t row)
{
	const struct frr_hold *h = c->rt->tb->hold;
	int P = c->rt->P, t = (int)(tc - c->cache->t);
	int o = frr_place_owner(h, P, t, row);
	uint64_t li = frr_place_local(h, P, t, row);

	tc->stamp[row] |= 1;
	if (frr_tcache_direct(tc, row)) { /* at the top, outside lo/hi */
		tc->wrows[tc->rows - 1 - tc->ndw++] = row;
		return;
	}
	tc->wrows[tc->nw++] = row; /* at most once per row and batch */
	if (li < tc->lo[o])
		tc->lo[o] = li;
	if (li + 1 > tc->hi[o])
		tc->hi[o] = li + 1;
}

/* The row's cache entry, fetched if this batch has not seen it yet. */
static inline struct frr_tcache *entry(struct frr_ctx *c, int t, uint64_t row,
				       uint32_t *stamp)
{
	struct frr_cache *k = c->cache;
	struct frr_tcache *tc;
	uint32_t s;

	if ((unsigned)t >= FRR_MAX_TABLES || row >= k->t[t].rows)
		return NULL;
	tc = &k->t[t];
	s = tc->stamp[row];
	if ((s >> 1) != k->gen)
		s = fetch(c, tc, t, row);
	*stamp = s;
	return tc;
}

const float *frr_row_read(struct frr_ctx *c, int table, uint64_t row)
{
	uint32_t s;
	struct frr_tcache *tc = entry(c, table, row, &s);

	if (!tc)
		return bad_access(c, "reading", table, row, UINT32_MAX);
	return frr_tcache_val(tc, row);
}

/* Row `row`'s replica memory, which its first access copies (fetch):
 * nothing for a row this batch has or one not held yet (its pull is the
 * cost). */
static void replica_prefetch(const struct frr_ctx *c, int t, uint64_t row)
{
	const struct frr_rt *rt = c->rt;
	const struct frr_tcache *tc = &c->cache->t[t];

	if ((uint32_t)(tc->stamp[row] >> 1) == c->cache->gen ||
	    !frr_hold_live(__atomic_load_n(&rt->tb->hold->rslot[t][row],
					   __ATOMIC_RELAXED)))
		return;
	frr_lines_prefetch(frr_rt_replica_row(rt, t, row),
			   (uint64_t)tc->cols * sizeof(float));
}

/*
 * Two stages, as the loads depend on each other: now the row's bookkeeping
 * (its stamp, where the replica keeps it, its owner and local index), and
 * FRR_PF_DEPTH hints later, once that is in the caches, the replica row
 * itself.  A bad id is ignored: a hint never fails the job (the access
 * will).
 */
void frr_row_prefetch(struct frr_ctx *c, int table, uint64_t row)
{
	const struct frr_hold *h = c->rt->tb->hold;
	uint32_t at = c->pf_n++ % FRR_PF_DEPTH;
	int t = c->pf_t[at];

	if (c->pf_n > FRR_PF_DEPTH && t >= 0)
		replica_prefetch(c, t, c->pf_row[at]);
	c->pf_t[at] = -1; /* empty, unless the id is good */
	if ((unsigned)table >= (unsigned)c->rt->tb->ntables ||
	    row >= c->cache->t[table].rows)
		return;
	__builtin_prefetch(&c->cache->t[table].stamp[row]);
	__builtin_prefetch(&h->rslot[table][row]);
	if (h->owner[table])
		__builtin_prefetch(&h->owner[table][row]);
	if (h->lidx[table])
		__builtin_prefetch(&h->lidx[table][row]);
	c->pf_t[at] = table;
	c->pf_row[at] = row;
}

float *frr_row_write(struct frr_ctx *c, int table, uint64_t row)
{
	uint32_t s;
	struct frr_tcache *tc = entry(c, table, row, &s);

	if (!tc || tc->rule == FRR_UPDATE_ADAGRAD)
		return bad_access(c, "frr_row_write (ADD and SET tables) of",
				  table, row, UINT32_MAX);
	if (!(s & 1))
		mark_written(c, tc, row);
	c->cache->updates++;
	return frr_tcache_val(tc, row);
}

/* ADD, SET: the row itself; ADAGRAD: the batch's gradient sum. */
static float *update_target(struct frr_ctx *c, int t, uint64_t row)
{
	uint32_t s;
	struct frr_tcache *tc = entry(c, t, row, &s);

	if (!tc)
		return NULL;
	if (!(s & 1))
		mark_written(c, tc, row);
	c->cache->updates++;
	return (tc->rule == FRR_UPDATE_ADAGRAD ? tc->snap : tc->val) +
	       (uint64_t)tc->slot[row] * tc->cols;
}

/* The compensation of the row r points into (update_target's);
 * table/batch.c sends value - fetched - compensation. */
static inline float *comp_of(const struct frr_tcache *tc, const float *r)
{
	return tc->comp + (r - tc->val);
}

void frr_row_update(struct frr_ctx *c, int table, uint64_t row,
		    const float *delta)
{
	float *r = update_target(c, table, row);
	const struct frr_tcache *tc;

	if (!r) {
		bad_access(c, "updating", table, row, UINT32_MAX);
		return;
	}
	tc = &c->cache->t[table];
	if (tc->comp) {
		float *k = comp_of(tc, r);

		for (uint32_t j = 0; j < tc->cols; j++)
			frr_kahan_add(&r[j], &k[j], delta[j]);
		return;
	}
	for (uint32_t j = 0; j < tc->cols; j++)
		r[j] += delta[j];
}

void frr_cell_update(struct frr_ctx *c, int table, uint64_t row, uint32_t col,
		     float delta)
{
	float *r = update_target(c, table, row);

	if (!r || col >= c->cache->t[table].cols) {
		bad_access(c, "updating", table, row, col);
		return;
	}
	if (c->cache->t[table].comp)
		frr_kahan_add(&r[col], &comp_of(&c->cache->t[table], r)[col],
			      delta);
	else
		r[col] += delta;
}
