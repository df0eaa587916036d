// SPDX-License-Identifier: MIT
/*
 * shm access control: a region's memfd goes only to a process of the same
 * uid (or root) that proves the job secret.  Drives the handshake
 * (shm_auth_connect) by hand against a rank's service thread: the right
 * secret gets the region (so the refusals below are real), a wrong one does
 * not, a process of another uid does not even with the right secret, and
 * neither the secret nor the job tag appears in /proc/net/unix or in any
 * reply; a refusal whose error is no error does not connect.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flexrr/transport.h"
#include "shm/shm.h"
#include "test_util.h"

TestSuite(transport_auth, .timeout = 60);

struct fixture {
	struct frr_tp_config cfg;
	struct frr_tp_ctx *ctx;
	struct frr_tp_mr *mr;
	struct frr_tp_desc desc;
	struct frr_tp_addr addr;
};

static void fixture_open(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->cfg = (struct frr_tp_config){ .backend = FRR_TP_BACKEND_SHM,
					 .rank = 0,
					 .nranks = 2,
					 .timeout_ms = 2000,
					 .gid_index = -1 };
	cr_assert_eq(frr_job_secret_random(&f->cfg.job_secret), 0);
	f->cfg.job_token = frr_job_secret_tag(&f->cfg.job_secret);
	cr_assert_eq(frr_tp_open(&f->cfg, &f->ctx), 0);
	cr_assert_eq(
	    frr_tp_mr_alloc(f->ctx, 4096, FRR_TP_ACCESS_REMOTE_WRITE, &f->mr),
	    0);
	cr_assert_eq(frr_tp_mr_export(f->mr, &f->desc), 0);
	cr_assert_eq(frr_tp_addr_get(f->ctx, &f->addr), 0);
}

static void fixture_close(struct fixture *f)
{
	frr_tp_mr_free(f->mr);
	frr_tp_close(f->ctx);
}

/* Ask rank 0 at addr for region_id as rank 1 knowing 'secret': 1 = got the
 * memfd, 0 = refused (*ans holds the reply), < 0 = no answer. */
static int try_import(const char *addr, const struct frr_job_secret *secret,
		      uint32_t region_id, struct shm_msg *ans)
{
	struct shm_ctx me;
	struct shm_msg q;
	int fd, got = -1, ret;

	memset(&me, 0, sizeof(me));
	me.secret = *secret;
	me.rank = 1;
	me.nranks = 2;
	snprintf(me.addr, sizeof(me.addr), "@flexrr-test-importer");
	fd = shm_dial(addr, 2000);
	if (fd < 0)
		return fd;
	shm_msg_init(&q, &me, SHM_IMPORT);
	q.region_id = region_id;
	ret = shm_auth_connect(&me, fd, 0, &q, -1, 2000, ans, &got);
	close(fd);
	if (ret)
		return ret;
	if (got >= 0) {
		close(got);
		return ans->type == SHM_IMPORT_OK;
	}
	return 0;
}

/* 1 when the n bytes of needle occur in the reply or its text. */
static int reply_holds(const struct shm_msg *m, const void *needle, size_t n)
{
	return memmem(m, sizeof(*m), needle, n) != NULL;
}

Test(transport_auth, right_secret_imports_wrong_one_is_refused)
{
	struct fixture f;
	struct frr_job_secret wrong;
	struct shm_msg ans;

	fixture_open(&f);
	cr_assert_eq(
	    try_import(f.addr.str, &f.cfg.job_secret, f.desc.region_id, &ans),
	    1, "the job's own secret must import the region");
	cr_assert_eq(frr_job_secret_random(&wrong), 0);
	cr_assert_eq(try_import(f.addr.str, &wrong, f.desc.region_id, &ans), 0,
		     "a wrong secret got the region");
	cr_assert_eq(ans.type, SHM_IMPORT_ERR);
	cr_assert(strstr(ans.why, "does not prove"), "%s", ans.why);
	cr_assert_not(
	    reply_holds(&ans, f.cfg.job_secret.b, sizeof(f.cfg.job_secret.b)));
	cr_assert_not(
	    reply_holds(&ans, &f.cfg.job_token, sizeof(f.cfg.job_token)));
	fixture_close(&f);
}

