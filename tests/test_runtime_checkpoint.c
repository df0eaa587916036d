// SPDX-License-Identifier: MIT
/*
 * --checkpoint and --resume (docs/runtime.md "Checkpoints"): a BSP job
 * SIGKILLed as a whole after a checkpoint and resumed ends with the
 * uninterrupted run's summary line, bit for bit (toy, mf, lda, mlr); a kill
 * while a checkpoint is written (rank 0 stopped before its manifest) leaves
 * the previous one, which resumes to the same answer, also with a cut every
 * clock (each taken while the last may still be written by the rank's
 * writer thread); the time-based form
 * and SSP write checkpoints that resume; a job that does not match the
 * checkpoint (seed, app options, shape, app) is refused naming the
 * difference, and so is a fresh job over another job's checkpoints; a
 * latest naming a removed checkpoint yields to the newest manifest.
 *
 * The kills come from the job itself (env FLEXRR_TEST_CKPT_KILL=C or
 * C:manifest: rank 0 SIGKILLs its process group, which rt_exec makes the
 * job's own), at a chosen checkpoint, so no test depends on timing.
 *
 * --on-failure restart: one rank SIGKILLs itself at a chosen clock (env
 * FLEXRR_TEST_DIE, once), the local launcher restarts the job from the
 * newest checkpoint, and a BSP job ends with the uninterrupted answer; a
 * rank's own error and used-up restarts are not restarted.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_ckpt_util.h"

TestSuite(runtime_checkpoint, .timeout = 300);

/* Cases whose subject is no backend's (an app's own checkpoint callbacks,
 * the checks of options and files, the writer's bookkeeping) run on the
 * host only: the soft-RoCE VM's stage keeps the kills and resumes of toy,
 * a kill while writing, the restarts and SSP over verbs (the whole file
 * took 76 s under the VM's emulated CPUs, a fifth of its stage). */
static void host_only(void)
{
	if (frr_test_quick())
		cr_skip_test("on the host only (see host_only)");
}

