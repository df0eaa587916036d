// SPDX-License-Identifier: MIT
/*
 * frr_launch_local: collectives deliver every rank's bytes in rank order,
 * success is reported only when every rank succeeds, and a failed, killed
 * or hung rank makes the launch fail without hanging the others.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "test_util.h"

TestSuite(transport_launch, .timeout = 60);

struct rankinfo {
	int rank;
	int size;
	uint64_t token;
	char pad[40]; /* odd length: 56 bytes per rank */
};

static int gather(struct frr_oob *oob, void *arg)
{
	struct rankinfo mine = { oob->rank, oob->size, oob->job_token, { 0 } };
	struct rankinfo *all = calloc((size_t)oob->size, sizeof(*all));
	int ret;

	(void)arg;
	FRR_CHECK(all, "calloc");
	FRR_CHECK(oob->job_token != 0, "job token 0");
	memset(mine.pad, 'a' + oob->rank, sizeof(mine.pad));
	for (int round = 0; round < 20; round++) {
		ret = frr_oob_allgather(oob, &mine, sizeof(mine), all, 10000);
		FRR_CHECK(!ret, "allgather: %d", ret);
		for (int r = 0; r < oob->size; r++) {
			FRR_CHECK(all[r].rank == r && all[r].size == oob->size,
				  "slot %d holds rank %d", r, all[r].rank);
			FRR_CHECK(all[r].token == oob->job_token,
				  "rank %d has another job token", r);
			FRR_CHECK(all[r].pad[39] == 'a' + r, "payload of %d",
				  r);
		}
		ret = frr_oob_barrier(oob, 10000);
		FRR_CHECK(!ret, "barrier: %d", ret);
	}
	free(all);
	return 0;
}

Test(transport_launch, allgather_in_rank_order)
{
	cr_assert_eq(frr_launch_local(1, gather, NULL, 30000), 0);
	cr_assert_eq(frr_launch_local(5, gather, NULL, 30000), 0);
}

/*
 * Rank 'victim' fails (mode 0: returns -EIO, mode 1: SIGKILL, mode 2:
 * SIGSEGV) while the others wait in a barrier.  The survivors' barrier must
 * fail (not hang until the launch timeout); they report that through a
 * pipe inherited from the test.
 */
struct failing {
	int mode;
	int pipe_w;
};

static int fail_one(struct frr_oob *oob, void *arg)
{
	struct failing *f = arg;
	char c;
	int ret;

	if (oob->rank == 1) {
		signal(SIGSEGV, SIG_DFL); /* not the test runner's handler */
		if (f->mode == 1)
			raise(SIGKILL);
		if (f->mode == 2)
			raise(SIGSEGV);
		return -EIO;
	}
	ret = frr_oob_barrier(oob, 30000);
	c = ret < 0 ? 'E' : 'K';
	if (write(f->pipe_w, &c, 1) != 1)
		return -EPIPE;
	return 0;
}

static void launch_with_failure(int mode)
{
	struct failing f = { .mode = mode };
	int p[2], n = 0;
	char buf[8];

	cr_assert_eq(pipe(p), 0);
	f.pipe_w = p[1];
	/* 40 s launch timeout: a survivor that hung would be killed, not
	 * write 'E', and the assertion below would catch it */
	cr_assert_lt(frr_launch_local(4, fail_one, &f, 40000), 0);
	close(p[1]);
	for (ssize_t k; (k = read(p[0], buf + n, sizeof(buf) - n)) > 0;)
		n += (int)k;
	close(p[0]);
	cr_assert_eq(n, 3, "%d of 3 survivors reported", n);
	for (int i = 0; i < n; i++)
		cr_assert_eq(buf[i], 'E', "a survivor's barrier succeeded");
}

Test(transport_launch, failing_rank_fails_launch_and_releases_others)
{
	launch_with_failure(0);
}

Test(transport_launch, killed_rank_fails_launch_and_releases_others)
{
	launch_with_failure(1);
}

Test(transport_launch, crashed_rank_fails_launch_and_releases_others)
{
	launch_with_failure(2);
}

static int hang(struct frr_oob *oob, void *arg)
{
	(void)arg;
	if (oob->rank == 0)
		pause(); /* never returns: the launcher must kill it */
	return 0;
}

Test(transport_launch, hung_rank_is_killed_at_the_deadline)
{
	cr_assert_eq(frr_launch_local(2, hang, NULL, 1000), -ETIMEDOUT);
}

static int ok(struct frr_oob *oob, void *arg)
{
	(void)oob;
	(void)arg;
	return 0;
}

Test(transport_launch, bad_arguments_refused)
{
	cr_assert_eq(frr_launch_local(0, ok, NULL, 1000), -EINVAL);
	cr_assert_eq(frr_launch_local(2, NULL, NULL, 1000), -EINVAL);
	cr_assert_eq(frr_launch_local(2, ok, NULL, 0), -EINVAL);
	cr_assert_eq(frr_launch_local(3, ok, NULL, 10000), 0);
}
