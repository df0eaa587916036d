// SPDX-License-Identifier: MIT
/*
 * Threads that send in parallel (transport.h "Threading"): every rank's T
 * threads each open their own no-notify ctx, connect it to every peer's
 * main ctx (which accepts them beside its mesh) and write their own slot of
 * every peer at the same time, without a lock.  Every slot ends up with
 * exactly its thread's last round; a thread's ctx refuses to notify.  The
 * main ctx accepts them with FRR_TP_NOWAIT polls, which say -EAGAIN while
 * nobody knocks.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>

#include "flexrr/base.h"
#include "test_util.h"

TestSuite(transport_threads, .timeout = 120);

#define T 3
#define SLOT 8192 /* per thread of the job; counters after the slots */

struct job {
	struct frr_oob *oob; /* its fields are only read by the threads */
	enum frr_tp_backend backend;
	struct frr_test_mesh m;
	struct frr_tp_addr *addrs;
	struct frr_tp_desc *descs;
	struct frr_tp_mr *mr;
	struct frr_tp_ep **in; /* the peers' threads, accepted here */
	int nin, accept_err;
	long rounds;
};

struct thread {
	struct job *j;
	int t, err;
	struct frr_tp_ctx *ctx;
	struct frr_tp_mr *src;
	struct frr_tp_ep *ep[16];
	struct frr_tp_rmr *rmr[16];
};

static size_t counter_off(int nranks, int w)
{
	return (size_t)nranks * T * SLOT + (size_t)w * 8;
}

static size_t region_len(int nranks)
{
	return counter_off(nranks, nranks * T);
}

static unsigned char pattern(int w, long round, size_t i)
{
	return (unsigned char)(w * 29 + round * 7 + i);
}

static void *accept_main(void *arg)
{
	struct job *j = arg;
	long long dl = frr_now_ms() + FRR_TEST_TIMEOUT_MS;

	for (int i = 0; i < j->nin && !j->accept_err;) {
		j->accept_err =
		    frr_tp_ep_accept(j->m.ctx, FRR_TP_NOWAIT, &j->in[i]);
		if (!j->accept_err)
			i++;
		else if (j->accept_err == -EAGAIN && frr_now_ms() < dl)
			j->accept_err = 0, frr_nap_us(200);
	}
	return NULL;
}

static int sender_open(struct thread *th)
{
	struct job *j = th->j;
	struct frr_tp_config cfg = frr_test_config(j->oob, j->backend);
	int ret;

	cfg.flags = FRR_TP_CFG_NO_NOTIFY;
	ret = frr_tp_open(&cfg, &th->ctx);
	FRR_CHECK(!ret, "thread %d: open: %d", th->t, ret);
	ret = frr_tp_mr_alloc(th->ctx, SLOT, FRR_TP_ACCESS_LOCAL, &th->src);
	FRR_CHECK(!ret, "thread %d: alloc: %d", th->t, ret);
	for (int r = 0; r < j->m.nranks; r++) {
		if (r == j->m.rank)
			continue;
		ret = frr_tp_ep_connect(th->ctx, &j->addrs[r],
					FRR_TEST_TIMEOUT_MS, &th->ep[r]);
		FRR_CHECK(!ret, "thread %d: connect to %d: %d", th->t, r, ret);
		ret = frr_tp_rmr_import(th->ep[r], &j->descs[r], &th->rmr[r]);
		FRR_CHECK(!ret, "thread %d: import from %d: %d", th->t, r, ret);
	}
	return 0;
}

/* This thread's slot of every peer, j->rounds times, each round published
 * by its counter (G3 per endpoint). */
static int sender(struct thread *th)
{
	struct job *j = th->j;
	int n = j->m.nranks, w = j->m.rank * T + th->t;
	unsigned char *s;
	int ret = sender_open(th);

	if (ret)
		return ret;
	s = frr_tp_mr_ptr(th->src);
	ret = frr_tp_write_notify(th->ep[(j->m.rank + 1) % n], th->src, 0,
				  th->rmr[(j->m.rank + 1) % n], 0, 8, 1, 0, 0);
	FRR_CHECK(ret == -EOPNOTSUPP, "a no-notify ctx notified: %d", ret);
	for (long round = 1; round <= j->rounds; round++)
		for (int k = 1; k < n; k++) {
			int r = (j->m.rank + k) % n;

			/* src is reused: the last write must be out */
			ret = frr_tp_flush(th->ep[r], FRR_TEST_TIMEOUT_MS);
			FRR_CHECK(!ret, "flush: %d", ret);
			for (size_t i = 0; i < SLOT; i++)
				s[i] = pattern(w, round, i);
			ret = frr_tp_write(th->ep[r], th->src, 0, th->rmr[r],
					   (size_t)w * SLOT, SLOT, 0, 0);
			FRR_CHECK(!ret, "write to %d: %d", r, ret);
			ret = frr_tp_write_u64(th->ep[r], th->rmr[r],
					       counter_off(n, w),
					       (uint64_t)round, 0, 0);
			FRR_CHECK(!ret, "counter to %d: %d", r, ret);
		}
	for (int r = 0; r < n; r++)
		if (th->ep[r]) {
			ret = frr_tp_flush(th->ep[r], FRR_TEST_TIMEOUT_MS);
			FRR_CHECK(!ret, "flush to %d: %d", r, ret);
		}
	return 0;
}

