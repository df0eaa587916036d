// SPDX-License-Identifier: MIT
/*
 * verbs-only failure cases: each must fail with an error that names the
 * cause, within a bounded time, leaving nothing behind.  Skipped when this
 * host has no RDMA device with an ACTIVE port; scripts/test-verbs.sh runs
 * them for real inside the soft-RoCE VM.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flexrr/log.h"
#include "test_util.h"

TestSuite(verbs_errors, .timeout = 120);

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void need_verbs(void)
{
	if (!frr_tp_backend_available(FRR_TP_BACKEND_VERBS))
		cr_skip_test("no RDMA device with an ACTIVE port (run "
			     "scripts/test-verbs.sh: it uses the soft-RoCE "
			     "VM)");
}

static struct frr_tp_config cfg_of(int rank, int nranks)
{
	struct frr_tp_config c = {
		.backend = FRR_TP_BACKEND_VERBS,
		.job_token = 0x5eed0001,
		.rank = rank,
		.nranks = nranks,
		.timeout_ms = 5000,
		.gid_index = -1,
	};
	return c;
}

/* The first usable GID index: the one auto-selection logs. */
static int auto_gid(void)
{
	struct frr_tp_config c = cfg_of(0, 1);
	struct frr_tp_ctx *ctx;
	const char *s;
	int g = -1;

	cr_assert_eq(frr_tp_open(&c, &ctx), 0, "verbs open (auto GID)");
	s = strstr(frr_tp_device_name(ctx), " gid ");
	cr_assert(s, "device name '%s' names the GID", frr_tp_device_name(ctx));
	g = atoi(s + 5);
	frr_tp_close(ctx);
	return g;
}

Test(verbs_errors, wrong_gid_index_is_named)
{
	struct frr_tp_config c = cfg_of(0, 1);
	struct frr_tp_ctx *ctx = NULL;
	int good, ret;

	need_verbs();
	good = auto_gid();
	/* an empty entry at the end of the table */
	c.gid_index = 4000;
	ret = frr_tp_open(&c, &ctx);
	cr_assert_eq(ret, -EINVAL, "open with GID index 4000: %d", ret);
	/* an existing entry that is not RoCE v2 IPv4 (index 0: link-local) */
	cr_assert_eq(setenv("FLEXRR_GID_INDEX", "0", 1), 0);
	c.gid_index = -1;
	ret = frr_tp_open(&c, &ctx);
	unsetenv("FLEXRR_GID_INDEX");
	if (good != 0)
		cr_assert_eq(ret, -EINVAL, "open with GID index 0: %d", ret);
	else if (!ret)
		frr_tp_close(ctx);
	/* garbage in the environment */
	cr_assert_eq(setenv("FLEXRR_GID_INDEX", "one", 1), 0);
	ret = frr_tp_open(&c, &ctx);
	unsetenv("FLEXRR_GID_INDEX");
	cr_assert_eq(ret, -EINVAL, "FLEXRR_GID_INDEX=one: %d", ret);
	/* and the explicit good one works */
	c.gid_index = good > 0 ? good : -1;
	ret = frr_tp_open(&c, &ctx);
	cr_assert_eq(ret, 0, "open with GID index %d: %d", good, ret);
	frr_tp_close(ctx);
}

Test(verbs_errors, unknown_device_is_named)
{
	struct frr_tp_config c = cfg_of(0, 1);
	struct frr_tp_ctx *ctx = NULL;

	need_verbs();
	c.device = "nosuchdev9";
	cr_assert_eq(frr_tp_open(&c, &ctx), -ENODEV);
}

