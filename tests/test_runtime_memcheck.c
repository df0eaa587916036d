// SPDX-License-Identifier: MIT
/*
 * The memory check of `flexrr run` (docs/runtime.md "Memory of a rank"):
 * a job that will not fit is refused before it allocates, with the number
 * and what to change (--lanes, the table, --rr-group, a cgroup's limit, a
 * tmpfs too small for the checkpoints), never left to the OOM killer.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <sys/stat.h>

#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

TestSuite(runtime_memcheck, .timeout = 120);

/* The host's MemAvailable in MiB (0: unknown). */
static double mem_available_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	double kib = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib / 1024;
}

/* On verbs a lane is a context and a QP to every peer (about 1.15 MiB a
 * thread with one peer, as the plan counts it on rxe): two ranks of 1,024
 * threads need more than the soft-RoCE VM has, and the refusal names
 * --lanes with what the lanes take.  Only where lanes are planned (verbs:
 * the VM stage), and where 2 x 1,024 lanes exceed the host's memory. */
Test(runtime_memcheck, lanes_that_do_not_fit_name_the_option)
{
	struct rt_run *r = calloc(1, sizeof(*r));

	if (strcmp(frr_test_backend0(), "verbs"))
		cr_skip_test("lanes are in the memory plan on verbs only");
	if (2 * 1024 * 1.15 < 1.5 * mem_available_mib())
		cr_skip_test("this host has memory for 2 x 1024 lanes");
	RT_RUN(r, 120, "run", "-n", "2", "-t", "1024", "--backend", "verbs",
	       "--clocks", "1", "-q", "toy", "--items", "4096");
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "will not fit in memory"), "%s", r->err);
	cr_assert(strstr(r->err, "fewer lanes (--lanes N: its 1024 threads' "
				 "own connections to the other ranks take "
				 "1.15 GiB)"),
		  "%s", r->err);
	free(r);
}

Test(runtime_memcheck, table_too_big)
{
	struct rt_run *r = calloc(1, sizeof(*r));

	RT_RUN(r, 30, "run", "-n", "2", "--backend",
	       (char *)frr_test_backend0(), "toy", "--table-rows",
	       "100000000000");
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "GiB of memory is available"), "%s", r->err);
	free(r);
}

/* With RapidReassignment a rank holds the rows of the workers it may help
 * (mf declares its users per partition): the refusal names --rr-group
 * with the group the job has (2 x 2 workers: 3 helpers each); without
 * reassignment it does not.  4 M users of rank 1024: about 77 GiB.  On
 * the host only: the plan is no backend's, and the soft-RoCE VM's emulated
 * CPUs take a minute for the users' lists. */
Test(runtime_memcheck, helpers_rows_that_do_not_fit_name_the_group)
{
	struct rt_run *r = calloc(1, sizeof(*r));

	if (frr_test_quick())
		cr_skip_test("on the host only (see above)");
	if (mem_available_mib() > 60 * 1024)
		cr_skip_test("this host has memory for the job");
	for (int rr = 1; rr >= 0; rr--) {
		RT_RUN(r, 120, "run", "-n", "2", "-t", "2", "--backend",
		       (char *)frr_test_backend0(), "--mode",
		       rr ? "flexrr" : "ssp", "--clocks", "1", "-q", "mf",
		       "--synthetic", "4000000,1000,1000", "--rank", "1024");
		cr_assert_neq(r->code, 0);
		cr_assert(strstr(r->err, "will not fit in memory"), "%s",
			  r->err);
		cr_assert_eq(strstr(r->err,
				    "a smaller helper group (--rr-group "
				    "G, now 3: a rank holds the rows "
				    "of the workers it may help)") != NULL,
			     rr, "%s", r->err);
	}
	free(r);
}

/* The memory cgroup this process is in (v1 memory controller or v2), as
 * a directory under /sys/fs/cgroup where a child can be made; 0 if none. */
static int own_memory_cgroup(char *dir, size_t len, int *v2)
{
	char line[1024];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		b[strcspn(b, "\n")] = 0;
		if (!strncmp(a, ":memory:", 8)) {
			snprintf(dir, len, "/sys/fs/cgroup/memory%s", b + 1);
			*v2 = 0;
			found = 1;
		} else if (a[1] == ':') {
			snprintf(dir, len, "/sys/fs/cgroup%s", b + 1);
			*v2 = 1;
		}
	}
	if (f)
		fclose(f);
	return found || dir[0];
}

