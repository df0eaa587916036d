// SPDX-License-Identifier: MIT
/*
 * What an update batch costs on the wire (docs/runtime.md "Update batches
 * on the wire"), counted exactly: a 4-rank job whose partitions write known
 * rows, every row of a read-only table read every clock, and each worker's
 * `bytes` per clock in the --metrics file compared with the segments those
 * writes need: per table and shard, the written rows' ids and values, or
 * one dense range where that is smaller; nothing for rows only read.
 * Until 2026-12 a batch carried the dense range of every shard it touched
 * (the read-only table cost nothing then too; the scattered and far tables
 * cost their whole ranges).  Also: a row a partition reads for the first
 * time late (clock 5, one another partition wrote every clock) holds every
 * update of the clocks before (issue 21: a row outside what a rank has read
 * so far is served right, never stale or zero); and the row bytes each
 * shard pushes after each clock (the `pushed` column) are exactly the
 * written range's rows that each other rank holds: its standby shard, what
 * its partition declared (part_rows), the row it pulled.  Rows live where
 * they are written: a row only one partition declares is stored by its
 * rank (place() models the rule), so its batches stay local.
 *
 * Under SSP (slack 1) such a row is not even batched: its worker adds its
 * changes to the row in place at the flush (table/direct.c), so the
 * batches carry only the rows more than one partition declares, the
 * pushes stay what they were, and the worker reads back exactly what it
 * wrote in every clock before (a lost or doubled update shows); a batch
 * that writes such a row of another partition fails the job, naming both.
 *
 * Under flexrr (a helper's range of items reads nothing: only item 0 does) a
 * rank also holds the rows of the partitions its workers may help, here every
 * other partition's; they are dormant until it reads one (table/hold.c
 * "on use"): the pushes are exactly those of ssp until partition 0's late
 * read of the row only partition 1 writes, which wakes, on rank 0, rank
 * 1's rows that partition 1 declares (one request: the `pulls` column
 * counts it as the pull it replaces), and from then on rank 1 pushes rank
 * 0 those rows; its rows that only partitions 2 and 3 declare stay
 * dormant (wakes are per owner and helpee rank).  With
 * --rr-rows-from-start every rank is pushed all of them from the start.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flexrr/bootstrap.h"
#include "flexrr/log.h"
#include "job.h"
#include "test_util.h"

TestSuite(runtime_bytes, .timeout = 120);

#define NP 4 /* ranks, one worker each */
#define CLOCKS 7
#define LATE 5	 /* the clock partition 0 first reads a row of partition 3 */
#define PULLED 1 /* a "far" row only partition 1 writes: stored by rank 1 */
enum { ST_LATE_BAD, ST_N };
enum { T_SCATTER, T_READ, T_FAR, NT };
static const uint64_t ROWS[NT] = { 6000, 1000, 50000 };
static const uint32_t COLS[NT] = { 5, 9, 16 };

/* Does partition p write row r of table t in clock c? */
static int writes(int t, uint64_t r, int p, int c)
{
	switch (t) {
	case T_SCATTER: /* blocks of 3 rows dealt to the partitions, in
			   clock 1 also every 11th row, and in clock 2 every
			   13th from row 1 by partitions 2 and 3 (rows of rank
			   1's shard, among others, that only two helpees of
			   rank 0 declare) */
		return (int)((r / 3) % NP) == p || (c == 1 && r % 11 == 0) ||
		       (c == 2 && r % 13 == 1 && (p == 2 || p == 3));
	case T_FAR: /* two rows far apart */
		return r == (uint64_t)p || r == ROWS[T_FAR] - 1 - (uint64_t)p;
	default:
		return 0;
	}
}

/* Does partition p declare row r of table t (b_rows)? */
static int declares(int t, uint64_t r, int p)
{
	if (t == T_READ)
		return 1;
	for (int c = 0; c < CLOCKS; c++)
		if (writes(t, r, p, c))
			return 1;
	return 0;
}

