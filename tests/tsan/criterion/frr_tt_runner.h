/* SPDX-License-Identifier: MIT */
/*
 * The runner behind tests/tsan/criterion/criterion.h: logging, stderr
 * redirection, one process per test with a deadline, and main().  Included
 * by criterion.h only.
 */
#ifndef FLEXRR_TSAN_FRR_TT_RUNNER_H
#define FLEXRR_TSAN_FRR_TT_RUNNER_H

__attribute__((format(printf, 2, 3))) static inline void
frr_tt_log(const char *level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	dprintf(frr_tt_err_fd(), "[%s] %s%s", level, msg,
		n && msg[n - 1] == '\n' ? "" : "\n");
}

/* stdout or stderr of the test goes to a temporary file; the test reads it
 * back through one stream that continues where its last read stopped */
static int frr_tt_redir_fd[3] = { -1, -1, -1 };

static inline void frr_tt_redirect(int fd)
{
	FILE *f = tmpfile();

	fflush(fd == 1 ? stdout : stderr);
	frr_tt_redir_fd[fd] = f ? fileno(f) : -1;
	if (frr_tt_redir_fd[fd] < 0 || dup2(frr_tt_redir_fd[fd], fd) < 0) {
		dprintf(frr_tt_err_fd(), "tsan runner: redirecting fd %d: %s\n",
			fd, strerror(errno));
		_exit(FRR_TT_EXIT_FAIL);
	}
}

static inline FILE *frr_tt_redirected(int fd)
{
	static FILE *f[3];
	char path[64];

	if (frr_tt_redir_fd[fd] < 0) {
		dprintf(frr_tt_err_fd(),
			"tsan runner: reading fd %d, which "
			"was not redirected\n",
			fd);
		_exit(FRR_TT_EXIT_FAIL);
	}
	fflush(fd == 1 ? stdout : stderr);
	if (!f[fd]) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d",
			 frr_tt_redir_fd[fd]);
		f[fd] = fopen(path, "r");
		if (!f[fd])
			_exit(FRR_TT_EXIT_FAIL);
	}
	clearerr(f[fd]); /* read what was written since the last end */
	return f[fd];
}

static inline void cr_redirect_stdout(void)
{
	frr_tt_redirect(1);
}

static inline void cr_redirect_stderr(void)
{
	frr_tt_redirect(2);
}

static inline FILE *cr_get_redirected_stdout(void)
{
	return frr_tt_redirected(1);
}

static inline FILE *cr_get_redirected_stderr(void)
{
	return frr_tt_redirected(2);
}

static inline const struct frr_tt_suite *frr_tt_suite_of(const char *name)
{
	for (int i = 0; i < frr_tt_nsuites; i++)
		if (!strcmp(frr_tt_suites[i]->name, name))
			return frr_tt_suites[i];
	return NULL;
}

/* In the test's process: init, the test, fini (a test's own .init/.fini
 * replace its suite's). */
static inline void frr_tt_child(const struct frr_tt_test *t,
				const struct frr_tt_suite *s)
{
	void (*init)(void) =
	    t->cfg.init ? t->cfg.init : (s ? s->cfg.init : NULL);
	void (*fini)(void) =
	    t->cfg.fini ? t->cfg.fini : (s ? s->cfg.fini : NULL);

	setpgid(0, 0);
	if (init)
		init();
	t->fn();
	if (fini)
		fini();
	fflush(stdout);
	fflush(stderr);
	_exit(frr_tt_expect_failed ? FRR_TT_EXIT_FAIL : 0);
}

static inline double frr_tt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum frr_tt_result { FRR_TT_PASS, FRR_TT_FAIL, FRR_TT_CRASH, FRR_TT_SKIP };

