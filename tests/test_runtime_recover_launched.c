// SPDX-License-Identifier: MIT
/*
 * --on-failure recover with ranks a launcher starts (srun, mpirun; the
 * rest of recovery: test_runtime_recover.c): each rank its own process
 * that meets the others over TCP, and nobody tells them who was lost.
 *   - a killed rank or a stopped one (fenced once continued): the
 *     survivors agree who is left and end with the uninterrupted summary;
 *   - without --checkpoint, on one host: rank 0 keeps the checkpoints in
 *     memory, the others find them, and the directory goes at the end;
 *   - a process lost (or silent) on its way to the survivors' meeting:
 *     the meeting is given up, not waited out.
 * The deaths come from the job itself (FLEXRR_TEST_DIE), so nothing
 * depends on timing.  In the soft-RoCE VM (FLEXRR_TEST_QUICK, verbs) only
 * the killed rank runs; a stopped rank's waits are timeouts, left out
 * under the sanitizers too.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flexrr/job.h"
#include "test_ckpt_util.h"
#include "test_count_app.h"
#include "test_util.h"

TestSuite(runtime_recover_launched, .timeout = 300);

/*
 * Ranks started as a launcher (srun, mpirun) starts them: each its own
 * process with PMI_RANK/PMI_SIZE, a rendezvous address and the job's
 * token, meeting over TCP.  Nobody tells them who was lost: they agree
 * among themselves (bootstrap's frr_members_agree).  out[k], err[k]: rank
 * k's; the last rank is continued (SIGCONT) once the others ended, for a
 * stopped one to see it was fenced.
 */
#define LN 3
/* 1: no --checkpoint (rank 0 makes a directory in its host's memory) */
static int launched_mem;
static void launched(enum frr_tp_backend b, const char *env_extra,
		     const char *job, int codes[LN], struct rt_run *rr)
{
	char rdv[64], tok[] = "FLEXRR_JOB_TOKEN=0123456789abcdef0123456789ab"
			      "cdef0123";
	char rank[LN][32], size[32], buf[1024], eb[LN][256], *argv[64];
	char ck[96];
	pid_t pid[LN];
	int n = 0;

	snprintf(rdv, sizeof(rdv), "FLEXRR_RENDEZVOUS=127.0.0.1:%d",
		 rt_free_port());
	snprintf(size, sizeof(size), "PMI_SIZE=%d", LN);
	snprintf(ck, sizeof(ck), "--checkpoint %s/ck", dir);
	snprintf(buf, sizeof(buf),
		 "run -q --no-pin --bootstrap tcp --backend %s %s "
		 "--checkpoint-every 2 --on-failure recover %s",
		 frr_tp_backend_name(b), launched_mem ? "" : ck, job);
	argv[n++] = (char *)rt_bin();
	for (char *s = strtok(buf, " "); s && n < 63; s = strtok(NULL, " "))
		argv[n++] = s;
	argv[n] = NULL;
	for (int k = 0; k < LN; k++) {
		char tag[16], *env[8] = { rdv, tok, size, rank[k] };
		int ne = 4;

		snprintf(rank[k], sizeof(rank[k]), "PMI_RANK=%d", k);
		snprintf(eb[k], sizeof(eb[k]), "%s", env_extra);
		for (char *s = strtok(eb[k], " "); s && ne < 7;
		     s = strtok(NULL, " "))
			env[ne++] = s;
		snprintf(tag, sizeof(tag), "l%d", k);
		pid[k] = rt_spawn(argv, env, tag);
	}
	for (int k = 0; k < LN; k++) {
		char tag[16];

		if (k == LN - 1)
			kill(pid[k], SIGCONT);
		codes[k] = rt_wait(pid[k], 120);
		snprintf(tag, sizeof(tag), "l%d", k);
		rt_collect(tag, &rr[k]);
	}
}

/* Launched: rank 1 killed (the others find its socket closed at once), or
 * rank 2 stopped (not answering: found after the wait, and fenced when
 * continued); rank 0 prints the uninterrupted summary line. */
Test(runtime_recover_launched, launched_ranks_agree_who_is_left)
{
	struct rt_run *rr = calloc(LN, sizeof(*rr));
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS), codes[LN];
	char want[1024], got[1024], env[256];

	for (int i = 0; i < 2 * nb; i++) {
		enum frr_tp_backend b = bs[i / 2];
		int stop = i % 2;

		if (stop && (frr_test_quick() || frr_test_sanitizer()))
			continue; /* see the top */

		scratch();
		snprintf(env, sizeof(env), "--backend %s " TOY3,
			 frr_tp_backend_name(b));
		run(rr, NULL, env);
		result(rr, want, sizeof(want));
		snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=%d:5:%s/died%s",
			 stop ? 2 : 1, dir,
			 stop ? " FLEXRR_TEST_DIE_STOP=1" : "");
		launched(b, env, stop ? "--dead-timeout 1 " TOY3 : TOY3, codes,
			 rr);
		cr_assert_eq(codes[0], 0, "rank 0: %d %s", codes[0], rr[0].err);
		cr_assert_eq(codes[stop ? 1 : 2], 0, "%s",
			     rr[stop ? 1 : 2].err);
		cr_assert_eq(codes[stop ? 2 : 1], stop ? 1 : 128 + SIGKILL,
			     "%s", rr[stop ? 2 : 1].err);
		result(&rr[0], got, sizeof(got));
		cr_assert_str_eq(
		    got, want, "recovered:\n%s\nuninterrupted:\n%s", got, want);
		cr_assert(strstr(rr[0].out, " recovered: lost=1 epoch=1 "),
			  "%s", rr[0].out);
		cr_assert(strstr(rr[0].err, "recovering (epoch 1)"), "%s",
			  rr[0].err);
		if (stop)
			cr_assert(strstr(rr[2].err, "flexrr[2]: this rank was "
						    "lost (stopped or too "
						    "slow) and the others "
						    "carried on without it "
						    "(epoch 1): fenced"),
				  "%s", rr[2].err);
		scratch_rm();
	}
	free(rr);
}

