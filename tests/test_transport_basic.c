// SPDX-License-Identifier: MIT
/*
 * Transport basics on every backend under test: contexts, regions,
 * descriptors, write visibility, completions, and the ordering guarantees
 * G1-G4 exactly as include/flexrr/transport.h states them.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <unistd.h>

#include "test_util.h"

TestSuite(transport_basic, .timeout = 60);

static int open_one(enum frr_tp_backend b, struct frr_tp_ctx **ctx)
{
	struct frr_tp_config cfg = { .backend = b,
				     .job_token = 0x1234,
				     .rank = 0,
				     .nranks = 1,
				     .gid_index = -1 };

	return frr_tp_open(&cfg, ctx);
}

Test(transport_basic, backend_names)
{
	enum frr_tp_backend b;

	cr_assert_eq(frr_tp_backend_parse("shm", &b), 0);
	cr_assert_eq(b, FRR_TP_BACKEND_SHM);
	cr_assert_eq(frr_tp_backend_parse("verbs", &b), 0);
	cr_assert_eq(b, FRR_TP_BACKEND_VERBS);
	cr_assert_eq(frr_tp_backend_parse("auto", &b), 0);
	cr_assert_eq(b, FRR_TP_BACKEND_AUTO);
	cr_assert_eq(frr_tp_backend_parse("tcp", &b), -EINVAL);
	cr_assert_str_eq(frr_tp_backend_name(FRR_TP_BACKEND_SHM), "shm");
}

Test(transport_basic, open_close_and_regions)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	long pg = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < nb; i++) {
		struct frr_tp_ctx *ctx = NULL;
		struct frr_tp_mr *mr = NULL, *lmr = NULL;
		struct frr_tp_addr addr;
		struct frr_tp_desc d;
		unsigned char *p;

		cr_assert_eq(open_one(bs[i], &ctx), 0, "open %s",
			     frr_tp_backend_name(bs[i]));
		cr_assert_eq(frr_tp_backend_of(ctx), bs[i]);
		cr_assert(strlen(frr_tp_device_name(ctx)) > 0);
		cr_assert_eq(frr_tp_addr_get(ctx, &addr), 0);
		cr_assert_eq(addr.rank, 0);
		cr_assert_eq(addr.job_token, 0x1234);
		cr_assert_eq(addr.backend, (uint32_t)bs[i]);

		cr_assert_eq(frr_tp_mr_alloc(ctx, 10000,
					     FRR_TP_ACCESS_REMOTE_WRITE, &mr),
			     0);
		cr_assert_eq(
		    frr_tp_mr_alloc(ctx, 4096, FRR_TP_ACCESS_LOCAL, &lmr), 0);
		p = frr_tp_mr_ptr(mr);
		cr_assert_eq((uintptr_t)p % (uintptr_t)pg, 0, "page aligned");
		cr_assert_eq(frr_tp_mr_len(mr), 10000);
		for (size_t k = 0; k < 10000; k++)
			cr_assert_eq(p[k], 0, "zeroed at %zu", k);
		memset(p, 0xab, 10000); /* writable */
		cr_assert_eq(frr_tp_mr_export(mr, &d), 0);
		cr_assert_eq(d.magic, FRR_TP_DESC_MAGIC);
		cr_assert_eq(d.len, 10000);
		cr_assert_eq(d.owner_rank, 0);
		cr_assert_eq(d.job_token, 0x1234);
		cr_assert_eq(d.backend, (uint32_t)bs[i]);
		cr_assert(d.access & FRR_TP_ACCESS_REMOTE_WRITE);

		/* bad arguments are refused, not crashed on */
		cr_assert_eq(frr_tp_mr_alloc(ctx, 0, FRR_TP_ACCESS_LOCAL, &lmr),
			     -EINVAL);
		cr_assert_lt(frr_tp_mr_alloc(NULL, 8, 0, &lmr), 0);
		cr_assert_lt(frr_tp_mr_export(NULL, &d), 0);

		frr_tp_mr_free(lmr);
		frr_tp_mr_free(mr);
		frr_tp_close(ctx);
	}
}