static void *sender_main(void *arg)
{
	struct thread *th = arg;

	th->err = sender(th);
	return NULL;
}

static void sender_close(struct thread *th)
{
	for (int r = 0; r < 16; r++) {
		if (th->rmr[r])
			frr_tp_rmr_release(th->rmr[r]);
		if (th->ep[r])
			frr_tp_ep_close(th->ep[r]);
	}
	if (th->src)
		frr_tp_mr_free(th->src);
	if (th->ctx)
		frr_tp_close(th->ctx);
}

/* Every other rank's threads' slots hold their last round, ours are 0. */
static int check_slots(struct job *j)
{
	const unsigned char *dst = frr_tp_mr_ptr(j->mr);
	int n = j->m.nranks;

	for (int w = 0; w < n * T; w++) {
		int mine = w / T == j->m.rank;
		int ret = mine ? 0
			       : frr_test_wait_u64(dst + counter_off(n, w),
						   (uint64_t)j->rounds,
						   FRR_TEST_TIMEOUT_MS);

		FRR_CHECK(!ret, "thread %d never finished", w);
		for (size_t i = 0; i < SLOT; i++) {
			unsigned char want =
			    mine ? 0 : pattern(w, j->rounds, i);

			FRR_CHECK(dst[(size_t)w * SLOT + i] == want,
				  "slot of thread %d, byte %zu: %02x, want "
				  "%02x",
				  w, i, dst[(size_t)w * SLOT + i], want);
		}
	}
	return 0;
}

static int job_open(struct frr_oob *oob, struct job *j)
{
	int n = oob->size, ret;

	FRR_CHECK(n <= 16, "at most 16 ranks");
	/* the mesh, the peers' threads and a few spare */
	ret = frr_test_mesh_open_eps(oob, j->backend, (n - 1) * (1 + T) + 3,
				     &j->m, &j->addrs);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret = frr_tp_mr_alloc(j->m.ctx, region_len(n),
			      FRR_TP_ACCESS_REMOTE_WRITE, &j->mr);
	FRR_CHECK(!ret, "alloc: %d", ret);
	j->descs = calloc((size_t)n, sizeof(*j->descs));
	j->nin = (n - 1) * T;
	j->in = calloc((size_t)j->nin, sizeof(*j->in));
	FRR_CHECK(j->descs && j->in, "calloc");
	ret = frr_test_share_desc(oob, j->mr, j->descs);
	FRR_CHECK(!ret, "share: %d", ret);
	/* nobody knocks before the barrier: a poll says so, at once */
	ret = frr_tp_ep_accept(j->m.ctx, FRR_TP_NOWAIT, &j->in[0]);
	FRR_CHECK(ret == -EAGAIN, "an accept with FRR_TP_NOWAIT: %d", ret);
	/* every mesh is up before a thread knocks */
	return frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
}

static int threads_write(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct job j = { .oob = oob,
			 .backend = a->backend,
			 .rounds = a->iters };
	struct thread th[T] = { 0 };
	pthread_t acc, tid[T];
	int ret = job_open(oob, &j);

	FRR_CHECK(!ret, "open: %d", ret);
	FRR_CHECK(!pthread_create(&acc, NULL, accept_main, &j), "thread");
	for (int t = 0; t < T; t++) {
		th[t] = (struct thread){ .j = &j, .t = t };
		FRR_CHECK(!pthread_create(&tid[t], NULL, sender_main, &th[t]),
			  "thread");
	}
	for (int t = 0; t < T; t++)
		pthread_join(tid[t], NULL);
	pthread_join(acc, NULL);
	FRR_CHECK(!j.accept_err, "accept: %d", j.accept_err);
	for (int t = 0; t < T; t++)
		FRR_CHECK(!th[t].err, "thread %d: %d", t, th[t].err);
	ret = check_slots(&j);
	FRR_CHECK(!ret, "check: %d", ret);
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	for (int t = 0; t < T; t++)
		sender_close(&th[t]);
	for (int i = 0; i < j.nin; i++)
		frr_tp_ep_close(j.in[i]);
	frr_tp_mr_free(j.mr);
	frr_test_mesh_close(&j.m);
	free(j.in);
	free(j.descs);
	free(j.addrs);
	return 0;
}

Test(transport_threads, each_thread_its_own_ctx_writes_in_parallel)
{
	struct frr_test_arg a = { .iters = frr_test_scale(100) };

	FRR_TEST_RUN(frr_test_quick() ? 2 : 3, threads_write, &a, 110000);
}

/* An endpoint count or flag the API does not know is refused at open
 * (nothing is opened); the largest count is not. */
Test(transport_threads, bad_max_eps_or_flags_refused)
{
	struct frr_tp_config ok = { .backend = FRR_TP_BACKEND_SHM,
				    .rank = 0,
				    .nranks = 1 };
	struct frr_tp_config bad[] = { ok, ok, ok };
	struct frr_tp_ctx *ctx = NULL;

	bad[0].max_eps = -1;
	bad[1].max_eps = FRR_TP_MAX_EPS + 1;
	bad[2].flags = 1u << 7;
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(frr_tp_open(&bad[i], &ctx), -EINVAL, "config %d",
			     i);
		cr_assert_null(ctx);
	}
	ok.max_eps = FRR_TP_MAX_EPS;
	cr_assert_eq(frr_tp_open(&ok, &ctx), 0);
	frr_tp_close(ctx);
}
