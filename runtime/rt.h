/* SPDX-License-Identifier: MIT */
/*
 * Runtime internals: one struct frr_rt per process (rank) of a job.
 * docs/runtime.md has the design and a diagram of one clock.
 *
 * Threads of a rank: T worker threads (run the item loop, batch updates,
 * flush them at clock end) and the rank's main thread, the "server" (applies
 * the batches its shard receives, pushes fresh shard rows to every rank's
 * replica, evaluates clocks, heartbeats, detects dead peers).  The transport
 * ctx is single-threaded by contract: every frr_tp_* call is made under
 * rt->tp_lock.  Plain memory that peers write (control region, inbox,
 * replica) is read with acquire loads of the word that guards it.
 */
#ifndef FLEXRR_RUNTIME_RT_H
#define FLEXRR_RUNTIME_RT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrr/base.h"
#include "flexrr/flexrr.h"
#include "flexrr/bootstrap.h"
#include "flexrr/transport.h"
#include "rr_hooks.h"

#define FRR_RT_MAX_SLACK 24
#define FRR_RT_ASYNC_WINDOW 16 /* how far ahead async workers may run */
#define FRR_RT_STAT_RING 32    /* per-worker per-clock records kept */
#define FRR_RT_STATS_SLOTS 4   /* per-rank clock stats in flight to rank 0 */
#define FRR_RT_HELP_SLOTS 8    /* extra inbox slots for helper batches */
#define FRR_RT_NRR 4 /* rr counters per clock (rr_proto.h rr_counter) */
#define FRR_RT_NMETRICS (7 + FRR_RT_NRR)

/* Options of `flexrr run` (run.c parses them). */
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
	const char *metrics_path;
	const char *save_path;
	const char *load_path;
	const char *rendezvous; /* HOST:PORT of rank 0 */
	int rendezvous_fd;	/* inherited listening socket (local jobs) */
	uint64_t job_token;
	int timeout_ms; /* a wait with no progress for this long fails */
	int dead_ms;	/* a peer silent this long is declared dead */
	/* --delay-worker W,EVERY,FACTOR: worker W sleeps FACTOR x its loop
	 * time every EVERY-th clock (bench; rr's --stragglers is richer) */
	int delay_worker;
	int delay_every;
	double delay_factor;
	struct frr_rr_opts rr;
	int rr_engaged;
	const struct frr_app_ops *app;
	int app_argc;
	char **app_argv;
	uint64_t args_hash; /* app name + options: must match on every rank */
};

/* What a worker records per clock (slot clock % FRR_RT_STAT_RING). */
struct frr_wclock {
	int clock;
	double stats[FRR_MAX_STATS];
	double compute_s;	/* item loop (incl. hooks) */
	double wait_s;		/* blocked on SSP */
	double flush_s;		/* sending the batch */
	uint64_t updates;	/* row/cell updates pushed */
	uint64_t bytes;		/* payload bytes sent */
	int64_t min_data_clock; /* oldest clock seen complete by a read */
	uint64_t stale_reads;	/* reads older than the bound (must be 0) */
	double rr[FRR_RT_NRR];	/* rr: offers, accepted, cancelled, items */
	uint64_t reads;
};

/* Per-table update accumulator of one worker (dense, whole table). */
struct frr_delta {
	float *v[FRR_MAX_TABLES];
	uint64_t *lo[FRR_MAX_TABLES]; /* per dest rank: dirty local rows */
	uint64_t *hi[FRR_MAX_TABLES];
	uint64_t updates;
};

struct frr_part {
	int loaded;
	uint64_t n;
	uint64_t *state_off; /* n + 1 offsets, NULL = no item state */
	uint8_t *state;
};

struct frr_rt;

struct frr_wctx {
	struct frr_rt *rt;
	struct frr_worker *wk; /* thread running */
	int owner;
	int clock;
	struct frr_delta *d;
	struct frr_wclock *rec;
	int64_t bound; /* reads must see clocks <= bound complete */
};

struct frr_worker {
	alignas(64) struct frr_rt *rt;
	int id;	   /* global worker id */
	int local; /* thread index */
	pthread_t thread;
	struct frr_delta own, help;
	struct frr_tp_mr *stage; /* send staging (one slot) */
	uint64_t *sent_seq;	 /* per dest rank */
	uint64_t *mbox_sent;	 /* per target worker */
	uint64_t *mbox_recv;	 /* per sender worker */
	struct frr_wclock rec[FRR_RT_STAT_RING];
	double loop_time;
	int rc;
};

/* Inbox slot header (the data follows at rt->pay_off[dest][t]). */
struct frr_slot_hdr {
	uint64_t seq; /* written last by a counter write; 0 = empty */
	int32_t sender;
	int32_t owner; /* attributed worker */
	int32_t clock;
	int32_t final; /* 1 = owner's own end-of-clock batch */
	int32_t nextra;
	int32_t ntables;
	uint64_t lo[FRR_MAX_TABLES];
	uint64_t hi[FRR_MAX_TABLES];
};
#define FRR_SLOT_HDR 192
_Static_assert(sizeof(struct frr_slot_hdr) <= FRR_SLOT_HDR, "slot header");