Test(transport_basic, open_rejects_bad_config)
{
	struct frr_tp_config cfg = { .backend = FRR_TP_BACKEND_SHM,
				     .rank = 3,
				     .nranks = 2 };
	struct frr_tp_ctx *ctx = NULL;

	cr_assert_eq(frr_tp_open(&cfg, &ctx), -EINVAL);
	cfg.rank = 0;
	cfg.backend = (enum frr_tp_backend)77;
	cr_assert_lt(frr_tp_open(&cfg, &ctx), 0);
	cr_assert_lt(frr_tp_open(NULL, &ctx), 0);
	cr_assert_null(ctx);
}

/* ---- two-rank scenarios: rank 1 writes into rank 0 ------------------- */

#define BLK 256
#define NBLK 512
#define FLAG_OFF ((size_t)NBLK * BLK)
#define REGION (FLAG_OFF + 4096)

struct pair {
	struct frr_test_mesh m;
	struct frr_tp_mr *mr; /* target region (rank 0's is the one used) */
	struct frr_tp_mr *src;
	struct frr_tp_rmr *rmr; /* rank 1: rank 0's region */
	struct frr_tp_desc d[2];
};

static int pair_open(struct frr_oob *oob, enum frr_tp_backend b, struct pair *p)
{
	int ret;

	memset(p, 0, sizeof(*p));
	ret = frr_test_mesh_open(oob, b, &p->m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret = frr_tp_mr_alloc(p->m.ctx, REGION, FRR_TP_ACCESS_REMOTE_WRITE,
			      &p->mr);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_tp_mr_alloc(p->m.ctx, REGION, FRR_TP_ACCESS_LOCAL, &p->src);
	FRR_CHECK(!ret, "alloc src: %d", ret);
	ret = frr_test_share_desc(oob, p->mr, p->d);
	FRR_CHECK(!ret, "share: %d", ret);
	if (p->m.rank == 1) {
		ret = frr_tp_rmr_import(p->m.eps[0], &p->d[0], &p->rmr);
		FRR_CHECK(!ret, "import: %d", ret);
		FRR_CHECK(frr_tp_rmr_len(p->rmr) == REGION, "rmr len %zu",
			  frr_tp_rmr_len(p->rmr));
	}
	return 0;
}

/* barrier first: the peer must not see us leave while it still writes */
static int pair_close(struct frr_oob *oob, struct pair *p)
{
	int ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);

	if (p->rmr)
		frr_tp_rmr_release(p->rmr);
	frr_tp_mr_free(p->src);
	frr_tp_mr_free(p->mr);
	frr_test_mesh_close(&p->m);
	return ret;
}

static void fill_block(unsigned char *b, unsigned k)
{
	for (int i = 0; i < BLK; i++)
		b[i] = (unsigned char)(k * 31 + i);
}

static int block_ok(const unsigned char *b, unsigned k)
{
	for (int i = 0; i < BLK; i++)
		if (b[i] != (unsigned char)(k * 31 + i))
			return 0;
	return 1;
}

/* G1: after frr_tp_flush returns, every earlier write is visible. */
static int g1_flush(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct pair p;
	unsigned char *src;
	int ret = pair_open(oob, a->backend, &p);

	if (ret)
		return ret;
	if (p.m.rank == 1) {
		src = frr_tp_mr_ptr(p.src);
		for (unsigned k = 0; k < NBLK; k++) {
			fill_block(src + (size_t)k * BLK, k);
			ret = frr_tp_write(p.m.eps[0], p.src, (size_t)k * BLK,
					   p.rmr, (size_t)k * BLK, BLK, k, 0);
			FRR_CHECK(!ret, "write %u: %d", k, ret);
		}
		ret = frr_tp_flush(p.m.eps[0], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
	}
	/* the oob barrier is the only signal: visibility comes from G1 */
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (p.m.rank == 0) {
		unsigned char *dst = frr_tp_mr_ptr(p.mr);

		for (unsigned k = 0; k < NBLK; k++)
			FRR_CHECK(block_ok(dst + (size_t)k * BLK, k),
				  "block %u not visible after flush", k);
	}
	return pair_close(oob, &p);
}

Test(transport_basic, g1_flush_makes_writes_visible)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, g1_flush, &a, 60000);
}

