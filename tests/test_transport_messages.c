// SPDX-License-Identifier: MIT
/*
 * Errors met in one process, outside the data path: connections refused
 * (another job, another secret) or never accepted, notifications nobody
 * polls, a device not ready, ops a backend lacks.  Each is a negative
 * errno plus a message (frr_tp_last_error); a silent peer's, a device's
 * and a missing op's say what to do: the caller's hint when it gave one,
 * the API's own words otherwise.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>

#include "test_util.h"
#include "transport_impl.h" /* frr_tp_fill_defaults: a partial backend */

TestSuite(transport_messages, .timeout = 120);

/* Rank 1 (c1) connects to rank 0 (c0), which never accepts, within ms:
 * the connect's result, rank 1's last error text in why. */
static int connect_once(const struct frr_tp_config *c0,
			const struct frr_tp_config *c1, int ms, char *why,
			size_t len)
{
	struct frr_tp_ctx *a = NULL, *b = NULL;
	struct frr_tp_ep *ep = NULL;
	struct frr_tp_addr addr;
	int ret;

	cr_assert_eq(frr_tp_open(c0, &a), 0);
	cr_assert_eq(frr_tp_open(c1, &b), 0);
	cr_assert_eq(frr_tp_addr_get(a, &addr), 0);
	ret = frr_tp_ep_connect(b, &addr, ms, &ep);
	cr_assert(ret < 0 && !ep, "connected: %d", ret);
	snprintf(why, len, "%s", frr_tp_last_error(b));
	frr_tp_close(b);
	frr_tp_close(a);
	return ret;
}

static struct frr_tp_config rank_cfg(enum frr_tp_backend b, int rank)
{
	return (struct frr_tp_config){ .backend = b,
				       .job_token = 1,
				       .rank = rank,
				       .nranks = 2,
				       .timeout_ms = 2000,
				       .gid_index = -1 };
}

/* e carries the caller's hint when it gave one (hinted), and the API's own
 * words (api) only when it did not. */
static void assert_hint(const char *e, int hinted, const char *hint,
			const char *api)
{
	cr_assert(hinted ? strstr(e, hint) && !strstr(e, api)
			 : !!strstr(e, api),
		  "hint %d: %s", hinted, e);
}

/* Rank 1 (c1, with the hint when hinted) waits for rank 0 (c0), which
 * does not answer: the result, rank 1's last error text in e. */
typedef int (*silent_fn)(struct frr_tp_config *c0, struct frr_tp_config *c1,
			 int hinted, char *e, size_t len);

/* On each backend, with and without a hint: try times out, and its text
 * says rank 0 did not answer and what gives it longer (assert_hint). */
static void silent_rank0(silent_fn try, const char *hint, const char *api)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	char e[FRR_TP_ERRBUF];

	for (int i = 0; i < nb; i++)
		for (int hinted = 0; hinted < 2; hinted++) {
			struct frr_tp_config c0 = rank_cfg(bs[i], 0),
					     c1 = rank_cfg(bs[i], 1);

			cr_assert_eq(try(&c0, &c1, hinted, e, sizeof(e)),
				     -ETIMEDOUT, "%s", e);
			cr_assert(strstr(e, "rank 0") &&
				      strstr(e, "stopped, hung or overloaded"),
				  "%s", e);
			assert_hint(e, hinted, hint, api);
		}
}

/* Connecting to an address of another job is refused. */
Test(transport_messages, connect_to_other_job_refused)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	char why[FRR_TP_ERRBUF];

	for (int i = 0; i < nb; i++) {
		struct frr_tp_config c0 = rank_cfg(bs[i], 0),
				     c1 = rank_cfg(bs[i], 1);

		c1.job_token = 2;
		connect_once(&c0, &c1, 2000, why, sizeof(why));
		cr_assert_gt(strlen(why), 10);
	}
}

/* A peer that never accepts (stopped, hung, or not calling
 * frr_tp_ep_accept): the connect times out saying so, with the caller's
 * timeout_hint in place of the API's advice when it gives one. */
static int connect_silent(struct frr_tp_config *c0, struct frr_tp_config *c1,
			  int hinted, char *e, size_t len)
{
	c1->timeout_hint = hinted ? "raise --wait" : NULL;
	return connect_once(c0, c1, 800, e, len);
}

Test(transport_messages, connect_to_a_silent_peer_says_what_to_do)
{
	silent_rank0(connect_silent, "raise --wait", "frr_tp_ep_accept");
}

