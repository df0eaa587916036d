// SPDX-License-Identifier: MIT
/*
 * The worker cache (docs/runtime.md "The worker cache"), through the real
 * runtime and transports, 2 ranks x 2 threads, SSP with random delays so
 * that shards push while workers fetch:
 *   - table "own" (FRR_TABLE_SEE_OWN_PENDING): partition p adds 1 to row p
 *     per item; every read of row p in clock c must be exactly c * n + i
 *     before item i (the partition's own pushed-but-unapplied clocks counted
 *     once, never twice or missed; read-my-writes within the clock);
 *   - table "default": the same counts with no flag: read-my-writes is
 *     the default on ADD tables, so its reads are exact as "own"'s;
 *   - table "plain": the same counts with FRR_TABLE_NO_OWN_PENDING: a read
 *     must hold at least the clocks the slack guarantees and at most its
 *     own clocks;
 *   - every clock each partition reads the other partitions' "own" rows:
 *     they never include another partition's pending updates (under
 *     --eager they may hold up to slack + 1 clocks more: the batches that
 *     arrived, of clocks up to this one + slack);
 *   - the same checks under --eager, where shards apply batches as they
 *     arrive and read-my-writes counts the own batches not applied; there
 *     each partition also adds 1 to each of its BULK rows of table "bulk"
 *     once a clock, so its batches span several inbox chunks, of which
 *     none may be applied before the batch is whole: its first and last
 *     rows must read exactly the clock, like "own".
 *   - table "rare": each partition reads RARE rows of its own in clock 0,
 *     the next partition adds 1 to them in clock 1, and a long run reads
 *     them again one by one around clock FRR_STAMP_GENS, where the cache's
 *     row stamps wrap (one batch per clock): a stamp kept from clock 0
 *     would hand out the stale 0.
 * Rows are also prefetched (frr_row_prefetch), own and others', and with
 * bad ids: the hints must change no value and fail nothing.
 * Any violation fails the job (clock_global), so the launch fails.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "job.h"
#include "test_util.h"

TestSuite(runtime_cache, .timeout = 240);

enum { T_OWN, T_PLAIN, T_RARE, T_DFLT, T_BULK };
enum { ST_ITEMS, ST_BAD_OWN, ST_BAD_PLAIN, ST_BAD_OTHER, ST_BAD_DFLT, ST_N };

#define ITEMS 40
#define CLOCKS 16
#define RARE 5
#define BULK 80000 /* rows a partition: 8 floats, 1.28 MB a shard at P 2 */

struct capp {
	struct frr_job_info job;
};

/* the job's --eager (set before the ranks start: they inherit it) */
static int eager;

static int c_create(const struct frr_job_info *job, int argc, char **argv,
		    void **app)
{
	struct capp *a = calloc(1, sizeof(*a));

	(void)argc;
	(void)argv;
	if (!a)
		return -ENOMEM;
	a->job = *job;
	*app = a;
	return 0;
}

static void c_destroy(void *app)
{
	free(app);
}

static int c_tables(void *app, struct frr_table_spec *s, int max)
{
	struct capp *a = app;

	(void)max;
	s[T_OWN] = (struct frr_table_spec){
		.name = "own",
		.rows = (uint64_t)a->job.nparts,
		.cols = 2,
		.rule = FRR_UPDATE_ADD,
		.flags = FRR_TABLE_SEE_OWN_PENDING,
	};
	s[T_PLAIN] = s[T_OWN];
	s[T_PLAIN].name = "plain";
	s[T_PLAIN].flags = FRR_TABLE_NO_OWN_PENDING;
	s[T_RARE] = s[T_PLAIN];
	s[T_RARE].name = "rare";
	s[T_RARE].rows = (uint64_t)a->job.nparts * RARE;
	s[T_DFLT] = s[T_OWN];
	s[T_DFLT].name = "default";
	s[T_DFLT].flags = 0;
	if (!eager)
		return 4;
	s[T_BULK] = s[T_DFLT];
	s[T_BULK].name = "bulk";
	s[T_BULK].rows = (uint64_t)a->job.nparts * BULK;
	s[T_BULK].cols = 8;
	return 5;
}

static int c_load(void *app, int part, uint64_t *n, void **data)
{
	(void)app;
	(void)part;
	*n = ITEMS;
	*data = NULL;
	return 0;
}

/* Other partitions' rows of "own" hold only applied clocks: between the
 * slack's guarantee and this clock (eager: and the batches applied as they
 * came: another partition may be up to slack clocks ahead and have sent
 * that clock's batch too, so slack + 1 clocks more). */