/* G2 (quick form, the torture is test_transport_counter): counters read
 * back exactly, including values with every byte set. */
static int g2_counter(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	static const uint64_t vals[] = { 1, 0xffffffffffffffffull,
					 0x0123456789abcdefull, 0 };
	struct pair p;
	int ret = pair_open(oob, a->backend, &p);

	if (ret)
		return ret;
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		if (p.m.rank == 1) {
			ret = frr_tp_write_u64(p.m.eps[0], p.rmr, FLAG_OFF + 8,
					       vals[i], i, 0);
			FRR_CHECK(!ret, "write_u64: %d", ret);
			ret = frr_tp_flush(p.m.eps[0], FRR_TEST_TIMEOUT_MS);
			FRR_CHECK(!ret, "flush: %d", ret);
		}
		ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "barrier: %d", ret);
		if (p.m.rank == 0) {
			uint64_t v = frr_tp_load_u64(
			    (char *)frr_tp_mr_ptr(p.mr) + FLAG_OFF + 8);

			FRR_CHECK(v == vals[i], "counter %llx, want %llx",
				  (unsigned long long)v,
				  (unsigned long long)vals[i]);
		}
		/* the next value must not land before this one is read */
		ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "barrier: %d", ret);
	}
	return pair_close(oob, &p);
}

Test(transport_basic, g2_counter_values)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, g2_counter, &a, 60000);
}

/*
 * G3: block k is written (plain write), then the counter is set to k+1 on
 * the same endpoint.  Whenever the target observes counter c (acquire
 * load), blocks 0..c-1 must be complete.  Blocks never overlap, so a check
 * cannot race with a later plain write.
 */
static int g3_order(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct pair p;
	int ret = pair_open(oob, a->backend, &p);

	if (ret)
		return ret;
	if (p.m.rank == 1) {
		unsigned char *src = frr_tp_mr_ptr(p.src);

		for (unsigned k = 0; k < NBLK; k++) {
			size_t off = (size_t)k * BLK;

			fill_block(src + off, k);
			ret = frr_tp_write(p.m.eps[0], p.src, off, p.rmr, off,
					   BLK, k, 0);
			FRR_CHECK(!ret, "write %u: %d", k, ret);
			ret = frr_tp_write_u64(p.m.eps[0], p.rmr, FLAG_OFF,
					       k + 1, k, 0);
			FRR_CHECK(!ret, "counter %u: %d", k, ret);
		}
		ret = frr_tp_flush(p.m.eps[0], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
	} else {
		unsigned char *dst = frr_tp_mr_ptr(p.mr);
		unsigned checked = 0;
		uint64_t c = 0;

		while (checked < NBLK) {
			ret = frr_test_wait_u64(dst + FLAG_OFF, checked + 1,
						FRR_TEST_TIMEOUT_MS);
			FRR_CHECK(!ret, "counter stuck at %u", checked);
			c = frr_tp_load_u64(dst + FLAG_OFF);
			FRR_CHECK(c <= NBLK, "counter %llu out of range",
				  (unsigned long long)c);
			for (; checked < c; checked++)
				FRR_CHECK(block_ok(dst + (size_t)checked * BLK,
						   checked),
					  "counter says %llu but block %u is "
					  "incomplete (G3 broken)",
					  (unsigned long long)c, checked);
		}
	}
	return pair_close(oob, &p);
}

Test(transport_basic, g3_counter_orders_earlier_writes)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, g3_order, &a, 60000);
}

/*
 * G4: each notified write delivers exactly one notification (source rank,
 * imm) after its data, and (G3) after the earlier plain write.
 */
