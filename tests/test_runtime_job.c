// SPDX-License-Identifier: MIT
/*
 * `flexrr run` as users meet it: --help, the summary line, --target, the
 * metrics file, and bad input (unknown app or option, slack < 0, more
 * workers than items, a table too big for memory, an unreachable rendezvous,
 * a wrong job token, mismatched binaries): a clear message, a non-zero exit,
 * no hang.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <sys/stat.h>

#include "flexrr/flexrr.h"
#include "test_runtime_util.h"

/* two job secrets (FLEXRR_JOB_TOKEN wants at least 32 characters) */
#define TOKEN_A "0123456789abcdef0123456789abcdef"
#define TOKEN_B "fedcba9876543210fedcba9876543210"

TestSuite(runtime_job, .timeout = 120);

static int rdv_port(int k)
{
	(void)k;
	return rt_free_port();
}

Test(runtime_job, help_everywhere)
{
	struct rt_run *r = calloc(1, sizeof(*r));

	RT_RUN(r, 10, "run", "--help");
	cr_assert_eq(r->code, 0);
	cr_assert(strstr(r->out, "usage: flexrr run"));
	cr_assert(strstr(r->out, "--slack"));
	RT_RUN(r, 10, "run", "-n", "2", "toy", "--help");
	cr_assert_eq(r->code, 0);
	cr_assert(strstr(r->out, "--items"), "toy usage: %s", r->out);
	free(r);
}

/* --help groups options by what they apply to (issue 25 item 7):
 * --stragglers and --trace work in every mode, every --rr-* option says
 * what it does. */
Test(runtime_job, help_groups_options)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	static const char *const rr[] = { "--rr-group G ", "--rr-threshold F ",
					  "--rr-min-share F ", "--rr-report N ",
					  "--rr-max-helpers N " };
	const char *any, *rrsec;

	RT_RUN(r, 10, "run", "--help");
	cr_assert_eq(r->code, 0);
	any = strstr(r->out, "\nany mode:\n");
	rrsec = strstr(r->out, "\nRapidReassignment (modes flexrr, rr");
	cr_assert(any && rrsec && any < rrsec, "%s", r->out);
	cr_assert(strstr(any, "--stragglers SPEC ") < rrsec, "%s", r->out);
	cr_assert(strstr(any, "--trace FILE ") < rrsec, "%s", r->out);
	for (size_t i = 0; i < sizeof(rr) / sizeof(rr[0]); i++) {
		const char *l = strstr(rrsec, rr[i]);

		cr_assert(l, "no %s line: %s", rr[i], r->out);
		l += strlen(rr[i]);
		l += strspn(l, " ");
		cr_assert(*l != '\n' && *l != '-', "%s has no explanation: %s",
			  rr[i], r->out);
	}
	free(r);
}

/* A bad --stragglers is a usage error of the launcher: said once (not
 * once per rank), exit 2. */
Test(runtime_job, bad_stragglers_is_one_usage_error)
{
	struct rt_run *r = calloc(1, sizeof(*r));

	RT_RUN(r, 30, "run", "-n", "2", "--stragglers", "bogus:1", "toy");
	cr_assert_eq(r->code, 2, "exit %d: %s", r->code, r->err);
	cr_assert_eq(rt_count(r->err, "invalid --stragglers"), 1, "%s", r->err);
	RT_RUN(r, 30, "run", "-n", "2", "-t", "2", "--stragglers",
	       "persistent:4,2", "toy");
	cr_assert_eq(r->code, 2, "exit %d: %s", r->code, r->err);
	cr_assert_eq(rt_count(r->err, "the job has only 4 workers"), 1, "%s",
		     r->err);
	free(r);
}

/* An app's option before the app's name says where app options go. */
Test(runtime_job, app_option_without_app_gets_a_hint)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	const char *want = "--vertices is not a run option; app options go "
			   "after the app name: flexrr run [run options] APP "
			   "[app options]";

	RT_RUN(r, 10, "run", "-n", "2", "--vertices", "5");
	cr_assert_eq(r->code, 2, "exit %d: %s", r->code, r->err);
	cr_assert(strstr(r->err, want), "no hint: %s", r->err);
	cr_assert_eq(rt_count(r->err, "is not a run option"), 1, "%s", r->err);
	/* a run option without its value is not called an app option */
	RT_RUN(r, 10, "run", "--clocks");
	cr_assert_eq(r->code, 2);
	cr_assert_null(strstr(r->err, "is not a run option"), "%s", r->err);
	free(r);
}

