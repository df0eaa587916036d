// SPDX-License-Identifier: MIT
/* The mf app's options (private to apps/mf). */
#ifndef FLEXRR_APPS_MF_OPTS_H
#define FLEXRR_APPS_MF_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "flexrr/opt.h"
#include "mf.h"

#define MF_MAX_FILES 16

struct mf_opts {
	const char *data[MF_MAX_FILES];
	int ndata;
	enum mf_format fmt;
	int synthetic;
	struct mf_synth synth;
	int have_synth_rank;
	const char *synth_only; /* a --synth-* option given (its name) */
	int read_whole;		/* --read: 0 pieces, 1 whole */
	int have_read;
	uint64_t data_seed;
	int rank;
	double lr, lr_decay, reg, bias_reg, steps;
	int have_bias_reg;
	double test_frac;
	const char *load;
};

/* The table (frr_app_mf.opts) */
extern const struct frr_opt_set mf_opt_set;
/* 'flexrr run ... mf --help' */
void mf_usage(FILE *out);
/* Parse the app's arguments (argv[0] is the app's name) with defaults;
 * 0, 1 after --help (FRR_OPT_HELP, nothing printed: frr_run_main prints
 * the help), or -EINVAL (logged). */
int mf_parse_opts(int argc, char **argv, uint64_t seed, struct mf_opts *o);

#endif