/* Where rows live (docs/runtime.md "Rows where they are written"): a row
 * declared by one rank (one partition here) is stored by it, the others
 * by r % NP; each shard in row order.  owner_of / local_of / row_at. */
static int owner[NT][50000], solo[NT][50000];
static uint64_t lidx[NT][50000], rowat[NT][NP][50000], nshard[NT][NP];

static void place(void)
{
	for (int t = 0; t < NT; t++) {
		memset(nshard[t], 0, sizeof(nshard[t]));
		for (uint64_t r = 0; r < ROWS[t]; r++) {
			int n = 0, who = -1;

			for (int p = 0; p < NP; p++)
				if (declares(t, r, p)) {
					n++;
					who = p;
				}
			owner[t][r] = n == 1 ? who : (int)(r % NP);
			solo[t][r] = n == 1;
			lidx[t][r] = nshard[t][owner[t][r]]++;
			rowat[t][owner[t][r]][lidx[t][r]] = r;
		}
	}
}

static int b_create(const struct frr_job_info *job, int argc, char **argv,
		    void **app)
{
	(void)job;
	(void)argc;
	(void)argv;
	*app = NULL;
	return 0;
}

static void b_destroy(void *app)
{
	(void)app;
}

static int b_tables(void *app, struct frr_table_spec *s, int max)
{
	static const char *names[NT] = { "scatter", "read", "far" };

	(void)app;
	(void)max;
	for (int t = 0; t < NT; t++)
		s[t] = (struct frr_table_spec){ .name = names[t],
						.rows = ROWS[t],
						.cols = COLS[t],
						.rule = FRR_UPDATE_ADD };
	return NT;
}

static int b_load(void *app, int part, uint64_t *n, void **data)
{
	(void)app;
	(void)part;
	*n = 10;
	*data = NULL;
	return 0;
}

static int slack;	 /* the job's (0: BSP) */
static int standby = 1;	 /* 0: --no-standby */
static int flexrr;	 /* mode flexrr (with slack), nothing reassigned */
static int from_start;	 /* --rr-rows-from-start */
static int foreign = -1; /* partition 2 writes a row of partition 1's */

/* A row partition p writes in every clock and no other partition does
 * (SSP: its worker adds it in place, so it reads back every earlier
 * clock's 1 exactly). */
static int own_every_clock(int t, uint64_t r, int p)
{
	return t == T_SCATTER
		   ? (int)((r / 3) % NP) == p && r % 11 != 0 && r % 13 != 1
		   : t == T_FAR && writes(t, r, p, 0);
}

/* Clocks < LATE are applied (BSP; under SSP at least those < LATE -
 * slack, at most every clock partition 3 (1) may have run by then),
 * and partition 3 (1) added 1 in each: the first row is in rank 3's
 * shard, rank 0's standby copy (pulled too with --no-standby); the
 * second, rank 1's, is held by no rank but 1 and 2: it is pulled */
static int late_bad(float v)
{
	return v < (float)(LATE - slack) || v > (float)(LATE + 2 * slack);
}

static int b_process(void *app, struct frr_ctx *c, uint64_t begin, uint64_t end)
{
	int p = frr_part_index(c), clock = frr_clock(c);

	(void)app;
	(void)end;
	if (begin)
		return 0;
	if (p == 0 && clock == LATE &&
	    late_bad(frr_row_read(c, T_FAR, ROWS[T_FAR] - 1 - 3)[0]))
		frr_stat_add(c, ST_LATE_BAD, 1);
	if (p == 0 && clock == LATE &&
	    late_bad(frr_row_read(c, T_FAR, PULLED)[0]))
		frr_stat_add(c, ST_LATE_BAD, 1);
	for (int t = 0; slack && t < NT; t++)
		for (uint64_t r = 0; r < ROWS[t]; r++)
			if (own_every_clock(t, r, p) &&
			    frr_row_read(c, t, r)[0] != (float)clock)
				frr_stat_add(c, ST_LATE_BAD, 1);
	/* a row only partition 1 declares (the first of its blocks) */
	if (p == 2 && clock == foreign)
		frr_cell_update(c, T_SCATTER, 4, 0, 1.0f);
	for (uint64_t r = 0; r < ROWS[T_READ]; r++)
		(void)frr_row_read(c, T_READ, r);
	for (int t = 0; t < NT; t++)
		for (uint64_t r = 0; r < ROWS[t]; r++)
			if (writes(t, r, p, clock))
				frr_cell_update(c, t, r, 0, 1.0f);
	return 0;
}