Test(runtime_job, summary_line_and_target)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct rt_argv a;
	char path[128];
	FILE *f;
	int lines = 0;
	char buf[512];

	snprintf(path, sizeof(path), "/tmp/frr-rt-job-%d.csv", getpid());
	rt_exec(r,
		rt_run_argv(&a, 2, 2, frr_test_backend0(), "--clocks", "200",
			    "--target", "0.5", "--metrics", path, "toy"),
		NULL, 60);
	cr_assert_eq(r->code, 0);
	cr_assert(strstr(r->out, "flexrr: done mode=bsp backend="),
		  "summary: %s", r->out);
	cr_assert(strstr(r->out, " mse="));
	cr_assert(rt_summary_value(r->out, "objective") <= 0.5);
	cr_assert(rt_summary_value(r->out, "clocks") < 200,
		  "--target did not stop the job: %s", r->out);
	cr_assert(rt_summary_value(r->out, "time_s") >= 0);
	/* one progress line per clock on stderr, none with -q */
	cr_assert(strstr(r->err, "flexrr: clock 0 objective="), "%s", r->err);
	f = fopen(path, "r");
	cr_assert(f);
	while (fgets(buf, sizeof(buf), f))
		lines++;
	fclose(f);
	unlink(path);
	cr_assert_eq(lines, 1 + 4 * (int)rt_summary_value(r->out, "clocks"));
	RT_RUN(r, 60, "run", "-n", "2", "--backend",
	       (char *)frr_test_backend0(), "--clocks", "3", "-q", "toy");
	cr_assert_eq(r->code, 0);
	cr_assert_null(strstr(r->err, "flexrr: clock"), "-q: %s", r->err);
	free(r);
}

/* The summary's "objective=..." token, into buf. */
static const char *objective_of(const char *out, char *buf, size_t len)
{
	const char *o = strstr(out, "objective=");

	cr_assert(o, "no summary: %s", out);
	snprintf(buf, len, "%.*s", (int)strcspn(o, " \n"), o);
	return buf;
}

/* --lanes N: a rank's 4 threads send on 2 lanes (or 1), so each rank
 * accepts 2 x 2 (or 2) of its two peers' lanes, not 4 x 2; the threads that
 * share a lane take turns on it, and the BSP answer is the one with a lane
 * per thread, bit for bit.  Runs over verbs in the soft-RoCE VM as well
 * (the backend list's first). */
Test(runtime_job, threads_share_the_lanes_they_are_given)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct rt_argv a;
	char *env[] = { "FLEXRR_LOG=info", NULL };
	const char *lanes[] = { "0", "2", "1", "9" };
	const char *want[] = { "send on 4 lanes; 8 lanes of the other",
			       "send on 2 lanes; 4 lanes of the other",
			       "send on 1 lane; 2 lanes of the other",
			       "send on 4 lanes; 8 lanes of the other" };
	char first[128], obj[128];

	for (int i = 0; i < 4; i++) {
		rt_exec(r,
			rt_run_argv(&a, 3, 4, frr_test_backend0(), "--lanes",
				    lanes[i], "--clocks", "6", "--seed", "5",
				    "-q", "toy"),
			env, 90);
		cr_assert_eq(r->code, 0, "--lanes %s: %s", lanes[i], r->err);
		cr_assert(strstr(r->err, want[i]), "--lanes %s: %s", lanes[i],
			  r->err);
		objective_of(r->out, i ? obj : first, sizeof(obj));
		if (i)
			cr_assert_str_eq(obj, first, "--lanes %s", lanes[i]);
	}
	free(r);
}

/* A long load says it is alive: rank 0 prints a line at every interval
 * (10 s; 0.05 s here by FLEXRR_TEST_LOADING_S) while the app generates
 * its data (the true factors of 300,000 items of rank 32 in each of two
 * partitions: about 0.3 s on this 2-core host, and a clock of 5,000
 * ratings after), before the first clock; none with -q.  On the host only: the
 * notice is the backend's no business, and the soft-RoCE VM's emulated CPUs
 * take minutes for the data. */
