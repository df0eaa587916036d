// SPDX-License-Identifier: MIT
/*
 * RapidReassignment protocol engine on an in-process fake runtime: W worker
 * threads in P logical ranks, mailboxes as locked queues, progress words as
 * atomics, an SSP barrier of finished clocks, per-item processing counters
 * and per-item state.  Hundreds of seeded runs with random per-item delays
 * sample real-thread interleavings and check the invariants of
 * docs/protocol.md:
 *   - every item of every clock is processed exactly once;
 *   - a worker ends clock c only when every item of its clock c is done;
 *   - no item is processed before the staleness bound allows (SSP);
 *   - item state stays consistent (state == clock when processed), also when
 *     it travels to a helper of another rank (state_push / write-back);
 *   - no deadlock for slack 0..3 and group sizes 1..4.
 * Also a helper that dies while helping, and forged messages.  The
 * CancelHelp / BegunHelping races are forced on the deterministic scheduler
 * in test_rr_cancel.c; test_rr_explore.c enumerates every interleaving of
 * small configurations.
 * The end-to-end suite (test_rr_job.c) runs the same invariants through the
 * real runtime and transports.
 *
 * Wall-clock bounds: the threaded runs give every engine wait 120 s
 * (FAKE_TIMEOUT_MS; a deadlock is found by the deterministic suites, this
 * only bounds a stall of the machine) and the suite 600 s per test.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rr/rr_proto.h"
#include "trace/trace.h"
#include "test_util.h"

/* generous: the threaded runs share 2 cores with other jobs */
TestSuite(rr_proto, .timeout = 600);

#define FAKE_TIMEOUT_MS 120000

#define MAXW 8
#define MAXC 8
#define MAXN 96
#define QCAP 256

struct fq {
	pthread_mutex_t lock;
	struct frr_rr_msg m[QCAP];
	int head, n;
};

struct fake {
	struct rr_config cfg;
	int C, slack;
	uint64_t n[MAXW];
	/* per (worker, item): slow-down in us, drawn per run */
	int delay_us[MAXW][MAXC];
	_Atomic int count[MAXW][MAXC][MAXN];
	/* item state: authoritative on the owner's rank, a copy per rank */
	_Atomic uint64_t state[4][MAXW][MAXN];
	_Atomic uint64_t prog[MAXW];
	_Atomic int finished[MAXW]; /* clocks completed */
	_Atomic int violations;
	struct fq q[MAXW];
	struct rr_clock_counters counters[RR_CLOCK_RING];
	struct rr_worker rw[MAXW];
	int rc[MAXW];
	_Atomic int dead_helper; /* -1, or a helper that stops answering */
};

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

static int f_send(void *env, int from, int to, const struct frr_rr_msg *m)
{
	struct fake *f = env;
	struct fq *q = &f->q[to];
	int err = 0;

	pthread_mutex_lock(&q->lock);
	if (q->n == QCAP) {
		err = -EAGAIN;
	} else {
		q->m[(q->head + q->n) % QCAP] = *m;
		q->m[(q->head + q->n) % QCAP].from = from;
		q->n++;
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}

static int f_recv(void *env, int w, struct frr_rr_msg *m, int timeout_ms)
{
	struct fake *f = env;
	struct fq *q = &f->q[w];
	uint64_t end = frr_trace_now() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		int got = 0;

		pthread_mutex_lock(&q->lock);
		if (q->n) {
			*m = q->m[q->head];
			q->head = (q->head + 1) % QCAP;
			q->n--;
			got = 1;
		}
		pthread_mutex_unlock(&q->lock);
		if (got)
			return 1;
		if (frr_trace_now() >= end)
			return 0;
		sleep_us(20);
	}
}

static struct frr_progress f_progress(void *env, int v)
{
	struct fake *f = env;

	return frr_prog_unpack(atomic_load(&f->prog[v]));
}