static void check_others(struct capp *a, struct frr_ctx *c, int p, int clock)
{
	int ahead = eager ? a->job.slack + 1 : 0;

	for (int q = 0; q < a->job.nparts; q++) {
		float v = frr_row_read(c, T_OWN, (uint64_t)q)[0];

		if (q != p && (v < (float)((clock - a->job.slack) * ITEMS) ||
			       v > (float)((clock + ahead) * ITEMS)))
			frr_stat_add(c, ST_BAD_OTHER, 1);
	}
}

/* Row p * RARE + k: read in clock 0 and again in clock FRR_STAMP_GENS - 2
 * + k only (it must hold the next partition's clock-1 write by then). */
static void check_rare(struct capp *a, struct frr_ctx *c, int p, int clock)
{
	uint64_t mine = (uint64_t)p * RARE,
		 next = (uint64_t)((p + 1) % a->job.nparts) * RARE;
	int k = clock - ((int)FRR_STAMP_GENS - 2);

	for (int j = 0; j < RARE; j++) {
		float v0 =
		    clock == 0 ? frr_row_read(c, T_RARE, mine + j)[0] : 0;

		/* eager: the next partition's clock-1 add may be in already */
		if (v0 != 0 && !(eager && v0 == 1))
			frr_stat_add(c, ST_BAD_OTHER, 1);
		if (clock == 1)
			frr_cell_update(c, T_RARE, next + j, 0, 1);
	}
	if (k >= 0 && k < RARE &&
	    frr_row_read(c, T_RARE, mine + (uint64_t)k)[0] != 1)
		frr_stat_add(c, ST_BAD_OTHER, 1);
}

/* Eager: this partition's bulk rows read its clock count, then get 1. */
static void bulk_add(struct frr_ctx *c, int p, int clock)
{
	uint64_t first = (uint64_t)p * BULK;

	if (frr_row_read(c, T_BULK, first)[0] != (float)clock ||
	    frr_row_read(c, T_BULK, first + BULK - 1)[0] != (float)clock)
		frr_stat_add(c, ST_BAD_OWN, 1);
	for (uint64_t r = first; r < first + BULK; r++)
		frr_cell_update(c, T_BULK, r, 0, 1);
}

