// SPDX-License-Identifier: MIT
/*
 * Large writes: one 64 MiB write lands whole, and unaligned large writes
 * touch exactly their byte range.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "test_util.h"

TestSuite(transport_large, .timeout = 120);

#define BIG ((size_t)64 << 20)

static unsigned char byte_at(size_t i, unsigned seed)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + seed;

	return (unsigned char)(x >> 56);
}

/* content after the first pass (seed 1 over [0, BIG)) */
static unsigned char before(size_t i)
{
	return i < BIG ? byte_at(i, 1) : 0;
}

struct big {
	struct frr_test_mesh m;
	struct frr_tp_mr *mr, *src;
	struct frr_tp_rmr *rmr;
};

static int big_open(struct frr_oob *oob, enum frr_tp_backend b, struct big *g)
{
	struct frr_tp_desc d[2];
	int ret;

	memset(g, 0, sizeof(*g));
	ret = frr_test_mesh_open(oob, b, &g->m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	if (g->m.rank == 0) {
		ret = frr_tp_mr_alloc(g->m.ctx, BIG + 4096,
				      FRR_TP_ACCESS_REMOTE_WRITE, &g->mr);
		FRR_CHECK(!ret, "alloc 64 MiB target: %d", ret);
	} else {
		/* rank 1 only sources, but every rank exports something */
		ret = frr_tp_mr_alloc(g->m.ctx, 4096,
				      FRR_TP_ACCESS_REMOTE_WRITE, &g->mr);
		FRR_CHECK(!ret, "alloc: %d", ret);
		ret = frr_tp_mr_alloc(g->m.ctx, BIG, FRR_TP_ACCESS_LOCAL,
				      &g->src);
		FRR_CHECK(!ret, "alloc 64 MiB source: %d", ret);
	}
	ret = frr_test_share_desc(oob, g->mr, d);
	FRR_CHECK(!ret, "share: %d", ret);
	if (g->m.rank == 1) {
		ret = frr_tp_rmr_import(g->m.eps[0], &d[0], &g->rmr);
		FRR_CHECK(!ret, "import: %d", ret);
	}
	return 0;
}

static int big_close(struct frr_oob *oob, struct big *g)
{
	int ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);

	if (g->rmr)
		frr_tp_rmr_release(g->rmr);
	frr_tp_mr_free(g->src);
	frr_tp_mr_free(g->mr);
	frr_test_mesh_close(&g->m);
	return ret;
}

/* Rank 1 writes [loff, +len) of its source to [roff, +len) of rank 0's
 * region, notifies, and rank 0 checks the range and that nothing around it
 * changed. */
static int one_write(struct big *g, struct frr_oob *oob, size_t loff,
		     size_t roff, size_t len, unsigned seed)
{
	int ret;

	if (g->m.rank == 1) {
		unsigned char *src = frr_tp_mr_ptr(g->src);

		for (size_t i = 0; i < len; i++)
			src[loff + i] = byte_at(i, seed);
		ret =
		    frr_tp_write_notify(g->m.eps[0], g->src, loff, g->rmr, roff,
					len, seed, seed, FRR_TP_F_SIGNAL);
		FRR_CHECK(!ret, "write of %zu bytes: %d", len, ret);
		for (long spins = 0;; spins++) {
			struct frr_tp_wc wc;
			int n = frr_tp_poll(g->m.ctx, &wc, 1);

			FRR_CHECK(n >= 0, "poll: %d", n);
			if (n) {
				FRR_CHECK(wc.status == 0 && wc.wr_id == seed,
					  "completion status %d", wc.status);
				break;
			}
			FRR_CHECK(spins < 2000000000L, "no completion");
		}
	} else {
		const unsigned char *dst = frr_tp_mr_ptr(g->mr);
		struct frr_tp_notify n;

		for (long spins = 0;; spins++) {
			int k = frr_tp_poll_notify(g->m.ctx, &n, 1);

			FRR_CHECK(k >= 0, "poll_notify: %d", k);
			if (k)
				break;
			FRR_CHECK(spins < 2000000000L, "no notification");
		}
		FRR_CHECK(n.imm == seed, "imm %u", n.imm);
		for (size_t i = 0; i < len; i++)
			FRR_CHECK(dst[roff + i] == byte_at(i, seed),
				  "byte %zu of the %zu-byte write differs", i,
				  len);
		/* neighbours keep what pass 1 left there: nothing outside the
		 * range is touched */
		if (roff)
			FRR_CHECK(dst[roff - 1] == before(roff - 1),
				  "byte before the range changed");
		if (roff + len < BIG + 4096)
			FRR_CHECK(dst[roff + len] == before(roff + len),
				  "byte after the range changed");
		FRR_CHECK(dst[BIG + 8] == 0, "byte past 64 MiB changed");
	}
	return frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
}

static int large(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct big g;
	int ret = big_open(oob, a->backend, &g);

	if (ret)
		return ret;
	ret = one_write(&g, oob, 0, 0, BIG, 1);
	FRR_CHECK(!ret, "64 MiB write: %d", ret);
	ret = one_write(&g, oob, 3, 1, BIG - 4097, 2);
	FRR_CHECK(!ret, "unaligned 64 MiB - 4097 write: %d", ret);
	ret = one_write(&g, oob, 0, BIG + 4096 - 5, 5, 3);
	FRR_CHECK(!ret, "write at the end: %d", ret);
	return big_close(oob, &g);
}

Test(transport_large, write_64MiB_whole_and_unaligned)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, large, &a, 110000);
}
