/* SPDX-License-Identifier: MIT */
/*
 * flexrr runtime: the API apps program against.
 *
 * An app declares parameter tables and the size of each worker's partition
 * and hands the runtime callbacks; the runtime owns the loop over clocks and
 * over work items, so that it can hand the tail of a slow worker's list to a
 * helper (RapidReassignment) without the app knowing.  See
 * docs/runtime.md and ../docs/flexrr-protocol.md (copied in docs/protocol.md).
 *
 * Job model: P processes (ranks) x T worker threads; worker id
 * w = rank * T + thread.  Each process hosts one shard of every table
 * (row r lives on rank r % P).
 *
 * Determinism: an item's result must depend only on (seed, owner worker,
 * clock, item) and the parameters it reads, never on which thread runs it:
 * use frr_item_rng() for randomness.
 */
#ifndef FLEXRR_FLEXRR_H
#define FLEXRR_FLEXRR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrr/base.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

enum frr_mode {
	FRR_MODE_BSP = 0,    /* slack 0 */
	FRR_MODE_SSP = 1,    /* slack s */
	FRR_MODE_ASYNC = 2,  /* no staleness bound */
	FRR_MODE_FLEXRR = 3, /* SSP + RapidReassignment */
	FRR_MODE_RR = 4,     /* BSP + RapidReassignment */
};

enum frr_update_rule {
	FRR_UPDATE_ADD = 0, /* row += delta */
	FRR_UPDATE_ADAGRAD =
	    1, /* row -= lr * g / sqrt(eps + sum g^2); delta = gradient g */
};

#define FRR_MAX_TABLES 8
#define FRR_MAX_STATS 16

struct frr_table_spec {
	const char *name;
	uint64_t rows;
	uint32_t cols;
	enum frr_update_rule rule;
	float lr;  /* AdaGrad step size */
	float eps; /* AdaGrad epsilon */
	/* Initial value of a row, called by the owning shard; NULL = zeros.
	 * Must be deterministic in (table, row). */
	void (*init_row)(void *app, int table, uint64_t row, float *out,
			 uint32_t cols);
};

struct frr_job_info {
	int rank;
	int nranks;
	int threads;  /* worker threads per process */
	int nworkers; /* nranks * threads */
	enum frr_mode mode;
	int slack;
	uint64_t seed;
};

struct frr_wctx;     /* a worker thread's view while processing items */
struct frr_eval_ctx; /* a process's view between clocks */

struct frr_app_ops {
	size_t size; /* sizeof(struct frr_app_ops) */
	const char *name;
	const char *summary; /* one line for `flexrr help` */
	void (*usage)(FILE *out);

	/* Parse the app's options (argv[0] is the app name) and create its
	 * state; called once on every rank.  -EINVAL with a message on bad
	 * options. */
	int (*create)(const struct frr_job_info *job, int argc, char **argv,
		      void **app);
	void (*destroy)(void *app);

	/* Declare tables: fill specs[0..n) and return n (<= max). */
	int (*tables)(void *app, struct frr_table_spec *specs, int max);

	/* Load worker w's input partition and return its item count.  Called
	 * for this rank's own workers and, with RapidReassignment, for every
	 * worker this rank helps (read-only replica). */
	int (*load_partition)(void *app, int worker, uint64_t *nitems);

	/* Optional per-item mutable state (e.g. LDA token topics), kept by the
	 * runtime so it stays correct when a helper processes the item:
	 * size in bytes of item i of worker w (0 = none), and its initial
	 * value. */
	size_t (*item_state_size)(void *app, int worker, uint64_t item);
	void (*item_state_init)(void *app, int worker, uint64_t item,
				void *state);

	/* Process items [begin, end) of worker 'owner's partition in 'clock'.
	 * Called from a worker thread, possibly one that is not 'owner'
	 * (a helper).  Reads and updates go through wc. */
	int (*process)(void *app, struct frr_wctx *wc, int owner, int clock,
		       uint64_t begin, uint64_t end);

	/* After every clock, on every rank: may read tables and add
	 * evaluation stats (e.g. held-out error of this rank's test share). */
	int (*clock_local)(void *app, struct frr_eval_ctx *ec, int clock);
	/* After every clock, on rank 0, with stats summed over all workers
	 * and ranks: set the objective and a metrics string such as
	 * "train_rmse=0.91 test_rmse=0.95" (the summary line ends with it). */
	int (*clock_global)(void *app, const double *stats, int nstats,
			    int clock, double *objective, char *metrics,
			    size_t metrics_len);

	/* Optional: write / read the model (rank 0 gathers rows). */
	int (*save)(void *app, struct frr_eval_ctx *ec, const char *path);
	int (*load)(void *app, struct frr_eval_ctx *ec, const char *path);

	int nstats;   /* stats slots used (<= FRR_MAX_STATS) */
	int maximize; /* --target V is reached when objective >= V (else <=) */
};

/* ---- worker-side calls (inside process()) ----------------------------- */
/* SSP read: a row reflecting every update of clocks <= clock - slack - 1.
 * The pointer stays valid until process() returns; do not write to it.
 * With slack > 0 (and async) the row may be overwritten by a newer version
 * while you read it (values only get newer, never older than the bound):
 * copy it first if one computation needs a consistent snapshot.  In BSP it
 * is stable for the whole clock.  Your own updates are not in it until the
 * clock's batch is applied (no read-my-writes). */
const float *frr_row_read(struct frr_wctx *wc, int table, uint64_t row);
/* Add delta[0..cols) to a row (batched, flushed at clock end). */
void frr_row_update(struct frr_wctx *wc, int table, uint64_t row,
		    const float *delta);
/* Add delta to one cell. */
void frr_cell_update(struct frr_wctx *wc, int table, uint64_t row, uint32_t col,
		     float delta);
/* Accumulate into per-clock stat slot idx (summed over workers). */
void frr_stat_add(struct frr_wctx *wc, int idx, double v);
/* Mutable state of item 'item' of the owner being processed (NULL if none). */
void *frr_item_state(struct frr_wctx *wc, uint64_t item);
/* Deterministic random stream for (seed, owner, clock, item): same result
 * whichever thread processes the item.  Returns a 64-bit seed for an
 * app-side generator (e.g. frr_rng_seed()). */
uint64_t frr_item_rng(struct frr_wctx *wc, uint64_t item);
/* Worker running this call, and the job. */
int frr_wctx_worker(const struct frr_wctx *wc);
const struct frr_job_info *frr_wctx_job(const struct frr_wctx *wc);

/* ---- process-side calls (clock_local, save, load) --------------------- */
/* Copy the freshest available value of a row into out[0..cols). */
int frr_eval_row_read(struct frr_eval_ctx *ec, int table, uint64_t row,
		      float *out);
/* Overwrite a row (load): only rows this rank owns, else -EINVAL. */
int frr_eval_row_write(struct frr_eval_ctx *ec, int table, uint64_t row,
		       const float *in);
void frr_eval_stat_add(struct frr_eval_ctx *ec, int idx, double v);
const struct frr_job_info *frr_eval_job(const struct frr_eval_ctx *ec);

/* frr_rng_* (xoshiro256**, splitmix64 seeding): flexrr/base.h */

/* Running a job with a program's own table of apps: flexrr/job.h */

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_FLEXRR_H */