Test(runtime_job, a_long_load_says_it_is_loading)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char *env[] = { "FLEXRR_TEST_LOADING_S=0.05", NULL };
	const char *line = "flexrr: loading the input (mf), ";
	struct rt_argv a;

	if (frr_test_quick())
		cr_skip_test("on the host only (see above)");
	for (int quiet = 0; quiet < 2; quiet++) {
		rt_exec(r,
			rt_run_argv(&a, 2, 1, frr_test_backend0(), "--clocks",
				    "1", quiet ? "-q" : "--no-pin", "mf",
				    "--synthetic", "100,300000,5000", "--rank",
				    "32"),
			env, 120);
		cr_assert_eq(r->code, 0, "%s", r->err);
		if (quiet) {
			cr_assert_null(strstr(r->err, line), "-q: %s", r->err);
			continue;
		}
		cr_assert(strstr(r->err, line), "%s", r->err);
		cr_assert(strstr(r->err, line) < strstr(r->err, "clock 0 "),
			  "the notice after the first clock: %s", r->err);
	}
	free(r);
}

/* A rank that loads its input later than another (a slower disk: here
 * rank 1 starts its load 2 s late) is waited for up to --load-timeout,
 * not failed at the --timeout (1 s) that finds a hung clock; past
 * --load-timeout the job fails naming it.  In the plain stage only: no
 * backend or thread is in it, and a sanitizer's or the VM's slower set-up
 * would not keep to a 1 s --timeout. */
Test(runtime_job, a_rank_that_loads_late_is_waited_for)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char *env[] = { "FLEXRR_TEST_LOAD_DELAY=1:2", NULL };
	struct rt_argv a;

	if (frr_test_quick() || frr_test_sanitizer())
		cr_skip_test("in the plain stage only (see above)");
	rt_exec(r,
		rt_run_argv(&a, 2, 1, frr_test_backend0(), "--clocks", "2",
			    "--timeout", "1", "toy"),
		env, 60);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->out, "flexrr: done "), "%s", r->out);
	rt_exec(r,
		rt_run_argv(&a, 2, 1, frr_test_backend0(), "--clocks", "2",
			    "--timeout", "1", "--load-timeout", "1", "toy"),
		env, 60);
	cr_assert_neq(r->code, 0, "%s", r->err);
	cr_assert(strstr(r->err, "a rank did not answer within 1000 ms while "
				 "the ranks load their input") &&
		      strstr(r->err, "raise --load-timeout"),
		  "%s", r->err);
	free(r);
}

Test(runtime_job, bad_options)
{
	struct rt_run *r = calloc(1, sizeof(*r));

	RT_RUN(r, 10, "run", "-n", "2", "nosuchapp");
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "unknown app 'nosuchapp'"), "%s", r->err);
	RT_RUN(r, 10, "run", "-n", "2", "--no-such-option", "toy");
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "no-such-option"), "%s", r->err);
	RT_RUN(r, 10, "run", "-n", "2", "toy", "--no-such-option");
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "no-such-option"), "%s", r->err);
	RT_RUN(r, 10, "run", "--slack", "-1", "toy");
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "--slack must be >= 0"), "%s", r->err);
	RT_RUN(r, 10, "run", "--mode", "bsp", "--slack", "2", "toy");
	cr_assert_neq(r->code, 0);
	RT_RUN(r, 10, "run", "--mode", "warp", "toy");
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "unknown mode"), "%s", r->err);
	RT_RUN(r, 10, "run", "-n", "2", "--backend", "carrier-pigeon", "toy");
	cr_assert_neq(r->code, 0);
	free(r);
}

/* Each bad value fails before the job starts, naming the option (issue 10:
 * nan or huge seconds overflowed and declared healthy peers dead; an
 * unwritable --trace was found only after training). */
Test(runtime_job, bad_values_named)
{
	static const char *const bad[][3] = {
		{ "--timeout", "nan", "--timeout wants a number in" },
		{ "--timeout", "1e10", "--timeout wants a number in" },
		{ "--dead-timeout", "inf", "--dead-timeout wants a number in" },
		{ "--rendezvous-timeout", "-5", "--rendezvous-timeout wants" },
		{ "--rr-threshold", "nan", "--rr-threshold wants a number" },
		{ "--rr-threshold", "2",
		  "--rr-threshold wants a number in [0, 1]" },
		{ "--rr-link-weight", "11", "--rr-link-weight wants a number" },
		{ "--rr-min-share", "2", "--rr-min-share wants a number" },
		{ "--target", "inf", "--target wants a finite number" },
		{ "--seed", "12x", "--seed wants an integer" },
		{ "--stragglers", "", "--stragglers wants a spec" },
		{ "--delay-worker", "0,5,1x", "--delay-worker wants" },
		{ "--delay-worker", "5,2,1.0",
		  "--delay-worker 5: the job has 2" },
		{ "--save", "/nonexistent/dir/m", "cannot create files in" },
		{ "--metrics", "/nonexistent/m.csv",
		  "--metrics '/nonexistent" },
		{ "--trace", "/tmp", "--trace '/tmp' is a directory" },
		/* writable for root by access(2), yet nothing can be made */
		{ "--trace", "/proc/t.json",
		  "cannot create files in '/proc/'" },
		{ "--save", "/proc/m", "cannot create files in '/proc/'" },
	};
	struct rt_run *r = calloc(1, sizeof(*r));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		RT_RUN(r, 30, "run", "-n", "2", "--backend",
		       (char *)frr_test_backend0(), (char *)bad[i][0],
		       (char *)bad[i][1], "toy");
		cr_assert_neq(r->code, 0, "%s %s", bad[i][0], bad[i][1]);
		cr_assert(strstr(r->err, bad[i][2]), "%s %s: %s", bad[i][0],
			  bad[i][1], r->err);
	}
	free(r);
}

