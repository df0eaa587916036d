// SPDX-License-Identifier: MIT
/* STUB: replaced by the transport benchmarks (issue 2) work. */
#include <stdio.h>

int frr_cmd_bench(int argc, char **argv);

int frr_cmd_bench(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "flexrr: this command is not implemented yet\n");
	return 2;
}