/* What each partition reads and writes, but for the late reads: the
 * rows written, and the read-only table whole. */
static int b_rows(void *app, int part, struct frr_rowset *rs)
{
	int err = frr_rows_add(rs, T_READ, 0, ROWS[T_READ]);

	(void)app;
	for (int t = 0; t < NT && !err; t++)
		for (uint64_t r = 0; r < ROWS[t] && !err; r++)
			for (int c = 0; c < CLOCKS; c++)
				if (writes(t, r, part, c)) {
					err = frr_rows_add(rs, t, r, 1);
					break;
				}
	return err;
}

static int b_global(void *app, const double *st, int nstats, int clock,
		    double *objective, char *metrics, size_t len)
{
	(void)app;
	(void)nstats;
	*objective = 0;
	snprintf(metrics, len, "late_bad=%.0f", st[ST_LATE_BAD]);
	if (!st[ST_LATE_BAD])
		return 0;
	frr_err("clock %d: a row first read in clock %d lacked updates of the "
		"clocks before it, or (SSP) a row read back by its only writer "
		"lacked one of its updates",
		clock, LATE);
	return -EPROTO;
}

static const struct frr_app_ops bytes_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "bytescheck",
	.summary = "writes known rows (tests)",
	.create = b_create,
	.destroy = b_destroy,
	.tables = b_tables,
	.load_partition = b_load,
	.process = b_process,
	.clock_global = b_global,
	.nstats = ST_N,
	.part_rows = b_rows,
};

static char metrics_path[64];

static int job_main(struct frr_oob *oob, void *arg)
{
	static char *argv[] = { "bytescheck", NULL };
	struct frr_rt_params o = {
		.threads = 1,
		.backend = *(enum frr_tp_backend *)arg,
		.mode = flexrr	? FRR_MODE_FLEXRR
			: slack ? FRR_MODE_SSP
				: FRR_MODE_BSP,
		.slack = slack,
		.no_standby = !standby,
		.rr_rows_from_start = from_start,
		.rr = { .threshold = 1.0 },
		.clocks = CLOCKS,
		.seed = 1,
		.quiet = 1,
		.metrics_path = metrics_path,
		.timeout_ms = 20000,
		.dead_ms = 5000,
		.delay_worker = -1,
		.app = &bytes_app,
		.app_argc = 1,
		.app_argv = argv,
	};

	return frr_rt_job_run(oob, &o) ? -EPROTO : 0;
}

static uint64_t seg(int sparse, uint64_t n, uint32_t cols)
{
	uint64_t b = 24 + n * cols * 4 + (sparse ? 8 * n : 0);

	return (b + 7) / 8 * 8;
}

/* The payload partition p's batch of clock c needs, from its writes. */
static uint64_t expected(int p, int c)
{
	uint64_t sum = 0;

	for (int t = 0; t < NT; t++)
		for (int o = 0; o < NP; o++) {
			uint64_t n = 0, lo = UINT64_MAX, hi = 0, d, s;

			for (uint64_t li = 0; li < nshard[t][o]; li++)
				if (writes(t, rowat[t][o][li], p, c) &&
				    !(slack && solo[t][rowat[t][o][li]])) {
					n++;
					lo = li < lo ? li : lo;
					hi = li + 1;
				}
			if (!n)
				continue;
			d = seg(0, hi - lo, COLS[t]);
			s = seg(1, n, COLS[t]);
			sum += d <= s ? d : s;
		}
	return sum;
}