static int c_process(void *app, struct frr_ctx *c, uint64_t begin, uint64_t end)
{
	struct capp *a = app;
	int p = frr_part_index(c), clock = frr_clock(c);
	struct frr_rng r;

	if (begin == 0)
		check_others(a, c, p, clock);
	if (begin == 0)
		check_rare(a, c, p, clock);
	if (eager && begin == 0)
		bulk_add(c, p, clock);
	/* hints change nothing the checks read, and bad ids are ignored
	 * (the access, not the hint, reports an app bug) */
	frr_row_prefetch(c, T_OWN, (uint64_t)p);
	frr_row_prefetch(c, T_RARE, (uint64_t)((p + 1) % a->job.nparts) * RARE);
	frr_row_prefetch(c, T_DFLT, UINT64_MAX);
	frr_row_prefetch(c, 99, 0);
	frr_row_prefetch(c, -1, 0);
	for (uint64_t i = begin; i < end; i++) {
		float *own = frr_row_write(c, T_OWN, (uint64_t)p);
		float *plain = frr_row_write(c, T_PLAIN, (uint64_t)p);
		const float *dflt = frr_row_read(c, T_DFLT, (uint64_t)p);
		float want = (float)((uint64_t)clock * ITEMS + i);
		float lo =
		    (float)((uint64_t)(clock - a->job.slack) * ITEMS + i);

		if (own[0] != want || own[1] != 2 * want)
			frr_stat_add(c, ST_BAD_OWN, 1);
		if (plain[0] > want || (clock >= a->job.slack && plain[0] < lo))
			frr_stat_add(c, ST_BAD_PLAIN, 1);
		if (dflt[0] != want)
			frr_stat_add(c, ST_BAD_DFLT, 1);
		own[0] += 1;
		own[1] += 2;
		frr_cell_update(c, T_PLAIN, (uint64_t)p, 0, 1);
		frr_cell_update(c, T_DFLT, (uint64_t)p, 0, 1);
		frr_stat_add(c, ST_ITEMS, 1);
		/* jitter: workers drift apart within the slack */
		frr_rng_seed(&r, frr_item_rng(c, i));
		if (frr_rng_below(&r, 8) == 0) {
			struct timespec ts = { 0, (long)frr_rng_below(&r, 300) *
						      1000 };

			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

static int c_global(void *app, const double *st, int nstats, int clock,
		    double *objective, char *metrics, size_t len)
{
	struct capp *a = app;

	(void)nstats;
	*objective = st[ST_ITEMS];
	snprintf(metrics, len,
		 "bad_own=%.0f bad_plain=%.0f bad_other=%.0f bad_default=%.0f",
		 st[ST_BAD_OWN], st[ST_BAD_PLAIN], st[ST_BAD_OTHER],
		 st[ST_BAD_DFLT]);
	if (st[ST_ITEMS] != (double)a->job.nparts * ITEMS || st[ST_BAD_OWN] ||
	    st[ST_BAD_PLAIN] || st[ST_BAD_OTHER] || st[ST_BAD_DFLT]) {
		frr_err("clock %d: %.0f items, %s", clock, st[ST_ITEMS],
			metrics);
		return -EPROTO;
	}
	return 0;
}

static const struct frr_app_ops cache_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "cachecheck",
	.summary = "checks what the worker cache shows (tests)",
	.create = c_create,
	.destroy = c_destroy,
	.tables = c_tables,
	.load_partition = c_load,
	.process = c_process,
	.clock_global = c_global,
	.nstats = ST_N,
};

struct cfg {
	enum frr_tp_backend backend;
	int slack;
	uint64_t seed;
	int clocks; /* 0: CLOCKS */
	int eager;
};

static int job_main(struct frr_oob *oob, void *arg)
{
	struct cfg *j = arg;
	static char *argv[] = { "cachecheck", NULL };
	struct frr_rt_params o = {
		.threads = 2,
		.backend = j->backend,
		.mode = j->slack ? FRR_MODE_SSP : FRR_MODE_BSP,
		.slack = j->slack,
		.clocks = j->clocks ? j->clocks : CLOCKS,
		.seed = j->seed,
		.eager = j->eager,
		.quiet = 1,
		.timeout_ms = 20000,
		.dead_ms = 5000,
		.delay_worker = -1,
		.app = &cache_app,
		.app_argc = 1,
		.app_argv = argv,
	};

	return frr_rt_job_run(oob, &o) ? -EPROTO : 0;
}

Test(runtime_cache, own_pending_exact_and_staleness_bounded)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	int runs = frr_test_quick() ? 2 : 6;

	for (int b = 0; b < nb; b++)
		for (int r = 0; r < runs; r++) {
			struct cfg j = { .backend = bs[b],
					 .slack = r % 3 + 1,
					 .seed = 11 + (uint64_t)r };

			if (r == runs - 1)
				j.slack = 0; /* BSP: nothing pending */
			cr_assert_eq(frr_launch_local(2, job_main, &j, 120000),
				     0,
				     "%s slack %d seed %llu: a read broke the "
				     "cache's contract (messages above)",
				     frr_tp_backend_name(bs[b]), j.slack,
				     (unsigned long long)j.seed);
		}
}

Test(runtime_cache, exact_across_stamp_wraps)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	for (int slack = 0; slack <= 1; slack++) {
		struct cfg j = { .backend = bs[0],
				 .slack = slack,
				 .seed = 5,
				 .clocks = 2 * (int)FRR_STAMP_GENS + 10 };

		cr_assert(nb > 0);
		cr_assert_eq(frr_launch_local(2, job_main, &j, 120000), 0,
			     "%s slack %d, %d clocks: a read after a stamp "
			     "wrap broke the cache's contract (messages "
			     "above)",
			     frr_tp_backend_name(bs[0]), j.slack, j.clocks);
	}
}

/* --eager: every batch applied as it arrives, so shards push rows all the
 * time; the own rows must stay exact (each own batch counted once: by the
 * shard or by the pending ring, never both) and the slack still bound. */
Test(runtime_cache, eager_own_pending_exact_and_staleness_bounded)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	/* an eager run adds the bulk table (8 columns of BULK rows a
	 * partition) and under TSan took 6-10 s (a run without it 0.05 s):
	 * three runs there, slack 1 to 3, for CI's time budget */
	int runs = frr_test_quick() ? 2 : frr_test_sanitizer() ? 3 : 6;

	eager = 1;
	for (int b = 0; b < nb; b++)
		for (int r = 0; r < runs; r++) {
			struct cfg j = { .backend = bs[b],
					 .slack = r % 3 + 1,
					 .seed = 21 + (uint64_t)r,
					 .eager = 1 };

			cr_assert_eq(
			    frr_launch_local(2, job_main, &j, 120000), 0,
			    "%s eager slack %d seed %llu: a read broke "
			    "the cache's contract (messages above)",
			    frr_tp_backend_name(bs[b]), j.slack,
			    (unsigned long long)j.seed);
		}
}
