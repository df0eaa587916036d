// SPDX-License-Identifier: MIT
/*
 * G2: an 8-byte counter write is never seen torn.  Rank 1 writes millions of
 * self-checking values (high half k, low half a hash of k) into counters of
 * rank 0, which reads them concurrently from another process; any mix of an
 * old and a new value fails the hash check.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "test_util.h"

TestSuite(transport_counter, .timeout = 120);

/* offsets: first word, end of a cache line, end of the first page */
static const size_t offs[] = { 0, 56, 4096 - 8, 8192 - 8 };
#define NOFF (sizeof(offs) / sizeof(offs[0]))
#define REGION 8192

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x | 1; /* never 0: an all-zero word is the initial value */
}

static uint64_t value_of(uint32_t k)
{
	return (uint64_t)k << 32 | hash32(k);
}

static int consistent(uint64_t v)
{
	return v == 0 || (uint32_t)v == hash32((uint32_t)(v >> 32));
}

static int writer(struct frr_test_mesh *m, struct frr_tp_rmr *rmr, long iters)
{
	for (long k = 1; k <= iters; k++) {
		int ret =
		    frr_tp_write_u64(m->eps[0], rmr, offs[k % NOFF],
				     value_of((uint32_t)k), (uint64_t)k, 0);

		FRR_CHECK(!ret, "write_u64 #%ld: %d", k, ret);
	}
	/* a final value at every offset tells the reader it is over */
	for (size_t i = 0; i < NOFF; i++) {
		int ret = frr_tp_write_u64(m->eps[0], rmr, offs[i],
					   value_of(0xffffffffu), 0, 0);

		FRR_CHECK(!ret, "final write: %d", ret);
	}
	return frr_tp_flush(m->eps[0], FRR_TEST_TIMEOUT_MS);
}

static int reader(const char *base, long *reads, long *changes)
{
	uint64_t last[NOFF] = { 0 };
	size_t done = 0;
	long spins = 0, backwards = 0;
	int quick = frr_test_quick();

	while (done < NOFF) {
		done = 0;
		for (size_t i = 0; i < NOFF; i++) {
			uint64_t v = frr_tp_load_u64(base + offs[i]);

			FRR_CHECK(consistent(v),
				  "torn counter at offset %zu: %016llx",
				  offs[i], (unsigned long long)v);
			if (v != last[i])
				(*changes)++;
			if ((v >> 32) < (last[i] >> 32))
				backwards++;
			last[i] = v;
			done += v == value_of(0xffffffffu);
			(*reads)++;
		}
		FRR_CHECK(++spins < 4000000000L, "writer never finished");
		/* soft-RoCE (the quick runs) works in the kernel on these
		 * same CPUs: let it */
		if (quick && (spins & 1023) == 0)
			sched_yield();
	}
	/* same-address writes of one endpoint must not go back in time */
	FRR_CHECK(backwards == 0,
		  "%ld times a counter went back to an older "
		  "value",
		  backwards);
	return 0;
}

static int torture(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_test_mesh m;
	struct frr_tp_mr *mr = NULL;
	struct frr_tp_rmr *rmr = NULL;
	struct frr_tp_desc d[2];
	long reads = 0, changes = 0;
	int ret;

	ret = frr_test_mesh_open(oob, a->backend, &m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret = frr_tp_mr_alloc(m.ctx, REGION, FRR_TP_ACCESS_REMOTE_WRITE, &mr);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_test_share_desc(oob, mr, d);
	FRR_CHECK(!ret, "share: %d", ret);
	if (m.rank == 1) {
		ret = frr_tp_rmr_import(m.eps[0], &d[0], &rmr);
		FRR_CHECK(!ret, "import: %d", ret);
	}
	/* start together so the reader really runs during the writes */
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (m.rank == 1) {
		ret = writer(&m, rmr, a->iters);
		FRR_CHECK(!ret, "writer: %d", ret);
	} else {
		ret = reader(frr_tp_mr_ptr(mr), &reads, &changes);
		if (ret)
			return ret;
		/* the final values at least: proves the reader saw writes */
		FRR_CHECK(changes >= (long)NOFF, "only %ld changes seen",
			  changes);
		frr_info("counter: %ld reads, %ld changes observed", reads,
			 changes);
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (rmr)
		frr_tp_rmr_release(rmr);
	frr_tp_mr_free(mr);
	frr_test_mesh_close(&m);
	return 0;
}

Test(transport_counter, never_torn_under_concurrent_reader)
{
	/* rxe in a TCG VM may need a round trip per counter write */
	struct frr_test_arg a = { .iters = frr_test_quick() ? 20000 : 4000000 };

	FRR_TEST_RUN(2, torture, &a, 110000);
}

/*
 * Several writers (one per endpoint) hammer neighbouring counters of the
 * same cache line: each counter only ever holds values of its own writer.
 */
static int neighbours(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_test_mesh m;
	struct frr_tp_mr *mr = NULL;
	struct frr_tp_rmr *rmr = NULL;
	struct frr_tp_desc *d = calloc((size_t)oob->size, sizeof(*d));
	int ret;

	FRR_CHECK(d, "calloc");
	ret = frr_test_mesh_open(oob, a->backend, &m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret = frr_tp_mr_alloc(m.ctx, REGION, FRR_TP_ACCESS_REMOTE_WRITE, &mr);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_test_share_desc(oob, mr, d);
	FRR_CHECK(!ret, "share: %d", ret);
	if (m.rank) {
		ret = frr_tp_rmr_import(m.eps[0], &d[0], &rmr);
		FRR_CHECK(!ret, "import: %d", ret);
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (m.rank) {
		size_t off = (size_t)m.rank * 8;

		for (long k = 1; k <= a->iters; k++) {
			uint64_t v = (uint64_t)m.rank << 56 | (uint64_t)k;

			ret = frr_tp_write_u64(m.eps[0], rmr, off, v, 0, 0);
			FRR_CHECK(!ret, "write_u64: %d", ret);
		}
		ret = frr_tp_flush(m.eps[0], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
	} else {
		const char *base = frr_tp_mr_ptr(mr);
		int done = 0;

		for (long spins = 0; done < m.nranks - 1; spins++) {
			done = 0;
			for (int r = 1; r < m.nranks; r++) {
				uint64_t v = frr_tp_load_u64(base + r * 8);

				FRR_CHECK(v == 0 || v >> 56 == (uint64_t)r,
					  "counter of rank %d holds %016llx", r,
					  (unsigned long long)v);
				FRR_CHECK((v & 0xffffffffffffffull) <=
					      (uint64_t)a->iters,
					  "counter %d out of range", r);
				done += (v & 0xffffffffffffffull) ==
					(uint64_t)a->iters;
			}
			FRR_CHECK(spins < 2000000000L, "writers stuck");
			if ((spins & 1023) == 0)
				sched_yield();
		}
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (rmr)
		frr_tp_rmr_release(rmr);
	frr_tp_mr_free(mr);
	frr_test_mesh_close(&m);
	free(d);
	return 0;
}

Test(transport_counter, neighbouring_counters_of_several_writers)
{
	struct frr_test_arg a = { .iters = frr_test_quick() ? 10000 : 500000 };

	FRR_TEST_RUN(4, neighbours, &a, 110000);
}
