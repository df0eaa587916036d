/* SPDX-License-Identifier: MIT */
/*
 * flexrr: the API apps program against.
 *
 * An app declares parameter tables (rows of floats) and splits its input
 * into data partitions of work items; the runtime runs every partition's
 * items once per clock and owns everything else: where rows are stored,
 * which thread runs which items (RapidReassignment may move the tail of a
 * slow partition's list to another thread, on this or another process),
 * caching, staleness (BSP/SSP/async), batching updates and failures.  An
 * app sees rows, items, clocks and stats; the same item callback runs
 * whichever thread processes the item.  docs/runtime.md has the design,
 * docs/writing-an-app.md a walk-through.
 *
 * Determinism: an item's result must depend only on (seed, partition,
 * clock, item) and the rows it reads, never on which thread runs it: use
 * frr_item_rng() for randomness, frr_item_state() for per-item state.
 *
 * Threads: process() runs on worker threads, concurrently for different
 * partitions (and, with RapidReassignment, for different item ranges of one
 * partition): it may read the app state but must not write shared state
 * without its own synchronisation (per-thread scratch: frr_scratch()).
 * Every other callback runs on the process's main thread: create, share,
 * gather, tables, load_partition, item_state_* and load before the first clock;
 * save after the last; clock_local and clock_global after each clock, possibly
 * while worker threads already run later clocks (SSP), so they must not write
 * what process() reads.
 *
 * Errors: callbacks return 0 or a negative errno; any error fails the job
 * (every process stops, the run call returns a negative errno); log what
 * went wrong first (flexrr/log.h).
 */
#ifndef FLEXRR_FLEXRR_H
#define FLEXRR_FLEXRR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flexrr/base.h"
#include "flexrr/opt.h"