static int f_publish(void *env, int w, int clock,
		     const struct frr_rr_list *list)
{
	struct fake *f = env;

	atomic_store(&f->prog[w], frr_prog_pack(clock, list->next, list->end));
	return 0;
}

static int min_finished(struct fake *f)
{
	int m = f->C;

	for (int v = 0; v < f->cfg.W; v++)
		if (atomic_load(&f->finished[v]) < m)
			m = atomic_load(&f->finished[v]);
	return m;
}

/* process one item of (owner, clock) on a thread of rank 'rank' */
static void process_item(struct fake *f, int rank, int owner, int clock,
			 uint64_t i)
{
	uint64_t st;

	atomic_fetch_add(&f->count[owner][clock][i], 1);
	/* SSP: clocks <= clock - slack - 1 of every worker are complete */
	if (min_finished(f) < clock - f->slack)
		atomic_fetch_add(&f->violations, 1);
	st = atomic_load(&f->state[rank][owner][i]);
	if (st != (uint64_t)clock)
		atomic_fetch_add(&f->violations, 1);
	atomic_store(&f->state[rank][owner][i], st + 1);
}

static int f_run_range(void *env, int helper, int owner, int clock, uint64_t a,
		       uint64_t b)
{
	struct fake *f = env;
	int hr = helper / f->cfg.T, orank = owner / f->cfg.T;

	if (atomic_load(&f->dead_helper) == helper) {
		/* dies while helping: never returns an answer */
		for (;;)
			sleep_us(100000);
	}
	for (uint64_t i = a; i < b; i++) {
		process_item(f, hr, owner, clock, i);
		sleep_us(f->delay_us[helper][clock] / 4);
	}
	/* write-back of the item states to the owner's copy */
	if (hr != orank)
		for (uint64_t i = a; i < b; i++)
			atomic_store(&f->state[orank][owner][i],
				     atomic_load(&f->state[hr][owner][i]));
	return 0;
}

static int f_state_push(void *env, int owner, int helper, uint64_t a,
			uint64_t b)
{
	struct fake *f = env;
	int hr = helper / f->cfg.T, orank = owner / f->cfg.T;

	for (uint64_t i = a; i < b; i++)
		atomic_store(&f->state[hr][owner][i],
			     atomic_load(&f->state[orank][owner][i]));
	return 0;
}

static uint64_t f_nitems(void *env, int v)
{
	return ((struct fake *)env)->n[v];
}

static const struct rr_env_ops fake_ops = {
	.send = f_send,
	.recv = f_recv,
	.progress = f_progress,
	.publish = f_publish,
	.run_range = f_run_range,
	.state_push = f_state_push,
	.nitems = f_nitems,
};

struct wargs {
	struct fake *f;
	int w;
};

static int worker_clock(struct fake *f, struct rr_worker *rw, int w, int c)
{
	struct frr_rr_list list = { 0, f->n[w], f->n[w] };
	int k, err, rank = w / f->cfg.T;

	err = rr_clock_begin(rw, c);
	if (err)
		return err;
	while (min_finished(f) < c - f->slack) {
		err = rr_idle(rw, c);
		if (err)
			return err;
		sleep_us(50);
	}
	f_publish(f, w, c, &list);
	for (;;) {
		while (list.next < list.end) {
			process_item(f, rank, w, c, list.next);
			sleep_us(f->delay_us[w][c]);
			list.next++;
			f_publish(f, w, c, &list);
			err = rr_progress_check(rw, c, &list);
			if (err)
				return err;
		}
		k = rr_own_list_done(rw, c, &list);
		if (k < 0)
			return k;
		if (list.next == list.end)
			break;
	}
	/* the runtime's final word of the clock: (c, n, n) */
	list.next = list.end = list.n;
	f_publish(f, w, c, &list);
	/* the helpee ends its clock only when all its items are done */
	for (uint64_t i = 0; i < f->n[w]; i++)
		if (atomic_load(&f->count[w][c][i]) != 1)
			atomic_fetch_add(&f->violations, 1);
	atomic_store(&f->finished[w], c + 1);
	return rr_clock_end(rw, c);
}

