/* SPDX-License-Identifier: MIT */
/*
 * Parameter tables inside the runtime, the ground floor above core/:
 * rows, where they live, the replicas a rank holds, the worker caches,
 * update batches and the inbox, and the shards that apply them.
 * docs/runtime.md ("Data layout", "The worker cache").  This floor sees
 * core/ only: what it needs of a worker thread is struct frr_sender, of
 * an item's run struct frr_ctx (both below); struct frr_worker is
 * worker/'s.
 *
 * Row r of a table is stored by rank r % P (its shard: master rows, plus
 * AdaGrad's sums) at local index r / P; a rank holds a copy of the rows
 * it reads (table/hold.c), written by the rows' shard after each clock it
 * applies.  Workers
 * never read the replica directly: each worker thread has caches
 * (struct frr_cache) that copy a row at its first access in a batch.
 */
#ifndef FLEXRR_RUNTIME_TABLE_H
#define FLEXRR_RUNTIME_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "core.h"
#include "flexrr/flexrr.h"
#include "sizes.h"

struct frr_trace_buf; /* trace/trace.h */

/* 64-bit words of a bitmap of n rows (hold.c's and place.c's row sets). */
static inline uint64_t frr_bit_words(uint64_t n)
{
	return (n + 63) / 64;
}

/* Bit i of such a bitmap. */
static inline int frr_bit_get(const uint64_t *b, uint64_t i)
{
	return (int)((b[i >> 6] >> (i & 63)) & 1);
}

/*
 * One table in one worker cache.  Per row, dense: stamp (gen << 1 |
 * written) and slot.  Per row fetched in this batch, compact (slot k at
 * k x cols, in order of first access, restarting at every batch): val (the
 * worker's copy) and snap (ADD: val at the fetch; ADAGRAD: the gradient
 * sum of the batch).  The arrays are calloc'ed to the table's size but only
 * the first slots are touched, so memory follows the rows a batch touches,
 * not where they lie in the table (a partition's rows are spread over it:
 * dense copies cost a whole table per thread).  Used by one thread only.
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
	/* a batch's change x scale (1; 1 / nparts: combine MEAN*), times its
	 * share of the partition's items if by_share (MEAN) */
	float scale;
	int by_share;
	float *val, *snap; /* compact: slot x cols */
	/* no snap kept (frr_cache_keeps_snap): SET sends the value, and an
	 * ADD table of an exact job without reassignment or backups takes its
	 * change against the replica row itself, which nothing writes until
	 * every batch of the clock is in: the same bits, half the cache */
	int nosnap;
	uint8_t *stamp;
	uint32_t *slot;	   /* per row: its slot, valid while stamp's gen is */
	uint32_t nslot;	   /* slots used in this batch */
	uint64_t *lo, *hi; /* per shard rank: written local rows [lo, hi) */
	/* the rows written in this batch, in order of first write (nw of
	 * them), and at the flush the same grouped by shard (wby, wstart[o]
	 * .. wstart[o + 1]); rows x 8 bytes each, calloc'ed: only the
	 * entries used are ever touched */
	uint64_t *wrows, *wby, *wstart;
	uint64_t nw;
	/* FRR_TABLE_SEE_OWN_PENDING, own cache only: what the last `ring`
	 * clocks pushed, per row ever pushed (pslot[row] = record + 1, 0 =
	 * none; records compact, in order of first push): record r holds
	 * ring entries of cols floats in pend and their ptag = clock + 1 of
	 * the entry (0 = none) */
	float *pend;
	int32_t *ptag;
	uint32_t *pslot;
	uint32_t npend;
	/* the same for rows of this rank's own shard, without a copy: their
	 * changes sit in the batch's own chunk buffers (struct frr_lbufs),
	 * which the local shard applies from and which live until it has:
	 * per local record (pslot of a local row), ring entries of a pointer
	 * to the row's change there (lref) and its tag (ltag) */
	const float **lref;
	int32_t *ltag;
	uint32_t nlpend;
	/* FRR_TABLE_COMPENSATED: per slot x cols, the running compensation
	 * of the batch's updates (the value's lost low part, negated) */
	float *comp;
	/* own cache, rows this worker adds to the shard in place at the
	 * flush (table/direct.c; bitmap by row, NULL: none): listed at the
	 * top of wrows (ndw), outside lo/hi and every batch; without dsnap
	 * they take val slots from the top (ndslot of them) and no snap, so
	 * snap's slots stay those of the other rows (nslot) */
	const uint64_t *direct;
	int dsnap; /* keep their snapshots too: helpers write them as well */
	uint32_t ndslot;
	uint64_t ndw;
};

