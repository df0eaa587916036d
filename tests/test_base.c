// SPDX-License-Identifier: MIT
/*
 * The base layer against published test vectors (FNV-1a, splitmix64) and
 * against the values the runtime's RNG produced before it moved to base/
 * (runs are reproducible across versions only if these never change).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include "flexrr/base.h"
#include "flexrr/log.h"

TestSuite(base, .timeout = 30);

Test(base, fnv1a64_matches_the_reference_vectors)
{
	cr_assert_eq(frr_fnv1a64("", 0, 0), 0xcbf29ce484222325ull);
	cr_assert_eq(frr_fnv1a64("a", 1, 0), 0xaf63dc4c8601ec8cull);
	cr_assert_eq(frr_fnv1a64("foobar", 6, 0), 0x85944171f73967e8ull);
	/* chaining: hashing "foo" then "bar" is hashing "foobar" */
	cr_assert_eq(frr_fnv1a64("bar", 3, frr_fnv1a64("foo", 3, 0)),
		     0x85944171f73967e8ull);
}

Test(base, splitmix64_matches_the_reference_sequence)
{
	uint64_t s = 0;

	cr_assert_eq(frr_splitmix64(&s), 0xe220a8397b1dcdafull);
	cr_assert_eq(frr_splitmix64(&s), 0x6e789e6aa1b965f4ull);
	cr_assert_eq(frr_splitmix64(&s), 0x06c45d188009454full);
	s = 1234567;
	cr_assert_eq(frr_splitmix64(&s), 6457827717110365317ull);
	cr_assert_eq(frr_splitmix64(&s), 3203168211198807973ull);
	/* the stateless form is one step from that state */
	s = 5;
	cr_assert_eq(frr_mix64(5), frr_splitmix64(&s));
}

Test(base, rng_streams_are_those_of_earlier_versions)
{
	struct frr_rng r;

	frr_rng_seed(&r, 42);
	cr_assert_eq(frr_rng_next(&r), 0x15780b2e0c2ec716ull);
	cr_assert_eq(frr_rng_next(&r), 0x6104d9866d113a7eull);
	cr_assert_eq(frr_rng_next(&r), 0xae17533239e499a1ull);
	frr_rng_seed(&r, 7);
	cr_assert_eq(frr_rng_normal(&r), -0.15157274547711355);
	cr_assert_eq(frr_rng_below(&r, 1000), 638);
	cr_assert_eq(frr_rng_uniform(&r), 0.98109772501493508);
}

Test(base, rng_below_and_uniform_stay_in_range)
{
	struct frr_rng r;

	frr_rng_seed(&r, 1);
	cr_assert_eq(frr_rng_below(&r, 0), 0);
	cr_assert_eq(frr_rng_below(&r, 1), 0);
	for (int i = 0; i < 10000; i++) {
		double u = frr_rng_uniform(&r);

		cr_assert(u >= 0 && u < 1);
		cr_assert_lt(frr_rng_below(&r, 3), 3);
	}
}

Test(base, clocks_agree_and_move_forward)
{
	uint64_t ns = frr_now_ns();
	long long ms = frr_now_ms();
	double s = frr_now_s();
	struct timespec now, dl;

	cr_assert_lt((double)ms / 1e3 - (double)ns / 1e9, 0.5);
	cr_assert_lt(s - (double)ns / 1e9, 0.5);
	cr_assert_geq(frr_now_ns(), ns);
	clock_gettime(CLOCK_REALTIME, &now);
	dl = frr_deadline_ts(1500);
	cr_assert_lt(dl.tv_nsec, 1000000000);
	cr_assert_gt((double)(dl.tv_sec - now.tv_sec) +
			 (double)(dl.tv_nsec - now.tv_nsec) * 1e-9,
		     1.4);
}

static void *named(void *arg)
{
	char *got = arg;

	frr_log_thread_start(12, "worker-with-a-long-name");
	pthread_getname_np(pthread_self(), got, 16);
	frr_log_thread_start(-1, "shm");
	pthread_getname_np(pthread_self(), got + 16, 16);
	return NULL;
}

/* A library thread's name: its rank and role, cut to the kernel's 15
 * characters; without a rank, the role alone. */
Test(base, library_threads_are_named_by_rank_and_role)
{
	char got[32] = "";
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, named, got), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_str_eq(got, "frr12-worker-wi");
	cr_assert_str_eq(got + 16, "frr-shm");
}