struct frr_rt {
	struct frr_run_opts *o;
	struct frr_job_info job;
	const struct frr_app_ops *app;
	void *app_state;
	struct frr_oob *oob;
	int P, T, W, rank;
	int eff_slack; /* slack used for waits (async: window) */
	int flush_ms;  /* data-path flush timeout: --dead-timeout / 3 */
	double t0;

	int ntables;
	struct frr_table_spec spec[FRR_MAX_TABLES];
	uint64_t *shard_rows; /* [t * P + o] rows of table t on rank o */
	size_t *repl_off;     /* [t * P + o] byte offset in replica */
	size_t *pay_off;      /* [o * FRR_MAX_TABLES + t] in a slot to o */
	size_t *slot_bytes;   /* per dest rank */
	size_t slot_max;
	int K; /* inbox slots per sender */

	/* control region layout (byte offsets) */
	size_t off_prog, off_done, off_hb, off_stop, off_notice, off_stats,
	    off_ack, off_mbox, off_mack, off_mstage, stats_rec;
	size_t ctl_len, inbox_len, repl_len;

	pthread_mutex_t tp_lock;
	struct frr_tp_ctx *tp;
	struct frr_tp_ep **eps;
	struct frr_tp_mr *ctl, *inbox, *repl;
	struct frr_tp_rmr **rctl, **rinbox, **rrepl;
	uint8_t *ctlp, *inboxp, *replp;

	float *master[FRR_MAX_TABLES];
	float *accum[FRR_MAX_TABLES]; /* AdaGrad sum of g^2 */

	struct frr_part *parts; /* W */
	/* item state of held partitions, in remote-writable regions so a
	 * range's state can be shipped to a helper and back (rr only) */
	struct frr_tp_mr **state_mr; /* W */
	struct frr_tp_rmr **rstate;  /* [rank * W + v] */
	uint64_t *nitems;	     /* W */
	int prog_shift;
	struct frr_worker *wk; /* T */

	/* server state */
	uint64_t *consumed; /* [sender * K + slot] */
	int *scratch;	    /* 3 * W ints for try_apply */
	int next_apply, next_eval, next_global;
	_Atomic int eval_done; /* clocks evaluated locally */
	_Atomic int end_clock; /* clocks the job runs */
	_Atomic int failed;
	double last_global_t;
	double objective;
	char metrics[512];
	FILE *metrics_f;
	int metrics_json;
	uint64_t *hb_last;
	double *hb_seen;
	uint64_t hb_count;
	double hb_next;

	const struct frr_rr_ops *rr;
	void *rr_state;
	int rr_reassign;
	int test_break_ssp; /* env FLEXRR_TEST_BREAK_SSP: checker self-test */
};

/* A wait's stall detector: the deadline restarts whenever any worker's
 * progress word changes, so long clocks are not mistaken for hangs. */
struct frr_stall {
	uint64_t sig;
	double since;
};
void frr_rt_stall_init(const struct frr_rt *rt, struct frr_stall *s);
/* 1 when nobody made progress for --timeout. */
int frr_rt_stalled(const struct frr_rt *rt, struct frr_stall *s);

/* ---- rt_job.c ---- */
int frr_rt_job_run(struct frr_oob *oob, struct frr_run_opts *o);
static inline double frr_rt_clock_now(void) /* base's clock, old name */
{
	return frr_now_s();
}
/* Log and terminate this rank (a dead peer or a broken transport): the
 * other ranks notice by heartbeat and stop too. */
void frr_rt_fatal(struct frr_rt *rt, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
/* Peer `peer` is gone (how: what showed it): notify the other ranks, log
 * naming the rank that really died, exit. */
void frr_rt_peer_fatal(struct frr_rt *rt, int peer, const char *how)
    __attribute__((noreturn));
int frr_rt_owner_rank(const struct frr_rt *rt, uint64_t row);

/* Control words: 8-byte counters in the ctl region, written by peers with
 * counter writes (G2) and read with acquire loads. */
static inline uint64_t *ctl_u64(const struct frr_rt *rt, size_t off)
{
	return (uint64_t *)(rt->ctlp + off);
}

/* 1 + the last clock shard o has applied (its "done" word). */
static inline uint64_t frr_rt_shard_done(const struct frr_rt *rt, int o)
{
	return frr_tp_load_u64(ctl_u64(rt, rt->off_done + (size_t)o * 64));
}

/* Every shard has applied clocks < v. */
static inline int frr_rt_all_done_ge(const struct frr_rt *rt, uint64_t v)
{
	for (int o = 0; o < rt->P; o++)
		if (frr_rt_shard_done(rt, o) < v)
			return 0;
	return 1;
}

int frr_rt_stop_clock(const struct frr_rt *rt);

int frr_rt_state_return(struct frr_rt *rt, int owner, uint64_t a, uint64_t b);

/* ---- rt_worker.c ---- */
void *frr_rt_worker_main(void *arg);
int frr_rt_delta_init(struct frr_rt *rt, struct frr_delta *d);
void frr_rt_delta_fini(struct frr_delta *d);
/* Send the batch accumulated in d to every shard, attributed to
 * (owner, clock); flushed (visible) on return. */
int frr_rt_batch_send(struct frr_rt *rt, struct frr_worker *wk,
		      struct frr_delta *d, int owner, int clock, int final,
		      int nextra, struct frr_wclock *rec);

#endif /* FLEXRR_RUNTIME_RT_H */
