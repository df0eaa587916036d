// SPDX-License-Identifier: MIT
/*
 * Bad input never crashes and never writes outside a registered region:
 * descriptors of another job, forged or of the wrong owner; out-of-range
 * offsets and lengths; unaligned counters; NULLs; regions freed by their
 * owner; endpoints closed by the peer; peers that exited.  Each error is a
 * negative errno plus a message (frr_tp_last_error).  Connections refused
 * or never answered, and what their messages advise, are in
 * test_transport_messages.c.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "transport_impl.h" /* frr_tp_desc_check: to forge descriptors */

TestSuite(transport_errors, .timeout = 120);

#define REGION 8192

struct trio {
	struct frr_test_mesh m;
	struct frr_tp_mr *mr, *src;
	struct frr_tp_desc *d; /* d[rank] */
};

static int trio_open(struct frr_oob *oob, enum frr_tp_backend b, struct trio *t)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->d = calloc((size_t)oob->size, sizeof(*t->d));
	FRR_CHECK(t->d, "calloc");
	ret = frr_test_mesh_open(oob, b, &t->m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret = frr_tp_mr_alloc(t->m.ctx, REGION, FRR_TP_ACCESS_REMOTE_WRITE,
			      &t->mr);
	FRR_CHECK(!ret, "alloc: %d", ret);
	ret = frr_tp_mr_alloc(t->m.ctx, REGION, FRR_TP_ACCESS_LOCAL, &t->src);
	FRR_CHECK(!ret, "alloc: %d", ret);
	memset(frr_tp_mr_ptr(t->src), 0xee, REGION);
	return frr_test_share_desc(oob, t->mr, t->d);
}

static void trio_close(struct trio *t)
{
	frr_tp_mr_free(t->src);
	frr_tp_mr_free(t->mr);
	frr_test_mesh_close(&t->m);
	free(t->d);
}

static int all_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return 0;
	return 1;
}

/* the call failed with a negative errno and said something */
#define FRR_CHECK_ERR(ctx, expr, want)                                 \
	do {                                                           \
		int r_ = (expr);                                       \
		FRR_CHECK(r_ == (want), "%s = %d, want %d", #expr, r_, \
			  (int)(want));                                \
		FRR_CHECK(strlen(frr_tp_last_error(ctx)) > 10,         \
			  "no error message after %s", #expr);         \
	} while (0)

static struct frr_tp_desc reseal(struct frr_tp_desc d)
{
	d.check = frr_tp_desc_check(&d);
	return d;
}

/* Rank 1 tries every bad descriptor on rank 0's region; rank 2 tries rank
 * 0's descriptor over its endpoint to rank 1. */
static int descriptors(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_tp_rmr *rmr = NULL;
	struct frr_tp_desc d;
	struct frr_tp_mr *local = NULL;
	struct trio t;
	int ret = trio_open(oob, a->backend, &t);
	struct frr_tp_ctx *ctx = t.m.ctx;

	if (ret)
		return ret;
	if (t.m.rank == 1) {
		struct frr_tp_ep *ep = t.m.eps[0];

		d = t.d[0];
		d.job_token ^= 0x5555; /* another job, properly sealed */
		d = reseal(d);
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, &d, &rmr), -EPERM);
		d = t.d[0];
		d.magic = 0;
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, &d, &rmr), -EINVAL);
		d = t.d[0];
		d.len *= 2; /* tampered, not resealed */
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, &d, &rmr), -EINVAL);
		d = t.d[0];
		d.rkey ^= 1;
		d.remote_addr ^= 4096;
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, &d, &rmr), -EINVAL);
		d = t.d[0];
		d.backend = d.backend == FRR_TP_BACKEND_SHM
				? FRR_TP_BACKEND_VERBS
				: FRR_TP_BACKEND_SHM;
		d = reseal(d);
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, &d, &rmr), -EINVAL);
		d = t.d[0];
		d.owner_rank = 1;
		d = reseal(d);
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, &d, &rmr), -EPERM);
		d = t.d[0];
		d.access = FRR_TP_ACCESS_LOCAL;
		d = reseal(d);
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, &d, &rmr), -EACCES);
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(ep, NULL, &rmr), -EINVAL);
		FRR_CHECK(rmr == NULL, "output set on failure");
		/* the genuine one still works after all that */
		ret = frr_tp_rmr_import(ep, &t.d[0], &rmr);
		FRR_CHECK(!ret, "genuine import: %d", ret);
		frr_tp_rmr_release(rmr);
	} else if (t.m.rank == 2) {
		/* rank 0's descriptor over the endpoint to rank 1 */
		FRR_CHECK_ERR(ctx, frr_tp_rmr_import(t.m.eps[1], &t.d[0], &rmr),
			      -EPERM);
	} else {
		/* a LOCAL region's own descriptor is refused by importers,
		 * checked above by resealing; here: exporting it is fine */
		ret = frr_tp_mr_alloc(ctx, 4096, FRR_TP_ACCESS_LOCAL, &local);
		FRR_CHECK(!ret, "alloc: %d", ret);
		ret = frr_tp_mr_export(local, &d);
		FRR_CHECK(!ret && !(d.access & FRR_TP_ACCESS_REMOTE_WRITE),
			  "export of a local region: %d", ret);
		frr_tp_mr_free(local);
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (t.m.rank == 0)
		FRR_CHECK(all_zero(frr_tp_mr_ptr(t.mr), REGION),
			  "region written by a refused import");
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	trio_close(&t);
	return ret;
}

