// SPDX-License-Identifier: MIT
/*
 * RapidReassignment end to end: real runtime, real transports (the backends
 * of frr_test_backends(): shm, and verbs in the soft-RoCE VM), ranks forked
 * by frr_launch_local, and a counting app:
 *   - table "count" has one cell per item of every worker; processing an item
 *     adds 1, so after C clocks every cell must be exactly C (save() checks
 *     it on rank 0);
 *   - every clock, the items processed (summed over all workers and helpers)
 *     must equal the items of the job (clock_global checks it);
 *   - with --state, each item keeps a counter as item state that must equal
 *     the clock when the item is processed (state travels to helpers on
 *     other ranks and back), else a violation is counted;
 *   - random per-item delays plus injected stragglers drive reassignment.
 * Any violation fails the job, so the launch returns non-zero.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/bootstrap.h"
#include "flexrr/flexrr.h"
#include "flexrr/log.h"
#include "core.h"
#include "job.h"
#include "test_util.h"

/* Each job's bound (frr_launch_local kills it and says so): generous, as
 * no verdict may hinge on speed.  In the soft-RoCE VM (TCG, one vCPU busy,
 * host load 5-20) a 6-clock job took over 60 s; a job that outlives this
 * bound is a hang to chase, not a slow machine. */
#define RR_JOB_BOUND_MS 180000

TestSuite(rr_job, .timeout = 600);

#define NMAX 64

enum { ST_COUNT = 0, ST_VIOL, ST_NSTATS };

/* big: more items than NMAX a partition, item i counted in row i % NMAX */
struct cnt {
	struct frr_job_info job;
	uint64_t items;
	int state, clocks, delay_us, die_helping, big;
};

struct cnt_args {
	uint64_t items;
	int state, clocks, delay_us, die_helping, big;
};

static struct cnt_args g_args;

static int cnt_create(const struct frr_job_info *job, int argc, char **argv,
		      void **app)
{
	struct cnt *c = calloc(1, sizeof(*c));

	(void)argc;
	(void)argv;
	if (!c)
		return -ENOMEM;
	c->job = *job;
	c->items = g_args.items;
	c->state = g_args.state;
	c->clocks = g_args.clocks;
	c->delay_us = g_args.delay_us;
	c->die_helping = g_args.die_helping;
	c->big = g_args.big;
	*app = c;
	return 0;
}

static void cnt_destroy(void *app)
{
	free(app);
}

static int cnt_tables(void *app, struct frr_table_spec *s, int max)
{
	struct cnt *c = app;

	(void)max;
	s[0] = (struct frr_table_spec){
		.name = "count",
		.rows = (uint64_t)c->job.nparts * NMAX,
		.cols = 1,
		.rule = FRR_UPDATE_ADD,
	};
	return 1;
}

static uint64_t cnt_n(const struct cnt *c, int w)
{
	return c->items - (uint64_t)(w % 3); /* uneven lists */
}

static int cnt_load(void *app, int w, uint64_t *n, void **data)
{
	*n = cnt_n(app, w);
	*data = NULL;
	return 0;
}

static size_t cnt_state_size(void *app, int w, uint64_t i)
{
	(void)w;
	(void)i;
	return ((struct cnt *)app)->state ? sizeof(uint32_t) : 0;
}

static void cnt_state_init(void *app, int w, uint64_t i, void *st)
{
	(void)app;
	(void)w;
	(void)i;
	*(uint32_t *)st = 0;
}

/* The test looks inside the runtime (apps cannot): a helper on rank 1. */
static int helping_on_rank1(const struct frr_ctx *wc)
{
	return wc->wk->dp.id != wc->part && wc->rt->rank == 1;
}

