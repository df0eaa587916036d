/* SPDX-License-Identifier: MIT */
/*
 * What the checkpoint and recovery suites share: a scratch directory per
 * test (dir; dir/ck is the checkpoint directory), `flexrr run -q --no-pin`
 * with an environment, and the summary line to compare.
 */
#ifndef FLEXRR_TEST_CKPT_UTIL_H
#define FLEXRR_TEST_CKPT_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_runtime_util.h"

static char dir[64];

/* The recovery suites' job: 3 ranks, a checkpoint every 2 clocks. */
#define TOY3 "-n 3 --clocks 12 --seed 3 toy --items 300"

/* A fresh scratch directory per test: dir/ck is the checkpoint dir. */
static inline const char *scratch(void)
{
	snprintf(dir, sizeof(dir), "/tmp/frr-ckpt-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

static inline void scratch_rm(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* `flexrr run -q --no-pin ARGS` (ARGS split at spaces), env "K=V[ K=V..]"
 * or NULL. */
static inline void run(struct rt_run *r, const char *env, const char *args)
{
	char buf[2048], eb[512], *argv[64], *envv[5] = { NULL };
	int n = 0, ne = 0;

	snprintf(eb, sizeof(eb), "%s", env ? env : "");
	for (char *s = strtok(eb, " "); s && ne < 4; s = strtok(NULL, " "))
		envv[ne++] = s;
	snprintf(buf, sizeof(buf), "%s", args);
	argv[n++] = (char *)rt_bin();
	argv[n++] = "run";
	argv[n++] = "-q";
	argv[n++] = "--no-pin";
	for (char *s = strtok(buf, " "); s && n < 63; s = strtok(NULL, " "))
		argv[n++] = s;
	argv[n] = NULL;
	rt_exec(r, argv, ne ? envv : NULL, 120);
}

/* The summary line without time_s, and without what a recovered job adds
 * after the metrics (" recovered: ..."). */
static inline void result(const struct rt_run *r, char *out, size_t len)
{
	const char *d = strstr(r->out, "flexrr: done ");
	const char *t = d ? strstr(d, " time_s=") : NULL;
	const char *o = d ? strstr(d, " objective=") : NULL;
	size_t n = o ? strcspn(o, "\n") : 0;
	const char *rec = o ? strstr(o, " recovered: ") : NULL;

	if (!t || !o) {
		snprintf(out, len, "(no summary line)");
		return;
	}
	if (rec && (size_t)(rec - o) < n)
		n = (size_t)(rec - o);
	snprintf(out, len, "%.*s%.*s", (int)(t - d), d, (int)n, o);
}

#endif /* FLEXRR_TEST_CKPT_UTIL_H */
