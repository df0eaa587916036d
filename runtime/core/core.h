/* SPDX-License-Identifier: MIT */
/*
 * The runtime's ground: one struct frr_rt per process (rank) of a job, and
 * what every floor of runtime/ needs of it (docs/architecture.md "Inside
 * runtime/"): the parameters the job runs with (built by launch/ from the
 * run options), the rank's shape, its transport and control region (the
 * words peers write: progress, done, stop, notices, heartbeats), and the
 * failure state.  Nothing here knows tables, workers, evaluation,
 * RapidReassignment or the job: each floor keeps its own state in a struct
 * of its own header, reached through the pointer below (rt->tb, rt->ws,
 * rt->ev, rt->js), whose type only that floor and those above it see.
 *
 * Threads of a rank: T worker threads and the rank's main thread, the
 * "server" (job/server.c).  A transport ctx is single-threaded by
 * contract: every frr_tp_* call on the rank's ctx (rt->tp) is made under
 * rt->tp_lock; a worker's batches go out on its own ctx (its lane,
 * job/setup.c), which only that thread touches, without the lock.  Plain
 * memory that peers write (control region, inbox, replica) is read with
 * acquire loads of the word that guards it.
 *
 * Failures: no code here exits the process.  The thread that detects a
 * fatal error calls frr_rt_fail() (logs once, records the error) and
 * returns it; every wait loop of every thread checks frr_rt_failed() and
 * unwinds, and the job returns the error.
 */
#ifndef FLEXRR_RUNTIME_CORE_H
#define FLEXRR_RUNTIME_CORE_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrr/base.h"
#include "flexrr/bootstrap.h"
#include "flexrr/flexrr.h"
#include "flexrr/transport.h"
#include "mode.h"

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
/* the app's globals of this many recent clocks, per rank (core/globals.c):
 * clock c reads those of c - slack - 1, and the slot is reused only once
 * every item of a clock that reads it has run */
#define FRR_RT_GLOBALS_RING 32
/* What gives a peer longer at the job's start and end (connects,
 * collectives): the words of every message that timed out there. */
#define FRR_RT_TIMEOUT_HINT "raise --timeout if the machine is busy"

/* helpers per worker when --rr-group is not given (at most W - 1) */
#define FRR_RR_GROUP_DEFAULT 4

/* RapidReassignment's options (rr/ reads them; --stragglers and --trace
 * serve every mode). */
struct frr_rr_opts {
	int group_size;		/* --rr-group G        (default 4) */
	double threshold;	/* --rr-threshold F    (0.2 of a clock) */
	double min_share;	/* --rr-min-share F    (0.05) */
	double link_weight;	/* --rr-link-weight K  (0) */
	int report_interval;	/* --rr-report N: progress checks per clock
				   (16) */
	int max_helpers;	/* --rr-max-helpers N  (0 = group size) */
	const char *stragglers; /* --stragglers SPEC   (NULL = none) */
	const char *trace_path; /* --trace FILE        (NULL = none) */
};

/*
 * What a rank's job runs with: launch/'s option table fills the one in its
 * run options (launch.h); a program that brings up its ranks itself (the
 * runtime's tests) fills one directly.  The runtime never sees the command
 * line or launch/'s option struct.
 */
