/* SPDX-License-Identifier: MIT */
/*
 * Runtime internals: one struct frr_rt per process (rank) of a job.
 * docs/runtime.md has the design and a diagram of one clock.  Private to
 * the runtime (and its tests); apps see include/flexrr/flexrr.h only.
 *
 * Threads of a rank: T worker threads (run the item loop through their
 * caches, flush batches at clock end) and the rank's main thread, the
 * "server" (applies the batches its shard receives, pushes fresh shard rows
 * to every rank's replica, evaluates clocks, heartbeats, detects dead
 * peers).  A transport ctx is single-threaded by contract: every frr_tp_*
 * call on the rank's ctx (rt->tp) is made under rt->tp_lock; a worker's
 * batches go out on its own ctx (wk->lane, job/setup.c), which only that
 * thread touches, without the lock.  Plain memory that peers write (control
 * region, inbox, replica) is read with acquire loads of the word that
 * guards it.
 *
 * Failures: no code here exits the process.  The thread that detects a
 * fatal error calls frr_rt_fail() (logs once, records the error) and
 * returns it; every wait loop of every thread checks frr_rt_failed() and
 * unwinds, and frr_rt_job_run returns the error.
 *
 * Files, by concept:
 *   job/      job.c (run a rank's job, init/fini), setup.c (layout, memory
 *             check, transport regions), server.c (the server loop),
 *             health.c (failure, dead peers, heartbeats, stall detection),
 *             ctl.c (control-word writes), globals.c (the app's globals)
 *   table/    cache.c (worker cache: fetch, read-my-writes), batch.c
 *             (flushing a cache into inbox slots), shard.c (apply batches,
 *             push rows to replicas)
 *   ssp/      ssp.c (the staleness rule and its waits)
 *   worker/   worker.c (the loop over clocks and items), ctx.c (the item
 *             context of flexrr.h), part.c (partitions and item state),
 *             instrument.c (stragglers and trace in the loop)
 *   eval/     eval.c (clock_local, eval context), metrics.c (stats to
 *             rank 0, clock_global, progress, metrics file, summary)
 *   rr/       RapidReassignment: rr.c (binding), rr_proto.c (engine;
 *             rr_policy.c offers, rr_serve.c helper side),
 *             mailbox.c (messages, progress words), seam.c (what rr may
 *             call; running a helper's range)
 *   straggler/, trace/: injection and timeline, every mode
 *   launch/ (program entry, run options) and sim/ (the simulator) sit
 *   on top of the runtime.
 */
#ifndef FLEXRR_RUNTIME_RT_H
#define FLEXRR_RUNTIME_RT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrr/base.h"
#include "flexrr/flexrr.h"
#include "flexrr/bootstrap.h"
#include "flexrr/transport.h"
#include "eval/stats.h"
#include "rr/rr_hooks.h"
#include "ssp/ssp.h"
#include "table/table.h"

/* Attribute: this copy loop must stay a loop, not become a memcpy call
 * (the spelling differs between gcc and clang). */
#ifdef __clang__
#define FRR_NO_MEMCPY_IDIOM no_builtin("memcpy")
#else
#define FRR_NO_MEMCPY_IDIOM optimize("no-tree-loop-distribute-patterns")
#endif
#define FRR_RT_ASYNC_WINDOW 16 /* how far ahead async workers may run */
#define FRR_RT_STAT_RING 32    /* per-worker per-clock records kept */
#define FRR_RT_STATS_SLOTS 4   /* per-rank clock stats in flight to rank 0 */
#define FRR_RT_HELP_SLOTS 8    /* unapplied help batches per helper (rr) */
/* the app's globals of this many recent clocks, per rank (job/globals.c):
 * clock c reads those of c - slack - 1, and the slot is reused only once
 * every item of a clock that reads it has run */
#define FRR_RT_GLOBALS_RING 32
/* inbox slots, budget and chunk bounds: table/sizes.h (the simulator's) */