static int g4_notify(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct pair p;
	int ret = pair_open(oob, a->backend, &p);

	if (ret)
		return ret;
	if (p.m.rank == 1) {
		unsigned char *src = frr_tp_mr_ptr(p.src);

		for (unsigned k = 0; k + 1 < NBLK; k += 2) {
			size_t off = (size_t)k * BLK;

			fill_block(src + off, k);
			fill_block(src + off + BLK, k + 1);
			ret = frr_tp_write(p.m.eps[0], p.src, off, p.rmr, off,
					   BLK, k, 0);
			FRR_CHECK(!ret, "write %u: %d", k, ret);
			ret = frr_tp_write_notify(p.m.eps[0], p.src, off + BLK,
						  p.rmr, off + BLK, BLK, k + 1,
						  k + 1, 0);
			FRR_CHECK(!ret, "notify %u: %d", k + 1, ret);
		}
	} else {
		unsigned char *dst = frr_tp_mr_ptr(p.mr);
		unsigned char seen[NBLK] = { 0 };
		int got = 0;
		struct frr_tp_notify n[16];

		for (long spins = 0; got < NBLK / 2; spins++) {
			int k = frr_tp_poll_notify(p.m.ctx, n, 16);

			FRR_CHECK(k >= 0, "poll_notify: %d", k);
			for (int i = 0; i < k; i++) {
				unsigned imm = n[i].imm;

				FRR_CHECK(n[i].src_rank == 1, "src %d",
					  n[i].src_rank);
				FRR_CHECK(imm < NBLK && imm % 2 == 1 &&
					      !seen[imm],
					  "bad or repeated imm %u", imm);
				seen[imm] = 1;
				FRR_CHECK(
				    block_ok(dst + (size_t)imm * BLK, imm),
				    "notified block %u incomplete", imm);
				FRR_CHECK(
				    block_ok(dst + (size_t)(imm - 1) * BLK,
					     imm - 1),
				    "block %u before notification %u "
				    "incomplete (G3)",
				    imm - 1, imm);
			}
			got += k;
			FRR_CHECK(spins < 2000000000L, "notifications lost");
			if (!k)
				usleep(10);
		}
		/* exactly one each: nothing more arrives */
		ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "barrier: %d", ret);
		FRR_CHECK(frr_tp_poll_notify(p.m.ctx, n, 16) == 0,
			  "extra notifications");
		return pair_close(oob, &p);
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	return pair_close(oob, &p);
}

Test(transport_basic, g4_notify_after_data)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, g4_notify, &a, 60000);
}

/* Signaled writes complete with their wr_id; unsignaled ones never do. */
static int completions(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct pair p;
	int ret = pair_open(oob, a->backend, &p);

	if (ret)
		return ret;
	if (p.m.rank == 1) {
		struct frr_tp_wc wc[8];
		unsigned seen = 0;
		int got = 0;

		for (unsigned k = 0; k < 16; k++) {
			unsigned fl = k % 2 ? FRR_TP_F_SIGNAL : 0;

			if (k < 8)
				ret = frr_tp_write(p.m.eps[0], p.src, 0, p.rmr,
						   (size_t)k * BLK, BLK,
						   100 + k, fl);
			else
				ret =
				    frr_tp_write_u64(p.m.eps[0], p.rmr,
						     FLAG_OFF, k, 100 + k, fl);
			FRR_CHECK(!ret, "write %u: %d", k, ret);
		}
		ret = frr_tp_flush(p.m.eps[0], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
		for (long spins = 0; got < 8; spins++) {
			int n = frr_tp_poll(p.m.ctx, wc, 8);

			FRR_CHECK(n >= 0, "poll: %d", n);
			for (int i = 0; i < n; i++) {
				unsigned id = (unsigned)wc[i].wr_id - 100;

				FRR_CHECK(wc[i].status == 0, "status %d",
					  wc[i].status);
				FRR_CHECK(wc[i].peer_rank == 0, "peer %d",
					  wc[i].peer_rank);
				FRR_CHECK(id < 16 && id % 2 == 1 &&
					      !(seen & (1u << id)),
					  "unexpected wr_id %llu",
					  (unsigned long long)wc[i].wr_id);
				seen |= 1u << id;
			}
			got += n;
			FRR_CHECK(spins < 10000000L, "completions missing");
		}
		FRR_CHECK(frr_tp_poll(p.m.ctx, wc, 8) == 0,
			  "unsignaled write completed");
	}
	return pair_close(oob, &p);
}

Test(transport_basic, signaled_writes_complete)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, completions, &a, 60000);
}

