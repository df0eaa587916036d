/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the runtime suites (tests/test_runtime_*.c): build the argv of
 * `flexrr run`, run the flexrr binary with a deadline and capture its
 * output; parse the summary line.
 */
#ifndef FLEXRR_TEST_RUNTIME_UTIL_H
#define FLEXRR_TEST_RUNTIME_UTIL_H

#include <fcntl.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define RT_OUT_MAX 65536

struct rt_run {
	int code;    /* exit code, 128 + signal, or -1 on timeout */
	double secs; /* wall time */
	char out[RT_OUT_MAX];
	char err[RT_OUT_MAX];
};

static inline double rt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void rt_slurp(const char *path, char *buf)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = 0;
	if (!f)
		return;
	n = fread(buf, 1, RT_OUT_MAX - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* The files rt_spawn sends the stdout and stderr of job `tag` to. */
static inline void rt_paths(const char *tag, char o[256], char e[256])
{
	snprintf(o, 256, "/tmp/frr-rt-%d-%s.out", getpid(), tag);
	snprintf(e, 256, "/tmp/frr-rt-%d-%s.err", getpid(), tag);
}

/* Start argv (NULL-terminated) with extra env "K=V" entries (NULL-ended);
 * returns the pid, stdout/stderr to files named after tag. */
static inline pid_t rt_spawn(char *const argv[], char *const env[],
			     const char *tag)
{
	char o[256], e[256];
	pid_t p;

	rt_paths(tag, o, e);
	fflush(NULL);
	p = fork();
	if (p == 0) {
		int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fo, 1);
		dup2(fe, 2);
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		setpgid(0, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	return p;
}

/* Wait for pid up to timeout_s; kills its process group on timeout. */
static inline int rt_wait(pid_t p, double timeout_s)
{
	double dl = rt_now() + timeout_s;
	int st;

	for (;;) {
		pid_t r = waitpid(p, &st, WNOHANG);

		if (r == p)
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : 128 + WTERMSIG(st);
		if (rt_now() > dl) {
			kill(-p, SIGKILL);
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
			return -1;
		}
		usleep(10000);
	}
}

/* Occurrences of pat in s (a message said once, not once per rank). */
static inline int rt_count(const char *s, const char *pat)
{
	int n = 0;

	for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat))
		n++;
	return n;
}

static inline void rt_collect(const char *tag, struct rt_run *r)
{
	char o[256], e[256];

	rt_paths(tag, o, e);
	rt_slurp(o, r->out);
	rt_slurp(e, r->err);
	unlink(o);
	unlink(e);
}

/* 1 once the first 8 KiB of file `path` hold needle (a job's output that
 * shows it past its set-up and running clocks), 0 as soon as one of
 * pid[0..n) ended (not reaped: the caller still waits for it) or after
 * within_s.  Polls every 20 ms. */
static inline int rt_wait_output(const char *path, const char *needle,
				 const pid_t *pid, int n, double within_s)
{
	double dl = rt_now() + within_s;

	while (rt_now() < dl) {
		char buf[8192];
		FILE *f = fopen(path, "r");
		size_t got = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[got] = 0;
		if (strstr(buf, needle))
			return 1;
		for (int r = 0; r < n; r++) {
			siginfo_t si = { 0 };

			if (!waitid(P_PID, (id_t)pid[r], &si,
				    WEXITED | WNOHANG | WNOWAIT) &&
			    si.si_pid)
				return 0;
		}
		usleep(20000);
	}
	return 0;
}

/* Run argv to completion (or timeout) and capture everything. */
static inline void rt_exec(struct rt_run *r, char *const argv[],
			   char *const env[], double timeout_s)
{
	double t0 = rt_now();
	pid_t p = rt_spawn(argv, env, "exec");

	r->code = rt_wait(p, timeout_s);
	r->secs = rt_now() - t0;
	rt_collect("exec", r);
	if (r->code)
		fprintf(stderr, "--- %s exited %d; stderr:\n%s\n", argv[0],
			r->code, r->err);
}

/* Run the flexrr binary with these arguments, at most timeout s. */
#define RT_RUN(r, timeout, ...)                                          \
	do {                                                             \
		char *argv_[] = { (char *)rt_bin(), __VA_ARGS__, NULL }; \
		rt_exec((r), argv_, NULL, (timeout));                    \
	} while (0)