struct frr_rt_params {
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
	/* every thread sends through the rank's one ctx under tp_lock, not
	 * its own (job/setup.c) */
	int shared_tp;
	/* --no-standby: no rank keeps the standby copy of the shard of the
	 * rank before it (table/hold.c) */
	int no_standby;
	/* --rr-rows-from-start: a rank's copy of the rows of the partitions
	 * its workers may help is pushed from the start, not from its first
	 * read of one (table/hold.c "on use") */
	int rr_rows_from_start;
	/* --lanes: the rank's threads share this many lanes, thread t the
	 * lane t % lanes (job/setup.c); 0: one per thread */
	int lanes;
	/* under SSP a shard applies each batch as it arrives, not a whole
	 * clock at once (table/shard.c "Eager") */
	int eager;
	int allow_nonfinite; /* a nan objective runs on */
	/* mode backup: workers a clock does not wait for; -1 = the default,
	 * 5% of the workers, at least 1 */
	int backups;
	/* mode lb-bsp: clocks the speed prediction averages; <= 0: the
	 * default (FRR_LB_HISTORY_DEFAULT) */
	int lb_history;
	/* rank among the job's ranks on this node, from the launcher
	 * (bootstrap's frr_launcher_env); -1 = the rank (a local job) */
	int local_rank;
	const char *metrics_path;
	const char *save_path;
	const char *load_path;
	int timeout_ms; /* a wait with no progress for this long fails */
	int dead_ms;	/* a peer silent this long is declared dead */
	/* the collectives' wait while the input loads, which one rank may
	 * do slower than another without a hang (job/loading.c) */
	int load_ms;
	/* worker delay_worker sleeps delay_factor x its loop time every
	 * delay_every-th clock (bench; --stragglers is richer) */
	int delay_worker;
	int delay_every;
	double delay_factor;
	struct frr_rr_opts rr; /* also --stragglers, --trace (any mode) */
	const struct frr_app_ops *app;
	int app_argc;
	char **app_argv;
	/* checkpoints every ckpt_every clocks or ckpt_every_s seconds into
	 * ckpt_dir, resume from resume_dir (job/checkpoint.h) */
	const char *ckpt_dir;
	int ckpt_every;
	double ckpt_every_s;
	const char *resume_dir;
	/* a job the survivors of a lost rank carry on (launch/recover.c):
	 * what happened, for the summary line ("lost=1 epoch=1", and the lost
	 * ranks "1,3"; the job adds the clock it resumed from), and when its
	 * previous run failed (frr_now_s), for recovery_s; NULL / 0: not a
	 * recovery */
	const char *recovered, *lost_ranks;
	double recover_t0;
	/* a recovered job: the highest app clock the previous run had
	 * started on this process (-1: none); the job takes the highest of
	 * every rank's, and the summary counts the clocks since the
	 * checkpoint as run again */
	int failed_clock;
	/* the recovery epoch this job runs in (0: the first run); a rank's
	 * checkpoint files of epoch E > 0 carry ".eE" in their names */
	unsigned epoch;
	/* what a job tells launch/recover.c as it runs; NULL: nobody asks */
	struct frr_rt_watch *watch;
};

/*
 * A job launch/recover.c may carry on after a loss.  A hung process (alive,
 * its threads stuck) gives its launcher no signal to see: its peers tell
 * the watcher, at once, of a peer they found alive but silent for the
 * --dead-timeout.  The workers record the highest app clock they started,
 * which the next epoch reports as run again.
 */
struct frr_rt_watch {
	void (*peer_hung)(void *arg, int rank);
	/* 0 once the others carried on without this rank (its epoch is
	 * over): its checkpoint writes are refused from then on */
	int (*current)(void *arg);
	void *arg;
	atomic_int clock; /* -1 before the first clock */
};

/* The job as rr sees it: worker w = rank * threads + thread; partition w
 * is worker w's own. */
struct frr_rt_shape {
	int rank;
	int nranks;
	int threads;
	int nworkers;
	int slack;
	uint64_t seed;
};

/* lb-bsp's ring of per-item times: clocks c - history .. c - 1 are read
 * at clock c's start while clock c's finals may land (> 2 x the max). */
#define FRR_LB_RING 160

/* ---- progress word ------------------------------------------------------ */
/* One 64-bit word per worker in the control region: [63:44] clock + 1 (0 =
 * never published), [43:22] done, [21:0] total, item counts in units of
 * 2^prog_shift so any list fits 22 bits. */
#define FRR_PROG_FIELD_BITS 22
#define FRR_PROG_FIELD_MAX ((1ull << FRR_PROG_FIELD_BITS) - 1)
struct frr_progress {
	int clock;	/* -1 = nothing published yet */
	uint64_t done;	/* items done in this clock (units of 2^shift) */
	uint64_t total; /* items in the list now (units of 2^shift) */
};

static inline uint64_t frr_prog_pack(int clock, uint64_t done, uint64_t total)
{
	return ((uint64_t)(clock + 1) << 44) |
	       ((done & FRR_PROG_FIELD_MAX) << 22) |
	       (total & FRR_PROG_FIELD_MAX);
}

static inline struct frr_progress frr_prog_unpack(uint64_t v)
{
	struct frr_progress p = {
		.clock = (int)(v >> 44) - 1,
		.done = (v >> 22) & FRR_PROG_FIELD_MAX,
		.total = v & FRR_PROG_FIELD_MAX,
	};
	return p;
}

/* The unit of a word's counts for lists of up to max items: 2^shift items
 * (0 below 2^22), so a partition of any size fits the field. */
static inline int frr_prog_shift(uint64_t max)
{
	int s = 0;

	while ((max >> s) > FRR_PROG_FIELD_MAX)
		s++;
	return s;
}

/* A count read from a word (units of 2^shift), back in items of a list of
 * n: all of it where the word says all (n >> shift units), else rounded
 * down to the unit. */
static inline uint64_t frr_prog_items(uint64_t units, uint64_t n, int shift)
{
	return units == n >> shift ? n : units << shift;
}

/* Each floor's state (its own header defines it). */
struct frr_tables;   /* table/table.h */
struct frr_workers;  /* worker/worker.h */
struct frr_evals;    /* eval/eval.h */
struct frr_jobstate; /* job/job.h */

