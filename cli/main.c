// SPDX-License-Identifier: MIT
/* flexrr: one binary, subcommands.  `flexrr help` lists them. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "flexrr/flexrr.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
	{ "run", frr_cmd_run,
	  "run an app as a job: flexrr run -n P -t T [--mode M] APP [opts]" },
	{ "demo", frr_cmd_demo,
	  "the straggler demo: BSP vs SSP vs FlexRR side by side" },
	{ "simulate", frr_cmd_simulate,
	  "simulate a job of P x T workers in virtual time (stragglers)" },
	{ "bench", frr_cmd_bench,
	  "transport benchmarks (perftest format): "
	  "write_lat|write_bw|counter_lat" },
	{ "doctor", frr_cmd_doctor,
	  "check RDMA devices, ports, GIDs, MTU, memlock; say what to fix" },
	{ "help", cmd_help, "this list; 'flexrr CMD --help' for a command" },
};

static int cmd_help(int argc, char **argv)
{
	const struct frr_app_ops *const *apps = frr_cli_apps;

	(void)argc;
	(void)argv;
	printf("usage: flexrr COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].summary);
	printf("\napps (flexrr run ... APP --help):\n");
	for (; apps && *apps; apps++)
		printf("  %-8s %s\n", (*apps)->name, (*apps)->summary);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		cmd_help(argc, argv);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc, argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(
	    stderr,
	    "flexrr: unknown command '%s'; 'flexrr help' lists the commands\n",
	    argv[1]);
	return 2;
}
