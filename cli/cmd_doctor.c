// SPDX-License-Identifier: MIT
/*
 * flexrr doctor: is this host ready for the verbs backend?  The checks are
 * the transport's diagnostic (frr_tp_doctor); this is the command: options,
 * help, exit status (0 healthy, 1 a problem was found, 2 bad usage), and
 * --json: one line, one object, for scripts that check many nodes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "flexrr/base.h"
#include "flexrr/transport.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: flexrr doctor [--device DEV] [--pinned-mib N] [--json]\n"
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
	    "  --json           one JSON object on one line instead: host, "
	    "verdict\n"
	    "                   (healthy|unhealthy), problems, warnings, and "
	    "checks\n"
	    "                   [{level: ok|warn|problem, what, fix}]; e.g.\n"
	    "                   srun -N 4 --ntasks-per-node=1 flexrr doctor "
	    "--json\n"
	    "  -h, --help       this text\n"
	    "\n"
	    "Exit status: 0 healthy, 1 a problem was found, 2 bad usage.\n"
	    "No device?  scripts/softroce-setup.sh creates a soft-RoCE "
	    "device (rdma_rxe);\n"
	    "scripts/softroce-vm.sh runs verbs programs in a VM when the "
	    "kernel lacks it.\n");
}

struct json_checks {
	FILE *f;
	int n, warnings;
};

static void json_check(void *arg, int level, const char *what, const char *fix)
{
	static const char *const names[] = { "ok", "warn", "problem" };
	struct json_checks *j = arg;

	fprintf(j->f, "%s{\"level\":\"%s\",\"what\":", j->n++ ? "," : "",
		names[level]);
	frr_json_str(j->f, what);
	if (fix) {
		fputs(",\"fix\":", j->f);
		frr_json_str(j->f, fix);
	}
	fputc('}', j->f);
	j->warnings += level == 1;
}

/* The checks as one JSON object on one line of stdout. */
static int doctor_json(const struct frr_tp_doctor_cfg *cfg)
{
	struct json_checks j = { 0 };
	struct frr_tp_doctor_sink sink = { json_check, &j };
	char host[256] = "?", *checks = NULL;
	size_t len = 0;
	int problems;

	j.f = open_memstream(&checks, &len);
	if (!j.f) {
		fprintf(stderr, "flexrr doctor: out of memory\n");
		return 1;
	}
	problems = frr_tp_doctor_run(NULL, cfg, &sink);
	fclose(j.f);
	frr_hostname(host, sizeof(host));
	fputs("{\"host\":", stdout);
	frr_json_str(stdout, host);
	printf(",\"verdict\":\"%s\",\"problems\":%d,\"warnings\":%d,"
	       "\"checks\":[%s]}\n",
	       problems ? "unhealthy" : "healthy", problems, j.warnings,
	       checks ? checks : "");
	free(checks);
	return problems ? 1 : 0;
}

int frr_cmd_doctor(int argc, char **argv)
{
	const char *device = getenv("FLEXRR_DEVICE");
	size_t pinned = 64u << 20;
	int json = 0;
	struct frr_tp_doctor_cfg cfg = {
		.device_hint = "FLEXRR_DEVICE / --device",
		.pinned_hint = "lower --pinned-mib",
		.backend_hint = "use --backend shm",
		/* the source tree's scripts: an installed flexrr has none */
		.rxe_hint = "flexrr's source tree: scripts/softroce-setup.sh",
		.vm_hint = "flexrr's source tree: scripts/softroce-vm.sh run "
			   "--share \"$PWD\" -- CMD",
	};

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
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else {
			fprintf(stderr,
				"flexrr doctor: unknown option '%s'; see "
				"'flexrr doctor --help'\n",
				argv[i]);
			return 2;
		}
	}
	cfg.device = device;
	cfg.pinned_bytes = pinned;
	if (json)
		return doctor_json(&cfg);
	return frr_tp_doctor_run(stdout, &cfg, NULL) ? 1 : 0;
}