/* The apps' own outputs too, before any input is read (the inputs here do
 * not exist: their error would come first if the job started). */
Test(runtime_job, app_outputs_named_before_the_input_is_read)
{
	static const char *const bad[][4] = {
		{ "lda", "--save", "/nonexistent/dir/counts",
		  "lda --save '/nonexistent/dir/counts': cannot create files" },
		{ "lda", "--write-uci", "/nonexistent/uci",
		  "lda --write-uci '/nonexistent/uci': No such file" },
		{ "mlr", "--save", "/proc/model",
		  "mlr --save '/proc/model': cannot create files in '/proc/'" },
	};
	struct rt_run *r = calloc(1, sizeof(*r));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int lda = !strcmp(bad[i][0], "lda");

		RT_RUN(r, 30, "run", "-n", "2", "--backend",
		       (char *)frr_test_backend0(), (char *)bad[i][0],
		       lda ? "--text" : "--train", "/nonexistent/input",
		       (char *)bad[i][1], (char *)bad[i][2]);
		cr_assert_eq(r->code, 2, "%s %s: exit %d", bad[i][0], bad[i][1],
			     r->code);
		cr_assert(strstr(r->err, bad[i][3]), "%s %s: %s", bad[i][0],
			  bad[i][1], r->err);
		cr_assert(!strstr(r->err, "input"), "the input was read: %s",
			  r->err);
	}
	free(r);
}

Test(runtime_job, launcher_size_out_of_range)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char *env[] = { "FLEXRR_RANK=0", "FLEXRR_SIZE=4294967298",
			"FLEXRR_JOB_TOKEN=" TOKEN_A, NULL };
	char *argv[] = { (char *)rt_bin(), "run", "toy", NULL };

	rt_exec(r, argv, env, 20);
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "FLEXRR_SIZE='4294967298' is not a rank"),
		  "%s", r->err);
	free(r);
}

Test(runtime_job, more_workers_than_items)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct rt_argv a;

	rt_exec(
	    r,
	    rt_run_argv(&a, 2, 4, frr_test_backend0(), "toy", "--total", "5"),
	    NULL, 30);
	cr_assert_neq(r->code, 0);
	cr_assert(strstr(r->err, "has no work items"), "%s", r->err);
	cr_assert(r->secs < 25);
	free(r);
}

Test(runtime_job, rendezvous_unreachable)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char addr[64];
	char *env[] = { "FLEXRR_RANK=1", "FLEXRR_SIZE=2",
			"FLEXRR_JOB_TOKEN=" TOKEN_A, NULL };

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", rdv_port(0));
	char *argv[] = { (char *)rt_bin(),	 "run", "--rendezvous", addr,
			 "--rendezvous-timeout", "2",	"toy",		NULL };
	rt_exec(r, argv, env, 20);
	cr_assert_neq(r->code, 0);
	cr_assert_neq(r->code, -1, "hung");
	cr_assert(strstr(r->err, "unreachable"), "%s", r->err);
	free(r);
}