/* Row `row` is applied in place by this cache's worker. */
static inline int frr_tcache_direct(const struct frr_tcache *tc, uint64_t row)
{
	return tc->direct && frr_bit_get(tc->direct, row);
}

/* FRR_TABLE_COMPENSATED: *v += d by Kahan's sum; *comp keeps minus what
 * the adds lost (the cache's batch and the shard each keep their own). */
static inline void frr_kahan_add(float *v, float *comp, float d)
{
	float y = d - *comp, t = *v + y;

	*comp = (t - *v) - y;
	*v = t;
}

/* Ask for the cache lines of [p, p + n): a hint only, no fault, no change
 * to any value.  Over the lines p..p + n touches: gcc 12.2 compiled a loop
 * from p by 64 followed by a prefetch of p + n - 1 to nothing (objdump). */
static inline void frr_lines_prefetch(const void *p, uint64_t n)
{
	const uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < end; a += 64)
		__builtin_prefetch((const void *)a);
}

/* The cached copy of a row fetched in the current batch. */
static inline float *frr_tcache_val(const struct frr_tcache *tc, uint64_t row)
{
	return tc->val + (uint64_t)tc->slot[row] * tc->cols;
}

/*
 * An update batch on the wire: the payload of each inbox slot (a chunk of
 * one batch) is a sequence of segments, each a segment header, then for
 * FRR_SEG_SPARSE n local row ids (u64), then n x cols floats, padded to 8
 * bytes.  FRR_SEG_DENSE carries rows [lo, lo + n) of the shard (rows not
 * written: zeros), FRR_SEG_SPARSE the listed rows only; the sender picks
 * the smaller per table and shard.  A batch larger than a slot is split
 * over several slots (chunks), each with whole segments.
 */
enum frr_seg_kind { FRR_SEG_DENSE = 1, FRR_SEG_SPARSE = 2 };
struct frr_seg {
	uint32_t table;
	uint32_t kind;
	uint64_t lo; /* DENSE: first local row */
	uint64_t n;  /* rows */
};
_Static_assert(sizeof(struct frr_seg) == FRR_SEG_HDR, "sizes.h");

/* Payload bytes of a segment of n rows of cols floats. */
static inline uint64_t frr_seg_bytes(uint32_t kind, uint64_t n, uint32_t cols)
{
	uint64_t b = sizeof(struct frr_seg) + n * cols * sizeof(float);

	if (kind == FRR_SEG_SPARSE)
		b += n * sizeof(uint64_t);
	return (b + 7) & ~(uint64_t)7;
}

/*
 * The rows a rank holds (table/hold.c): per table, this rank's slot of
 * each row it holds in its replica region (FRR_HOLD_NONE: not held,
 * FRR_HOLD_BUSY: a pull is in flight; loaded and set atomically: worker
 * threads pull), and as an owner, each rank's slot of each row of this
 * rank's shard ([t][r * shard + li]; server thread only).  Every rank's
 * layout: [r * FRR_MAX_TABLES + t].
 */
