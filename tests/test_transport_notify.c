// SPDX-License-Identifier: MIT
/*
 * Notified writes (G4): exactly one notification per write with the right
 * source rank and immediate, only after the data is visible; a slow target
 * loses nothing (the writer waits, it does not drop); zero-length notified
 * writes work as pure notifications.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <unistd.h>

#include "test_util.h"

TestSuite(transport_notify, .timeout = 120);

#define SLOT 64

struct job {
	struct frr_test_mesh m;
	struct frr_tp_mr *mr, *src;
	struct frr_tp_rmr *rmr; /* senders: rank 0's region */
	size_t len;
};

static int job_open(struct frr_oob *oob, enum frr_tp_backend b, struct job *j,
		    size_t len)
{
	struct frr_tp_desc *d = calloc((size_t)oob->size, sizeof(*d));
	int ret;

	FRR_CHECK(d, "calloc");
	memset(j, 0, sizeof(*j));
	j->len = len;
	ret = frr_test_mesh_open(oob, b, &j->m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret =
	    frr_tp_mr_alloc(j->m.ctx, len, FRR_TP_ACCESS_REMOTE_WRITE, &j->mr);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_tp_mr_alloc(j->m.ctx, len, FRR_TP_ACCESS_LOCAL, &j->src);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_test_share_desc(oob, j->mr, d);
	FRR_CHECK(!ret, "share: %d", ret);
	if (j->m.rank) {
		ret = frr_tp_rmr_import(j->m.eps[0], &d[0], &j->rmr);
		FRR_CHECK(!ret, "import: %d", ret);
	}
	free(d);
	return 0;
}

static int job_close(struct frr_oob *oob, struct job *j)
{
	int ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);

	if (j->rmr)
		frr_tp_rmr_release(j->rmr);
	frr_tp_mr_free(j->src);
	frr_tp_mr_free(j->mr);
	frr_test_mesh_close(&j->m);
	return ret;
}

static uint64_t stamp(int rank, long k)
{
	return (uint64_t)rank << 48 | (uint64_t)k;
}

/*
 * Each sender writes SLOT bytes of stamp(rank, k) into its own slot k and
 * notifies imm = k.  The target checks, per notification, that the slot
 * holds that write.  The target sleeps now and then so the senders hit a
 * full notification queue.
 */
static int many_send(struct job *j, long n, size_t nslots)
{
	uint64_t *src = frr_tp_mr_ptr(j->src);
	int ret;

	for (long k = 0; k < n; k++) {
		size_t off =
		    ((size_t)j->m.rank * nslots + (size_t)k % nslots) * SLOT;

		for (int w = 0; w < SLOT / 8; w++)
			src[off / 8 + w] = stamp(j->m.rank, k);
		ret = frr_tp_write_notify(j->m.eps[0], j->src, off, j->rmr, off,
					  SLOT, (uint32_t)k, (uint64_t)k, 0);
		FRR_CHECK(!ret, "notify %ld: %d", k, ret);
		if (k % 64 == 63) {
			ret = frr_tp_flush(j->m.eps[0], FRR_TEST_TIMEOUT_MS);
			FRR_CHECK(!ret, "flush: %d", ret);
		}
	}
	return 0;
}

/* One notification: from a sender, no more than n of them from it, and
 * only once its slot holds the data. */
static int many_check(const struct frr_tp_notify *nb, const uint64_t *dst,
		      long *next, int size, long n, size_t nslots)
{
	int s = nb->src_rank;
	long imm = (long)nb->imm;
	size_t off;
	uint64_t v;

	FRR_CHECK(s >= 1 && s < size, "source rank %d", s);
	FRR_CHECK(imm < n, "imm %ld", imm);
	/* exactly once: every sender posts imm 0..n-1; a repeat or a gap
	 * shows up here because the counts must add up */
	next[s]++;
	FRR_CHECK(next[s] <= n, "rank %d: more than %ld notifications", s, n);
	off = ((size_t)s * nslots + (size_t)imm % nslots) * SLOT;
	for (int w = 0; w < SLOT / 8; w++) {
		v = frr_tp_load_u64(&dst[off / 8 + w]);
		FRR_CHECK(v == stamp(s, imm),
			  "notification %ld of rank %d before its data (slot "
			  "holds %llx)",
			  imm, s, (unsigned long long)v);
	}
	return 0;
}

