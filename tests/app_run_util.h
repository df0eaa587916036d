/* SPDX-License-Identifier: MIT */
/* Shared by the app test suites: a scratch directory, and running
 * `flexrr run ...` as a user would and picking its output apart. */
#ifndef FLEXRR_TESTS_APP_RUN_UTIL_H
#define FLEXRR_TESTS_APP_RUN_UTIL_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct app_run {
	int status;	 /* exit code, or 128 + signal */
	char out[65536]; /* stdout then stderr */
	char done[4096]; /* the "flexrr: done ..." line, or "" */
};

/* A scratch directory per test process under /tmp, made on first use:
 * tmp("x") names a file in it (the last four names stay valid at once);
 * rm_tmp() deletes the directory. */
static char tmp_dir[64];

static inline const char *tmp(const char *name)
{
	static char p[4][160];
	static int k;

	if (!tmp_dir[0]) {
		snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/frr-%s-XXXXXX",
			 program_invocation_short_name);
		cr_assert_not_null(mkdtemp(tmp_dir));
	}
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", tmp_dir, name);
	return p[k];
}

static inline void rm_tmp(void)
{
	char cmd[128];

	if (!tmp_dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_dir);
	cr_assert_eq(system(cmd), 0);
	tmp_dir[0] = '\0';
}

/* Run FLEXRR_BIN with args (a shell fragment). */
static inline void app_run(struct app_run *r, const char *args)
{
	char cmd[8192];
	size_t n;
	FILE *p;
	char *d;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", FLEXRR_BIN, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(r->out, 1, sizeof(r->out) - 1, p);
	r->out[n] = '\0';
	r->status = pclose(p);
	if (WIFEXITED(r->status))
		r->status = WEXITSTATUS(r->status);
	else
		r->status = 128 + WTERMSIG(r->status);
	r->done[0] = '\0';
	d = strstr(r->out, "flexrr: done ");
	if (d) {
		size_t len = strcspn(d, "\n");

		if (len >= sizeof(r->done))
			len = sizeof(r->done) - 1;
		memcpy(r->done, d, len);
		r->done[len] = '\0';
	}
}

/* value of "key=" in the done line, NAN if absent */
static inline double app_metric(const struct app_run *r, const char *key)
{
	char k[64];
	const char *s;

	snprintf(k, sizeof(k), " %s=", key);
	s = strstr(r->done, k);
	return s ? strtod(s + strlen(k), NULL) : __builtin_nan("");
}

/* the done line from "clocks=" on, without time_s (for comparing runs) */
static inline void app_result(const struct app_run *r, char *out, size_t len)
{
	const char *s = strstr(r->done, " objective=");
	const char *c = strstr(r->done, " clocks=");

	snprintf(out, len, "%.*s%s", c ? (int)strcspn(c + 1, " ") + 1 : 0,
		 c ? c : "", s ? s : "(no done line)");
}

#endif
