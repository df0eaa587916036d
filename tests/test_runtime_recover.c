// SPDX-License-Identifier: MIT
/*
 * --on-failure recover (docs/runtime.md "When a rank is lost"): a local job
 * whose rank is lost carries on with the other processes, the lost rank
 * run by the next surviving one, from the newest checkpoint (ranks a
 * launcher starts: test_runtime_recover_launched.c).
 *   - BSP with a fixed seed ends with the uninterrupted run's summary line
 *     (toy, mf), whether the lost rank is a worker rank or the leader (also
 *     while it writes a checkpoint: the previous one serves), and when two
 *     of four ranks are lost one after the other (the second one running a
 *     lost rank already);
 *   - a rank that stops (SIGSTOP) is fenced: the others carry on without
 *     it, and once continued it exits saying it was left behind; a file it
 *     lands late (stopped past its writer's epoch check) is not the new
 *     epoch's, and a resume does not read it;
 *   - the counting app in bsp, ssp, flexrr, rr and lb-bsp (2 threads a
 *     rank, a 4x straggler): every cell is exactly the clocks run after the
 *     recovery (an item run twice or never fails the job's save), every
 *     clock ran every item (the app fails the clock otherwise), and every
 *     item's state is the clocks it ran (restored from the checkpoint: a
 *     cut that copied a state before a helper gave it back fails the item);
 *   - a rank's own error is not recovered (it would repeat), and launcher-
 *     started ranks are refused with what to use instead.
 * The deaths come from the job itself (FLEXRR_TEST_DIE, once per file), so
 * nothing depends on timing.  In the soft-RoCE VM (FLEXRR_TEST_QUICK, over
 * verbs) the suite runs the cases that reconnect the transports (a rank and
 * the leader lost, the counts in bsp and flexrr); the others run on shm on the
 * host, as do the stopped ranks under the sanitizers (their waits are timeouts,
 * not work to check).
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

TestSuite(runtime_recover, .timeout = 300);

/* What ran again: at least the clock the loss interrupted (every case
 * loses a rank after a checkpoint, inside a clock), each whole: the clocks
 * after the one resumed up to the one the loss interrupted. */
static void rerun_check(const char *out)
{
	const char *f = strstr(out, " from_clock="),
		   *s = strstr(out, " failed_at_clock=");
	int from = -2, at = -2, k = 0;
	unsigned long long n = 0;

	cr_assert(f && sscanf(f, " from_clock=%d", &from) == 1 && s &&
		      sscanf(s,
			     " failed_at_clock=%d rerun_clocks=%d "
			     "rerun_items=%llu",
			     &at, &k, &n) == 3,
		  "no from_clock, failed_at_clock, rerun_clocks, rerun_items "
		  "in:\n%s",
		  out);
	cr_assert(k >= 1 && k == at - from && n > 0 && n % (unsigned)k == 0,
		  "from_clock=%d failed_at_clock=%d rerun_clocks=%d "
		  "rerun_items=%llu: not the whole clocks in between",
		  from, at, k, n);
}

/* DIR/latest names the newest complete checkpoint in DIR: nobody of an
 * epoch that is over (a fenced rank) replaced it or removed the new
 * epoch's. */
static void latest_check(void)
{
	char p[512];
	int newest = -1, named = -2;
	FILE *f;
	DIR *d;

	snprintf(p, sizeof(p), "%s/ck/latest", dir);
	f = fopen(p, "r");
	cr_assert(f && fscanf(f, "ckpt-%d", &named) == 1, "%s unreadable", p);
	fclose(f);
	snprintf(p, sizeof(p), "%s/ck", dir);
	d = opendir(p);
	cr_assert(d, "%s", p);
	for (struct dirent *e; (e = readdir(d));) {
		int c;

		if (sscanf(e->d_name, "ckpt-%d", &c) != 1)
			continue;
		snprintf(p, sizeof(p), "%s/ck/ckpt-%d/MANIFEST", dir, c);
		if (!access(p, F_OK) && c > newest)
			newest = c;
	}
	closedir(d);
	cr_assert_eq(named, newest,
		     "DIR/latest names ckpt-%d, the newest complete one is "
		     "ckpt-%d",
		     named, newest);
}

