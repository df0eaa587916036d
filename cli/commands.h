/* SPDX-License-Identifier: MIT */
/* Subcommands of the flexrr binary; each lives with the layer it drives. */
#ifndef FLEXRR_CLI_COMMANDS_H
#define FLEXRR_CLI_COMMANDS_H

#include "flexrr/flexrr.h"

/* The apps this binary runs (apps.c), NULL-terminated. */
extern const struct frr_app_ops *const frr_cli_apps[];

int frr_cmd_run(int argc, char **argv); /* cmd_run.c: flexrr run ... */
int frr_cmd_bench(int argc,
		  char **argv); /* bench/: write_lat|write_bw|counter_lat|... */
int frr_cmd_doctor(int argc,
		   char **argv); /* transport/verbs/: RDMA health check */
int frr_cmd_demo(int argc, char **argv); /* bench/: the README's main job */

#endif