/* The acceptor's own check: a connector that sends a made-up proof gets a
 * refusal and no fd, and the refusal does not hold the secret. */
Test(transport_auth, forged_proof_is_refused_by_the_acceptor)
{
	struct fixture f;
	struct shm_ctx me;
	struct shm_msg q, m;
	int fd, got = -1;

	fixture_open(&f);
	memset(&me, 0, sizeof(me));
	me.rank = 1;
	me.nranks = 2;
	fd = shm_dial(f.addr.str, 2000);
	cr_assert_geq(fd, 0);
	shm_msg_init(&q, &me, SHM_IMPORT);
	q.region_id = f.desc.region_id;
	cr_assert_eq(shm_msg_send(fd, &q, -1), 0);
	cr_assert_eq(shm_msg_recv(fd, &m, &got, 2000), 0);
	cr_assert_eq(m.type, SHM_CHALLENGE);
	cr_assert_lt(got, 0);
	shm_msg_init(&q, &me, SHM_PROOF);
	memset(q.mac, 0xa5, sizeof(q.mac));
	cr_assert_eq(shm_msg_send(fd, &q, -1), 0);
	cr_assert_eq(shm_msg_recv(fd, &m, &got, 2000), 0);
	cr_assert_lt(got, 0, "a forged proof got an fd");
	cr_assert_eq(m.type, SHM_IMPORT_ERR);
	cr_assert(strstr(m.why, "does not prove the job secret"), "%s", m.why);
	cr_assert_not(
	    reply_holds(&m, f.cfg.job_secret.b, sizeof(f.cfg.job_secret.b)));
	close(fd);
	fixture_close(&f);
}