/* With resume_to > 0, recover_on also resumes from DIR after the recovery,
 * to clock resume_to - 1, and compares with a run of that many clocks. */
static int resume_to;

static void resume_check(const char *job)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char longer[800], a[1024], ref[1024], res[1024];
	const char *c = strstr(job, "--clocks ");
	int n = (int)(c - job);

	cr_assert(r && c);
	c += strcspn(c + 9, " ") + 9;
	snprintf(longer, sizeof(longer), "%.*s--clocks %d%s", n, job, resume_to,
		 c);
	run(r, NULL, longer);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", longer, r->code, r->err);
	result(r, ref, sizeof(ref));
	snprintf(a, sizeof(a), "--resume %s/ck %s", dir, longer);
	run(r, NULL, a);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", a, r->code, r->err);
	result(r, res, sizeof(res));
	cr_assert_str_eq(res, ref, "resumed:\n%s\nuninterrupted:\n%s", res,
			 ref);
	free(r);
}

/*
 * On backend b: JOB uninterrupted, then with --on-failure recover and the
 * ranks of env FLEXRR_TEST_DIE=DIE (R:C[,R:C]: rank R lost at clock C,
 * each file dir/dN) lost: exit 0, the same summary line, and what the log
 * says.
 */
static void recover_on(enum frr_tp_backend b, const char *job0, const char *die,
		       const char *more_env, const char *want_err,
		       const char *want_note)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char ref[1024], res[1024], env[512], a[1024], spec[256] = "";
	char d[64], job[768];
	int k = 0, i = 0;

	scratch();
	snprintf(job, sizeof(job), "--backend %s %s", frr_tp_backend_name(b),
		 job0);
	run(r, NULL, job);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", job, r->code, r->err);
	result(r, ref, sizeof(ref));
	snprintf(d, sizeof(d), "%s", die ? die : "");
	for (char *s = strtok(d, ","); s; s = strtok(NULL, ","))
		k += snprintf(spec + k, sizeof(spec) - (size_t)k, "%s%s:%s/d%d",
			      k ? "," : "", s, dir, i++);
	/* die NULL: the loss comes from more_env alone */
	snprintf(env, sizeof(env), "%s%s%s%s", die ? "FLEXRR_TEST_DIE=" : "",
		 spec, die && more_env ? " " : "", more_env ? more_env : "");
	snprintf(a, sizeof(a),
		 "--checkpoint %s/ck --checkpoint-every 2 --on-failure recover "
		 "%s",
		 dir, job);
	run(r, env, a);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", a, r->code, r->err);
	cr_assert(strstr(r->err, want_err), "no '%s' in:\n%s", want_err,
		  r->err);
	cr_assert(strstr(r->err, "the others carried on (--on-failure "
				 "recover)") &&
		      !strstr(r->err, "restarting"),
		  "%s", r->err);
	cr_assert(strstr(r->out, want_note), "no '%s' in:\n%s", want_note,
		  r->out);
	rerun_check(r->out);
	latest_check();
	result(r, res, sizeof(res));
	cr_assert_str_eq(res, ref, "recovered:\n%s\nuninterrupted:\n%s", res,
			 ref);
	if (resume_to)
		resume_check(job);
	free(r);
	scratch_rm();
}

/* recover_on for every backend under test (the soft-RoCE VM: verbs). */
static void recover_case(const char *job, const char *die, const char *more_env,
			 const char *want_err, const char *want_note)
{
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int n = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);

	for (int i = 0; i < n; i++)
		recover_on(bs[i], job, die, more_env, want_err, want_note);
}

