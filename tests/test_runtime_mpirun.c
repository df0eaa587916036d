// SPDX-License-Identifier: MIT
/*
 * Open MPI's mpirun starts the ranks: `mpirun --allow-run-as-root -np 4
 * flexrr run ...` joins one job and gives the exact BSP answer, both ways
 * the ranks can meet: through mpirun's PMIx server (the default when flexrr
 * is built with PMIx: addresses and a random job secret go through its
 * key-value store) and at the TCP rendezvous (--bootstrap tcp: rank/size
 * from OMPI_COMM_WORLD_*, port derived from the job id, the secret from
 * FLEXRR_JOB_TOKEN).  The
 * ranks' info log says which path they took.  Skipped when mpirun is not
 * installed.
 */
#include <criterion/criterion.h>

#include "toy/toy.h"
#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

TestSuite(runtime_mpirun, .timeout = 120);

/* Skip a test this host cannot run: no mpirun, or (with unshare flags,
 * "-u", "-mu") no namespaces of those kinds for a rank of its own. */
static void need_mpirun(const char *unshare)
{
	char cmd[64];

	if (access("/usr/bin/mpirun", X_OK))
		cr_skip_test("mpirun not installed (Debian: openmpi-bin)");
	snprintf(cmd, sizeof(cmd), "unshare %s true 2>/dev/null",
		 unshare ? unshare : "");
	if (unshare && system(cmd))
		cr_skip_test("cannot make the namespaces of 'unshare %s' (not "
			     "root?)",
			     unshare);
}

Test(runtime_mpirun, np4_exact_bsp_answer)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	/* 2-core CI machines have fewer slots than ranks */
	char *env[] = { "OMPI_MCA_rmaps_base_oversubscribe=1",
			"FLEXRR_LOG=info", NULL, NULL };
#ifdef FLEXRR_TEST_HAVE_PMIX
	static const char *const boots[][2] = { { "auto", "pmix" },
						{ "tcp", "tcp" } };
#else
	static const char *const boots[][2] = { { "auto", "tcp" } };
#endif
	struct frr_toy_params p = {
		.seed = 3, .nparts = 4, .items = 30, .dim = 16, .lr = 0.5f
	};
	float want[16];

	need_mpirun(NULL);
	cr_assert_eq(frr_toy_reference(&p, 5, want), 0);
	for (int k = 0; k < nb * (int)(sizeof(boots) / sizeof(boots[0])); k++) {
		struct rt_run *r = calloc(1, sizeof(*r));
		int i = k % nb, b = k / nb;
		char path[128], said[64];

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
				 "--bootstrap",
				 (char *)boots[b][0],
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
		/* tcp needs a secret every rank knows (mpirun's ranks inherit
		 * its environment); pmix draws one at rank 0 without it */
		env[2] =
		    strcmp(boots[b][1], "tcp")
			? NULL
			: "FLEXRR_JOB_TOKEN=mpirun-test-0123456789abcdef0123";
		rt_exec(r, argv, env, 90);
		cr_assert_eq(r->code, 0, "mpirun: %s", r->err);
		cr_assert(strstr(r->out, "flexrr: done mode=bsp"), "%s",
			  r->out);
		cr_assert_eq(rt_summary_value(r->out, "procs"), 4);
		snprintf(said, sizeof(said), "met the others through %s",
			 boots[b][1]);
		cr_assert(strstr(r->err, said),
			  "--bootstrap %s: no rank logged '%s':\n%s",
			  boots[b][0], said, r->err);
		rt_assert_toy_model(path, want, 16);
		free(r);
	}
}

/* The checkpoint directory in memory the job announced ("... in memory at
 * DIR, ...") is gone: removed when the job ended. */
static void mem_dir_gone(const char *err)
{
	const char *at = strstr(err, "in memory at /dev/shm/flexrr-ckpt-");
	char d[64];

	cr_assert(at, "no checkpoint directory in memory announced: %s", err);
	snprintf(d, sizeof(d), "%.*s", (int)strcspn(at + 13, ", \n"), at + 13);
	cr_assert_neq(access(d, F_OK), 0, "%s is still there", d);
}

/*
 * --on-failure recover under mpirun (docs/cluster.md): with
 * --enable-recovery and orte_abort_on_non_zero_status 0 mpirun leaves the
 * survivors running when rank 1 SIGKILLs itself at clock 7; they agree who
 * is left, rank 2's process runs rank 1 too, and the job ends with the
 * uninterrupted job's objective; mpirun exits 0.  The ranks meet at the TCP
 * rendezvous or through mpirun's PMIx server; either way the survivors
 * meet again over TCP.  The last run has no --checkpoint: the ranks, all on
 * rank 0's host, checkpoint into the directory it made in memory, which
 * the lowest rank left removes at the end.
 */