/* --mode (enum frr_mode, frr_mode_name): ssp/ssp.h */

/* Options of `flexrr run` (the launcher parses them). */
struct frr_run_opts {
	int nprocs;
	int threads;
	enum frr_tp_backend backend;
	enum frr_mode mode;
	int slack;
	int clocks;
	int have_target;
	double target;
	uint64_t seed;
	int quiet;
	int pin;
	/* --shared-transport: every thread sends through the rank's one
	 * ctx under tp_lock, not its own (job/setup.c) */
	int shared_tp;
	/* --eager: under SSP a shard applies each batch as it arrives, not
	 * a whole clock at once (table/shard.c "Eager") */
	int eager;
	int allow_nonfinite; /* --allow-nonfinite: a nan objective runs on */
	/* --backups B (mode backup): workers a clock does not wait for;
	 * -1 = the default, 5% of the workers, at least 1 */
	int backups;
	/* rank among the job's ranks on this node, from the launcher
	 * (bootstrap's frr_launcher_env); -1 = the rank (a local job) */
	int local_rank;
	const char *metrics_path;
	const char *save_path;
	const char *load_path;
	const char *rendezvous; /* HOST:PORT of rank 0 */
	int rendezvous_fd;	/* inherited listening socket (local jobs) */
	/* the job secret (FLEXRR_JOB_TOKEN[_FILE], or drawn by the local
	 * launcher); all zero = none given yet */
	struct frr_job_secret secret;
	int timeout_ms; /* a wait with no progress for this long fails */
	int dead_ms;	/* a peer silent this long is declared dead */
	/* --delay-worker W,EVERY,FACTOR: worker W sleeps FACTOR x its loop
	 * time every EVERY-th clock (bench; rr's --stragglers is richer) */
	int delay_worker;
	int delay_every;
	double delay_factor;
	struct frr_rr_opts rr; /* also --stragglers, --trace (any mode) */
	int rr_engaged;	       /* unused: the mode decides */
	const struct frr_app_ops *app;
	int app_argc;
	char **app_argv;
	uint64_t args_hash; /* app name + options: must match on every rank */
	/* --checkpoint DIR, --checkpoint-every N (clocks) or Ns (seconds),
	 * --resume DIR (job/checkpoint.h) */
	const char *ckpt_dir;
	int ckpt_every;
	double ckpt_every_s;
	const char *resume_dir;
};

/* What a worker records per clock (slot clock % FRR_RT_STAT_RING). */
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
};

/* A data partition held by this rank (its own workers' and replicas). */
struct frr_part {
	int loaded;
	uint64_t n;
	void *data;	     /* load_partition's pointer */
	uint64_t *state_off; /* n + 1 offsets, NULL = no item state */
	uint8_t *state;
	/* n + 1: the app's cost of items [0, i) (item_cost; rr only),
	 * NULL: every item costs 1 */
	double *cost_before;
};

struct frr_rt;
struct frr_worker;

/* The item context of flexrr.h: one batch being run by one thread. */
struct frr_ctx {
	struct frr_rt *rt;
	struct frr_worker *wk; /* thread running */
	struct frr_cache *cache;
	struct frr_wclock *rec;
	int part; /* partition (= its owner worker's id) */
	int clock;
	int64_t bound; /* fetches must see clocks <= bound complete */
};