Test(runtime_recover, a_rank_is_lost)
{
	recover_case(TOY3, "1:7", NULL,
		     "rank 1 was killed by signal 9 (Killed); the others carry "
		     "on without its process",
		     " recovered: lost=1 epoch=1 from_clock=");
}

/* After the loss rank 1 runs in the process that started as rank 2, and
 * its lines say so: flexrr[1@2] (they read flexrr[1], as from a process
 * that had been killed).  The prefix, not the backend: host only. */
Test(runtime_recover, a_rank_run_by_another_process_logs_where)
{
	if (frr_test_quick())
		cr_skip_test("the log prefix: host only");
	recover_on(FRR_TP_BACKEND_SHM, TOY3, "1:7", "FLEXRR_LOG=info",
		   "flexrr[1@2]: info: rank 1 of 3 met the others",
		   " recovered: lost=1 epoch=1 ");
}

Test(runtime_recover, the_leader_is_lost)
{
	recover_case(TOY3, "0:7", NULL, "this process runs ranks 0, 1;",
		     " recovered: lost=1 epoch=1 ");
}

/* The leader lost while it writes checkpoint 5 (every shard file in
 * place, its manifest not yet): the survivors carry on from checkpoint 3,
 * the newest complete one. */
Test(runtime_recover, the_leader_is_lost_while_writing_a_checkpoint)
{
	recover_case(TOY3, NULL, "FLEXRR_TEST_CKPT_KILL=5:manifest:self",
		     "this process runs ranks 0, 1; from ",
		     " recovered: lost=1 epoch=1 from_clock=3 ");
}

/* The leader stopped while it writes checkpoint 5 (before its manifest):
 * the others carry on from checkpoint 3 and write 5, 7, 9; continued at
 * the end, the fenced leader's writer goes on, but its manifest and
 * DIR/latest are refused (latest_check: still the survivors'). */
Test(runtime_recover, a_fenced_leader_writes_no_checkpoint)
{
	if (frr_test_quick() || frr_test_sanitizer())
		cr_skip_test("on the host (shm) only: see the top");
	recover_case("-n 3 --clocks 12 --seed 3 --dead-timeout 1 toy --items "
		     "300",
		     NULL, "FLEXRR_TEST_CKPT_KILL=5:manifest:stop",
		     "checkpoint: not writing its MANIFEST of clock 5",
		     " recovered: lost=1 epoch=1 from_clock=3 ");
}

/* A rank stopped (SIGSTOP) while it writes its file of checkpoint 9, past
 * its epoch check: the others carry on from checkpoint 7 and write 9 again
 * in epoch 1; continued at the end, the fenced rank writes that file
 * (garbled, as another cut's bytes would differ under SSP).  The epochs'
 * files have their own names, so resuming from DIR's checkpoint 9 gives
 * the uninterrupted answer (with one name for both, the garbled file was
 * read back). */
Test(runtime_recover, a_fenced_ranks_late_file_is_not_read)
{
	if (frr_test_quick() || frr_test_sanitizer())
		cr_skip_test("on the host (shm) only: see the top");
	resume_to = 14;
	recover_case("-n 3 --clocks 12 --seed 3 --dead-timeout 1 toy --items "
		     "300",
		     NULL, "FLEXRR_TEST_CKPT_KILL=9:file:stop",
		     "and the others carried on without it (epoch 1): fenced",
		     /* 7, or 5 when the leader had not committed 7 yet
		      * (its writer commits after the files): either way
		      * the new epoch writes 9 again */
		     " recovered: lost=1 epoch=1 from_clock=");
	resume_to = 0;
}

/* Rank 1, then the process of rank 2 (which runs rank 1 by then): rank 3's
 * process runs three ranks to the end. */
