// SPDX-License-Identifier: MIT
/*
 * verbs counter writes by atomics (the path a target on an rxe host with
 * ERMS/FSRM asks for, forced here with FLEXRR_VERBS_U64=cas): values land,
 * and a swap that meets another writer's value is redone so the writer's
 * last value is in place when its flush returns.  Skipped without an RDMA
 * device; run for real in the soft-RoCE VM (scripts/test-verbs.sh).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "test_util.h"

TestSuite(verbs_counters, .timeout = 120);

static void need_verbs(void)
{
	if (!frr_tp_backend_available(FRR_TP_BACKEND_VERBS))
		cr_skip_test("no RDMA device with an ACTIVE port (run "
			     "scripts/test-verbs.sh: it uses the soft-RoCE "
			     "VM)");
}

struct setup {
	struct frr_test_mesh m;
	struct frr_tp_mr *mr;
	struct frr_tp_rmr *rmr; /* rank 0's region, on ranks > 0 */
};

static int open_all(struct frr_oob *oob, struct setup *s)
{
	struct frr_tp_desc all[3];
	int ret;

	ret = frr_test_mesh_open(oob, FRR_TP_BACKEND_VERBS, &s->m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret =
	    frr_tp_mr_alloc(s->m.ctx, 4096, FRR_TP_ACCESS_REMOTE_WRITE, &s->mr);
	FRR_CHECK(!ret, "mr: %d", ret);
	ret = frr_test_share_desc(oob, s->mr, all);
	FRR_CHECK(!ret, "share: %d", ret);
	s->rmr = NULL;
	if (s->m.rank > 0) {
		ret = frr_tp_rmr_import(s->m.eps[0], &all[0], &s->rmr);
		FRR_CHECK(!ret, "import: %d", ret);
	}
	return 0;
}

static void close_all(struct setup *s)
{
	frr_tp_rmr_release(s->rmr);
	frr_tp_mr_free(s->mr);
	frr_test_mesh_close(&s->m);
}

static uint64_t counter(struct setup *s, size_t off)
{
	return frr_tp_load_u64((char *)frr_tp_mr_ptr(s->mr) + off);
}

/* One writer, four counters, a concurrent reader: values only grow. */
static int one_writer(struct frr_oob *oob, void *arg)
{
	long n = frr_test_scale(20000);
	struct setup s;
	int ret;

	(void)arg;
	ret = open_all(oob, &s);
	if (ret)
		return ret;
	if (s.m.rank == 1) {
		for (long k = 1; k <= n && !ret; k++)
			ret = frr_tp_write_u64(
			    s.m.eps[0], s.rmr, (size_t)(k % 4) * 8, (uint64_t)k,
			    (uint64_t)k, k == n ? FRR_TP_F_SIGNAL : 0);
		FRR_CHECK(!ret, "write_u64: %d", ret);
		ret = frr_tp_flush(s.m.eps[0], 30000);
		FRR_CHECK(!ret, "flush: %d", ret);
		struct frr_tp_wc wc;
		FRR_CHECK(frr_tp_poll(s.m.ctx, &wc, 1) == 1 &&
			      wc.wr_id == (uint64_t)n && wc.status == 0,
			  "the signaled counter write completes once");
	} else {
		uint64_t last[4] = { 0 };
		int done = 0;

		for (long spins = 0; done < 4; spins++) {
			done = 0;
			for (int i = 0; i < 4; i++) {
				uint64_t v = counter(&s, (size_t)i * 8);
				long want = n - ((n - i) % 4 + 4) % 4;

				FRR_CHECK(v >= last[i] && (long)v <= want &&
					      (v == 0 || (long)v % 4 == i),
					  "counter %d went %llu -> %llu", i,
					  (unsigned long long)last[i],
					  (unsigned long long)v);
				last[i] = v;
				done += (long)v == want;
			}
			FRR_CHECK(spins < 4000000000L, "counters stuck");
		}
	}
	ret = frr_oob_barrier(oob, 60000);
	FRR_CHECK(!ret, "barrier: %d", ret);
	close_all(&s);
	return 0;
}

/*
 * Rank 1 writes 5, rank 2 overwrites it with 999, then rank 1 writes
 * 6..n: its cached guess (5) is stale, every swap misses until one is
 * redone synchronously; after its flush the counter must read n.
 */
static int stale_guess(struct frr_oob *oob, void *arg)
{
	long n = 6 + frr_test_scale(2000);
	struct setup s;
	int ret;

	(void)arg;
	ret = open_all(oob, &s);
	if (ret)
		return ret;
	if (s.m.rank == 1) {
		ret = frr_tp_write_u64(s.m.eps[0], s.rmr, 0, 5, 0, 0);
		if (!ret)
			ret = frr_tp_flush(s.m.eps[0], 30000);
		FRR_CHECK(!ret, "first write: %d", ret);
	}
	ret = frr_oob_barrier(oob, 60000);
	FRR_CHECK(!ret, "barrier 1: %d", ret);
	if (s.m.rank == 2) {
		ret = frr_tp_write_u64(s.m.eps[0], s.rmr, 0, 999, 0, 0);
		if (!ret)
			ret = frr_tp_flush(s.m.eps[0], 30000);
		FRR_CHECK(!ret, "foreign write: %d", ret);
	}
	ret = frr_oob_barrier(oob, 60000);
	FRR_CHECK(!ret, "barrier 2: %d", ret);
	if (s.m.rank == 0)
		FRR_CHECK(counter(&s, 0) == 999, "foreign value %llu",
			  (unsigned long long)counter(&s, 0));
	if (s.m.rank == 1) {
		for (long k = 6; k <= n && !ret; k++)
			ret = frr_tp_write_u64(s.m.eps[0], s.rmr, 0,
					       (uint64_t)k, 0, 0);
		if (!ret)
			ret = frr_tp_flush(s.m.eps[0], 30000);
		FRR_CHECK(!ret, "writes after the foreign one: %d", ret);
	}
	ret = frr_oob_barrier(oob, 60000);
	FRR_CHECK(!ret, "barrier 3: %d", ret);
	if (s.m.rank == 0)
		FRR_CHECK(counter(&s, 0) == (uint64_t)n,
			  "counter %llu after the writer's flush, want %ld",
			  (unsigned long long)counter(&s, 0), n);
	close_all(&s);
	return 0;
}

static void force_atomics(void)
{
	cr_assert_eq(setenv("FLEXRR_VERBS_U64", "cas", 1), 0);
}

Test(verbs_counters, one_writer_by_atomics)
{
	struct frr_test_arg a = { .backend = FRR_TP_BACKEND_VERBS };

	need_verbs();
	force_atomics();
	cr_assert_eq(frr_launch_local(2, one_writer, &a, 100000), 0,
		     "the ranks' messages are above");
}

Test(verbs_counters, stale_guess_is_repaired_before_flush_returns)
{
	struct frr_test_arg a = { .backend = FRR_TP_BACKEND_VERBS };

	need_verbs();
	force_atomics();
	cr_assert_eq(frr_launch_local(3, stale_guess, &a, 100000), 0,
		     "the ranks' messages are above");
}
