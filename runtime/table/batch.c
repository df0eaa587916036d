// SPDX-License-Identifier: MIT
/*
 * Flushing a worker cache: one update batch per shard, in chunks written
 * into slots of the shard's inbox that the sender owns (docs/runtime.md
 * "Update batches on the wire"; format in table.h), or, to its own rank,
 * into buffers of its own the server takes as they are (struct
 * frr_lbufs).  Per table and shard a
 * batch carries the written rows' ids and updates, or one dense range
 * where that is smaller.  A written row's update is (value - value at the
 * fetch) x the weight of the table's combine rule for ADD tables (no
 * per-step delta stores in the app's loop), the value for SET tables (always
 * sparse: a dense range would carry unwritten rows), the gradient sum for
 * AdaGrad.  The
 * own end-of-clock batch of an ADD or SET table (not opted out) also records
 * what it pushed, for later fetches (table/cache.c): a copy for rows of other
 * ranks' shards, a pointer into its own chunk for rows of this rank's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flexrr/log.h"
#include "table.h"

/* A lane its threads share (--lanes below the thread count) is taken for
 * each call on it: a transport ctx is single-threaded by contract. */
static void lane_lock(struct frr_sender *wk)
{
	if (wk->lane_lock)
		pthread_mutex_lock(wk->lane_lock);
}

static void lane_unlock(struct frr_sender *wk)
{
	if (wk->lane_lock)
		pthread_mutex_unlock(wk->lane_lock);
}

/*
 * A free slot of ours in shard o's inbox (its last chunk drained), waiting
 * for one if all K hold chunks.  The server drains every chunk as it
 * arrives, whatever its clock (table/inbox.c), so a sender waits only
 * while the server is busy, never for a clock to complete: the issue-14
 * hang (a help batch of clock c waiting for a slot that was freed only
 * once clock c was complete) cannot occur.  Any free slot, not the ring's
 * next, all the same: chunks carry their order in seq.
 */
static int free_slot(struct frr_rt *rt, struct frr_sender *wk, int o, int *out)
{
	const uint64_t *last = wk->slot_seq + (size_t)o * rt->tb->K;
	size_t off =
	    rt->off_ack + ((size_t)o * rt->T + wk->local) * rt->tb->K * 8;
	struct frr_stall st;

	frr_rt_stall_init(rt, &st);
	for (;;) {
		for (int k = 0; k < rt->tb->K; k++)
			if (!last[k] ||
			    frr_tp_load_u64(ctl_u64(rt, off + (size_t)k * 8)) >=
				last[k]) {
				*out = k;
				return 0;
			}
		if (frr_rt_failed(rt))
			return frr_rt_failed(rt);
		if (frr_rt_stalled(rt, &st))
			return frr_rt_fail(rt, -ETIMEDOUT,
					   "worker %d waited %d ms for rank %d "
					   "to take one of its %d update "
					   "batches: rank %d hangs; raise "
					   "--timeout if it is only slow",
					   wk->id, rt->prm->timeout_ms, o,
					   rt->tb->K, o);
		frr_nap_us(50);
	}
}

/*
 * Payload capacity of one inbox slot to rank o: a whole batch when the
 * shard is small (every table's rows as one dense range: a batch never
 * needs more, the sender picks dense or sparse by size), else a chunk of
 * FRR_RT_INBOX_BUDGET / (W x K), between FRR_RT_CHUNK_MIN and
 * FRR_RT_CHUNK_MAX and at least one row of the widest table, so the inbox
 * of a rank stays near the budget whatever the model or job size.
 */
size_t frr_rt_chunk_cap(const struct frr_rt *rt, int o)
{
	uint64_t whole = 0, one;

	for (int t = 0; t < rt->tb->ntables; t++)
		whole += frr_seg_bytes(FRR_SEG_DENSE,
				       rt->tb->shard_rows[t * rt->P + o],
				       rt->tb->spec[t].cols);
	one = frr_seg_bytes(FRR_SEG_SPARSE, 1, rt->tb->max_cols);
	return (size_t)frr_chunk_cap(whole, (uint64_t)rt->W, one);
}

/* A buffer for a chunk of clock `clock` to this rank (struct frr_lbufs):
 * first every buffer whose clock the local shard has applied is free
 * again (done is read once: clocks < done are applied). */