#define FRR_HOLD_NONE UINT32_MAX
#define FRR_HOLD_BUSY (UINT32_MAX - 1)
/* A slot with this bit is held but not live yet: a row a rank holds only
 * for the partitions its workers may help, which its owner starts pushing
 * at the rank's first read of one of the rows a helpee rank declaring it
 * declares (table/hold.c "on use"). */
#define FRR_HOLD_DORMANT 0x80000000u
/* A pull request word (table/push.c): table, pull slot, local row + 1
 * (never 0); the pull room of a rank has at most FRR_REQ_SLOT_MAX slots.
 * A wake asks for the dormant rows owner o holds for the requester that
 * helpee rank q declares: a table no job has, the owner in the slot field,
 * q + 1 in the row field (each ack unique: a requester wakes each pair
 * once). */
#define FRR_REQ_ROW_BITS 36
#define FRR_REQ_SLOT_BITS 24
#define FRR_REQ_ROW_MAX ((1ull << FRR_REQ_ROW_BITS) - 2)
#define FRR_REQ_SLOT_MAX ((1ull << FRR_REQ_SLOT_BITS) - 1)
#define FRR_REQ_WAKE_T 15
_Static_assert(FRR_MAX_TABLES < FRR_REQ_WAKE_T,
	       "FRR_REQ_WAKE_T must be no table");
static inline int frr_hold_live(uint32_t s)
{
	return s < FRR_HOLD_DORMANT;
}
/* Held, but dormant (not NONE or BUSY, which have the bit too). */
static inline int frr_hold_dormant(uint32_t s)
{
	return !frr_hold_live(s) && s != FRR_HOLD_NONE && s != FRR_HOLD_BUSY;
}
struct frr_hold {
	uint32_t *rslot[FRR_MAX_TABLES];
	uint32_t *oslot[FRR_MAX_TABLES];
	uint64_t *tbl_off;		/* byte offset of the table's slots */
	uint32_t *pull_base, *pull_cap; /* first pull slot, how many */
	uint64_t *pull_seen;		/* [requester]: last request served */
	uint64_t served;		/* rows served to pulls */
	/* what this rank sent each other rank after each clock (row pushes
	 * and pulls served, the start-up fill excluded) and the batch
	 * payload it drained: the job's end line of bytes received */
	uint64_t *sent_to, batch_recv;
	uint64_t push_now, *push_ring; /* [clock % FRR_RT_STAT_RING] */
	double *apply_ring; /* seconds the server took to apply and push */
	double apply_now;   /* eager: those seconds of the clock so far */
	int may_pull;	    /* some rank holds fewer than all */
	/* helpees' rows on use, woken per owner and helpee rank: the ranks
	 * whose partitions this rank may help (nh of them: hrank[i], and
	 * hidx[q] = i or -1), each one's declared rows (hbits[i * NT + t]:
	 * a bitmap of the table's rows), and per pair dormant[o * nh + i]:
	 * 1 while this rank holds rows of owner o that helpee i declares
	 * dormant, 2 while asking for them, 0 once live (or none).  As an
	 * owner: the rows of its shard each rank's partitions declare
	 * (qdecl[t], rank q's bits of local rows at q * frr_bit_words(S)) */
	int on_use, nh, *hrank, *hidx;
	uint64_t **hbits, *qdecl[FRR_MAX_TABLES];
	uint8_t *dormant;
	uint64_t dormant_bytes; /* the replica's dormant rows at set-up */
	int dormant_pairs;	/* (owner, helpee) pairs of them then */
	_Atomic uint64_t woken; /* pairs this rank woke */
	int too_long; /* 1 + a table with more rows than slots can name */
	/* where rows live (table/place.c): per table, NULL when row r is on
	 * rank r % P at local index r / P, else each row's owner rank and
	 * local index, and the rows of each owner in local order (lrow from
	 * obase[o]) */
	uint16_t *owner[FRR_MAX_TABLES];
	uint32_t *lidx[FRR_MAX_TABLES], *lrow[FRR_MAX_TABLES];
	uint64_t *obase[FRR_MAX_TABLES];
	/* per table and owner: rows of its shard that only the owner's own
	 * partitions declare (other ranks' batches never carry them: the
	 * memory plan's inbox), NULL when nothing was placed */
	uint64_t *solo[FRR_MAX_TABLES];
	/* rank me - 1's solo rows (a bitmap per table), set by frr_place
	 * when me (table/direct.c reads them) */
	int me;
	uint64_t *mine[FRR_MAX_TABLES];
	_Alignas(64) _Atomic uint64_t npull[FRR_MAX_TABLES];
};