/* Does rank r hold row `row` of table t in clock c (docs/runtime.md "Rows
 * a rank holds"): the standby shard (unless --no-standby), what its
 * partition declared (b_rows), and from clock LATE on the row it pulled
 * then. */
static int holds(int r, int t, uint64_t row, int c, int pulled_at)
{
	if ((standby && owner[t][row] == (r + NP - 1) % NP) || t == T_READ)
		return 1;
	/* flexrr: the helpees' rows (every other partition's: the rows
	 * declared at all) from the start; on use, once woken, rank 1's rows
	 * that partition 1 declares (the late read's: woken per owner and
	 * helpee, so those only partitions 2 and 3 declare stay dormant) */
	if (flexrr && from_start)
		for (int p = 0; p < NP; p++)
			if (declares(t, row, p))
				return 1;
	if (flexrr && r == 0 && owner[t][row] == 1 && c >= pulled_at &&
	    declares(t, row, 1))
		return 1;
	if (r == 0 && t == T_FAR && c >= pulled_at &&
	    (row == PULLED || (!standby && row == ROWS[T_FAR] - 1 - 3)))
		return 1;
	for (int k = 0; k < CLOCKS; k++)
		if (writes(t, row, r, k))
			return 1;
	return 0;
}

/* Row bytes rank o's shard pushes after applying clock c: per table the
 * range of local rows written in c, and in it, per other rank, the rows
 * that rank holds (the pulled row from clock pulled_at on: LATE, or under
 * SSP as early as LATE - slack, when worker 0 may have run ahead to
 * LATE before the shard applied that clock). */
static uint64_t pushed(int o, int c, int pulled_at)
{
	uint64_t sum = 0;

	for (int t = 0; t < NT; t++) {
		uint64_t lo = UINT64_MAX, hi = 0;

		for (uint64_t li = 0; li < nshard[t][o]; li++)
			for (int p = 0; p < NP; p++)
				if (writes(t, rowat[t][o][li], p, c)) {
					lo = li < lo ? li : lo;
					hi = li + 1;
				}
		for (uint64_t li = lo; li < hi; li++)
			for (int r = 0; r < NP; r++)
				if (r != o &&
				    holds(r, t, rowat[t][o][li], c, pulled_at))
					sum += COLS[t] * 4;
	}
	return sum;
}

/* Columns of the --metrics file (docs/runtime.md, metrics.c's header). */
enum { COL_PULLS = 14, COL_PUSHED = 15 };

/* Column k (0-based) of a CSV line, as an integer. */
static uint64_t column(const char *line, int k)
{
	for (int i = 0; i < k && line; i++) {
		line = strchr(line, ',');
		line = line ? line + 1 : NULL;
	}
	return line ? strtoull(line, NULL, 10) : UINT64_MAX;
}