struct accept_arg {
	struct frr_tp_ctx *ctx;
	struct frr_tp_ep *ep;
	int ret;
};

static void *accept_thread(void *p)
{
	struct accept_arg *a = p;

	a->ret = frr_tp_ep_accept(a->ctx, 3000, &a->ep);
	return NULL;
}

/* Same job tag, another secret: the handshake (shm) or the rdma_cm MAC
 * (verbs) refuses the connection, and the acceptor gets no endpoint. */
Test(transport_messages, connect_with_wrong_secret_refused)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	for (int i = 0; i < nb; i++) {
		struct frr_tp_config c0 = { .backend = bs[i],
					    .job_token = 7,
					    .rank = 0,
					    .nranks = 2,
					    .timeout_ms = 2000,
					    .gid_index = -1 };
		struct frr_tp_config c1 = c0;
		struct accept_arg acc = { 0 };
		struct frr_tp_ctx *b = NULL;
		struct frr_tp_ep *ep = NULL;
		struct frr_tp_addr addr;
		pthread_t th;

		c1.rank = 1;
		cr_assert_eq(frr_job_secret_random(&c0.job_secret), 0);
		cr_assert_eq(frr_job_secret_random(&c1.job_secret), 0);
		cr_assert_eq(frr_tp_open(&c0, &acc.ctx), 0);
		cr_assert_eq(frr_tp_open(&c1, &b), 0);
		cr_assert_eq(frr_tp_addr_get(acc.ctx, &addr), 0);
		cr_assert_eq(pthread_create(&th, NULL, accept_thread, &acc), 0);
		cr_assert_lt(frr_tp_ep_connect(b, &addr, 2000, &ep), 0,
			     "%s: a wrong secret connected",
			     frr_tp_backend_name(bs[i]));
		cr_assert_null(ep);
		cr_assert(strstr(frr_tp_last_error(b), "secret"), "%s: %s",
			  frr_tp_backend_name(bs[i]), frr_tp_last_error(b));
		pthread_join(th, NULL);
		cr_assert_lt(acc.ret, 0, "%s: the acceptor got an endpoint",
			     frr_tp_backend_name(bs[i]));
		cr_assert_null(acc.ep);
		frr_tp_close(b);
		frr_tp_close(acc.ctx);
	}
}

/* Rank 1 sends notifications to rank 0, which never polls them, until a
 * write fails: the result, rank 1's last error text in why. */
static int notify_unpolled(struct frr_tp_config c0, struct frr_tp_config c1,
			   char *why, size_t len)
{
	struct accept_arg acc = { 0 };
	struct frr_tp_ctx *b = NULL;
	struct frr_tp_ep *ep = NULL;
	struct frr_tp_mr *dst = NULL, *src = NULL;
	struct frr_tp_rmr *rmr = NULL;
	struct frr_tp_desc d;
	struct frr_tp_addr addr;
	pthread_t th;
	int ret = 0;

	cr_assert_eq(frr_tp_open(&c0, &acc.ctx), 0);
	cr_assert_eq(frr_tp_open(&c1, &b), 0);
	cr_assert_eq(frr_tp_addr_get(acc.ctx, &addr), 0);
	cr_assert_eq(pthread_create(&th, NULL, accept_thread, &acc), 0);
	cr_assert_eq(frr_tp_ep_connect(b, &addr, 3000, &ep), 0, "%s",
		     frr_tp_last_error(b));
	pthread_join(th, NULL);
	cr_assert_eq(acc.ret, 0, "%s", frr_tp_last_error(acc.ctx));
	cr_assert_eq(
	    frr_tp_mr_alloc(acc.ctx, 4096, FRR_TP_ACCESS_REMOTE_WRITE, &dst),
	    0);
	cr_assert_eq(frr_tp_mr_export(dst, &d), 0);
	cr_assert_eq(frr_tp_rmr_import(ep, &d, &rmr), 0, "%s",
		     frr_tp_last_error(b));
	cr_assert_eq(frr_tp_mr_alloc(b, 64, FRR_TP_ACCESS_LOCAL, &src), 0);
	/* more than either backend buffers: shm's ring, verbs' receives
	 * and send queue */
	for (int i = 0; i < 100000 && !ret; i++)
		ret = frr_tp_write_notify(ep, src, 0, rmr, 0, 8, (uint32_t)i, 0,
					  0);
	snprintf(why, len, "%s", frr_tp_last_error(b));
	frr_tp_rmr_release(rmr);
	frr_tp_mr_free(src);
	frr_tp_ep_close(ep);
	frr_tp_close(b);
	frr_tp_mr_free(dst);
	frr_tp_ep_close(acc.ep);
	frr_tp_close(acc.ctx);
	return ret;
}