static void *worker_main(void *arg)
{
	struct wargs *wa = arg;
	struct fake *f = wa->f;
	struct rr_worker *rw = &f->rw[wa->w];
	int err = 0;

	for (int c = 0; c < f->C && !err; c++)
		err = worker_clock(f, rw, wa->w, c);
	if (!err)
		err = rr_worker_exit(rw, f->C - 1);
	f->rc[wa->w] = err;
	return NULL;
}

static void fake_init(struct fake *f, int P, int T, int g, int slack, int C,
		      uint64_t seed)
{
	struct frr_rng rng;

	memset(f, 0, sizeof(*f));
	frr_rng_seed(&rng, seed);
	f->cfg = (struct rr_config){
		.P = P,
		.T = T,
		.W = P * T,
		.group_size = g,
		.threshold = 0.2,
		.min_share = 0.05,
		.max_helpers = g,
		.timeout_ms = FAKE_TIMEOUT_MS,
		.remote_ok = 1,
		.slack = slack,
		/* odd seeds: the runtime's help-batch capacity, tiny */
		.max_unapplied = seed & 1 ? 4 : 0,
	};
	f->C = C;
	f->slack = slack;
	f->dead_helper = -1;
	for (int w = 0; w < P * T; w++) {
		f->n[w] = 8 + frr_rng_below(&rng, MAXN - 8);
		for (int c = 0; c < C; c++)
			/* mostly fast, sometimes a straggler */
			f->delay_us[w][c] =
			    frr_rng_uniform(&rng) < 0.25
				? 20 + (int)frr_rng_below(&rng, 200)
				: (int)frr_rng_below(&rng, 5);
		pthread_mutex_init(&f->q[w].lock, NULL);
	}
}

static int fake_run(struct fake *f)
{
	pthread_t th[MAXW];
	struct wargs wa[MAXW];
	int W = f->cfg.W, rc = 0;

	for (int w = 0; w < W; w++)
		cr_assert_eq(rr_worker_init(&f->rw[w], &f->cfg, &fake_ops, f, w,
					    f->counters),
			     0);
	for (int w = 0; w < W; w++) {
		wa[w] = (struct wargs){ f, w };
		pthread_create(&th[w], NULL, worker_main, &wa[w]);
	}
	for (int w = 0; w < W; w++) {
		pthread_join(th[w], NULL);
		if (f->rc[w])
			rc = f->rc[w];
	}
	return rc;
}

static void fake_fini(struct fake *f)
{
	for (int w = 0; w < f->cfg.W; w++) {
		rr_worker_fini(&f->rw[w]);
		pthread_mutex_destroy(&f->q[w].lock);
	}
}

static void assert_exactly_once(struct fake *f, const char *what)
{
	for (int w = 0; w < f->cfg.W; w++)
		for (int c = 0; c < f->C; c++)
			for (uint64_t i = 0; i < f->n[w]; i++)
				cr_assert_eq(atomic_load(&f->count[w][c][i]), 1,
					     "%s: worker %d clock %d item %llu "
					     "processed %d times",
					     what, w, c, (unsigned long long)i,
					     atomic_load(&f->count[w][c][i]));
	cr_assert_eq(atomic_load(&f->violations), 0,
		     "%s: %d SSP / item-state / early-clock-end violations",
		     what, atomic_load(&f->violations));
}

static uint64_t total(struct fake *f, enum rr_counter c)
{
	uint64_t s = 0;

	for (int w = 0; w < f->cfg.W; w++)
		s += f->rw[w].tot[c];
	return s;
}

