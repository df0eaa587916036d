// SPDX-License-Identifier: MIT
/*
 * `flexrr doctor --json`: one line, one JSON object (host, verdict,
 * problems, warnings, checks) that agrees with the text report and the exit
 * status, on whatever this host has (no device on CI hosts: unhealthy with
 * the no-device problem; in the soft-RoCE VM: healthy).
 */
#include <criterion/criterion.h>

#include "test_runtime_util.h"

TestSuite(doctor_json, .timeout = 120);

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

Test(doctor_json, one_object_agreeing_with_the_text_report)
{
	static struct rt_run js, tx;
	char *jargv[] = { (char *)rt_bin(), "doctor", "--json", NULL };
	char *targv[] = { (char *)rt_bin(), "doctor", NULL };
	char want[64];
	int problems, healthy;

	rt_exec(&js, jargv, NULL, 60);
	rt_exec(&tx, targv, NULL, 60);
	cr_assert(js.code == 0 || js.code == 1, "exit %d", js.code);
	cr_assert_eq(js.code, tx.code, "json and text disagree on the verdict");
	/* one line: the object and its newline */
	cr_assert(!strncmp(js.out, "{\"host\":\"", 9), "%s", js.out);
	cr_assert_eq(count(js.out, "\n"), 1, "not one line:\n%s", js.out);
	cr_assert_eq(js.out[strlen(js.out) - 2], '}', "%s", js.out);
	healthy = strstr(js.out, "\"verdict\":\"healthy\"") != NULL;
	cr_assert(healthy || strstr(js.out, "\"verdict\":\"unhealthy\""), "%s",
		  js.out);
	cr_assert_eq(healthy, js.code == 0, "%s", js.out);
	/* the problem count matches the problem checks and the text */
	problems = count(js.out, "\"level\":\"problem\"");
	snprintf(want, sizeof(want), "\"problems\":%d,", problems);
	cr_assert(strstr(js.out, want), "want %s in %s", want, js.out);
	cr_assert_eq(problems, count(tx.out, "[PROBLEM]"), "text:\n%s\njson:%s",
		     tx.out, js.out);
	cr_assert_eq(count(js.out, "\"level\":\"ok\""), count(tx.out, "[ok]"));
	/* every problem carries its fix */
	cr_assert_eq(count(js.out, "\"fix\":"),
		     problems + count(js.out, "\"level\":\"warn\""));
	/* nothing but the object on stdout */
	cr_assert(!strstr(js.out, "verdict:"), "%s", js.out);
}
