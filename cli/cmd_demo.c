// SPDX-License-Identifier: MIT
/*
 * `flexrr demo`: the straggler demo.  Matrix factorization on synthetic data,
 * run as a local job in BSP, SSP and FlexRR (SSP + RapidReassignment) with
 * the same seed and the same injected stragglers, each mode a fork/exec of
 * `flexrr run`, then one table side by side: time to N clocks, time to a
 * target held-out RMSE, final RMSE.  docs/demo.md explains how to read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "demo.h"
#include "flexrr/base.h"

/* ---- one run ----------------------------------------------------------- */
static int build_argv(const struct demo_opts *o, const struct demo_run *r,
		      char *buf, size_t len, char **args)
{
	int n = 0;
	size_t at = 0;

#define ARG(...)                                                    \
	do {                                                        \
		int w_ = snprintf(buf + at, len - at, __VA_ARGS__); \
		if (w_ < 0 || (size_t)w_ >= len - at ||             \
		    n >= DEMO_MAX_ARGS - 1)                         \
			return -E2BIG;                              \
		args[n++] = buf + at;                               \
		at += (size_t)w_ + 1;                               \
	} while (0)
	ARG("%s", o->bin);
	ARG("run");
	ARG("-n");
	ARG("%d", o->procs);
	ARG("-t");
	ARG("%d", o->threads);
	ARG("--backend");
	ARG("%s", o->backend);
	ARG("--mode");
	ARG("%s", r->mode);
	if (strcmp(r->mode, "bsp") && strcmp(r->mode, "rr")) {
		ARG("--slack");
		ARG("%d", o->slack);
	}
	ARG("--clocks");
	ARG("%d", o->clocks);
	ARG("--seed");
	ARG("%" PRIu64, o->seed);
	if (r->stragglers) {
		ARG("--stragglers");
		ARG("%s", r->stragglers);
	}
	ARG("mf");
	ARG("--synthetic");
	ARG("%s", o->size);
	ARG("--rank");
	ARG("%d", o->rank);
	ARG("--steps");
	ARG("%g", o->steps);
#undef ARG
	args[n] = NULL;
	return n;
}

static void progress(const struct demo_opts *o, struct demo_run *r, int idx,
		     int nruns, int final)
{
	int tty = isatty(2);
	int c = r->clocks;

	/* on a terminal one line redrawn; in a log a line every 1/4 run */
	if (!tty && !final && c % (o->clocks / 4 ? o->clocks / 4 : 1))
		return;
	if (!tty && final && c == r->shown && c)
		return;
	r->shown = c;
	fprintf(stderr, "%sdemo: [%d/%d] %-7s clock %3d/%d  test_rmse %s",
		tty ? "\r\033[K" : "", idx + 1, nruns, r->mode, c, o->clocks,
		c ? "" : "-");
	if (c)
		fprintf(stderr, "%.4f  %.1f s", r->obj[c - 1], r->t[c - 1]);
	if (!tty || final)
		fputc('\n', stderr);
	fflush(stderr);
}

/* One line of the run's output (stdout and stderr merged). */
static void parse_line(struct demo_run *r, const char *line)
{
	int c;
	double obj, dt;
	const char *m;

	if (sscanf(line, "flexrr: clock %d objective=%lf clock_s=%lf", &c, &obj,
		   &dt) == 3) {
		if (r->clocks < DEMO_MAX_CLOCKS) {
			double prev = r->clocks ? r->t[r->clocks - 1] : 0;

			r->t[r->clocks] = prev + dt;
			r->obj[r->clocks] = obj;
			r->clocks++;
		}
		return;
	}
	if (!strncmp(line, "flexrr: done ", 13)) {
		const char *t = strstr(line, " time_s="),
			   *k = strstr(line, " clocks=");

		if (t)
			r->time_s = strtod(t + 8, NULL);
		if (k)
			r->done_clocks = atoi(k + 8);
		m = strstr(line, " train_rmse=");
		snprintf(r->metrics, sizeof(r->metrics), "%s", m ? m + 1 : "");
		r->ok = 1;
		return;
	}
	snprintf(r->last, sizeof(r->last), "%.*s", (int)sizeof(r->last) - 1,
		 line);
	/* keep the first error: it names the cause */
	if (!r->err[0] && (strstr(line, "error") || strstr(line, "not built") ||
			   strstr(line, "not available"))) {
		snprintf(r->err, sizeof(r->err), "%.*s",
			 (int)sizeof(r->err) - 1, line);
		if (strstr(line, "not built") ||
		    strstr(line, "not available") ||
		    strstr(line, "not implemented") ||
		    strstr(line, "unknown mode"))
			r->unavailable = 1;
	}
}

/* Start args with stdout and stderr into a pipe: the pid (its own process
 * group, so a timeout stops the whole job), *out the pipe's read end. */