static uint8_t *lbuf_get(struct frr_rt *rt, struct frr_sender *wk, int clock)
{
	struct frr_lbufs *lb = &wk->lb;
	uint64_t done = frr_rt_shard_done(rt, rt->rank);
	size_t keep = 0;
	uint8_t *p;

	if (!lb->size)
		lb->size = frr_rt_slot_size(rt, rt->rank, wk->id);
	for (size_t i = 0; i < lb->nuse; i++) {
		if ((uint64_t)lb->clock[i] < done) {
			lb->free[lb->nfree++] = lb->use[i];
			continue;
		}
		lb->use[keep] = lb->use[i];
		lb->clock[keep++] = lb->clock[i];
	}
	lb->nuse = keep;
	if (lb->nuse == lb->cap) {
		size_t cap = lb->cap ? 2 * lb->cap : 16;
		uint8_t **u = realloc(lb->use, cap * sizeof(*u));
		uint8_t **f = u ? realloc(lb->free, cap * sizeof(*f)) : NULL;
		int *c = f ? realloc(lb->clock, cap * sizeof(*c)) : NULL;

		if (u)
			lb->use = u;
		if (f)
			lb->free = f;
		if (!c)
			return NULL;
		lb->clock = c;
		lb->cap = cap;
	}
	p = lb->nfree ? lb->free[--lb->nfree] : malloc(lb->size);
	if (p) {
		lb->use[lb->nuse] = p;
		lb->clock[lb->nuse++] = clock;
	}
	return p;
}

void frr_rt_lbufs_fini(struct frr_lbufs *lb)
{
	for (size_t i = 0; i < lb->nuse; i++)
		free(lb->use[i]);
	for (size_t i = 0; i < lb->nfree; i++)
		free(lb->free[i]);
	free(lb->use);
	free(lb->free);
	free(lb->clock);
	memset(lb, 0, sizeof(*lb));
}

/* The chunks of one batch to one rank being filled (one slot at a time). */
struct chunker {
	struct frr_ctx *c;
	int o;	      /* destination rank */
	int open;     /* a chunk is being filled in dst */
	uint8_t *dst; /* the chunk: a local buffer (struct frr_lbufs), the
		       * peer's slot itself (direct) or the staging buffer */
	int direct;   /* dst is in o's inbox, mapped here (shm) */
	size_t soff;  /* the slot's offset in o's inbox */
	uint64_t seq, used, cap;
	int k;			/* the slot */
	int final, nextra, own; /* own: the own batch of the clock (pend) */
	_Atomic uint64_t *local_seq; /* the local last chunk, published last */
	uint64_t lseq, bytes;
};

static int chunk_open(struct chunker *ch)
{
	struct frr_rt *rt = ch->c->rt;
	struct frr_sender *wk = ch->c->snd;
	int k = 0, err = free_slot(rt, wk, ch->o, &k);

	if (err)
		return err;
	if (ch->o == rt->rank) {
		ch->dst = lbuf_get(rt, wk, ch->c->clock);
		if (!ch->dst)
			return frr_rt_fail(rt, -ENOMEM,
					   "worker %d: out of memory for its "
					   "update batch",
					   wk->id);
	} else {
		ch->soff = frr_rt_slot_off(rt, ch->o, wk->id, k);
		/* on shm the batch is built in the peer's slot itself: the
		 * staging buffer and its copy are a pass over every byte
		 * less.  Only on a lane, whose imports are its threads' own
		 * (the shared ctx's are tp_lock's) */
		ch->dst = NULL;
		if (wk->lane) {
			lane_lock(wk);
			ch->dst = frr_tp_rmr_direct(
			    wk->lane_inbox[ch->o], ch->soff,
			    frr_rt_slot_size(rt, ch->o, wk->id));
			lane_unlock(wk);
		}
		ch->direct = ch->dst != NULL;
		if (!ch->dst)
			ch->dst = frr_tp_mr_ptr(wk->stage);
	}
	ch->seq = ++wk->sent_seq[ch->o];
	wk->slot_seq[(size_t)ch->o * rt->tb->K + k] = ch->seq;
	ch->k = k;
	/* direct: the slot's seq is the counter write's alone (slot_write) */
	if (!ch->direct)
		((struct frr_slot_hdr *)ch->dst)->seq = 0;
	ch->used = 0;
	ch->open = 1;
	return 0;
}

/* Write the staged chunk into rank o's inbox (direct: it is there
 * already), then its seq (G3). */
