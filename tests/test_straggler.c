// SPDX-License-Identifier: MIT
/* --stragglers: grammar, determinism, the schedule's statistics, the
 * per-item delay accounting, the contention thread and the trace file. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "straggler/straggler.h"
#include "trace/trace.h"

TestSuite(straggler, .timeout = 60);

static struct frr_stragglers parse_ok(const char *spec, int threads,
				      int nworkers, uint64_t seed)
{
	struct frr_stragglers s;

	cr_assert_eq(frr_stragglers_parse(spec, &s), 0, "spec %s", spec);
	cr_assert_eq(frr_stragglers_setup(&s, seed, threads, nworkers), 0);
	return s;
}

Test(straggler, grammar_accepts_every_kind)
{
	struct frr_stragglers s = parse_ok(
	    "slow-worker:0.1,1.0+disrupted-machine:0.05,3,4+power-law:11+"
	    "persistent:3,2.5+contention:2",
	    4, 8, 1);
	char buf[256];

	cr_assert_eq(s.nterms, 5);
	cr_assert_eq(s.term[0].kind, FRR_STRAG_SLOW_WORKER);
	cr_assert_float_eq(s.term[0].p, 0.1, 1e-12);
	cr_assert_eq(s.term[1].len, 4);
	cr_assert_float_eq(s.term[2].alpha, 11, 1e-12);
	cr_assert_eq(s.term[3].worker, 3);
	cr_assert_eq(s.term[4].worker, 2);
	frr_stragglers_format(&s, buf, sizeof(buf));
	cr_assert_str_eq(buf, "slow-worker:0.1,1+disrupted-machine:0.05,3,4+"
			      "power-law:11+persistent:3,2.5+contention:2");
	s = parse_ok("none", 1, 1, 1);
	cr_assert_eq(s.nterms, 0);
	s = parse_ok("contention", 1, 1, 1);
	cr_assert_eq(s.term[0].worker, 0);
}

Test(straggler, grammar_rejects_bad_specs)
{
	static const char *const bad[] = {
		"slow",
		"slow-worker",
		"slow-worker:0.1",
		"slow-worker:0.1,1,2",
		"slow-worker:1.5,1",
		"slow-worker:0.1,-1",
		"slow-worker:a,b",
		"slow-worker:0.1,,1",
		"disrupted-machine:0.1,0.5,3",
		"disrupted-machine:0.1,2,0",
		"disrupted-machine:0.1,2,1.5",
		"power-law:0",
		"persistent:-1,2",
		"persistent:1,0.5",
		"contention:x",
		"slow-worker:0.1,1+",
		"+slow-worker:0.1,1",
		"slow-worker:0.1,1++power-law:2",
		"a+b+c+d+e+f+g+h+i",
		"slow-worker:nan,1",
	};
	struct frr_stragglers s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(frr_stragglers_parse(bad[i], &s), -EINVAL,
			     "accepted '%s'", bad[i]);
	cr_assert_eq(frr_stragglers_parse("persistent:8,2", &s), 0);
	cr_assert_eq(frr_stragglers_setup(&s, 1, 4, 8), -EINVAL,
		     "worker 8 of 8 accepted");
}

Test(straggler, usage_shows_the_grammar)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	frr_stragglers_usage(f);
	fclose(f);
	cr_assert(strstr(buf, "slow-worker:p,d"));
	cr_assert(strstr(buf, "disrupted-machine:p,d,len"));
	cr_assert(strstr(buf, "power-law:alpha"));
	cr_assert(strstr(buf, "persistent:w,f"));
	cr_assert(strstr(buf, "contention"));
	free(buf);
}

Test(straggler, schedule_depends_only_on_seed_worker_clock)
{
	struct frr_stragglers a =
	    parse_ok("slow-worker:0.3,1+power-law:3+disrupted-machine:0.1,2,3",
		     4, 8, 42);
	struct frr_stragglers b = a, c = a;
	int differ = 0;

	c.seed = 43;
	for (int w = 0; w < 8; w++)
		for (int k = 0; k < 200; k++) {
			double fa = frr_stragglers_factor(&a, w, k);

			cr_assert_eq(fa, frr_stragglers_factor(&b, w, k));
			cr_assert_eq(fa, frr_stragglers_factor(&a, w, k));
			cr_assert(fa >= 1.0);
			differ += fa != frr_stragglers_factor(&c, w, k);
		}
	cr_assert_gt(differ, 100, "another seed gives the same schedule");
}

Test(straggler, slow_worker_rate_and_size)
{
	struct frr_stragglers s = parse_ok("slow-worker:0.1,1.0", 4, 8, 7);
	int hit = 0, n = 8 * 5000;

	for (int w = 0; w < 8; w++)
		for (int k = 0; k < 5000; k++) {
			double f = frr_stragglers_factor(&s, w, k);

			cr_assert(f == 1.0 || f == 2.0, "factor %g", f);
			hit += f == 2.0;
		}
	/* binomial(40000, 0.1): sd = 60 */
	cr_assert(fabs(hit - 0.1 * n) < 400, "%d slowed of %d", hit, n);
}