/* Where rows live (table/place.c) from every rank's bitmap of the rows its
 * own partitions declare (own[t * P + q]): h's placement arrays, and
 * shard_rows[t * P + o] (rows[t]: table t's rows). */
int frr_place(struct frr_hold *h, int P, int ntables, const uint64_t *rows,
	      uint64_t *shard_rows, uint64_t *const *own);
void frr_place_fini(struct frr_hold *h);

/* The rank that stores row `row` of table t, its index there, and the
 * row at local index li of rank o's shard. */
static inline int frr_place_owner(const struct frr_hold *h, int P, int t,
				  uint64_t row)
{
	return h->owner[t] ? h->owner[t][row] : (int)(row % (uint64_t)P);
}

static inline uint64_t frr_place_local(const struct frr_hold *h, int P, int t,
				       uint64_t row)
{
	return h->lidx[t] ? h->lidx[t][row] : row / (uint64_t)P;
}

static inline uint64_t frr_place_row(const struct frr_hold *h, int P, int t,
				     int o, uint64_t li)
{
	return h->lrow[t] ? h->lrow[t][h->obase[t][o] + li]
			  : li * (uint64_t)P + (uint64_t)o;
}

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

/* The ring of pending clocks for a job with (effective) slack s: a fetch
 * in clock c holds clocks < d with d >= c - s (ssp/ssp.c), so it needs
 * this worker's pushes of clocks [c - s, c): s entries.  The entry of
 * clock c is written at c's own flush, after the last fetch of c, over
 * that of clock c - s, which clock c + 1 no longer needs.  With s = 0
 * every own push is applied before a fetch: none. */
static inline int frr_cache_ring(int eff_slack)
{
	return eff_slack;
}

/* What a thread records per clock (slot clock % FRR_RT_STAT_RING): the
 * data path fills its counters, the worker loop the rest. */
#define FRR_RT_NRR 4 /* rr counters per clock (rr_proto.h rr_counter) */
struct frr_wclock {
	int clock;
	double stats[FRR_MAX_STATS];
	double compute_s;	/* item loop (incl. hooks) */
	double wait_s;		/* blocked on SSP */
	double flush_s;		/* sending the batch */
	uint64_t updates;	/* row/cell write and update calls */
	uint64_t bytes;		/* payload bytes sent */
	int64_t min_data_clock; /* oldest clock seen complete by a fetch */
	uint64_t stale_reads;	/* fetches older than the bound (must be 0) */
	double rr[FRR_RT_NRR];	/* rr: offers, accepted, cancelled, items */
	uint64_t reads;		/* row fetches */
	uint64_t pulls;		/* fetches of rows not held (table/hold.c) */
	uint64_t dropped;	/* mode backup: items not run (cut) */
	uint64_t helped;	/* items of others' lists run (run_range) */
	double item_s;		/* lb-bsp: seconds per item run, own + help */
};

/*
 * The chunks a worker thread sends to its own rank are written into
 * buffers of its own, not into its inbox slot, and the server keeps them
 * as they are (table/inbox.c: no copy): so the changes of the rows of this
 * rank's shard exist once, read by the shard's apply and by this worker's
 * read-my-writes (struct frr_tcache lref).  A buffer is taken again once
 * the local shard's done word says its clock is applied: then neither the
 * server nor a fetch (which skips the clocks < done) reads it any more.
 * Used by the sending thread only.
 */