static int slot_write(struct frr_rt *rt, struct frr_sender *wk, int o,
		      size_t soff, uint64_t len, uint64_t seq, int direct)
{
	/* the thread's own lane needs no lock: nobody else posts on it */
	struct frr_tp_ep *ep = wk->lane ? wk->lane_ep[o] : rt->eps[o];
	struct frr_tp_rmr *in =
	    wk->lane ? wk->lane_inbox[o] : rt->tb->rinbox[o];
	int err;

	if (!wk->lane)
		pthread_mutex_lock(&rt->tp_lock);
	lane_lock(wk);
	err = direct ? 0
		     : frr_tp_write(ep, wk->stage, 0, in, soff,
				    FRR_SLOT_HDR + len, 0, 0);
	if (!err)
		err = frr_tp_write_u64(ep, in, soff, seq, 0, 0);
	if (!err)
		err = frr_tp_flush(ep, rt->flush_ms);
	/* a lane's ep is asked whether the peer is gone under the lane's
	 * lock (its other threads post on it); the shared ctx's is not */
	if (err && wk->lane)
		err = frr_rt_peer_fail_on(rt, o, ep,
					  "sending updates to it failed");
	lane_unlock(wk);
	if (wk->lane)
		return err;
	pthread_mutex_unlock(&rt->tp_lock);
	return err ? frr_rt_peer_fail_on(rt, o, NULL,
					 "sending updates to it failed")
		   : 0;
}

static int chunk_close(struct chunker *ch, int last)
{
	struct frr_ctx *c = ch->c;
	struct frr_rt *rt = c->rt;
	struct frr_slot_hdr *h = (struct frr_slot_hdr *)ch->dst;
	struct frr_lhand *lh;

	h->sender = c->snd->id;
	h->owner = c->part;
	if (rt->test_forge_batch == rt->rank && c->clock == 1)
		h->owner = rt->W + 3;
	h->clock = c->clock;
	h->final = ch->final;
	h->nextra = ch->nextra;
	h->last = last;
	h->bytes = ch->used;
	h->item_s = ch->final ? c->rec->item_s : 0;
	ch->bytes += ch->used;
	ch->open = 0;
	if (ch->o != rt->rank)
		return slot_write(rt, c->snd, ch->o, ch->soff, ch->used,
				  ch->seq, ch->direct);
	/* to this rank: the server takes the buffer itself (frr_lhand) */
	lh = &rt->tb->lhand[(size_t)c->snd->local * rt->tb->K + ch->k];
	lh->buf = ch->dst;
	if (last) { /* published after the clock record (batch_send) */
		ch->local_seq = &lh->seq;
		ch->lseq = ch->seq;
	} else {
		atomic_store_explicit(&lh->seq, ch->seq, memory_order_release);
	}
	return 0;
}

/* What row `row`'s change is taken against: its snapshot, or where the
 * cache keeps none (frr_cache_keeps_snap) the replica row as it was read;
 * a row whose pull failed (the job is failing) has no replica row: its
 * value itself, no change. */
static const float *row_snap(const struct chunker *ch,
			     const struct frr_tcache *tc, uint64_t row)
{
	const struct frr_rt *rt = ch->c->rt;
	int t = (int)(tc - ch->c->cache->t);

	if (!tc->nosnap || tc->rule != FRR_UPDATE_ADD)
		return tc->snap + (uint64_t)tc->slot[row] * tc->cols;
	return frr_hold_live(__atomic_load_n(&rt->tb->hold->rslot[t][row],
					     __ATOMIC_ACQUIRE))
		   ? frr_rt_replica_row(rt, t, row)
		   : frr_tcache_val(tc, row);
}

static void row_delta(const struct frr_tcache *tc, uint64_t row, const float *s,
		      float scale, float *out)
{
	const uint32_t cols = tc->cols;
	const float *v = frr_tcache_val(tc, row);

	if (tc->rule == FRR_UPDATE_ADAGRAD)
		memcpy(out, s, cols * sizeof(float));
	else if (tc->rule == FRR_UPDATE_SET) /* the value, not a change */
		memcpy(out, v, cols * sizeof(float));
	else if (tc->comp) /* and what the value's adds lost (cache.c) */
		for (uint32_t j = 0; j < cols; j++)
			out[j] =
			    ((v[j] - s[j]) -
			     tc->comp[(uint64_t)tc->slot[row] * cols + j]) *
			    scale;
	else if (scale == 1.0f)
		for (uint32_t j = 0; j < cols; j++)
			out[j] = v[j] - s[j];
	else
		for (uint32_t j = 0; j < cols; j++)
			out[j] = (v[j] - s[j]) * scale;
}

/* The own batch's record of what it pushed of `row` (read-my-writes,
 * table/cache.c): a row of this rank's shard points at its change in the
 * chunk the local shard applies (out, in a struct frr_lbufs buffer); for
 * another rank's, the copy kept here, returned for the update to be
 * computed into (it is not read back from out: that may be the peer's
 * slot, which the peer can change). */