struct frr_rt {
	const struct frr_rt_params *prm;
	struct frr_job_info job;   /* the apps' view */
	struct frr_rt_shape shape; /* rr's view */
	const struct frr_app_ops *app;
	void *app_state;
	struct frr_oob *oob;
	int P, T, W, rank;
	int eff_slack; /* slack used for waits (async: window) */
	int eager;     /* --eager (ssp, flexrr, async): table/shard.c */
	/* mode backup: the clock ends when W - backups workers finished it
	 * (0: off; table/inbox.c counts, worker/ cuts) */
	int backups;
	/* mode lb-bsp (0: off): the history length, and every worker's
	 * per-item time of its recent clocks as this rank's server drained
	 * them from the final batches (table/inbox.c), [w * FRR_LB_RING +
	 * clock % FRR_LB_RING] = clock << 32 | float bits; rr/lb.c plans */
	int lb_history;
	_Atomic uint64_t *lb_item;
	int rr_reassign; /* flexrr and rr modes: RapidReassignment runs */
	int flush_ms;	 /* data-path flush timeout: --dead-timeout / 3 */
	int loading;	 /* the input loads: collectives wait prm->load_ms */
	double t0;
	/* the app's clock of internal clock 0 (a resumed run counts its
	 * clocks from 0 like any run) */
	int clock_base;
	int nglob; /* the app's per-clock globals (core/globals.c), 0: none */

	/* control region layout (byte offsets; job/setup.c) */
	size_t off_prog, off_done, off_push, off_hb, off_stop, off_notice,
	    off_stats, off_ack, off_mbox, off_mack, off_mstage, off_pullreq,
	    off_pullack, off_fin, stats_rec, off_glob, glob_rec, off_eapp;
	size_t ctl_len;

	pthread_mutex_t tp_lock;
	struct frr_tp_ctx *tp;
	struct frr_tp_ep **eps;
	struct frr_tp_ep **lane_in; /* the peers' lanes accepted here */
	int nlane_in;
	/* the lanes this rank opened (<= T), and with fewer lanes than
	 * threads a lock per lane for the threads that share it */
	int nlanes;
	pthread_mutex_t *lane_locks;
	struct frr_tp_mr *ctl;
	struct frr_tp_rmr **rctl;
	uint8_t *ctlp;

	int prog_shift;
	/* progress words by need (rr/seam.c frr_rt_progress_reader): per
	 * local worker the ranks that read its word ([t * P], prog_nsubs[t]
	 * of them); per worker, whether this rank reads it */
	int *prog_subs, *prog_nsubs;
	uint8_t *prog_read;
	/* [T]: where worker thread t posts its progress words (job/setup.c):
	 * its lane, so that they do not wait for tp_lock, which the server
	 * holds while it posts a clock's push, or without lanes the shared
	 * context: the endpoints to every rank, the ranks' control regions
	 * imported on them, and the lock to take (NULL: the thread's own) */
	struct frr_prog_lane {
		struct frr_tp_ep **ep;
		struct frr_tp_rmr **ctl;
		pthread_mutex_t *lock;
	} * prog_lane;

	_Atomic int eval_done; /* clocks evaluated locally */
	_Atomic int end_clock; /* clocks the job runs */
	_Atomic int failed;    /* 0, or the job's error (negative errno) */
	/* told first when the job fails (rank: the peer that failed, -1:
	 * some other cause), before any thread can see the failure: rr
	 * records it so each worker names its helpers as it unwinds */
	void (*on_fail)(struct frr_rt *rt, int rank, const char *what);

	/* the floors' state */
	struct frr_tables *tb;
	struct frr_workers *ws;
	struct frr_evals *ev;
	struct frr_jobstate *js;

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
	/* env FLEXRR_TEST_DIE=R:C:FILE[,R:C:FILE...]: rank R SIGKILLs its
	 * process as its first worker starts app clock C, once (only the run
	 * that creates FILE): the restart and recovery tests' dead ranks;
	 * with FLEXRR_TEST_DIE_STOP set it SIGSTOPs instead (a rank that
	 * stops answering), with FLEXRR_TEST_DIE_HANG its threads stop
	 * (test_hung; test_die_sig 0) */
	int test_die_n, test_die_sig;
	/* FLEXRR_TEST_DIE_HANG set: the dying rank's threads stop instead
	 * (no signal its launcher could see): its worker sleeps for ever
	 * and its server stops at its next heartbeat */
	atomic_int test_hung;
	struct frr_test_die {
		int rank, clock;
		const char *file;
	} test_die[4];
	char test_die_buf[512];
};

/* An app built against an older flexrr.h has a shorter frr_app_ops: read a
 * field only when its size covers it. */
#define FRR_APP_HAS(a, f) \
	((a)->size >= offsetof(struct frr_app_ops, f) + sizeof((a)->f))

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