static int cnt_process(void *app, struct frr_ctx *wc, uint64_t a, uint64_t b)
{
	struct cnt *c = app;
	int owner = frr_part_index(wc), clock = frr_clock(wc);
	float one = 1.0f;

	if (c->die_helping && helping_on_rank1(wc)) {
		/* the helper dies in the middle of helping */
		fflush(NULL);
		kill(getpid(), SIGKILL);
	}
	for (uint64_t i = a; i < b; i++) {
		uint64_t row = (uint64_t)owner * NMAX + (c->big ? i % NMAX : i);
		struct frr_rng r;

		(void)frr_row_read(wc, 0, row);
		frr_row_update(wc, 0, row, &one);
		frr_stat_add(wc, ST_COUNT, 1);
		if (c->state) {
			uint32_t *st = frr_item_state(wc, i);

			if (!st || *st != (uint32_t)clock)
				frr_stat_add(wc, ST_VIOL, 1);
			else
				*st = (uint32_t)clock + 1;
		}
		frr_rng_seed(&r, frr_item_rng(wc, i));
		if (c->delay_us) {
			long us =
			    (long)frr_rng_below(&r, (uint64_t)c->delay_us);
			struct timespec ts = { 0, us * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

static int cnt_global(void *app, const double *stats, int nstats, int clock,
		      double *objective, char *metrics, size_t len)
{
	struct cnt *c = app;
	double want = 0;

	(void)nstats;
	for (int w = 0; w < c->job.nparts; w++)
		want += (double)cnt_n(c, w);
	*objective = stats[ST_COUNT];
	snprintf(metrics, len, "count=%.0f violations=%.0f", stats[ST_COUNT],
		 stats[ST_VIOL]);
	if (stats[ST_COUNT] != want || stats[ST_VIOL] != 0) {
		frr_err("clock %d: %.0f items processed (want %.0f), %.0f "
			"item-state violations",
			clock, stats[ST_COUNT], want, stats[ST_VIOL]);
		return -EPROTO;
	}
	return 0;
}

static int cnt_save(void *app, struct frr_eval_ctx *ec, const char *path)
{
	struct cnt *c = app;

	(void)path;
	for (int w = 0; w < c->job.nparts; w++) {
		uint64_t n = cnt_n(c, w), rows = c->big ? NMAX : n;

		for (uint64_t i = 0; i < rows; i++) {
			/* big: the items of row i, every clock */
			double want =
			    (double)c->clocks *
			    (double)(c->big ? n / NMAX + (i < n % NMAX) : 1);
			float v;
			int err = frr_eval_row_read(ec, 0,
						    (uint64_t)w * NMAX + i, &v);

			if (err)
				return err;
			if (v != (float)want) {
				frr_err("worker %d row %llu counted %.0f "
					"items, want %.0f",
					w, (unsigned long long)i, (double)v,
					want);
				return -EPROTO;
			}
		}
	}
	return 0;
}

static const struct frr_app_ops cnt_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "rrcount",
	.summary = "counts every item's processing (rr tests)",
	.create = cnt_create,
	.destroy = cnt_destroy,
	.tables = cnt_tables,
	.load_partition = cnt_load,
	.item_state_size = cnt_state_size,
	.item_state_init = cnt_state_init,
	.process = cnt_process,
	.clock_global = cnt_global,
	.save = cnt_save,
	.nstats = ST_NSTATS,
};

struct job_cfg {
	enum frr_tp_backend backend;
	int P, T;
	enum frr_mode mode;
	int slack, clocks, group, dead_ms;
	int eager; /* --eager: help batches applied as they arrive */
	uint64_t seed;
	const char *stragglers;
	char metrics[128];
};

static int job_main(struct frr_oob *oob, void *arg)
{
	struct job_cfg *j = arg;
	static char *argv[] = { "rrcount", NULL };
	struct frr_rt_params o = {
		.threads = j->T,
		.backend = j->backend,
		.mode = j->mode,
		.slack = j->slack,
		.eager = j->eager,
		.clocks = j->clocks,
		.seed = j->seed,
		.quiet = 1,
		.pin = 0,
		.metrics_path = j->metrics[0] ? j->metrics : NULL,
		.save_path = "unused",
		.timeout_ms = 20000,
		.dead_ms = j->dead_ms ? j->dead_ms : 5000,
		.delay_worker = -1,
		.rr = { .group_size = j->group,
			.threshold = 0.2,
			.min_share = 0.05,
			.report_interval = 16,
			.stragglers = j->stragglers },
		.app = &cnt_app,
		.app_argc = 1,
		.app_argv = argv,
	};

	return frr_rt_job_run(oob, &o) ? -EPROTO : 0;
}

/* Sum of column col (0-based) of the metrics CSV over the rows of worker
 * 'worker' (-1: every row); -1 if unreadable. */
static double metrics_sum_of(const char *path, int col, int worker, int *rows)
{
	FILE *f = fopen(path, "r");
	char line[512];
	double s = 0;

	if (!f)
		return -1;
	*rows = 0;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ',');

		if (worker >= 0 && (!p || atoi(p + 1) != worker))
			continue;
		p = line;
		for (int i = 0; i < col && p; i++) {
			p = strchr(p, ',');
			if (p)
				p++;
		}
		if (p)
			s += atof(p);
		(*rows)++;
	}
	fclose(f);
	return s;
}

static double metrics_sum(const char *path, int col, int *rows)
{
	return metrics_sum_of(path, col, -1, rows);
}

static void run_ok(struct job_cfg *j)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	for (int b = 0; b < nb; b++) {
		j->backend = bs[b];
		cr_assert_eq(
		    frr_launch_local(j->P, job_main, j, RR_JOB_BOUND_MS), 0,
		    "%s mode %d P %d T %d slack %d eager %d group %d "
		    "state %d seed %llu stragglers %s: the job failed (the "
		    "ranks' messages are above)",
		    frr_tp_backend_name(bs[b]), j->mode, j->P, j->T, j->slack,
		    j->eager, j->group, g_args.state,
		    (unsigned long long)j->seed,
		    j->stragglers ? j->stragglers : "none");
	}
}