Test(runtime_recover, two_of_four_one_after_the_other)
{
	if (frr_test_quick())
		cr_skip_test("on the host (shm) only: see the top");
	recover_case("-n 4 --clocks 16 --seed 3 toy --items 400", "1:5,2:11",
		     NULL, "this process runs ranks 1, 2, 3;",
		     " recovered: lost=2 epoch=2 ");
}

Test(runtime_recover, mf_two_threads)
{
	if (frr_test_quick())
		cr_skip_test("on the host (shm) only: see the top");
	recover_case("-n 2 -t 2 --clocks 8 --seed 5 mf --synthetic "
		     "2000,300,20000 --rank 8",
		     "1:5", NULL, "this process runs ranks 0, 1;",
		     " recovered: lost=1 epoch=1 ");
}

/* The directory a run without --checkpoint says its checkpoints go to
 * (launch/ckpt_mem.c), from what it printed after `at `. */
static void mem_dir(const char *err, const char *after, char *d, size_t len)
{
	const char *at = strstr(err, after);

	cr_assert(at, "no '%s' in:\n%s", after, err);
	at += strlen(after);
	snprintf(d, len, "%.*s", (int)strcspn(at, " :\n"), at);
	cr_assert(!strncmp(d, "/dev/shm/flexrr-ckpt-", 21), "%s", d);
}

/* The host-only cases below: a fresh scratch and TOY3's uninterrupted
 * summary into ref. */
static void toy3_ref(struct rt_run *r, char *ref, size_t len)
{
	if (frr_test_quick())
		cr_skip_test("on the host (shm) only: see the top");
	scratch();
	run(r, NULL, TOY3);
	cr_assert_eq(r->code, 0, "%s", r->err);
	result(r, ref, len);
}

/* No --checkpoint: the local job checkpoints in memory (/dev/shm) and
 * recovers from there as from a DIR, the same answer as uninterrupted;
 * the directory is gone once the job ended well. */
Test(runtime_recover, without_a_checkpoint_dir_in_memory)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char ref[1024], res[1024], env[256], a[512], d[256];

	toy3_ref(r, ref, sizeof(ref));
	snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=1:7:%s/d0", dir);
	snprintf(a, sizeof(a), "--checkpoint-every 2 --on-failure recover %s",
		 TOY3);
	run(r, env, a);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", a, r->code, r->err);
	mem_dir(r->err, "checkpoints every 2 clock(s) in memory at ", d,
		sizeof(d));
	cr_assert(strstr(r->out, " recovered: lost=1 epoch=1 from_clock=5 "),
		  "%s", r->out);
	rerun_check(r->out);
	result(r, res, sizeof(res));
	cr_assert_str_eq(res, ref, "recovered:\n%s\nuninterrupted:\n%s", res,
			 ref);
	cr_assert(access(d, F_OK) && errno == ENOENT,
		  "%s is still there after the job ended well", d);
	free(r);
	scratch_rm();
}

/* TOY3 with --on-failure restart and no restart left, rank 1 killed at
 * clock `at` (env file dir/dN): it fails. */
static void restarts_used_up(struct rt_run *r, int at, int n)
{
	char env[256], a[512];

	snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=1:%d:%s/d%d", at, dir, n);
	snprintf(a, sizeof(a),
		 "--checkpoint-every 2 --on-failure restart --max-restarts 0 "
		 "%s",
		 TOY3);
	run(r, env, a);
	cr_assert_neq(r->code, 0, "%s", r->err);
}

/* A job that fails keeps its checkpoint in memory, says where, and a
 * resume from there gives the uninterrupted answer; one that failed
 * before its first checkpoint leaves nothing behind. */