/* run() with printf-style ARGS; it must succeed. */
__attribute__((format(printf, 2, 3))) static void run_ok(struct rt_run *r,
							 const char *fmt, ...)
{
	char args[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	run(r, NULL, args);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", args, r->code, r->err);
}

static void latest_is(const char *want)
{
	char p[128], got[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/ck/latest", dir);
	f = fopen(p, "r");
	cr_assert_not_null(f, "no %s", p);
	cr_assert_not_null(fgets(got, sizeof(got), f));
	fclose(f);
	got[strcspn(got, "\n")] = 0;
	cr_assert_str_eq(got, want);
}

/*
 * The uninterrupted run of JOB, then JOB with checkpoints every `every`
 * clocks killed as a whole at kill (env FLEXRR_TEST_CKPT_KILL), then JOB
 * resumed: the same summary line.  want: the checkpoint latest names after
 * the kill.
 */
static void kill_and_resume_every(const char *job, int every, const char *kill,
				  const char *want)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char args[1024], env[64], ref[2048], res[2048];

	run_ok(r, "%s", job);
	result(r, ref, sizeof(ref));
	snprintf(args, sizeof(args),
		 "--checkpoint %s/ck --checkpoint-every %d %s", dir, every,
		 job);
	snprintf(env, sizeof(env), "FLEXRR_TEST_CKPT_KILL=%s", kill);
	run(r, env, args);
	cr_assert_eq(r->code, 128 + SIGKILL, "the job was not killed: %d %s",
		     r->code, r->err);
	latest_is(want);
	run_ok(r, "--resume %s/ck --checkpoint %s/ck --checkpoint-every %d %s",
	       dir, dir, every, job);
	result(r, res, sizeof(res));
	cr_assert_str_eq(res, ref, "resumed:\n%s\nuninterrupted:\n%s", res,
			 ref);
	free(r);
}

static void kill_and_resume(const char *job, const char *kill, const char *want)
{
	kill_and_resume_every(job, 2, kill, want);
}

Test(runtime_checkpoint, toy_resume_after_kill)
{
	scratch();
	kill_and_resume(
	    "-n 2 -t 2 --clocks 8 --seed 3 toy --items 300 --dim 40", "3",
	    "ckpt-3");
	scratch_rm();
}

Test(runtime_checkpoint, toy_adagrad_resume_after_kill)
{
	host_only();

	scratch();
	kill_and_resume("-n 3 --clocks 6 --seed 2 toy --adagrad", "1",
			"ckpt-1");
	scratch_rm();
}

Test(runtime_checkpoint, mf_resume_after_kill)
{
	host_only();

	scratch();
	kill_and_resume("-n 2 -t 2 --clocks 6 --seed 5 mf --synthetic "
			"4000,600,120000 --rank 8",
			"3", "ckpt-3");
	scratch_rm();
}

/* A small text corpus: 60 documents over three overlapping vocabularies
 * (item state: every token's topic). */
static void tiny_corpus(char *path, size_t len)
{
	FILE *f;
	uint64_t s = 7;

	snprintf(path, len, "%s/corpus.txt", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	for (int d = 0; d < 60; d++) {
		for (int t = 0; t < 40; t++) {
			int w = (d % 3) * 20 + (int)((s >> 33) % 25);

			s = s * 6364136223846793005ull + 1442695040888963407ull;
			fprintf(f, "%cword%c%c ", 'a' + w % 26, 'a' + w / 26,
				'k' + w % 7);
		}
		fprintf(f, "\n\n");
	}
	cr_assert_eq(fclose(f), 0);
}

/* An lda job of 6 clocks on tiny_corpus (in a fresh scratch directory). */
static void lda_job(char *job, size_t len)
{
	char corpus[128];

	scratch();
	tiny_corpus(corpus, sizeof(corpus));
	snprintf(job, len,
		 "-n 2 -t 2 --clocks 6 --seed 1 lda --text %s --topics 5 "
		 "--no-progress",
		 corpus);
}

Test(runtime_checkpoint, lda_resume_after_kill)
{
	char job[512];

	host_only();
	lda_job(job, sizeof(job));
	kill_and_resume(job, "3", "ckpt-3");
	scratch_rm();
}

Test(runtime_checkpoint, mlr_resume_after_kill)
{
	struct stat st;

	host_only();
	if (stat("/usr/share/datasets/fashion-mnist", &st))
		cr_skip_test("dataset-fashion-mnist not installed");
	scratch();
	kill_and_resume("-n 2 --clocks 4 --seed 1 mlr --data fashion-mnist "
			"--train-limit 3000 --test-limit 500 --no-progress",
			"1", "ckpt-1");
	scratch_rm();
}

/* Killed after every rank wrote checkpoint 3's files but before rank 0's
 * manifest: checkpoint 1 is the newest complete one, and it resumes. */
Test(runtime_checkpoint, kill_while_writing_keeps_the_previous)
{
	char job[512], p[128];
	struct stat st;

	lda_job(job, sizeof(job));
	kill_and_resume(job, "3:manifest", "ckpt-1");
	snprintf(p, sizeof(p), "%s/ck/ckpt-1", dir);
	cr_assert_neq(stat(p, &st), 0,
		      "%s is still there: it goes once the resumed run's "
		      "ckpt-3 is complete",
		      p);
	scratch_rm();
}

/* A cut every clock: each comes while the last one may still be written
 * (the server holds it) and rank 0's manifests follow in order, so a kill
 * before checkpoint 4's manifest leaves checkpoint 3, which resumes. */
Test(runtime_checkpoint, every_clock_kill_while_writing)
{
	char job[512];

	host_only();
	lda_job(job, sizeof(job));
	kill_and_resume_every(job, 1, "4:manifest", "ckpt-3");
	scratch_rm();
	scratch();
	kill_and_resume_every("-n 2 -t 2 --clocks 8 --seed 3 toy --items 300 "
			      "--dim 40",
			      1, "5", "ckpt-5");
	scratch_rm();
}

/* A latest that names a checkpoint since removed (written late by a rank
 * a recovery fenced out: docs/runtime.md "A fenced rank's files"): the
 * resume takes the newest complete checkpoint (its MANIFEST is there),
 * says so, and ends with the uninterrupted answer. */
Test(runtime_checkpoint, a_late_latest_yields_to_the_newest_manifest)
{
	static const char job[] =
	    "-n 2 -t 2 --clocks 9 --seed 3 toy --items 300 --dim 40";
	struct rt_run *r = calloc(1, sizeof(*r));
	char ref[2048], res[2048], p[128], args[512];
	FILE *f;
	int fd;

	host_only();
	scratch();
	run_ok(r, "%s", job);
	result(r, ref, sizeof(ref));
	snprintf(args, sizeof(args),
		 "--checkpoint %s/ck --checkpoint-every 2 %s", dir, job);
	run(r, "FLEXRR_TEST_CKPT_KILL=5", args);
	cr_assert_eq(r->code, 128 + SIGKILL, "the job was not killed: %d %s",
		     r->code, r->err);
	latest_is("ckpt-5");
	snprintf(p, sizeof(p), "%s/ck/latest", dir);
	/* a new file in its place, created exclusively (no link followed) */
	cr_assert_eq(unlink(p), 0);
	fd =
	    open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	cr_assert_not_null(f, "%s: %s", p, strerror(errno));
	fputs("ckpt-1\n", f); /* removed once ckpt-3 was complete */
	cr_assert_eq(fclose(f), 0);
	run_ok(r, "--resume %s/ck %s", dir, job);
	cr_assert(strstr(r->err, "latest names ckpt-1, which is incomplete "
				 "or gone; resuming ckpt-5"),
		  "%s", r->err);
	result(r, res, sizeof(res));
	cr_assert_str_eq(res, ref, "resumed:\n%s\nuninterrupted:\n%s", res,
			 ref);
	free(r);
	scratch_rm();
}

/*
 * --on-failure restart (a local job): rank `die` SIGKILLs itself as it
 * starts clock `at` (env FLEXRR_TEST_DIE, once), the launcher restarts the
 * whole job from the newest complete checkpoint, and it ends with the
 * uninterrupted run's summary line.
 */
static void restart_case(const char *job, int die, int at)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char ref[1024], res[1024], env[160], a[1024];

	scratch();
	run_ok(r, "%s", job);
	result(r, ref, sizeof(ref));
	snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=%d:%d:%s/died", die, at,
		 dir);
	snprintf(a, sizeof(a),
		 "--checkpoint %s/ck --checkpoint-every 2 --on-failure restart "
		 "%s",
		 dir, job);
	run(r, env, a);
	cr_assert_eq(r->code, 0, "%s: exit %d, %s", a, r->code, r->err);
	cr_assert(strstr(r->err, "FLEXRR_TEST_DIE: SIGKILL"), "%s", r->err);
	snprintf(a, sizeof(a), "rank %d was killed by signal 9", die);
	cr_assert(strstr(r->err, a) &&
		      strstr(r->err, "restarting the job (restart 1 of 3)") &&
		      strstr(r->err, "done after 1 restart(s)"),
		  "%s", r->err);
	result(r, res, sizeof(res));
	cr_assert_str_eq(res, ref, "restarted:\n%s\nuninterrupted:\n%s", res,
			 ref);
	free(r);
	scratch_rm();
}