Test(rr_proto, helper_groups_are_deterministic_and_prefer_other_ranks)
{
	int g[RR_MAX_GROUP], g2[RR_MAX_GROUP], n;

	/* 2 x 4, g = 4: three on the other rank, one on ours */
	n = rr_helper_group(2, 4, 4, 1, g);
	cr_assert_eq(n, 4);
	cr_assert_eq(g[0] / 4, 1);
	cr_assert_eq(g[1] / 4, 1);
	cr_assert_eq(g[2] / 4, 1);
	cr_assert_eq(g[3] / 4, 0);
	for (int P = 1; P <= 4; P++)
		for (int T = 1; T <= 4; T++)
			for (int gs = 1; gs <= 6; gs++)
				for (int w = 0; w < P * T; w++) {
					n = rr_helper_group(P, T, gs, w, g);
					cr_assert_eq(
					    rr_helper_group(P, T, gs, w, g2),
					    n);
					cr_assert_eq(
					    n, gs < P * T - 1 ? gs : P * T - 1);
					for (int i = 0; i < n; i++) {
						cr_assert_eq(g[i], g2[i]);
						cr_assert_neq(g[i], w);
						cr_assert(g[i] >= 0 &&
							  g[i] < P * T);
						for (int j = 0; j < i; j++)
							cr_assert_neq(g[i],
								      g[j]);
					}
					/* g = 1 or 2 on several ranks:
					 * all remote */
					if (P > 1 && gs <= 2)
						for (int i = 0; i < n; i++)
							cr_assert_neq(g[i] / T,
								      w / T);
				}
}

Test(rr_proto, exactly_once_over_many_seeded_runs)
{
	long runs = frr_test_scale(240), reassigned = 0, cancelled = 0;
	static struct fake f;

	for (long r = 0; r < runs; r++) {
		int P = 1 + (int)(r % 2), T = 2 + (int)(r / 2 % 3);
		int g = 1 + (int)(r / 6 % 4), slack = (int)(r / 24 % 4);

		if (P * T > MAXW)
			T = MAXW / P;
		fake_init(&f, P, T, g, slack, 4, 1000 + (uint64_t)r);
		cr_assert_eq(
		    fake_run(&f), 0,
		    "run %ld (P %d T %d g %d s %d) failed (the engine's "
		    "message above; its waits are bounded by %d ms)",
		    r, P, T, g, slack, FAKE_TIMEOUT_MS);
		assert_exactly_once(&f, "seeded run");
		reassigned += (long)total(&f, RR_C_ITEMS);
		cancelled += (long)total(&f, RR_C_CANCELLED);
		fake_fini(&f);
	}
	/* the runs must actually exercise reassignment */
	cr_assert_gt(reassigned, 0, "no item was ever reassigned");
	cr_log_info("%ld runs: %ld items reassigned, %ld offers cancelled",
		    runs, reassigned, cancelled);
}

Test(rr_proto, no_deadlock_for_every_slack_and_group_size)
{
	static struct fake f;

	for (int slack = 0; slack <= 3; slack++)
		for (int g = 1; g <= 4; g++) {
			fake_init(&f, 2, 3, g, slack, 6,
				  (uint64_t)(slack * 10 + g));
			/* one persistent straggler keeps offers flowing */
			for (int c = 0; c < 6; c++)
				f.delay_us[0][c] = 300;
			cr_assert_eq(
			    fake_run(&f), 0,
			    "slack %d g %d failed (the engine's message "
			    "above; its waits are bounded by %d ms)",
			    slack, g, FAKE_TIMEOUT_MS);
			assert_exactly_once(&f, "slack/group sweep");
			cr_assert_gt(total(&f, RR_C_OFFERS), 0);
			fake_fini(&f);
		}
}

/* ---- a helper that dies while helping (real threads, real time) --------- */