Test(rr_job, every_item_exactly_once_with_helpers)
{
	long runs = frr_test_quick() ? 4 : 16;
	double items = 0;

	for (long r = 0; r < runs; r++) {
		struct job_cfg j = {
			.P = 1 + (int)(r % 2),
			.T = 2 + (int)(r / 2 % 2),
			.mode = r % 4 < 2 ? FRR_MODE_RR : FRR_MODE_FLEXRR,
			.clocks = 4,
			.group = 1 + (int)(r % 4),
			.seed = 100 + (uint64_t)r,
			.stragglers = "slow-worker:0.3,3",
		};
		int rows;
		double s;

		j.slack = j.mode == FRR_MODE_RR ? 0 : (int)(r / 4 % 4);
		/* 2-rank flexrr jobs with slack: eager shards */
		j.eager = j.mode == FRR_MODE_FLEXRR && j.slack && (r & 1);
		g_args = (struct cnt_args){ .items = 48,
					    .state = (int)(r / 3 % 2),
					    .clocks = j.clocks,
					    .delay_us = 300 };
		snprintf(j.metrics, sizeof(j.metrics), "/tmp/rr-job-%d.csv",
			 getpid());
		run_ok(&j);
		s = metrics_sum(j.metrics, 13, &rows);
		cr_assert_eq(rows, j.P * j.T * j.clocks, "metrics rows");
		items += s;
		/* the runtime's own SSP checker: no stale read */
		cr_assert_eq(metrics_sum(j.metrics, 8, &rows), 0,
			     "stale reads with helpers");
		unlink(j.metrics);
	}
	cr_assert_gt(items, 0,
		     "no item was ever reassigned: the test does "
		     "not exercise RapidReassignment");
	cr_log_info("%ld jobs, %.0f items reassigned", runs, items);
}

/* j on the first backend under test with its stderr (every rank's) into
 * buf: the job's exit. */
static int run_captured(struct job_cfg *j, char *buf, size_t len)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	size_t n;
	FILE *e;
	int rc;

	frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	j->backend = bs[0];
	cr_redirect_stderr();
	rc = frr_launch_local(j->P, job_main, j, RR_JOB_BOUND_MS);
	fflush(stderr);
	e = cr_get_redirected_stderr();
	n = fread(buf, 1, len - 1, e);
	buf[n] = 0;
	return rc;
}

/*
 * Partitions over 2^22 - 1 items (Netflix over 16 workers: 6.3 M ratings
 * a partition): the progress words count them in units of 2^shift items
 * (core.h frr_prog_shift), and the engine reads those back as items.
 * Every item of every clock exactly once (each clock's count, each item's
 * state, each row's total at the end) while helpers run a 3x straggler's
 * tails.  Host and plain stage only: 25 M item runs.
 */