Test(runtime_checkpoint, restart_after_a_rank_dies)
{
	restart_case("-n 3 --clocks 12 --seed 3 toy --items 300", 1, 7);
}

Test(runtime_checkpoint, restart_after_the_leader_dies)
{
	restart_case("-n 3 --clocks 12 --seed 3 toy --items 300", 0, 7);
}

Test(runtime_checkpoint, restart_mf_before_any_checkpoint)
{
	/* clock 1: no checkpoint yet, the job starts again from clock 0 */
	restart_case("-n 2 -t 2 --clocks 6 --seed 5 mf --synthetic "
		     "400,60,3000 --rank 4",
		     1, 1);
}

/* SSP, flexrr and rr restart too (their results depend on timing: the
 * restarted job must run every clock and finish). */
Test(runtime_checkpoint, restart_in_every_mode)
{
	static const char *const modes[] = { "ssp", "flexrr", "rr" };
	struct rt_run *r = calloc(1, sizeof(*r));
	char env[160], a[512];

	for (int i = 0; i < 3; i++) {
		scratch();
		snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=1:5:%s/died", dir);
		snprintf(a, sizeof(a),
			 "-n 3 -t 2 --mode %s --clocks 12 --checkpoint %s/ck "
			 "--checkpoint-every 2 --on-failure restart toy "
			 "--items 300",
			 modes[i], dir);
		run(r, env, a);
		cr_assert_eq(r->code, 0, "%s: exit %d, %s", a, r->code, r->err);
		cr_assert(
		    strstr(r->err, "restarting the job (restart 1 of 3)") &&
			strstr(r->out, " clocks=12 "),
		    "%s:\n%s%s", modes[i], r->err, r->out);
		scratch_rm();
	}
	free(r);
}

/* Not restarted: the restarts used up, and a rank's own error (a forged
 * NaN stat: rank 0 refuses it, and would again). */
Test(runtime_checkpoint, restart_refused_when_it_cannot_help)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char env[160], a[512];

	host_only();
	scratch();
	snprintf(env, sizeof(env), "FLEXRR_TEST_DIE=1:3:%s/died", dir);
	snprintf(a, sizeof(a),
		 "-n 2 --clocks 8 --checkpoint %s/ck --on-failure restart "
		 "--max-restarts 0 toy",
		 dir);
	run(r, env, a);
	cr_assert_neq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->err, "rank 1 was killed by signal 9 (Killed); the "
				 "0 restart(s) of --max-restarts are used up"),
		  "%s", r->err);
	scratch_rm();
	scratch();
	snprintf(a, sizeof(a),
		 "-n 2 --clocks 8 --checkpoint %s/ck --on-failure restart toy",
		 dir);
	run(r, "FLEXRR_TEST_FORGE=stats:1", a);
	cr_assert_neq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->err, "not restarting: rank ") &&
		      strstr(r->err, "which a restart would repeat") &&
		      !strstr(r->err, "restarting the job"),
		  "%s", r->err);
	free(r);
	scratch_rm();
}