static void check_backend(enum frr_tp_backend b)
{
	char line[512];
	int seen = 0;
	FILE *f;

	snprintf(metrics_path, sizeof(metrics_path), "/tmp/frr-bytes-%d.csv",
		 (int)getpid());
	cr_assert_eq(frr_launch_local(NP, job_main, &b, 60000), 0,
		     "the job failed on %s (messages above)",
		     frr_tp_backend_name(b));
	f = fopen(metrics_path, "r");
	cr_assert_not_null(f, "no metrics file %s", metrics_path);
	cr_assert_not_null(fgets(line, sizeof(line), f)); /* header */
	cr_assert(strstr(line, ",pulls,pushed,"), "columns moved: %s", line);
	while (fgets(line, sizeof(line), f)) {
		int clock, worker, rank;
		double compute, wait, flush, updates, bytes;
		uint64_t pulls = column(line, COL_PULLS),
			 push = column(line, COL_PUSHED);

		cr_assert_eq(sscanf(line, "%d,%d,%d,%lf,%lf,%lf,%lf,%lf",
				    &clock, &worker, &rank, &compute, &wait,
				    &flush, &updates, &bytes),
			     8, "bad metrics line: %s", line);
		/* pulls: the one row no rank declared (and the standby's
		 * without one; under flexrr the wake of rank 1's rows, none
		 * when they are live from the start); pushed: the row bytes the
		 * rank's shard pushed to the ranks holding them */
		cr_expect_eq(pulls,
			     worker == 0 && clock == LATE && !from_start
				 ? 2u - standby
				 : 0u,
			     "worker %d clock %d pulled %llu rows: %s", worker,
			     clock, (unsigned long long)pulls, line);
		cr_expect(push == pushed(rank, clock, LATE) ||
			      push == pushed(rank, clock, LATE - slack),
			  "rank %d clock %d pushed %llu bytes; the rows its "
			  "holders hold need %llu",
			  rank, clock, (unsigned long long)push,
			  (unsigned long long)pushed(rank, clock, LATE));
		cr_expect_eq((uint64_t)bytes, expected(worker, clock),
			     "worker %d clock %d sent %.0f payload bytes; its "
			     "writes need %llu",
			     worker, clock, bytes,
			     (unsigned long long)expected(worker, clock));
		seen++;
	}
	fclose(f);
	unlink(metrics_path);
	cr_assert_eq(seen, NP * CLOCKS, "%d metrics lines", seen);
}

/* The job (slack, standby as set) on every backend of the run. */
static void check_backends(void)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	cr_assert(nb > 0);
	place();
	for (int i = 0; i < nb; i++)
		check_backend(bs[i]);
}

Test(runtime_bytes, batches_carry_what_was_written)
{
	check_backends();
}

Test(runtime_bytes, ssp_rows_of_one_writer_applied_in_place)
{
	slack = 1;
	check_backends();
}

/* --no-standby: every shard pushes only the rows other ranks declared or
 * pulled (the far table's rows, which only their writer declares, not at
 * all but the pulled one), and the batches are unchanged. */
Test(runtime_bytes, without_the_standby_pushes_only_what_others_read)
{
	standby = 0;
	check_backends();
}

/* flexrr: the partitions a rank may help hold dormant rows until read. */
Test(runtime_bytes, flexrr_helpees_rows_pushed_once_read)
{
	slack = 1;
	flexrr = 1;
	check_backends();
}

Test(runtime_bytes, flexrr_helpees_rows_pushed_from_the_start)
{
	slack = 1;
	flexrr = 1;
	from_start = 1;
	check_backends();
}

/* A batch writing a row another partition alone declares (applied in
 * place by that partition's worker) fails the job, naming both. */
Test(runtime_bytes, ssp_write_to_another_partitions_row_fails)
{
	enum frr_tp_backend b = FRR_TP_BACKEND_SHM;
	char path[64], text[8192] = "";
	int fd, saved = dup(2), rc;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/frr-bytes-err-%d", (int)getpid());
	snprintf(metrics_path, sizeof(metrics_path), "/tmp/frr-bytes-%d.csv",
		 (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert(fd >= 0 && saved >= 0, "cannot capture stderr in %s", path);
	slack = 1;
	foreign = 3;
	fflush(stderr);
	dup2(fd, 2);
	rc = frr_launch_local(NP, job_main, &b, 60000);
	fflush(stderr);
	dup2(saved, 2);
	close(fd);
	close(saved);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = 0;
	fclose(f);
	unlink(path);
	unlink(metrics_path);
	cr_assert_neq(rc, 0, "the job ran through: %s", text);
	cr_assert(strstr(text, "partition 2 wrote row 4 of table scatter, "
			       "which only partition 1 declares"),
		  "no message naming both partitions: %s", text);
}