Test(runtime_mpirun, recover_keeps_the_survivors)
{
#ifdef FLEXRR_TEST_HAVE_PMIX
	static const char *const boots[] = { "tcp", "pmix", "pmix" };
#else
	static const char *const boots[] = { "tcp", "tcp" };
#endif
	const size_t nb = sizeof(boots) / sizeof(boots[0]);
	char *ref[] = { (char *)rt_bin(), "run", "-q",	   "-n", "3",
			"--clocks",	  "12",	 "--seed", "3",	 "toy",
			"--items",	  "300", NULL };
	struct rt_run *r = calloc(1, sizeof(*r));
	double want;

	need_mpirun(NULL);
	rt_exec(r, ref, NULL, 60);
	cr_assert_eq(r->code, 0, "%s", r->err);
	want = rt_summary_value(r->out, "objective");
	for (size_t b = 0; b < nb; b++) {
		char dir[64] = "/tmp/frr-rt-mpirec-XXXXXX", ck[96], die[128];
		/* in memory: --timeout 60 (the default) in its place */
		char *ckopt = b == nb - 1 ? "--timeout" : "--checkpoint";
		char *env[] = {
			"OMPI_MCA_rmaps_base_oversubscribe=1",
			"FLEXRR_JOB_TOKEN=mpirun-test-0123456789abcdef0123",
			die, NULL
		};
		char *argv[] = { "/usr/bin/mpirun",
				 "--allow-run-as-root",
				 "--enable-recovery",
				 "--mca",
				 "orte_abort_on_non_zero_status",
				 "0",
				 "-np",
				 "3",
				 (char *)rt_bin(),
				 "run",
				 "--bootstrap",
				 (char *)boots[b],
				 "--clocks",
				 "12",
				 "--seed",
				 "3",
				 ckopt,
				 ck,
				 "--checkpoint-every",
				 "2",
				 "--on-failure",
				 "recover",
				 "toy",
				 "--items",
				 "300",
				 NULL };
		char said[64];

		cr_assert_not_null(mkdtemp(dir));
		snprintf(ck, sizeof(ck), b == nb - 1 ? "60" : "%s/ck", dir);
		snprintf(die, sizeof(die), "FLEXRR_TEST_DIE=1:7:%s/died", dir);
		rt_exec(r, argv, env, 90);
		cr_assert_eq(r->code, 0, "%s: mpirun: %s", boots[b], r->err);
		snprintf(said, sizeof(said), "flexrr: bootstrap %s", boots[b]);
		cr_assert(strstr(r->err, said), "%s", r->err);
		cr_assert(strstr(r->err, "recovering (epoch 1): this process "
					 "runs ranks 1, 2"),
			  "%s: %s", boots[b], r->err);
		cr_assert(strstr(r->out, " recovered: lost=1 epoch=1 "),
			  "%s: %s", boots[b], r->out);
		cr_assert_eq(rt_summary_value(r->out, "objective"), want,
			     "%s: %s", boots[b], r->out);
		if (b == nb - 1)
			mem_dir_gone(r->err);
		snprintf(ck, sizeof(ck), "rm -rf %s", dir);
		cr_assert_eq(system(ck), 0);
	}
	free(r);
}

/* Rank 1's run, its exit held back 2 s: mpirun kills the job when a rank
 * exits non-zero, and rank 0's last words (and its removal of a directory)
 * must come first (under TSan they once did not). */
#define RANK1_LATE "{ $run; rc=\\$?; sleep 2; exit \\$rc; }"

/* mpirun -np 2 sh -c cmd (cmd tells its ranks apart by
 * OMPI_COMM_WORLD_RANK), into r. */
static void mpirun_sh2(struct rt_run *r, char *cmd)
{
	char *env[] = { "OMPI_MCA_rmaps_base_oversubscribe=1", NULL };
	char *argv[] = { "/usr/bin/mpirun",
			 "--allow-run-as-root",
			 "-np",
			 "2",
			 "/bin/sh",
			 "-c",
			 cmd,
			 NULL };

	rt_exec(r, argv, env, 60);
}

/*
 * A rank that comes too late to PMIx's start fence (rank 1 sleeps 6 s,
 * --rendezvous-timeout 2): rank 0 says a rank did not arrive within 2 s
 * and names the option that waits longer (a later collective, which
 * waits the runtime's --timeout, leaves the option to the runtime's line).
 */
Test(runtime_mpirun, a_late_rank_at_the_pmix_fence_names_the_option)
{
#ifdef FLEXRR_TEST_HAVE_PMIX
	struct rt_run *r = calloc(1, sizeof(*r));
	char cmd[512];

	need_mpirun(NULL);
	snprintf(cmd, sizeof(cmd),
		 "[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && sleep 6; exec %s run "
		 "--bootstrap pmix --rendezvous-timeout 2 -q toy",
		 rt_bin());
	mpirun_sh2(r, cmd);
	cr_assert_neq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->err, "fence (start) failed: a rank did not arrive "
				 "within 2 s") &&
		      strstr(r->err, "for slow starts: raise "
				     "--rendezvous-timeout"),
		  "%s", r->err);
	free(r);
#else
	cr_skip_test("flexrr is built without PMIx");
#endif
}