/* A memory limit MemAvailable does not show (Slurm's task/cgroup, a
 * container): the job is refused before it allocates, naming the cgroup
 * and what to change, instead of being OOM-killed (rank 0 killed by
 * signal 9 before 2026-12). */
Test(runtime_memcheck, cgroup_memory_limit_refused)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char dir[1200] = "", sub[1300], file[1400], cmd[2048];
	int v2 = 0, fd;

	if (geteuid() != 0 || !own_memory_cgroup(dir, sizeof(dir), &v2))
		cr_skip_test(
		    "needs root and a memory cgroup to make a child in");
	snprintf(sub, sizeof(sub), "%s/frr-test-%d", dir, (int)getpid());
	if (mkdir(sub, 0755))
		cr_skip_test("cannot make a cgroup under %s: %s", dir,
			     strerror(errno));
	snprintf(file, sizeof(file), "%s/%s", sub,
		 v2 ? "memory.max" : "memory.limit_in_bytes");
	/* the kernel's control file: written, never created or followed */
	fd = open(file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || dprintf(fd, "%d\n", 400 << 20) < 0 || close(fd)) {
		rmdir(sub);
		cr_skip_test("cannot set %s", file);
	}
	snprintf(cmd, sizeof(cmd),
		 "echo $$ > %s/cgroup.procs && exec %s run -n 2 --clocks 2 "
		 "--timeout 20 toy --table-rows 2000000",
		 sub, rt_bin());
	{
		char *argv[] = { "/bin/sh", "-c", cmd, NULL };

		rt_exec(r, argv, NULL, 60);
	}
	rmdir(sub);
	cr_assert_eq(r->code, 1, "%s", r->err);
	cr_assert(strstr(r->err, "will not fit in memory"), "%s", r->err);
	cr_assert(strstr(r->err, "memory cgroup"), "%s", r->err);
	cr_assert(!strstr(r->err, "signal 9"), "%s", r->err);
	free(r);
}

/* --checkpoint DIR on a tmpfs too small for two checkpoints (a 1 MiB one
 * mounted in a mount namespace of this test's own; a container's
 * /dev/shm is often 64 MiB): refused before the job runs, naming DIR and
 * what to do, not a failed write halfway; a DIR with room runs.  On the
 * host only: the check is no backend's, and the run with room took 17 s
 * under the soft-RoCE VM's emulated CPUs. */
Test(runtime_memcheck, checkpoints_that_do_not_fit_a_tmpfs_refused)
{
	struct rt_run *r;
	char small[64], cmd[1024];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };

	if (frr_test_quick())
		cr_skip_test("on the host only (see above)");
	r = calloc(1, sizeof(*r));
	snprintf(small, sizeof(small), "/tmp/frr-tmpfs-%d", (int)getpid());
	cr_assert(!mkdir(small, 0700), "%s: %s", small, strerror(errno));
	snprintf(cmd, sizeof(cmd),
		 "unshare -rm sh -c 'mount -t tmpfs -o size=%s none %s' "
		 "2>/dev/null",
		 "1m", small);
	rt_exec(r, argv, NULL, 30);
	if (r->code) {
		rmdir(small);
		cr_skip_test("cannot mount a tmpfs in a namespace of its own "
			     "(unshare -rm): %s",
			     r->err);
	}
	for (int big = 0; big < 2; big++) {
		snprintf(cmd, sizeof(cmd),
			 "exec unshare -rm sh -c 'mount -t tmpfs -o size=%s "
			 "none %s && exec %s run -n 2 --clocks 4 --checkpoint "
			 "%s/ck mf --synthetic 20000,2000,200000'",
			 big ? "64m" : "1m", small, rt_bin(), small);
		rt_exec(r, argv, NULL, 60);
		if (big) {
			cr_assert_eq(r->code, 0, "%s", r->err);
			continue;
		}
		cr_assert_eq(r->code, 1, "%s", r->err);
		cr_assert(strstr(r->err, "the job's checkpoints will not fit "
					 "in /tmp/frr-tmpfs-") &&
			      strstr(r->err, "has 1.0 MiB free; give "
					     "--checkpoint DIR on a disk"),
			  "%s", r->err);
	}
	rmdir(small);
	free(r);
}