static float *pend_record(struct chunker *ch, struct frr_tcache *tc,
			  uint64_t row, float *out)
{
	int ring = ch->c->cache->ring, here = ch->o == ch->c->rt->rank;
	uint32_t *n = here ? &tc->nlpend : &tc->npend;
	uint64_t r = tc->pslot[row] ? tc->pslot[row] - 1 : *n,
		 at = r * (uint64_t)ring + (uint64_t)(ch->c->clock % ring);

	if (!tc->pslot[row])
		tc->pslot[row] = ++*n;
	if (here) {
		tc->lref[at] = out;
		tc->ltag[at] = ch->c->clock + 1;
		return NULL;
	}
	tc->ptag[at] = ch->c->clock + 1;
	return tc->pend + at * tc->cols;
}

/* Written row `row`'s update into out (and its pending record). */
static void row_update(struct chunker *ch, struct frr_tcache *tc, uint64_t row,
		       float scale, float *out)
{
	float *keep =
	    ch->own && tc->ptag ? pend_record(ch, tc, row, out) : NULL;

	row_delta(tc, row, row_snap(ch, tc, row), scale, keep ? keep : out);
	if (keep)
		memcpy(out, keep, tc->cols * sizeof(float));
}

/*
 * Ask for the cache lines of written row `row`'s value and snapshot ahead
 * of row_update.  The compact arrays are in the order the batch first
 * touched its rows (mf: its users in a shuffled order), a segment walks
 * them in local row order: without this each row's loads missed one
 * after the other (perf, mf at P = 2: 72% of the flush's samples on the
 * delta loop's loads).
 */
static inline void row_prefetch(const struct chunker *ch,
				const struct frr_tcache *tc, uint64_t row)
{
	const uint64_t b = (uint64_t)tc->cols * sizeof(float);

	frr_lines_prefetch(frr_tcache_val(tc, row), b);
	if (tc->rule != FRR_UPDATE_SET)
		frr_lines_prefetch(row_snap(ch, tc, row), b);
}

/* Rows ahead of the one being written that row_prefetch asks for. */
#define FRR_FLUSH_AHEAD 8

/* Append one segment of up to n rows (dense from local row lo, or the
 * sparse ids) that fits the open chunk; returns the rows taken. */
static uint64_t seg_fill(struct chunker *ch, int t, uint32_t kind, uint64_t lo,
			 const uint64_t *ids, uint64_t n)
{
	struct frr_tcache *tc = &ch->c->cache->t[t];
	const uint32_t cols = tc->cols, want = (ch->c->cache->gen << 1) | 1;
	const uint64_t P = (uint64_t)ch->c->rt->P;
	const struct frr_hold *h = ch->c->rt->tb->hold;
	const float scale = frr_batch_scale(ch->c, tc);
	uint64_t room = ch->cap - ch->used, fit, hdr = sizeof(struct frr_seg);
	uint8_t *at = ch->dst + FRR_SLOT_HDR + ch->used;
	struct frr_seg *sg = (struct frr_seg *)at;
	uint64_t *oid = (uint64_t *)(at + hdr);
	float *out;

	fit = frr_seg_fit(room, kind == FRR_SEG_SPARSE, cols);
	if (fit > n)
		fit = n;
	if (!fit)
		return 0;
	*sg = (struct frr_seg){
		.table = (uint32_t)t, .kind = kind, .lo = lo, .n = fit
	};
	out = (float *)(kind == FRR_SEG_SPARSE ? (uint8_t *)(oid + fit)
					       : (uint8_t *)oid);
	for (uint64_t i = 0; i < fit; i++, out += cols) {
		uint64_t li = kind == FRR_SEG_SPARSE ? ids[i] : lo + i;
		uint64_t row = frr_place_row(h, (int)P, t, ch->o, li);

		if (i + FRR_FLUSH_AHEAD < fit) {
			uint64_t la = kind == FRR_SEG_SPARSE
					  ? ids[i + FRR_FLUSH_AHEAD]
					  : li + FRR_FLUSH_AHEAD;
			uint64_t ra = frr_place_row(h, (int)P, t, ch->o, la);

			if (tc->stamp[ra] == want && !frr_tcache_direct(tc, ra))
				row_prefetch(ch, tc, ra);
		}

		if (kind == FRR_SEG_SPARSE)
			oid[i] = li;
		/* a row applied in place inside a dense range: not here */
		if (tc->stamp[row] != want || frr_tcache_direct(tc, row))
			memset(out, 0, cols * sizeof(float));
		else
			row_update(ch, tc, row, scale, out);
	}
	ch->used += frr_seg_bytes(kind, fit, cols);
	return fit;
}

