// SPDX-License-Identifier: MIT
/* STUB: replaced by the straggler demo (issue 6) work. */
#include <stdio.h>

int frr_cmd_demo(int argc, char **argv);

int frr_cmd_demo(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "flexrr: this command is not implemented yet\n");
	return 2;
}
