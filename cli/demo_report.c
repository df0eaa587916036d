// SPDX-License-Identifier: MIT
/*
 * `flexrr demo`: what the runs showed.  FlexRR's time to the target against
 * BSP's and SSP's first (what the demo is for), then the table of every run,
 * and on request a plot of the objective vs time (gnuplot).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"
#include "flexrr/file.h"

/* The 1-minute load average, -1 if unknown: the comparison needs the cores
 * to itself, so the output says how busy the machine was. */
double frr_demo_load(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static double time_to_target(const struct demo_run *r, double target)
{
	for (int c = 0; c < r->clocks; c++)
		if (r->obj[c] <= target)
			return r->t[c];
	return -1;
}

static const struct demo_run *find_run(const struct demo_run *runs, int n,
				       const char *mode)
{
	for (int k = 0; k < n; k++)
		if (runs[k].ok && !runs[k].ideal && !strcmp(runs[k].mode, mode))
			return &runs[k];
	return NULL;
}

/* FlexRR's time to the target against BSP's and SSP's: what the demo is
 * for, printed before the table. */
void frr_demo_print_headline(const struct demo_opts *o,
			     const struct demo_run *runs, int nruns)
{
	const struct demo_run *f = find_run(runs, nruns, "flexrr");
	const struct demo_run *b = find_run(runs, nruns, "bsp");
	const struct demo_run *s = find_run(runs, nruns, "ssp");
	double tf = f ? time_to_target(f, o->target) : -1;
	double tb = b ? time_to_target(b, o->target) : -1;
	double ts = s ? time_to_target(s, o->target) : -1;

	printf("flexrr demo: time to test RMSE %.3f with stragglers %s\n",
	       o->target, o->stragglers);
	if (tf < 0 || tb < 0) {
		printf("  %s did not reach the target in %d clocks: no "
		       "comparison (raise --clocks or --target)\n",
		       tf < 0 ? "FlexRR" : "BSP", o->clocks);
	} else {
		printf("  FlexRR %.2f s = %.2fx BSP (%.2f s)", tf, tf / tb, tb);
		if (ts > 0)
			printf(", %.2fx SSP (%.2f s)", tf / ts, ts);
		else if (s)
			printf(", SSP did not reach it");
		printf("\n  %s\n",
		       tf <= 0.8 * tb && (ts < 0 || tf < ts)
			   ? "FlexRR got there first, in at most 0.8x BSP's "
			     "time"
			   : "FlexRR did NOT beat BSP by 20% and SSP this run");
	}
	printf("  emulated: %d processes x %d worker threads on this "
	       "machine's %ld cores; a straggler sleeps\n  for its extra time "
	       "(its core idles, as a slow machine's would), so the same "
	       "seed gives\n  every mode the same stragglers\n",
	       o->procs, o->threads, sysconf(_SC_NPROCESSORS_ONLN));
	if (o->load_start >= 0)
		printf(
		    "  load average %.2f before the runs, %.2f after (%ld "
		    "cores): other jobs on the\n  cores blur the comparison, "
		    "which is meant for an otherwise idle machine\n",
		    o->load_start, frr_demo_load(),
		    sysconf(_SC_NPROCESSORS_ONLN));
}

struct plot_fill {
	const struct demo_run *runs;
	int nruns, n;
	const char *dat;
	char cmd[8192]; /* gnuplot's plot command, one curve per run */
};

/* The data file, and the plot command naming its curves. */
static int plot_fill(FILE *f, void *arg)
{
	struct plot_fill *p = arg;
	size_t at = 0;

	for (int k = 0; k < p->nruns; k++) {
		const struct demo_run *r = &p->runs[k];

		if (!r->ok || !r->clocks)
			continue;
		fprintf(f, "%s# %s\n", p->n ? "\n\n" : "", r->mode);
		for (int c = 0; c < r->clocks; c++)
			fprintf(f, "%.4f %.6f\n", r->t[c], r->obj[c]);
		at += (size_t)snprintf(
		    p->cmd + at, sizeof(p->cmd) - at,
		    "%s'%s' index %d using 1:2 with linespoints title '%s%s'",
		    p->n ? ", " : "plot ", p->dat, p->n, r->mode,
		    r->ideal ? " (no stragglers)" : "");
		p->n++;
	}
	return 0;
}

/* --plot FILE: test RMSE vs seconds of every run, by gnuplot. */
int frr_demo_write_plot(const struct demo_opts *o, const struct demo_run *runs,
			int nruns)
{
	struct plot_fill p = { .runs = runs, .nruns = nruns };
	char dat[4096];
	FILE *g;
	int st;

	if (strchr(o->plot, '\'') ||
	    snprintf(dat, sizeof(dat), "%s.dat", o->plot) >= (int)sizeof(dat))
		return fprintf(stderr, "flexrr demo: --plot: pick a plain file "
				       "name\n"),
		       -EINVAL;
	p.dat = dat;
	st = frr_file_write_atomic(dat, "flexrr demo: --plot", plot_fill, &p);
	if (st)
		return st;
	g = popen("gnuplot 2>/dev/null", "w");
	if (g) {
		fprintf(g,
			"set terminal pngcairo size 800,500 noenhanced\n"
			"set output '%s'\nset xlabel 'seconds'\n"
			"set ylabel 'test RMSE'\nset grid\n"
			"set title 'flexrr demo: MF test RMSE vs time, %s'\n"
			"%s, %g with lines dashtype 2 title 'target'\n",
			o->plot, o->stragglers, p.cmd, o->target);
	}
	st = g ? pclose(g) : -1;
	if (st != 0) {
		fprintf(stderr,
			"flexrr demo: --plot needs gnuplot (apt-get install "
			"gnuplot-nox, or scripts/setup.sh --bench); the data "
			"is in %s\n",
			dat);
		return -ENOENT;
	}
	printf("\nplot: %s (data: %s)\n", o->plot, dat);
	return 0;
}

void frr_demo_print_table(const struct demo_opts *o, struct demo_run *runs,
			  int nruns)
{
	double base = -1;
	char tgt[32];

	for (int k = 0; k < nruns; k++)
		if (runs[k].ok && !strcmp(runs[k].mode, "bsp") &&
		    !runs[k].ideal) {
			base = runs[k].time_s;
			break;
		}
	printf("\n");
	printf("flexrr demo: MF rank %d, --steps %g, on synthetic %s "
	       "(users,items,ratings), %d procs x %d threads, %s,\n"
	       "             %d clocks, seed %" PRIu64
	       ", slack %d (ssp/flexrr), "
	       "target test RMSE %.3f\n\n",
	       o->rank, o->steps, o->size, o->procs, o->threads, o->backend,
	       o->clocks, o->seed, o->slack, o->target);
	printf(" %-7s %-22s %10s %9s %13s %10s %8s\n", "mode", "stragglers",
	       "time_N_s", "s/clock", "t_target_s", "test_rmse", "vs_bsp");
	for (int k = 0; k < nruns; k++) {
		struct demo_run *r = &runs[k];
		const char *s = r->ideal	? "none(ideal)"
				: r->fallback	? "NONE(unavailable)"
				: r->stragglers ? r->stragglers
						: "none";
		double tt;

		if (!r->ok) {
			printf(" %-7s %-22.22s %s\n", r->mode, s,
			       r->unavailable ? "NOT AVAILABLE" : "FAILED");
			continue;
		}
		tt = time_to_target(r, o->target);
		if (tt < 0)
			snprintf(tgt, sizeof(tgt), "not reached");
		else
			snprintf(tgt, sizeof(tgt), "%.2f", tt);
		printf(" %-7s %-22.22s %10.2f %9.3f %13s %10.4f ", r->mode, s,
		       r->time_s,
		       r->time_s / (r->done_clocks ? r->done_clocks : 1), tgt,
		       r->clocks ? r->obj[r->clocks - 1] : NAN);
		if (base > 0)
			printf("%7.2fx\n", r->time_s / base);
		else
			printf("%8s\n", "-");
	}
	for (int k = 0; k < nruns; k++) {
		if (runs[k].fallback)
			printf("\nNOTE: %s ran WITHOUT stragglers: this flexrr "
			       "binary cannot inject them (%s)\n",
			       runs[k].mode, runs[k].err);
		if (!runs[k].ok)
			printf("\n%s %s: %s\n", runs[k].mode,
			       runs[k].unavailable
				   ? "is NOT AVAILABLE in this build, so it "
				     "is missing from the comparison"
				   : "failed",
			       runs[k].err);
	}
	printf("\ntime_N_s: seconds to run all %d clocks; t_target_s: seconds "
	       "until the held-out\nRMSE first reached %.3f; vs_bsp: time_N_s "
	       "relative to BSP with the same stragglers.\n",
	       o->clocks, o->target);
}
