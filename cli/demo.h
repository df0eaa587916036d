// SPDX-License-Identifier: MIT
/*
 * `flexrr demo`, private to cli/: the options and the record of one run,
 * shared by cmd_demo.c (options, running the modes) and demo_report.c (the
 * comparison, the table and the plot).
 */
#ifndef FLEXRR_CLI_DEMO_H
#define FLEXRR_CLI_DEMO_H

#include <stdint.h>

#define DEMO_MAX_MODES 6
#define DEMO_MAX_CLOCKS 1000
#define DEMO_MAX_ARGS 64

struct demo_opts {
	const char *size;
	const char *modes;
	const char *stragglers;
	const char *backend;
	const char *bin;
	int procs, threads, clocks, slack, rank;
	double target;
	double steps; /* mf --steps */
	uint64_t seed;
	int ideal;
	int timeout_s;
	int verbose;
	const char *plot;  /* --plot FILE: objective vs time (gnuplot) */
	double load_start; /* 1-minute load average before the first run */
};

struct demo_run {
	char mode[16];
	const char *stragglers; /* NULL: none (the ideal run) */
	int ok;
	int clocks;		     /* per-clock lines seen */
	double t[DEMO_MAX_CLOCKS];   /* cumulative seconds at clock end */
	double obj[DEMO_MAX_CLOCKS]; /* objective (test RMSE) per clock */
	double time_s;		     /* from the summary line */
	int done_clocks;
	char metrics[256];
	char err[512];	 /* why the run failed, for the table */
	char last[512];	 /* the last other line, if no error line */
	int unavailable; /* the binary lacks what the run needs */
	int ideal;	 /* the --ideal baseline */
	int fallback;	 /* stragglers unavailable: ran without */
	int shown;	 /* last clock the progress line showed */
};

/* Defaults, then argv (demo_opts.c): 0, 1 after --help (printed), or
 * -EINVAL having said why. */
int frr_demo_parse_args(int argc, char **argv, struct demo_opts *o);
double frr_demo_load(void);
void frr_demo_print_headline(const struct demo_opts *o,
			     const struct demo_run *runs, int nruns);
void frr_demo_print_table(const struct demo_opts *o, struct demo_run *runs,
			  int nruns);
int frr_demo_write_plot(const struct demo_opts *o, const struct demo_run *runs,
			int nruns);

#endif