/* A peer that stops taking notifications (stopped, hung, or not calling
 * frr_tp_poll_notify): the sender's write times out after the ctx's
 * timeout_ms saying so, with the caller's wait_hint in place of the API's
 * advice when it gives one. */
static int notify_silent(struct frr_tp_config *c0, struct frr_tp_config *c1,
			 int hinted, char *e, size_t len)
{
	c1->timeout_ms = 500;
	c1->wait_hint = hinted ? "raise --patience" : NULL;
	return notify_unpolled(*c0, *c1, e, len);
}

Test(transport_messages, notifications_nobody_polls_say_what_to_do)
{
	silent_rank0(notify_silent, "raise --patience",
		     "is it polling its notifications?");
}

/* verbs with a GID index no port has: on a host without a device the open
 * fails for that, on one with a device for the index; either way the
 * message ends with the caller's doctor_hint, or the API's tools without. */
Test(transport_messages, a_device_not_ready_names_the_callers_checker)
{
	struct frr_tp_config c = rank_cfg(FRR_TP_BACKEND_VERBS, 0);
	struct frr_tp_ctx *ctx = NULL;

	c.nranks = 1;
	c.gid_index = 99;
	for (int hinted = 0; hinted < 2; hinted++) {
		char e[2048];
		int saved, ret;
		FILE *cap = frr_test_stderr_begin(&saved);

		cr_assert_not_null(cap);
		c.doctor_hint = hinted ? "run the checker" : NULL;
		ret = frr_tp_open(&c, &ctx);
		frr_test_stderr_end(cap, saved, e, sizeof(e));
		if (ret == -EOPNOTSUPP)
			cr_skip_test("verbs is not built in: %s", e);
		cr_assert_lt(ret, 0, "opened with GID index 99");
		cr_assert(strstr(e, "no RDMA device") ||
			      strstr(e, "GID index 99"),
			  "%s", e);
		assert_hint(e, hinted, "(run the checker)",
			    "'rdma link show' and 'ibv_devinfo -v'");
	}
}

/* A backend's missing entries are filled once with "not supported" defaults
 * (tp_defaults.c, issue 25 item 6): calls fail with -EOPNOTSUPP naming the
 * op, the backend and the caller's hint; releases do nothing. */
Test(transport_messages, missing_ops_say_not_supported)
{
	struct frr_tp_ctx ctx = { .ops = { .name = "partial" },
				  .cfg = { .backend_hint = "use backend X" } };
	struct frr_tp_ep ep = { .ctx = &ctx };
	struct frr_tp_mr mr = { .ctx = &ctx };
	struct frr_tp_rmr rmr = { .ep = &ep };
	struct frr_tp_wc wc;

	frr_tp_fill_defaults(&ctx.ops);
	cr_assert_eq(ctx.ops.write(&ep, &mr, 0, &rmr, 0, 8, 0, 0), -EOPNOTSUPP);
	cr_assert_str_eq(frr_tp_last_error(&ctx),
			 "write is not supported by backend partial; use "
			 "backend X");
	cr_assert_eq(ctx.ops.write_u64(&ep, &rmr, 0, 1, 0, 0), -EOPNOTSUPP);
	cr_assert_eq(ctx.ops.poll(&ctx, &wc, 1), -EOPNOTSUPP);
	cr_assert_eq(ctx.ops.flush(&ep, 10), -EOPNOTSUPP);
	cr_assert(strstr(frr_tp_last_error(&ctx), "flush is not supported"));
	cr_assert_eq(ctx.ops.ep_alive(&ep), 1);
	cr_assert_str_eq(ctx.ops.device_name(&ctx), "partial");
	ctx.ops.rmr_release(&rmr);
	ctx.ops.ep_close(&ep);
	ctx.ops.mr_free(&mr);
	ctx.ops.close(&ctx);
	/* without a hint: the API's words */
	ctx.cfg.backend_hint = NULL;
	cr_assert_eq(ctx.ops.addr_get(&ctx, NULL), -EOPNOTSUPP);
	cr_assert(strstr(frr_tp_last_error(&ctx), "another backend"), "%s",
		  frr_tp_last_error(&ctx));
}