struct frr_lbufs {
	uint8_t **use; /* buffers holding chunks of clocks not yet applied */
	int *clock;    /* their clocks */
	size_t nuse, cap;
	uint8_t **free; /* buffers to reuse (nfree of cap) */
	size_t nfree;
	size_t size; /* bytes of a buffer: a local inbox slot's */
};

/* A worker thread's side of the data path: its caches, the transport it
 * sends on and the sequence numbers of what it sent.  Used by that thread
 * only (worker/worker.h embeds it in struct frr_worker). */
struct frr_sender {
	int id;	   /* global worker id */
	int local; /* thread index */
	struct frr_cache own, help;
	struct frr_tp_mr *stage; /* send staging (one slot), in lane */
	/* this thread's transport (job/setup.c "lanes"): its batches go out
	 * on it without tp_lock; NULL: through rt->tp under tp_lock.  With
	 * --lanes below the thread count the threads of one lane share it
	 * under lane_lock (NULL: the lane is the thread's own) */
	struct frr_tp_ctx *lane;
	struct frr_tp_ep **lane_ep;	/* [P] */
	struct frr_tp_rmr **lane_inbox; /* [P] */
	struct frr_tp_rmr **lane_ctl;	/* [P]: the ranks' control regions */
	pthread_mutex_t *lane_lock;
	uint64_t *sent_seq;  /* per dest rank */
	uint64_t *slot_seq;  /* [P][K]: seq last written into each slot */
	float *bad_row;	     /* handed out after an app's out-of-range access */
	struct frr_lbufs lb; /* its chunks to its own rank */
};

struct frr_worker; /* worker/worker.h */

/* The item context of flexrr.h: one batch being run by one thread. */
#define FRR_PF_DEPTH 4u
struct frr_ctx {
	struct frr_rt *rt;
	struct frr_worker *wk;	/* thread running (worker/'s) */
	struct frr_sender *snd; /* its data path */
	struct frr_cache *cache;
	struct frr_wclock *rec;
	int part;	 /* partition (= its owner worker's id) */
	uint64_t part_n; /* items in the partition */
	int clock;
	int64_t bound; /* fetches must see clocks <= bound complete */
	/* frr_row_prefetch's rows whose bookkeeping is on its way and whose
	 * replica row is asked for FRR_PF_DEPTH hints later (table -1: none) */
	uint64_t pf_row[FRR_PF_DEPTH];
	int pf_t[FRR_PF_DEPTH];
	uint32_t pf_n;
};

/* The weight of this batch's changes to table tc (combine rule): 1, or
 * 1 / nparts, for MEAN times the share of its partition's items. */
static inline float frr_batch_scale(const struct frr_ctx *c,
				    const struct frr_tcache *tc)
{
	float s = tc->scale;

	if (tc->by_share)
		s *= (float)c->cache->items / (float)c->part_n;
	return s;
}

/* part_rows' set (flexrr.h struct frr_rowset): a bitmap per table. */
struct frr_rowset {
	const struct frr_rt *rt;
	uint64_t *bits[FRR_MAX_TABLES];
};

/* Inbox slot header: one chunk of an update batch (segments follow).  A
 * sender's chunks to one rank carry seq 1, 2, 3, ...: the server drains
 * them in that order. */
struct frr_slot_hdr {
	uint64_t seq; /* written last by a counter write; 0 = empty */
	int32_t sender;
	int32_t owner; /* attributed worker */
	int32_t clock;
	int32_t final; /* 1 = owner's own end-of-clock batch */
	int32_t nextra;
	int32_t last;	/* 1 = the batch's last chunk */
	uint64_t bytes; /* payload bytes after the header */
	/* a final batch: the owner's seconds per item this clock (lb-bsp
	 * plans from it, rr/lb.c) */
	double item_s;
};
_Static_assert(sizeof(struct frr_slot_hdr) <= FRR_SLOT_HDR, "slot header");