/*
 * Ranks that met through PMIx listen for a recovery where their host's
 * name resolves.  Rank 1 runs in a UTS namespace of its own under another
 * host name: "localhost" (loopback, as this host's name here) makes rank 0
 * warn at the start that the hosts could not reach each other, and the job
 * runs; a name that does not resolve fails rank 1 saying what to fix, and
 * rank 0 does not try to recover a job whose ranks never said where.
 */
Test(runtime_mpirun, pmix_recovery_says_when_hosts_cannot_reach_each_other)
{
#ifdef FLEXRR_TEST_HAVE_PMIX
	static const char *const names[] = { "localhost", "no-such-host-frr" };
	struct rt_run *r = calloc(1, sizeof(*r));
	char dir[64] = "/tmp/frr-rt-mpiname-XXXXXX", cmd[1024], rm[96];

	need_mpirun("-u");
	cr_assert_not_null(mkdtemp(dir));
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd),
			 "run='%s run --rendezvous-timeout 5 --clocks 4 "
			 "--checkpoint %s/ck%d --on-failure recover toy'; "
			 "[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && exec unshare -u "
			 "sh -c \"hostname %s && " RANK1_LATE "\"; exec $run",
			 rt_bin(), dir, i, names[i]);
		mpirun_sh2(r, cmd);
		if (!i) {
			cr_assert_eq(r->code, 0, "%s", r->err);
			cr_assert(strstr(r->err,
					 "which rank 1 on host localhost "
					 "cannot reach"),
				  "%s", r->err);
			continue;
		}
		cr_assert_neq(r->code, 0, "%s", r->err);
		cr_assert(strstr(r->err, "rank 1 cannot listen for the other "
					 "ranks where this host's name "
					 "resolves") &&
			      strstr(r->err, "/etc/hosts") &&
			      strstr(r->err,
				     "this host's name "
				     "'no-such-host-frr' resolves to no "
				     "address") &&
			      !strstr(r->err, "rendezvous address"),
			  "%s", r->err);
		/* rank 0 learns it in the meeting, not from a fence that
		 * fails as rank 1's process exits (racing mpirun's kill) */
		cr_assert(strstr(r->err, "flexrr[0]: error: --on-failure "
					 "recover: rank 1 cannot listen") &&
			      strstr(r->err, "where to agree after a loss: not "
					     "recovering") &&
			      !strstr(r->err, "is not HOST:PORT"),
			  "%s", r->err);
	}
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	cr_assert_eq(system(rm), 0);
	free(r);
#else
	cr_skip_test("flexrr is built without PMIx");
#endif
}

/*
 * Without --checkpoint a launched job checkpoints in rank 0's host's
 * memory, which only ranks on that host can read: rank 1 under another
 * host name (a UTS namespace) makes rank 0 refuse the job at the start,
 * saying what to give, and the directory it made is gone.
 */
Test(runtime_mpirun, recovery_in_memory_needs_one_host)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char cmd[512];

	need_mpirun("-u");
	snprintf(cmd, sizeof(cmd),
		 "run='%s run --rendezvous-timeout 5 --clocks 4 --on-failure "
		 "recover toy'; [ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && exec "
		 "unshare -u sh -c \"hostname localhost && " RANK1_LATE
		 "\"; exec $run",
		 rt_bin());
	mpirun_sh2(r, cmd);
	cr_assert_neq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->err, "--on-failure recover without --checkpoint "
				 "keeps the checkpoints in the memory of rank "
				 "0's host") &&
		      strstr(r->err, "which rank 1 (on localhost) cannot "
				     "read: give --checkpoint DIR on storage "
				     "every host reaches"),
		  "%s", r->err);
	mem_dir_gone(r->err);
	free(r);
}

/*
 * --checkpoint DIR that the ranks do not share (rank 1 sees a tmpfs of its
 * own at DIR's path, in a mount namespace, as a node-local /tmp would be on
 * another host): refused at the start, naming the rank, its host and what
 * to give, not found out at the first loss or resume; the test file rank 0
 * left in DIR is gone.
 */
Test(runtime_mpirun, checkpoint_dir_the_ranks_do_not_share)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char dir[64] = "/tmp/frr-rt-unshared-XXXXXX", cmd[1024], rm[96];

	need_mpirun("-mu");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "run='%s run --rendezvous-timeout 5 --clocks 4 --checkpoint "
		 "%s/ck toy'; [ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && exec "
		 "unshare -mu sh -c \"hostname frr-other-host && mount -t "
		 "tmpfs none %s && " RANK1_LATE "\"; exec $run",
		 rt_bin(), dir, dir);
	mpirun_sh2(r, cmd);
	cr_assert_neq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->err, "rank 1 (on host frr-other-host) does not "
				 "find the file rank 0") &&
		      strstr(r->err, "the ranks do not share that directory") &&
		      strstr(r->err, "storage every host reaches"),
		  "%s", r->err);
	snprintf(cmd, sizeof(cmd), "ls -A %s/ck | grep -q flexrr-shared", dir);
	cr_assert_neq(system(cmd), 0, "rank 0's test file is left in %s/ck",
		      dir);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	cr_assert_eq(system(rm), 0);
	free(r);
}
