/* SPDX-License-Identifier: MIT */
/* Commands of the flexrr binary (main.c dispatches), all in cli/. */
#ifndef FLEXRR_CLI_COMMANDS_H
#define FLEXRR_CLI_COMMANDS_H

#include "flexrr/flexrr.h"

/* The apps this binary runs (apps.c), NULL-terminated. */
extern const struct frr_app_ops *const frr_cli_apps[];

/* Each command parses its own options and answers --help; the return value
 * is the process's exit status. */
int frr_cmd_run(int argc, char **argv);	     /* cmd_run.c: run an app */
int frr_cmd_bench(int argc, char **argv);    /* cmd_bench.c (+ bench/) */
int frr_cmd_doctor(int argc, char **argv);   /* cmd_doctor.c: RDMA check */
int frr_cmd_demo(int argc, char **argv);     /* cmd_demo.c: the README's demo */
int frr_cmd_simulate(int argc, char **argv); /* cmd_simulate.c: simulator */

#endif
