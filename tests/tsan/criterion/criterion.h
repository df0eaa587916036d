/* SPDX-License-Identifier: MIT */
/*
 * The part of Criterion's API our suites use, on a small runner, for the
 * ThreadSanitizer build only: Criterion's own runner cannot start under
 * TSan (Snaipe/Criterion#274).  tests/CMakeLists.txt puts tests/tsan/ first
 * on the include path of the in-process suites when FLEXRR_TSAN is on, so
 * the same test code compiles against this header instead.
 *
 * Supported: TestSuite(s, ...) and Test(s, t, ...) with .init, .fini,
 * .timeout (seconds) and .disabled; cr_assert* and cr_expect* (eq, neq, lt,
 * leq, gt, geq, null, not_null, not, fail, str_eq, str_neq, float_eq,
 * arr_eq), each with an optional printf message; cr_skip_test;
 * cr_log_info/warn/error; cr_redirect_stdout/stderr and
 * cr_get_redirected_stdout/stderr (criterion/redirect.h).
 *
 * Each test runs in its own process (as Criterion does), in its own
 * process group so everything it forked is killed at its deadline.  A test
 * fails on a failed assertion or expectation, on any non-zero exit (TSan
 * exits 66 on a report under the CI's TSAN_OPTIONS), on a signal and on its
 * timeout x FLEXRR_TEST_TIMEOUT_SCALE (default 4: TSan runs 5-15x slower,
 * and the suites' timeouts were set for plain builds).
 *
 * Arguments: --filter GLOB (suite/test), --list; Criterion's --jobs N and
 * --verbose are accepted and ignored.  One test file is one binary: this
 * header defines main().
 */
#ifndef FLEXRR_TSAN_CRITERION_H
#define FLEXRR_TSAN_CRITERION_H

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FRR_TT_MAX_TESTS 256
#define FRR_TT_MAX_SUITES 32
#define FRR_TT_EXIT_FAIL 1
#define FRR_TT_EXIT_SKIP 125

struct frr_tt_cfg {
	int unused_; /* so an empty option list still initializes */
	void (*init)(void);
	void (*fini)(void);
	double timeout;
	int disabled;
	const char *description;
};

struct frr_tt_test {
	const char *suite, *name;
	void (*fn)(void);
	struct frr_tt_cfg cfg;
};

struct frr_tt_suite {
	const char *name;
	struct frr_tt_cfg cfg;
};

static struct frr_tt_test *frr_tt_tests[FRR_TT_MAX_TESTS];
static struct frr_tt_suite *frr_tt_suites[FRR_TT_MAX_SUITES];
static int frr_tt_ntests, frr_tt_nsuites;
static int frr_tt_expect_failed; /* in the test's process */
static int frr_tt_errfd = 2;	 /* the runner's stderr, kept from main() */

static inline int frr_tt_err_fd(void)
{
	return frr_tt_errfd;
}

static inline void frr_tt_add_test(struct frr_tt_test *t)
{
	if (frr_tt_ntests == FRR_TT_MAX_TESTS) {
		fprintf(stderr, "tsan runner: more than %d tests\n",
			FRR_TT_MAX_TESTS);
		abort();
	}
	frr_tt_tests[frr_tt_ntests++] = t;
}

static inline void frr_tt_add_suite(struct frr_tt_suite *s)
{
	if (frr_tt_nsuites == FRR_TT_MAX_SUITES) {
		fprintf(stderr, "tsan runner: more than %d suites\n",
			FRR_TT_MAX_SUITES);
		abort();
	}
	frr_tt_suites[frr_tt_nsuites++] = s;
}