static int many_receive(struct frr_oob *oob, struct job *j, long n,
			size_t nslots)
{
	long *next = calloc((size_t)oob->size, sizeof(*next));
	const uint64_t *dst = frr_tp_mr_ptr(j->mr);
	int senders = oob->size - 1;
	struct frr_tp_notify nb[32];
	long got = 0, polls = 0;
	int ret;

	FRR_CHECK(next, "calloc");
	while (got < n * senders) {
		int k = frr_tp_poll_notify(j->m.ctx, nb, 32);

		FRR_CHECK(k >= 0, "poll_notify: %d", k);
		for (int i = 0; i < k; i++) {
			ret =
			    many_check(&nb[i], dst, next, oob->size, n, nslots);
			if (ret)
				return ret;
		}
		got += k;
		FRR_CHECK(++polls < 400000000L,
			  "notifications lost "
			  "(%ld of %ld)",
			  got, n * senders);
		if (polls % 5000 == 0)
			usleep(2000); /* let the queue fill up */
	}
	for (int s = 1; s < oob->size; s++)
		FRR_CHECK(next[s] == n, "rank %d: %ld notifications", s,
			  next[s]);
	free(next);
	return 0;
}

static int many(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	long n = a->iters;
	size_t nslots = (size_t)n; /* no slot reuse: checks never race */
	struct job j;
	int ret =
	    job_open(oob, a->backend, &j, (size_t)oob->size * nslots * SLOT);

	if (ret)
		return ret;
	if (j.m.rank)
		ret = many_send(&j, n, nslots);
	else
		ret = many_receive(oob, &j, n, nslots);
	if (ret)
		return ret;
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (!j.m.rank) {
		struct frr_tp_notify extra;

		FRR_CHECK(frr_tp_poll_notify(j.m.ctx, &extra, 1) == 0,
			  "a notification arrived twice");
	}
	return job_close(oob, &j);
}

Test(transport_notify, exactly_once_after_data_one_sender)
{
	struct frr_test_arg a = { .iters = frr_test_scale(20000) };

	FRR_TEST_RUN(2, many, &a, 110000);
}

Test(transport_notify, exactly_once_after_data_three_senders)
{
	struct frr_test_arg a = { .iters = frr_test_scale(10000) };

	FRR_TEST_RUN(4, many, &a, 110000);
}

/* imm values are delivered bit-exact, zero-length writes notify too, and
 * poll_notify hands out no more than max at a time. */
static int imm_values(struct frr_oob *oob, void *arg)
{
	static const uint32_t imms[] = { 0,	      1,	   0x7fffffff,
					 0x80000000u, 0xffffffffu, 0xdeadbeef };
	enum { NIMM = sizeof(imms) / sizeof(imms[0]) };
	struct frr_test_arg *a = arg;
	struct job j;
	int ret = job_open(oob, a->backend, &j, 4096);

	if (ret)
		return ret;
	if (j.m.rank) {
		for (int i = 0; i < NIMM; i++) {
			ret = frr_tp_write_notify(j.m.eps[0], j.src, 0, j.rmr,
						  0, i % 2 ? 0 : 8, imms[i],
						  (uint64_t)i, 0);
			FRR_CHECK(!ret, "notify %d: %d", i, ret);
		}
		/* a signaled notified write completes at the sender */
		ret = frr_tp_write_notify(j.m.eps[0], j.src, 0, j.rmr, 0, 16,
					  42, 77, FRR_TP_F_SIGNAL);
		FRR_CHECK(!ret, "signaled notify: %d", ret);
		for (long spins = 0;; spins++) {
			struct frr_tp_wc wc;
			int k = frr_tp_poll(j.m.ctx, &wc, 1);

			FRR_CHECK(k >= 0, "poll: %d", k);
			if (k) {
				FRR_CHECK(wc.wr_id == 77 && wc.status == 0,
					  "wc %llu status %d",
					  (unsigned long long)wc.wr_id,
					  wc.status);
				break;
			}
			FRR_CHECK(spins < 100000000L, "no completion");
		}
	} else {
		uint32_t got[NIMM + 1];
		int n = 0;

		for (long spins = 0; n < NIMM + 1; spins++) {
			struct frr_tp_notify nb[2] = { { -1, 0 }, { -1, 0 } };
			int k = frr_tp_poll_notify(j.m.ctx, nb, 1);

			FRR_CHECK(k == 0 || k == 1, "poll_notify(max 1) = %d",
				  k);
			FRR_CHECK(nb[1].src_rank == -1, "wrote past max");
			if (k) {
				FRR_CHECK(nb[0].src_rank == 1, "src %d",
					  nb[0].src_rank);
				got[n++] = nb[0].imm;
			}
			FRR_CHECK(spins < 100000000L, "lost: %d of %d", n,
				  NIMM + 1);
		}
		for (int i = 0; i < NIMM; i++) {
			int found = 0;

			for (int k = 0; k < NIMM + 1; k++)
				found += got[k] == imms[i];
			FRR_CHECK(found >= 1, "imm %08x missing", imms[i]);
		}
	}
	return job_close(oob, &j);
}

Test(transport_notify, immediates_zero_length_and_max)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, imm_values, &a, 60000);
}
