// SPDX-License-Identifier: MIT
/*
 * Many peers at once: N processes write disjoint slots of one target (and,
 * in the all-to-all case, of each other) concurrently; every slot ends up
 * with exactly its writer's bytes and nothing else is touched.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "test_util.h"

TestSuite(transport_manypeers, .timeout = 120);

#define SLOT 4096 /* per writer; +8 counter bytes at the end of the region */

static unsigned char pattern(int writer, long round, size_t i)
{
	return (unsigned char)(writer * 37 + round * 11 + i);
}

static size_t region_len(int nranks)
{
	return (size_t)nranks * SLOT + (size_t)nranks * 8;
}

static size_t counter_off(int nranks, int writer)
{
	return (size_t)nranks * SLOT + (size_t)writer * 8;
}

struct peers {
	struct frr_test_mesh m;
	struct frr_tp_mr *mr, *src;
	struct frr_tp_rmr **rmr; /* rmr[target] */
};

static int peers_open(struct frr_oob *oob, enum frr_tp_backend b,
		      struct peers *p, int all_targets)
{
	struct frr_tp_desc *d = calloc((size_t)oob->size, sizeof(*d));
	int ret;

	FRR_CHECK(d, "calloc");
	memset(p, 0, sizeof(*p));
	ret = frr_test_mesh_open(oob, b, &p->m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	p->rmr = calloc((size_t)oob->size, sizeof(*p->rmr));
	FRR_CHECK(p->rmr, "calloc");
	ret = frr_tp_mr_alloc(p->m.ctx, region_len(oob->size),
			      FRR_TP_ACCESS_REMOTE_WRITE, &p->mr);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_tp_mr_alloc(p->m.ctx, SLOT, FRR_TP_ACCESS_LOCAL, &p->src);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_test_share_desc(oob, p->mr, d);
	FRR_CHECK(!ret, "share: %d", ret);
	for (int t = 0; t < oob->size; t++) {
		if (t == oob->rank || (!all_targets && t != 0))
			continue;
		ret = frr_tp_rmr_import(p->m.eps[t], &d[t], &p->rmr[t]);
		FRR_CHECK(!ret, "import from %d: %d", t, ret);
	}
	free(d);
	return 0;
}

static int peers_close(struct frr_oob *oob, struct peers *p)
{
	int ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);

	for (int t = 0; t < oob->size; t++)
		if (p->rmr[t])
			frr_tp_rmr_release(p->rmr[t]);
	free(p->rmr);
	frr_tp_mr_free(p->src);
	frr_tp_mr_free(p->mr);
	frr_test_mesh_close(&p->m);
	return ret;
}

/* Write my slot in target t for 'rounds' rounds, publishing each round
 * with my counter (G3 makes the slot complete when the counter shows). */
static int write_rounds(struct peers *p, int t, long rounds)
{
	unsigned char *src = frr_tp_mr_ptr(p->src);
	int me = p->m.rank, n = p->m.nranks;
	int ret;

	for (long r = 1; r <= rounds; r++) {
		/* reuse of src: everything earlier must be out */
		ret = frr_tp_flush(p->m.eps[t], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
		for (size_t i = 0; i < SLOT; i++)
			src[i] = pattern(me, r, i);
		ret = frr_tp_write(p->m.eps[t], p->src, 0, p->rmr[t],
				   (size_t)me * SLOT, SLOT, (uint64_t)r, 0);
		FRR_CHECK(!ret, "write to %d: %d", t, ret);
		ret = frr_tp_write_u64(p->m.eps[t], p->rmr[t],
				       counter_off(n, me), (uint64_t)r, 0, 0);
		FRR_CHECK(!ret, "counter to %d: %d", t, ret);
	}
	return frr_tp_flush(p->m.eps[t], FRR_TEST_TIMEOUT_MS);
}

/* As the target: wait for every writer's last round, check every slot. */
static int check_slots(struct peers *p, long rounds, int only_writers_to_0)
{
	const unsigned char *dst = frr_tp_mr_ptr(p->mr);
	int me = p->m.rank, n = p->m.nranks;

	for (int w = 0; w < n; w++) {
		if (w == me)
			continue;
		int ret =
		    frr_test_wait_u64(dst + counter_off(n, w), (uint64_t)rounds,
				      FRR_TEST_TIMEOUT_MS);

		FRR_CHECK(!ret, "writer %d never finished", w);
	}
	for (int w = 0; w < n; w++) {
		const unsigned char *s = dst + (size_t)w * SLOT;

		for (size_t i = 0; i < SLOT; i++) {
			unsigned char want =
			    w == me || (only_writers_to_0 && me != 0)
				? 0
				: pattern(w, rounds, i);

			FRR_CHECK(s[i] == want,
				  "slot of rank %d, byte %zu: %02x, want %02x",
				  w, i, s[i], want);
		}
	}
	return 0;
}

static int many_to_one(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct peers p;
	int ret = peers_open(oob, a->backend, &p, 0);

	if (ret)
		return ret;
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (p.m.rank)
		ret = write_rounds(&p, 0, a->iters);
	else
		ret = check_slots(&p, a->iters, 1);
	FRR_CHECK(!ret, "rank %d: %d", p.m.rank, ret);
	return peers_close(oob, &p);
}

Test(transport_manypeers, n_writers_disjoint_slots_of_one_target)
{
	struct frr_test_arg a = { .iters = frr_test_scale(200) };

	FRR_TEST_RUN(frr_test_quick() ? 4 : 8, many_to_one, &a, 110000);
}

static int all_to_all(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct peers p;
	int ret = peers_open(oob, a->backend, &p, 1);

	if (ret)
		return ret;
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	/* start at a different target per rank so they do not all pile up */
	for (int k = 1; k < p.m.nranks; k++) {
		int t = (p.m.rank + k) % p.m.nranks;

		ret = write_rounds(&p, t, a->iters);
		FRR_CHECK(!ret, "writing to %d: %d", t, ret);
	}
	ret = check_slots(&p, a->iters, 0);
	FRR_CHECK(!ret, "check: %d", ret);
	return peers_close(oob, &p);
}

Test(transport_manypeers, all_to_all_disjoint_slots)
{
	struct frr_test_arg a = { .iters = frr_test_scale(50) };

	FRR_TEST_RUN(frr_test_quick() ? 3 : 6, all_to_all, &a, 110000);
}