Test(transport_auth, socket_names_hold_no_secret)
{
	struct fixture f;
	char hex[2 * FRR_JOB_SECRET_LEN + 1], tag[17], *all;
	size_t n = 0, cap = 1 << 20;
	FILE *pn;

	fixture_open(&f);
	for (int i = 0; i < FRR_JOB_SECRET_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", f.cfg.job_secret.b[i]);
	snprintf(tag, sizeof(tag), "%016llx",
		 (unsigned long long)f.cfg.job_token);
	all = calloc(1, cap + 1);
	pn = fopen("/proc/net/unix", "r");
	cr_assert(pn && all);
	n = fread(all, 1, cap, pn);
	fclose(pn);
	all[n] = 0;
	/* the name is listed (else this test proves nothing) */
	cr_assert(strstr(all, f.addr.str + 1), "%s not in /proc/net/unix",
		  f.addr.str);
	cr_assert_null(strstr(all, hex));
	cr_assert_null(strstr(all, tag));
	cr_assert_null(strstr(f.addr.str, tag), "%s", f.addr.str);
	free(all);
	fixture_close(&f);
}

/* Another uid, even one that knows the secret, gets no region. */
Test(transport_auth, other_uid_is_refused)
{
	struct fixture f;
	int st;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root to switch to uid 65534 (CI runs as "
			     "root); not run as uid %d",
			     (int)geteuid());
	fixture_open(&f);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct shm_msg ans;
		int got;

		if (setgid(65534) || setuid(65534))
			_exit(3);
		got = try_import(f.addr.str, &f.cfg.job_secret,
				 f.desc.region_id, &ans);
		if (got == 1)
			_exit(1); /* it got the memfd */
		if (got == 0 && (reply_holds(&ans, f.cfg.job_secret.b,
					     sizeof(f.cfg.job_secret.b)) ||
				 !strstr(ans.why, "uid")))
			_exit(2);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the uid-65534 child crashed");
	cr_assert_neq(WEXITSTATUS(st), 3, "setuid(65534) failed");
	cr_assert_neq(WEXITSTATUS(st), 1,
		      "uid 65534 imported a region of uid %d", (int)geteuid());
	cr_assert_eq(WEXITSTATUS(st), 0,
		     "the refusal was not said, or held the secret");
	fixture_close(&f);
}

/* Silent clients of our own uid (they connect and say nothing) no longer
 * hold the service thread: with 20 of them open, a rank that proves the
 * secret is served at once (before, each held the thread for its handshake
 * timeout, 2 s, so the real ranks' requests timed out and the job's start
 * failed blaming rank 0); each silent one is dropped at its deadline. */
Test(transport_auth, silent_clients_do_not_stall_the_handshake)
{
	struct fixture f;
	struct shm_msg ans;
	int silent[20];

	fixture_open(&f);
	for (int i = 0; i < 20; i++) {
		silent[i] = shm_dial(f.addr.str, 2000);
		cr_assert_geq(silent[i], 0, "connect %d: %d", i, silent[i]);
	}
	/* within try_import's own 2 s: the old service thread spent 2 s on
	 * the first silent client alone */
	cr_assert_eq(
	    try_import(f.addr.str, &f.cfg.job_secret, f.desc.region_id, &ans),
	    1, "a rank of the job was not served beside silent clients");
	/* and a silent one is answered and dropped at its deadline */
	{
		int got = -1, ret = shm_msg_recv(silent[0], &ans, &got, 10000);

		cr_assert_eq(ret, 0, "no answer to a silent client: %d", ret);
		cr_assert_eq(ans.type, SHM_REJECT);
		cr_assert(strstr(ans.why, "sent nothing"), "%s", ans.why);
	}
	for (int i = 0; i < 20; i++)
		close(silent[i]);
	fixture_close(&f);
}

/* A listener that answers a connection's first message with a refusal
 * carrying err (what a hostile or broken peer may send). */
struct rejector {
	int lfd;
	int32_t err;
};

static void *rejector_main(void *p)
{
	struct rejector *r = p;
	struct shm_ctx me;
	struct shm_msg q, a;
	int fd = accept(r->lfd, NULL, NULL), got = -1;

	if (fd < 0)
		return NULL;
	memset(&me, 0, sizeof(me));
	if (!shm_msg_recv(fd, &q, &got, 5000)) {
		shm_msg_init(&a, &me, SHM_REJECT);
		a.err = r->err;
		snprintf(a.why, sizeof(a.why), "no reason");
		(void)shm_msg_send(fd, &a, -1);
	}
	if (got >= 0)
		close(got);
	close(fd);
	return NULL;
}

/* A refusal with err 0 or > 0 once made the connect return 0 with no
 * endpoint (the caller then used NULL): it is a protocol error. */
Test(transport_auth, a_refusal_without_an_error_does_not_connect)
{
	const int32_t errs[] = { 0, 5, -EACCES };

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		struct frr_tp_config cfg = { .backend = FRR_TP_BACKEND_SHM,
					     .job_token = 7,
					     .rank = 1,
					     .nranks = 2,
					     .timeout_ms = 2000,
					     .gid_index = -1 };
		struct frr_tp_addr to = { .backend = FRR_TP_BACKEND_SHM,
					  .rank = 0,
					  .job_token = 7 };
		struct rejector r = { .err = errs[i] };
		struct sockaddr_un sa;
		struct frr_tp_ctx *ctx = NULL;
		struct frr_tp_ep *ep = NULL;
		socklen_t salen;
		pthread_t th;
		int ret;

		snprintf(to.str, sizeof(to.str), "@flexrr-test-rejector-%d-%zu",
			 (int)getpid(), i);
		cr_assert_eq(shm_sockaddr_of(to.str, &sa, &salen), 0);
		r.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		cr_assert(r.lfd >= 0);
		cr_assert_eq(bind(r.lfd, (struct sockaddr *)&sa, salen), 0);
		cr_assert_eq(listen(r.lfd, 1), 0);
		cr_assert_eq(pthread_create(&th, NULL, rejector_main, &r), 0);
		cr_assert_eq(frr_tp_open(&cfg, &ctx), 0);
		ret = frr_tp_ep_connect(ctx, &to, 2000, &ep);
		pthread_join(th, NULL);
		cr_assert_eq(ret, errs[i] < 0 ? errs[i] : -EPROTO,
			     "err %d: connect %d (ep %p): %s", errs[i], ret,
			     (void *)ep, frr_tp_last_error(ctx));
		cr_assert_null(ep);
		cr_assert(strstr(frr_tp_last_error(ctx), "refused"), "%s",
			  frr_tp_last_error(ctx));
		frr_tp_close(ctx);
		close(r.lfd);
	}
}
