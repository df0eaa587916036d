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

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: flexrr demo [options]\n"
	    "\n"
	    "The straggler demo: matrix factorization (SGD) on synthetic "
	    "low-rank data, run\n"
	    "in BSP, SSP and FlexRR with the same seed and the same "
	    "injected stragglers,\n"
	    "printed side by side.  Each mode is 'flexrr run -n P -t T "
	    "--mode M ... mf ...'.\n"
	    "Emulated: a cluster of P one-core machines (default 2 workers, "
	    "one per core of\n"
	    "a 2-core machine); a straggler sleeps for the extra time a "
	    "slow machine would\n"
	    "take, leaving its core idle as that machine would.  Takes "
	    "about 15 s\non an idle 2-core machine.\n"
	    "\n"
	    "  --size U,I,R          synthetic users,items,ratings "
	    "(default 25000,2500,5000000)\n"
	    "  --rank K              MF rank (default 8)\n"
	    "  --steps S             mf's per-row step cap of a clock "
	    "(default 8; mf's own\n"
	    "                        default 4 suits large data, "
	    "docs/demo.md says why 8 here)\n"
	    "  --clocks N            clocks per run (default 20)\n"
	    "  --target RMSE         held-out RMSE the 'time to target' "
	    "column waits for\n"
	    "                        (default 0.59; the noise floor is "
	    "0.5)\n"
	    "  --modes LIST          comma list of bsp, ssp, flexrr, "
	    "async, rr\n"
	    "                        (default bsp,ssp,flexrr)\n"
	    "  --stragglers SPEC     injected stragglers, as flexrr run "
	    "(default\n"
	    "                        persistent:1,4: worker 1 always takes 4x "
	    "its time, a\n"
	    "                        machine 4x slower than the other); "
	    "'none' for none\n"
	    "  --ideal               also run BSP without stragglers (the "
	    "'ideal' baseline)\n"
	    "  --slack S             slack of ssp and flexrr (default 1)\n"
	    "  -n, --procs P         processes (default 2)\n"
	    "  -t, --threads T       worker threads per process (default "
	    "1: one worker per\n"
	    "                        core; more share the cores, which "
	    "blurs the stragglers)\n"
	    "  --backend B           transport: shm (default) or verbs\n"
	    "  --seed N              seed of data, model and stragglers "
	    "(default 1)\n"
	    "  --timeout S           give up on a run after S seconds "
	    "(default 300)\n"
	    "  --flexrr PATH         the flexrr binary to run (default: "
	    "this one)\n"
	    "  --plot FILE           also draw test RMSE vs time of every "
	    "mode (gnuplot, PNG)\n"
	    "  -v, --verbose         show every run's own output\n"
	    "  -h, --help            this text\n");
}

/* Option k with its value v: 0 or -EINVAL (said on stderr). */
static int set_value(struct demo_opts *o, const char *k, const char *v)
{
	char *end = NULL;

	if (!strcmp(k, "--size"))
		o->size = v;
	else if (!strcmp(k, "--modes"))
		o->modes = v;
	else if (!strcmp(k, "--stragglers"))
		o->stragglers = v;
	else if (!strcmp(k, "--backend"))
		o->backend = v;
	else if (!strcmp(k, "--flexrr"))
		o->bin = v;
	else if (!strcmp(k, "--plot"))
		o->plot = v;
	else if (!strcmp(k, "--target"))
		o->target = strtod(v, &end);
	else if (!strcmp(k, "--steps"))
		o->steps = strtod(v, &end);
	else if (!strcmp(k, "--seed"))
		o->seed = strtoul(v, &end, 10);
	else {
		long n = strtol(v, &end, 10);

		if (!strcmp(k, "--rank"))
			o->rank = (int)n;
		else if (!strcmp(k, "--clocks"))
			o->clocks = (int)n;
		else if (!strcmp(k, "--slack"))
			o->slack = (int)n;
		else if (!strcmp(k, "-n") || !strcmp(k, "--procs"))
			o->procs = (int)n;
		else if (!strcmp(k, "-t") || !strcmp(k, "--threads"))
			o->threads = (int)n;
		else if (!strcmp(k, "--timeout"))
			o->timeout_s = (int)n;
		else {
			fprintf(stderr,
				"flexrr demo: unknown option '%s'; "
				"see flexrr demo --help\n",
				k);
			return -EINVAL;
		}
		if (n < 0 || n > 100000)
			end = NULL;
	}
	if (end && (*end || end == v))
		end = NULL;
	if (end == NULL && strcmp(k, "--size") && strcmp(k, "--modes") &&
	    strcmp(k, "--stragglers") && strcmp(k, "--backend") &&
	    strcmp(k, "--flexrr") && strcmp(k, "--plot")) {
		fprintf(stderr, "flexrr demo: %s '%s': not a number\n", k, v);
		return -EINVAL;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct demo_opts *o)
{
	*o = (struct demo_opts){
		.size = "25000,2500,5000000",
		.modes = "bsp,ssp,flexrr",
		.stragglers = "persistent:1,4",
		.backend = "shm",
		.procs = 2,
		.threads = 1,
		.clocks = 20,
		.slack = 1,
		.rank = 8,
		.steps = 8,
		.target = 0.59,
		.seed = 1,
		.timeout_s = 300,
	};
	for (int a = 1; a < argc; a++) {
		const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(k, "-h") || !strcmp(k, "--help")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(k, "--ideal")) {
			o->ideal = 1;
			continue;
		}
		if (!strcmp(k, "-v") || !strcmp(k, "--verbose")) {
			o->verbose = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr,
				"flexrr demo: '%s' needs a value (or is "
				"unknown); see flexrr demo --help\n",
				k);
			return -EINVAL;
		}
		a++;
		if (set_value(o, k, v))
			return -EINVAL;
	}
	if (o->clocks < 1 || o->clocks > DEMO_MAX_CLOCKS || o->procs < 1 ||
	    o->threads < 1 || o->rank < 1 || o->timeout_s < 1) {
		fprintf(stderr,
			"flexrr demo: --clocks must be 1..%d; -n, -t, --rank "
			"and --timeout at least 1\n",
			DEMO_MAX_CLOCKS);
		return -EINVAL;
	}
	if (!(o->steps > 0)) {
		fprintf(stderr, "flexrr demo: --steps must be > 0\n");
		return -EINVAL;
	}
	return 0;
}

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
	ARG("%lu", o->seed);
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

	ret = parse_args(argc, argv, &o);
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