/* A drained chunk: header and payload copied once out of the remotely
 * writable inbox into the server's own memory and validated there; only
 * this copy is used afterwards (a peer may rewrite the inbox at any time). */
struct frr_chunk {
	struct frr_slot_hdr h;
	uint8_t *pay; /* h.bytes, malloc'ed; eager: NULL once applied (the
		       * header stays until its clock is complete) */
	int lent;     /* pay is in a local sender's buffer (struct
		       * frr_lbufs): not the server's to free */
};

/* A local sender's slot k: where its chunk is (the buffer, header first)
 * and its seq (0 = none yet), published last.  In the server's private
 * memory, not the inbox a peer may write: a pointer must not come from
 * there.  rt->tb->lhand[thread * K + k]. */
struct frr_lhand {
	_Atomic uint64_t seq;
	uint8_t *buf;
};

/* Size classes of the payload pool: 8 per power of two up to 2^63. */
#define FRR_PAY_CLASSES (8 * 58)

/* A rank's tables (rt->tb). */
struct frr_tables {
	int ntables;
	struct frr_table_spec spec[FRR_MAX_TABLES];
	uint64_t *shard_rows; /* [t * P + o] rows of table t on rank o */
	size_t *repl_off;     /* [t * P + o] byte offset in replica */
	/* inbox slots, header + payload, per dest rank: of a sender on that
	 * rank (slot_bytes) and of one on another rank (rslot_bytes: what
	 * its batches can carry there, job/setup.c) */
	size_t *slot_bytes, *rslot_bytes;
	size_t slot_max;
	uint32_t max_cols;
	int K; /* inbox slots per sender */
	size_t inbox_len, repl_len;
	struct frr_tp_mr *inbox, *repl;
	struct frr_tp_rmr **rinbox, **rrepl;
	uint8_t *inboxp, *replp;

	struct frr_hold *hold;	   /* the rows this rank holds (table/hold.c) */
	struct frr_direct *direct; /* rows applied in place (direct.c) */
	float *master[FRR_MAX_TABLES];
	float *accum[FRR_MAX_TABLES]; /* AdaGrad sum of g^2 */
	float *comp[FRR_MAX_TABLES];  /* FRR_TABLE_COMPENSATED: Kahan's */
	int own_pending; /* a FRR_TABLE_SEE_OWN_PENDING table is declared */
	uint32_t own_declared; /* tables the app flagged so (bit t) */

	/* server state */
	uint64_t *consumed;	 /* [sender]: seq of the last chunk drained */
	struct frr_lhand *lhand; /* [T * K]: local senders' slots */
	int *scratch;		 /* 3 * W ints for try_apply */
	size_t *eager_last;	 /* 2 * W: eager apply's per-sender scratch */
	/* drained chunks not applied yet (clocks >= next_apply), and the
	 * selection of the clock being applied */
	struct frr_chunk *store, *sel;
	size_t nstore, store_cap;
	/* chunks drained in all, and that count when a select last found
	 * its clock incomplete: nothing new, no need to look again */
	uint64_t ndrained, nchecked;
	/* the drained chunks' payload buffers, kept for reuse by size class
	 * (table/inbox.c frr_rt_pay_get): each class's free list */
	void *pay_free[FRR_PAY_CLASSES];
	int next_apply;
	/* mode backup: the server counts the final batches of bk_clock that
	 * reached its shard (bk_finals) and, at W - backups, sets bk_cut to
	 * bk_clock + 1; a worker still in a clock < bk_cut drops the rest of
	 * its list (worker/worker.c run_list) */
	int bk_clock, bk_finals;
	_Atomic int bk_cut;
	/* --trace: the server's buffer (worker/instrument.c), NULL: none */
	struct frr_trace_buf *trace;
};

/* Rank o's inbox slot for sender worker w: its size, and the offset of
 * its slot k (o's own workers' slots first, then the others', in worker
 * order). */
