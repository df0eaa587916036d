// SPDX-License-Identifier: MIT
/*
 * Open MPI's mpirun starts the ranks: `mpirun --allow-run-as-root -np 4
 * flexrr run ...` joins one job (rank/size from OMPI_COMM_WORLD_*, rendezvous
 * port and job token derived from the launcher's job id) and gives the exact
 * BSP answer.  Skipped when mpirun is not installed.
 */
#include <criterion/criterion.h>

#include "toy/toy.h"
#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

TestSuite(runtime_mpirun, .timeout = 120);

Test(runtime_mpirun, np4_exact_bsp_answer)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	/* 2-core CI machines have fewer slots than ranks */
	char *env[] = { "OMPI_MCA_rmaps_base_oversubscribe=1", NULL };
	struct frr_toy_params p = {
		.seed = 3, .nparts = 4, .items = 30, .dim = 16, .lr = 0.5f
	};
	float want[16];

	if (access("/usr/bin/mpirun", X_OK))
		cr_skip_test("mpirun not installed (Debian: openmpi-bin)");
	cr_assert_eq(frr_toy_reference(&p, 5, want), 0);
	for (int i = 0; i < nb; i++) {
		struct rt_run *r = calloc(1, sizeof(*r));
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/frr-rt-mpi-%d.txt",
			 getpid());
		char *argv[] = { "/usr/bin/mpirun",
				 "--allow-run-as-root",
				 "-np",
				 "4",
				 (char *)rt_bin(),
				 "run",
				 "--backend",
				 (char *)frr_tp_backend_name(bs[i]),
				 "--clocks",
				 "5",
				 "--seed",
				 "3",
				 "-q",
				 "--save",
				 path,
				 "toy",
				 "--items",
				 "30",
				 NULL };
		rt_exec(r, argv, env, 90);
		cr_assert_eq(r->code, 0, "mpirun: %s", r->err);
		cr_assert(strstr(r->out, "flexrr: done mode=bsp"), "%s",
			  r->out);
		cr_assert_eq(rt_summary_value(r->out, "procs"), 4);
		f = fopen(path, "r");
		cr_assert(f);
		for (int d = 0; d < 16; d++) {
			double v;

			cr_assert_eq(fscanf(f, "%la", &v), 1);
			cr_assert_eq((float)v, want[d], "w[%d] %a vs %a", d, v,
				     (double)want[d]);
		}
		fclose(f);
		unlink(path);
		free(r);
	}
}