Test(straggler, disrupted_machine_slows_a_whole_process_for_len_clocks)
{
	struct frr_stragglers s =
	    parse_ok("disrupted-machine:0.05,3,4", 4, 8, 9);
	int episodes = 0;

	for (int k = 0; k < 2000; k++) {
		for (int r = 0; r < 2; r++) {
			double f = frr_stragglers_factor(&s, r * 4, k);

			cr_assert(f == 1.0 || f == 3.0);
			/* every worker of a process has the same factor */
			for (int t = 1; t < 4; t++)
				cr_assert_eq(
				    f, frr_stragglers_factor(&s, r * 4 + t, k));
			if (f == 3.0 &&
			    (k == 0 ||
			     frr_stragglers_factor(&s, r * 4, k - 1) == 1.0)) {
				/* an episode lasts at least len clocks */
				episodes++;
				for (int j = 1; j < 4; j++)
					cr_assert_eq(frr_stragglers_factor(
							 &s, r * 4, k + j),
						     3.0);
			}
		}
	}
	cr_assert_gt(episodes, 50);
}

Test(straggler, power_law_and_persistent)
{
	struct frr_stragglers s = parse_ok("power-law:2", 2, 4, 3);
	struct frr_stragglers p = parse_ok("persistent:1,4", 2, 4, 3);
	double sum = 0;
	int n = 20000;

	for (int k = 0; k < n; k++) {
		double f = frr_stragglers_factor(&s, k % 4, k);

		cr_assert(f >= 1.0 && f <= FRR_STRAG_POWER_LAW_CAP);
		sum += f;
	}
	/* Pareto(1, 2) has mean 2 (slightly less with the cap) */
	cr_assert(sum / n > 1.8 && sum / n < 2.2, "mean %g", sum / n);
	cr_assert_eq(frr_stragglers_factor(&p, 1, 5), 4.0);
	cr_assert_eq(frr_stragglers_factor(&p, 0, 5), 1.0);
}