static inline size_t frr_rt_slot_size(const struct frr_rt *rt, int o, int w)
{
	return w / rt->T == o ? rt->tb->slot_bytes[o] : rt->tb->rslot_bytes[o];
}

static inline size_t frr_rt_slot_off(const struct frr_rt *rt, int o, int w,
				     int k)
{
	const struct frr_tables *tb = rt->tb;
	size_t K = (size_t)tb->K, T = (size_t)rt->T, first = (size_t)o * T;

	if (w / rt->T == o)
		return (((size_t)w - first) * K + (size_t)k) *
		       tb->slot_bytes[o];
	return T * K * tb->slot_bytes[o] +
	       (((size_t)w < first ? (size_t)w : (size_t)w - T) * K +
		(size_t)k) *
		   tb->rslot_bytes[o];
}

/* Mode backup: clocks < this are cut (their stragglers drop the rest). */
static inline int frr_rt_backup_cut(const struct frr_rt *rt)
{
	return atomic_load_explicit(&rt->tb->bk_cut, memory_order_acquire);
}

/* ---- table/cache.c ---- */
int frr_cache_init(struct frr_rt *rt, struct frr_cache *k, int ring);
/* Whether a cache with this ring keeps a snapshot of table s's rows it
 * reads (struct frr_tcache nosnap): the memory plan counts it. */
int frr_cache_keeps_snap(const struct frr_rt *rt,
			 const struct frr_table_spec *s, int ring);
void frr_cache_fini(struct frr_cache *k);
/* End the batch: the next access of every row fetches it again. */
void frr_cache_next_batch(struct frr_cache *k);

/* ---- table/batch.c ---- */
/* Flush the batch in c's cache to every shard, attributed to (c->part,
 * c->clock); visible on return.  final: the owner's own end-of-clock
 * batch, announcing nextra more batches of (part, clock). */
int frr_rt_batch_send(struct frr_ctx *c, int final, int nextra);
/* Free a sender's local chunk buffers (after the server is done). */
void frr_rt_lbufs_fini(struct frr_lbufs *lb);
/* Payload bytes a chunk to rank o can carry. */
size_t frr_rt_chunk_cap(const struct frr_rt *rt, int o);

/* ---- table/shard.c ---- */
int frr_rt_tables_init(struct frr_rt *rt);
void frr_rt_tables_fini(struct frr_rt *rt);
/* Apply clock c if every batch of it has arrived: 1 applied, 0 not yet,
 * < 0 error.  Eager: the batches were applied as they came; this only
 * says clock c is complete. */
int frr_rt_try_apply(struct frr_rt *rt, int c);
/* Eager: apply every whole batch drained and not applied yet, push the
 * rows it changed: 1 if any, 0 if none, < 0 error. */
int frr_rt_eager_apply(struct frr_rt *rt);

/* ---- table/hold.c ---- */
/* The app declares the rows its partitions use (part_rows, which an app
 * built against an older header lacks). */
int frr_rt_has_part_rows(const struct frr_app_ops *a);
/* part_rows(partition v) into rs; the error said. */
int frr_rt_part_rows(struct frr_rt *rt, int v, struct frr_rowset *rs);
/* Every rank's set of rows, exchanged: sets repl_off, repl_len.  held[v]:
 * partition v is loaded on this rank (its own, or rr's replicas). */
int frr_rt_hold_plan(struct frr_rt *rt, const uint8_t *held);
void frr_rt_hold_fini(struct frr_rt *rt);
/* After the memory check: refuse a table the plan could not lay out. */
int frr_rt_hold_check(const struct frr_rt *rt);
/* Push rows [lo, hi) of this rank's shard of table t to the ranks that
 * hold them. */
int frr_rt_push_rows(struct frr_rt *rt, int t, uint64_t lo, uint64_t hi);
/* Make row `row` of table t held here, pulling it from its owner if it
 * is not, or waking it (q: the calling worker thread's index, or T on the
 * server thread; part: the partition whose items read it, or -1): 0 held
 * already, 1 pulled or woken, < 0 the job failed. */