/* The clock the app sees (and checkpoints name) of internal clock c. */
static inline int frr_rt_app_clock(const struct frr_rt *rt, int c)
{
	return c + rt->clock_base;
}

static inline double frr_rt_clock_now(void) /* base's clock, old name */
{
	return frr_now_s();
}

/* 0 while the job runs, else its error (negative errno). */
static inline int frr_rt_failed(const struct frr_rt *rt)
{
	return atomic_load_explicit(&rt->failed, memory_order_acquire);
}

/* ---- control words: 8-byte counters in the ctl region, written by peers
 * with counter writes (G2) and read with acquire loads ---- */
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

/* The clocks the job runs, as this rank knows it. */
static inline int frr_rt_stop_clock(const struct frr_rt *rt)
{
	return atomic_load_explicit(&rt->end_clock, memory_order_acquire);
}

/* The earliest end any rank announced (its stop word). */
static inline int frr_rt_cur_end(const struct frr_rt *rt)
{
	int end = frr_rt_stop_clock(rt);
	uint64_t stop = frr_tp_load_u64(ctl_u64(rt, rt->off_stop));

	/* remote-written: only ever an earlier end than ours */
	return stop && stop < (uint64_t)end ? (int)stop : end;
}

/* Latest progress word of worker v, as seen on this rank. */
static inline struct frr_progress frr_rt_progress(const struct frr_rt *rt,
						  int v)
{
	return frr_prog_unpack(
	    frr_tp_load_u64(ctl_u64(rt, rt->off_prog + (size_t)v * 64)));
}

/* ---- core/fail.c: failing the job, dead peers ---- */
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

/* ---- core/oob.c: the runtime's collectives over the bootstrap ---- */
/* frr_oob_allgather / _barrier within frr_rt_oob_ms; a failure is logged
 * once, naming `what` (e.g. "exchanging memory plans") and what to do. */
int frr_rt_allgather(struct frr_rt *rt, const char *what, const void *mine,
		     size_t len, void *all);
int frr_rt_barrier(struct frr_rt *rt, const char *what);
/* How long a collective waits: --load-timeout while the input loads, else
 * --timeout. */
int frr_rt_oob_ms(const struct frr_rt *rt);
/* The same report for a collective the caller runs itself (another wait,
 * frr_oob_allgatherv).  Returns err. */
int frr_rt_oob_failed(const struct frr_rt *rt, const char *what, int err,
		      int wait_ms);

/* ---- core/ctl.c: control words and flushes (under tp_lock) ---- */
/* A transport call that failed on the data path means a peer is gone. */
int frr_rt_tp_check(struct frr_rt *rt, int err, int peer, const char *what);
/* Write u64 into every peer's control region at off, then set it locally. */
int frr_rt_ctl_broadcast(struct frr_rt *rt, size_t off, uint64_t v);
int frr_rt_flush_all(struct frr_rt *rt, int timeout_ms);
/* Publish worker w's progress word (clock, done, total in items) to this
 * rank and the ranks that read it: 0 or the job's error. */
int frr_rt_progress_publish(struct frr_rt *rt, int w, int clock, uint64_t done,
			    uint64_t total);

/* ---- core/stall.c: the stall detector of every wait ---- */
/* The deadline restarts whenever any worker's progress word changes, so
 * long clocks are not mistaken for hangs. */
struct frr_stall {
	uint64_t sig;
	double since;
};
void frr_rt_stall_init(const struct frr_rt *rt, struct frr_stall *s);
/* 1 when nobody made progress for --timeout. */
int frr_rt_stalled(const struct frr_rt *rt, struct frr_stall *s);
/* This rank's workers' progress words, hashed (the heartbeat's
 * aggregate). */
uint64_t frr_rt_local_sig(const struct frr_rt *rt);

/* ---- core/globals.c: the app's per-clock globals ---- */
/* Check the app's nglobals / globals and size the ring (before layout). */
int frr_rt_globals_init(struct frr_rt *rt);
/* Rank 0, after clock_global(c): the app's globals of c to every rank. */
int frr_rt_globals_publish(struct frr_rt *rt, int c, const double *stats);
/* The app clock whose globals internal clock c reads (-1: none yet). */
int frr_rt_globals_from(const struct frr_rt *rt, int c);
/* 1 when the globals internal clock c reads are on this rank (or the app
 * has none), 0 not yet; < 0 the job's error. */
int frr_rt_globals_ready(struct frr_rt *rt, int c);
/* This rank's copy of app clock ac's globals (checkpoints): 0, or
 * -ENOENT if it holds none of ac; put stores them (resume). */
int frr_rt_globals_get(const struct frr_rt *rt, int ac, double *out);
void frr_rt_globals_put(struct frr_rt *rt, int ac, const double *in);

#endif /* FLEXRR_RUNTIME_CORE_H */