struct frr_worker {
	alignas(64) struct frr_rt *rt;
	int id;	   /* global worker id */
	int local; /* thread index */
	pthread_t thread;
	int thread_ok; /* created: join it */
	int started;   /* app->thread_init ran */
	struct frr_cache own, help;
	struct frr_tp_mr *stage; /* send staging (one slot), in lane */
	/* this thread's own transport (job/setup.c "lanes"): its batches go
	 * out on it without tp_lock; NULL: through rt->tp under tp_lock */
	struct frr_tp_ctx *lane;
	struct frr_tp_ep **lane_ep;	/* [P] */
	struct frr_tp_rmr **lane_inbox; /* [P] */
	uint64_t *sent_seq;		/* per dest rank */
	uint64_t *slot_seq;  /* [P][K]: seq last written into each slot */
	uint64_t *mbox_sent; /* per target worker */
	uint64_t *mbox_recv; /* per sender worker */
	struct frr_wclock rec[FRR_RT_STAT_RING];
	double loop_time;
	int helped_clock; /* last own clock of which others ran a part */
	/* the app's globals as last copied out of the ring (frr_globals):
	 * of app clock glob_from (-1: none yet), valid if glob_ok */
	double glob[FRR_MAX_GLOBALS];
	int glob_from, glob_ok;
	void *scratch;	/* app->scratch_size bytes */
	float *bad_row; /* handed out after an app's out-of-range access */
};

/* Inbox slot header: one chunk of an update batch (segments follow,
 * table.h).  A sender's chunks to one rank carry seq 1, 2, 3, ...: the
 * server drains them in that order. */
struct frr_slot_hdr {
	uint64_t seq; /* written last by a counter write; 0 = empty */
	int32_t sender;
	int32_t owner; /* attributed worker */
	int32_t clock;
	int32_t final; /* 1 = owner's own end-of-clock batch */
	int32_t nextra;
	int32_t last;	/* 1 = the batch's last chunk */
	uint64_t bytes; /* payload bytes after the header */
};
_Static_assert(sizeof(struct frr_slot_hdr) <= FRR_SLOT_HDR, "slot header");

/* A drained chunk: header and payload copied once out of the remotely
 * writable inbox into the server's own memory and validated there; only
 * this copy is used afterwards (a peer may rewrite the inbox at any time). */
struct frr_chunk {
	struct frr_slot_hdr h;
	uint8_t *pay; /* h.bytes, malloc'ed; eager: NULL once applied (the
		       * header stays until its clock is complete) */
};

struct frr_rt {
	struct frr_run_opts *o;
	struct frr_job_info job;   /* the apps' view */
	struct frr_rt_shape shape; /* rr's view */
	const struct frr_app_ops *app;
	void *app_state;
	struct frr_oob *oob;
	int P, T, W, rank;
	int eff_slack; /* slack used for waits (async: window) */
	int eager;     /* --eager (ssp, flexrr, async): table/shard.c */
	/* mode backup: the clock ends when W - backups workers finished it
	 * (0: off).  The server counts the final batches of bk_clock that
	 * reached its shard (bk_finals) and, at W - backups, sets bk_cut to
	 * bk_clock + 1; a worker still in a clock < bk_cut drops the rest of
	 * its list (worker/worker.c run_list) */
	int backups;
	int bk_clock, bk_finals;
	_Atomic int bk_cut;
	uint64_t dropped_sum; /* rank 0: items dropped in the job */
	int own_pending; /* a FRR_TABLE_SEE_OWN_PENDING table is declared */
	uint32_t own_declared; /* tables the app flagged so (bit t) */
	int flush_ms;	       /* data-path flush timeout: --dead-timeout / 3 */
	double t0;

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

	/* control region layout (byte offsets) */
	size_t off_prog, off_done, off_push, off_hb, off_stop, off_notice,
	    off_stats, off_ack, off_mbox, off_mack, off_mstage, off_pullreq,
	    off_pullack, off_fin, stats_rec, off_glob, glob_rec, off_eapp;
	size_t ctl_len, inbox_len, repl_len;

	pthread_mutex_t tp_lock;
	struct frr_tp_ctx *tp;
	struct frr_tp_ep **eps;
	struct frr_tp_ep **lane_in; /* the peers' lanes accepted here */
	int nlane_in;
	struct frr_tp_mr *ctl, *inbox, *repl;
	struct frr_tp_rmr **rctl, **rinbox, **rrepl;
	uint8_t *ctlp, *inboxp, *replp;