Test(transport_errors, bad_descriptors_refused)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(3, descriptors, &a, 60000);
}

/*
 * A descriptor sealed with a larger length than registered: the import
 * fails, or writes past the real end fail (at post, flush or completion);
 * in no case does the owner's neighbouring memory change.
 */
static int inflated(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_tp_rmr *rmr = NULL;
	struct trio t;
	int ret = trio_open(oob, a->backend, &t);

	if (ret)
		return ret;
	if (t.m.rank == 1) {
		struct frr_tp_desc d = t.d[0];

		d.len = (uint64_t)REGION * 64;
		d = reseal(d);
		ret = frr_tp_rmr_import(t.m.eps[0], &d, &rmr);
		if (!ret) {
			struct frr_tp_wc wc = { .status = 0 };
			int w, f, n = 0;

			w = frr_tp_write(t.m.eps[0], t.src, 0, rmr,
					 (size_t)REGION * 32, 4096, 9,
					 FRR_TP_F_SIGNAL);
			f = frr_tp_flush(t.m.eps[0], FRR_TEST_TIMEOUT_MS);
			for (long s = 0; !w && n == 0 && s < 10000000L; s++)
				n = frr_tp_poll(t.m.ctx, &wc, 1);
			FRR_CHECK(w < 0 || f < 0 || (n == 1 && wc.status < 0),
				  "write past the registered end succeeded "
				  "(write %d, flush %d, wc %d/%d)",
				  w, f, n, wc.status);
			frr_tp_rmr_release(rmr);
		}
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (t.m.rank == 0)
		FRR_CHECK(all_zero(frr_tp_mr_ptr(t.mr), REGION),
			  "region changed");
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	trio_close(&t);
	return ret;
}

Test(transport_errors, inflated_descriptor_never_writes_outside)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, inflated, &a, 60000);
}

