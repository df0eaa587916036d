/* SPDX-License-Identifier: MIT */
/*
 * The workers of a rank (worker/): the loop over clocks and over the items
 * of each worker's list, the item context of flexrr.h, the partitions a
 * rank holds and their item state, and straggler injection and the trace
 * in the loop (docs/runtime.md "One clock").  Above table/ and ssp/; the
 * loop calls RapidReassignment (rr/, above it) only through the ops table
 * below, which rr/rr.c fills and job/ installs (rt->ws->rr).
 */
#ifndef FLEXRR_RUNTIME_WORKER_H
#define FLEXRR_RUNTIME_WORKER_H

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>

#include "core.h"
#include "table.h"

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

struct frr_worker {
	alignas(64) struct frr_rt *rt;
	struct frr_sender dp; /* its data path: caches, lane, seqs */
	pthread_t thread;
	int thread_ok;	     /* created: join it */
	int started;	     /* app->thread_init ran */
	uint64_t *mbox_sent; /* per target worker */
	uint64_t *mbox_recv; /* per sender worker */
	struct frr_wclock rec[FRR_RT_STAT_RING];
	double loop_time;
	int helped_clock; /* last own clock of which others ran a part */
	/* the app's globals as last copied out of the ring (frr_globals):
	 * of app clock glob_from (-1: none yet), valid if glob_ok */
	double glob[FRR_MAX_GLOBALS];
	int glob_from, glob_ok;
	void *scratch; /* app->scratch_size bytes */
};

/* ---- the list a worker is working through in the current clock --------- */
/* Owned by the worker's thread; hooks of that worker may move `end`
 * (never below `next`, never above `n`). */
struct frr_rr_list {
	uint64_t next; /* first item not yet started */
	uint64_t end;  /* one past the last item this worker will do itself */
	uint64_t n;    /* items in the partition */
};

/* ---- the ops rr provides ------------------------------------------------ */
/* Internal: the one table (rr/rr.c) is built with the runtime, so every
 * entry is set and the runtime calls them without checks. */
struct frr_rr_ops {
	/* Once per rank, after tables and partitions of this rank's workers
	 * are set up but before transport regions are sized: compute helper
	 * groups, call frr_rt_want_replica() for partitions to load, allocate
	 * state.  *state is handed back to every hook (rr's job state). */
	int (*job_init)(struct frr_rt *rt, const struct frr_rr_opts *opts,
			void **state);
	/* Once per rank at the end of the job (after the final barrier). */
	void (*job_fini)(struct frr_rt *rt, void *state);
	int (*clock_begin)(struct frr_rt *rt, void *state, int w, int clock);
	/* Called while w waits for SSP (every ~100 us): serve help requests. */
	int (*idle)(struct frr_rt *rt, void *state, int w, int clock);
	int (*progress_check)(struct frr_rt *rt, void *state, int w, int clock,
			      struct frr_rr_list *list);
	int (*own_list_done)(struct frr_rt *rt, void *state, int w, int clock,
			     struct frr_rr_list *list);
	int (*clock_end)(struct frr_rt *rt, void *state, int w, int clock);
	/* (lb-bsp; NULL in rr) After the SSP wait of clock c, before any item
	 * runs: may lower list->end (the tail others run this clock). */
	int (*clock_plan)(struct frr_rt *rt, void *state, int w, int clock,
			  struct frr_rr_list *list);
	/* (rr, additive) After w's last clock, on its thread: keep answering
	 * helpees until they finish too.  last_clock = last clock run. */
	int (*worker_exit)(struct frr_rt *rt, void *state, int w,
			   int last_clock);
	/* (rr, additive) Rank 'rank' failed (-1: some rank, the job failed
	 * for another reason); called on the thread that noticed, before the
	 * failure is visible to any worker, so that worker_failed can name the
	 * helpers and helpees rr was working with there.  `what` says how it
	 * failed ("died", "stopped responding"). */
	void (*peer_dead)(struct frr_rt *rt, void *state, int rank,
			  const char *what);
	/* (rr, additive) On w's thread, after its loop ended with an error
	 * (the job failed): rr names, from w's own state, the helpers and
	 * helpees on the rank peer_dead reported. */
	void (*worker_failed)(struct frr_rt *rt, void *state, int w);
};