int frr_rt_row_hold(struct frr_rt *rt, int t, uint64_t row, int q, int part);
/* Server thread: answer the row requests that arrived (1 if any). */
int frr_rt_pull_serve(struct frr_rt *rt);
const float *frr_rt_replica_row(const struct frr_rt *rt, int t, uint64_t row);
/* Rows of rank o's shard of table t that another rank's partitions may
 * write (all but those only o's partitions declare). */
uint64_t frr_rt_shared_rows(const struct frr_rt *rt, int t, int o);
/* The rank storing row `row` of table t, and its index there. */
int frr_rt_owner_rank(const struct frr_rt *rt, int t, uint64_t row);
uint64_t frr_rt_local_index(const struct frr_rt *rt, int t, uint64_t row);

/* ---- table/direct.c ---- */
/* Whether this rank's solo rows of table t are applied in place. */
int frr_direct_table_ok(const struct frr_rt *rt, int t);
/* After the hold plan: each thread's rows (part_rows of its partition,
 * declared by no other partition); 0 or the error. */
int frr_direct_plan(struct frr_rt *rt);
void frr_direct_fini(struct frr_rt *rt);
/* Table t has rows this rank applies in place. */
int frr_direct_has(const struct frr_rt *rt, int t);
/* Rows of table t this rank applies in place (every thread's). */
uint64_t frr_direct_rows(const struct frr_rt *rt, int t);
/* Thread q's own cache: its rows (struct frr_tcache direct). */
void frr_direct_cache(const struct frr_rt *rt, struct frr_cache *k, int q);
/* At a flush (batch.c): add the own cache's written rows of it to the
 * shard, and note their local range for the server. */
void frr_direct_flush(struct frr_ctx *c);
/* Server, applying clock c: widen dlo/dhi by the rows applied in place. */
void frr_direct_range(struct frr_rt *rt, int c, uint64_t *dlo, uint64_t *dhi);
/* Server: local row li of table t is one of them (skip it in a batch of
 * partition `part`; a change to it is noted for frr_direct_check). */
int frr_direct_skip(struct frr_rt *rt, int t, uint64_t li, const float *g,
		    int part, int help);
/* Server, around applying a chunk: a help batch of a partition of this
 * rank whose rows are added in place takes its mutex (the thread index,
 * for frr_direct_unlock; -1: none taken). */
int frr_direct_lock(struct frr_rt *rt, const struct frr_slot_hdr *h);
void frr_direct_unlock(struct frr_rt *rt, int q);
/* Fail the job if a batch wrote a row applied in place. */
int frr_direct_check(struct frr_rt *rt);

/* ---- table/inbox.c ---- */
/* Copy every newly arrived chunk out of the inbox (freeing its slot):
 * 1 if any, 0 if none, < 0 error. */
int frr_rt_inbox_drain(struct frr_rt *rt);
/* Move the drained chunks of clock c into tb->sel if every batch of c is
 * complete: their number, 0 if not yet. */
size_t frr_rt_inbox_select(struct frr_rt *rt, int c);
/* Free the selected chunks after applying them. */
void frr_rt_inbox_release(struct frr_rt *rt, size_t n);
/* A buffer for a chunk's payload of n bytes, and back to the pool
 * (server thread only). */
void *frr_rt_pay_get(struct frr_rt *rt, uint64_t n);
void frr_rt_pay_put(struct frr_rt *rt, void *p, uint64_t n);
/* Done with a drained chunk's payload: back to the pool, unless it is a
 * local sender's (lent); pay = NULL. */
void frr_rt_chunk_free(struct frr_rt *rt, struct frr_chunk *ck);
void frr_rt_inbox_fini(struct frr_rt *rt);

#endif /* FLEXRR_RUNTIME_TABLE_H */