/* Connect to an address where nobody listens: refused, in bounded time. */
Test(verbs_errors, unreachable_peer_times_out_with_cause)
{
	struct frr_tp_config c = cfg_of(0, 2);
	struct frr_tp_ctx *ctx;
	struct frr_tp_ep *ep = NULL;
	struct frr_tp_addr me, peer;
	long long t0, dt;
	char *colon;
	int ret;

	need_verbs();
	cr_assert_eq(frr_tp_open(&c, &ctx), 0);
	cr_assert_eq(frr_tp_addr_get(ctx, &me), 0);
	peer = me;
	peer.rank = 1;
	colon = strrchr(peer.str, ':');
	cr_assert(colon);
	/* our own IP, a port nobody listens on */
	snprintf(colon, sizeof(peer.str) - (size_t)(colon - peer.str), ":%d",
		 atoi(colon + 1) == 9 ? 11 : 9);
	t0 = ms_now();
	ret = frr_tp_ep_connect(ctx, &peer, 1500, &ep);
	dt = ms_now() - t0;
	cr_assert_eq(ret, -ECONNREFUSED, "connect to %s: %d (%s)", peer.str,
		     ret, frr_tp_last_error(ctx));
	cr_assert(strstr(frr_tp_last_error(ctx), "listen"),
		  "error names the cause: %s", frr_tp_last_error(ctx));
	cr_assert(dt < 6000, "gave up after %lld ms (timeout 1500)", dt);
	frr_tp_close(ctx);
}

/* A peer nobody answers for at all (no host with that IP). */
Test(verbs_errors, silent_peer_times_out_with_cause)
{
	struct frr_tp_config c = cfg_of(0, 2);
	struct frr_tp_ctx *ctx;
	struct frr_tp_ep *ep = NULL;
	struct frr_tp_addr me, peer;
	unsigned a, b, d, x;
	long long t0, dt;
	int ret;

	need_verbs();
	cr_assert_eq(frr_tp_open(&c, &ctx), 0);
	cr_assert_eq(frr_tp_addr_get(ctx, &me), 0);
	cr_assert_eq(sscanf(me.str, "%u.%u.%u.%u:", &a, &b, &d, &x), 4);
	peer = me;
	peer.rank = 1;
	/* a neighbour address in our subnet that no host holds */
	snprintf(peer.str, sizeof(peer.str), "%u.%u.%u.%u:7471", a, b, d,
		 x == 250 ? 251 : 250);
	t0 = ms_now();
	ret = frr_tp_ep_connect(ctx, &peer, 2000, &ep);
	dt = ms_now() - t0;
	cr_assert(ret == -EHOSTUNREACH || ret == -ETIMEDOUT,
		  "connect to %s: %d (%s)", peer.str, ret,
		  frr_tp_last_error(ctx));
	cr_assert(strstr(frr_tp_last_error(ctx), peer.str),
		  "error names the peer: %s", frr_tp_last_error(ctx));
	cr_assert(dt < 8000, "gave up after %lld ms (timeout 2000)", dt);
	frr_tp_close(ctx);
}

/*
 * A process whose memlock limit is below the region asked for, without
 * CAP_IPC_LOCK (root has it, so the child drops to 'nobody'): -ENOMEM and a
 * message that names the limit and the fix.
 */
Test(verbs_errors, memlock_too_low_is_named)
{
	int pfd[2], status;
	char msg[512] = "";
	pid_t pid;

	need_verbs();
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		struct frr_tp_config c = cfg_of(0, 1);
		struct frr_tp_ctx *ctx;
		struct frr_tp_mr *mr;
		int ret;

		close(pfd[0]);
		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		if (getuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(11);
		ret = frr_tp_open(&c, &ctx);
		if (ret)
			_exit(12);
		ret = frr_tp_mr_alloc(ctx, 8u << 20, FRR_TP_ACCESS_REMOTE_WRITE,
				      &mr);
		if (write(pfd[1], frr_tp_last_error(ctx),
			  strlen(frr_tp_last_error(ctx))) < 0)
			_exit(13);
		if (!ret)
			frr_tp_mr_free(mr);
		frr_tp_close(ctx);
		_exit(ret == -ENOMEM ? 0 : 14);
	}
	close(pfd[1]);
	if (read(pfd[0], msg, sizeof(msg) - 1) < 0)
		msg[0] = '\0';
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died");
	cr_assert_eq(WEXITSTATUS(status), 0,
		     "child status %d (12: open failed as nobody; 14: "
		     "mr_alloc did not fail with -ENOMEM): %s",
		     WEXITSTATUS(status), msg);
	cr_assert(strstr(msg, "memlock") && strstr(msg, "ulimit -l"),
		  "error names memlock and the fix: %s", msg);
}