#define TestSuite(sname, ...)                                              \
	static struct frr_tt_suite frr_tt_suite_##sname = {                \
		.name = #sname,                                            \
		.cfg = { .unused_ = 0, __VA_ARGS__ },                      \
	};                                                                 \
	__attribute__((constructor)) static void frr_tt_reg_suite_##sname( \
	    void)                                                          \
	{                                                                  \
		frr_tt_add_suite(&frr_tt_suite_##sname);                   \
	}

#define Test(sname, tname, ...)                                                \
	static void frr_tt_fn_##sname##_##tname(void);                         \
	static struct frr_tt_test frr_tt_test_##sname##_##tname = {            \
		.suite = #sname,                                               \
		.name = #tname,                                                \
		.fn = frr_tt_fn_##sname##_##tname,                             \
		.cfg = { .unused_ = 0, __VA_ARGS__ },                          \
	};                                                                     \
	__attribute__((constructor)) static void frr_tt_reg_##sname##_##tname( \
	    void)                                                              \
	{                                                                      \
		frr_tt_add_test(&frr_tt_test_##sname##_##tname);               \
	}                                                                      \
	static void frr_tt_fn_##sname##_##tname(void)

/* ---- assertions --------------------------------------------------------- */
__attribute__((format(printf, 5, 6))) static inline void
frr_tt_failed(int fatal, const char *file, int line, const char *expr,
	      const char *fmt, ...)
{
	char msg[1024] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(stdout);
	/* straight to the runner's stderr: the test may have redirected 2;
	 * msg is ": " and the optional message (see frr_tt_check) */
	dprintf(frr_tt_err_fd(), "[----] %s:%d: %s failed: %s%s\n", file, line,
		fatal ? "Assertion" : "Expectation", expr,
		strlen(msg) > 2 ? msg : "");
	if (fatal)
		_exit(FRR_TT_EXIT_FAIL);
	frr_tt_expect_failed = 1;
}

/* The message is optional: ": " glues onto a format literal when one is
 * given, and stands alone when not. */
#define frr_tt_check(fatal, cond, expr, ...)                           \
	do {                                                           \
		if (!(cond))                                           \
			frr_tt_failed(fatal, __FILE__, __LINE__, expr, \
				      ": " __VA_ARGS__);               \
	} while (0)

#define frr_tt_cmp(fatal, a, op, b, ...) \
	frr_tt_check(fatal, (a)op(b), #a " " #op " " #b, __VA_ARGS__)

#define cr_assert(c, ...) frr_tt_check(1, (c), #c, __VA_ARGS__)
#define cr_assert_fail(...) frr_tt_check(1, 0, "cr_assert_fail", __VA_ARGS__)
#define cr_expect_fail(...) frr_tt_check(0, 0, "cr_expect_fail", __VA_ARGS__)
#define cr_assert_not(c, ...) frr_tt_check(1, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) frr_tt_cmp(1, a, ==, b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) frr_tt_cmp(1, a, !=, b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) frr_tt_cmp(1, a, <, b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) frr_tt_cmp(1, a, <=, b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) frr_tt_cmp(1, a, >, b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) frr_tt_cmp(1, a, >=, b, __VA_ARGS__)
#define cr_assert_null(p, ...) \
	frr_tt_check(1, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) \
	frr_tt_check(1, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) \
	frr_tt_check(1, !strcmp((a), (b)), #a " eq " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) \
	frr_tt_check(1, strcmp((a), (b)), #a " neq " #b, __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...)                                \
	frr_tt_check(1, fabs((double)(a) - (double)(b)) <= (double)(eps), \
		     #a " ~= " #b, __VA_ARGS__)
#define cr_assert_arr_eq(a, b, size, ...)                            \
	frr_tt_check(1, !memcmp((a), (b), (size)), #a " arr_eq " #b, \
		     __VA_ARGS__)

#define cr_expect(c, ...) frr_tt_check(0, (c), #c, __VA_ARGS__)
#define cr_expect_not(c, ...) frr_tt_check(0, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_expect_eq(a, b, ...) frr_tt_cmp(0, a, ==, b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) frr_tt_cmp(0, a, !=, b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) frr_tt_cmp(0, a, <, b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) frr_tt_cmp(0, a, <=, b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) frr_tt_cmp(0, a, >, b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) frr_tt_cmp(0, a, >=, b, __VA_ARGS__)
#define cr_expect_null(p, ...) \
	frr_tt_check(0, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) \
	frr_tt_check(0, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) \
	frr_tt_check(0, !strcmp((a), (b)), #a " eq " #b, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...)                                \
	frr_tt_check(0, fabs((double)(a) - (double)(b)) <= (double)(eps), \
		     #a " ~= " #b, __VA_ARGS__)
#define cr_expect_arr_eq(a, b, size, ...)                            \
	frr_tt_check(0, !memcmp((a), (b), (size)), #a " arr_eq " #b, \
		     __VA_ARGS__)

#define cr_skip_test(...)                                        \
	do {                                                     \
		dprintf(frr_tt_err_fd(), "[SKIP] " __VA_ARGS__); \
		dprintf(frr_tt_err_fd(), "\n");                  \
		_exit(FRR_TT_EXIT_SKIP);                         \
	} while (0)

#define cr_log_info(...) frr_tt_log("INFO", __VA_ARGS__)
#define cr_log_warn(...) frr_tt_log("WARN", __VA_ARGS__)
#define cr_log_error(...) frr_tt_log("ERR ", __VA_ARGS__)

#include "frr_tt_runner.h"

#endif /* FLEXRR_TSAN_CRITERION_H */