/* Zero-length writes and writes ending exactly at the region end work. */
static int edges(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct pair p;
	int ret = pair_open(oob, a->backend, &p);

	if (ret)
		return ret;
	if (p.m.rank == 1) {
		unsigned char *src = frr_tp_mr_ptr(p.src);

		memset(src, 0x5a, REGION);
		ret = frr_tp_write(p.m.eps[0], p.src, 0, p.rmr, 0, 0, 1, 0);
		FRR_CHECK(!ret, "zero-length write: %d", ret);
		ret = frr_tp_write(p.m.eps[0], p.src, REGION - 1, p.rmr,
				   REGION - 1, 1, 2, 0);
		FRR_CHECK(!ret, "last byte: %d", ret);
		ret = frr_tp_write_u64(p.m.eps[0], p.rmr, REGION - 8, 7, 3, 0);
		FRR_CHECK(!ret, "last counter: %d", ret);
		ret =
		    frr_tp_write(p.m.eps[0], p.src, 0, p.rmr, 0, REGION, 4, 0);
		FRR_CHECK(!ret, "whole region: %d", ret);
		ret = frr_tp_flush(p.m.eps[0], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (p.m.rank == 0) {
		unsigned char *dst = frr_tp_mr_ptr(p.mr);

		for (size_t i = 0; i < REGION; i++)
			FRR_CHECK(dst[i] == 0x5a, "byte %zu = %02x", i, dst[i]);
	}
	return pair_close(oob, &p);
}

Test(transport_basic, zero_length_and_region_end)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, edges, &a, 60000);
}

/*
 * frr_tp_rmr_direct: on shm the peer's region itself, whose stores a
 * later counter write on the endpoint orders (G3) like a write's; out of
 * range, or on a backend without such a mapping (verbs), NULL.
 */
static int direct(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct pair p;
	int ret = pair_open(oob, a->backend, &p);
	int shm;

	if (ret)
		return ret;
	shm = frr_tp_backend_of(p.m.ctx) == FRR_TP_BACKEND_SHM;
	if (p.m.rank == 1) {
		unsigned char *d = frr_tp_rmr_direct(p.rmr, 0, FLAG_OFF);

		FRR_CHECK(!frr_tp_rmr_direct(p.rmr, REGION - 8, 16),
			  "a range past the region's end was mapped");
		FRR_CHECK(!frr_tp_rmr_direct(NULL, 0, 8), "NULL region");
		FRR_CHECK(!d == !shm, "direct %p on %s", (void *)d,
			  shm ? "shm" : "verbs");
		for (unsigned k = 0; d && k < NBLK; k++)
			fill_block(d + (size_t)k * BLK, k);
		ret = frr_tp_write_u64(p.m.eps[0], p.rmr, FLAG_OFF, 1, 0, 0);
		FRR_CHECK(!ret, "write_u64: %d", ret);
		ret = frr_tp_flush(p.m.eps[0], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
	} else if (shm) {
		const unsigned char *dst = frr_tp_mr_ptr(p.mr);

		for (long spins = 0; !frr_tp_load_u64(dst + FLAG_OFF);
		     spins++) {
			FRR_CHECK(spins < 1000000L, "counter never came");
			usleep(10);
		}
		for (unsigned k = 0; k < NBLK; k++)
			FRR_CHECK(block_ok(dst + (size_t)k * BLK, k),
				  "block %u stored directly not seen before "
				  "the counter (G3)",
				  k);
	}
	return pair_close(oob, &p);
}

Test(transport_basic, direct_stores_ordered_by_counter)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, direct, &a, 60000);
}