/* Launched without --checkpoint, all on one host: rank 0 makes the
 * directory in memory and says where, the others take it, rank 1 is
 * killed at clock 5, and the job ends with the uninterrupted summary line;
 * the directory is gone at the end (the lowest rank left removed it). */
Test(runtime_recover_launched, launched_ranks_on_one_host_checkpoint_in_memory)
{
	struct rt_run *rr = calloc(LN, sizeof(*rr));
	int codes[LN];
	char want[1024], got[1024], env[256], d[64];
	const char *at;

	scratch();
	run(rr, NULL, "--backend shm " TOY3);
	result(rr, want, sizeof(want));
	snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=1:5:%s/died", dir);
	launched_mem = 1;
	launched(FRR_TP_BACKEND_SHM, env, TOY3, codes, rr);
	cr_assert_eq(codes[0], 0, "rank 0: %d %s", codes[0], rr[0].err);
	cr_assert_eq(codes[1], 128 + SIGKILL, "%s", rr[1].err);
	cr_assert_eq(codes[2], 0, "%s", rr[2].err);
	result(&rr[0], got, sizeof(got));
	cr_assert_str_eq(got, want, "recovered:\n%s\nuninterrupted:\n%s", got,
			 want);
	at = strstr(rr[0].err, "in memory at /dev/shm/flexrr-ckpt-");
	cr_assert(at && strstr(rr[0].err, "on rank 0's host, for every rank "
					  "on it"),
		  "%s", rr[0].err);
	snprintf(d, sizeof(d), "%.*s", (int)strcspn(at + 13, ", \n"), at + 13);
	cr_assert(strstr(rr[0].err, "recovering (epoch 1)") &&
		      strstr(rr[0].err, d),
		  "%s", rr[0].err);
	cr_assert_neq(access(d, F_OK), 0, "%s is still there", d);
	scratch_rm();
	free(rr);
}

/* Launched: rank 1 killed at clock 5, then rank 2's process (which is to
 * run rank 1 too) lost on its way to epoch 1's meeting (env meet).  Rank
 * 0's process, serving that meeting, finds the missing ranks' process gone
 * and gives the meeting up (saying want) instead of waiting out the
 * --rendezvous-timeout (300 s here: past this test's wait for its ranks),
 * then runs all three. */
static void meeting_given_up(const char *meet, const char *opts,
			     const char *want_err)
{
	struct rt_run *rr = calloc(LN, sizeof(*rr));
	int codes[LN];
	char want[1024], got[1024], env[256], job[256];

	scratch();
	run(rr, NULL, "--backend shm " TOY3);
	result(rr, want, sizeof(want));
	snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=1:5:%s/died %s", dir, meet);
	snprintf(job, sizeof(job), "--rendezvous-timeout 300 %s" TOY3, opts);
	launched(FRR_TP_BACKEND_SHM, env, job, codes, rr);
	cr_assert_eq(codes[0], 0, "rank 0: %d %s", codes[0], rr[0].err);
	cr_assert_eq(codes[1], 128 + SIGKILL, "%s", rr[1].err);
	cr_assert_eq(codes[2], 128 + SIGKILL, "%s", rr[2].err);
	result(&rr[0], got, sizeof(got));
	cr_assert_str_eq(got, want, "recovered:\n%s\nuninterrupted:\n%s", got,
			 want);
	cr_assert(strstr(rr[0].out, " recovered: lost=2 epoch=2 "), "%s",
		  rr[0].out);
	cr_assert(strstr(rr[0].err, want_err), "no '%s' in:\n%s", want_err,
		  rr[0].err);
	scratch_rm();
	free(rr);
}

/* Its process dead: its members socket refuses. */
Test(runtime_recover_launched, launched_ranks_give_up_a_meeting_a_rank_left)
{
	if (frr_test_quick())
		cr_skip_test("on the host (shm) only: see the top");
	meeting_given_up("FLEXRR_TEST_DIE_MEET=2", "",
			 "rank 2's process is gone (its members socket "
			 "refuses): giving up epoch 1's meeting");
}

/* Its process silent, as on a host that is down (its members socket's
 * accept queue full: the kernel drops the probes, and the process is
 * stopped): given up after the --dead-timeout of silence; the next
 * members round finds it lost as it finds a stopped rank. */
Test(runtime_recover_launched,
     launched_ranks_give_up_a_meeting_a_silent_rank_left)
{
	if (frr_test_quick() || frr_test_sanitizer())
		cr_skip_test("on the host (shm) only: see the top");
	meeting_given_up("FLEXRR_TEST_DIE_MEET=2:silent", "--dead-timeout 1 ",
			 "rank 2's process has answered nothing for ");
}
