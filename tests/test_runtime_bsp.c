// SPDX-License-Identifier: MIT
/*
 * BSP gives the exact sequential answer: the toy app's weights after N clocks
 * of a job (P processes x T threads, every backend under test) equal, bit for
 * bit, the sequential reference that applies the same float operations in
 * worker order.  Also: the summary line, determinism of the RNG.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "toy/toy.h"
#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

TestSuite(runtime_bsp, .timeout = 120);

static void read_weights(const char *path, float *w, int dim)
{
	FILE *f = fopen(path, "r");

	cr_assert(f, "no model file %s", path);
	for (int d = 0; d < dim; d++) {
		double v;

		cr_assert_eq(fscanf(f, "%la", &v), 1, "short model file");
		w[d] = (float)v;
	}
	fclose(f);
}

static void bsp_case(enum frr_tp_backend b, int procs, int threads, int clocks,
		     const char *rule)
{
	char c[16], path[128];
	const char *be = frr_tp_backend_name(b);
	struct rt_argv a;
	struct rt_run *r = calloc(1, sizeof(*r));
	float got[16], want[16];
	struct frr_toy_params p = { .seed = 7,
				    .nparts = procs * threads,
				    .items = 40,
				    .dim = 16,
				    .lr = 0.5f };

	snprintf(c, sizeof(c), "%d", clocks);
	snprintf(path, sizeof(path), "/tmp/frr-rt-bsp-%d.txt", getpid());
	/* rule NULL ends the list there */
	rt_run_argv(&a, procs, threads, be, "--clocks", c, "--seed", "7", "-q",
		    "--save", path, "toy", "--items", "40", rule);
	rt_exec(r, a.v, NULL, 60);
	cr_assert_eq(r->code, 0, "%s -n %d -t %d failed", be, procs, threads);
	cr_assert(strstr(r->out, "flexrr: done mode=bsp backend="),
		  "no summary line: %s", r->out);
	cr_assert_eq(rt_summary_value(r->out, "procs"), procs);
	cr_assert_eq(rt_summary_value(r->out, "threads"), threads);
	cr_assert_eq(rt_summary_value(r->out, "clocks"), clocks);
	read_weights(path, got, 16);
	unlink(path);
	if (rule) {
		free(r);
		return;
	}
	cr_assert_eq(frr_toy_reference(&p, clocks, want), 0);
	for (int d = 0; d < 16; d++)
		cr_assert_eq(memcmp(&got[d], &want[d], sizeof(float)), 0,
			     "%s P=%d T=%d: w[%d] = %a, sequential %a", be,
			     procs, threads, d, got[d], want[d]);
	free(r);
}

Test(runtime_bsp, exact_sequential_answer)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	int clocks = frr_test_quick() ? 4 : 12;

	for (int i = 0; i < nb; i++) {
		bsp_case(bs[i], 1, 1, clocks, NULL);
		bsp_case(bs[i], 2, 2, clocks, NULL);
		bsp_case(bs[i], 3, 1, clocks, NULL);
	}
}

/* The reference must actually move: a test that cannot fail is no test. */
Test(runtime_bsp, reference_converges)
{
	struct frr_toy_params p = {
		.seed = 7, .nparts = 4, .items = 40, .dim = 16, .lr = 0.5f
	};
	float w0[16], w1[16];

	cr_assert_eq(frr_toy_reference(&p, 1, w0), 0);
	cr_assert_eq(frr_toy_reference(&p, 200, w1), 0);
	/* w*_d = (d % 5) - 1.5 */
	for (int d = 0; d < 16; d++)
		cr_assert(fabsf(w1[d] - ((float)(d % 5) - 1.5f)) < 0.05f,
			  "w[%d] = %f", d, w1[d]);
	cr_assert(w0[0] != w1[0]);
}

Test(runtime_bsp, adagrad_runs_deterministically)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	/* two runs, same answer bit for bit (BSP, one thread per process) */
	for (int i = 0; i < nb; i++) {
		char *argv[] = { (char *)rt_bin(),
				 "run",
				 "-n",
				 "2",
				 "--backend",
				 (char *)frr_tp_backend_name(bs[i]),
				 "--clocks",
				 "6",
				 "-q",
				 "toy",
				 "--adagrad",
				 NULL };
		struct rt_run *a = calloc(1, sizeof(*a)),
			      *b = calloc(1, sizeof(*b));

		rt_exec(a, argv, NULL, 60);
		rt_exec(b, argv, NULL, 60);
		cr_assert_eq(a->code, 0);
		cr_assert_eq(b->code, 0);
		cr_assert_eq(rt_summary_value(a->out, "objective"),
			     rt_summary_value(b->out, "objective"));
		cr_assert(rt_summary_value(a->out, "objective") > 0);
		free(a);
		free(b);
	}
}

Test(runtime_bsp, rng_is_deterministic_and_uniform)
{
	struct frr_rng a, b;
	double sum = 0;
	uint64_t hist[10] = { 0 };

	frr_rng_seed(&a, 42);
	frr_rng_seed(&b, 42);
	for (int i = 0; i < 100000; i++) {
		double u = frr_rng_uniform(&a);

		cr_assert_eq(frr_rng_next(&b) >> 11, (uint64_t)(u * 0x1.0p53));
		cr_assert(u >= 0 && u < 1);
		sum += u;
		hist[frr_rng_below(&a, 10)]++;
		frr_rng_next(&b);
	}
	cr_assert(fabs(sum / 100000 - 0.5) < 0.01);
	for (int i = 0; i < 10; i++)
		cr_assert(hist[i] > 9000 && hist[i] < 11000);
	frr_rng_seed(&a, 1);
	sum = 0;
	for (int i = 0; i < 10000; i++)
		sum += frr_rng_normal(&a);
	cr_assert(fabs(sum / 10000) < 0.05);
}

/* --save then --load continues the run exactly (BSP): 5 + 5 clocks = 10. */
Test(runtime_bsp, save_load_continues_exactly)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	char path[128];
	struct rt_run *r = calloc(1, sizeof(*r));
	double full, resumed;

	frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	snprintf(path, sizeof(path), "/tmp/frr-rt-load-%d.txt", getpid());
	char *be = (char *)frr_tp_backend_name(bs[0]);
	char *a1[] = { (char *)rt_bin(), "run", "-n", "2",   "--backend", be,
		       "--clocks",	 "10",	"-q", "toy", NULL };
	char *a2[] = { (char *)rt_bin(),
		       "run",
		       "-n",
		       "2",
		       "--backend",
		       be,
		       "--clocks",
		       "5",
		       "-q",
		       "--save",
		       path,
		       "toy",
		       NULL };
	char *a3[] = { (char *)rt_bin(),
		       "run",
		       "-n",
		       "2",
		       "--backend",
		       be,
		       "--clocks",
		       "5",
		       "-q",
		       "--load",
		       path,
		       "toy",
		       NULL };

	rt_exec(r, a1, NULL, 60);
	cr_assert_eq(r->code, 0);
	full = rt_summary_value(r->out, "objective");
	rt_exec(r, a2, NULL, 60);
	cr_assert_eq(r->code, 0);
	cr_assert(rt_summary_value(r->out, "objective") != full);
	rt_exec(r, a3, NULL, 60);
	cr_assert_eq(r->code, 0);
	resumed = rt_summary_value(r->out, "objective");
	cr_assert_eq(resumed, full, "resumed %.9g, straight %.9g", resumed,
		     full);
	unlink(path);
	free(r);
}