static int ranges(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_tp_rmr *rmr = NULL, *rmr2 = NULL;
	struct trio t;
	int ret = trio_open(oob, a->backend, &t);
	struct frr_tp_ctx *ctx = t.m.ctx;

	if (ret)
		return ret;
	if (t.m.rank == 1) {
		struct frr_tp_ep *ep = t.m.eps[0];

		ret = frr_tp_rmr_import(ep, &t.d[0], &rmr);
		FRR_CHECK(!ret, "import: %d", ret);
		ret = frr_tp_rmr_import(t.m.eps[2], &t.d[2], &rmr2);
		FRR_CHECK(!ret, "import: %d", ret);
		FRR_CHECK_ERR(ctx,
			      frr_tp_write(ep, t.src, 0, rmr, REGION, 1, 0, 0),
			      -ERANGE);
		FRR_CHECK_ERR(ctx,
			      frr_tp_write(ep, t.src, 0, rmr, 1, REGION, 0, 0),
			      -ERANGE);
		FRR_CHECK_ERR(
		    ctx, frr_tp_write(ep, t.src, 0, rmr, SIZE_MAX - 2, 8, 0, 0),
		    -ERANGE);
		FRR_CHECK_ERR(
		    ctx, frr_tp_write(ep, t.src, 8, rmr, 8, SIZE_MAX - 4, 0, 0),
		    -ERANGE);
		FRR_CHECK_ERR(
		    ctx, frr_tp_write(ep, t.src, REGION - 4, rmr, 0, 8, 0, 0),
		    -ERANGE);
		FRR_CHECK_ERR(
		    ctx, frr_tp_write(ep, t.src, SIZE_MAX, rmr, 0, 2, 0, 0),
		    -ERANGE);
		FRR_CHECK_ERR(ctx,
			      frr_tp_write_notify(ep, t.src, 0, rmr, REGION - 4,
						  8, 1, 0, 0),
			      -ERANGE);
		FRR_CHECK_ERR(ctx,
			      frr_tp_write_u64(ep, rmr, REGION - 4, 1, 0, 0),
			      -ERANGE);
		FRR_CHECK_ERR(ctx,
			      frr_tp_write_u64(ep, rmr, SIZE_MAX - 7, 1, 0, 0),
			      -ERANGE);
		FRR_CHECK_ERR(ctx, frr_tp_write_u64(ep, rmr, 4, 1, 0, 0),
			      -EINVAL);
		FRR_CHECK_ERR(ctx, frr_tp_write_u64(ep, rmr, 12, 1, 0, 0),
			      -EINVAL);
		FRR_CHECK_ERR(ctx, frr_tp_write(ep, NULL, 0, rmr, 0, 8, 0, 0),
			      -EINVAL);
		FRR_CHECK(frr_tp_write(NULL, t.src, 0, rmr, 0, 8, 0, 0) ==
			      -EINVAL,
			  "NULL ep");
		FRR_CHECK_ERR(ctx, frr_tp_write(ep, t.src, 0, NULL, 0, 8, 0, 0),
			      -EINVAL);
		/* a region imported from rank 2 used over the ep to rank 0 */
		FRR_CHECK_ERR(ctx, frr_tp_write(ep, t.src, 0, rmr2, 0, 8, 0, 0),
			      -EINVAL);
		FRR_CHECK_ERR(ctx, frr_tp_write_u64(ep, rmr2, 0, 1, 0, 0),
			      -EINVAL);
		FRR_CHECK(frr_tp_poll(ctx, NULL, 1) == -EINVAL, "poll NULL");
		FRR_CHECK(frr_tp_poll_notify(ctx, NULL, 1) == -EINVAL,
			  "poll_notify NULL");
		FRR_CHECK(frr_tp_flush(NULL, 10) == -EINVAL, "flush NULL");
		ret = frr_tp_flush(ep, FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
		FRR_CHECK(frr_tp_poll(ctx, &(struct frr_tp_wc){ 0 }, 1) == 0,
			  "a refused write completed");
		frr_tp_rmr_release(rmr2);
		frr_tp_rmr_release(rmr);
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (t.m.rank == 0)
		FRR_CHECK(all_zero(frr_tp_mr_ptr(t.mr), REGION),
			  "a refused write changed the target");
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	trio_close(&t);
	return ret;
}

Test(transport_errors, out_of_range_and_unaligned_refused)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(3, ranges, &a, 60000);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Keep writing (and flushing) until the transport reports the failure; it
 * must be reported within the deadline and be 'want' (0 = any negative).
 */
static int write_until_error(struct trio *t, struct frr_tp_rmr *rmr, int want)
{
	long long deadline = now_ms() + 10000;
	int ret = 0;

	while (now_ms() < deadline) {
		ret = frr_tp_write_u64(t->m.eps[0], rmr, 0, 1, 0, 0);
		if (!ret)
			ret = frr_tp_write(t->m.eps[0], t->src, 0, rmr, 64, 64,
					   0, 0);
		if (!ret)
			ret = frr_tp_flush(t->m.eps[0], 2000);
		if (ret)
			break;
		usleep(1000);
	}
	FRR_CHECK(ret < 0, "writes kept succeeding for 10 s");
	FRR_CHECK(!want || ret == want, "error %d, want %d", ret, want);
	FRR_CHECK(strlen(frr_tp_last_error(t->m.ctx)) > 10, "no message");
	return 0;
}

/* The owner frees its region: the writer's next writes fail. */
static int released(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_tp_rmr *rmr = NULL;
	struct trio t;
	int ret = trio_open(oob, a->backend, &t);

	if (ret)
		return ret;
	if (t.m.rank == 1) {
		ret = frr_tp_rmr_import(t.m.eps[0], &t.d[0], &rmr);
		FRR_CHECK(!ret, "import: %d", ret);
		ret = frr_tp_write_u64(t.m.eps[0], rmr, 0, 5, 0, 0);
		FRR_CHECK(!ret, "write while registered: %d", ret);
		ret = frr_tp_flush(t.m.eps[0], FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "flush: %d", ret);
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (t.m.rank == 0) {
		FRR_CHECK(frr_tp_load_u64(frr_tp_mr_ptr(t.mr)) == 5,
			  "first write missing");
		frr_tp_mr_free(t.mr);
		t.mr = NULL;
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (t.m.rank == 1) {
		struct frr_tp_rmr *again = NULL;

		ret = write_until_error(&t, rmr, 0);
		if (ret)
			return ret;
		frr_tp_rmr_release(rmr);
		/* shm asks the owner: a freed region is its owner failing or
		 * closing, a peer's loss (recovery waits it out), not a
		 * forgery (verbs imports without asking) */
		if (frr_tp_backend_of(t.m.ctx) == FRR_TP_BACKEND_SHM) {
			FRR_CHECK_ERR(
			    t.m.ctx,
			    frr_tp_rmr_import(t.m.eps[0], &t.d[0], &again),
			    -ECONNRESET);
			FRR_CHECK(strstr(frr_tp_last_error(t.m.ctx), "freed"),
				  "%s", frr_tp_last_error(t.m.ctx));
		}
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	trio_close(&t);
	return ret;
}

Test(transport_errors, write_to_region_freed_by_owner_fails)
{
	struct frr_test_arg a = { 0 };

	FRR_TEST_RUN(2, released, &a, 60000);
}

/* The peer closes its endpoint (mode 0) or exits (mode 1): -ENOTCONN. */
static int peer_gone(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_tp_rmr *rmr = NULL;
	struct trio t;
	int ret = trio_open(oob, a->backend, &t);

	if (ret)
		return ret;
	if (t.m.rank == 1) {
		ret = frr_tp_rmr_import(t.m.eps[0], &t.d[0], &rmr);
		FRR_CHECK(!ret, "import: %d", ret);
		FRR_CHECK(frr_tp_ep_alive(t.m.eps[0]) == 1, "peer not alive");
	}
	ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
	FRR_CHECK(!ret, "barrier: %d", ret);
	if (t.m.rank == 0) {
		if (a->iters == 1)
			_exit(0); /* no cleanup at all, like a crash */
		frr_tp_ep_close(t.m.eps[1]);
		t.m.eps[1] = NULL;
		/* stay around until rank 1 has seen it */
		ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
		trio_close(&t);
		return ret;
	}
	ret = write_until_error(&t, rmr, -ENOTCONN);
	if (ret)
		return ret;
	FRR_CHECK(frr_tp_ep_alive(t.m.eps[0]) == 0, "peer still alive");
	/* keeps failing cleanly, never crashes */
	FRR_CHECK(frr_tp_write_u64(t.m.eps[0], rmr, 0, 1, 0, 0) == -ENOTCONN,
		  "second write after peer loss");
	FRR_CHECK(frr_tp_write_notify(t.m.eps[0], t.src, 0, rmr, 0, 8, 1, 0,
				      0) == -ENOTCONN,
		  "notify after peer loss");
	frr_tp_rmr_release(rmr);
	if (a->iters != 1) {
		ret = frr_oob_barrier(oob, FRR_TEST_TIMEOUT_MS);
		FRR_CHECK(!ret, "barrier: %d", ret);
	}
	trio_close(&t);
	return 0;
}

Test(transport_errors, peer_closed_endpoint_gives_enotconn)
{
	struct frr_test_arg a = { .iters = 0 };

	FRR_TEST_RUN(2, peer_gone, &a, 60000);
}

Test(transport_errors, peer_exited_gives_enotconn)
{
	struct frr_test_arg a = { .iters = 1 };

	FRR_TEST_RUN(2, peer_gone, &a, 60000);
}