	struct frr_hold *hold; /* the rows this rank holds (table/hold.c) */
	float *master[FRR_MAX_TABLES];
	float *accum[FRR_MAX_TABLES]; /* AdaGrad sum of g^2 */
	float *comp[FRR_MAX_TABLES];  /* FRR_TABLE_COMPENSATED: Kahan's */

	struct frr_part *parts; /* W */
	/* item state of held partitions, in remote-writable regions so a
	 * range's state can be shipped to a helper and back (rr only) */
	struct frr_tp_mr **state_mr; /* W */
	struct frr_tp_rmr **rstate;  /* [rank * W + v] */
	uint64_t *nitems;	     /* W */
	int prog_shift;
	/* progress words by need (rr/seam.c frr_rt_progress_reader): per
	 * local worker the ranks that read its word ([t * P], prog_nsubs[t]
	 * of them); per worker, whether this rank reads it */
	int *prog_subs, *prog_nsubs;
	uint8_t *prog_read;
	struct frr_worker *wk; /* T */

	/* server state */
	uint64_t *consumed; /* [sender]: seq of the last chunk drained */
	int *scratch;	    /* 3 * W ints for try_apply */
	size_t *eager_last; /* 2 * W: eager apply's per-sender scratch */
	/* drained chunks not applied yet (clocks >= next_apply), and the
	 * selection of the clock being applied */
	struct frr_chunk *store, *sel;
	size_t nstore, store_cap;
	/* chunks drained in all, and that count when a select last found
	 * its clock incomplete: nothing new, no need to look again */
	uint64_t ndrained, nchecked;
	int next_apply, next_eval, next_global;
	_Atomic int eval_done; /* clocks evaluated locally */
	_Atomic int end_clock; /* clocks the job runs */
	_Atomic int failed;    /* 0, or the job's error (negative errno) */
	double last_global_t;
	double objective;
	char metrics[512];
	FILE *metrics_f;
	int metrics_json;
	double *stats_copy; /* rank 0: a rank's stats record (eval/stats.h) */
	uint64_t *hb_last;
	double *hb_seen;
	uint64_t hb_count;
	uint64_t hb_agg; /* the progress aggregate last sent (beat) */
	double hb_next;

	struct frr_inst *inst;	     /* stragglers / trace, NULL if neither */
	const struct frr_rr_ops *rr; /* RapidReassignment (flexrr, rr modes) */
	void *rr_state;
	int rr_reassign;
	int test_break_ssp; /* env FLEXRR_TEST_BREAK_SSP: checker self-test */
	/* env FLEXRR_TEST_FORGE=stats:R (rank R sends rank 0 a NaN metric) or
	 * batch:R (rank R's workers send an update batch attributed to a
	 * worker that does not exist), in clock 1: tests of the receivers'
	 * checks; -1 = off */
	int test_forge_stats, test_forge_batch;
	int test_forge_lane; /* this rank's lanes fail to open (-ENOSPC) */
	/* lane-connect:R: rank R's thread 0 fails to connect its lane to
	 * its second peer (-ECONNREFUSED), 1 s after the first connected */
	int test_forge_lane_connect;
	/* env FLEXRR_TEST_DIE=R:C:FILE: rank R SIGKILLs itself as its first
	 * worker starts app clock C, once (only the run that creates FILE):
	 * the restart tests' dead rank; test_die_rank -1 = off */
	int test_die_rank, test_die_clock;
	const char *test_die_file;
	/* checkpoints and resume (job/checkpoint.c): NULL without
	 * --checkpoint; clock_base is the app's clock of internal clock 0
	 * (a resumed run counts its clocks from 0 like any run) */
	struct frr_ckpt *ck;
	int clock_base;
	/* the app's per-clock globals (job/globals.c): 0 if it has none */
	int nglob;
};

/* An app built against an older flexrr.h has a shorter frr_app_ops: read a
 * field only when its size covers it. */
#define FRR_APP_HAS(a, f) \
	((a)->size >= offsetof(struct frr_app_ops, f) + sizeof((a)->f))

