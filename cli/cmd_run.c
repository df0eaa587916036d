// SPDX-License-Identifier: MIT
/* flexrr run: the library's program entry with this binary's app table. */
#include <stdlib.h>

#include "commands.h"
#include "flexrr/job.h"

int frr_cmd_run(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int rc;

	if (!args) {
		frr_err("flexrr run: out of memory");
		return 1;
	}
	/* argv[0] names the program in the library's messages and usage */
	args[0] = "flexrr run";
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	rc = frr_run_main(argc, args, frr_cli_apps);
	free(args);
	return rc;
}