Test(rr_job, partitions_over_2_22_items_exactly_once)
{
	struct job_cfg j = {
		.P = 2,
		.T = 1,
		.mode = FRR_MODE_FLEXRR,
		.slack = 1,
		.clocks = 3,
		.group = 1,
		.seed = 5,
		.stragglers = "persistent:1,3",
	};
	static char buf[65536];
	int rows;

	if (frr_test_quick() || frr_test_sanitizer())
		cr_skip_test("25 M item runs: the plain stage on the host");
	g_args = (struct cnt_args){ .items = (1u << 22) + 1000,
				    .state = 1,
				    .clocks = j.clocks,
				    .big = 1 };
	cr_assert_gt(frr_prog_shift(g_args.items), 0);
	snprintf(j.metrics, sizeof(j.metrics), "/tmp/rr-big-%d.csv", getpid());
	cr_assert_eq(run_captured(&j, buf, sizeof(buf)), 0,
		     "the job failed:\n%s", buf);
	/* a list's end read short of its n (units rounded down) left the
	 * helpers waiting for a final word until the rr timeout */
	cr_assert(!strstr(buf, "warning") && !strstr(buf, "error"),
		  "the job warned:\n%s", buf);
	cr_assert_gt(metrics_sum(j.metrics, 13, &rows), 0,
		     "nothing reassigned: the coarse progress words were not "
		     "exercised");
	unlink(j.metrics);
}

/*
 * One fast worker helps three slow ones, so it sends its batches out of
 * clock order: help for clock c after its own batch of clock c + 1.  The
 * update-batch slots were once used in ring order, and a help batch of
 * clock c then waited for the slot of a batch that the shard takes only
 * after clock c is complete: the job hung (issue 14; this configuration
 * hung in 7 of 10 runs of `flexrr run -n 1 -t 4 --mode flexrr --slack 1
 * --clocks 40 --stragglers persistent:0,10+... toy`).
 */
Test(rr_job, a_fast_helper_of_slow_workers_never_blocks_on_its_batches)
{
	long runs = frr_test_quick() ? 2 : 3;

	for (long r = 0; r < runs; r++) {
		struct job_cfg j = {
			.P = 1,
			.T = 4,
			.mode = FRR_MODE_FLEXRR,
			.slack = 1,
			.clocks = frr_test_quick() ? 20 : 40,
			.seed = 300 + (uint64_t)r,
			.stragglers = "persistent:0,10+persistent:1,10+"
				      "persistent:3,10",
		};

		g_args = (struct cnt_args){ .items = 64,
					    .clocks = j.clocks,
					    .delay_us = 200 };
		run_ok(&j);
	}
}

/* Worker 0, a 6x straggler of 2 x 2 workers with group 1 (its only helper
 * is on the other rank), has items run with their item state elsewhere:
 * the counting app fails the job on any item whose state is not the clock
 * it runs in. */
static void state_travels(enum frr_mode mode, int slack, int clocks,
			  uint64_t seed)
{
	struct job_cfg j = { .P = 2,
			     .T = 2,
			     .mode = mode,
			     .slack = slack,
			     .clocks = clocks,
			     .group = 1,
			     .seed = seed,
			     .stragglers = "persistent:0,6" };
	int rows;

	g_args = (struct cnt_args){
		.items = 48, .state = 1, .clocks = j.clocks, .delay_us = 200
	};
	snprintf(j.metrics, sizeof(j.metrics), "/tmp/rr-job-st-%d.csv",
		 getpid());
	run_ok(&j);
	cr_assert_gt(metrics_sum(j.metrics, 13, &rows), 0,
		     "worker 0 had no item run by its helper");
	unlink(j.metrics);
}

Test(rr_job, item_state_travels_to_remote_helpers)
{
	state_travels(FRR_MODE_FLEXRR, 1, 5, 7);
}

/* lb-bsp's planned tails carry their item state too (every clock from the
 * fourth: the default history is 3). */
Test(rr_job, item_state_travels_with_lb_bsp_tails)
{
	state_travels(FRR_MODE_LB_BSP, 0, 6, 9);
}