/*
 * Rank 0 exits in the middle of a stream of writes from rank 1: rank 1
 * gets -ENOTCONN or -ECONNRESET, in bounded time, and the endpoint reads as
 * dead.
 */
#define STREAM_REGION (1u << 20)

static int peer_exits(struct frr_oob *oob, void *arg)
{
	struct frr_test_arg *a = arg;
	struct frr_test_mesh m;
	struct frr_tp_mr *mr, *src;
	struct frr_tp_desc all[2];
	struct frr_tp_rmr *rmr;
	long long t0;
	int ret;

	(void)a;
	ret = frr_test_mesh_open(oob, FRR_TP_BACKEND_VERBS, &m);
	FRR_CHECK(!ret, "mesh: %d", ret);
	ret = frr_tp_mr_alloc(m.ctx, STREAM_REGION, FRR_TP_ACCESS_REMOTE_WRITE,
			      &mr);
	FRR_CHECK(!ret, "mr: %d", ret);
	ret = frr_test_share_desc(oob, mr, all);
	FRR_CHECK(!ret, "share: %d", ret);
	if (m.rank == 0) {
		struct frr_tp_notify n;

		/* wait for the stream to start, then die without cleanup */
		t0 = ms_now();
		while (frr_tp_poll_notify(m.ctx, &n, 1) == 0)
			FRR_CHECK(ms_now() - t0 < 30000, "no notification");
		_exit(0);
	}
	ret = frr_tp_mr_alloc(m.ctx, STREAM_REGION, FRR_TP_ACCESS_LOCAL, &src);
	FRR_CHECK(!ret, "src: %d", ret);
	ret = frr_tp_rmr_import(m.eps[0], &all[0], &rmr);
	FRR_CHECK(!ret, "import: %d", ret);
	ret = frr_tp_write_notify(m.eps[0], src, 0, rmr, 0, 64, 1, 0, 0);
	FRR_CHECK(!ret, "first write: %d", ret);
	t0 = ms_now();
	for (long k = 0; ret == 0; k++) {
		ret = frr_tp_write(m.eps[0], src, 0, rmr, 0, STREAM_REGION / 4,
				   (uint64_t)k, 0);
		if (!ret && k % 16 == 15)
			ret = frr_tp_flush(m.eps[0], 5000);
		FRR_CHECK(ms_now() - t0 < 20000,
			  "no error 20 s after the peer exited");
	}
	FRR_CHECK(ret == -ENOTCONN || ret == -ECONNRESET,
		  "error %d (%s), want -ENOTCONN/-ECONNRESET", ret,
		  frr_tp_last_error(m.ctx));
	FRR_CHECK(!frr_tp_ep_alive(m.eps[0]), "endpoint still reads alive");
	FRR_CHECK(strstr(frr_tp_last_error(m.ctx), "rank 0"),
		  "error names the peer: %s", frr_tp_last_error(m.ctx));
	frr_tp_rmr_release(rmr);
	frr_tp_mr_free(src);
	frr_tp_mr_free(mr);
	frr_test_mesh_close(&m);
	return 0;
}

Test(verbs_errors, peer_exit_mid_transfer_is_reported)
{
	struct frr_test_arg a = { .backend = FRR_TP_BACKEND_VERBS };

	need_verbs();
	cr_assert_eq(frr_launch_local(2, peer_exits, &a, 60000), 0,
		     "peer exit: the ranks' messages are above");
}