/* Value of " key=" in the summary line ("flexrr: done ..."); NAN if absent. */
static inline double rt_summary_value(const char *out, const char *key)
{
	const char *line = strstr(out, "flexrr: done ");
	char pat[64];
	const char *p;

	if (!line)
		return NAN;
	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p)
		return NAN;
	return strtod(p + strlen(pat), NULL);
}

/* `flexrr bench write_bw`'s average bandwidth (MB/s) in its row of `size`
 * bytes, or -1 when the table has no such row. */
static inline double rt_bw_row_avg(const char *out, long size)
{
	char key[32];
	const char *p;
	long bytes, iters;
	double peak, avg;

	snprintf(key, sizeof(key), "\n %ld ", size);
	p = strstr(out, key);
	if (!p ||
	    sscanf(p, " %ld %ld %lf %lf", &bytes, &iters, &peak, &avg) != 4)
		return -1;
	return avg;
}

/* A loopback TCP port free right now (the kernel's pick). */
static inline int rt_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &sl))
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* The toy model saved at path (--save) is exactly want[0..dim): asserts
 * (Criterion's cr_assert, included by the suite), then removes the file. */
#define rt_assert_toy_model(path, want, dim)                                  \
	do {                                                                  \
		FILE *f_ = fopen((path), "r");                                \
		cr_assert(f_, "no model saved at %s", (path));                \
		for (int d_ = 0; d_ < (dim); d_++) {                          \
			double v_;                                            \
			cr_assert_eq(fscanf(f_, "%la", &v_), 1);              \
			cr_assert_eq((float)v_, (want)[d_], "w[%d] %a vs %a", \
				     d_, v_, (double)(want)[d_]);             \
		}                                                             \
		fclose(f_);                                                   \
		unlink(path);                                                 \
	} while (0)

/* r ran a `flexrr run` its command line refused: a usage error (exit 2),
 * said in one line, naming want. */
#define RT_ASSERT_USAGE_ERROR(r, want)                                    \
	do {                                                              \
		cr_assert_eq((r)->code, 2, "%s: exit %d, %s", (want),     \
			     (r)->code, (r)->err);                        \
		cr_assert_eq(rt_count((r)->err, "flexrr run: "), 1, "%s", \
			     (r)->err);                                   \
		cr_assert(strstr((r)->err, (want)), "%s", (r)->err);      \
	} while (0)

static inline const char *rt_bin(void)
{
	return FLEXRR_BIN;
}

/* The argv of `flexrr run -n NP -t NT [--backend BE] ARGS...`. */
#define RT_ARGV_MAX 64
struct rt_argv {
	char *v[RT_ARGV_MAX];
	char np[16], nt[16];
};

static inline char **rt_run_argv_(struct rt_argv *a, int np, int nt,
				  const char *be, ...)
{
	const char *s;
	va_list ap;
	int k = 0;

	snprintf(a->np, sizeof(a->np), "%d", np);
	snprintf(a->nt, sizeof(a->nt), "%d", nt);
	a->v[k++] = (char *)rt_bin();
	a->v[k++] = "run";
	a->v[k++] = "-n";
	a->v[k++] = a->np;
	a->v[k++] = "-t";
	a->v[k++] = a->nt;
	if (be) {
		a->v[k++] = "--backend";
		a->v[k++] = (char *)be;
	}
	va_start(ap, be);
	while ((s = va_arg(ap, const char *)) != NULL) {
		if (k == RT_ARGV_MAX - 1) {
			fprintf(stderr,
				"rt_run_argv: more than %d arguments; "
				"raise RT_ARGV_MAX\n",
				RT_ARGV_MAX);
			abort();
		}
		a->v[k++] = (char *)s;
	}
	va_end(ap);
	a->v[k] = NULL;
	return a->v;
}

/* a->v = that argv, NULL-terminated (be NULL: the default backend); the
 * strings must outlive it.  E.g. rt_exec(r, rt_run_argv(&a, 2, 2, "shm",
 * "-q", "toy"), NULL, 60). */
#define rt_run_argv(a, np, nt, be, ...) \
	rt_run_argv_((a), (np), (nt), (be), __VA_ARGS__, (const char *)NULL)

#endif /* FLEXRR_TEST_RUNTIME_UTIL_H */