Test(rr_job, helper_killed_while_helping_fails_naming_it)
{
	struct job_cfg j = { .P = 2,
			     .T = 1,
			     .mode = FRR_MODE_RR,
			     .clocks = 6,
			     .group = 1,
			     .seed = 3,
			     .dead_ms = 1000,
			     .stragglers = "persistent:0,20" };
	static char buf[65536];

	g_args = (struct cnt_args){ .items = 48,
				    .clocks = j.clocks,
				    .delay_us = 200,
				    .die_helping = 1 };
	cr_assert_neq(run_captured(&j, buf, sizeof(buf)), 0,
		      "the job survived a dead helper");
	cr_assert(strstr(buf, "helper worker 1 (rank 1)"),
		  "no message names the dead helper:\n%s", buf);
}

/*
 * One rank of a job whose ranks a launcher started, each maybe on its own
 * host (scripts/test-2vm.sh: one rank per soft-RoCE VM): rank, size,
 * rendezvous address and job token come from FLEXRR_RANK, FLEXRR_SIZE,
 * FLEXRR_RENDEZVOUS and FLEXRR_JOB_TOKEN, as `flexrr run` reads them.  One
 * thread per rank and one helper per worker: worker 0 (rank 0) is a
 * persistent straggler whose only helper is worker 1 (rank 1), so its items
 * and their state travel between the hosts; the counting app fails the job
 * on any item done twice or never.  Rank 0 checks in the metrics that
 * worker 0 was helped.  Skipped in a plain test run (FLEXRR_RANK unset).
 */
Test(rr_job, launcher_started_rank_across_hosts, .timeout = 300)
{
	struct frr_launcher_env env;
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	struct frr_oob *oob = NULL;
	struct frr_job_secret secret;
	struct job_cfg j = { .T = 1,
			     .mode = FRR_MODE_FLEXRR,
			     .slack = 1,
			     .clocks = 6,
			     .group = 1,
			     .seed = 11,
			     .stragglers = "persistent:0,4" };
	int rank, rows, rc;
	double helped;

	if (!getenv("FLEXRR_RANK") || !frr_launcher_env(&env))
		cr_skip_test("not started by a launcher (FLEXRR_RANK unset)");
	cr_assert(env.rendezvous && env.job_token,
		  "set FLEXRR_RENDEZVOUS and FLEXRR_JOB_TOKEN as well as "
		  "FLEXRR_RANK and FLEXRR_SIZE");
	rank = env.rank;
	j.P = env.size;
	cr_assert(j.P >= 2 && rank >= 0 && rank < j.P, "rank %d of %d", rank,
		  j.P);
	frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	j.backend = bs[0];
	g_args = (struct cnt_args){
		.items = 48, .state = 1, .clocks = j.clocks, .delay_us = 2000
	};
	snprintf(j.metrics, sizeof(j.metrics), "/tmp/rr-job-launch-%d.csv",
		 getpid());
	frr_log_set_rank(rank);
	cr_assert_eq(frr_job_secret_require(&secret, rank), 0,
		     "FLEXRR_JOB_TOKEN refused (message above)");
	rc = frr_tcp_open(
	    &(struct frr_tcp_cfg){ .addr = env.rendezvous,
				   .listen_fd = -1,
				   .rank = rank,
				   .size = j.P,
				   .secret = &secret,
				   .binary_hash = frr_binary_hash(),
				   .timeout_ms = 30000 },
	    &oob);
	cr_assert_eq(rc, 0, "rank %d: rendezvous at %s failed", rank,
		     env.rendezvous);
	rc = job_main(oob, &j);
	frr_oob_close(oob);
	cr_assert_eq(rc, 0, "rank %d: the job failed (messages above)", rank);
	if (rank)
		return;
	helped = metrics_sum_of(j.metrics, 13, 0, &rows);
	cr_assert_eq(rows, j.clocks, "metrics rows of worker 0");
	cr_assert_gt(helped, 0,
		     "worker 0 (a persistent straggler) was never helped by "
		     "worker 1 on the other host");
	cr_assert_eq(metrics_sum(j.metrics, 8, &rows), 0,
		     "stale reads with helpers");
	/* scripts/test-2vm.sh reports this line */
	printf("rr_job: worker 0 on rank 0: %.0f items done by worker 1 on "
	       "rank 1 in %d clocks; every item exactly once\n",
	       helped, j.clocks);
	fflush(stdout);
	unlink(j.metrics);
}