/* Time-based checkpoints and SSP: written, and the job resumes from them
 * (SSP results depend on timing: only completion is checked). */
Test(runtime_checkpoint, seconds_and_ssp)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char corpus[128];

	scratch();
	run_ok(r,
	       "-n 2 -t 2 --clocks 40 --checkpoint %s/ck --checkpoint-every "
	       "0.01s toy --items 300 --sleep-us 50",
	       dir);
	run_ok(r,
	       "-n 2 -t 2 --clocks 41 --resume %s/ck toy --items 300 "
	       "--sleep-us 50",
	       dir);
	scratch_rm();
	scratch();
	tiny_corpus(corpus, sizeof(corpus));
	run_ok(r,
	       "-n 2 -t 2 --mode ssp --slack 2 --clocks 12 --checkpoint %s/ck "
	       "--checkpoint-every 1 lda --text %s --topics 5 --no-progress",
	       dir, corpus);
	latest_is("ckpt-10");
	run_ok(r,
	       "-n 2 -t 2 --mode ssp --slack 2 --clocks 14 --resume %s/ck "
	       "lda --text %s --topics 5 --no-progress",
	       dir, corpus);
	cr_assert(strstr(r->out, " clocks=14 "), "%s", r->out);
	free(r);
	scratch_rm();
}

/* What a job that does not fit checkpoint ckpt-3 of DIR/ck (toy, -n 2, seed
 * 3, --items 300) is told: the run options (%s = the scratch directory),
 * the exit code, a piece of the message. */
static const struct {
	const char *args;
	int code;
	const char *msg;
} mismatch[] = {
	{ "-n 2 --clocks 6 --seed 4 --resume %s/ck toy --items 300", 1,
	  "the checkpoint ran --seed 3, this job --seed 4" },
	{ "-n 2 --clocks 6 --seed 3 --resume %s/ck toy --items 301", 1,
	  "app options differ" },
	{ "-n 1 -t 2 --clocks 6 --seed 3 --resume %s/ck toy --items 300", 1,
	  "written by -n 2 -t 1, this job is -n 1 -t 2" },
	{ "-n 2 --clocks 6 --seed 3 --resume %s/ck mf --synthetic 400,60,1200",
	  1, "the checkpoint is of app toy, this job runs mf" },
	{ "-n 2 --clocks 4 --seed 3 --resume %s/ck toy --items 300", 1,
	  "nothing left to run" },
	{ "-n 2 --seed 3 --checkpoint %s/ck toy", 1,
	  "already holds a job's checkpoints" },
	{ "--resume %s/ck --load x toy", 2, "drop --load" },
	{ "--checkpoint-every 3 toy", 2, "needs --checkpoint DIR" },
	{ "--on-failure retry toy", 2, "--on-failure" },
	{ "--checkpoint %s/x --checkpoint-every 0 toy", 2,
	  "--checkpoint-every wants" },
	{ "--resume %s/none toy", 1, "no complete checkpoint there" },
};

Test(runtime_checkpoint, mismatches_refused)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char a[1024];

	host_only();
	scratch();
	run_ok(r,
	       "-n 2 --clocks 6 --seed 3 --checkpoint %s/ck "
	       "--checkpoint-every 2 toy --items 300",
	       dir);
	latest_is("ckpt-3");
	for (size_t i = 0; i < sizeof(mismatch) / sizeof(mismatch[0]); i++) {
		snprintf(a, sizeof(a), mismatch[i].args, dir);
		run(r, NULL, a);
		cr_assert_eq(r->code, mismatch[i].code, "%s: exit %d, %s", a,
			     r->code, r->err);
		cr_assert(strstr(r->err, mismatch[i].msg),
			  "%s: wanted '%s' in:\n%s", a, mismatch[i].msg,
			  r->err);
	}
	free(r);
	scratch_rm();
}

Test(runtime_checkpoint, help_lists_the_options)
{
	struct rt_run *r = calloc(1, sizeof(*r));

	host_only();
	run(r, NULL, "--help");
	cr_assert_eq(r->code, 0);
	cr_assert(strstr(r->out, "--checkpoint DIR"));
	cr_assert(strstr(r->out, "--checkpoint-every N"));
	cr_assert(strstr(r->out, "--resume DIR"));
	free(r);
}