Test(straggler, delay_is_owed_per_item_and_paid_by_clock_end)
{
	struct frr_stragglers s = parse_ok("persistent:0,3", 1, 1, 1);
	struct frr_strag_worker sw;

	cr_assert_eq(frr_strag_worker_start(&sw, &s, 0, NULL), 0);
	frr_strag_clock_begin(&sw, 0);
	cr_assert_eq(sw.factor, 3.0);
	cr_assert_eq(sw.delayed_clocks, 1);
	/* 10 us of work owes 20 us: below the sleep threshold, kept */
	frr_strag_account(&sw, 10000);
	cr_assert_eq(sw.debt_ns, 20000);
	cr_assert_eq(sw.injected_ns, 0);
	/* 1 ms of work owes 2 ms: slept at once */
	frr_strag_account(&sw, 1000000);
	cr_assert_geq(sw.injected_ns, 2020000);
	cr_assert_eq(sw.debt_ns, 0);
	/* what the 2 ms sleep overslept is credited, never dropped: slept
	 * minus credit is exactly what the work owed */
	cr_assert_eq(sw.injected_ns - sw.credit_ns, 2020000);
	frr_strag_account(&sw, 10000);
	frr_strag_clock_end(&sw);
	cr_assert_eq(sw.debt_ns, 0);
	cr_assert_eq(sw.injected_ns - sw.credit_ns, 2040000);
	/* a new clock starts owing nothing and with no credit */
	frr_strag_clock_begin(&sw, 1);
	cr_assert_eq(sw.credit_ns, 0);
	frr_strag_worker_stop(&sw);

	/* an unslowed worker owes nothing */
	s = parse_ok("persistent:0,3", 1, 2, 1);
	frr_strag_worker_start(&sw, &s, 1, NULL);
	frr_strag_clock_begin(&sw, 0);
	frr_strag_account(&sw, 1000000);
	frr_strag_clock_end(&sw);
	cr_assert_eq(sw.injected_ns, 0);
	cr_assert_eq(sw.delayed_clocks, 0);
}

static uint64_t cpu_spin_ns(uint64_t wall_ns)
{
	struct timespec a, b;
	uint64_t t0 = frr_trace_now();
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	while (frr_trace_now() - t0 < wall_ns)
		x++;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
	       (uint64_t)(b.tv_nsec - a.tv_nsec);
}

Test(straggler, contention_is_a_real_cpu_hog_on_our_core)
{
	struct frr_stragglers s = parse_ok("contention:0", 1, 1, 1);
	struct frr_strag_worker sw;
	cpu_set_t one, old;
	uint64_t cpu;

	/* pin ourselves to one CPU: the hog must share exactly it */
	pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(one), &one),
		     0);
	cr_assert_eq(frr_strag_worker_start(&sw, &s, 0, NULL), 0);
	cr_assert(sw.hog_running);
	/* same wall time, less CPU: the hog takes a share of the core */
	cpu = cpu_spin_ns(300000000ull);
	frr_strag_worker_stop(&sw);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	cr_assert(!sw.hog_running);
	cr_assert_lt(cpu, 240000000ull, "cpu %llu ns of 300 ms",
		     (unsigned long long)cpu);
}

Test(straggler, trace_file_is_json_with_delays_and_workers)
{
	char path[] = "/tmp/frr-trace-test-XXXXXX", cmd[512];
	struct frr_stragglers s = parse_ok("persistent:0,2", 1, 2, 1);
	struct frr_strag_worker sw;
	struct frr_trace *t;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(frr_trace_create(path, 0, 1, 0, 2, 16, &t), 0);
	frr_strag_worker_start(&sw, &s, 0, frr_trace_buf(t, 0));
	frr_strag_clock_begin(&sw, 0);
	frr_strag_account(&sw, 300000);
	frr_strag_clock_end(&sw);
	frr_trace_rec(frr_trace_buf(t, 1), FRR_TR_WORK, 1000, 2000, 0, -1, 0,
		      10);
	frr_trace_instant(frr_trace_buf(t, 1), FRR_TR_OFFER, 0, 0, 5, 10);
	for (int i = 0; i < 20; i++)
		frr_trace_instant(frr_trace_buf(t, 1), FRR_TR_CANCELLED, 0, 0,
				  5, 10);
	cr_assert_eq(frr_trace_dropped(t), 6);
	cr_assert_eq(frr_trace_write(t, 1000, NULL), 0);
	frr_trace_destroy(t);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c \"import json,sys; e=json.load(open('%s')); "
		 "n=[x['name'] for x in e]; "
		 "sys.exit(0 if 'injected delay' in n and 'work' in n and "
		 "'DoThis' in n and any(x.get('args',{}).get('name')=="
		 "'worker 1' for x in e) else 1)\"",
		 path);
	cr_assert_eq(system(cmd), 0, "trace %s is not what we wrote", path);
	unlink(path);
}