Test(rr_proto, dead_helper_fails_with_its_name_in_bounded_time)
{
	static struct fake f;
	const double bound_s = 60;
	double took;
	int rc;

	fake_init(&f, 1, 2, 1, 0, 2, 77);
	f.n[0] = f.n[1] = 64;
	for (int c = 0; c < 2; c++) {
		f.delay_us[0][c] = 400; /* the straggler */
		f.delay_us[1][c] = 0;
	}
	f.cfg.timeout_ms = 500;
	f.dead_helper = 1;
	cr_redirect_stderr();
	for (int w = 0; w < 2; w++)
		rr_worker_init(&f.rw[w], &f.cfg, &fake_ops, &f, w, f.counters);
	{
		pthread_t th;
		struct wargs wa = { &f, 0 };
		uint64_t t0 = frr_trace_now();

		/* only the helpee runs to completion; the helper's thread
		 * is stuck forever in run_range, so run it detached */
		static struct wargs wb;

		wb = (struct wargs){ &f, 1 };
		pthread_create(&th, NULL, worker_main, &wb);
		pthread_detach(th);
		worker_main(&wa);
		took = (double)(frr_trace_now() - t0) / 1e9;
	}
	rc = f.rc[0];
	cr_assert(rc == -ETIMEDOUT, "helpee returned %d", rc);
	/* generous: the 0.5 s rr timeout plus the helpee's own items on a
	 * loaded machine */
	cr_assert_lt(
	    took, bound_s,
	    "the helpee needed %.1f s to report the dead helper: its rr "
	    "timeout is 0.5 s, the test allows %.0f s",
	    took, bound_s);
	fflush(stderr);
	{
		char buf[8192] = "";
		FILE *e = cr_get_redirected_stderr();
		size_t n = fread(buf, 1, sizeof(buf) - 1, e);

		buf[n] = '\0';
		cr_assert(strstr(buf, "helper worker 1 (rank 0)"),
			  "error does not name the helper: %s", buf);
	}
}

/* Messages are peer-written: a forged one is refused (-EPROTO) with an
 * error naming the sender's worker and rank, never acted on (issue 10,
 * item 4; fuzz/fuzz_rr_mailbox.c explores the rest). */
Test(rr_proto, forged_messages_are_refused_naming_the_sender)
{
	static struct fake f;
	const struct frr_rr_msg bad[] = {
		/* range beyond the helpee's partition */
		{ .type = RR_MSG_DO_THIS,
		  .from = 2,
		  .to = 1,
		  .clock = 0,
		  .a = 0,
		  .b = 1ull << 40 },
		/* empty range, negative clock */
		{ .type = RR_MSG_DO_THIS, .from = 2, .to = 1, .a = 5, .b = 5 },
		{ .type = RR_MSG_DO_THIS,
		  .from = 2,
		  .to = 1,
		  .clock = -3,
		  .a = 0,
		  .b = 1 },
		/* an answer to an offer never made */
		{ .type = RR_MSG_COMPLETED,
		  .from = 2,
		  .to = 1,
		  .a = 0,
		  .b = 1,
		  .w = { 77 } },
		{ .type = 1000, .from = 2, .to = 1 },
	};
	char buf[16384] = "";
	FILE *e;
	size_t n;

	fake_init(&f, 2, 2, 3, 1, 2, 0);
	cr_redirect_stderr();
	rr_worker_init(&f.rw[1], &f.cfg, &fake_ops, &f, 1, f.counters);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		cr_assert_eq(rr_msg_handle(&f.rw[1], &bad[i]), -EPROTO,
			     "forged message %zu accepted", i);
		cr_assert_eq(f.rw[1].ntasks, 0, "forged message %zu queued", i);
	}
	fflush(stderr);
	e = cr_get_redirected_stderr();
	n = fread(buf, 1, sizeof(buf) - 1, e);
	buf[n] = '\0';
	cr_assert(strstr(buf, "from worker 2 (rank 1"),
		  "the error does not name the sender: %s", buf);
	fake_fini(&f);
}
