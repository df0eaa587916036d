// SPDX-License-Identifier: MIT
/*
 * The TCP rendezvous under attack from the same host: while rank 0 of a
 * 2-rank job waits, the test holds 100 idle connections open against it and
 * sends garbage, an oversized hello and a rank that does not know the job
 * secret.  Rank 0 must drop each of them, say what it was, and the job must
 * still start and give the exact BSP answer.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdint.h>

#include "toy/toy.h"
#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

#define TOKEN_A "rdv-test-0123456789abcdef0123456789abcdef"
#define TOKEN_B "rdv-test-fedcba9876543210fedcba9876543210"
#define NIDLE 100

TestSuite(runtime_rendezvous, .timeout = 120);

/* A TCP connection to 127.0.0.1:port, retried for up to 10 s while rank 0
 * starts; -1 if it never listens. */
static int connect_rank0(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	double dl = rt_now() + 10;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	while (rt_now() < dl) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		close(fd);
		usleep(20000);
	}
	return -1;
}

/* An oversized hello: right magic and version (RDV_MAGIC, RDV_VERSION of
 * bootstrap/rdv.h), a length field of 1 MiB, and the bytes behind it. */
static void send_oversized(int fd)
{
	static char junk[65536];
	uint32_t hdr[3] = { 0x46525256u, 0, 1u << 20 };
	uint16_t ver_type[2] = { 4, 1 };

	memcpy(&hdr[1], ver_type, sizeof(ver_type));
	cr_assert_eq(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	(void)!write(fd, junk, sizeof(junk));
}

Test(runtime_rendezvous, job_starts_despite_idle_garbage_and_impostors)
{
	struct frr_toy_params p = {
		.seed = 3, .nparts = 2, .items = 30, .dim = 16, .lr = 0.5f
	};
	struct rt_run *r0 = calloc(1, sizeof(*r0)),
		      *r1 = calloc(1, sizeof(*r1)),
		      *rx = calloc(1, sizeof(*rx));
	int port = rt_free_port(), idle[NIDLE], g, o;
	char addr[64], path[128];
	float want[16];
	pid_t p0, p1, px;

	cr_assert_eq(frr_toy_reference(&p, 5, want), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(path, sizeof(path), "/tmp/frr-rdv-%d.txt", getpid());
	char *argv[] = { (char *)rt_bin(),
			 "run",
			 "--backend",
			 "shm",
			 "--rendezvous",
			 addr,
			 "--rendezvous-timeout",
			 "30",
			 "--clocks",
			 "5",
			 "--seed",
			 "3",
			 "--save",
			 path,
			 "-q",
			 "toy",
			 "--items",
			 "30",
			 NULL };
	char *e0[] = { "FLEXRR_RANK=0", "FLEXRR_SIZE=2",
		       "FLEXRR_JOB_TOKEN=" TOKEN_A, NULL };
	char *e1[] = { "FLEXRR_RANK=1", "FLEXRR_SIZE=2",
		       "FLEXRR_JOB_TOKEN=" TOKEN_A, NULL };
	char *ex[] = { "FLEXRR_RANK=1", "FLEXRR_SIZE=2",
		       "FLEXRR_JOB_TOKEN=" TOKEN_B, NULL };

	p0 = rt_spawn(argv, e0, "rdv0");
	for (int i = 0; i < NIDLE; i++) {
		idle[i] = connect_rank0(port);
		cr_assert_geq(idle[i], 0, "rank 0 never listened on %s", addr);
	}
	g = connect_rank0(port);
	cr_assert_eq(write(g, "GET / HTTP/1.0\r\n\r\n", 18), 18);
	o = connect_rank0(port);
	send_oversized(o);
	px = rt_spawn(argv, ex, "rdvx"); /* knows another secret */
	rx->code = rt_wait(px, 30);
	p1 = rt_spawn(argv, e1, "rdv1");
	r1->code = rt_wait(p1, 60);
	r0->code = rt_wait(p0, 60);
	for (int i = 0; i < NIDLE; i++)
		close(idle[i]);
	close(g);
	close(o);
	rt_collect("rdv0", r0);
	rt_collect("rdv1", r1);
	rt_collect("rdvx", rx);
	cr_assert_eq(r0->code, 0, "rank 0 failed: %s", r0->err);
	cr_assert_eq(r1->code, 0, "rank 1 failed: %s", r1->err);
	cr_assert_gt(rx->code, 0, "the impostor joined: %s", rx->err);
	cr_assert(strstr(rx->err, "does not know this job's secret"), "%s",
		  rx->err);
	cr_assert(strstr(r0->err, "wrong job secret"), "%s", r0->err);
	cr_assert(strstr(r0->err, "garbage"), "%s", r0->err);
	cr_assert(strstr(r0->err, "oversized"), "%s", r0->err);
	rt_assert_toy_model(path, want, 16);
	free(r0);
	free(r1);
	free(rx);
}

/* Rank `rank` of a 2-rank toy job meeting at 127.0.0.1:port, with a 2 s
 * rendezvous timeout. */
static pid_t spawn_rank(int rank, int port, const char *tag)
{
	char addr[64], r[32];

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(r, sizeof(r), "FLEXRR_RANK=%d", rank);
	char *argv[] = { (char *)rt_bin(),
			 "run",
			 "--rendezvous",
			 addr,
			 "--rendezvous-timeout",
			 "2",
			 "-q",
			 "toy",
			 NULL };
	char *env[] = { r, "FLEXRR_SIZE=2", "FLEXRR_JOB_TOKEN=" TOKEN_A, NULL };

	return rt_spawn(argv, env, tag);
}

/* Rank 0 gives up on its own ranks only after the rendezvous timeout, and
 * then says which connections it refused instead of blaming the secret. */
Test(runtime_rendezvous, timeout_names_what_was_refused)
{
	struct rt_run *r0 = calloc(1, sizeof(*r0));
	int port = rt_free_port(), g;
	pid_t p0 = spawn_rank(0, port, "rdvt");

	g = connect_rank0(port);
	cr_assert_geq(g, 0);
	cr_assert_eq(write(g, "\x01\x02\x03\x04junkjunkjunk", 16), 16);
	r0->code = rt_wait(p0, 20);
	close(g);
	rt_collect("rdvt", r0);
	cr_assert_gt(r0->code, 0);
	cr_assert(strstr(r0->err, "did not join rank 0 in time"), "%s",
		  r0->err);
	cr_assert(strstr(r0->err, "last: garbage"), "%s", r0->err);
	free(r0);
}

/* A listener whose accept queue is full: the kernel drops further SYNs, as
 * a host that is down answers nothing.  Its fd; fill[] hold the queue. */
static int silent_listener(int *port, int *fill, int nfill)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
		  !listen(fd, 0) &&
		  !getsockname(fd, (struct sockaddr *)&sa, &sl));
	*port = ntohs(sa.sin_port);
	for (int i = 0; i < nfill; i++) {
		fill[i] = socket(AF_INET,
				 SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		cr_assert_geq(fill[i], 0);
		(void)connect(fill[i], (struct sockaddr *)&sa, sizeof(sa));
		usleep(50000); /* let the handshake land in the queue */
	}
	return fd;
}

/* Rank 1 whose rank 0 never answers (its address silent, as a host that is
 * down) gives up at the rendezvous timeout saying so: a connect blocked in
 * the kernel's SYN retries (minutes) once outlasted any timeout. */
Test(runtime_rendezvous, a_silent_rank0_is_given_up_at_the_timeout)
{
	struct rt_run *r1 = calloc(1, sizeof(*r1));
	int port, fill[3], lfd = silent_listener(&port, fill, 3);
	double t0;
	pid_t p1;

	t0 = rt_now();
	p1 = spawn_rank(1, port, "rdvs");
	r1->code = rt_wait(p1, 30);
	t0 = rt_now() - t0;
	rt_collect("rdvs", r1);
	for (int i = 0; i < 3; i++)
		close(fill[i]);
	close(lfd);
	cr_assert(r1->code > 0 && r1->code < 128, "exit %d: %s", r1->code,
		  r1->err);
	cr_assert_lt(t0, 15, "rank 1 took %.1f s to give up a 2 s timeout", t0);
	cr_assert(strstr(r1->err, "rendezvous address") &&
		      strstr(r1->err, "is unreachable"),
		  "%s", r1->err);
	free(r1);
}
