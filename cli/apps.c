// SPDX-License-Identifier: MIT
/*
 * The apps of the flexrr binary: an explicit table, in `flexrr help` order.
 * Adding an app: define its struct frr_app_ops under apps/, declare it here
 * and list it below.
 */
#include "commands.h"

extern const struct frr_app_ops frr_app_toy; /* runtime/app_toy.c */
extern const struct frr_app_ops frr_app_mf;  /* apps/mf/mf_app.c */
extern const struct frr_app_ops frr_app_mlr; /* apps/mlr/mlr.c */
extern const struct frr_app_ops frr_app_lda; /* apps/lda/lda.c */

const struct frr_app_ops *const frr_cli_apps[] = {
	&frr_app_toy, &frr_app_mf, &frr_app_mlr, &frr_app_lda, NULL,
};