/* The clock the app sees (and checkpoints name) of internal clock c. */
static inline int frr_rt_app_clock(const struct frr_rt *rt, int c)
{
	return c + rt->clock_base;
}

/* Control words: 8-byte counters in the ctl region, written by peers with
 * counter writes (G2) and read with acquire loads. */
/* Rank o's inbox slot for sender worker w: its size, and the offset of
 * its slot k (o's own workers' slots first, then the others', in worker
 * order). */
static inline size_t frr_rt_slot_size(const struct frr_rt *rt, int o, int w)
{
	return w / rt->T == o ? rt->slot_bytes[o] : rt->rslot_bytes[o];
}

static inline size_t frr_rt_slot_off(const struct frr_rt *rt, int o, int w,
				     int k)
{
	size_t K = (size_t)rt->K, T = (size_t)rt->T, first = (size_t)o * T;

	if (w / rt->T == o)
		return (((size_t)w - first) * K + (size_t)k) *
		       rt->slot_bytes[o];
	return T * K * rt->slot_bytes[o] +
	       (((size_t)w < first ? (size_t)w : (size_t)w - T) * K +
		(size_t)k) *
		   rt->rslot_bytes[o];
}

static inline uint64_t *ctl_u64(const struct frr_rt *rt, size_t off)
{
	return (uint64_t *)(rt->ctlp + off);
}

/* 1 + the last clock shard o has applied (its "done" word). */
static inline uint64_t frr_rt_shard_done(const struct frr_rt *rt, int o)
{
	return frr_tp_load_u64(ctl_u64(rt, rt->off_done + (size_t)o * 64));
}

/* 1 + the last clock whose rows shard o has started to push. */
static inline uint64_t frr_rt_shard_pushing(const struct frr_rt *rt, int o)
{
	return frr_tp_load_u64(ctl_u64(rt, rt->off_push + (size_t)o * 64));
}

/* Eager (table/shard.c): the words by which shard o tells local worker t
 * how far it has applied t's own batches: [0] = 1 + the clock being
 * applied, [1] = 1 + the last clock applied (a seqlock pair). */
static inline uint64_t *frr_rt_eapp_word(const struct frr_rt *rt, int o, int t,
					 int end)
{
	return ctl_u64(
	    rt, rt->off_eapp +
		    (((size_t)o * rt->T + (size_t)t) * 2 + (size_t)end) * 8);
}

/* Every shard has applied clocks < v. */
static inline int frr_rt_all_done_ge(const struct frr_rt *rt, uint64_t v)
{
	for (int o = 0; o < rt->P; o++)
		if (frr_rt_shard_done(rt, o) < v)
			return 0;
	return 1;
}

/* Mode backup: clocks < this are cut (their stragglers drop the rest). */
static inline int frr_rt_backup_cut(const struct frr_rt *rt)
{
	return atomic_load_explicit(&rt->bk_cut, memory_order_acquire);
}

/* 0 while the job runs, else its error (negative errno). */
static inline int frr_rt_failed(const struct frr_rt *rt)
{
	return atomic_load_explicit(&rt->failed, memory_order_acquire);
}

/* ---- job/job.c ---- */
/* Run this rank's part of the job: 0, or a negative errno once every
 * thread has stopped (the message is logged).  Never exits.
 * -ENOTRECOVERABLE: a worker did not return after the failure and was
 * abandoned with the rank's memory; the process must exit. */
int frr_rt_job_run(struct frr_oob *oob, struct frr_run_opts *o);
static inline double frr_rt_clock_now(void) /* base's clock, old name */
{
	return frr_now_s();
}

/* ---- job/server.c ---- */
/* The server loop until the last clock is evaluated: 0 or the job's error. */
int frr_rt_server_loop(struct frr_rt *rt);

/* ---- job/health.c ---- */
/* Fail the job with err (negative errno): log the message (the first
 * failure of a rank only: the rest are its consequences), make every
 * thread of the rank stop, return the job's error for the caller to
 * propagate. */