/* Fork the test, wait for it up to its deadline: the result. */
static inline enum frr_tt_result frr_tt_run(const struct frr_tt_test *t,
					    double scale)
{
	const struct frr_tt_suite *s = frr_tt_suite_of(t->suite);
	double timeout = t->cfg.timeout > 0	   ? t->cfg.timeout
			 : s && s->cfg.timeout > 0 ? s->cfg.timeout
						   : 0;
	double t0 = frr_tt_now(), deadline = t0 + timeout * scale;
	int status = 0;
	pid_t pid, w;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		dprintf(frr_tt_err_fd(), "tsan runner: fork: %s\n",
			strerror(errno));
		return FRR_TT_CRASH;
	}
	if (pid == 0)
		frr_tt_child(t, s);
	setpgid(pid, pid); /* also here: no race with the child's own */
	while ((w = waitpid(pid, &status, WNOHANG)) == 0) {
		if (timeout > 0 && frr_tt_now() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			dprintf(frr_tt_err_fd(),
				"[----] %s::%s: timed out after %.0f s "
				"(%.0f s x FLEXRR_TEST_TIMEOUT_SCALE %.1f)\n",
				t->suite, t->name, timeout * scale, timeout,
				scale);
			return FRR_TT_CRASH;
		}
		usleep(10000);
	}
	kill(-pid, SIGKILL); /* whatever the test left running */
	if (w < 0)
		return FRR_TT_CRASH;
	if (WIFSIGNALED(status)) {
		dprintf(frr_tt_err_fd(), "[----] %s::%s: killed by signal %d\n",
			t->suite, t->name, WTERMSIG(status));
		return FRR_TT_CRASH;
	}
	switch (WEXITSTATUS(status)) {
	case 0:
		return FRR_TT_PASS;
	case FRR_TT_EXIT_SKIP:
		return FRR_TT_SKIP;
	case FRR_TT_EXIT_FAIL:
		return FRR_TT_FAIL;
	default:
		dprintf(frr_tt_err_fd(),
			"[----] %s::%s: exited %d (66: a ThreadSanitizer "
			"report, see TSAN_OPTIONS log_path)\n",
			t->suite, t->name, WEXITSTATUS(status));
		return FRR_TT_CRASH;
	}
}

static inline int frr_tt_selected(const struct frr_tt_test *t,
				  const char *filter)
{
	char full[512];

	if (!filter)
		return 1;
	snprintf(full, sizeof(full), "%s/%s", t->suite, t->name);
	return !fnmatch(filter, full, 0);
}

int main(int argc, char **argv)
{
	static const char *const tag[] = { "PASS", "FAIL", "CRASH", "SKIP" };
	const char *filter = NULL, *e = getenv("FLEXRR_TEST_TIMEOUT_SCALE");
	double scale = e && atof(e) > 0 ? atof(e) : 4.0;
	int count[4] = { 0 }, list = 0;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--filter=", 9))
			filter = argv[i] + 9;
		else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
			filter = argv[++i];
		else if (!strcmp(argv[i], "--list"))
			list = 1;
		else if (!strcmp(argv[i], "--jobs") || !strcmp(argv[i], "-j"))
			i++; /* Criterion's: tests run one at a time here */
		else if (strncmp(argv[i], "--jobs=", 7) &&
			 strncmp(argv[i], "-j", 2) &&
			 strcmp(argv[i], "--verbose")) {
			fprintf(stderr,
				"usage: %s [--filter SUITE/TEST-GLOB] "
				"[--list]\n",
				argv[0]);
			return 2;
		}
	}
	frr_tt_errfd = dup(2);
	if (frr_tt_errfd < 0)
		frr_tt_errfd = 2;
	for (int i = 0; i < frr_tt_ntests; i++) {
		const struct frr_tt_test *t = frr_tt_tests[i];
		enum frr_tt_result r;
		double t0;

		if (!frr_tt_selected(t, filter))
			continue;
		if (list) {
			printf("%s::%s\n", t->suite, t->name);
			continue;
		}
		if (t->cfg.disabled) {
			count[FRR_TT_SKIP]++;
			continue;
		}
		t0 = frr_tt_now();
		r = frr_tt_run(t, scale);
		count[r]++;
		dprintf(frr_tt_err_fd(), "[%s] %s::%s: (%.2fs)\n", tag[r],
			t->suite, t->name, frr_tt_now() - t0);
	}
	if (!list)
		dprintf(frr_tt_err_fd(),
			"[====] Synthesis: Tested: %d | Passing: %d | "
			"Failing: %d | Crashing: %d | Skipped: %d "
			"(TSan runner)\n",
			count[0] + count[1] + count[2], count[0], count[1],
			count[2], count[3]);
	return count[FRR_TT_FAIL] || count[FRR_TT_CRASH] ? 1 : 0;
}

#endif /* FLEXRR_TSAN_FRR_TT_RUNNER_H */