#ifdef __cplusplus
extern "C" {
#endif
FRR_API_BEGIN

enum frr_update_rule {
	/* row += change; reads show the worker's own changes at once */
	FRR_UPDATE_ADD = 0,
	/* row -= lr * g / sqrt(eps + sum g^2), g = the sum of the gradients
	 * given to frr_row_update in a batch.  The step is taken by the table,
	 * so reads do not show the worker's own gradients; frr_row_write is
	 * not allowed. */
	FRR_UPDATE_ADAGRAD = 1,
	/* row = the value written: for a row written by one item per clock
	 * (a vertex's rank, an item's own result).  The app writes values
	 * (frr_row_write; frr_row_update adds to the cached value) and the
	 * table takes the value the batch ends with; rows only read are not
	 * pushed.  If several batches write one row in a clock, the last in
	 * the runtime's fixed apply order wins: by partition (the highest
	 * index last), within a partition its worker's run before its
	 * helpers' runs, these by helper worker id (deterministic under BSP
	 * and RR; docs/writing-an-app.md).  Read-my-writes across clocks as
	 * on ADD tables: the worker's own pushed-but-unapplied value replaces
	 * the applied one.  combine must be FRR_COMBINE_SUM (the default). */
	FRR_UPDATE_SET = 2,
};

/* frr_table_spec.flags */
enum frr_table_flags {
	/*
	 * Read-my-writes across clocks is the default on every ADD and SET
	 * table (SET: the pushed value replaces the applied one):
	 * within a clock a worker reads its own changes, and a row fetched in
	 * a later clock also includes the changes the worker pushed in earlier
	 * clocks that the table has not applied yet (under SSP a read may
	 * otherwise lack its own last slack clocks: SGD that re-applies its
	 * own steps on a stale copy of its own row overshoots and diverges).
	 * Exact (never counted twice), also while the table is being updated.
	 * Updates made for this partition by another thread are seen once
	 * applied.  Cost: a worker keeps what it pushed in its last slack
	 * clocks (nothing in BSP).  AdaGrad tables cannot add a pending
	 * gradient to a value: they read applied clocks only.
	 *
	 * This flag now says more: the table's rows are written mostly by one
	 * partition (MF's user rows).  The memory plan then counts a worker's
	 * share of the rows, not all of them, and a worker whose previous
	 * clock was partly run by helpers waits for that clock to be applied,
	 * so that it sees their changes to its rows too.
	 */
	FRR_TABLE_SEE_OWN_PENDING = 1u << 0,
	/* 1u << 1 was FRR_TABLE_SCALE_BY_SHARE: combine = FRR_COMBINE_MEAN */
	/*
	 * Opt out of read-my-writes across clocks: a fetch shows applied
	 * clocks only (and this clock's own changes).  For a table whose
	 * reads must not see the worker's earlier pushes, or to save the
	 * memory of keeping them (slack x the rows a worker writes).
	 */
	FRR_TABLE_NO_OWN_PENDING = 1u << 2,
	/*
	 * ADD tables: keep sums compensated (Kahan) where they accumulate,
	 * in the thread's batch (frr_row_update, frr_cell_update) and at
	 * the row's shard, so a value that takes thousands of small changes
	 * stays within about one float rounding of their exact sum instead
	 * of drifting by one rounding per change (a probability mass, a
	 * count of millions).  Writes through frr_row_write are the app's
	 * own arithmetic and are not compensated.  Cost: one float per
	 * cell of the shard and of each row a batch touches, and three
	 * more float operations per update.
	 */
	FRR_TABLE_COMPENSATED = 1u << 3,
};

/*
 * frr_table_spec.combine (ADD tables): how the changes the partitions make
 * to a row in one clock add up.  A partition's change is its items' net
 * change to the row (value minus the value fetched: the app writes values,
 * never deltas).  RapidReassignment may run a partition's items in several
 * runs (its worker's head, helpers' tails), each starting from the clock's
 * rows; the rule says what such a split means, so no app has to know.
 */
enum frr_combine {
	/* The sum of the partitions' changes (and of a split partition's
	 * runs): the classic parameter server, for changes that grow with
	 * the items run (counts, gradient steps small enough to add up). */
	FRR_COMBINE_SUM = 0,
	/* The mean over the partitions, each weighing 1/nparts however
	 * reassignment split it (a run weighs by its share of the
	 * partition's items).  For local runs that each move a row most of
	 * the way to their data's optimum (local SGD with parameter
	 * averaging: mlr): their sum would overshoot nparts-fold, and a
	 * split partition would count once per run. */
	FRR_COMBINE_MEAN = 1,
	/* The mean over the partitions of each partition's change, a split
	 * partition's runs summed: the partitions are averaged, but within
	 * one the items' changes add up as under SUM (mf's item rows). */
	FRR_COMBINE_MEAN_OF_SUMS = 2,
};

#define FRR_MAX_TABLES 8
#define FRR_MAX_STATS 16
#define FRR_MAX_GLOBALS 16

struct frr_table_spec {
	const char *name;
	uint64_t rows;
	uint32_t cols;
	enum frr_update_rule rule;
	float lr;	/* AdaGrad step size */
	float eps;	/* AdaGrad epsilon */
	uint32_t flags; /* enum frr_table_flags */
	/* ADD tables: how the partitions' changes of a clock combine (enum
	 * frr_combine; 0 = FRR_COMBINE_SUM).  Reads in the same clock show
	 * the worker's own change as made, not combined.  (Replaces
	 * push_scale, in the same place: 1 / nparts is
	 * FRR_COMBINE_MEAN_OF_SUMS, with FRR_TABLE_SCALE_BY_SHARE
	 * FRR_COMBINE_MEAN.) */
	enum frr_combine combine;
	/* Initial value of a row; NULL = zeros.  Deterministic in (table,
	 * row); called on the process that stores the row. */
	void (*init_row)(void *app, int table, uint64_t row, float *out,
			 uint32_t cols);
};

struct frr_job_info {
	int nparts; /* data partitions: load_partition gets 0 .. nparts-1 */
	int leader; /* 1 on exactly one process of the job (log once) */
	/* The staleness bound of reads: a row fetched in clock c holds every
	 * update of clocks <= c - slack - 1 (0 under BSP, --slack under SSP,
	 * the window of 16 under async).  The run's mode (bsp, ssp, async,
	 * flexrr, rr) is the runtime's business: an app's results must not
	 * depend on it beyond what slack says. */
	int slack;
	uint64_t seed;
};

struct frr_ctx;	     /* the item context: process() */
struct frr_eval_ctx; /* a process's context between clocks */

struct frr_rowset; /* part_rows: the rows a partition uses */

struct frr_app_ops {
	size_t size; /* sizeof(struct frr_app_ops) */
	const char *name;
	const char *summary; /* one line for `flexrr help` */
	void (*usage)(FILE *out);

	/* Parse the app's options (argv[0] is the app name) and create its
	 * state; called once on every process (the leader first: only its
	 * messages are shown).  -EINVAL with a message on bad options. */
	int (*create)(const struct frr_job_info *job, int argc, char **argv,
		      void **app);
	void (*destroy)(void *app);

	/* Declare tables: fill specs[0..n) and return n (<= max). */
	int (*tables)(void *app, struct frr_table_spec *specs, int max);

	/* Load data partition `part` (0 .. nparts-1): its item count and any
	 * pointer the app wants back as frr_part() while processing it (the
	 * app owns it; free it in destroy).  Called once per partition a
	 * process runs or may run items of (RapidReassignment loads some of
	 * other processes' partitions read-only), before the first clock.
	 * Every partition needs at least one item. */
	int (*load_partition)(void *app, int part, uint64_t *nitems,
			      void **data);

	/* Optional per-item mutable state (e.g. LDA token topics), kept by the
	 * runtime so it is current wherever the item runs: size in bytes of
	 * item i of partition `part` (0 = none), and its initial value. */
	size_t (*item_state_size)(void *app, int part, uint64_t item);
	void (*item_state_init)(void *app, int part, uint64_t item,
				void *state);

	/* Optional per-thread scratch: frr_scratch() returns scratch_size
	 * zeroed bytes (64-byte aligned, on the thread's NUMA node) owned by
	 * the calling thread.  thread_init runs on each worker thread before
	 * its first process() (it may allocate into the scratch), thread_fini
	 * after its last. */
	size_t scratch_size;
	int (*thread_init)(void *app, void *scratch);
	void (*thread_fini)(void *app, void *scratch);

	/* Process items [begin, end) of the partition frr_part(c) in clock
	 * frr_clock(c).  Rows, updates, item state, randomness and stats go
	 * through c.  A partition's items of one clock may be split over
	 * several calls and threads. */
	int (*process)(void *app, struct frr_ctx *c, uint64_t begin,
		       uint64_t end);

	/* After every clock, on every process: may read tables and add
	 * evaluation stats (e.g. the held-out error of the partitions this
	 * process runs, frr_eval_nlocal()). */
	int (*clock_local)(void *app, struct frr_eval_ctx *ec, int clock);
	/* After every clock, on one process, with stats summed over all
	 * partitions and processes: set the objective and a metrics string
	 * such as "train_rmse=0.91 test_rmse=0.95" (the summary line ends
	 * with it). */
	int (*clock_global)(void *app, const double *stats, int nstats,
			    int clock, double *objective, char *metrics,
			    size_t metrics_len);

	/* Optional: write the model (on the leader, after the last clock;
	 * read rows with frr_eval_row_read) / read it (on every process,
	 * before the first clock: frr_eval_row_write every row). */
	int (*save)(void *app, struct frr_eval_ctx *ec, const char *path);
	int (*load)(void *app, struct frr_eval_ctx *ec, const char *path);

	int nstats;   /* stats slots used (<= FRR_MAX_STATS) */
	int maximize; /* --target V is reached when objective >= V (else <=) */

	/*
	 * Optional, both or neither: an input read in pieces (e.g. byte
	 * ranges of a file) instead of whole by every process.  After create
	 * and before tables, on every process: share() reads piece k of n
	 * (every piece is read by exactly one process) and returns what the
	 * others need of it as a blob (the app's memory; it may free it once
	 * gather returns); then gather() gets all n blobs, blobs[k] from
	 * piece k, as the runtime's copies (valid until gather returns).
	 * Blobs come from other processes: check sizes and counts before
	 * use.  A process may wait for its peers' pieces for its --timeout
	 * plus four times as long as its own share() took.
	 */
	int (*share)(void *app, int k, int n, const void **blob, size_t *len);
	int (*gather)(void *app, const void *const *blobs, const size_t *lens,
		      int n);

	/* Optional: check the app's options (argv as for create) before the
	 * job starts, reading no input: 0, or -EINVAL with a message (a usage
	 * error: frr_run_main returns 2).  create still parses them. */
	int (*check_args)(int argc, char **argv);
	/*
	 * Optional, both or neither (appended: the runtime reads them only
	 * when size covers them): state the app keeps across clocks outside
	 * tables and item state, for --checkpoint / --resume.  Most apps need
	 * none (docs/runtime.md "Checkpoints").  checkpoint_save writes this
	 * process's state as it is after `clock` (after clock_local and, on
	 * the leader, clock_global of it) into f, on every process;
	 * checkpoint_load reads it back on the same process of a resumed job,
	 * after load_partition and before the first clock, which is
	 * clock + 1.  Both return 0 or a negative errno (say what failed).
	 */
	int (*checkpoint_save)(void *app, FILE *f, int clock);
	int (*checkpoint_load)(void *app, FILE *f, int clock);
	/*
	 * Optional (appended, read only when size covers it): the rows that
	 * running partition `part` may read or write, and that this
	 * process's clock_local may read for it, added with frr_rows_add.
	 * Called before the first clock for every partition a process holds
	 * (its own, and those RapidReassignment may run there).  A process
	 * then keeps a copy of only these rows of other processes' shards
	 * (plus one other process's shard, the standby copy), so its memory
	 * and the bytes it receives follow what it reads.  A row read that
	 * was not declared is still served right: fetched from its shard at
	 * its first use (a round trip, counted as `pulls` in --metrics) and
	 * kept.  Without it, a process keeps every row.  A row written must
	 * be declared by every partition that writes it: under SSP a row
	 * exactly one partition declares is added to its shard in place by
	 * that partition's worker, and a batch of another partition that
	 * writes it fails the job (docs/runtime.md "Rows only their writer
	 * declares").  0 or a negative errno.
	 */
	int (*part_rows)(void *app, int part, struct frr_rowset *rs);
	/*
	 * Optional (appended, read only when size covers it): the app's
	 * options as a table (flexrr/opt.h).  Where usage or check_args is
	 * NULL the runtime uses the table instead: --help printed from it,
	 * the options checked by frr_opt_check before the job starts.  It
	 * also lets tools list an app's options and defaults.
	 */
	const struct frr_opt_set *opts;
	/*
	 * Optional (appended, read only when size covers it): save as
	 * above, told the last clock run (counting from 0 as the callbacks
	 * do; earlier than --clocks - 1 when --target stopped the job, later
	 * counts after --resume).  Used instead of save when set.
	 */
	int (*save_at)(void *app, struct frr_eval_ctx *ec, const char *path,
		       int clock);
	/*
	 * Optional, both or neither (appended, read only when size covers
	 * them): a small vector the leader sets after each clock and every
	 * process() call reads (a step size, a total mass, a threshold):
	 * nglobals doubles (1 .. FRR_MAX_GLOBALS).  globals() runs on the
	 * leader right after clock_global(clock), with the same summed
	 * stats; out[0..nglobals) holds the previous clock's values (zeros
	 * at first) and is what the app sets.  Process() in clock c reads
	 * the values set after clock c - slack - 1 (BSP: c - 1) with
	 * frr_globals: the same values wherever an item runs, in every
	 * mode, and kept by --checkpoint.  A worker that would start clock
	 * c before they reach its process waits for them.  0 or a negative
	 * errno (the job fails).
	 */
	int nglobals;
	int (*globals)(void *app, const double *stats, int nstats, int clock,
		       double *out);
	/*
	 * Optional (appended): what item `item` of partition `part` costs to
	 * process, in any unit (tokens, edges, bytes: > 0 and finite), for
	 * items whose work differs widely.  RapidReassignment then hands a
	 * helper a tail of a partition by its share of the cost, not of the
	 * item count.  Called once per item of every partition a process
	 * holds, after load_partition, in modes flexrr and rr only; keep it
	 * cheap.  Costs 8 bytes per item held.
	 */
	double (*item_cost)(void *app, int part, uint64_t item);
	/*
	 * Optional (appended): the bytes this process will still allocate
	 * once the job has started, for clock_local, save or anything else
	 * it keeps beyond its data (say, a copy of the rows its evaluation
	 * reads), when its own partitions are parts[0 .. n).  Called once,
	 * after load_partition of every partition the process holds; the
	 * memory check (docs/runtime.md "Memory of a rank") adds it to what
	 * the process holds then.  An estimate: nothing checks it.
	 */
	size_t (*mem_later)(void *app, const int *parts, int n);
};

/* Add rows [row, row + n) of `table` to the set part_rows declares
 * (repeats are fine; out of range: -EINVAL). */
int frr_rows_add(struct frr_rowset *rs, int table, uint64_t row, uint64_t n);

/* ---- the item context (inside process()) ------------------------------ */
/*
 * Rows: the calling thread's cache.  The first access to a row in a batch
 * fetches it (a copy of the freshest value this process has, plus with
 * FRR_TABLE_SEE_OWN_PENDING the thread's pushed-but-unapplied changes);
 * later accesses in the batch return the same memory, with the thread's
 * own changes in it.  A batch is the items of one partition and one clock
 * that a thread runs between two flushes: normally all of its own
 * partition's items of the clock (several process() calls), or one range
 * it runs for another partition.  At the flush the runtime pushes, for
 * every row written in the batch, its change (value - value fetched) as
 * the table's combine rule weighs it (ADD), or the sum of the gradients
 * (ADAGRAD).
 *
 * Validity: a returned pointer stays valid and stable (no other thread
 * writes that memory) until process() returns; do not keep it across
 * calls (fetch again: it is cheap and returns the same row while the batch
 * lasts).
 *
 * Staleness: a row fetched in clock c holds every update of clocks
 * <= c - slack - 1 (BSP: exactly clocks < c).  Newer ones: by default
 * only those of clocks a shard has completed, so reads mostly sit at the
 * bound; with `flexrr run --eager` every batch that reached the shard, of
 * clocks up to c + slack (docs/writing-an-app.md "Rows").
 *
 * Cost: no lock, no allocation, no system call: a bounds check and a stamp
 * compare per access; a fetch copies one row.
 *
 * Out-of-range tables, rows or columns are app bugs: the job fails.
 */
const float *frr_row_read(struct frr_ctx *c, int table, uint64_t row);
/* The same row for writing in place (ADD and SET tables). */
float *frr_row_write(struct frr_ctx *c, int table, uint64_t row);
/* A hint that this thread will soon read or write `row` for the first
 * time in its batch: the runtime starts loading the memory its first
 * access copies, so that access does not wait for it.  Changes no value,
 * never fails (a bad id is ignored here; the access reports it); costs a
 * bounds check and a few prefetch instructions.  Worth it where an app
 * knows its next rows well ahead and reads them in an order the caches do
 * not follow (mf: its users in a shuffled order).  Give it some rows ahead:
 * the row's bookkeeping is loaded at once, the row four hints later. */
void frr_row_prefetch(struct frr_ctx *c, int table, uint64_t row);
/* ADD, SET: row += delta[0..cols) in the cache; ADAGRAD: adds a
 * gradient. */
void frr_row_update(struct frr_ctx *c, int table, uint64_t row,
		    const float *delta);
void frr_cell_update(struct frr_ctx *c, int table, uint64_t row, uint32_t col,
		     float delta);

/* The clock being run and the partition whose items these are (the
 * pointer load_partition returned for it, and its index). */
int frr_clock(const struct frr_ctx *c);
void *frr_part(const struct frr_ctx *c);
int frr_part_index(const struct frr_ctx *c);
/* The calling thread's scratch (app->scratch_size bytes; NULL if 0). */
void *frr_scratch(struct frr_ctx *c);
/* Mutable state of item `item` of the partition (NULL if none). */
void *frr_item_state(struct frr_ctx *c, uint64_t item);
/* Deterministic 64-bit seed for (seed, partition, clock, item): the same
 * whichever thread runs the item (e.g. for frr_rng_seed()). */
uint64_t frr_item_rng(const struct frr_ctx *c, uint64_t item);
/* Add v to stat slot idx of this clock (summed over the job). */
void frr_stat_add(struct frr_ctx *c, int idx, double v);
/* The app's globals for this clock (frr_app_ops.globals): nglobals values,
 * those set after clock *from = frr_clock(c) - slack - 1, or zeros with
 * *from = -1 before any (from may be NULL).  Valid until process()
 * returns; NULL if the app declares none. */
const double *frr_globals(struct frr_ctx *c, int *from);
const struct frr_job_info *frr_job(const struct frr_ctx *c);

/* ---- the process context (clock_local, save, load) -------------------- */
/* Copy the freshest value this process has of a row into out[0..cols). */
int frr_eval_row_read(struct frr_eval_ctx *ec, int table, uint64_t row,
		      float *out);
/* load: set a row's initial value.  Call it for every row on every
 * process; each process keeps the rows it stores. */
int frr_eval_row_write(struct frr_eval_ctx *ec, int table, uint64_t row,
		       const float *in);
void frr_eval_stat_add(struct frr_eval_ctx *ec, int idx, double v);
const struct frr_job_info *frr_eval_job(const struct frr_eval_ctx *ec);
/* The partitions this process runs (each partition is run by exactly one
 * process): i in [0, frr_eval_nlocal(ec)) gives load_partition's pointer
 * and, in *part if not NULL, the index.  Evaluating held-out data of these
 * counts every partition once. */
int frr_eval_nlocal(const struct frr_eval_ctx *ec);
void *frr_eval_local(const struct frr_eval_ctx *ec, int i, int *part);
/* This process's share [lo, hi) of n things; the shares of all processes
 * partition [0, n) (e.g. a held-out set not tied to partitions). */
void frr_eval_share(const struct frr_eval_ctx *ec, uint64_t n, uint64_t *lo,
		    uint64_t *hi);

/* frr_rng_* (xoshiro256**, splitmix64 seeding): flexrr/base.h */

/* Running a job with a program's own table of apps: flexrr/job.h */

FRR_API_END
#ifdef __cplusplus
}
#endif
#endif /* FLEXRR_FLEXRR_H */
