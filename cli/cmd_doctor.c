// SPDX-License-Identifier: MIT
/*
 * flexrr doctor: is this host ready for the verbs backend?  The checks are
 * the transport's diagnostic (frr_tp_doctor); this is the command: options,
 * help, exit status (0 healthy, 1 a problem was found, 2 bad usage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "flexrr/transport.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flexrr doctor [--device DEV] [--pinned-mib N]\n"
		"\n"
		"Checks what the verbs (RDMA) backend needs on this host and "
		"says how to fix\n"
		"each problem: devices, port state, link layer, GID table "
		"(RoCE v2 IPv4\n"
		"GID), active MTU, memlock limit vs the pinned footprint, NUMA "
		"node of each\n"
		"device; then opens the backend as a job would and registers "
		"the footprint.\n"
		"\n"
		"  --device DEV     check only DEV (default: all; env "
		"FLEXRR_DEVICE)\n"
		"  --pinned-mib N   planned registered memory per process "
		"(default 64)\n"
		"  -h, --help       this text\n"
		"\n"
		"Exit status: 0 healthy, 1 a problem was found, 2 bad usage.\n"
		"No device?  scripts/softroce-setup.sh creates a soft-RoCE "
		"device (rdma_rxe);\n"
		"scripts/softroce-vm.sh runs verbs programs in a VM when the "
		"kernel lacks it.\n");
}

int frr_cmd_doctor(int argc, char **argv)
{
	const char *device = getenv("FLEXRR_DEVICE");
	size_t pinned = 64u << 20;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
			device = argv[++i];
		} else if (!strcmp(argv[i], "--pinned-mib") && i + 1 < argc) {
			long v = atol(argv[++i]);

			if (v < 1 || v > (1l << 20)) {
				fprintf(stderr, "flexrr doctor: --pinned-mib "
						"wants 1..1048576\n");
				return 2;
			}
			pinned = (size_t)v << 20;
		} else {
			fprintf(stderr,
				"flexrr doctor: unknown option '%s'; see "
				"'flexrr doctor --help'\n",
				argv[i]);
			return 2;
		}
	}
	return frr_tp_doctor(stdout, device, pinned) ? 1 : 0;
}