/* Rank 0 and rank 1 with some difference: both must fail, rank 1 with msg. */
static void pair_fails(const char *env1, const char *msg1, const char *msg0,
		       int k)
{
	char addr[64];
	struct rt_run *r0 = calloc(1, sizeof(*r0)),
		      *r1 = calloc(1, sizeof(*r1));
	pid_t p0, p1;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", rdv_port(k));
	char *argv[] = { (char *)rt_bin(),
			 "run",
			 "--backend",
			 (char *)frr_test_backend0(),
			 "--rendezvous",
			 addr,
			 "--rendezvous-timeout",
			 "3",
			 "-q",
			 "toy",
			 NULL };
	char *e0[] = { "FLEXRR_RANK=0", "FLEXRR_SIZE=2",
		       "FLEXRR_JOB_TOKEN=" TOKEN_A, NULL };
	char *e1[] = { "FLEXRR_RANK=1", "FLEXRR_SIZE=2",
		       "FLEXRR_JOB_TOKEN=" TOKEN_A, (char *)env1, NULL };

	p0 = rt_spawn(argv, e0, "r0");
	usleep(200000);
	p1 = rt_spawn(argv, e1, "r1");
	r1->code = rt_wait(p1, 20);
	r0->code = rt_wait(p0, 20);
	rt_collect("r0", r0);
	rt_collect("r1", r1);
	cr_assert(r1->code > 0, "rank 1 exit %d", r1->code);
	cr_assert(r0->code > 0, "rank 0 exit %d", r0->code);
	cr_assert(strstr(r1->err, msg1), "rank 1 said: %s", r1->err);
	cr_assert(strstr(r0->err, msg0), "rank 0 said: %s", r0->err);
	free(r0);
	free(r1);
}

Test(runtime_job, wrong_job_secret)
{
	pair_fails("FLEXRR_JOB_TOKEN=" TOKEN_B,
		   "does not know this job's secret", "wrong job secret", 1);
}

Test(runtime_job, mismatched_binaries)
{
	pair_fails("FLEXRR_TEST_BINHASH=12345", "different flexrr binary",
		   "different flexrr binary", 2);
}

/* Every rank sees every worker's final progress word (counter writes into
 * every rank), in each mode; async also ends cleanly. */
Test(runtime_job, progress_words_reach_every_rank)
{
	/* flexrr and rr: the words go to the helper group on the workers'
	 * own lanes (core/ctl.c), the last ones flushed at the end */
	static const char *const modes[][2] = { { "bsp", "0" },
						{ "ssp", "2" },
						{ "async", "0" },
						{ "flexrr", "1" },
						{ "rr", "0" } };
	char *env[] = { "FLEXRR_TEST_CHECK_PROGRESS=1", NULL };

	for (int i = 0; i < 5; i++) {
		struct rt_run *r = calloc(1, sizeof(*r));
		struct rt_argv a;

		rt_run_argv(&a, 3, 2, frr_test_backend0(), "--mode",
			    modes[i][0], "--slack", modes[i][1], "--clocks",
			    "7", "-q", "toy", "--total", "1000");
		rt_exec(r, a.v, env, 60);
		cr_assert_eq(r->code, 0, "%s: %s", modes[i][0], r->err);
		cr_assert_eq(rt_summary_value(r->out, "clocks"), 7);
		free(r);
	}
}

/* A launcher-started rank without a usable secret refuses to start and
 * says how to give one. */
Test(runtime_job, launcher_rank_needs_a_secret)
{
	static const char *const cases[][2] = {
		{ NULL, "export FLEXRR_JOB_TOKEN=$(openssl rand -hex 32)" },
		{ "FLEXRR_JOB_TOKEN=short", "needs 32 to 4096" },
		{ "FLEXRR_JOB_TOKEN_FILE=", "chmod 600" },
	};
	char file[64], fenv[96], addr[64];
	int fd;

	snprintf(file, sizeof(file), "/tmp/frr-token-%d", getpid());
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, TOKEN_A "\n", sizeof(TOKEN_A)),
		     (ssize_t)sizeof(TOKEN_A));
	close(fd);
	chmod(file, 0644); /* whatever the umask: group and others read */
	snprintf(fenv, sizeof(fenv), "FLEXRR_JOB_TOKEN_FILE=%s", file);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", rdv_port(0));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_run *r = calloc(1, sizeof(*r));
		char *env[] = { "FLEXRR_RANK=1", "FLEXRR_SIZE=2",
				i == 2 ? fenv : (char *)cases[i][0], NULL };
		char *argv[] = { (char *)rt_bin(),
				 "run",
				 "--rendezvous",
				 addr,
				 "toy",
				 NULL };

		unsetenv("FLEXRR_JOB_TOKEN");
		rt_exec(r, argv, env, 20);
		cr_assert_eq(r->code, 2, "case %zu: exit %d", i, r->code);
		cr_assert(strstr(r->err, cases[i][1]), "case %zu: %s", i,
			  r->err);
		free(r);
	}
	unlink(file);
}