Test(runtime_recover, a_failed_job_keeps_its_checkpoint_in_memory)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char ref[1024], res[1024], a[512], d[256], m[300];

	toy3_ref(r, ref, sizeof(ref));
	restarts_used_up(r, 7, 0);
	mem_dir(r->err, "its checkpoint of clock 5 stays in memory at ", d,
		sizeof(d));
	snprintf(m, sizeof(m), "%s/ckpt-5/MANIFEST", d);
	cr_assert(!access(m, F_OK), "%s: %s", m, strerror(errno));
	snprintf(a, sizeof(a), "--resume %s %s", d, TOY3);
	run(r, NULL, a);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", a, r->code, r->err);
	result(r, res, sizeof(res));
	cr_assert_str_eq(res, ref, "resumed:\n%s\nuninterrupted:\n%s", res,
			 ref);
	snprintf(m, sizeof(m), "rm -rf %s", d);
	cr_assert_eq(system(m), 0, "%s", m);
	/* failed at clock 1, before checkpoint 1: nothing to keep */
	restarts_used_up(r, 1, 1);
	mem_dir(r->err, "checkpoints every 2 clock(s) in memory at ", d,
		sizeof(d));
	cr_assert(!strstr(r->err, "stays in memory") && access(d, F_OK) &&
		      errno == ENOENT,
		  "%s kept with no checkpoint in it:\n%s", d, r->err);
	free(r);
	scratch_rm();
}

/* The first line of file f that holds `what` into buf ("" when none). */
static void line_with(const char *f, const char *what, char *buf, size_t len)
{
	FILE *in = fopen(f, "r");

	buf[0] = 0;
	while (in && fgets(buf, (int)len, in) && !strstr(buf, what))
		buf[0] = 0;
	if (in)
		fclose(in);
}

/* The launcher itself killed (SIGKILL), or the whole job interrupted (^C:
 * SIGINT to its process group; scancel: SIGTERM to it) once it wrote a
 * checkpoint in memory: its ranks die with it, and the janitor it started
 * removes the directory nobody asked for.  The job runs a million clocks:
 * the signal comes while it runs, whenever that is. */
Test(runtime_recover, a_killed_launcher_leaves_no_checkpoint_in_memory)
{
	static const int sig[] = { SIGKILL, SIGINT, SIGTERM };
	char err[128], line[1024], d[256], latest[300];

	if (frr_test_quick())
		cr_skip_test("on the host (shm) only: see the top");
	scratch();
	snprintf(err, sizeof(err), "%s/err", dir);
	for (int i = 0; i < 3; i++) {
		pid_t pid = fork();
		int st, k;

		cr_assert(pid >= 0);
		if (pid == 0) { /* a session of its own: its group gets ^C */
			int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

			setsid();
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			dup2(fd, STDERR_FILENO);
			execl(rt_bin(), rt_bin(), "run", "-q", "--no-pin", "-n",
			      "2", "--clocks", "1000000", "--checkpoint-every",
			      "5", "--on-failure", "recover", "toy", (char *)0);
			_exit(127);
		}
		d[0] = 0;
		for (k = 0; k < 1200; k++, usleep(50000)) {
			line_with(err, " in memory at ", line, sizeof(line));
			if (line[0])
				mem_dir(line, " in memory at ", d, sizeof(d));
			snprintf(latest, sizeof(latest), "%s/latest", d);
			if (d[0] && !access(latest, F_OK))
				break;
		}
		cr_assert(k < 1200, "no checkpoint in memory in 60 s: '%s'", d);
		/* SIGKILL to the launcher alone, the others to the group */
		kill(i ? -pid : pid, sig[i]);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		cr_assert(WIFSIGNALED(st), "the launcher exited %d", st);
		for (k = 0; k < 600; k++, usleep(50000)) {
			line_with(err, "removed its checkpoints", line,
				  sizeof(line));
			if (line[0])
				break;
		}
		cr_assert(strstr(line, "the job was stopped by a signal: "
				       "removed its checkpoints in memory at "),
			  "no word from the janitor in 30 s after signal %d",
			  sig[i]);
		cr_assert(access(d, F_OK) && errno == ENOENT,
			  "%s is still there", d);
	}
	scratch_rm();
}

