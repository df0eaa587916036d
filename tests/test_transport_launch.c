// SPDX-License-Identifier: MIT
/*
 * frr_launch_local: collectives deliver every rank's bytes in rank order
 * (also contributions larger than the relay's frame, in rounds),
 * success is reported only when every rank succeeds, and a failed, killed
 * or hung rank makes the launch fail without hanging the others.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
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

/* Byte i of rank r's contribution: differs by rank and repeats every BIG_P
 * bytes, a prime, so no round size (a power of two) is a multiple of it and
 * a piece put at the wrong offset or from the wrong round shows. */
#define BIG_P 4093u

static unsigned char big_byte(int r, size_t i)
{
	return (unsigned char)((i % BIG_P) * 131u + (i % BIG_P) / 256u * 7u +
			       (unsigned)r * 29u);
}

/* One period of rank r's bytes (the pattern, from offset 0). */
static void big_period(int r, unsigned char p[BIG_P])
{
	for (size_t i = 0; i < BIG_P; i++)
		p[i] = big_byte(r, i);
}

/* Fill n bytes of rank r's contribution, a period at a time; NULL when out
 * of memory. */
static unsigned char *big_make(int r, size_t n)
{
	unsigned char *b = malloc(n ? n : 1), p[BIG_P];

	big_period(r, p);
	for (size_t i = 0; b && i < n; i += BIG_P)
		memcpy(b + i, p, n - i < BIG_P ? n - i : BIG_P);
	return b;
}

/* First byte of got[n] that is not rank r's, or n. */
static size_t big_diff(const unsigned char *got, int r, size_t n)
{
	unsigned char p[BIG_P];
	size_t i = 0;

	big_period(r, p);
	for (; i < n; i += BIG_P) {
		size_t k = n - i < BIG_P ? n - i : BIG_P;

		if (memcmp(got + i, p, k))
			break;
	}
	while (i < n && got[i] == big_byte(r, i))
		i++;
	return i < n ? i : n;
}

/* More per rank than the relay takes in one frame (64 MiB for all ranks):
 * it must go in rounds and arrive whole, in rank order. */
#define BIG_LEN ((64u << 20) + 4097u)

static int gather_big(struct frr_oob *oob, void *arg)
{
	size_t n = BIG_LEN, bad;
	unsigned char *mine = big_make(oob->rank, n);
	unsigned char *all = malloc(n * (size_t)oob->size);
	int ret;

	(void)arg;
	FRR_CHECK(mine && all, "malloc");
	ret = frr_oob_allgather(oob, mine, n, all, 30000);
	FRR_CHECK(!ret, "allgather of %zu bytes per rank: %d", n, ret);
	for (int r = 0; r < oob->size; r++) {
		bad = big_diff(all + (size_t)r * n, r, n);
		FRR_CHECK(bad == n, "rank %d's byte %zu is wrong", r, bad);
	}
	free(all);
	free(mine);
	return 0;
}

/* Under TSan the relay's 64 MiB frames take 25 s each in the sanitizer's
 * shadow memory (plain: 1.5 s); the relay is one thread per process, so
 * the plain and ASan stages check it. */
static void skip_under_tsan(void)
{
	const char *s = frr_test_sanitizer();

	if (s && !strcmp(s, "tsan"))
		cr_skip_test("under TSan: 25 s of shadow memory for a "
			     "single-threaded relay; the plain and ASan stages "
			     "run it");
}

Test(transport_launch, allgather_larger_than_a_relay_frame)
{
	skip_under_tsan();
	cr_assert_eq(frr_launch_local(2, gather_big, NULL, 120000), 0);
}

/* Lengths per rank, one of them empty and one over the relay's frame. */
static const size_t big_lens[3] = { 5, 0, (65u << 20) + 3u };

static int gatherv_big(struct frr_oob *oob, void *arg)
{
	size_t n = big_lens[oob->rank], at = 0, bad;
	unsigned char *mine = big_make(oob->rank, n);
	unsigned char *all = malloc(big_lens[0] + big_lens[1] + big_lens[2]);
	int ret;

	(void)arg;
	FRR_CHECK(mine && all, "malloc");
	ret = frr_oob_allgatherv(oob, mine, big_lens, all, 30000);
	FRR_CHECK(!ret, "allgatherv: %d", ret);
	for (int r = 0; r < oob->size; r++) {
		bad = big_diff(all + at, r, big_lens[r]);
		FRR_CHECK(bad == big_lens[r], "rank %d's byte %zu is wrong", r,
			  bad);
		at += big_lens[r];
	}
	free(all);
	free(mine);
	return 0;
}

Test(transport_launch, allgatherv_of_uneven_large_contributions)
{
	skip_under_tsan();
	cr_assert_eq(frr_launch_local(3, gatherv_big, NULL, 120000), 0);
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