static pid_t spawn(char **args, int *out, struct demo_run *r)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds)) {
		snprintf(r->err, sizeof(r->err), "cannot start: %s",
			 strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(r->err, sizeof(r->err), "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execv(args[0], args);
		fprintf(stderr, "flexrr demo: error: cannot run %s: %s\n",
			args[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(fds[1]);
	*out = fds[0];
	return pid;
}

/* Read the run's output line by line until it ends or the deadline. */
static void follow(const struct demo_opts *o, struct demo_run *r, int idx,
		   int nruns, int fd, pid_t pid)
{
	double deadline = frr_now_s() + o->timeout_s;
	char line[2048];
	size_t fill = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)((deadline - frr_now_s()) * 1000);
		ssize_t got;

		if (left <= 0) {
			snprintf(r->err, sizeof(r->err),
				 "no result after %d s (--timeout): stopped",
				 o->timeout_s);
			kill(-pid, SIGTERM);
			break;
		}
		if (poll(&p, 1, left < 1000 ? left : 1000) <= 0)
			continue;
		got = read(fd, line + fill, sizeof(line) - 1 - fill);
		if (got <= 0)
			break;
		fill += (size_t)got;
		line[fill] = '\0';
		for (char *nl; (nl = strchr(line, '\n'));) {
			int before = r->clocks;

			*nl = '\0';
			if (o->verbose)
				fprintf(stderr, "  | %s\n", line);
			parse_line(r, line);
			if (r->clocks != before)
				progress(o, r, idx, nruns, 0);
			fill -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, fill + 1);
		}
		if (fill == sizeof(line) - 1)
			fill = 0; /* an over-long line: drop it */
	}
}

static int run_one(const struct demo_opts *o, struct demo_run *r, int idx,
		   int nruns)
{
	char buf[4096], *args[DEMO_MAX_ARGS];
	int fd = -1, status = 0, n;
	pid_t pid;

	n = build_argv(o, r, buf, sizeof(buf), args);
	if (n < 0) {
		snprintf(r->err, sizeof(r->err), "cannot start: %s",
			 strerror(-n));
		return -1;
	}
	if (o->verbose) {
		fprintf(stderr, "demo: running");
		for (int a = 0; args[a]; a++)
			fprintf(stderr, " %s", args[a]);
		fputc('\n', stderr);
	}
	pid = spawn(args, &fd, r);
	if (pid < 0)
		return -1;
	progress(o, r, idx, nruns, 0);
	follow(o, r, idx, nruns, fd, pid);
	close(fd);
	waitpid(pid, &status, 0);
	if (r->ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		r->ok = 0;
	if (!r->ok && !r->err[0])
		snprintf(r->err, sizeof(r->err), "flexrr run %s %d: %.400s",
			 WIFSIGNALED(status) ? "killed by signal" : "exited",
			 WIFSIGNALED(status) ? WTERMSIG(status)
					     : WEXITSTATUS(status),
			 r->last);
	progress(o, r, idx, nruns, 1);
	return r->ok ? 0 : -1;
}

int frr_cmd_demo(int argc, char **argv)
{
	struct demo_opts o;
	struct demo_run *runs;
	char modes[256], self[4096];
	int nruns = 0, failed = 0, ret;

	ret = frr_demo_parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (!o.bin) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0) {
			fprintf(stderr, "flexrr demo: cannot find the flexrr "
					"binary; give --flexrr PATH\n");
			return 2;
		}
		self[n] = '\0';
		o.bin = self;
	}
	o.load_start = frr_demo_load();
	runs = calloc(DEMO_MAX_MODES + 1, sizeof(*runs));
	if (!runs)
		return 1;
	if (o.ideal) {
		snprintf(runs[0].mode, sizeof(runs[0].mode), "bsp");
		runs[0].ideal = 1;
		nruns = 1;
	}
	snprintf(modes, sizeof(modes), "%s", o.modes);
	for (char *save = NULL, *m = strtok_r(modes, ",", &save); m;
	     m = strtok_r(NULL, ",", &save)) {
		if (strcmp(m, "bsp") && strcmp(m, "ssp") &&
		    strcmp(m, "flexrr") && strcmp(m, "async") &&
		    strcmp(m, "rr")) {
			fprintf(stderr,
				"flexrr demo: --modes: '%s' is not one of "
				"bsp, ssp, flexrr, async, rr\n",
				m);
			free(runs);
			return 2;
		}
		if (nruns == DEMO_MAX_MODES + 1)
			break;
		snprintf(runs[nruns].mode, sizeof(runs[nruns].mode), "%s", m);
		runs[nruns].stragglers =
		    strcmp(o.stragglers, "none") ? o.stragglers : NULL;
		nruns++;
	}
	for (int k = 0; k < nruns; k++) {
		struct demo_run *r = &runs[k];

		ret = run_one(&o, r, k, nruns);
		/* without RapidReassignment built in, stragglers cannot be
		 * injected either: BSP and SSP still run, without them, and
		 * the table says so */
		if (ret && r->unavailable && r->stragglers &&
		    strcmp(r->mode, "flexrr") && strcmp(r->mode, "rr")) {
			struct demo_run again = { .fallback = 1 };

			memcpy(again.mode, r->mode, sizeof(again.mode));
			memcpy(again.err, r->err, sizeof(again.err));
			*r = again;
			fprintf(stderr,
				"demo: %s: stragglers are not available in "
				"this binary; running without them\n",
				r->mode);
			ret = run_one(&o, r, k, nruns);
		}
		failed += ret != 0;
	}
	printf("\n");
	frr_demo_print_headline(&o, runs, nruns);
	frr_demo_print_table(&o, runs, nruns);
	if (o.plot && frr_demo_write_plot(&o, runs, nruns))
		failed = nruns;
	free(runs);
	return failed == nruns ? 1 : 0;
}