/* Rank 1 lost at clock 5, then the process that was to run it (rank 2's)
 * on its way to the survivors' meeting: the others give that meeting up
 * (the launcher's page moved on) and meet again, rank 0's process running
 * all three. */
Test(runtime_recover, a_loss_while_the_survivors_meet)
{
	if (frr_test_quick())
		cr_skip_test("on the host (shm) only: see the top");
	recover_case(TOY3, "1:5", "FLEXRR_TEST_DIE_MEET=2",
		     "this process runs ranks 0, 1, 2;",
		     " recovered: lost=2 epoch=2 ");
}

/* Stopped, not dead: the others declare it unresponsive (1 s), carry on,
 * and when the launcher continues it at the end it says it was fenced. */
Test(runtime_recover, a_stopped_rank_is_fenced)
{
	if (frr_test_quick() || frr_test_sanitizer())
		cr_skip_test("on the host (shm) only: see the top");
	recover_case("-n 3 --clocks 12 --seed 3 --dead-timeout 1 toy --items "
		     "300",
		     "2:5", "FLEXRR_TEST_DIE_STOP=1",
		     "flexrr[2]: this rank was lost (stopped or too slow) and "
		     "the others carried on without it (epoch 1): fenced",
		     " recovered: lost=1 epoch=1 ");
}

/* Hung (alive, its threads stuck: no signal its launcher sees): the
 * others find it silent for the --dead-timeout and say so, the launcher
 * cuts it off and kills it, and the job carries on.  Rank 1 hangs at clock
 * 3, then again at clock 8 in the process that runs it by then (rank 2's):
 * the page names processes, so that one is cut off, and rank 0's process
 * runs all three. */
Test(runtime_recover, a_hung_rank_is_cut_off)
{
	if (frr_test_quick())
		cr_skip_test("on the host (shm) only: see the top");
	recover_case("-n 3 --clocks 12 --seed 3 --dead-timeout 1 toy --items "
		     "300",
		     "1:3,1:8", "FLEXRR_TEST_DIE_HANG=1",
		     "rank 2 stopped answering: rank 0 saw no heartbeat from "
		     "it (or a rank its process runs)",
		     " recovered: lost=2 epoch=2 ");
}

/* Not recovered: a rank's own error (a forged NaN stat, refused by rank 0:
 * nobody was lost). */
Test(runtime_recover, refused_when_it_cannot_help)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char a[512];

	scratch();
	snprintf(a, sizeof(a),
		 "-n 2 --clocks 8 --checkpoint %s/ck --on-failure recover toy",
		 dir);
	run(r, "FLEXRR_TEST_FORGE=stats:1", a);
	cr_assert_neq(r->code, 0, "%s", r->err);
	cr_assert(!strstr(r->err, "recovering") &&
		      !strstr(r->err, "carry on without"),
		  "%s", r->err);
	free(r);
	scratch_rm();
}

/* ---- exact counts in every mode (the job API, in this process) ---- */

/* save_at: every cell is exactly the clocks run (the checkpoint's counts
 * plus the clocks after it, each once). */
static int rc_save(void *app, struct frr_eval_ctx *ec, const char *path,
		   int clock)
{
	struct count_app *a = app;

	(void)path;
	/* the leader's count of items run restarted with the recovery: the
	 * cells' sum stands for it, and each cell must be clock + 1 */
	a->ran = 0;
	for (uint64_t r = 0; r < (uint64_t)a->job.nparts * COUNT_ITEMS; r++) {
		float v;

		frr_eval_row_read(ec, 0, r, &v);
		a->ran += v;
	}
	return count_cells_check(a, ec, clock, 1);
}

static size_t rc_state_size(void *app, int part, uint64_t item)
{
	(void)app, (void)part, (void)item;
	return sizeof(uint32_t);
}