/* A rank's workers (rt->ws). */
struct frr_workers {
	struct frr_worker *wk;	/* T */
	struct frr_part *parts; /* W */
	/* item state of held partitions, in remote-writable regions so a
	 * range's state can be shipped to a helper and back (rr only) */
	struct frr_tp_mr **state_mr; /* W */
	struct frr_tp_rmr **rstate;  /* [rank * W + v] */
	uint64_t *nitems;	     /* W */
	struct frr_inst *inst;	     /* stragglers / trace, NULL if neither */
	/* RapidReassignment (flexrr, rr modes), NULL: none */
	const struct frr_rr_ops *rr;
	void *rr_state;
	/* the server's end of a worker's clock c items, before its batch
	 * leaves (checkpoints, job/'s): 0 or the job's error; NULL: none */
	int (*clock_items_done)(struct frr_worker *wk, int c);
	/* lb-bsp with item state: a helper's tail of the clock returns its
	 * states before its batch, so clock_items_done runs after the
	 * worker's batch, once every shard applied the clock (rr/lb.c) */
	int items_done_late;
};

/* ---- worker/worker.c ---- */
void *frr_rt_worker_main(void *arg);
/* wk's record of clock (started at its first use). */
struct frr_wclock *frr_rt_clock_rec(struct frr_worker *wk, int clock);
/* One turn of a wait on wk's thread in clock c: rr serves help (a helpee
 * may be waiting on wk: no wait of a worker may hold it back); 0 or the
 * job's error.  A no-op without rr. */
int frr_rt_worker_idle(struct frr_worker *wk, int c);
int frr_rt_workers_start(struct frr_rt *rt);
void frr_rt_workers_fini(struct frr_rt *rt);
/* Run items [a, b) of c's partition through the app (c->cache). */
int frr_rt_process(struct frr_ctx *c, uint64_t a, uint64_t b);
/* rr hook result check: < 0 fails the job. */
int frr_rt_hook(struct frr_rt *rt, int err, const char *name, int w, int c);

/* ---- worker/instrument.c: stragglers and trace, every mode ---- */
int frr_inst_init(struct frr_rt *rt);
int frr_inst_fini(struct frr_rt *rt);
/* At a clean end, the workers joined: a rank other than 0 writes its trace
 * part; rank 0 (after the ranks said, part_err[r], whether theirs is in
 * place) the trace.  0, or the error (logged).  frr_inst_fini writes it
 * otherwise. */
int frr_inst_trace_write(struct frr_rt *rt, const int32_t *part_err);
int frr_inst_clock_begin(struct frr_worker *wk, int c);
void frr_inst_ssp_wait(struct frr_worker *wk, int c, uint64_t t0, uint64_t t1);
/* wk's thread ran items for work_ns (its own or, helping, another's). */
void frr_inst_chunk(struct frr_worker *wk, uint64_t work_ns);
/* wk ran its own items [a, end) since its wait ended or it last helped. */
void frr_inst_list_done(struct frr_worker *wk, int c, uint64_t a, uint64_t end);
void frr_inst_help_wait(struct frr_worker *wk, int c, uint64_t t0);
/* The worker's final batch of clock c, sent from t0 to now. */
void frr_inst_flush(struct frr_worker *wk, int c, uint64_t t0);
void frr_inst_clock_end(struct frr_worker *wk, int c);
void frr_inst_exit(struct frr_worker *wk);
struct frr_trace_buf *frr_rt_trace_buf(const struct frr_rt *rt, int w);

/* ---- worker/part.c ---- */
int frr_rt_part_load(struct frr_rt *rt, int v);
void frr_rt_parts_fini(struct frr_rt *rt);
int frr_rt_state_setup(struct frr_rt *rt);
int frr_rt_state_return(struct frr_rt *rt, int owner, uint64_t a, uint64_t b);
/* Partition v's item costs on this rank (the app's item_cost as a prefix
 * sum of nitems + 1 entries), or NULL: none, or v not held here. */
const double *frr_rt_costs(const struct frr_rt *rt, int v);

#endif /* FLEXRR_RUNTIME_WORKER_H */