/* Table t's rows for rank o: one dense range or the sparse list of the
 * written rows, whichever is smaller, over as many chunks as it takes. */
static int table_fill(struct chunker *ch, int t)
{
	struct frr_tcache *tc = &ch->c->cache->t[t];
	int o = ch->o;
	uint64_t lo = tc->lo[o], hi = tc->hi[o];
	const uint64_t *ids = tc->wby + tc->wstart[o];
	uint64_t n = tc->wstart[o + 1] - tc->wstart[o];
	uint32_t kind = FRR_SEG_SPARSE;

	tc->lo[o] = UINT64_MAX;
	tc->hi[o] = 0;
	if (!n || hi <= lo)
		return 0;
	/* SET: a dense range would overwrite the unwritten rows in it */
	if (tc->rule != FRR_UPDATE_SET &&
	    frr_seg_bytes(FRR_SEG_DENSE, hi - lo, tc->cols) <=
		frr_seg_bytes(FRR_SEG_SPARSE, n, tc->cols)) {
		kind = FRR_SEG_DENSE;
		n = hi - lo;
	}
	while (n) {
		uint64_t took;
		int err = ch->open ? 0 : chunk_open(ch);

		if (err)
			return err;
		took = seg_fill(ch, t, kind, lo, ids, n);
		if (!took) { /* full: the rest goes in the next chunk */
			err = chunk_close(ch, 0);
			if (err)
				return err;
			continue;
		}
		n -= took;
		if (kind == FRR_SEG_DENSE)
			lo += took;
		else
			ids += took;
	}
	return 0;
}

/* Group each table's written rows by shard rank (counting sort, first
 * write order kept within a shard): wby[wstart[o] .. wstart[o + 1]]. */
static void group_written(struct frr_rt *rt, struct frr_cache *k)
{
	const uint64_t P = (uint64_t)rt->P;
	const struct frr_hold *h = rt->tb->hold;

	for (int t = 0; t < rt->tb->ntables; t++) {
		struct frr_tcache *tc = &k->t[t];
		uint64_t *st = tc->wstart;

		memset(st, 0, (P + 1) * sizeof(uint64_t));
		for (uint64_t i = 0; i < tc->nw; i++)
			st[frr_place_owner(h, (int)P, t, tc->wrows[i]) + 1]++;
		for (uint64_t o = 0; o < P; o++)
			st[o + 1] += st[o];
		for (uint64_t i = 0; i < tc->nw; i++) {
			uint64_t r = tc->wrows[i];

			tc->wby[st[frr_place_owner(h, (int)P, t, r)]++] =
			    frr_place_local(h, (int)P, t, r);
		}
		/* st[o] now ends shard o: shift back to starts */
		memmove(st + 1, st, P * sizeof(uint64_t));
		st[0] = 0;
		tc->nw = 0;
	}
}

/* Every table's rows for rank o, then the batch's last chunk. */
static int batch_to(struct chunker *ch)
{
	int err = 0;

	for (int t = 0; t < ch->c->rt->tb->ntables && !err; t++)
		err = table_fill(ch, t);
	if (!err && !ch->open)
		err = chunk_open(ch); /* an empty batch still counts */
	return err ? err : chunk_close(ch, 1);
}

int frr_rt_batch_send(struct frr_ctx *c, int final, int nextra)
{
	struct frr_rt *rt = c->rt;
	struct frr_wclock *rec = c->rec;
	/* rec belongs to the server once the local batch's last chunk is
	 * published: every write to it happens before that release store */
	struct chunker ch = { .c = c,
			      .final = final,
			      .nextra = nextra,
			      .own = final && c->cache == &c->snd->own };
	double t0 = frr_rt_clock_now();
	int err = 0;

	frr_direct_flush(c);
	group_written(rt, c->cache);
	for (int i = 0; i < rt->P && !err; i++) {
		int o = frr_batch_dest(rt->rank, rt->P, i);

		ch.o = o;
		ch.cap = frr_rt_slot_size(rt, o, c->snd->id) - FRR_SLOT_HDR;
		err = batch_to(&ch);
	}
	rec->updates += c->cache->updates;
	rec->bytes += ch.bytes;
	rec->flush_s += frr_rt_clock_now() - t0;
	frr_cache_next_batch(c->cache);
	if (!err && ch.local_seq)
		atomic_store_explicit(ch.local_seq, ch.lseq,
				      memory_order_release);
	return err;
}
