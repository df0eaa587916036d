/* SPDX-License-Identifier: MIT */
/* The lda app's options (private to apps/lda). */
#ifndef FLEXRR_APPS_LDA_OPTS_H
#define FLEXRR_APPS_LDA_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "flexrr/opt.h"
#include "lda_corpus.h"

/* Everything the options set (lda_table); create copies the model's part
 * into the app. */
struct lda_opts {
	const char *uci, *vocab, *text, *load, *write_uci, *save_path;
	struct lda_text_opts t;
	uint32_t K;
	double alpha, beta, heldout;
	int sampler; /* enum lda_sampler_kind, in lda_samplers order */
	uint64_t top_words;
	int progress;
};

/* The table (frr_app_lda.opts) */
extern const struct frr_opt_set lda_opt_set;
/* 'flexrr run ... lda --help' */
void lda_usage(FILE *out);
/* Parse the app's arguments (argv[0] is the app's name) with defaults;
 * 0, 1 after --help (nothing printed: frr_run_main prints the help), or
 * -EINVAL (logged). */
int lda_parse_opts(int argc, char **argv, struct lda_opts *o);
/* frr_app_lda.check_args */
int lda_check_args(int argc, char **argv);

#endif
