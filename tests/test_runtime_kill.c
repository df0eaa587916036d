// SPDX-License-Identifier: MIT
/*
 * A rank killed mid-clock makes every other rank exit non-zero within 10 s
 * with a message naming the dead rank (every backend under test).  The ranks
 * are started the way a launcher would (FLEXRR_RANK/FLEXRR_SIZE + TCP
 * rendezvous), so no parent process cleans up for them.  The kill lands
 * once the job runs clocks (rank 0's metrics file has rows), not after a
 * fixed sleep.
 */
#include <criterion/criterion.h>

#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

TestSuite(runtime_kill, .timeout = 120);

/* How long the ranks may take to meet and run their first clocks (the
 * rendezvous alone took over 4 s in the soft-RoCE VM on a loaded host). */
#define RUNNING_WITHIN_S 40

enum { P = 3 };

/* Until rank 0's metrics file holds a row of clock 0: every rank is past
 * the rendezvous and set-up (stdio writes the rows in blocks: a few clocks
 * in).  No rank may have ended by then. */
static void wait_running(const char *backend, const char *metrics, pid_t pid[P],
			 char tag[P][16])
{
	int running;

	running = rt_wait_output(metrics, "\n0,", pid, P, RUNNING_WITHIN_S);
	for (int r = 0; r < P; r++)
		if (waitpid(pid[r], NULL, WNOHANG) != 0) {
			struct rt_run *e = calloc(1, sizeof(*e));

			rt_collect(tag[r], e);
			cr_assert_fail("%s: rank %d ended before the kill: %s",
				       backend, r, e->err);
		}
	if (!running) {
		for (int r = 0; r < P; r++)
			rt_wait(pid[r], 0);
		cr_assert_fail("%s: the job ran no clock within %d s "
			       "(RUNNING_WITHIN_S, tests/test_runtime_kill.c)",
			       backend, RUNNING_WITHIN_S);
	}
}

/* A survivor of the kill: ends non-zero within 10 s, naming the victim. */
static void survivor_check(const char *backend, int r, int victim, pid_t pid,
			   const char *tag, double t_kill)
{
	struct rt_run *res = calloc(1, sizeof(*res));
	char name[32];
	double waited;

	if (r == victim) {
		rt_collect(tag, res);
		free(res);
		return;
	}
	res->code = rt_wait(pid, 12 - (rt_now() - t_kill));
	waited = rt_now() - t_kill;
	rt_collect(tag, res);
	snprintf(name, sizeof(name), "rank %d", victim);
	cr_assert(res->code > 0, "%s: rank %d exit %d after rank %d was killed",
		  backend, r, res->code, victim);
	cr_assert(waited < 10.0, "rank %d took %.1f s", r, waited);
	cr_assert(strstr(res->err, name),
		  "%s: rank %d's message does not name %s: %s", backend, r,
		  name, res->err);
	free(res);
}

static void kill_case(const char *backend, int victim, int k)
{
	char addr[64], tag[P][16], rankv[P][32], metrics[64];
	pid_t pid[P];
	double t_kill;

	(void)k;
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", rt_free_port());
	snprintf(metrics, sizeof(metrics), "/tmp/frr-kill-%d.csv", getpid());
	unlink(metrics);
	char *argv[] = { (char *)rt_bin(),
			 "run",
			 "-t",
			 "2",
			 "--backend",
			 (char *)backend,
			 "--rendezvous",
			 addr,
			 "--clocks",
			 "100000",
			 "-q",
			 "--metrics",
			 metrics,
			 "toy",
			 "--work-us",
			 "100",
			 NULL };
	for (int r = 0; r < P; r++) {
		char *env[] = {
			rankv[r], "FLEXRR_SIZE=3",
			"FLEXRR_JOB_TOKEN=kill-test-0123456789abcdef0123456789",
			NULL
		};

		snprintf(rankv[r], sizeof(rankv[r]), "FLEXRR_RANK=%d", r);
		snprintf(tag[r], sizeof(tag[r]), "kill%d", r);
		pid[r] = rt_spawn(argv, env, tag[r]);
	}
	/* a kill before the ranks know each other is another test (the
	 * message would name rank 0): wait until the job runs clocks */
	wait_running(backend, metrics, pid, tag);
	kill(pid[victim], SIGKILL);
	t_kill = rt_now();
	rt_wait(pid[victim], 5);
	for (int r = 0; r < P; r++)
		survivor_check(backend, r, victim, pid[r], tag[r], t_kill);
	unlink(metrics);
}

Test(runtime_kill, others_exit_naming_the_dead_rank)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	for (int i = 0; i < nb; i++) {
		kill_case(frr_tp_backend_name(bs[i]), 1, 2 * i);
		kill_case(frr_tp_backend_name(bs[i]), 0, 2 * i + 1);
	}
}