int frr_rt_fail(struct frr_rt *rt, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Peer `peer` is gone (how: what showed it): tell the other ranks, fail
 * naming the rank that really died.  Returns the job's error.  _on: the
 * failure showed on endpoint `seen` (the calling thread's own, e.g. its
 * lane), whose liveness counts too: dead there is dead, not hung. */
int frr_rt_peer_fail(struct frr_rt *rt, int peer, const char *how);
int frr_rt_peer_fail_on(struct frr_rt *rt, int peer, struct frr_tp_ep *seen,
			const char *how);
/* A wait's stall detector: the deadline restarts whenever any worker's
 * progress word changes, so long clocks are not mistaken for hangs. */
struct frr_stall {
	uint64_t sig;
	double since;
};
void frr_rt_stall_init(const struct frr_rt *rt, struct frr_stall *s);
/* 1 when nobody made progress for --timeout. */
int frr_rt_stalled(const struct frr_rt *rt, struct frr_stall *s);
/* Server: heartbeats out, dead peers in (finished: the last beat). */
int frr_rt_heartbeat(struct frr_rt *rt, double now, int finished);
/* Rank r's worker furthest behind as last heard (its own rank: now): v,
 * whether another of r's workers ties with it, its progress; -EPROTO if
 * r sent a worker that is not its own. */
int frr_rt_rank_laggard(const struct frr_rt *rt, int r, int *v, int *tie,
			struct frr_progress *p);

/* ---- job/ctl.c ---- */
/* A transport call that failed on the data path means a peer is gone. */
int frr_rt_tp_check(struct frr_rt *rt, int err, int peer, const char *what);
/* Write u64 into every peer's control region at off, then set it locally. */
int frr_rt_ctl_broadcast(struct frr_rt *rt, size_t off, uint64_t v);
int frr_rt_flush_all(struct frr_rt *rt, int timeout_ms);

/* ---- job/setup.c ---- */
int frr_rt_layout(struct frr_rt *rt);
size_t frr_rt_chunk_cap(const struct frr_rt *rt, int o);
int frr_rt_check_memory(struct frr_rt *rt);
/* Each worker thread gets its own transport context (job/setup.c lanes). */
int frr_rt_lanes_wanted(const struct frr_rt *rt);
int frr_rt_tp_setup(struct frr_rt *rt);
void frr_rt_tp_teardown(struct frr_rt *rt);

/* ---- table/cache.c ---- */
int frr_cache_init(struct frr_rt *rt, struct frr_cache *k, int ring);
void frr_cache_fini(struct frr_cache *k);
/* End the batch: the next access of every row fetches it again. */
void frr_cache_next_batch(struct frr_cache *k);

/* ---- table/batch.c ---- */
/* Flush the batch in c's cache to every shard, attributed to (c->part,
 * c->clock); visible on return.  final: the owner's own end-of-clock
 * batch, announcing nextra more batches of (part, clock). */
int frr_rt_batch_send(struct frr_ctx *c, int final, int nextra);

/* ---- table/shard.c ---- */
int frr_rt_tables_init(struct frr_rt *rt);
void frr_rt_tables_fini(struct frr_rt *rt);

/* ---- table/hold.c ---- */
/* Every rank's set of rows, exchanged: sets repl_off, repl_len. */
int frr_rt_hold_plan(struct frr_rt *rt);
void frr_rt_hold_fini(struct frr_rt *rt);
/* After the memory check: refuse a table the plan could not lay out. */
int frr_rt_hold_check(const struct frr_rt *rt);
/* Push rows [lo, hi) of this rank's shard of table t to the ranks that
 * hold them. */
int frr_rt_push_rows(struct frr_rt *rt, int t, uint64_t lo, uint64_t hi);
/* Make row `row` of table t held here, pulling it from its owner if it
 * is not (q: the calling worker thread's index, or T on the server
 * thread): 0 held already, 1 pulled, < 0 the job failed. */
int frr_rt_row_hold(struct frr_rt *rt, int t, uint64_t row, int q);
/* Server thread: answer the row requests that arrived (1 if any). */
int frr_rt_pull_serve(struct frr_rt *rt);

/* Apply clock c if every batch of it has arrived: 1 applied, 0 not yet,
 * < 0 error.  Eager: the batches were applied as they came; this only
 * says clock c is complete. */
int frr_rt_try_apply(struct frr_rt *rt, int c);
/* Eager: apply every whole batch drained and not applied yet, push the
 * rows it changed: 1 if any, 0 if none, < 0 error. */
int frr_rt_eager_apply(struct frr_rt *rt);

/* ---- table/inbox.c ---- */
/* Copy every newly arrived chunk out of the inbox (freeing its slot):
 * 1 if any, 0 if none, < 0 error. */
int frr_rt_inbox_drain(struct frr_rt *rt);
/* Move the drained chunks of clock c into rt->sel if every batch of c is
 * complete: their number, 0 if not yet. */
size_t frr_rt_inbox_select(struct frr_rt *rt, int c);
/* Free the selected chunks after applying them. */
void frr_rt_inbox_release(struct frr_rt *rt, size_t n);
void frr_rt_inbox_fini(struct frr_rt *rt);
const float *frr_rt_replica_row(const struct frr_rt *rt, int t, uint64_t row);
/* Rows of rank o's shard of table t that another rank's partitions may
 * write (all but those only o's partitions declare). */
uint64_t frr_rt_shared_rows(const struct frr_rt *rt, int t, int o);
/* The rank storing row `row` of table t, and its index there. */
int frr_rt_owner_rank(const struct frr_rt *rt, int t, uint64_t row);
uint64_t frr_rt_local_index(const struct frr_rt *rt, int t, uint64_t row);

/* ---- ssp/ssp.c ---- */
/* Fetches in clock must see clocks <= this complete (async: INT64_MIN). */
int64_t frr_rt_read_bound(const struct frr_rt *rt, int clock);
int frr_rt_stop_clock(const struct frr_rt *rt);
int frr_rt_cur_end(const struct frr_rt *rt);
int frr_rt_ssp_wait(struct frr_rt *rt, struct frr_worker *wk, int c);
int frr_rt_wait_eval(struct frr_rt *rt, struct frr_worker *wk, int c);

/* ---- worker/worker.c ---- */
void *frr_rt_worker_main(void *arg);
/* wk's record of clock (started at its first use). */
struct frr_wclock *frr_rt_clock_rec(struct frr_worker *wk, int clock);
int frr_rt_workers_start(struct frr_rt *rt);
void frr_rt_workers_fini(struct frr_rt *rt);
/* Run items [a, b) of c's partition through the app (c->cache). */
int frr_rt_process(struct frr_ctx *c, uint64_t a, uint64_t b);
/* rr hook result check: < 0 fails the job. */
int frr_rt_hook(struct frr_rt *rt, int err, const char *name, int w, int c);

/* ---- worker/instrument.c: stragglers and trace, every mode ---- */
int frr_inst_init(struct frr_rt *rt);
int frr_inst_fini(struct frr_rt *rt);
int frr_inst_clock_begin(struct frr_worker *wk, int c);
void frr_inst_ssp_wait(struct frr_worker *wk, int c, uint64_t t0, uint64_t t1);
/* wk's thread ran items for work_ns (its own or, helping, another's). */
void frr_inst_chunk(struct frr_worker *wk, uint64_t work_ns);
/* wk ran its own items [a, end) since its wait ended or it last helped. */
void frr_inst_list_done(struct frr_worker *wk, int c, uint64_t a, uint64_t end);
void frr_inst_help_wait(struct frr_worker *wk, int c, uint64_t t0);
void frr_inst_clock_end(struct frr_worker *wk, int c);
void frr_inst_exit(struct frr_worker *wk);
struct frr_trace_buf *frr_rt_trace_buf(const struct frr_rt *rt, int w);

/* ---- worker/part.c ---- */
int frr_rt_part_load(struct frr_rt *rt, int v);
void frr_rt_parts_fini(struct frr_rt *rt);
int frr_rt_state_setup(struct frr_rt *rt);
int frr_rt_state_return(struct frr_rt *rt, int owner, uint64_t a, uint64_t b);

/* ---- job/gather.c ---- */
int frr_rt_app_gather(struct frr_rt *rt);

/* ---- job/checkpoint.c, job/resume.c (job/checkpoint.h) ---- */
int frr_rt_ckpt_init(struct frr_rt *rt);
void frr_rt_ckpt_fini(struct frr_rt *rt);
/* Worker: the end of its clock c's items, before the batch leaves. */
int frr_rt_ckpt_snap(struct frr_worker *wk, int c);
/* Server: clock c applied on this shard / evaluated here / (rank 0)
 * processed for the whole job. */
int frr_rt_ckpt_shard(struct frr_rt *rt, int c);
int frr_rt_ckpt_app(struct frr_rt *rt, int c);
int frr_rt_ckpt_commit(struct frr_rt *rt, int c);
/* Server: 1 while the last checkpoint is written and clock c is the next
 * cut (c is not applied yet); each turn, the writer's news (1 if any, < 0
 * the job's error); whether nothing of a checkpoint is left to do. */
int frr_rt_ckpt_hold(struct frr_rt *rt, int c);
int frr_rt_ckpt_poll(struct frr_rt *rt);
int frr_rt_ckpt_idle(struct frr_rt *rt);
/* --resume: rows, item state, app state and the clock, before the
 * initial push (every rank). */
int frr_rt_resume(struct frr_rt *rt);
/* The clock of DIR's newest complete checkpoint (DIR/latest): 0, or
 * -ENOENT when there is none yet (another negative errno: unreadable). */
int frr_ckpt_latest(const char *dir, int *clock);

/* ---- eval/eval.c ---- */
int frr_rt_eval_local(struct frr_rt *rt, int c);
int frr_rt_app_load(struct frr_rt *rt);
int frr_rt_app_save(struct frr_rt *rt);
/* The app's frr_app_ops is long enough to have save_at, and sets it. */
static inline int frr_rt_has_save_at(const struct frr_app_ops *a)
{
	return a->size >=
		   offsetof(struct frr_app_ops, save_at) + sizeof(a->save_at) &&
	       a->save_at;
}
/* The app writes its model at the end (save or save_at). */
static inline int frr_rt_app_saves(const struct frr_app_ops *a)
{
	return a->save || frr_rt_has_save_at(a);
}

/* ---- job/globals.c: the app's per-clock globals ---- */
/* Check the app's nglobals / globals and size the ring (before layout). */
int frr_rt_globals_init(struct frr_rt *rt);
/* Rank 0, after clock_global(c): the app's globals of c to every rank. */
int frr_rt_globals_publish(struct frr_rt *rt, int c, const double *stats);
/* 1 when the globals internal clock c reads are on this rank (or the app
 * has none), 0 not yet; < 0 the job's error. */
int frr_rt_globals_ready(struct frr_rt *rt, int c);
/* This rank's copy of app clock ac's globals (checkpoints): 0, or
 * -ENOENT if it holds none of ac; put stores them (resume). */
int frr_rt_globals_get(const struct frr_rt *rt, int ac, double *out);
void frr_rt_globals_put(struct frr_rt *rt, int ac, const double *in);

/* ---- eval/metrics.c ---- */
int frr_rt_metrics_open(struct frr_rt *rt);
/* 0, or the first error writing the metrics file (logged, with its path) */
int frr_rt_metrics_close(struct frr_rt *rt);
/* Rank 0: 1 when clock c's stats of every rank are in and processed. */
int frr_rt_try_global(struct frr_rt *rt, int c);
void frr_rt_print_summary(struct frr_rt *rt, double secs);

#endif /* FLEXRR_RUNTIME_RT_H */