static void rc_state_init(void *app, int part, uint64_t item, void *st)
{
	(void)app, (void)part, (void)item;
	*(uint32_t *)st = 0;
}

/* An item's state counts the clocks it ran: at clock C it must be C. */
static int rc_process(void *app, struct frr_ctx *c, uint64_t a, uint64_t b)
{
	int clock = frr_clock(c);

	for (uint64_t i = a; i < b; i++) {
		uint32_t *st = frr_item_state(c, i);

		if (!st || *st != (uint32_t)clock) {
			frr_err("partition %d item %llu: its state is %d at "
				"clock %d (a restored state out of date, or "
				"the item ran twice)",
				frr_part_index(c), (unsigned long long)i,
				st ? (int)*st : -1, clock);
			return -EPROTO;
		}
		*st = (uint32_t)clock + 1;
	}
	return count_process(app, c, a, b);
}

static const struct frr_app_ops rc_app = {
	.size = sizeof(struct frr_app_ops),
	.name = "recovercount",
	.summary = "counts the runs of every item (tests)",
	.create = count_create,
	.destroy = count_destroy,
	.tables = count_tables,
	.load_partition = count_load,
	.item_state_size = rc_state_size,
	.item_state_init = rc_state_init,
	.process = rc_process,
	.clock_global = count_global_all,
	.nstats = COUNT_ST_N,
	.save_at = rc_save,
};

static void set(struct frr_job *job, const char *k, const char *v)
{
	cr_assert_eq(frr_job_set(job, k, v), 0, "%s %s", k, v ? v : "");
}

Test(runtime_recover, exact_counts_in_every_mode)
{
	static const char *const modes[] = { "bsp", "ssp", "flexrr", "rr",
					     "lb-bsp" };
	const int nm = sizeof(modes) / sizeof(modes[0]);
	static char *argv[] = { "recovercount" };
	enum frr_tp_backend bs[FRR_TEST_MAX_BACKENDS];
	int nb = frr_test_backends(bs, FRR_TEST_MAX_BACKENDS);
	char ck[128], die[160], died[128];
	const char *san = frr_test_sanitizer();
	struct stat st;

	/* the TSan stage runs this plain build against a TSan-built flexrr,
	 * which this case (the job API, in this process) never starts */
	if (san && !strcmp(san, "tsan"))
		cr_skip_test("in process: nothing for TSan to see here");
	for (int i = 0; i < nm * nb; i++) {
		struct frr_job *job = NULL;

		/* the VM: bsp and flexrr (see the top) */
		if (frr_test_quick() && i % nm != 0 && i % nm != 2)
			continue;
		scratch();
		snprintf(ck, sizeof(ck), "%s/ck", dir);
		snprintf(died, sizeof(died), "%s/died", dir);
		snprintf(die, sizeof(die), "1:5:%s", died);
		cr_assert_eq(setenv("FLEXRR_TEST_DIE", die, 1), 0);
		cr_assert_eq(frr_job_create(&rc_app, &job), 0);
		set(job, "procs", "3");
		set(job, "threads", "2");
		set(job, "backend", frr_tp_backend_name(bs[i / nm]));
		set(job, "mode", modes[i % nm]);
		set(job, "clocks", "10");
		set(job, "seed", "3");
		set(job, "quiet", NULL);
		set(job, "no-pin", NULL);
		set(job, "save", "unused");
		set(job, "stragglers", "persistent:0,4");
		set(job, "checkpoint", ck);
		set(job, "checkpoint-every", "2");
		set(job, "on-failure", "recover");
		cr_assert_eq(frr_job_set_app_args(job, 1, argv), 0);
		cr_assert_eq(frr_job_run(job), 0, "mode %s", modes[i % nm]);
		frr_job_free(job);
		cr_assert_eq(stat(died, &st), 0,
			     "mode %s: rank 1 never died: nothing was "
			     "recovered",
			     modes[i % nm]);
		scratch_rm();
	}
}
